/* The command log: for every action the workbench performs, the sandbench
 * command line that does the same, shell-quoted so it can be pasted into a
 * shell; an overlay lists them and copies the selected one to the terminal's
 * clipboard with OSC 52 (the terminal, not the host, holds it: it works over
 * ssh too). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "draw.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "theme.h"
#include "ui.h"

#define CMDLOG_MAX 200

static char *lines[CMDLOG_MAX];
static size_t n_lines;

struct cmdlog_view {
	size_t selected, top;
};

static void push(struct ui_app *app, char *line)
{
	if (!line)
		return;
	if (n_lines == CMDLOG_MAX) {
		free(lines[0]);
		memmove(lines, lines + 1, sizeof(lines[0]) * (CMDLOG_MAX - 1));
		n_lines--;
	}
	lines[n_lines++] = line;
	app->dirty = 1;
}

/* Appends s to buf (len so far), single-quoted unless every byte is safe in a shell word. */
static size_t quote(char *buf, size_t size, size_t len, const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
	int plain = *s && strspn(s, safe) == strlen(s);

	if (len + 1 < size && !plain)
		buf[len++] = '\'';
	for (; *s && len + 5 < size; s++) {
		if (*s == '\'' && !plain) {
			memcpy(buf + len, "'\\''", 4);
			len += 4;
		} else {
			buf[len++] = *s;
		}
	}
	if (len + 1 < size && !plain)
		buf[len++] = '\'';
	buf[len] = '\0';
	return len;
}

void ui_cmdlog_add(struct ui_app *app, const char *const *args)
{
	char buf[2048];
	size_t len = (size_t)snprintf(buf, sizeof(buf), "sandbench --root ");

	len = quote(buf, sizeof(buf), len, sb_root_path(app->root));
	for (size_t i = 0; args[i] && len + 2 < sizeof(buf); i++) {
		buf[len++] = ' ';
		len = quote(buf, sizeof(buf), len, args[i]);
	}
	push(app, strdup(buf));
}

void ui_cmdlog_note(struct ui_app *app, const char *action, const char *name)
{
	push(app, sb_strdupf(_("# %s %s: no sandbench command does this yet"), action, name));
}

void ui_cmdlog_free(void)
{
	for (size_t i = 0; i < n_lines; i++)
		free(lines[i]);
	n_lines = 0;
}

void ui_cmdlog_open(struct ui_app *app)
{
	struct cmdlog_view *v = calloc(1, sizeof(*v));

	if (!v)
		return;
	v->selected = n_lines ? n_lines - 1 : 0;
	app->overlay_state = v;
	app->overlay = UI_OV_CMDLOG;
	app->dirty = 1;
}

void ui_cmdlog_draw(struct ui_app *app)
{
	struct cmdlog_view *v = app->overlay_state;
	struct ui_rect r = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 2);
	WINDOW *w = app->w_overlay;
	int body = r.h - 3;

	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	ui_draw_box(w, _("Commands behind the actions"));
	if (!n_lines)
		ui_draw_put(w, 1, 2, r.w - 4, _("no actions yet"), ui_theme_attr(UI_ROLE_DIM));
	if (v->selected < v->top)
		v->top = v->selected;
	if (body > 0 && v->selected >= v->top + (size_t)body)
		v->top = v->selected - (size_t)body + 1;
	for (int y = 0; y < body && v->top + (size_t)y < n_lines; y++) {
		size_t i = v->top + (size_t)y;
		attr_t a = i == v->selected ? ui_theme_attr(UI_ROLE_SELECTED) : ui_theme_attr(UI_ROLE_DIALOG);
		ui_draw_text(w, 1 + y, 1, r.w - 2, lines[i], a, UI_LEFT);
	}
	ui_draw_put(w, r.h - 2, 2, r.w - 4, _("y, Enter: copy (OSC 52)   Up/Down: select   q, Esc: close"),
		    ui_theme_attr(UI_ROLE_KEY));
}

/* OSC 52 carries the text base64-encoded; terminals that do not know it ignore it. */
static void copy_osc52(const char *text)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = strlen(text), o = 0;
	char *out = malloc(len / 3 * 4 + 16 + 8);

	if (!out)
		return;
	o += (size_t)sprintf(out, "\033]52;c;");
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)text[i] << 16;
		v |= i + 1 < len ? (unsigned char)text[i + 1] << 8 : 0;
		v |= i + 2 < len ? (unsigned char)text[i + 2] : 0;
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = (char)(i + 1 < len ? b64[(v >> 6) & 63] : '=');
		out[o++] = (char)(i + 2 < len ? b64[v & 63] : '=');
	}
	out[o++] = '\a';
	(void)fflush(stdout); /* curses' output first; a failure shows in the write */
	if (write(STDOUT_FILENO, out, o) < 0) {
		/* no terminal to copy to: nothing to do */
	}
	free(out);
}

void ui_cmdlog_key(struct ui_app *app, int key)
{
	struct cmdlog_view *v = app->overlay_state;

	if (key == 27 || key == 'q') {
		ui_overlay_close(app);
	} else if ((key == UI_KEY_FN + KEY_UP || key == 'k') && v->selected > 0) {
		v->selected--;
	} else if ((key == UI_KEY_FN + KEY_DOWN || key == 'j') && v->selected + 1 < n_lines) {
		v->selected++;
	} else if ((key == 'y' || key == '\n' || key == '\r') && v->selected < n_lines) {
		copy_osc52(lines[v->selected]);
		ui_app_message(app, 0, _("copied to the terminal's clipboard: %s"), lines[v->selected]);
		ui_overlay_close(app);
	}
	app->dirty = 1;
}
