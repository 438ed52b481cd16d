/* The terminal widget: a libvterm screen model with scrollback and dirty rows.
 * It knows nothing of curses or ptys: bytes come in through ui_term_feed,
 * bytes the program should receive (keys, query answers) leave through the
 * output callback. */
#ifndef UI_TERM_H
#define UI_TERM_H

#include <stddef.h>
#include <stdint.h>

enum ui_term_color_kind {
	UI_TERM_COLOR_DEFAULT,
	UI_TERM_COLOR_INDEXED,
	UI_TERM_COLOR_RGB,
};

struct ui_term_color {
	uint8_t kind;            /* enum ui_term_color_kind */
	uint8_t index;           /* UI_TERM_COLOR_INDEXED */
	uint8_t r, g, b;         /* UI_TERM_COLOR_RGB */
};

enum {
	UI_TERM_BOLD = 1 << 0,
	UI_TERM_UNDERLINE = 1 << 1,
	UI_TERM_ITALIC = 1 << 2,
	UI_TERM_BLINK = 1 << 3,
	UI_TERM_REVERSE = 1 << 4,
	UI_TERM_STRIKE = 1 << 5,
};

#define UI_TERM_MAX_CHARS 6

struct ui_term_cell {
	uint32_t chars[UI_TERM_MAX_CHARS];   /* 0-terminated unless full; chars[0]==0: blank */
	int width;                           /* 1, 2 (wide), 0 for the right half of a wide cell */
	unsigned attrs;
	struct ui_term_color fg, bg;
};

struct ui_term_callbacks {
	/* Bytes for the program (encoded keys, answers to ESC[6n ...). */
	void (*output)(void *user, const char *bytes, size_t len);
	void (*bell)(void *user);
	void (*title)(void *user, const char *title);
};

/* Special keys the widget encodes itself (the rest is text). */
enum ui_term_key {
	UI_TERM_KEY_ENTER = 1, UI_TERM_KEY_TAB, UI_TERM_KEY_BACKSPACE, UI_TERM_KEY_ESCAPE,
	UI_TERM_KEY_UP, UI_TERM_KEY_DOWN, UI_TERM_KEY_LEFT, UI_TERM_KEY_RIGHT,
	UI_TERM_KEY_INS, UI_TERM_KEY_DEL, UI_TERM_KEY_HOME, UI_TERM_KEY_END,
	UI_TERM_KEY_PAGEUP, UI_TERM_KEY_PAGEDOWN, UI_TERM_KEY_F0,
};

enum { UI_TERM_MOD_SHIFT = 1, UI_TERM_MOD_ALT = 2, UI_TERM_MOD_CTRL = 4 };

struct ui_term;

/* NULL on allocation failure. scrollback: lines kept above the screen. */
struct ui_term *ui_term_new(int rows, int cols, int scrollback, const struct ui_term_callbacks *cb,
			    void *user);
void ui_term_free(struct ui_term *t);

void ui_term_feed(struct ui_term *t, const char *bytes, size_t len);
void ui_term_resize(struct ui_term *t, int rows, int cols);
void ui_term_size(const struct ui_term *t, int *rows, int *cols);
/* Keyboard: function key n is UI_TERM_KEY_F0 + n. */
void ui_term_key(struct ui_term *t, enum ui_term_key key, int mods);
void ui_term_char(struct ui_term *t, uint32_t c, int mods);

/* The screen as shown: row 0 is the top of the view, which is scrolled back by
 * ui_term_scroll lines (0: the live screen). Cells outside read as blank. */
void ui_term_cell(const struct ui_term *t, int row, int col, struct ui_term_cell *out);
/* Scrolls the view by delta lines (positive: back into history), clamped;
 * returns the new offset. */
int ui_term_scroll(struct ui_term *t, int delta);
int ui_term_scroll_offset(const struct ui_term *t);
int ui_term_scrollback_lines(const struct ui_term *t);
/* Cursor of the live screen; *visible is 0 when hidden or scrolled back. */
void ui_term_cursor(const struct ui_term *t, int *row, int *col, int *visible);
int ui_term_altscreen(const struct ui_term *t);
const char *ui_term_title(const struct ui_term *t);

/* Dirty tracking for the view: rows changed since the last ui_term_clean. */
int ui_term_row_dirty(const struct ui_term *t, int row);
int ui_term_any_dirty(const struct ui_term *t);
void ui_term_clean(struct ui_term *t);

/* The text of a view row (UTF-8, trailing blanks dropped) into buf; for tests
 * and for finding text on the screen. */
size_t ui_term_row_text(const struct ui_term *t, int row, char *buf, size_t size);

#endif
