/* The Timeline pane: what ran in the sandbox selected in the Sandboxes pane,
 * and who ran it (sandbox/timeline.h). Listed without the output copies and
 * read on from the last position when the timeline's watch descriptor (in
 * the main poll while the pane is shown) says it grew; F follows new
 * entries, '/' searches, Enter opens one entry with its output, C copies a
 * file out. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "draw.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/timeline.h"
#include "ui.h"

#define ROWS_MAX 5000           /* entries kept in the pane: the newest */
#define REREAD_MS 2000          /* without a watch descriptor, read on this often */

struct tl_row {
	long long time_ms, duration_ms, out_bytes;
	enum sb_timeline_kind kind;
	enum sb_timeline_source source;
	int exit_code;
	unsigned long long pos;
	char *text, *session, *cwd;
};

struct timeline {
	char name[SB_SANDBOX_NAME_MAX + 1];
	struct tl_row *rows;
	size_t n;
	size_t *shown;                       /* rows matching the search */
	size_t n_shown;
	unsigned long long next;
	struct sb_timeline_watch *watch;
	long long read_at;                   /* mono ms of the last read */
	int follow;
	char search[128];
	char error[1024];                     /* a struct sb_error's message */
};

static void row_clear(struct tl_row *r)
{
	free(r->text);
	free(r->session);
	free(r->cwd);
}

static void reset(struct timeline *t)
{
	for (size_t i = 0; i < t->n; i++)
		row_clear(&t->rows[i]);
	free(t->rows);
	free(t->shown);
	sb_timeline_watch_close(t->watch);
	int follow = t->follow;
	char search[sizeof(t->search)];
	snprintf(search, sizeof(search), "%s", t->search);
	*t = (struct timeline){ .follow = follow };
	snprintf(t->search, sizeof(t->search), "%s", search);
}

void ui_timeline_free(struct ui_app *app)
{
	if (!app->timeline)
		return;
	reset(app->timeline);
	free(app->timeline);
	app->timeline = NULL;
}

static int matches(const struct tl_row *r, const char *q)
{
	return !*q || (r->text && strcasestr(r->text, q)) || (r->cwd && strcasestr(r->cwd, q)) ||
	       strcasestr(sb_timeline_source_name(r->source), q) || strcasestr(sb_timeline_kind_name(r->kind), q);
}

static void rebuild(struct ui_app *app, struct timeline *t)
{
	size_t *shown = realloc(t->shown, sizeof(*shown) * (t->n ? t->n : 1));
	struct ui_pane_view *v = &app->views[UI_PANE_TIMELINE];

	if (!shown) {
		t->n_shown = 0; /* no rows rather than rows of the list before */
		return;
	}
	t->shown = shown;
	t->n_shown = 0;
	for (size_t i = 0; i < t->n; i++)
		if (matches(&t->rows[i], t->search))
			shown[t->n_shown++] = i;
	if (t->follow && t->n_shown)
		v->selected = t->n_shown - 1;
	app->dirty = 1;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Keeps the newest ROWS_MAX entries. */
static void append(struct timeline *t, const struct sb_timeline *tl)
{
	size_t add = tl->count, drop;
	struct tl_row *rows;

	if (t->n && t->n + add > ROWS_MAX) {
		drop = t->n + add - ROWS_MAX < t->n ? t->n + add - ROWS_MAX : t->n;
		for (size_t i = 0; i < drop; i++)
			row_clear(&t->rows[i]);
		memmove(t->rows, t->rows + drop, sizeof(*t->rows) * (t->n - drop));
		t->n -= drop;
	}
	if (!(rows = realloc(t->rows, sizeof(*rows) * (t->n + add + 1))))
		return;
	t->rows = rows;
	for (size_t i = add > ROWS_MAX ? add - ROWS_MAX : 0; i < add; i++) {
		const struct sb_timeline_entry *e = &tl->entries[i];
		t->rows[t->n++] = (struct tl_row){ .time_ms = e->time_ms, .duration_ms = e->duration_ms,
						   .out_bytes = e->out_bytes, .kind = e->kind, .source = e->source,
						   .exit_code = e->exit_code, .pos = e->pos, .text = dup_or_null(e->text),
						   .session = dup_or_null(e->session), .cwd = dup_or_null(e->cwd) };
	}
}

static void read_more(struct ui_app *app, struct timeline *t)
{
	struct sb_timeline_query q = { .from = t->next, .flags = SB_TIMELINE_NO_OUTPUT };
	struct sb_timeline *tl;
	struct sb_error err;

	if (sb_timeline_read(&tl, app->root, t->name, &q, &err) < 0) {
		snprintf(t->error, sizeof(t->error), "%s", err.msg);
		app->dirty = 1;
		return;
	}
	t->error[0] = '\0';
	t->read_at = sb_clock_monotonic_ms();
	append(t, tl);
	t->next = tl->next;
	sb_timeline_free(tl);
	rebuild(app, t);
}

/* The timeline shown is the selected sandbox's. */
static struct timeline *sync(struct ui_app *app)
{
	struct sb_sandbox_info *s = ui_app_selected_sandbox(app);
	struct timeline *t = app->timeline;
	struct sb_error err;

	if (!t && !(t = app->timeline = calloc(1, sizeof(*t))))
		return NULL;
	if (!s) {
		reset(t);
		return t;
	}
	if (strcmp(t->name, s->rec.name) == 0)
		return t;
	reset(t);
	snprintf(t->name, sizeof(t->name), "%s", s->rec.name);
	app->views[UI_PANE_TIMELINE].selected = app->views[UI_PANE_TIMELINE].top = 0;
	if (sb_timeline_watch_open(&t->watch, app->root, t->name, &err) < 0)
		t->watch = NULL;   /* no inotify: read again on a timer (ui_timeline_pollfds) */
	read_more(app, t);
	if (!t->follow && t->n_shown)
		app->views[UI_PANE_TIMELINE].selected = t->n_shown - 1;   /* the newest first in view */
	return t;
}

int ui_timeline_pollfds(struct ui_app *app, struct pollfd *pfd, int max)
{
	struct timeline *t;

	if (app->pane != UI_PANE_TIMELINE || max < 1 || !(t = sync(app)))
		return 0;
	if (!t->watch) {
		if (t->name[0] && sb_clock_monotonic_ms() - t->read_at >= REREAD_MS)
			read_more(app, t);
		return 0;
	}
	pfd[0] = (struct pollfd){ .fd = sb_timeline_watch_fd(t->watch), .events = POLLIN };
	return 1;
}

void ui_timeline_io(struct ui_app *app, const struct pollfd *pfd, int n)
{
	struct timeline *t = app->timeline;
	struct sb_error err;
	int rc;

	if (n < 1 || !pfd[0].revents || !t || !t->watch)
		return;
	rc = sb_timeline_watch_check(t->watch, &err);
	if (rc == 1)
		read_more(app, t);
	else if (rc < 0) {
		snprintf(t->error, sizeof(t->error), "%s", err.msg);
		sb_timeline_watch_close(t->watch);
		t->watch = NULL;
		app->dirty = 1;
	}
}

static size_t rows(struct ui_app *app)
{
	struct timeline *t = app->timeline;

	return t ? t->n_shown : 0;
}

static const struct tl_row *row_at(struct timeline *t, size_t i)
{
	return t && i < t->n_shown ? &t->rows[t->shown[i]] : NULL;
}

static void when(char *buf, size_t size, long long ms)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, size, "%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%lld", (long long)secs); /* out of localtime's range */
}

static void result(char *buf, size_t size, const struct tl_row *r)
{
	if (r->exit_code >= 0 && r->duration_ms >= 0)
		snprintf(buf, size, "%d %lldms", r->exit_code, r->duration_ms);
	else if (r->exit_code >= 0)
		snprintf(buf, size, "%d", r->exit_code);
	else
		snprintf(buf, size, "%s", r->session ? r->session : "");
}

static void draw(struct ui_app *app, WINDOW *w, int focused)
{
	struct timeline *t = sync(app);
	struct ui_pane_view *v = &app->views[UI_PANE_TIMELINE];
	int h = getmaxy(w) - 2, width = getmaxx(w), wt = 14, ws = 9, wk = 9, wr = 13;
	char buf[512], res[48];

	snprintf(buf, sizeof(buf), _("TIME            SOURCE    KIND      EXIT/ID       %s%s%s"), _("WHAT"),
		 t && t->follow ? _("   [following]") : "", t && t->search[0] ? _("   [search]") : "");
	ui_draw_text(w, 1, 0, width, buf, ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	if (!t || !t->name[0] || t->n_shown == 0) {
		const char *msg = !t || !t->name[0] ? _("no sandbox selected (1: Sandboxes)")
				  : t->error[0] ? t->error
				  : t->search[0] ? _("no entry matches the search ('/' and an empty line clears it)")
				  : _("nothing ran in this sandbox yet");
		ui_draw_put(w, 3, 2, width - 4, msg, ui_theme_attr(t && t->error[0] ? UI_ROLE_ERROR : UI_ROLE_DIM));
		return;
	}
	ui_app_clamp_view(app, UI_PANE_TIMELINE, t->n_shown, h);
	for (int r = 0; r < h && v->top + (size_t)r < t->n_shown; r++) {
		const struct tl_row *row = row_at(t, v->top + (size_t)r);
		int sel = v->top + (size_t)r == v->selected, x = 0;
		attr_t a = sel ? ui_theme_attr(focused ? UI_ROLE_SELECTED : UI_ROLE_SELECTED_DIM) : A_NORMAL;
		ui_draw_text(w, 2 + r, 0, width, "", a, UI_LEFT);
		when(buf, sizeof(buf), row->time_ms);
		ui_draw_text(w, 2 + r, x, wt, buf, a, UI_LEFT);
		x += wt + 2;
		ui_draw_text(w, 2 + r, x, ws, sb_timeline_source_name(row->source),
			     sel || row->source == SB_TIMELINE_AGENT ? a : ui_theme_attr(UI_ROLE_WARN), UI_LEFT);
		x += ws + 1;
		ui_draw_text(w, 2 + r, x, wk, sb_timeline_kind_name(row->kind), a, UI_LEFT);
		x += wk + 1;
		result(res, sizeof(res), row);
		ui_draw_text(w, 2 + r, x, wr, res, !sel && row->exit_code > 0 ? ui_theme_attr(UI_ROLE_ERROR) : a, UI_LEFT);
		x += wr + 1;
		ui_draw_text(w, 2 + r, x, width - x, row->text ? row->text : "", a, UI_LEFT);
	}
}

static void details(struct ui_app *app, size_t row, void (*line)(void *, const char *, const char *, int), void *ctx)
{
	const struct tl_row *r = row_at(app->timeline, row);
	char buf[128];

	if (!r)
		return;
	when(buf, sizeof(buf), r->time_ms);
	line(ctx, _("Time"), buf, 0);
	line(ctx, _("Source"), sb_timeline_source_name(r->source), r->source != SB_TIMELINE_AGENT);
	line(ctx, _("Kind"), sb_timeline_kind_name(r->kind), 0);
	line(ctx, _("What"), r->text ? r->text : "", 0);
	if (r->cwd)
		line(ctx, _("Directory"), r->cwd, 0);
	if (r->session)
		line(ctx, _("Session"), r->session, 0);
	if (r->exit_code >= 0) {
		snprintf(buf, sizeof(buf), "%d", r->exit_code);
		line(ctx, _("Exit status"), buf, r->exit_code != 0);
	}
	if (r->duration_ms >= 0) {
		snprintf(buf, sizeof(buf), "%lld ms", r->duration_ms);
		line(ctx, _("Duration"), buf, 0);
	}
	if (r->out_bytes >= 0) {
		snprintf(buf, sizeof(buf), _("%lld bytes"), r->out_bytes);
		line(ctx, _("Output"), buf, 0);
	}
}

static void add(char **buf, size_t *len, const char *label, const char *value)
{
	char *s = sb_strdupf("%s%s%s\n", label, label[0] ? ": " : "", value ? value : "");
	char *b = s ? realloc(*buf, *len + strlen(s) + 1) : NULL;

	if (b) {
		memcpy(b + *len, s, strlen(s) + 1);
		*buf = b;
		*len += strlen(s);
	}
	free(s);
}

/* The entry with its output, in the viewer. */
static void open_entry(struct ui_app *app, struct timeline *t, const struct tl_row *r)
{
	struct sb_timeline *one;
	struct sb_error err;
	char *text = NULL, num[64], title[128];
	size_t len = 0;

	if (sb_timeline_read_at(&one, app->root, t->name, r->pos, &err) < 0) {
		ui_app_message(app, 1, "%s", err.msg);
		return;
	}
	const struct sb_timeline_entry *e = one->count ? &one->entries[0] : NULL;
	json_t *j = e ? sb_timeline_entry_to_json(e) : NULL;
	char *js = j ? sb_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (e) {
		add(&text, &len, _("What"), e->text);
		snprintf(num, sizeof(num), "%d", e->exit_code);
		add(&text, &len, _("Exit status"), e->exit_code >= 0 ? num : "-");
		if (e->out && e->out_len) {
			add(&text, &len, "", _("---- stdout ----"));
			add(&text, &len, "", e->out);
		}
		if (e->err && e->err_len) {
			add(&text, &len, "", _("---- stderr ----"));
			add(&text, &len, "", e->err);
		}
		if (e->truncated)
			add(&text, &len, "", _("(the copy is cut at the timeline's cap)"));
		add(&text, &len, "", _("---- the entry ----"));
		add(&text, &len, "", js);
	}
	snprintf(title, sizeof(title), _("%s: timeline entry at %llu"), t->name, r->pos);
	ui_viewer_open(app, title, text ? text : "");
	free(js);
	json_decref(j);
	free(text);
	sb_timeline_free(one);
}

static void search_done(struct ui_app *app, const char *text)
{
	struct timeline *t = app->timeline;

	if (!t)
		return;
	snprintf(t->search, sizeof(t->search), "%s", text);
	app->views[UI_PANE_TIMELINE].selected = app->views[UI_PANE_TIMELINE].top = 0;
	rebuild(app, t);
	if (t->n_shown)
		app->views[UI_PANE_TIMELINE].selected = t->n_shown - 1;
}

/* A copy's guest path from an entry "cp ...: SRC -> NAME:/path (route)", else its directory. */
static char *guest_path(const struct tl_row *r, const char *name)
{
	const char *p = r->text ? strstr(r->text, name) : NULL;
	size_t n = strlen(name);

	if (r->kind == SB_TIMELINE_FILE && p && p[n] == ':' && p[n + 1] == '/')
		return strndup(p + n + 1, strcspn(p + n + 1, " "));
	return r->cwd ? strdup(r->cwd) : NULL;
}

static int action(struct ui_app *app, enum ui_action a)
{
	struct timeline *t = sync(app);
	const struct tl_row *r = row_at(t, app->views[UI_PANE_TIMELINE].selected);
	char *path;

	switch (a) {
	case UI_ACT_SHELL:
	case UI_ACT_INSPECT:
		if (r)
			open_entry(app, t, r);
		return 1;
	case UI_ACT_FOLLOW:
		if (t) {
			t->follow = !t->follow;
			rebuild(app, t);
			ui_app_message(app, 0, t->follow ? _("following the timeline") : _("not following the timeline"));
		}
		return 1;
	case UI_ACT_FILTER:
		ui_prompt_open(app, _("search the timeline:"), t ? t->search : "", search_done);
		return 1;
	case UI_ACT_COPY_OUT:
		if (!t || !t->name[0])
			return 0;
		path = r ? guest_path(r, t->name) : NULL;
		ui_copy_out_ask_path(app, t->name, path);
		free(path);
		return 1;
	case UI_ACT_DIFF:
		if (t && t->name[0])
			ui_diff_open(app, t->name);
		return 1;
	default:
		return 0;
	}
}

static const enum ui_action hints[] = { UI_ACT_SHELL, UI_ACT_FOLLOW, UI_ACT_FILTER, UI_ACT_DIFF, UI_ACT_COPY_OUT,
					UI_ACT_NONE };

const struct ui_pane ui_pane_timeline = {
	.title = N_("Timeline"),
	.rows = rows,
	.draw = draw,
	.details = details,
	.action = action,
	.hints = hints,
};
