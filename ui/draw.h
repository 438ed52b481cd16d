/* Text in screen cells: UTF-8 strings fitted to a width (wcwidth-aware). */
#ifndef UI_DRAW_H
#define UI_DRAW_H

#include <curses.h>

#include "theme.h"

enum ui_align { UI_LEFT, UI_RIGHT };

/* Writes s at (y, x) in exactly width columns: truncated with '~' when too
 * long, padded with blanks. Returns the columns s itself took. */
int ui_draw_text(WINDOW *w, int y, int x, int width, const char *s, attr_t attr, enum ui_align align);
/* Like ui_draw_text without padding; returns the next column. */
int ui_draw_put(WINDOW *w, int y, int x, int width, const char *s, attr_t attr);
/* Display width of a UTF-8 string. */
int ui_text_width(const char *s);
/* A pane's header line: " title " across the window's first row. */
void ui_draw_header(WINDOW *w, const char *title, int focused);
/* A framed box with a title, cleared inside (dialogs). */
void ui_draw_box(WINDOW *w, const char *title);
/* Moves and sizes w to r, then frames it as a box with a title (an overlay's dialog). */
struct ui_rect;
void ui_draw_dialog(WINDOW *w, const struct ui_rect *r, const char *title);

#endif
