/* Runs a custom command of the key table (custom.c builds its argv) on the
 * selected sandbox: our own binary with the workbench's root, never a shell;
 * its output (stdout, then stderr, up to the job's result size) in a viewer. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/i18n.h"
#include "base/proc.h"
#include "ui.h"

#define CUSTOM_TIMEOUT_MS 120000

struct custom_job {
	char **argv;            /* "sandbench" SUBCOMMAND ... */
	char title[256];
};

static void custom_free(void *p)
{
	struct custom_job *j = p;

	if (j)
		ui_custom_argv_free(j->argv);
	free(j);
}

static void lines_out(struct ui_job_ctx *ctx, char *text)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ui_job_result(ctx, "%s", line);
}

static int job_custom(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct custom_job *j = arg;
	struct sb_proc_opts o = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result r = { 0 };
	char self[PATH_MAX];
	size_t n = 0;
	ssize_t len;
	int rc;

	while (j->argv[n])
		n++;
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return sb_error_set(err, SB_ERR_IO, _("cannot find the sandbench binary"));
	self[len] = '\0';
	char **argv = calloc(n + 3, sizeof(char *));
	if (!argv)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	argv[0] = self;
	argv[1] = "--root";
	argv[2] = (char *)sb_root_path(root);
	for (size_t i = 1; i < n; i++)
		argv[i + 2] = j->argv[i];
	o.timeout_ms = CUSTOM_TIMEOUT_MS;
	if ((rc = sb_proc_run(&r, argv, &o, err)) == 0) {
		lines_out(ctx, r.out);
		lines_out(ctx, r.errout);
		ui_job_result(ctx, _("[exit status %d]"), r.status);
	}
	sb_proc_result_clear(&r);
	free(argv);
	return rc;
}

static void custom_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	/* another dialog came up meanwhile: it keeps the screen */
	if (app->overlay != UI_OV_NONE && app->overlay != UI_OV_VIEWER) {
		ui_app_message(app, rc < 0, _("'%s' ended; its output was not shown (a dialog was open)"),
			       ((struct custom_job *)arg)->title);
		return;
	}
	ui_viewer_open(app, ((struct custom_job *)arg)->title, message);
	if (rc < 0)
		ui_app_message(app, 1, "%s", message);
}

void ui_custom_run(struct ui_app *app, const struct ui_custom_cmd *c)
{
	struct sb_sandbox_info *s = ui_app_selected_sandbox(app);
	struct custom_job *j;
	char why[256];

	if (!s) {
		ui_app_message(app, 1, _("no sandbox selected"));
		return;
	}
	if (app->opts.readonly) {
		ui_app_message(app, 1, _("read-only: custom commands are refused (the workbench was started with --readonly)"));
		return;
	}
	struct ui_custom_vars vars = { s->rec.name, s->workspace, s->rec.id, s->rec.owner };
	if (!(j = calloc(1, sizeof(*j))))
		return;
	if (ui_custom_expand(&j->argv, c->line, &vars, why, sizeof(why)) < 0) {
		ui_app_message(app, 1, _("custom command: %s"), why);
		custom_free(j);
		return;
	}
	snprintf(j->title, sizeof(j->title), "[%s] %.180s", s->rec.name, c->line);
	ui_cmdlog_add(app, (const char *const *)j->argv + 1);
	if (ui_job_start(app, c->line, job_custom, j, custom_done, custom_free) < 0)
		ui_app_message(app, 1, _("cannot start '%s'"), c->line);
}
