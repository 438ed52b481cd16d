/* The Mounts pane: the exchange folder and every host mount of every sandbox,
 * read-write ones marked as a warning (the sandbox can change host files). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

struct mount_row {
	const struct sb_sandbox_info *sbx;
	const char *host, *path;
	int rw, exchange;
};

/* The n-th mount row over the sorted sandboxes; returns 0 past the end. */
static int row_at(struct ui_app *app, size_t n, struct mount_row *out)
{
	static char *exchange;

	if (!exchange)
		exchange = sb_root_file(app->root, "exchange");
	for (size_t i = 0; i < app->n_order; i++) {
		const struct sb_sandbox_info *s = &app->sbx[app->order[i]];
		size_t here = s->rec.n_mounts + (s->rec.exchange ? 1 : 0);
		if (n >= here) {
			n -= here;
			continue;
		}
		out->sbx = s;
		if (s->rec.exchange && n == 0) {
			*out = (struct mount_row){ s, exchange ? exchange : "exchange", "/exchange", 1, 1 };
			return 1;
		}
		const struct sb_sandbox_mount *m = &s->rec.mounts[n - (s->rec.exchange ? 1 : 0)];
		*out = (struct mount_row){ s, m->host, m->path, m->mode == SB_MOUNT_RW, 0 };
		return 1;
	}
	return 0;
}

static size_t rows(struct ui_app *app)
{
	size_t n = 0;

	for (size_t i = 0; i < app->n_order; i++)
		n += app->sbx[app->order[i]].rec.n_mounts + (app->sbx[app->order[i]].rec.exchange ? 1 : 0);
	return n;
}

static void draw(struct ui_app *app, WINDOW *w, int focused)
{
	struct ui_pane_view *v = &app->views[UI_PANE_MOUNTS];
	int h = getmaxy(w) - 2, width = getmaxx(w), wn = 18, wm = 5, wp = (width - wn - wm - 3) / 3;
	int wh = width - wn - wm - wp - 3;
	size_t n = rows(app);
	struct mount_row m;

	ui_draw_text(w, 1, 0, wn, _("SANDBOX"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	ui_draw_text(w, 1, wn + 1, wh, _("HOST PATH"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	ui_draw_text(w, 1, wn + wh + 2, wp, _("SANDBOX PATH"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	ui_draw_text(w, 1, width - wm, wm, _("MODE"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	if (n == 0) {
		ui_draw_put(w, 3, 2, width - 4, _("no mounts"), ui_theme_attr(UI_ROLE_DIM));
		return;
	}
	ui_app_clamp_view(app, UI_PANE_MOUNTS, n, h);
	for (int r = 0; r < h && row_at(app, v->top + (size_t)r, &m); r++) {
		int sel = v->top + (size_t)r == v->selected;
		attr_t a = sel ? ui_theme_attr(focused ? UI_ROLE_SELECTED : UI_ROLE_SELECTED_DIM) : A_NORMAL;
		ui_draw_text(w, 2 + r, 0, width, "", a, UI_LEFT);
		ui_draw_text(w, 2 + r, 0, wn, m.sbx->rec.name, a, UI_LEFT);
		ui_draw_text(w, 2 + r, wn + 1, wh, m.host, a, UI_LEFT);
		ui_draw_text(w, 2 + r, wn + wh + 2, wp, m.path, a, UI_LEFT);
		ui_draw_text(w, 2 + r, width - wm, wm, m.rw ? "rw" : "ro", sel ? a : ui_theme_attr(m.rw ? UI_ROLE_WARN : UI_ROLE_NORMAL),
			     UI_LEFT);
	}
}

static void details(struct ui_app *app, size_t row, void (*line)(void *, const char *, const char *, int), void *ctx)
{
	struct mount_row m;

	if (!row_at(app, row, &m))
		return;
	line(ctx, _("Sandbox"), m.sbx->rec.name, 0);
	line(ctx, _("Host path"), m.host, 0);
	line(ctx, _("Sandbox path"), m.path, 0);
	line(ctx, _("Mode"), m.rw ? _("read-write: the sandbox can change these host files") : _("read-only"), m.rw);
	if (m.exchange)
		line(ctx, _("Shared"), _("the exchange folder, shared by every sandbox that mounts it"), 0);
}

static int action(struct ui_app *app, enum ui_action a)
{
	struct mount_row m;

	/* lifecycle keys act on the mount's sandbox */
	if (!row_at(app, app->views[UI_PANE_MOUNTS].selected, &m))
		return 0;
	switch (a) {
	case UI_ACT_SHELL: case UI_ACT_STOP: case UI_ACT_RESTORE: case UI_ACT_REMOVE: case UI_ACT_INSPECT:
		ui_action_sandbox(app, a, (struct sb_sandbox_info *)m.sbx);
		return 1;
	default:
		return 0;
	}
}

static const enum ui_action hints[] = { UI_ACT_SHELL, UI_ACT_INSPECT, UI_ACT_PANE_SANDBOXES, UI_ACT_NONE };

const struct ui_pane ui_pane_mounts = {
	.title = N_("Mounts"),
	.rows = rows,
	.draw = draw,
	.details = details,
	.action = action,
	.hints = hints,
};
