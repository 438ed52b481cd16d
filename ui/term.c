/* The terminal widget on libvterm 0.1.4 (see shared notes/terminal.md):
 * a screen model, compact scrollback, and a per-row dirty map for the view. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

#include "term.h"

/* Scrollback keeps one codepoint per cell: combining marks in history are rare
 * and the compact cell keeps 2,000 lines of 200 columns under 7 MB. */
struct hist_cell {
	uint32_t ch;
	uint8_t attrs, width;
	struct ui_term_color fg, bg;
};

struct hist_line {
	int cols;
	struct hist_cell *cells;
};

struct ui_term {
	VTerm *vt;
	VTermScreen *vts;
	int rows, cols;
	struct ui_term_callbacks cb;
	void *user;
	/* ring of history lines, oldest at hist_start */
	struct hist_line *hist;
	int hist_cap, hist_start, hist_len;
	int offset;                  /* lines scrolled back in the view */
	VTermPos cursor;
	int cursor_visible, altscreen;
	char title[256];
	unsigned char *dirty;        /* one byte per view row */
};

static void mark_rows(struct ui_term *t, int from, int to)
{
	if (from < 0)
		from = 0;
	if (to > t->rows)
		to = t->rows;
	if (from < to)
		memset(t->dirty + from, 1, (size_t)(to - from));
}

static void convert_color(struct ui_term_color *out, const VTermColor *c, int is_fg)
{
	memset(out, 0, sizeof(*out));
	if (is_fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c)) {
		out->kind = UI_TERM_COLOR_DEFAULT;
	} else if (VTERM_COLOR_IS_INDEXED(c)) {
		out->kind = UI_TERM_COLOR_INDEXED;
		out->index = c->indexed.idx;
	} else {
		out->kind = UI_TERM_COLOR_RGB;
		out->r = c->rgb.red;
		out->g = c->rgb.green;
		out->b = c->rgb.blue;
	}
}

static unsigned convert_attrs(const VTermScreenCellAttrs *a)
{
	return (a->bold ? UI_TERM_BOLD : 0) | (a->underline ? UI_TERM_UNDERLINE : 0) |
	       (a->italic ? UI_TERM_ITALIC : 0) | (a->blink ? UI_TERM_BLINK : 0) |
	       (a->reverse ? UI_TERM_REVERSE : 0) | (a->strike ? UI_TERM_STRIKE : 0);
}

static void back_color(VTermColor *out, const struct ui_term_color *c, int is_fg)
{
	if (c->kind == UI_TERM_COLOR_INDEXED) {
		vterm_color_indexed(out, c->index);
	} else if (c->kind == UI_TERM_COLOR_RGB) {
		vterm_color_rgb(out, c->r, c->g, c->b);
	} else {
		vterm_color_indexed(out, 0);
		out->type = is_fg ? VTERM_COLOR_DEFAULT_FG : VTERM_COLOR_DEFAULT_BG;
	}
}

static int cb_damage(VTermRect rect, void *user)
{
	struct ui_term *t = user;

	mark_rows(t, rect.start_row + t->offset, rect.end_row + t->offset);
	return 1;
}

static int cb_moverect(VTermRect dest, VTermRect src, void *user)
{
	struct ui_term *t = user;

	mark_rows(t, dest.start_row + t->offset, dest.end_row + t->offset);
	mark_rows(t, src.start_row + t->offset, src.end_row + t->offset);
	return 1;
}

static int cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user)
{
	struct ui_term *t = user;

	t->cursor = pos;
	t->cursor_visible = visible;
	mark_rows(t, oldpos.row + t->offset, oldpos.row + t->offset + 1);
	mark_rows(t, pos.row + t->offset, pos.row + t->offset + 1);
	return 1;
}

static int cb_settermprop(VTermProp prop, VTermValue *val, void *user)
{
	struct ui_term *t = user;

	switch (prop) {
	case VTERM_PROP_CURSORVISIBLE:
		t->cursor_visible = val->boolean;
		break;
	case VTERM_PROP_ALTSCREEN:
		t->altscreen = val->boolean;
		mark_rows(t, 0, t->rows);
		break;
	case VTERM_PROP_TITLE:
		snprintf(t->title, sizeof(t->title), "%s", val->string ? val->string : "");
		if (t->cb.title)
			t->cb.title(t->user, t->title);
		break;
	default:
		return 0;
	}
	return 1;
}

static int cb_bell(void *user)
{
	struct ui_term *t = user;

	if (t->cb.bell)
		t->cb.bell(t->user);
	return 1;
}

static struct hist_line *hist_at(struct ui_term *t, int i)
{
	return &t->hist[(t->hist_start + i) % t->hist_cap];
}

static int cb_pushline(int cols, const VTermScreenCell *cells, void *user)
{
	struct ui_term *t = user;
	struct hist_line *line;
	int used = cols;

	if (t->hist_cap == 0)
		return 1;
	while (used > 0 && cells[used - 1].chars[0] == 0 && VTERM_COLOR_IS_DEFAULT_BG(&cells[used - 1].bg))
		used--;
	if (t->hist_len == t->hist_cap) {
		/* full: the oldest line makes room */
		line = hist_at(t, 0);
		t->hist_start = (t->hist_start + 1) % t->hist_cap;
		t->hist_len--;
	} else {
		line = hist_at(t, t->hist_len);
	}
	if (line->cols < used || !line->cells) {
		struct hist_cell *n = realloc(line->cells, sizeof(*n) * (size_t)(used ? used : 1));
		if (!n)
			return 1;
		line->cells = n;
	}
	line->cols = used;
	for (int i = 0; i < used; i++) {
		struct hist_cell *h = &line->cells[i];
		h->ch = cells[i].chars[0];
		h->width = (uint8_t)cells[i].width;
		h->attrs = (uint8_t)convert_attrs(&cells[i].attrs);
		convert_color(&h->fg, &cells[i].fg, 1);
		convert_color(&h->bg, &cells[i].bg, 0);
	}
	t->hist_len++;
	if (t->offset > 0 && t->offset < t->hist_len)
		t->offset++;   /* keep a scrolled-back view on the same text */
	return 1;
}

static int cb_popline(int cols, VTermScreenCell *cells, void *user)
{
	struct ui_term *t = user;
	struct hist_line *line;

	if (t->hist_len == 0)
		return 0;
	line = hist_at(t, t->hist_len - 1);
	for (int i = 0; i < cols; i++) {
		VTermScreenCell *c = &cells[i];
		memset(c, 0, sizeof(*c));
		c->width = 1;
		if (i < line->cols) {
			const struct hist_cell *h = &line->cells[i];
			c->chars[0] = h->ch;
			c->width = (char)h->width;
			c->attrs.bold = !!(h->attrs & UI_TERM_BOLD);
			c->attrs.underline = !!(h->attrs & UI_TERM_UNDERLINE);
			c->attrs.italic = !!(h->attrs & UI_TERM_ITALIC);
			c->attrs.blink = !!(h->attrs & UI_TERM_BLINK);
			c->attrs.reverse = !!(h->attrs & UI_TERM_REVERSE);
			c->attrs.strike = !!(h->attrs & UI_TERM_STRIKE);
			back_color(&c->fg, &h->fg, 1);
			back_color(&c->bg, &h->bg, 0);
		} else {
			back_color(&c->fg, &(struct ui_term_color){ 0 }, 1);
			back_color(&c->bg, &(struct ui_term_color){ 0 }, 0);
		}
	}
	t->hist_len--;
	if (t->offset > t->hist_len)
		t->offset = t->hist_len;
	return 1;
}

static const VTermScreenCallbacks screen_callbacks = {
	.damage = cb_damage,
	.moverect = cb_moverect,
	.movecursor = cb_movecursor,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
	.sb_pushline = cb_pushline,
	.sb_popline = cb_popline,
};

static void vt_output(const char *s, size_t len, void *user)
{
	struct ui_term *t = user;

	if (t->cb.output)
		t->cb.output(t->user, s, len);
}

struct ui_term *ui_term_new(int rows, int cols, int scrollback, const struct ui_term_callbacks *cb,
			    void *user)
{
	struct ui_term *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->rows = rows > 0 ? rows : 1;
	t->cols = cols > 0 ? cols : 1;
	t->hist_cap = scrollback > 0 ? scrollback : 0;
	t->hist = t->hist_cap ? calloc((size_t)t->hist_cap, sizeof(*t->hist)) : NULL;
	t->dirty = calloc((size_t)t->rows, 1);
	t->vt = vterm_new(t->rows, t->cols);
	if ((t->hist_cap && !t->hist) || !t->dirty || !t->vt) {
		ui_term_free(t);
		return NULL;
	}
	if (cb)
		t->cb = *cb;
	t->user = user;
	t->cursor_visible = 1;
	vterm_set_utf8(t->vt, 1);
	t->vts = vterm_obtain_screen(t->vt);
	vterm_screen_enable_altscreen(t->vts, 1);
	vterm_screen_set_callbacks(t->vts, &screen_callbacks, t);
	vterm_screen_set_damage_merge(t->vts, VTERM_DAMAGE_SCROLL);
	vterm_output_set_callback(t->vt, vt_output, t);
	/* after the callbacks, so the first damage reaches us */
	vterm_screen_reset(t->vts, 1);
	return t;
}

void ui_term_free(struct ui_term *t)
{
	if (!t)
		return;
	if (t->vt)
		vterm_free(t->vt);
	for (int i = 0; t->hist && i < t->hist_cap; i++)
		free(t->hist[i].cells);
	free(t->hist);
	free(t->dirty);
	free(t);
}

void ui_term_feed(struct ui_term *t, const char *bytes, size_t len)
{
	vterm_input_write(t->vt, bytes, len);
	vterm_screen_flush_damage(t->vts);
}

void ui_term_resize(struct ui_term *t, int rows, int cols)
{
	unsigned char *d;

	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	if (rows == t->rows && cols == t->cols)
		return;
	d = realloc(t->dirty, (size_t)rows);
	if (!d)
		return;
	t->dirty = d;
	t->rows = rows;
	t->cols = cols;
	t->offset = 0;
	vterm_set_size(t->vt, rows, cols);
	vterm_screen_flush_damage(t->vts);
	mark_rows(t, 0, rows);
}

void ui_term_size(const struct ui_term *t, int *rows, int *cols)
{
	*rows = t->rows;
	*cols = t->cols;
}

static VTermModifier vmods(int mods)
{
	return (VTermModifier)(((mods & UI_TERM_MOD_SHIFT) ? VTERM_MOD_SHIFT : 0) |
			       ((mods & UI_TERM_MOD_ALT) ? VTERM_MOD_ALT : 0) |
			       ((mods & UI_TERM_MOD_CTRL) ? VTERM_MOD_CTRL : 0));
}

static const VTermKey key_map[] = {
	[UI_TERM_KEY_ENTER] = VTERM_KEY_ENTER, [UI_TERM_KEY_TAB] = VTERM_KEY_TAB,
	[UI_TERM_KEY_BACKSPACE] = VTERM_KEY_BACKSPACE, [UI_TERM_KEY_ESCAPE] = VTERM_KEY_ESCAPE,
	[UI_TERM_KEY_UP] = VTERM_KEY_UP, [UI_TERM_KEY_DOWN] = VTERM_KEY_DOWN,
	[UI_TERM_KEY_LEFT] = VTERM_KEY_LEFT, [UI_TERM_KEY_RIGHT] = VTERM_KEY_RIGHT,
	[UI_TERM_KEY_INS] = VTERM_KEY_INS, [UI_TERM_KEY_DEL] = VTERM_KEY_DEL,
	[UI_TERM_KEY_HOME] = VTERM_KEY_HOME, [UI_TERM_KEY_END] = VTERM_KEY_END,
	[UI_TERM_KEY_PAGEUP] = VTERM_KEY_PAGEUP, [UI_TERM_KEY_PAGEDOWN] = VTERM_KEY_PAGEDOWN,
};

void ui_term_key(struct ui_term *t, enum ui_term_key key, int mods)
{
	if (key >= UI_TERM_KEY_F0)
		vterm_keyboard_key(t->vt, (VTermKey)(VTERM_KEY_FUNCTION_0 + (key - UI_TERM_KEY_F0)), vmods(mods));
	else if ((size_t)key < sizeof(key_map) / sizeof(key_map[0]) && key_map[key])
		vterm_keyboard_key(t->vt, key_map[key], vmods(mods));
}

void ui_term_char(struct ui_term *t, uint32_t c, int mods)
{
	vterm_keyboard_unichar(t->vt, c, vmods(mods));
}

void ui_term_paste(struct ui_term *t, int start)
{
	if (start)
		vterm_keyboard_start_paste(t->vt);
	else
		vterm_keyboard_end_paste(t->vt);
}

void ui_term_cell(const struct ui_term *t, int row, int col, struct ui_term_cell *out)
{
	memset(out, 0, sizeof(*out));
	out->width = 1;
	if (row < 0 || row >= t->rows || col < 0 || col >= t->cols)
		return;
	if (row < t->offset) {
		const struct hist_line *line =
			&t->hist[(t->hist_start + t->hist_len - t->offset + row) % t->hist_cap];
		if (col < line->cols) {
			const struct hist_cell *h = &line->cells[col];
			out->chars[0] = h->ch;
			out->width = h->width;
			out->attrs = h->attrs;
			out->fg = h->fg;
			out->bg = h->bg;
		}
		return;
	}
	VTermScreenCell c;
	if (!vterm_screen_get_cell(t->vts, (VTermPos){ .row = row - t->offset, .col = col }, &c))
		return;
	memcpy(out->chars, c.chars, sizeof(out->chars));
	out->width = c.width;
	out->attrs = convert_attrs(&c.attrs);
	convert_color(&out->fg, &c.fg, 1);
	convert_color(&out->bg, &c.bg, 0);
}

int ui_term_scroll(struct ui_term *t, int delta)
{
	int n = t->offset + delta;

	if (n > t->hist_len)
		n = t->hist_len;
	if (n < 0)
		n = 0;
	if (n != t->offset) {
		t->offset = n;
		mark_rows(t, 0, t->rows);
	}
	return t->offset;
}

int ui_term_scroll_offset(const struct ui_term *t)
{
	return t->offset;
}

int ui_term_scrollback_lines(const struct ui_term *t)
{
	return t->hist_len;
}

void ui_term_cursor(const struct ui_term *t, int *row, int *col, int *visible)
{
	*row = t->cursor.row + t->offset;
	*col = t->cursor.col;
	*visible = t->cursor_visible && t->offset == 0;
}

int ui_term_altscreen(const struct ui_term *t)
{
	return t->altscreen;
}

const char *ui_term_title(const struct ui_term *t)
{
	return t->title;
}

int ui_term_row_dirty(const struct ui_term *t, int row)
{
	return row >= 0 && row < t->rows && t->dirty[row];
}

int ui_term_any_dirty(const struct ui_term *t)
{
	return memchr(t->dirty, 1, (size_t)t->rows) != NULL;
}

void ui_term_touch(struct ui_term *t)
{
	mark_rows(t, 0, t->rows);
}

void ui_term_clean(struct ui_term *t)
{
	memset(t->dirty, 0, (size_t)t->rows);
}

static size_t put_utf8(char *buf, size_t size, size_t at, uint32_t c)
{
	char tmp[4];
	size_t n;

	if (c < 0x80) {
		tmp[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		tmp[0] = (char)(0xc0 | (c >> 6));
		tmp[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		tmp[0] = (char)(0xe0 | (c >> 12));
		tmp[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		tmp[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		tmp[0] = (char)(0xf0 | (c >> 18));
		tmp[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		tmp[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		tmp[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (at + n >= size)
		return at;
	memcpy(buf + at, tmp, n);
	return at + n;
}

size_t ui_term_row_text(const struct ui_term *t, int row, char *buf, size_t size)
{
	size_t len = 0, keep = 0;
	struct ui_term_cell c;

	if (size == 0)
		return 0;
	for (int col = 0; col < t->cols; col += c.width > 1 ? c.width : 1) {
		ui_term_cell(t, row, col, &c);
		if (c.chars[0] == 0 || c.chars[0] == (uint32_t)-1) {
			len = put_utf8(buf, size, len, ' ');
			continue;
		}
		for (int i = 0; i < UI_TERM_MAX_CHARS && c.chars[i]; i++)
			len = put_utf8(buf, size, len, c.chars[i]);
		keep = len;
	}
	buf[keep] = '\0';
	return keep;
}
