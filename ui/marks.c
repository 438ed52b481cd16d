/* Marked sandboxes (by name, so a mark follows its sandbox through re-sorts
 * and listings) and the lifecycle actions on all of them at once: one
 * confirmation that says, per sandbox, what happens to it and what is kept,
 * then one job that works through them, reporting each; a failure leaves the
 * others done and its sandbox marked. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "ui.h"

int ui_marked(const struct ui_app *app, const char *name)
{
	for (size_t i = 0; i < app->n_marks; i++)
		if (!strcmp(app->marks[i], name))
			return 1;
	return 0;
}

void ui_marks_set(struct ui_app *app, const char *name, int on)
{
	for (size_t i = 0; i < app->n_marks; i++) {
		if (strcmp(app->marks[i], name))
			continue;
		if (!on)
			memmove(app->marks[i], app->marks[i + 1], sizeof(app->marks[0]) * (app->n_marks-- - i - 1));
		return;
	}
	if (!on)
		return;
	void *m = realloc(app->marks, sizeof(app->marks[0]) * (app->n_marks + 1));
	if (!m)
		return;
	app->marks = m;
	snprintf(app->marks[app->n_marks++], sizeof(app->marks[0]), "%s", name);
}

void ui_marks_prune(struct ui_app *app)
{
	for (size_t i = app->n_marks; i-- > 0;)
		if (!ui_app_find_sandbox(app, app->marks[i]))
			ui_marks_set(app, app->marks[i], 0);
}

void ui_marks_free(struct ui_app *app)
{
	free(app->marks);
	app->marks = NULL;
	app->n_marks = 0;
}

/* From the last mark to the cursor, both included (k9s' C-Space). */
static void mark_range(struct ui_app *app)
{
	size_t sel = app->views[UI_PANE_SANDBOXES].selected, from = sel;
	int found = 0;

	for (size_t i = 0; i < app->n_order && app->last_mark[0]; i++)
		if (!strcmp(app->sbx[app->order[i]].rec.name, app->last_mark))
			from = i, found = 1;
	if (!found) {
		ui_app_message(app, 1, "%s", _("no mark in the list to start a range from: mark one with Space first"));
		return;
	}
	for (size_t i = from < sel ? from : sel; i <= (from < sel ? sel : from) && i < app->n_order; i++)
		ui_marks_set(app, app->sbx[app->order[i]].rec.name, 1);
}

int ui_marks_action(struct ui_app *app, enum ui_action a)
{
	struct sb_sandbox_info *s = ui_app_selected_sandbox(app);

	switch (a) {
	case UI_ACT_MARK:
		if (!s)
			return 1;
		ui_marks_set(app, s->rec.name, !ui_marked(app, s->rec.name));
		snprintf(app->last_mark, sizeof(app->last_mark), "%s", s->rec.name);
		ui_app_move(app, UI_ACT_DOWN, app->n_order, 1);
		break;
	case UI_ACT_MARK_RANGE:
		if (s)
			mark_range(app);
		break;
	case UI_ACT_MARK_ALL:
		for (size_t i = 0; i < app->n_order; i++)
			ui_marks_set(app, app->sbx[app->order[i]].rec.name, 1);
		break;
	case UI_ACT_CLEAR_MARKS:
		app->n_marks = 0;
		app->last_mark[0] = '\0';
		break;
	default:
		return 0;
	}
	ui_app_message(app, 0, ngettext("%zu sandbox marked", "%zu sandboxes marked", app->n_marks), app->n_marks);
	app->dirty = 1;
	return 1;
}

/* ---- the bulk actions ---- */

/* Why a does not apply to s, NULL when it does. */
static const char *not_applicable(const struct sb_sandbox_info *s, enum ui_action a)
{
	if ((a == UI_ACT_STOP || a == UI_ACT_PAUSE) && !sb_sandbox_state_live(s->rec.state))
		return _("not running");
	if (a == UI_ACT_RESTORE && sb_sandbox_state_live(s->rec.state))
		return _("already running");
	if ((a == UI_ACT_EXPIRE || a == UI_ACT_EXTEND) && s->rec.kind != SB_KIND_TEMPORARY)
		return _("permanent: it never expires");
	return NULL;
}

/* What removal takes and keeps, on one line per sandbox. */
static size_t removal_line(char *buf, size_t size, size_t len, struct ui_app *app, const struct sb_sandbox_info *s)
{
	size_t shells = ui_shells_count(app, s->rec.name);

	/* the workspace's path is in the single removal's dialog: here one line each */
	len = ui_confirm_cat(buf, size, len, s->rec.kind == SB_KIND_PERMANENT ? _("  %s (%s): removed: PERMANENT workspace")
		  : _("  %s (%s): removed: workspace"), s->rec.name, sb_sandbox_state_name(s->rec.state));
	if (shells)
		len = ui_confirm_cat(buf, size, len, _(", %zu shell(s)"), shells);
	len = ui_confirm_cat(buf, size, len, "%s", _("; kept:"));
	if (s->rec.exchange)
		len = ui_confirm_cat(buf, size, len, " %s", _("exchange folder"));
	for (size_t i = 0; i < s->rec.n_mounts; i++)
		len = ui_confirm_cat(buf, size, len, _("%s host folder %s"), s->rec.exchange || i ? "," : "", s->rec.mounts[i].host);
	if (!s->rec.exchange && !s->rec.n_mounts)
		len = ui_confirm_cat(buf, size, len, " %s", _("nothing (no exchange or host folders)"));
	return ui_confirm_cat(buf, size, len, "\n");
}

static size_t action_line(char *buf, size_t size, size_t len, struct ui_app *app, const struct sb_sandbox_info *s,
			  enum ui_action a)
{
	size_t shells = ui_shells_count(app, s->rec.name);

	switch (a) {
	case UI_ACT_REMOVE:
		return removal_line(buf, size, len, app, s);
	case UI_ACT_STOP:
		len = ui_confirm_cat(buf, size, len, _("  %s: stopped, memory kept on disk"), s->rec.name);
		break;
	case UI_ACT_RESTORE:
		len = ui_confirm_cat(buf, size, len, _("  %s: restored"), s->rec.name);
		break;
	case UI_ACT_EXPIRE:
		len = ui_confirm_cat(buf, size, len, _("  %s: expires now (%s)"), s->rec.name, sb_expiry_action_name(sb_sandbox_expiry_due(s)));
		break;
	case UI_ACT_EXTEND:
		len = ui_confirm_cat(buf, size, len, _("  %s: idle timeout an hour longer"), s->rec.name);
		break;
	case UI_ACT_PAUSE:
		len = ui_confirm_cat(buf, size, len, s->rec.state == SB_STATE_PAUSED ? _("  %s: resumed")
						   : _("  %s: paused, memory kept in RAM"), s->rec.name);
		break;
	default:
		len = ui_confirm_cat(buf, size, len, _("  %s: its idle time starts again"), s->rec.name);
		break;
	}
	if (shells && (a == UI_ACT_STOP || a == UI_ACT_EXPIRE))
		len = ui_confirm_cat(buf, size, len, _(", %zu shell(s) closed first"), shells);
	return ui_confirm_cat(buf, size, len, "\n");
}

struct bulk {
	enum ui_action action;
	size_t n;
	char (*names)[SB_SANDBOX_NAME_MAX + 1];
};

static void bulk_free(void *p)
{
	struct bulk *b = p;

	if (b)
		free(b->names);
	free(b);
}

/* The child: each in turn; the result lists the ones that failed. */
static int job_bulk(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct bulk *b = arg;
	const char *verb = _(ui_action_info(b->action)->name);
	size_t failed = 0;

	(void)err;
	for (size_t i = 0; i < b->n; i++) {
		struct sb_error e;
		ui_job_step(ctx, i + 1, b->n, b->names[i]);
		if (ui_action_apply(root, b->action, b->names[i], &e) < 0) {
			ui_job_event(ctx, 1, _("%s %s failed: %s"), verb, b->names[i], e.msg);
			ui_job_result(ctx, "%s", b->names[i]);
			failed++;
		} else {
			ui_job_event(ctx, 0, _("%s %s: done (%zu of %zu)"), verb, b->names[i], i + 1, b->n);
		}
	}
	return 0;
}

static void bulk_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct bulk *b = arg;
	size_t failed = 0;

	/* what succeeded is unmarked; what failed stays marked for another try */
	for (size_t i = 0; i < b->n; i++) {
		const char *p = rc == 0 ? strstr(message, b->names[i]) : NULL;
		size_t len = strlen(b->names[i]);
		int bad = rc < 0 || (p && (p == message || p[-1] == '\n') && (p[len] == '\n' || !p[len]));
		failed += bad;
		if (!bad)
			ui_marks_set(app, b->names[i], 0);
	}
	if (failed)
		ui_app_message(app, 1, _("%s: %zu of %zu done, %zu failed (see the events; they stay marked)"),
			       _(ui_action_info(b->action)->name), b->n - failed, b->n, failed);
	else
		ui_app_message(app, 0, _("%s: all %zu done"), _(ui_action_info(b->action)->name), b->n);
	ui_app_reload(app);
}

static void bulk_run(struct ui_app *app, const char *unused)
{
	struct bulk *b = calloc(1, sizeof(*b));
	char label[160];

	(void)unused;
	if (!b || !(b->names = calloc(app->n_marks ? app->n_marks : 1, sizeof(b->names[0])))) {
		free(b);
		return;
	}
	b->action = app->bulk_action;
	for (size_t i = 0; i < app->n_marks; i++) {
		struct sb_sandbox_info *s = ui_app_find_sandbox(app, app->marks[i]);
		if (!s || not_applicable(s, b->action))
			continue;
		if (b->action == UI_ACT_STOP || b->action == UI_ACT_REMOVE || b->action == UI_ACT_EXPIRE)
			ui_shells_close(app, s->rec.name);
		ui_action_log(app, b->action, s->rec.name);
		snprintf(b->names[b->n++], sizeof(b->names[0]), "%s", s->rec.name);
	}
	snprintf(label, sizeof(label), ngettext("%s: %zu sandbox", "%s: %zu sandboxes", b->n),
		 _(ui_action_info(b->action)->name), b->n);
	ui_job_start(app, label, job_bulk, b, bulk_done, bulk_free);
}

int ui_marks_bulk(struct ui_app *app, enum ui_action a)
{
	static char text[16384];
	char title[160], yes[96];
	size_t len = 0, n = 0, skipped = 0;

	if (!app->n_marks)
		return 0;
	len = ui_confirm_cat(text, sizeof(text), len, "%s\n", a == UI_ACT_REMOVE ? _("Removed, and kept, per sandbox:") : _("Per sandbox:"));
	for (size_t i = 0; i < app->n_marks; i++) {
		struct sb_sandbox_info *s = ui_app_find_sandbox(app, app->marks[i]);
		if (s && !not_applicable(s, a)) {
			len = action_line(text, sizeof(text), len, app, s, a);
			n++;
		}
	}
	for (size_t i = 0; i < app->n_marks; i++) {
		struct sb_sandbox_info *s = ui_app_find_sandbox(app, app->marks[i]);
		const char *why = s ? not_applicable(s, a) : NULL;
		if (why) {
			len = ui_confirm_cat(text, sizeof(text), len, "%s", skipped++ ? "" : _("\nLeft alone:\n"));
			len = ui_confirm_cat(text, sizeof(text), len, "  %s: %s\n", s->rec.name, why);
		}
	}
	if (!n) {
		ui_app_message(app, 1, _("'%s' applies to none of the %zu marked sandboxes"), _(ui_action_info(a)->name),
			       app->n_marks);
		return 1;
	}
	if (a == UI_ACT_REMOVE)
		ui_confirm_cat(text, sizeof(text), len, "%s", _("\nImages and the exchange folder are kept in every case."));
	snprintf(title, sizeof(title), ngettext("%s %zu marked sandbox?", "%s %zu marked sandboxes?", n),
		 _(ui_action_info(a)->name), n);
	snprintf(yes, sizeof(yes), ngettext("%s %zu sandbox", "%s %zu sandboxes", n), _(ui_action_info(a)->name), n);
	app->bulk_action = a;
	ui_confirm_open(app, title, text, yes, bulk_run, "");
	return 1;
}
