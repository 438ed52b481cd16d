/* The command line (':'): one table of commands with their aliases; a
 * history (Up/Down) and Tab completion of command names, then of sandbox
 * names. Commands on sandboxes take globs (:rm job-*): the matches become the
 * marks, and the bulk action (marks.c) asks once for all of them. */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "sandbox/doctor.h"
#include "theme.h"
#include "ui.h"

#define ARGS_MAX 16

struct command {
	const char *name;
	const char *aliases[4];      /* NULL-terminated */
	const char *usage;
	const char *help;            /* N_() */
	enum ui_action guard;        /* refused by --readonly as this action is; UI_ACT_NONE: never */
	void (*run)(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest);
	enum ui_action action;       /* for the commands on sandboxes */
};

struct cmdline {
	char text[256];
	char hint[256];              /* the candidates of the last Tab, shown after the line */
};

/* The sandboxes matching any of the globs become the marks. */
static void on_sandboxes(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	size_t hits = 0;

	(void)rest;
	if (argc < 2) {
		ui_app_message(app, 1, _(":%s needs sandbox names or globs (e.g. :%s job-*)"), cmd->name, cmd->name);
		return;
	}
	ui_marks_action(app, UI_ACT_CLEAR_MARKS);
	for (size_t i = 0; i < app->n_sbx; i++) {
		for (int a = 1; a < argc; a++) {
			if (fnmatch(argv[a], app->sbx[i].rec.name, 0) == 0) {
				ui_marks_set(app, app->sbx[i].rec.name, 1);
				hits++;
				break;
			}
		}
	}
	app->pane = UI_PANE_SANDBOXES;
	if (!hits)
		ui_app_message(app, 1, _("no sandbox matches '%s'"), rest);
	else
		ui_marks_bulk(app, cmd->action);
}

static void on_ls(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv;
	app->pane = UI_PANE_SANDBOXES;
	if (ui_filter_set(app, UI_PANE_SANDBOXES, rest) == 0)
		ui_history_add(&app->filter_hist, rest);
}

static void on_pane(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)argc, (void)argv, (void)rest;
	app->pane = cmd->action == UI_ACT_PANE_IMAGES ? UI_PANE_IMAGES : UI_PANE_SANDBOXES;
}

static void on_gc(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_action_gc_ask(app);
}

static void on_cleanup(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_cleanup_open(app);
}

static void on_exposure(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_exposure_open(app);
}

static void on_reap(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	static const char *const args[] = { "reap", NULL };

	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_cmdlog_add(app, args);
	ui_action_reap(app);
	ui_app_message(app, 0, "%s", _("reaping: what expired shows in the events"));
}

static int job_doctor(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	static const char *const status[] = { "ok", "warn", "FAIL" };
	struct sb_doctor_report rep;
	int rc;

	(void)arg;
	if ((rc = sb_doctor_run(&rep, root, 0, err)) < 0)
		return rc;
	for (int i = 0; i < rep.count; i++) {
		ui_job_result(ctx, "%-5s %-10s %s", status[rep.checks[i].status], rep.checks[i].name, rep.checks[i].detail);
		if (rep.checks[i].fix)
			ui_job_result(ctx, "      %-10s %s %s", "", _("fix:"), _(rep.checks[i].fix));
	}
	return 0;
}

static void doctor_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	if (rc < 0)
		ui_app_message(app, 1, _("doctor: %s"), message);
	else
		ui_viewer_open(app, _("doctor"), message);
}

static void on_doctor(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	static const char *const args[] = { "doctor", "--quick", NULL };

	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_cmdlog_add(app, args);
	ui_job_start(app, _("doctor"), job_doctor, NULL, doctor_done, NULL);
}

static void on_log(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_cmdlog_open(app);
}

static void on_help(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	ui_help_open(app);
}

static void on_quit(struct ui_app *app, const struct command *cmd, int argc, char **argv, const char *rest)
{
	(void)cmd, (void)argc, (void)argv, (void)rest;
	app->quit = 1;
}

static const struct command commands[] = {
	{ "rm", { "remove", "del", "delete", NULL }, "GLOB...", N_("remove the matching sandboxes (asks once)"),
	  UI_ACT_REMOVE, on_sandboxes, UI_ACT_REMOVE },
	{ "stop", { NULL }, "GLOB...", N_("stop the matching sandboxes"), UI_ACT_STOP, on_sandboxes, UI_ACT_STOP },
	{ "restore", { "start", NULL }, "GLOB...", N_("restore the matching sandboxes"), UI_ACT_RESTORE, on_sandboxes,
	  UI_ACT_RESTORE },
	{ "expire", { NULL }, "GLOB...", N_("expire the matching sandboxes now"), UI_ACT_EXPIRE, on_sandboxes,
	  UI_ACT_EXPIRE },
	{ "extend", { NULL }, "GLOB...", N_("extend their idle timeout by an hour"), UI_ACT_EXTEND, on_sandboxes,
	  UI_ACT_EXTEND },
	{ "touch", { NULL }, "GLOB...", N_("count as activity now"), UI_ACT_TOUCH, on_sandboxes, UI_ACT_TOUCH },
	{ "ls", { "list", "filter", "f", NULL }, "QUERY", N_("the sandboxes, filtered by a query (:ls owner:mcp)"),
	  UI_ACT_NONE, on_ls, UI_ACT_NONE },
	{ "sandboxes", { "sb", NULL }, "", N_("show the Sandboxes pane"), UI_ACT_NONE, on_pane, UI_ACT_PANE_SANDBOXES },
	{ "images", { "img", "image", NULL }, "", N_("show the Images pane"), UI_ACT_NONE, on_pane, UI_ACT_PANE_IMAGES },
	{ "gc", { "reconcile", NULL }, "", N_("reconcile (shows what it would do first)"), UI_ACT_GC, on_gc, UI_ACT_NONE },
	{ "cleanup", { "plan", "stale", NULL }, "", N_("the cleanup planner: everything stale, what it frees"), UI_ACT_NONE,
	  on_cleanup, UI_ACT_NONE },
	{ "exposure", { "exposed", "access", NULL }, "", N_("the exposure view: network, ports, host folders"),
	  UI_ACT_NONE, on_exposure, UI_ACT_NONE },
	{ "reap", { NULL }, "", N_("expire idle temporary sandboxes now"), UI_ACT_EXPIRE, on_reap, UI_ACT_NONE },
	{ "doctor", { "check", NULL }, "", N_("check the prerequisites"), UI_ACT_NONE, on_doctor, UI_ACT_NONE },
	{ "log", { "commands", "history", NULL }, "", N_("the commands behind the actions"), UI_ACT_NONE, on_log,
	  UI_ACT_NONE },
	{ "help", { "h", "?", NULL }, "", N_("the keys, commands and queries"), UI_ACT_NONE, on_help, UI_ACT_NONE },
	{ "q", { "quit", "exit", "qa", NULL }, "", N_("quit"), UI_ACT_NONE, on_quit, UI_ACT_NONE },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *lookup(const char *word)
{
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(commands[i].name, word))
			return &commands[i];
		for (size_t a = 0; commands[i].aliases[a]; a++)
			if (!strcmp(commands[i].aliases[a], word))
				return &commands[i];
	}
	return NULL;
}

void ui_command_run(struct ui_app *app, const char *line)
{
	char copy[256], *argv[ARGS_MAX + 1], *save = NULL;
	const char *rest = line + strspn(line, " ");
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *tok = strtok_r(copy, " \t", &save); tok && argc < ARGS_MAX; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (!argc)
		return;
	const struct command *cmd = lookup(argv[0]);
	if (!cmd) {
		ui_app_message(app, 1, _("unknown command ':%s' (:help lists them; Tab completes)"), argv[0]);
		return;
	}
	if (cmd->guard != UI_ACT_NONE && !ui_app_may_change(app, cmd->guard))
		return;
	rest += strcspn(rest, " ");
	rest += strspn(rest, " ");
	cmd->run(app, cmd, argc, argv, rest);
	app->dirty = 1;
}

void ui_command_help(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_COMMANDS && len < size; i++) {
		char names[96];
		size_t n = (size_t)snprintf(names, sizeof(names), ":%s", commands[i].name);
		for (size_t a = 0; commands[i].aliases[a] && n < sizeof(names); a++)
			n += (size_t)snprintf(names + n, sizeof(names) - n, " :%s", commands[i].aliases[a]);
		len += (size_t)snprintf(buf + len, size - len, "  %-24s %-8s %s\n", names, commands[i].usage,
					_(commands[i].help));
	}
}

/* ---- completion ---- */

/* Extends word (in buf, at its end) by what every candidate starting with it
 * shares; lists them in the status line when there are several. */
static void complete(struct cmdline *c, const char *word, const char *const *cands, size_t n)
{
	size_t wlen = strlen(word), common = 0, hits = 0, shown = 0;
	const char *first = NULL;
	char list[256] = "";

	for (size_t i = 0; i < n; i++) {
		if (strncmp(cands[i], word, wlen))
			continue;
		if (!first) {
			first = cands[i];
			common = strlen(first);
		}
		while (common > wlen && strncmp(first, cands[i], common))
			common--;
		hits++;
		if (shown < sizeof(list) - 1)
			shown += (size_t)snprintf(list + shown, sizeof(list) - shown, "%s ", cands[i]);
	}
	if (!first) {
		snprintf(c->hint, sizeof(c->hint), _("nothing starts with '%s'"), word);
		return;
	}
	size_t blen = strlen(c->text);
	snprintf(c->text + blen, sizeof(c->text) - blen, "%.*s%s", (int)(common - wlen), first + wlen,
		 hits == 1 ? " " : "");
	snprintf(c->hint, sizeof(c->hint), "%s", hits > 1 ? list : "");
}

static void tab(struct ui_app *app, struct cmdline *c)
{
	const char *word = strrchr(c->text, ' ');
	const char **cands;
	size_t n = 0;

	word = word ? word + 1 : c->text;
	if (!(cands = calloc(N_COMMANDS + app->n_sbx + 1, sizeof(*cands))))
		return;
	if (word == c->text) {
		/* the names only: an alias would make "ima" stop at "image" */
		for (size_t i = 0; i < N_COMMANDS; i++)
			cands[n++] = commands[i].name;
	} else {
		for (size_t i = 0; i < app->n_sbx; i++)
			cands[n++] = app->sbx[i].rec.name;
	}
	char w[256];
	snprintf(w, sizeof(w), "%s", word);
	complete(c, w, cands, n);
	free(cands);
}

/* ---- the line ---- */

void ui_command_open(struct ui_app *app)
{
	struct cmdline *c = calloc(1, sizeof(*c));

	if (!c)
		return;
	app->cmd_hist.pos = app->cmd_hist.n;
	app->overlay_state = c;
	app->overlay = UI_OV_COMMAND;
	app->dirty = 1;
}

void ui_command_key(struct ui_app *app, int key)
{
	struct cmdline *c = app->overlay_state;
	char line[256];

	app->dirty = 1;
	if (key == 27) {
		ui_overlay_close(app);
	} else if (key == '\n' || key == '\r' || key == UI_KEY_FN + KEY_ENTER) {
		snprintf(line, sizeof(line), "%s", c->text);
		ui_overlay_close(app);
		ui_history_add(&app->cmd_hist, line);
		ui_command_run(app, line);
	} else if (key == '\t') {
		tab(app, c);
		return;
	} else if (!ui_history_key(&app->cmd_hist, key, c->text, sizeof(c->text))) {
		ui_line_edit(c->text, sizeof(c->text), key);
	}
	if (app->overlay == UI_OV_COMMAND)
		c->hint[0] = '\0';
}

void ui_command_draw(struct ui_app *app, WINDOW *w)
{
	struct cmdline *c = app->overlay_state;
	char buf[300];
	int x;

	snprintf(buf, sizeof(buf), ":%s", c->text);
	ui_draw_text(w, 0, 0, getmaxx(w), buf, ui_theme_attr(UI_ROLE_KEY), UI_LEFT);
	x = ui_text_width(buf);
	if (c->hint[0])
		ui_draw_put(w, 0, x + 3, getmaxx(w) - x - 3, c->hint, ui_theme_attr(UI_ROLE_DIM));
	if (x < getmaxx(w)) {
		wmove(w, 0, x);
		curs_set(1);
	}
}
