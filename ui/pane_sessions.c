/* The Sessions pane: the agent sessions of the sandbox selected in the
 * Sandboxes pane (id, state, controller, last activity), from the session
 * library's listing only (one directory of the selected sandbox, re-listed
 * at most once a second while the pane or the sandbox's details are drawn).
 * Enter mirrors one (session_view.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "query.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "base/units.h"
#include "session/session.h"
#include "ui.h"

#define RELIST_MS 1000          /* sessions change without a change counter: re-list this often while drawn */

struct sessions {
	char name[SB_SANDBOX_NAME_MAX + 1];   /* whose sessions these are */
	struct sb_session_info *list;
	size_t n;
	size_t *shown;                        /* the rows of the pane: indexes that pass its query */
	size_t n_shown;
	long long listed_at;                  /* mono ms */
	char error[1024];                     /* a struct sb_error's message */
};

static struct sessions *state(struct ui_app *app)
{
	if (!app->sessions)
		app->sessions = calloc(1, sizeof(struct sessions));
	return app->sessions;
}

void ui_sessions_free(struct ui_app *app)
{
	struct sessions *s = app->sessions;

	if (!s)
		return;
	sb_session_list_free(s->list, s->n);
	free(s->shown);
	free(s);
	app->sessions = NULL;
}

static long long last_activity(const struct sb_session_info *i)
{
	return i->last_input > i->last_output ? i->last_input : i->last_output;
}

/* The query's view of a session (query.h): its id, state and controller;
 * idle is the seconds since its last input or output. */
static size_t values(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct sb_session_info *i = row;
	int running = i->state == SB_SESSION_RUNNING;
	size_t n = 0;

	if ((!field || !strcmp(field, "id")) && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", i->id);
	if ((!field || !strcmp(field, "state")) && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", running ? "running" : "exited");
	if ((!field || !strcmp(field, "control")) && running && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", i->controller);
	if (field && !strcmp(field, "idle") && last_activity(i) > 0 && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%lld", (sb_clock_now_ms() - last_activity(i)) / 1000);
	return n;
}

static const char *const field_names[] = { "id", "state", "control", "idle", NULL };
static const char *const duration_names[] = { "idle", NULL };
static const struct ui_query_fields fields = { field_names, duration_names, values };

static void refilter(struct ui_app *app)
{
	struct sessions *s = app->sessions;
	size_t *shown;

	if (!s)
		return;
	/* out of memory: no rows rather than rows of the list before */
	if (!(shown = realloc(s->shown, sizeof(*shown) * (s->n ? s->n : 1)))) {
		s->n_shown = 0;
		return;
	}
	s->shown = shown;
	s->n_shown = 0;
	for (size_t i = 0; i < s->n; i++)
		if (ui_filter_match(app, UI_PANE_SESSIONS, &s->list[i]))
			shown[s->n_shown++] = i;
	app->dirty = 1;
}

/* The session of a row of the pane, NULL if none. */
static const struct sb_session_info *row_session(struct sessions *s, size_t row)
{
	return s && row < s->n_shown ? &s->list[s->shown[row]] : NULL;
}

static void relist(struct ui_app *app, struct sessions *s, const char *name)
{
	struct sb_session_info *list = NULL;
	size_t n = 0;
	struct sb_error err;

	s->error[0] = '\0';
	if (sb_session_list(&list, &n, app->root, name, &err) < 0) {
		snprintf(s->error, sizeof(s->error), "%s", err.msg);
		list = NULL;
		n = 0;
	}
	if (strcmp(s->name, name) != 0)
		app->views[UI_PANE_SESSIONS].selected = app->views[UI_PANE_SESSIONS].top = 0;
	sb_session_list_free(s->list, s->n);
	s->list = list;
	s->n = n;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->listed_at = sb_clock_monotonic_ms();
	refilter(app);
}

void ui_sessions_refresh(struct ui_app *app, int force)
{
	struct sb_sandbox_info *sbx = ui_app_selected_sandbox(app);
	struct sessions *s = state(app);

	if (!s)
		return;
	if (!sbx) {
		sb_session_list_free(s->list, s->n);
		free(s->shown);
		*s = (struct sessions){ 0 };
		return;
	}
	if (force || strcmp(s->name, sbx->rec.name) != 0 || sb_clock_monotonic_ms() - s->listed_at >= RELIST_MS)
		relist(app, s, sbx->rec.name);
}

int ui_sessions_summary(struct ui_app *app, const char *name, char *buf, size_t size)
{
	struct sessions *s;
	size_t running = 0;

	ui_sessions_refresh(app, 0);
	if (!(s = app->sessions) || strcmp(s->name, name) != 0)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		running += s->list[i].state == SB_SESSION_RUNNING;
	snprintf(buf, size, _("%zu, %zu running"), s->n, running);
	return 1;
}

static const struct sb_session_info *selected(struct ui_app *app)
{
	return row_session(app->sessions, app->views[UI_PANE_SESSIONS].selected);
}

static size_t rows(struct ui_app *app)
{
	struct sessions *s = app->sessions;

	return s ? s->n_shown : 0;
}

/* "12s ago", "-" when never */
static void ago(char *buf, size_t size, long long ms)
{
	char d[32];

	if (ms <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	long long secs = (sb_clock_now_ms() - ms) / 1000;
	sb_units_format_duration(d, sizeof(d), secs < 0 ? 0 : secs);
	snprintf(buf, size, _("%s ago"), d);
}

static void draw(struct ui_app *app, WINDOW *w, int focused)
{
	static const struct {
		const char *header;
		int width;
	} cols[] = { { N_("ID"), 16 }, { N_("STATE"), 9 }, { N_("CONTROL"), 9 }, { N_("LAST ACTIVITY"), 14 },
		     { N_("INPUT"), 14 }, { N_("WATCHERS"), 9 }, { N_("OUTPUT"), 0 } };
	struct ui_pane_view *v = &app->views[UI_PANE_SESSIONS];
	struct sessions *s;
	int h = getmaxy(w) - 2, width = getmaxx(w), x = 0;
	char buf[256];

	ui_sessions_refresh(app, 0);
	s = app->sessions;
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		int cw = cols[c].width ? cols[c].width : width - x;
		ui_draw_text(w, 1, x, cw, _(cols[c].header), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
		x += cw + 1;
	}
	if (!s || !s->name[0] || s->n_shown == 0) {
		const char *msg = !s || !s->name[0] ? _("no sandbox selected (1: Sandboxes)")
				  : s->error[0] ? s->error
				  : s->n ? _("no session matches the filter (Esc on '/' clears it)") : NULL;
		if (!msg) {
			snprintf(buf, sizeof(buf), _("no sessions in %s: 'sandbench session start %s' starts one"), s->name,
				 s->name);
			msg = buf;
		}
		ui_draw_put(w, 3, 2, width - 4, msg, ui_theme_attr(s && s->error[0] ? UI_ROLE_ERROR : UI_ROLE_DIM));
		return;
	}
	ui_app_clamp_view(app, UI_PANE_SESSIONS, s->n_shown, h);
	for (int r = 0; r < h && v->top + (size_t)r < s->n_shown; r++) {
		const struct sb_session_info *i = row_session(s, v->top + (size_t)r);
		int sel = v->top + (size_t)r == v->selected, running = i->state == SB_SESSION_RUNNING;
		attr_t base = sel ? ui_theme_attr(focused ? UI_ROLE_SELECTED : UI_ROLE_SELECTED_DIM) : A_NORMAL;
		char act[32], in[32], watchers[16], out[32];
		const char *cells[] = { i->id, running ? _("running") : _("exited"), running ? i->controller : "-",
					act, in, watchers, out };
		ago(act, sizeof(act), last_activity(i));
		ago(in, sizeof(in), i->last_input);
		snprintf(watchers, sizeof(watchers), "%d", i->watchers);
		sb_units_format_size(out, sizeof(out), i->offset, SB_UNITS_COMPACT);
		x = 0;
		ui_draw_text(w, 2 + r, 0, width, "", base, UI_LEFT);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			int cw = cols[c].width ? cols[c].width : width - x;
			attr_t a = base;
			if (!sel && c == 1)
				a = ui_theme_attr(running ? UI_ROLE_RUNNING : UI_ROLE_STOPPED);
			else if (!sel && c == 2 && !strcmp(i->controller, "human"))
				a = ui_theme_attr(UI_ROLE_WARN);
			ui_draw_text(w, 2 + r, x, cw, cells[c], a, UI_LEFT);
			x += cw + 1;
		}
	}
}

static void details(struct ui_app *app, size_t row, void (*line)(void *, const char *, const char *, int), void *ctx)
{
	struct sessions *s = app->sessions;
	const struct sb_session_info *i;
	char buf[128];

	if (!(i = row_session(s, row)))
		return;
	line(ctx, _("Sandbox"), i->sandbox, 0);
	line(ctx, _("Session"), i->id, 0);
	line(ctx, _("State"), i->state == SB_SESSION_RUNNING ? _("running") : _("exited"), 0);
	if (i->state != SB_SESSION_RUNNING)
		line(ctx, _("Reason"), i->reason ? i->reason : "", 0);
	if (i->pid)
		snprintf(buf, sizeof(buf), "%d", (int)i->pid);
	line(ctx, _("Holder"), i->pid ? buf : "-", 0);
	line(ctx, _("Controller"), i->controller, !strcmp(i->controller, "human"));
	snprintf(buf, sizeof(buf), "%d", i->watchers);
	line(ctx, _("Watchers"), buf, 0);
	snprintf(buf, sizeof(buf), "%ux%u", i->rows, i->cols);
	line(ctx, _("Terminal"), buf, 0);
	snprintf(buf, sizeof(buf), _("%llu bytes (the log has from %llu)"), i->offset, i->first);
	line(ctx, _("Output"), buf, 0);
	ago(buf, sizeof(buf), i->last_input);
	line(ctx, _("Last input"), buf, 0);
	ago(buf, sizeof(buf), i->last_output);
	line(ctx, _("Last output"), buf, 0);
}

static int action(struct ui_app *app, enum ui_action a)
{
	const struct sb_session_info *i = selected(app);

	switch (a) {
	case UI_ACT_SHELL:
		if (!i)
			ui_app_message(app, 1, _("no session selected"));
		else if (i->state != SB_SESSION_RUNNING)
			ui_app_message(app, 1, _("session %s of %s has exited (%s)"), i->id, i->sandbox,
				       i->reason ? i->reason : "");
		else
			ui_mirror_open(app, i->sandbox, i->id);
		return 1;
	case UI_ACT_DIFF:
	case UI_ACT_COPY_OUT:
		return ui_pane_sandboxes.action(app, a);
	default:
		return 0;
	}
}

static const enum ui_action hints[] = { UI_ACT_SHELL, UI_ACT_PANE_TIMELINE, UI_ACT_DIFF, UI_ACT_PANE_SANDBOXES,
					UI_ACT_NONE };

const struct ui_pane ui_pane_sessions = {
	.title = N_("Sessions"),
	.rows = rows,
	.draw = draw,
	.details = details,
	.action = action,
	.hints = hints,
	.fields = &fields,
	.refilter = refilter,
};
