/* Draws a terminal widget into a curses window: dirty rows only, attribute
 * changes only where cells differ, colour pairs cached. */
#ifndef UI_TERM_VIEW_H
#define UI_TERM_VIEW_H

#include <curses.h>

#include "term.h"

/* force: redraw every row (after the window was cleared or re-created). */
void ui_term_view_draw(WINDOW *w, struct ui_term *t, int force);
/* Puts the window's cursor where the terminal's is; returns whether it is visible. */
int ui_term_view_cursor(WINDOW *w, const struct ui_term *t);

/* A curses key (is_fn: a KEY_* code) encoded by the terminal for its program. */
void ui_term_view_key(struct ui_term *t, int key, int is_fn);

#endif
