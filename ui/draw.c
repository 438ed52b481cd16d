/* Fitting UTF-8 text into cells (see draw.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "draw.h"
#include "layout.h"

/* Decodes s into wide characters up to width columns; *cols gets the columns
 * used, *cut whether something was left over. */
static size_t fit(wchar_t *out, size_t cap, const char *s, int width, int *cols, int *cut)
{
	mbstate_t st;
	size_t n = 0;
	int used = 0;

	memset(&st, 0, sizeof(st));
	*cut = 0;
	while (*s && n + 1 < cap) {
		wchar_t wc;
		size_t len = mbrtowc(&wc, s, MB_CUR_MAX, &st);
		if (len == (size_t)-1 || len == (size_t)-2) {
			wc = L'?';
			len = 1;
			memset(&st, 0, sizeof(st));
		}
		int cw = wcwidth(wc);
		if (cw < 0)
			cw = 0, wc = L'?';
		if (used + cw > width) {
			*cut = 1;
			break;
		}
		out[n++] = wc;
		used += cw;
		s += len;
	}
	out[n] = L'\0';
	*cols = used;
	return n;
}

int ui_text_width(const char *s)
{
	wchar_t buf[512];
	int cols, cut;

	fit(buf, sizeof(buf) / sizeof(buf[0]), s, 1 << 20, &cols, &cut);
	return cols;
}

int ui_draw_put(WINDOW *w, int y, int x, int width, const char *s, attr_t attr)
{
	wchar_t buf[1024];
	int cols, cut;
	size_t n;

	if (width <= 0)
		return x;
	n = fit(buf, sizeof(buf) / sizeof(buf[0]), s, width, &cols, &cut);
	if (cut && n > 0 && width > 1) {
		/* mark the truncation in the last column */
		n = fit(buf, sizeof(buf) / sizeof(buf[0]), s, width - 1, &cols, &cut);
		buf[n++] = L'~';
		buf[n] = L'\0';
		cols++;
	}
	wattr_set(w, attr, PAIR_NUMBER(attr), NULL);
	mvwaddnwstr(w, y, x, buf, (int)n);
	wattr_set(w, A_NORMAL, 0, NULL);
	return x + cols;
}

int ui_draw_text(WINDOW *w, int y, int x, int width, const char *s, attr_t attr, enum ui_align align)
{
	int tw = ui_text_width(s), end;

	if (width <= 0)
		return 0;
	wattr_set(w, attr, PAIR_NUMBER(attr), NULL);
	mvwhline(w, y, x, ' ', width);
	if (align == UI_RIGHT && tw < width)
		x += width - tw;
	end = ui_draw_put(w, y, x, width < tw ? width : tw, s, attr);
	(void)end;
	wattr_set(w, A_NORMAL, 0, NULL);
	return tw < width ? tw : width;
}

void ui_draw_header(WINDOW *w, const char *title, int focused)
{
	attr_t a = ui_theme_attr(focused ? UI_ROLE_PANE_FOCUSED : UI_ROLE_PANE_TITLE);

	ui_draw_text(w, 0, 0, getmaxx(w), title, a, UI_LEFT);
}

void ui_draw_box(WINDOW *w, const char *title)
{
	attr_t a = ui_theme_attr(UI_ROLE_DIALOG);

	wbkgdset(w, ' ' | a);
	werase(w);
	wattr_set(w, a, PAIR_NUMBER(a), NULL);
	box(w, 0, 0);
	wattr_set(w, A_NORMAL, 0, NULL);
	if (title && *title) {
		char buf[256];
		snprintf(buf, sizeof(buf), " %s ", title);
		ui_draw_put(w, 0, 2, getmaxx(w) - 4, buf, a | A_BOLD);
	}
}

void ui_draw_dialog(WINDOW *w, const struct ui_rect *r, const char *title)
{
	wresize(w, r->h, r->w);
	mvwin(w, r->y, r->x);
	ui_draw_box(w, title);
}
