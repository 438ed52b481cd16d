/* Confirmation dialogs that say what will happen before it happens; remove
 * lists what is removed and what is kept. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

struct confirm {
	char title[128];
	char text[16384];
	char yes[96];
	int top;                     /* first line shown of a text longer than the screen */
	char name[SB_SANDBOX_NAME_MAX + 1];
	ui_confirm_fn on_yes;
};

void ui_confirm_open(struct ui_app *app, const char *title, const char *text, const char *yes_label,
		     ui_confirm_fn on_yes, const char *name)
{
	struct confirm *c = calloc(1, sizeof(*c));

	if (!c)
		return;
	snprintf(c->title, sizeof(c->title), "%s", title);
	snprintf(c->text, sizeof(c->text), "%s", text);
	snprintf(c->yes, sizeof(c->yes), "%s", yes_label);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->on_yes = on_yes;
	app->overlay_state = c;
	app->overlay = UI_OV_CONFIRM;
	app->dirty = 1;
}

void ui_confirm_close(struct ui_app *app)
{
	/* on_yes may have opened another overlay meanwhile */
	if (app->overlay == UI_OV_CONFIRM)
		ui_overlay_close(app);
}

size_t ui_confirm_cat(char *buf, size_t size, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len >= size)
		return len;
	va_start(ap, fmt);
	int n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	return n < 0 ? len : len + (size_t)n;
}

static void do_remove(struct ui_app *app, const char *name)
{
	struct sb_sandbox_info *s = ui_app_find_sandbox(app, name);

	if (s)
		ui_action_sandbox(app, UI_ACT_NONE, s);   /* UI_ACT_NONE: the confirmed removal */
}

void ui_confirm_remove(struct ui_app *app, const struct sb_sandbox_info *s)
{
	char text[4096], title[128], *exchange = sb_root_file(app->root, "exchange");
	size_t len = 0, shells = ui_shells_count(app, s->rec.name);

	len = ui_confirm_cat(text, sizeof(text), len, "%s\n", _("Removed:"));
	len = ui_confirm_cat(text, sizeof(text), len, _("  - the sandbox, its processes and memory (%s)\n"),
		  sb_sandbox_state_name(s->rec.state));
	len = ui_confirm_cat(text, sizeof(text), len, _("  - its own disk and checkpoint under %s\n"), s->dir ? s->dir : "");
	len = ui_confirm_cat(text, sizeof(text), len, s->rec.kind == SB_KIND_PERMANENT
		  ? _("  - its PERMANENT workspace %s\n") : _("  - its workspace %s\n"),
		  s->workspace ? s->workspace : "");
	if (shells)
		len = ui_confirm_cat(text, sizeof(text), len, _("  - %zu attached shell(s), closed first\n"), shells);
	len = ui_confirm_cat(text, sizeof(text), len, "\n%s\n", _("Kept:"));
	if (s->rec.exchange)
		len = ui_confirm_cat(text, sizeof(text), len, _("  - the exchange folder %s (shared)\n"), exchange ? exchange : "");
	for (size_t i = 0; i < s->rec.n_mounts; i++)
		len = ui_confirm_cat(text, sizeof(text), len, _("  - host folder %s (was %s at %s)\n"), s->rec.mounts[i].host,
			  sb_mount_mode_name(s->rec.mounts[i].mode), s->rec.mounts[i].path);
	if (!s->rec.exchange && !s->rec.n_mounts)
		len = ui_confirm_cat(text, sizeof(text), len, "%s\n", _("  - nothing else: it had no exchange folder or host folders"));
	ui_confirm_cat(text, sizeof(text), len, _("  - the image %s\n"), s->rec.image_ref && *s->rec.image_ref ? s->rec.image_ref : s->rec.image_digest);
	snprintf(title, sizeof(title), _("Remove sandbox '%s'?"), s->rec.name);
	ui_confirm_open(app, title, text, _("Remove"), do_remove, s->rec.name);
	free(exchange);
}

void ui_confirm_draw(struct ui_app *app)
{
	struct confirm *c = app->overlay_state;
	int lines = 1, width = ui_text_width(c->title) + 6;
	const char *p = c->text;
	char line[512], foot[192];
	WINDOW *w = app->w_overlay;

	for (const char *q = p; *q; q++)
		lines += *q == '\n';
	for (const char *q = p; *q;) {
		const char *nl = strchr(q, '\n');
		size_t len = nl ? (size_t)(nl - q) : strlen(q);
		snprintf(line, sizeof(line), "%.*s", (int)len, q);
		if (ui_text_width(line) + 4 > width)
			width = ui_text_width(line) + 4;
		q += len + (nl ? 1 : 0);
	}
	struct ui_rect r = ui_layout_dialog(&app->layout, lines + 4, width);
	int body = r.h - 3;
	if (c->top > lines - body)
		c->top = lines - body > 0 ? lines - body : 0;
	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	ui_draw_box(w, c->title);
	int y = 1, skip = c->top;
	for (const char *q = p; *q && y < r.h - 2;) {
		const char *nl = strchr(q, '\n');
		size_t len = nl ? (size_t)(nl - q) : strlen(q);
		snprintf(line, sizeof(line), "%.*s", (int)len, q);
		if (skip > 0)
			skip--;
		else
			ui_draw_put(w, y++, 2, r.w - 4, line, ui_theme_attr(UI_ROLE_DIALOG));
		q += len + (nl ? 1 : 0);
	}
	if (lines > body) {
		/* longer than the screen (many marked sandboxes): say so, and how to see the rest */
		snprintf(line, sizeof(line), _(" lines %d-%d of %d, Up/Down "), c->top + 1,
			 c->top + body < lines ? c->top + body : lines, lines);
		ui_draw_put(w, r.h - 1, 2, r.w - 4, line, ui_theme_attr(UI_ROLE_KEY));
	}
	snprintf(foot, sizeof(foot), _("y: %s    n, Esc: cancel"), c->yes);
	ui_draw_put(w, r.h - 2, 2, r.w - 4, foot, ui_theme_attr(UI_ROLE_KEY));
}

void ui_confirm_key(struct ui_app *app, int key)
{
	struct confirm *c = app->overlay_state;
	char name[SB_SANDBOX_NAME_MAX + 1];
	ui_confirm_fn fn = c->on_yes;

	if (key == UI_KEY_FN + KEY_UP || key == 'k') {
		c->top -= c->top > 0;
	} else if (key == UI_KEY_FN + KEY_DOWN || key == 'j') {
		c->top++;
	} else if (key == 'y' || key == 'Y') {
		snprintf(name, sizeof(name), "%s", c->name);
		ui_confirm_close(app);
		fn(app, name);
	} else if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
		ui_confirm_close(app);
		ui_app_message(app, 0, _("cancelled"));
	}
}
