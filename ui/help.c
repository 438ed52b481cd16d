/* The help overlay, generated from the key table, and the scrollable text
 * viewer it shares with "inspect" (the record as JSON). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

struct viewer {
	char title[128];
	char **lines;
	size_t n, top;
};

void ui_viewer_open(struct ui_app *app, const char *title, const char *text)
{
	struct viewer *v = calloc(1, sizeof(*v));
	const char *p = text;

	if (!v)
		return;
	ui_viewer_close(app);
	snprintf(v->title, sizeof(v->title), "%s", title);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char **l = realloc(v->lines, sizeof(*l) * (v->n + 1));
		if (!l)
			break;
		v->lines = l;
		v->lines[v->n++] = strndup(p, len);
		p += len + (nl ? 1 : 0);
	}
	app->overlay_state = v;
	app->overlay = UI_OV_VIEWER;
	app->dirty = 1;
}

void ui_viewer_close(struct ui_app *app)
{
	struct viewer *v = app->overlay_state;

	if (app->overlay != UI_OV_VIEWER || !v)
		return;
	for (size_t i = 0; i < v->n; i++)
		free(v->lines[i]);
	free(v->lines);
	ui_overlay_close(app);   /* frees v itself */
}

void ui_viewer_draw(struct ui_app *app)
{
	struct viewer *v = app->overlay_state;
	struct ui_rect r = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 8);
	WINDOW *w = app->w_overlay;
	int body = r.h - 3;
	char foot[128];

	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	ui_draw_box(w, v->title);
	for (int i = 0; i < body && v->top + (size_t)i < v->n; i++)
		ui_draw_put(w, 1 + i, 2, r.w - 4, v->lines[v->top + (size_t)i], ui_theme_attr(UI_ROLE_DIALOG));
	snprintf(foot, sizeof(foot), _(" %zu/%zu  Up/Down PgUp/PgDn scroll, Esc or q closes "),
		 v->n ? v->top + 1 : 0, v->n);
	ui_draw_put(w, r.h - 1, 2, r.w - 4, foot, ui_theme_attr(UI_ROLE_DIALOG));
}

void ui_viewer_key(struct ui_app *app, int key)
{
	struct viewer *v = app->overlay_state;
	int page = app->layout.rows - 6;
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);
	size_t max = v->n > (size_t)page ? v->n - (size_t)page : 0;

	if (key == 27 || a == UI_ACT_QUIT || a == UI_ACT_HELP || a == UI_ACT_INSPECT) {
		ui_viewer_close(app);
		return;
	}
	if (a == UI_ACT_DOWN)
		v->top = v->top < max ? v->top + 1 : max;
	else if (a == UI_ACT_UP)
		v->top = v->top ? v->top - 1 : 0;
	else if (a == UI_ACT_PAGE_DOWN || key == ' ')
		v->top = v->top + (size_t)page < max ? v->top + (size_t)page : max;
	else if (a == UI_ACT_PAGE_UP)
		v->top = v->top > (size_t)page ? v->top - (size_t)page : 0;
	else if (a == UI_ACT_TOP)
		v->top = 0;
	else if (a == UI_ACT_BOTTOM)
		v->top = max;
	app->dirty = 1;
}

static void append(char **buf, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *b = realloc(*buf, *len + n + 1);

	if (!b)
		return;
	memcpy(b + *len, s, n + 1);
	*buf = b;
	*len += n;
}

void ui_help_open(struct ui_app *app)
{
	static const struct {
		enum ui_key_context ctx;
		const char *heading;
	} sections[] = {
		{ UI_CTX_PANES, N_("In the panes") },
		{ UI_CTX_SHELL, N_("In an attached shell (every other key goes to the shell)") },
		{ UI_CTX_WATCH, N_("Watching a session (read-only: nothing you type reaches it)") },
		{ UI_CTX_CONTROL, N_("Controlling a session (every other key goes to it; the agent's input is refused)") },
	};
	char *text = NULL, line[512], keys[64];
	size_t len = 0;

	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		snprintf(line, sizeof(line), "%s%s\n", s ? "\n" : "", _(sections[s].heading));
		append(&text, &len, line);
		for (int a = 1; a < UI_ACT_COUNT; a++) {
			const struct ui_action_info *info = ui_action_info(a);
			if (!info || info->context != sections[s].ctx)
				continue;
			ui_keymap_describe(&app->keys, a, keys, sizeof(keys));
			snprintf(line, sizeof(line), "  %-16s %-14s %s%s\n", keys[0] ? keys : _("(unbound)"), info->name,
				 _(info->help), info->changes && app->opts.readonly ? _(" [refused: read-only]") : "");
			append(&text, &len, line);
		}
	}
	static char cmds[4096];
	ui_command_help(cmds, sizeof(cmds));
	append(&text, &len, "\n");
	append(&text, &len, _("Commands (after ':'; Tab completes, Up/Down: history)\n"));
	append(&text, &len, cmds);
	append(&text, &len, "\n");
	append(&text, &len, _("Filter queries (after '/' or :ls; terms separated by spaces must all match)\n"
			      "  text          in the name, owner, state or a label\n"
			      "  /regex/       an extended regular expression, any case\n"
			      "  field:glob    name state kind owner label net image: owner:plugin:*\n"
			      "                label:team=x  net:on  image:python*  state:stopped\n"
			      "  idle>2h       above (>) or below (<): idle, expires (2h), disk (100M)\n"
			      "  !term         inverts a term: !state:running\n"
			      "  A query that does not parse is refused and the one in force stays.\n"));
	append(&text, &len, _("  In the Images pane the fields are name, digest and user (a sandbox using\n"
			      "  it); in the Sessions pane id, state, control and idle (idle>10m); the\n"
			      "  Mounts pane follows the Sandboxes filter; 5 searches on '/'.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Marks\n"
			      "  Space marks the sandbox, C-Space marks from the last mark to the cursor,\n"
			      "  * marks all the filter shows, u clears. stop, restore, pause, remove,\n"
			      "  expire, extend and touch then act on all marked ones, after one\n"
			      "  confirmation.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Cleanup planner and exposure\n"
			      "  The planner (:cleanup) lists everything stale: expired temporaries,\n"
			      "  broken sandboxes, stopped ones without a checkpoint, those of gone\n"
			      "  owners, unused images, what prune and gc would do; each with the bytes\n"
			      "  it frees and what it keeps. Space marks, d cleans up the marked after\n"
			      "  one confirmation, each row then shows its result; o sorts (as planned,\n"
			      "  by bytes freed, by reason), / filters (name reason action kind). The\n"
			      "  exposure view\n"
			      "  (:exposure) marks with '!' what widens access (network on, open egress,\n"
			      "  public ports, read-write or sensitive host folders); o sorts, / filters\n"
			      "  (name owner state net warn mount), w groups by owner.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("What counts as activity\n"
			      "  A temporary sandbox expires when it has been idle for its idle timeout:\n"
			      "  it is then removed, stopped or paused, as its expiry action says\n"
			      "  (pause,stop=D: paused, then stopped after D paused). z pauses and\n"
			      "  resumes by hand; a command, a session's input or a shell resumes a\n"
			      "  paused sandbox by itself. Activity is a command run in it (sandbench\n"
			      "  exec), typing in an attached shell, and an explicit touch (t, or\n"
			      "  sandbench touch). Output alone is not activity.\n"
			      "  The reaper runs while the workbench is open, and from 'sandbench reap'.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Sessions, timeline, diff\n"
			      "  4 lists the agent sessions of the sandbox selected in 1; Enter mirrors\n"
			      "  one: its recent output from the log, each line the agent sent shown in\n"
			      "  bold where it was typed, then live. Watching is not activity. Taking\n"
			      "  over makes the agent's 'session send' fail ('controlled by a human',\n"
			      "  exit status 11) until you hand back; what you type is recorded as the\n"
			      "  human's. 5 is the timeline of the selected sandbox (F follows, / searches,\n"
			      "  Enter shows an entry's output); D shows what the sandbox changed against\n"
			      "  its image, its workspace and the exchange folder apart; C copies a file out.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Resources and processes\n"
			      "  CPU (since the sample before), MEM (in use/limit) and TASKS (the host\n"
			      "  tasks of the sandbox: the sentry's threads and the gofer, not the\n"
			      "  processes inside, which T lists) of running sandboxes come from their\n"
			      "  cgroups every 3 s; DISK (all its folder) of any sandbox is walked a few\n"
			      "  at a time, again when it changed or after 10 s (60 s if not running).\n"
			      "  The details add a graph of the last 96 s. T lists its processes (ps\n"
			      "  inside: an exec, so activity); t or K there sends TERM or KILL.\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Custom commands (keys.conf: command = KEY \"sandbench exec $NAME -- ...\")\n"));
	for (size_t i = 0; i < app->keys.n_custom; i++) {
		ui_key_name(app->keys.custom[i].key, keys, sizeof(keys));
		snprintf(line, sizeof(line), "  %-16s %.400s\n", keys, app->keys.custom[i].line);
		append(&text, &len, line);
	}
	if (!app->keys.n_custom)
		append(&text, &len, _("  none; $NAME $WORKSPACE $ID $OWNER become the selected sandbox's values\n"));
	append(&text, &len, "\n");
	append(&text, &len, _("Key bindings come from a table; ~/.config/sandbench/keys.conf overrides\n"
			      "them (see data/keys.conf for the names).\n"));
	ui_viewer_open(app, _("Help"), text ? text : "");
	free(text);
}
