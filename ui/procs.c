/* The processes of the selected running sandbox: `ps` run inside through the
 * library's exec (it counts as activity, like any exec), listed in an
 * overlay; a signal to one after a confirmation, logged as the
 * `sandbench exec NAME -- kill -SIG PID` it is. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "layout.h"
#include "base/i18n.h"
#include "theme.h"
#include "ui.h"

#define PROCS_MAX 200

struct procs_view {
	char name[SB_SANDBOX_NAME_MAX + 1];
	char header[256];
	char rows[PROCS_MAX][256];
	size_t n, selected, top;
	int loading;
	char error[256];
};

/* the signal waiting for its confirmation */
static struct {
	char pid[16];
	const char *sig;
} pending;

static int run_inside(struct sb_root *root, const char *name, char *const *argv, struct ui_job_ctx *ctx,
		      struct sb_error *err)
{
	struct sb_exec_opts o = { .argv = argv, .timeout_ms = 20000, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
				  .capture_max = 64 << 10, .source = SB_TIMELINE_WORKBENCH };
	struct sb_exec_result r = { 0 };
	int rc = sb_sandbox_exec(&r, root, name, &o, err);
	char *save = NULL;

	if (rc == 0 && r.exit_code != 0)
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("'%s' inside '%s' exited with status %d: %s"), argv[0], name,
				  r.exit_code, r.errout ? r.errout : "");
	for (char *line = rc == 0 && r.out ? strtok_r(r.out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		ui_job_result(ctx, "%s", line);
	sb_exec_result_clear(&r);
	return rc;
}

static int job_ps(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	char *const wide[] = { "ps", "-o", "pid,user,stat,rss,args", NULL }, *const plain[] = { "ps", NULL };

	/* busybox and procps both know -o; an image whose ps does not gets the plain listing */
	if (run_inside(root, arg, wide, ctx, NULL) == 0)
		return 0;
	return run_inside(root, arg, plain, ctx, err);
}

static void ps_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct procs_view *v = app->overlay_state;
	char *save = NULL, *text;

	if (app->overlay != UI_OV_PROCS || strcmp(v->name, arg))
		return;   /* closed meanwhile, or another sandbox's */
	v->loading = 0;
	v->n = 0;
	if (rc < 0) {
		snprintf(v->error, sizeof(v->error), "%s", message);
	} else if ((text = strdup(message))) {
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (!v->header[0])
				snprintf(v->header, sizeof(v->header), "%s", line);
			else if (v->n < PROCS_MAX)
				snprintf(v->rows[v->n++], sizeof(v->rows[0]), "%s", line);
		}
		free(text);
	}
	if (v->selected >= v->n)
		v->selected = v->n ? v->n - 1 : 0;
	app->dirty = 1;
}

static void list_again(struct ui_app *app, struct procs_view *v)
{
	char *name = strdup(v->name);

	v->loading = 1;
	v->header[0] = v->error[0] = '\0';
	if (name && ui_job_start(app, "", job_ps, name, ps_done, free) < 0)
		snprintf(v->error, sizeof(v->error), "%s", _("cannot start the listing"));
	app->dirty = 1;
}

static void open_for(struct ui_app *app, const char *name)
{
	struct procs_view *v = calloc(1, sizeof(*v));

	if (!v)
		return;
	ui_overlay_close(app);
	snprintf(v->name, sizeof(v->name), "%s", name);
	app->overlay_state = v;
	app->overlay = UI_OV_PROCS;
	list_again(app, v);
}

void ui_procs_open(struct ui_app *app)
{
	struct sb_sandbox_info *s = ui_app_selected_sandbox(app);

	if (!s || s->rec.state != SB_STATE_RUNNING) {
		ui_app_message(app, 1, _("processes: select a running sandbox"));
		return;
	}
	open_for(app, s->rec.name);
}

/* The sandbox's resources and history above the list (the details pane is
 * not on screen at 80x24: here they are). */
struct res_lines {
	WINDOW *w;
	int y, width;
};

static void res_line(void *user, const char *label, const char *value, int warn)
{
	struct res_lines *c = user;

	ui_draw_text(c->w, c->y, 2, 13, label, ui_theme_attr(UI_ROLE_DIM), UI_LEFT);
	ui_draw_text(c->w, c->y++, 16, c->width - 17, value, ui_theme_attr(warn ? UI_ROLE_WARN : UI_ROLE_DIALOG), UI_LEFT);
}

void ui_procs_draw(struct ui_app *app)
{
	struct procs_view *v = app->overlay_state;
	struct ui_rect r = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 2);
	WINDOW *w = app->w_overlay;
	struct sb_sandbox_info *s = ui_app_find_sandbox(app, v->name);
	struct res_lines rl = { w, 1, r.w };
	char title[128];

	snprintf(title, sizeof(title), _("Processes in %s"), v->name);
	ui_draw_dialog(w, &r, title);
	if (s && r.h >= 16)
		ui_resources_details(app, s, res_line, &rl);
	int top = rl.y, body = r.h - 3 - top;
	if (v->loading || v->error[0])
		ui_draw_put(w, top, 2, r.w - 4, v->error[0] ? v->error : _("listing..."),
			    ui_theme_attr(v->error[0] ? UI_ROLE_WARN : UI_ROLE_DIM));
	else
		ui_draw_text(w, top, 1, r.w - 2, v->header, ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	if (v->selected < v->top)
		v->top = v->selected;
	if (body > 0 && v->selected >= v->top + (size_t)body)
		v->top = v->selected - (size_t)body + 1;
	for (int y = 0; !v->loading && y < body && v->top + (size_t)y < v->n; y++) {
		size_t i = v->top + (size_t)y;
		attr_t a = i == v->selected ? ui_theme_attr(UI_ROLE_SELECTED) : ui_theme_attr(UI_ROLE_DIALOG);
		ui_draw_text(w, top + 1 + y, 1, r.w - 2, v->rows[i], a, UI_LEFT);
	}
	ui_draw_put(w, r.h - 2, 2, r.w - 4, _("t: send TERM   K: send KILL   r: list again   q, Esc: close"),
		    ui_theme_attr(UI_ROLE_KEY));
}

static int job_kill(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	char sig[24];
	snprintf(sig, sizeof(sig), "-%s", pending.sig);
	char *const argv[] = { "kill", sig, pending.pid, NULL };

	return run_inside(root, arg, argv, ctx, err);
}

static void kill_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	if (rc < 0)
		ui_app_message(app, 1, "%s", message);
	else
		ui_app_message(app, 0, _("sent %s to process %s in %s"), pending.sig, pending.pid, (const char *)arg);
	if (app->overlay == UI_OV_NONE)
		open_for(app, arg);   /* back to the list, without the process if it ended */
}

static void do_signal(struct ui_app *app, const char *name)
{
	char sig[24], *arg = strdup(name);
	snprintf(sig, sizeof(sig), "-%s", pending.sig);
	const char *args[] = { "exec", name, "--", "kill", sig, pending.pid, NULL };

	ui_cmdlog_add(app, args);
	if (!arg || ui_job_start(app, "", job_kill, arg, kill_done, free) < 0)
		ui_app_message(app, 1, _("cannot start the signal"));
}

static void ask_signal(struct ui_app *app, struct procs_view *v, const char *sig)
{
	char title[96], text[512], name[SB_SANDBOX_NAME_MAX + 1];
	const char *row = v->rows[v->selected];

	if (app->opts.readonly) {
		ui_app_message(app, 1, _("read-only: signals are refused (the workbench was started with --readonly)"));
		return;
	}
	if (v->loading || v->selected >= v->n || sscanf(row, "%15s", pending.pid) != 1 ||
	    strspn(pending.pid, "0123456789") != strlen(pending.pid))
		return;
	pending.sig = sig;
	snprintf(name, sizeof(name), "%s", v->name);
	snprintf(title, sizeof(title), _("send %s to process %s?"), sig, pending.pid);
	snprintf(text, sizeof(text), _("%s\n\nin sandbox %s"), row, name);
	ui_overlay_close(app);   /* the dialog takes the overlay; the list comes back after */
	ui_confirm_open(app, title, text, _("send it"), do_signal, name);
}

void ui_procs_key(struct ui_app *app, int key)
{
	struct procs_view *v = app->overlay_state;

	if (key == 27 || key == 'q')
		ui_overlay_close(app);
	else if ((key == UI_KEY_FN + KEY_UP || key == 'k') && v->selected > 0)
		v->selected--;
	else if ((key == UI_KEY_FN + KEY_DOWN || key == 'j') && v->selected + 1 < v->n)
		v->selected++;
	else if (key == 'r')
		list_again(app, v);
	else if (key == 't')
		ask_signal(app, v, "TERM");
	else if (key == 'K')
		ask_signal(app, v, "KILL");
	app->dirty = 1;
}
