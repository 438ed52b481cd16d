/* Colours as a table of roles; without colour support every role falls back
 * to a monochrome attribute (bold, reverse, underline). */
#ifndef UI_THEME_H
#define UI_THEME_H

#include <curses.h>

enum ui_role {
	UI_ROLE_NORMAL,
	UI_ROLE_TITLEBAR,        /* the top line */
	UI_ROLE_PANE_TITLE,      /* header line of an unfocused pane */
	UI_ROLE_PANE_FOCUSED,    /* header line of the focused pane */
	UI_ROLE_COLUMNS,         /* column headings */
	UI_ROLE_SELECTED,        /* the selected row of the focused pane */
	UI_ROLE_SELECTED_DIM,    /* the selected row of another pane */
	UI_ROLE_RUNNING,
	UI_ROLE_STOPPED,
	UI_ROLE_CREATED,
	UI_ROLE_BROKEN,
	UI_ROLE_PAUSED,
	UI_ROLE_WARN,            /* rw mounts, network on, soon-expiring */
	UI_ROLE_ERROR,
	UI_ROLE_DIM,
	UI_ROLE_STATUS,
	UI_ROLE_KEY,             /* key names in hints and help */
	UI_ROLE_DIALOG,
	UI_ROLE_FIELD,           /* an input field */
	UI_ROLE_COUNT
};

/* After initscr: sets up colours if the terminal has them and $NO_COLOR is unset. */
void ui_theme_init(void);
attr_t ui_theme_attr(enum ui_role role);
int ui_theme_has_color(void);

/* The few symbols drawn outside of text: UTF-8 ones, or ASCII when the locale
 * cannot show them (a C locale). */
struct ui_glyphs {
	const char *sort_up, *sort_down, *ellipsis, *mark;
};
const struct ui_glyphs *ui_theme_glyphs(void);

#endif
