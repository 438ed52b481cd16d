/* The terminal widget on libvterm 0.1.4's state layer (see shared
 * notes/terminal.md). libvterm parses and keeps the terminal state (cursor,
 * modes, pen, answers to queries); the screen is ours: rows are pointers, so
 * scrolling a full-width region rotates pointers instead of moving every cell
 * of the screen per line (libvterm's screen layer costs ~15 us per scrolled
 * line at 120x31, which made a flood of output ten times slower than tmux).
 * Lines leaving the top of the primary screen go to a compact scrollback. */
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

enum { PRIMARY, ALT };

struct ui_term {
	VTerm *vt;
	VTermState *vts;
	int rows, cols;
	struct ui_term_callbacks cb;
	void *user;
	struct ui_term_cell **buf[2];   /* rows of each screen buffer */
	int active;                     /* PRIMARY or ALT */
	struct ui_term_cell pen;        /* attributes for the next glyph or erase */
	/* ring of history lines, oldest at hist_start */
	struct hist_line *hist;
	int hist_cap, hist_start, hist_len;
	int offset;                     /* lines scrolled back in the view */
	VTermPos cursor;
	int cursor_visible;
	char title[256];
	unsigned char *dirty;           /* one byte per view row */
};

static void mark_rows(struct ui_term *t, int from, int to)
{
	from += t->offset;
	to += t->offset;
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

/* A blank cell carrying the pen's colours and attributes (as libvterm erases). */
static void blank(struct ui_term_cell *c, const struct ui_term_cell *pen)
{
	*c = *pen;
	memset(c->chars, 0, sizeof(c->chars));
	c->width = 1;
}

static void clear_row(struct ui_term *t, struct ui_term_cell *row, int from, int to)
{
	for (int i = from; i < to; i++)
		blank(&row[i], &t->pen);
}

static struct ui_term_cell **alloc_buffer(int rows, int cols)
{
	struct ui_term_cell **b = calloc((size_t)rows, sizeof(struct ui_term_cell *));

	for (int r = 0; b && r < rows; r++) {
		if (!(b[r] = calloc((size_t)cols, sizeof(**b)))) {
			while (r--)
				free(b[r]);
			free(b);
			return NULL;
		}
		for (int c = 0; c < cols; c++)
			b[r][c].width = 1;
	}
	return b;
}

static void free_buffer(struct ui_term_cell **b, int rows)
{
	for (int r = 0; b && r < rows; r++)
		free(b[r]);
	free(b);
}

/* ---- scrollback ---- */

static struct hist_line *hist_at(struct ui_term *t, int i)
{
	return &t->hist[(t->hist_start + i) % t->hist_cap];
}

static void push_history(struct ui_term *t, const struct ui_term_cell *row)
{
	struct hist_line *line;
	int used = t->cols;

	if (t->hist_cap == 0)
		return;
	while (used > 0 && row[used - 1].chars[0] == 0 && row[used - 1].bg.kind == UI_TERM_COLOR_DEFAULT)
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
			return;
		line->cells = n;
	}
	line->cols = used;
	for (int i = 0; i < used; i++) {
		struct hist_cell *h = &line->cells[i];
		h->ch = row[i].chars[0];
		h->width = (uint8_t)row[i].width;
		h->attrs = (uint8_t)row[i].attrs;
		h->fg = row[i].fg;
		h->bg = row[i].bg;
	}
	t->hist_len++;
	if (t->offset > 0 && t->offset < t->hist_len)
		t->offset++;   /* keep a scrolled-back view on the same text */
}

/* Takes the newest history line back into row (a taller screen shows it again). */
static int pop_history(struct ui_term *t, struct ui_term_cell *row)
{
	struct hist_line *line;

	if (t->hist_len == 0)
		return 0;
	line = hist_at(t, t->hist_len - 1);
	clear_row(t, row, 0, t->cols);
	for (int i = 0; i < line->cols && i < t->cols; i++) {
		row[i].chars[0] = line->cells[i].ch;
		row[i].width = line->cells[i].width;
		row[i].attrs = line->cells[i].attrs;
		row[i].fg = line->cells[i].fg;
		row[i].bg = line->cells[i].bg;
	}
	t->hist_len--;
	if (t->offset > t->hist_len)
		t->offset = t->hist_len;
	return 1;
}

/* ---- libvterm state callbacks ---- */

static int cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *user)
{
	struct ui_term *t = user;
	struct ui_term_cell *c;
	int i = 0;

	if (pos.row < 0 || pos.row >= t->rows || pos.col < 0 || pos.col >= t->cols)
		return 1;
	c = &t->buf[t->active][pos.row][pos.col];
	*c = t->pen;
	memset(c->chars, 0, sizeof(c->chars));
	for (; i < UI_TERM_MAX_CHARS && info->chars[i]; i++)
		c->chars[i] = info->chars[i];
	c->width = info->width;
	/* the right half of a wide character */
	for (int k = 1; k < info->width && pos.col + k < t->cols; k++) {
		struct ui_term_cell *r = &t->buf[t->active][pos.row][pos.col + k];
		*r = t->pen;
		memset(r->chars, 0, sizeof(r->chars));
		r->chars[0] = (uint32_t)-1;
		r->width = 0;
	}
	mark_rows(t, pos.row, pos.row + 1);
	return 1;
}

static int cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user)
{
	struct ui_term *t = user;

	(void)oldpos;
	t->cursor = pos;
	t->cursor_visible = visible;
	return 1;
}

static int cb_scrollrect(VTermRect rect, int downward, int rightward, void *user)
{
	struct ui_term *t = user;
	struct ui_term_cell **rows = t->buf[t->active], *saved[512];
	int height = rect.end_row - rect.start_row, n = downward < 0 ? -downward : downward;

	/* only whole-width vertical scrolls are ours; libvterm does the rest
	 * through moverect and erase */
	if (rightward || rect.start_col != 0 || rect.end_col != t->cols || n == 0 || height > 512)
		return 0;
	if (n > height)
		n = height;
	if (downward > 0) {
		if (t->active == PRIMARY && rect.start_row == 0)
			for (int i = 0; i < n; i++)
				push_history(t, rows[i]);
		memcpy(saved, rows + rect.start_row, sizeof(struct ui_term_cell *) * (size_t)n);
		memmove(rows + rect.start_row, rows + rect.start_row + n, sizeof(struct ui_term_cell *) * (size_t)(height - n));
		memcpy(rows + rect.end_row - n, saved, sizeof(struct ui_term_cell *) * (size_t)n);
		for (int i = rect.end_row - n; i < rect.end_row; i++)
			clear_row(t, rows[i], 0, t->cols);
	} else {
		memcpy(saved, rows + rect.end_row - n, sizeof(struct ui_term_cell *) * (size_t)n);
		memmove(rows + rect.start_row + n, rows + rect.start_row, sizeof(struct ui_term_cell *) * (size_t)(height - n));
		memcpy(rows + rect.start_row, saved, sizeof(struct ui_term_cell *) * (size_t)n);
		for (int i = rect.start_row; i < rect.start_row + n; i++)
			clear_row(t, rows[i], 0, t->cols);
	}
	mark_rows(t, rect.start_row, rect.end_row);
	return 1;
}

static int cb_moverect(VTermRect dest, VTermRect src, void *user)
{
	struct ui_term *t = user;
	struct ui_term_cell **rows = t->buf[t->active];
	int h = src.end_row - src.start_row, w = src.end_col - src.start_col;
	/* overlapping rows: copy in the direction that reads before it writes */
	int down = dest.start_row > src.start_row;

	for (int k = 0; k < h; k++) {
		int i = down ? h - 1 - k : k;
		memmove(&rows[dest.start_row + i][dest.start_col], &rows[src.start_row + i][src.start_col],
			sizeof(**rows) * (size_t)w);
	}
	mark_rows(t, dest.start_row, dest.end_row);
	return 1;
}

static int cb_erase(VTermRect rect, int selective, void *user)
{
	struct ui_term *t = user;

	(void)selective;
	for (int r = rect.start_row; r < rect.end_row && r < t->rows; r++)
		clear_row(t, t->buf[t->active][r], rect.start_col, rect.end_col < t->cols ? rect.end_col : t->cols);
	mark_rows(t, rect.start_row, rect.end_row);
	return 1;
}

static int cb_initpen(void *user)
{
	struct ui_term *t = user;

	memset(&t->pen, 0, sizeof(t->pen));
	t->pen.width = 1;
	return 1;
}

static void set_attr(unsigned *attrs, unsigned bit, int on)
{
	*attrs = on ? (*attrs | bit) : (*attrs & ~bit);
}

static int cb_setpenattr(VTermAttr attr, VTermValue *val, void *user)
{
	struct ui_term *t = user;

	switch (attr) {
	case VTERM_ATTR_BOLD:
		set_attr(&t->pen.attrs, UI_TERM_BOLD, val->boolean);
		break;
	case VTERM_ATTR_UNDERLINE:
		set_attr(&t->pen.attrs, UI_TERM_UNDERLINE, val->number != 0);
		break;
	case VTERM_ATTR_ITALIC:
		set_attr(&t->pen.attrs, UI_TERM_ITALIC, val->boolean);
		break;
	case VTERM_ATTR_BLINK:
		set_attr(&t->pen.attrs, UI_TERM_BLINK, val->boolean);
		break;
	case VTERM_ATTR_REVERSE:
		set_attr(&t->pen.attrs, UI_TERM_REVERSE, val->boolean);
		break;
	case VTERM_ATTR_STRIKE:
		set_attr(&t->pen.attrs, UI_TERM_STRIKE, val->boolean);
		break;
	case VTERM_ATTR_FOREGROUND:
		convert_color(&t->pen.fg, &val->color, 1);
		break;
	case VTERM_ATTR_BACKGROUND:
		convert_color(&t->pen.bg, &val->color, 0);
		break;
	default:
		return 0;
	}
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
		/* libvterm erases the alternate screen itself when it is entered */
		t->active = val->boolean ? ALT : PRIMARY;
		t->offset = 0;
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

/* New buffers of the new size. The primary screen keeps its bottom (where the
 * cursor is): rows that no longer fit go to the scrollback, and a taller
 * screen takes lines back from it; delta tells libvterm how the cursor moved. */
static int cb_resize(int rows, int cols, VTermPos *delta, void *user)
{
	struct ui_term *t = user;
	struct ui_term_cell **nb[2] = { alloc_buffer(rows, cols), alloc_buffer(rows, cols) };
	unsigned char *d = realloc(t->dirty, (size_t)rows);
	int old_rows = t->rows, old_cols = t->cols, copy_cols = cols < old_cols ? cols : old_cols;
	int drop = 0, pop = 0;

	if (!nb[0] || !nb[1] || !d) {
		free_buffer(nb[0], rows);
		free_buffer(nb[1], rows);
		if (d)
			t->dirty = d;
		return 0;
	}
	t->dirty = d;
	if (rows < old_rows && t->active == PRIMARY)
		drop = t->cursor.row + 1 > rows ? t->cursor.row + 1 - rows : 0;
	for (int i = 0; i < drop; i++)
		push_history(t, t->buf[PRIMARY][i]);
	for (int b = 0; b < 2; b++) {
		int skip = b == PRIMARY ? drop : 0;
		for (int r = 0; r + skip < old_rows && r < rows; r++)
			memcpy(nb[b][r], t->buf[b][r + skip], sizeof(**nb[b]) * (size_t)copy_cols);
		free_buffer(t->buf[b], old_rows);
		t->buf[b] = nb[b];
	}
	t->rows = rows;
	t->cols = cols;
	if (rows > old_rows - drop && t->active == PRIMARY) {
		/* room at the bottom: move the screen down over lines from history */
		int room = rows - (old_rows - drop), used = old_rows - drop;
		pop = room < t->hist_len ? room : t->hist_len;
		if (pop) {
			struct ui_term_cell *saved[512];
			int n = pop < 512 ? pop : 512;
			memcpy(saved, t->buf[PRIMARY] + used, sizeof(struct ui_term_cell *) * (size_t)n);
			memmove(t->buf[PRIMARY] + n, t->buf[PRIMARY], sizeof(struct ui_term_cell *) * (size_t)used);
			memcpy(t->buf[PRIMARY], saved, sizeof(struct ui_term_cell *) * (size_t)n);
			for (int i = n - 1; i >= 0; i--)
				pop_history(t, t->buf[PRIMARY][i]);
			pop = n;
		}
	}
	delta->row += pop - drop;
	t->offset = 0;
	memset(t->dirty, 1, (size_t)rows);
	return 1;
}

static int cb_setlineinfo(int row, const VTermLineInfo *newinfo, const VTermLineInfo *oldinfo, void *user)
{
	(void)row;
	(void)newinfo;
	(void)oldinfo;
	(void)user;
	return 1;   /* double-width lines are drawn single-width */
}

static const VTermStateCallbacks state_callbacks = {
	.putglyph = cb_putglyph,
	.movecursor = cb_movecursor,
	.scrollrect = cb_scrollrect,
	.moverect = cb_moverect,
	.erase = cb_erase,
	.initpen = cb_initpen,
	.setpenattr = cb_setpenattr,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
	.resize = cb_resize,
	.setlineinfo = cb_setlineinfo,
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
	t->buf[PRIMARY] = alloc_buffer(t->rows, t->cols);
	t->buf[ALT] = alloc_buffer(t->rows, t->cols);
	t->vt = vterm_new(t->rows, t->cols);
	if ((t->hist_cap && !t->hist) || !t->dirty || !t->buf[PRIMARY] || !t->buf[ALT] || !t->vt) {
		ui_term_free(t);
		return NULL;
	}
	if (cb)
		t->cb = *cb;
	t->user = user;
	t->cursor_visible = 1;
	t->pen.width = 1;
	vterm_set_utf8(t->vt, 1);
	t->vts = vterm_obtain_state(t->vt);
	vterm_state_set_callbacks(t->vts, &state_callbacks, t);
	vterm_output_set_callback(t->vt, vt_output, t);
	vterm_state_reset(t->vts, 1);
	memset(t->dirty, 1, (size_t)t->rows);
	return t;
}

void ui_term_free(struct ui_term *t)
{
	if (!t)
		return;
	if (t->vt)
		vterm_free(t->vt);
	free_buffer(t->buf[PRIMARY], t->rows);
	free_buffer(t->buf[ALT], t->rows);
	for (int i = 0; t->hist && i < t->hist_cap; i++)
		free(t->hist[i].cells);
	free(t->hist);
	free(t->dirty);
	free(t);
}

void ui_term_feed(struct ui_term *t, const char *bytes, size_t len)
{
	vterm_input_write(t->vt, bytes, len);
}

void ui_term_resize(struct ui_term *t, int rows, int cols)
{
	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	if (rows == t->rows && cols == t->cols)
		return;
	vterm_set_size(t->vt, rows, cols);
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


void ui_term_cell(const struct ui_term *t, int row, int col, struct ui_term_cell *out)
{
	if (row < 0 || row >= t->rows || col < 0 || col >= t->cols) {
		memset(out, 0, sizeof(*out));
		out->width = 1;
		return;
	}
	if (row < t->offset) {
		const struct hist_line *line =
			&t->hist[(t->hist_start + t->hist_len - t->offset + row) % t->hist_cap];
		memset(out, 0, sizeof(*out));
		out->width = 1;
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
	*out = t->buf[t->active][row - t->offset][col];
}

int ui_term_scroll(struct ui_term *t, int delta)
{
	int n = t->offset + delta;

	if (t->active == ALT)
		n = 0;   /* full-screen programs have no scrollback */
	if (n > t->hist_len)
		n = t->hist_len;
	if (n < 0)
		n = 0;
	if (n != t->offset) {
		t->offset = n;
		memset(t->dirty, 1, (size_t)t->rows);
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
	return t->active == ALT;
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
