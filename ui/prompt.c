/* One-line text input: the editing shared by the filter, the form fields and
 * the prompt (a question in the status line, e.g. the reference to pull). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

int ui_line_edit(char *buf, size_t size, int key)
{
	size_t len = strlen(buf);
	char u[5];
	int n;

	if (key == UI_KEY_FN + KEY_BACKSPACE || key == 127 || key == 8) {
		/* one UTF-8 character */
		while (len > 0 && ((unsigned char)buf[--len] & 0xc0) == 0x80)
			;
		buf[len] = '\0';
		return 1;
	}
	if (key == 21) {   /* C-u, as in a shell */
		buf[0] = '\0';
		return 1;
	}
	if (key < ' ' || key >= UI_KEY_FN || !(n = ui_key_utf8(key, u)))
		return 0;
	if (len + (size_t)n < size) {
		memcpy(buf + len, u, (size_t)n);
		buf[len + (size_t)n] = '\0';
	}
	return 1;
}

struct prompt {
	char label[128];
	char text[512];
	ui_prompt_fn fn;
};

void ui_prompt_open(struct ui_app *app, const char *label, const char *initial, ui_prompt_fn fn)
{
	struct prompt *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	snprintf(p->label, sizeof(p->label), "%s", label);
	snprintf(p->text, sizeof(p->text), "%s", initial ? initial : "");
	p->fn = fn;
	app->overlay_state = p;
	app->overlay = UI_OV_PROMPT;
	app->dirty = 1;
}

void ui_prompt_key(struct ui_app *app, int key)
{
	struct prompt *p = app->overlay_state;

	app->dirty = 1;
	if (key == 27) {
		ui_overlay_close(app);
	} else if (key == '\n' || key == '\r' || key == UI_KEY_FN + KEY_ENTER) {
		char text[512];
		ui_prompt_fn fn = p->fn;
		snprintf(text, sizeof(text), "%s", p->text);
		ui_overlay_close(app);
		fn(app, text);   /* "" too: a search cleared */
	} else {
		ui_line_edit(p->text, sizeof(p->text), key);
	}
}

void ui_prompt_draw(struct ui_app *app, WINDOW *w)
{
	struct prompt *p = app->overlay_state;
	char buf[700];
	int x;

	snprintf(buf, sizeof(buf), "%s %s", p->label, p->text);
	ui_draw_text(w, 0, 0, getmaxx(w), buf, ui_theme_attr(UI_ROLE_KEY), UI_LEFT);
	x = ui_text_width(buf);
	if (x < getmaxx(w)) {
		wmove(w, 0, x);
		curs_set(1);
	}
}

/* ---- history of a prompt (the filter's queries, the command line's commands) ---- */

void ui_history_add(struct ui_history *h, const char *text)
{
	if (!text[0] || (h->n && !strcmp(h->items[h->n - 1], text))) {
		h->pos = h->n;
		return;
	}
	if (h->n == UI_HISTORY_MAX) {
		free(h->items[0]);
		memmove(h->items, h->items + 1, sizeof(h->items[0]) * (UI_HISTORY_MAX - 1));
		h->n--;
	}
	if ((h->items[h->n] = strdup(text)))
		h->n++;
	h->pos = h->n;
}

int ui_history_key(struct ui_history *h, int key, char *buf, size_t size)
{
	if (key == UI_KEY_FN + KEY_UP && h->pos > 0)
		h->pos--;
	else if (key == UI_KEY_FN + KEY_DOWN && h->pos < h->n)
		h->pos++;
	else
		return key == UI_KEY_FN + KEY_UP || key == UI_KEY_FN + KEY_DOWN;
	snprintf(buf, size, "%s", h->pos < h->n ? h->items[h->pos] : "");
	return 1;
}

void ui_history_free(struct ui_history *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->items[i]);
	h->n = h->pos = 0;
}
