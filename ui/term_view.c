/* The curses view of a terminal widget (see term_view.h). */
#include "config.h"

#include <string.h>
#include <wchar.h>

#include "term_view.h"
#include "theme.h"

#define PAIR_CACHE 1024

static struct {
	int fg, bg, pair;
} pair_cache[PAIR_CACHE];

/* xterm's 6x6x6 cube levels */
static int cube_level(uint8_t v)
{
	return v < 48 ? 0 : v < 115 ? 1 : (v - 35) / 40;
}

static int curses_color(const struct ui_term_color *c)
{
	if (c->kind == UI_TERM_COLOR_DEFAULT)
		return -1;
	if (c->kind == UI_TERM_COLOR_INDEXED) {
		if (c->index < COLORS)
			return c->index;
		return c->index < 16 ? c->index - 8 : -1;
	}
	if (COLORS >= 256)
		return 16 + 36 * cube_level(c->r) + 6 * cube_level(c->g) + cube_level(c->b);
	/* 8 colours: the brightest channels decide */
	return (c->r > 127 ? COLOR_RED : 0) | (c->g > 127 ? COLOR_GREEN : 0) | (c->b > 127 ? COLOR_BLUE : 0);
}

static int pair_for(const struct ui_term_cell *cell)
{
	int fg, bg;
	unsigned slot;

	if (!ui_theme_has_color())
		return 0;
	fg = curses_color(&cell->fg);
	bg = curses_color(&cell->bg);
	if (fg == -1 && bg == -1)
		return 0;
	slot = (unsigned)((fg + 1) * 263 + (bg + 1)) % PAIR_CACHE;
	if (pair_cache[slot].pair > 0 && pair_cache[slot].fg == fg && pair_cache[slot].bg == bg)
		return pair_cache[slot].pair;
	int pair = alloc_pair(fg, bg);
	if (pair < 0)
		return 0;
	pair_cache[slot].fg = fg;
	pair_cache[slot].bg = bg;
	pair_cache[slot].pair = pair;
	return pair;
}

static attr_t curses_attrs(unsigned a)
{
	return ((a & UI_TERM_BOLD) ? A_BOLD : 0) | ((a & UI_TERM_UNDERLINE) ? A_UNDERLINE : 0) |
	       ((a & UI_TERM_ITALIC) ? A_ITALIC : 0) | ((a & UI_TERM_BLINK) ? A_BLINK : 0) |
	       ((a & UI_TERM_REVERSE) ? A_REVERSE : 0);
}

static void flush_run(WINDOW *w, wchar_t *run, int *n, attr_t attr, int pair)
{
	if (*n == 0)
		return;
	wattr_set(w, attr, (short)pair, NULL);
	waddnwstr(w, run, *n);
	*n = 0;
}

void ui_term_view_draw(WINDOW *w, struct ui_term *t, int force)
{
	int rows, cols, wr = getmaxy(w), wc = getmaxx(w);
	wchar_t run[1024];

	ui_term_size(t, &rows, &cols);
	for (int r = 0; r < rows && r < wr; r++) {
		if (!force && !ui_term_row_dirty(t, r))
			continue;
		attr_t cur_attr = A_NORMAL;
		int cur_pair = 0, n = 0, c = 0;
		wmove(w, r, 0);
		while (c < cols && c < wc) {
			struct ui_term_cell cell;
			ui_term_cell(t, r, c, &cell);
			attr_t attr = curses_attrs(cell.attrs);
			int pair = pair_for(&cell), width = cell.width > 0 ? cell.width : 1;
			if (c + width > wc)
				break;
			/* a run ends where the attributes change */
			if (attr != cur_attr || pair != cur_pair || n + UI_TERM_MAX_CHARS + 1 >= (int)(sizeof(run) / sizeof(run[0]))) {
				flush_run(w, run, &n, cur_attr, cur_pair);
				cur_attr = attr;
				cur_pair = pair;
			}
			if (cell.chars[0] == 0 || cell.chars[0] == (uint32_t)-1) {
				run[n++] = L' ';
			} else {
				for (int i = 0; i < UI_TERM_MAX_CHARS && cell.chars[i]; i++)
					run[n++] = (wchar_t)cell.chars[i];
			}
			c += width;
		}
		flush_run(w, run, &n, cur_attr, cur_pair);
		wattr_set(w, A_NORMAL, 0, NULL);
		if (c < wc)
			wclrtoeol(w);
	}
	ui_term_clean(t);
}

int ui_term_view_cursor(WINDOW *w, const struct ui_term *t)
{
	int row, col, visible;

	ui_term_cursor(t, &row, &col, &visible);
	if (row >= getmaxy(w) || col >= getmaxx(w))
		return 0;
	wmove(w, row, col);
	return visible;
}

static const struct {
	int curses;
	enum ui_term_key key;
	int mods;
} fn_keys[] = {
	{ KEY_UP, UI_TERM_KEY_UP, 0 }, { KEY_DOWN, UI_TERM_KEY_DOWN, 0 }, { KEY_LEFT, UI_TERM_KEY_LEFT, 0 },
	{ KEY_RIGHT, UI_TERM_KEY_RIGHT, 0 }, { KEY_HOME, UI_TERM_KEY_HOME, 0 }, { KEY_END, UI_TERM_KEY_END, 0 },
	{ KEY_PPAGE, UI_TERM_KEY_PAGEUP, 0 }, { KEY_NPAGE, UI_TERM_KEY_PAGEDOWN, 0 },
	{ KEY_IC, UI_TERM_KEY_INS, 0 }, { KEY_DC, UI_TERM_KEY_DEL, 0 }, { KEY_BACKSPACE, UI_TERM_KEY_BACKSPACE, 0 },
	{ KEY_ENTER, UI_TERM_KEY_ENTER, 0 }, { KEY_BTAB, UI_TERM_KEY_TAB, UI_TERM_MOD_SHIFT },
	{ KEY_SLEFT, UI_TERM_KEY_LEFT, UI_TERM_MOD_SHIFT }, { KEY_SRIGHT, UI_TERM_KEY_RIGHT, UI_TERM_MOD_SHIFT },
};

void ui_term_view_key(struct ui_term *t, int key, int is_fn)
{
	if (is_fn) {
		if (key >= KEY_F(1) && key <= KEY_F(12)) {
			ui_term_key(t, UI_TERM_KEY_F0 + (key - KEY_F0), 0);
			return;
		}
		for (size_t i = 0; i < sizeof(fn_keys) / sizeof(fn_keys[0]); i++)
			if (fn_keys[i].curses == key)
				ui_term_key(t, fn_keys[i].key, fn_keys[i].mods);
	} else if (key == '\n' || key == '\r') {
		ui_term_key(t, UI_TERM_KEY_ENTER, 0);
	} else {
		ui_term_char(t, (uint32_t)key, 0);
	}
}
