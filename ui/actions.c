/* Lifecycle actions on sandboxes: each runs as a job (jobs.c) through the
 * runtime library, and reports back into the status line and the event log. */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "sandbox/build.h"
#include "sandbox/gc.h"
#include "session/session.h"
#include "ui.h"
#include "base/jsonfile.h"
#include "base/units.h"

/* How much "extend" adds to a temporary sandbox's idle timeout. */
#define EXTEND_SECONDS 3600

struct op {
	enum ui_action action;
	char name[SB_SANDBOX_NAME_MAX + 1];
	char done_msg[256];
};

/* The lifecycle actions on one sandbox and the CLI command that does the
 * same (NULL: none does yet), for the command log. */
static const struct {
	enum ui_action action;
	const char *cli;
} cli_verbs[] = {
	{ UI_ACT_STOP, "stop" }, { UI_ACT_RESTORE, "restore" }, { UI_ACT_REMOVE, "rm" },
	{ UI_ACT_TOUCH, "touch" }, { UI_ACT_EXPIRE, NULL }, { UI_ACT_EXTEND, NULL }, { UI_ACT_PAUSE, NULL },
};

/* The pause key toggles: by the state at the time the job runs. */
static int pause_or_resume(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_sandbox_info info;
	int rc = sb_sandbox_inspect(&info, root, name, err);

	if (rc < 0)
		return rc;
	rc = info.rec.state == SB_STATE_PAUSED ? sb_sandbox_resume(root, name, err) : sb_sandbox_pause(root, name, err);
	sb_sandbox_info_clear(&info);
	return rc;
}

int ui_action_apply(struct sb_root *root, enum ui_action a, const char *name, struct sb_error *err)
{
	switch (a) {
	case UI_ACT_STOP:
		return sb_sandbox_stop(root, name, _("stopped from the workbench"), err);
	case UI_ACT_RESTORE:
		return sb_sandbox_restore(root, name, err);
	case UI_ACT_REMOVE:
		return sb_sandbox_remove(root, name, 0, err);
	case UI_ACT_EXPIRE:
		return sb_sandbox_expire(root, name, err);
	case UI_ACT_EXTEND:
		return sb_sandbox_extend(root, name, EXTEND_SECONDS, err);
	case UI_ACT_TOUCH:
		return sb_sandbox_touch(root, name, err);
	case UI_ACT_PAUSE:
		return pause_or_resume(root, name, err);
	default:
		return sb_error_set(err, SB_ERR_INVALID, _("not an action on a sandbox"));
	}
}

void ui_action_log(struct ui_app *app, enum ui_action a, const char *name)
{
	for (size_t i = 0; i < sizeof(cli_verbs) / sizeof(cli_verbs[0]); i++) {
		if (cli_verbs[i].action != a)
			continue;
		if (cli_verbs[i].cli) {
			const char *args[] = { cli_verbs[i].cli, name, NULL };
			ui_cmdlog_add(app, args);
		} else {
			ui_cmdlog_note(app, ui_action_info(a)->name, name);
		}
	}
}

static void op_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct op *o = arg;

	if (rc < 0) {
		ui_app_message(app, 1, "%s", message);
		ui_event_add(app, 1, "%s: %s", o->name, message);
	} else {
		ui_app_message(app, 0, "%s", o->done_msg);
	}
	ui_app_reload(app);
}

static int job_op(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct op *o = arg;

	(void)ctx;
	return ui_action_apply(root, o->action, o->name, err);
}

static void start_job(struct ui_app *app, enum ui_action a, const char *name, const char *label, const char *done_msg)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return;
	o->action = a;
	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->done_msg, sizeof(o->done_msg), "%s", done_msg);
	ui_action_log(app, a, name);
	ui_job_start(app, label, job_op, o, op_done, free);
}

/* The messages are formatted here, where gettext's format checking sees them. */
#define START(app, a, name, label_fmt, done_fmt)                                  \
	do {                                                                      \
		char label_[160], done_[256];                                     \
		snprintf(label_, sizeof(label_), label_fmt, name);                \
		snprintf(done_, sizeof(done_), done_fmt, name);                   \
		start_job(app, a, name, label_, done_);                           \
	} while (0)

static void stop_now(struct ui_app *app, const char *name)
{
	int closed = ui_shells_close(app, name);

	if (closed)
		ui_event_add(app, 0, _("%s: closed %d attached shell(s) before stopping"), name, closed);
	START(app, UI_ACT_STOP, name, _("stopping %s"), _("stopped %s (memory kept on disk)"));
}

static void inspect(struct ui_app *app, const struct sb_sandbox_info *s)
{
	json_t *doc = sb_record_to_json(&s->rec);
	char *text = doc ? sb_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	char title[128];

	snprintf(title, sizeof(title), _("%s: sandbox.json"), s->rec.name);
	ui_viewer_open(app, title, text ? text : _("(cannot render the record)"));
	free(text);
	json_decref(doc);
}

void ui_action_sandbox(struct ui_app *app, enum ui_action a, struct sb_sandbox_info *s)
{
	struct sb_error err;
	char title[160], text[512];
	size_t shells;

	switch (a) {
	case UI_ACT_NONE:   /* removal, confirmed */
		ui_shells_close(app, s->rec.name);
		START(app, UI_ACT_REMOVE, s->rec.name, _("removing %s"), _("removed %s"));
		break;
	case UI_ACT_SHELL:
		/* a paused one is resumed by the shell's start */
		if (!sb_sandbox_state_live(s->rec.state))
			ui_app_message(app, 1, _("%s is %s: restore it first (r)"), s->rec.name,
				       sb_sandbox_state_name(s->rec.state));
		else
			ui_shell_attach(app, s->rec.name);
		break;
	case UI_ACT_STOP:
		if (!sb_sandbox_state_live(s->rec.state)) {
			ui_app_message(app, 1, _("%s is not running"), s->rec.name);
			break;
		}
		if ((shells = ui_shells_count(app, s->rec.name)) > 0) {
			snprintf(title, sizeof(title), _("Stop '%s'?"), s->rec.name);
			snprintf(text, sizeof(text),
				 _("%zu shell(s) are attached to %s.\nThey will be closed, then the sandbox is stopped\n"
				   "(memory and processes are kept on disk)."), shells, s->rec.name);
			ui_confirm_open(app, title, text, _("close the shells and stop"), stop_now, s->rec.name);
		} else {
			stop_now(app, s->rec.name);
		}
		break;
	case UI_ACT_PAUSE:
		if (s->rec.state == SB_STATE_PAUSED)
			START(app, UI_ACT_PAUSE, s->rec.name, _("resuming %s"), _("resumed %s"));
		else if (s->rec.state == SB_STATE_RUNNING)
			START(app, UI_ACT_PAUSE, s->rec.name, _("pausing %s"), _("paused %s (frozen, memory kept in RAM)"));
		else
			ui_app_message(app, 1, _("%s is %s: only a running sandbox pauses"), s->rec.name,
				       sb_sandbox_state_name(s->rec.state));
		break;
	case UI_ACT_RESTORE:
		if (sb_sandbox_state_live(s->rec.state))
			ui_app_message(app, 1, _("%s is already running"), s->rec.name);
		else
			START(app, UI_ACT_RESTORE, s->rec.name, _("restoring %s"), _("restored %s"));
		break;
	case UI_ACT_REMOVE:
		ui_confirm_remove(app, s);
		break;
	case UI_ACT_EXPIRE:
		if (s->rec.kind != SB_KIND_TEMPORARY) {
			ui_app_message(app, 1, _("%s is permanent: it never expires"), s->rec.name);
			break;
		}
		ui_shells_close(app, s->rec.name);
		START(app, UI_ACT_EXPIRE, s->rec.name, _("expiring %s"), _("expired %s"));
		break;
	case UI_ACT_EXTEND:
		START(app, UI_ACT_EXTEND, s->rec.name, _("extending %s"), _("extended the idle timeout of %s by an hour"));
		break;
	case UI_ACT_TOUCH:
		/* one utimensat: no need for a job */
		ui_action_log(app, UI_ACT_TOUCH, s->rec.name);
		if (sb_sandbox_touch(app->root, s->rec.name, &err) < 0)
			ui_app_message(app, 1, "%s", err.msg);
		else
			ui_app_message(app, 0, _("touched %s: its idle time starts again"), s->rec.name);
		ui_app_reload(app);
		break;
	case UI_ACT_INSPECT:
		inspect(app, s);
		break;
	default:
		break;
	}
}

/* ---- create ---- */

struct create_arg {
	struct sb_sandbox_spec spec;
	char *strings[8];
	struct sb_sandbox_mount *mounts;
	char done_msg[128];
};

static void create_free(void *p)
{
	struct create_arg *c = p;

	if (!c)
		return;
	for (size_t i = 0; i < sizeof(c->strings) / sizeof(c->strings[0]); i++)
		free(c->strings[i]);
	for (size_t i = 0; i < c->spec.n_mounts; i++) {
		free(c->mounts[i].host);
		free(c->mounts[i].path);
	}
	free(c->mounts);
	free(c);
}

static int job_create(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	(void)ctx;
	return sb_sandbox_create(NULL, root, &((struct create_arg *)arg)->spec, err);
}

static void create_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct create_arg *c = arg;

	if (rc < 0) {
		ui_app_message(app, 1, "%s", message);
		ui_event_add(app, 1, "%s: %s", c->spec.name, message);
	} else {
		ui_app_message(app, 0, "%s", c->done_msg);
	}
	ui_app_reload(app);
}

void ui_action_create(struct ui_app *app, const struct sb_sandbox_spec *spec)
{
	struct create_arg *c = calloc(1, sizeof(*c));
	char label[128];

	if (!c)
		return;
	c->spec = *spec;
	c->spec.name = c->strings[0] = strdup(spec->name);
	c->spec.image = c->strings[1] = spec->image ? strdup(spec->image) : NULL;
	c->spec.owner = c->strings[2] = spec->owner ? strdup(spec->owner) : NULL;
	c->spec.labels = NULL;
	c->spec.n_labels = 0;
	c->mounts = spec->n_mounts ? calloc(spec->n_mounts, sizeof(*c->mounts)) : NULL;
	for (size_t i = 0; i < spec->n_mounts && c->mounts; i++) {
		c->mounts[i].host = strdup(spec->mounts[i].host);
		c->mounts[i].path = strdup(spec->mounts[i].path);
		c->mounts[i].mode = spec->mounts[i].mode;
	}
	c->spec.mounts = c->mounts;
	c->spec.n_mounts = c->mounts ? spec->n_mounts : 0;
	snprintf(c->done_msg, sizeof(c->done_msg), _("created %s"), spec->name);
	snprintf(label, sizeof(label), _("creating %s"), spec->name);
	ui_job_start(app, label, job_create, c, create_done, create_free);
}

/* ---- the reaper, while the workbench is open ---- */

static int job_reap(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct sb_reap_item *items = NULL;
	size_t n = 0;
	char idle[32];
	int rc;

	(void)arg;
	if ((rc = sb_sandbox_reap(&items, &n, root, 0, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		sb_units_format_duration(idle, sizeof(idle), items[i].idle_seconds);
		if (items[i].rc < 0)
			ui_job_event(ctx, 1, _("%s: idle %s, expiry (%s) failed: %s"), items[i].name, idle,
				     sb_expiry_action_name(items[i].action), items[i].message);
		else
			ui_job_event(ctx, 0, _("%s: idle %s, expired by the reaper (%s)"), items[i].name, idle,
				     sb_expiry_action_name(items[i].action));
	}
	free(items);
	return 0;
}

static void reap_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	if (rc < 0)
		ui_event_add(app, 1, _("reaper: %s"), message);
	ui_app_reload(app);
}

void ui_action_reap(struct ui_app *app)
{
	if (!ui_jobs_busy(app, _("reaping")))
		ui_job_start(app, _("reaping"), job_reap, NULL, reap_done, NULL);
}

/* ---- first start: the default image and a default sandbox ---- */

#define DEFAULT_SANDBOX "default"

/* each step of the recipe in the event log, as the CLI prints it */
static void recipe_step(void *user, const struct sb_build_event *ev)
{
	ui_job_event(user, 0, _("Step %zu/%zu: %s %s%s"), ev->step, ev->n_steps, ev->word, ev->args,
		     ev->cached ? _(" (cached)") : "");
}

static int job_bootstrap(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct sb_default_image_opts opts = { .base = { .kind = SB_BOOTSTRAP_AUTO, .progress = ui_job_progress(ctx) },
					      .log_fd = -1, .progress = recipe_step, .user = ctx };
	struct sb_default_image_result res;
	struct sb_sandbox_spec spec = { .name = DEFAULT_SANDBOX, .kind = SB_KIND_TEMPORARY, .network = -1 };
	int rc;

	(void)arg;
	if ((rc = sb_build_default_image(&res, root, &opts, err)) < 0)
		return rc;
	if (res.base.fallback_reason[0])
		ui_job_event(ctx, 0, _("busybox instead of Debian: %s"), res.base.fallback_reason);
	ui_job_event(ctx, 0, _("default image ready: %s (%s, from %s)"), res.image.ref,
		     res.base.built == SB_BOOTSTRAP_DEBIAN ? _("Debian with python3") : _("busybox"), res.recipe);
	/* by its reference (the record shows it, and pins the digest it
	 * resolves to: the one just built) */
	spec.image = res.image.ref;
	rc = sb_sandbox_create(NULL, root, &spec, err);
	sb_default_image_result_clear(&res);
	return rc;
}

static void bootstrap_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	if (rc < 0) {
		ui_app_message(app, 1, _("first start: %s"), message);
		ui_event_add(app, 1, _("first start: %s"), message);
	} else {
		ui_app_message(app, 0, _("ready: sandbox '%s' is running; Enter attaches a shell"), DEFAULT_SANDBOX);
	}
	ui_images_reload(app);
	ui_app_reload(app);
}

void ui_action_bootstrap(struct ui_app *app)
{
	ui_event_add(app, 0, _("first start on an empty root: building the default image, then sandbox '%s'"),
		     DEFAULT_SANDBOX);
	ui_job_start(app, _("preparing the default image"), job_bootstrap, NULL, bootstrap_done, NULL);
}

/* ---- gc: its dry run first, in a confirmation, then the real one ---- */

static int job_gc(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	unsigned flags = arg ? SB_GC_DRY_RUN : 0;
	struct sb_gc_item *items;
	char **stale = NULL;
	size_t n, n_stale = 0;
	int rc;

	if ((rc = sb_gc(&items, &n, root, flags, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (items[i].rc < 0)
			ui_job_event(ctx, 1, "gc: %s %s: %s", items[i].kind, items[i].name, items[i].message);
		else if (!arg)
			ui_job_event(ctx, 0, "gc: %s %s: %s", items[i].kind, items[i].name, _(items[i].action));
		ui_job_result(ctx, "  %-9s %s: %s", items[i].kind, items[i].name, _(items[i].action));
	}
	free(items);
	sb_session_gc(&stale, &n_stale, root, (flags & SB_GC_DRY_RUN) != 0, NULL);
	for (size_t i = 0; i < n_stale; i++)
		ui_job_result(ctx, "  %-9s %s: %s", "session", stale[i], _("cleaned the session of a dead holder"));
	sb_session_names_free(stale, n_stale);
	return 0;
}

static void gc_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	if (rc < 0)
		ui_app_message(app, 1, _("gc: %s"), message);
	else
		ui_app_message(app, 0, "%s", message[0] ? _("gc: done (see the events)") : _("gc: nothing to reconcile"));
	ui_app_reload(app);
}

static void gc_now(struct ui_app *app, const char *unused)
{
	static const char *const args[] = { "gc", NULL };

	(void)unused;
	ui_cmdlog_add(app, args);
	ui_job_start(app, _("gc"), job_gc, NULL, gc_done, NULL);
}

static void gc_planned(struct ui_app *app, int rc, const char *message, void *arg)
{
	static char text[8192];

	(void)arg;
	if (rc < 0) {
		ui_app_message(app, 1, _("gc --dry-run: %s"), message);
	} else if (!message[0]) {
		ui_app_message(app, 0, "%s", _("gc: nothing to reconcile"));
	} else {
		snprintf(text, sizeof(text), "%s\n%s", _("gc would do this (its dry run):"), message);
		ui_confirm_open(app, _("Reconcile (gc)?"), text, _("run gc"), gc_now, "");
	}
}

void ui_action_gc_ask(struct ui_app *app)
{
	static const char *const args[] = { "gc", "--dry-run", NULL };
	static int dry = 1;   /* any non-NULL arg: the dry run */

	if (ui_jobs_busy(app, _("gc")))
		return;
	ui_cmdlog_add(app, args);
	ui_job_start(app, _("gc --dry-run"), job_gc, &dry, gc_planned, NULL);
}
