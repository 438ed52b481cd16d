/* The cleanup planner: the library's cleanup plan (sb_cleanup_plan) as a
 * list with marks; one confirmation applies the marked rows in a job, and
 * each row shows its result. The plan is built in the job's child (dry runs
 * of reap, gc and prune, disk walks) and handed over as a JSON file. Rows
 * are filtered with a query (query.h) on kind, reason, name and action, and
 * sorted as planned, by the bytes they free or by reason. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "draw.h"
#include "query.h"
#include "sandbox/cleanup.h"
#include "theme.h"
#include "ui.h"

#define PLAN_FILE_MAX (8 << 20)

struct row {
	char kind[12], reason[16], action[16], name[256], detail[256], result[256];
	unsigned long long bytes;
	int keeps_exchange, keeps_host, keeps_workspace, permanent;
	int marked, state;           /* state: 0 planned, 1 applying, 2 done, -1 failed */
};

/* The planner lives across the confirmation dialog (which takes the overlay),
 * so its rows are kept here rather than in overlay_state. */
enum { SORT_PLAN, SORT_FREES, SORT_REASON, SORT_COUNT };

static struct {
	struct row *rows;
	size_t n;
	size_t *order, n_order;      /* the rows shown: filtered and sorted */
	size_t selected, top;        /* in order */
	int loading, sort;
	char query_text[128];
	struct ui_query *query;
} plan;

static size_t values(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct row *r = row;
	const struct {
		const char *field, *value;
	} v[] = { { "name", r->name }, { "reason", r->reason }, { "action", r->action }, { "kind", r->kind } };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]) && n < max; i++)
		if (field ? !strcmp(field, v[i].field) : i < 3)
			snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", v[i].value);
	return n;
}

static const char *const field_names[] = { "name", "reason", "action", "kind", NULL };
static const struct ui_query_fields fields = { field_names, NULL, values };

/* Ties keep the plan's order (qsort is not stable). */
static int cmp_index(const void *pa, const void *pb)
{
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct row *a = &plan.rows[ia], *b = &plan.rows[ib];
	int c = 0;

	if (plan.sort == SORT_FREES)
		c = (a->bytes < b->bytes) - (a->bytes > b->bytes);
	else if (plan.sort == SORT_REASON)
		c = strcmp(a->reason, b->reason);
	return c ? c : (ia > ib) - (ia < ib);
}

static void rebuild(void)
{
	free(plan.order);
	plan.n_order = 0;
	if (!(plan.order = calloc(plan.n + 1, sizeof(*plan.order))))
		return;
	for (size_t i = 0; i < plan.n; i++)
		if (!plan.query || ui_query_match(plan.query, &plan.rows[i]))
			plan.order[plan.n_order++] = i;
	qsort(plan.order, plan.n_order, sizeof(*plan.order), cmp_index);
	if (plan.selected >= plan.n_order)
		plan.selected = plan.n_order ? plan.n_order - 1 : 0;
}

/* The row shown at position i, NULL if none. */
static struct row *shown(size_t i)
{
	return i < plan.n_order ? &plan.rows[plan.order[i]] : NULL;
}

static const char *text(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static int has_keep(json_t *o, const char *what)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(o, "keeps"), i, v)
		if (!strcmp(json_string_value(v) ? json_string_value(v) : "", what))
			return 1;
	return 0;
}

static void load_rows(json_t *doc)
{
	size_t i;
	json_t *o;

	free(plan.rows);
	plan.n = plan.n_order = plan.selected = plan.top = 0;
	plan.rows = calloc(json_array_size(doc) + 1, sizeof(*plan.rows));
	if (!plan.rows)
		return;
	json_array_foreach(doc, i, o) {
		struct row *r = &plan.rows[plan.n++];
		snprintf(r->kind, sizeof(r->kind), "%s", text(o, "kind"));
		snprintf(r->reason, sizeof(r->reason), "%s", text(o, "reason"));
		snprintf(r->action, sizeof(r->action), "%s", text(o, "action"));
		snprintf(r->name, sizeof(r->name), "%s", text(o, "name"));
		snprintf(r->detail, sizeof(r->detail), "%s", text(o, "detail"));
		r->bytes = (unsigned long long)json_integer_value(json_object_get(o, "bytes"));
		r->keeps_exchange = has_keep(o, "exchange");
		r->keeps_host = has_keep(o, "host-folders");
		r->keeps_workspace = has_keep(o, "workspace");
		r->permanent = json_is_true(json_object_get(o, "permanent"));
	}
	rebuild();
}

/* Temporaries expiring within this are listed too (reason "expiring"): a
 * sandbox about to go is worth a look before it goes. */
#define NEAR_EXPIRY_S (10 * 60)

/* ---- the jobs (in the child) ---- */

static int job_plan(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct sb_cleanup_plan *p;
	char path[] = "/tmp/sandbench-plan-XXXXXX";
	int fd, rc;

	(void)arg;
	if ((rc = sb_cleanup_plan(&p, root, NEAR_EXPIRY_S, err)) < 0)
		return rc;
	json_t *doc = json_array();
	for (size_t i = 0; i < p->count; i++)
		doc = sb_json_append(doc, sb_cleanup_item_json(&p->items[i]));
	sb_cleanup_plan_free(p);
	if (!doc)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((fd = mkstemp(path)) < 0) {
		json_decref(doc);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), path);
	}
	close(fd);
	rc = sb_json_save(path, doc, err);
	json_decref(doc);
	if (rc == 0)
		ui_job_result(ctx, "%s", path);
	return rc;
}

/* The names of the marked rows, kind and name per pair (the child's copy). */
struct apply_arg {
	char (*kinds)[12];
	char (*names)[256];
	size_t n;
};

static void apply_arg_free(void *p)
{
	struct apply_arg *a = p;

	if (a) {
		free(a->kinds);
		free(a->names);
		free(a);
	}
}

/* Plans again (what is stale may have changed) and applies the marked items. */
static int job_apply(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	static const char *const kinds[] = { "sandbox", "image", "prune", "gc" };
	struct apply_arg *a = arg;
	struct sb_cleanup_plan *p;
	int rc;

	if ((rc = sb_cleanup_plan(&p, root, NEAR_EXPIRY_S, err)) < 0)
		return rc;
	for (size_t m = 0; m < a->n; m++) {
		struct sb_cleanup_item *it = NULL;
		ui_job_step(ctx, m + 1, a->n, a->names[m]);
		for (size_t i = 0; i < p->count && !it; i++)
			if (!strcmp(kinds[p->items[i].kind % 4], a->kinds[m]) && !strcmp(p->items[i].name, a->names[m]))
				it = &p->items[i];
		if (!it) {
			ui_job_result(ctx, "E\t%s\t%s\t%s", a->kinds[m], a->names[m], _("no longer stale: left alone"));
			continue;
		}
		if (sb_cleanup_apply(it, root) < 0) {
			ui_job_event(ctx, 1, _("cleanup: %s: %s"), it->name, it->message);
			ui_job_result(ctx, "E\t%s\t%s\t%s", a->kinds[m], a->names[m], it->message);
		} else {
			ui_job_event(ctx, 0, _("cleanup: %s: %s"), it->name, it->action);
			ui_job_result(ctx, "O\t%s\t%s\t%s", a->kinds[m], a->names[m], it->message);
		}
	}
	sb_cleanup_plan_free(p);
	return 0;
}

/* ---- in the loop ---- */

static void plan_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct sb_error err;
	json_t *doc = NULL;

	(void)arg;
	plan.loading = 0;
	if (rc < 0) {
		ui_app_message(app, 1, _("cleanup plan: %s"), message);
		return;
	}
	if (sb_json_load(&doc, message, PLAN_FILE_MAX, &err) < 0)
		ui_app_message(app, 1, _("cleanup plan: %s"), err.msg);
	else
		load_rows(doc);
	unlink(message);
	json_decref(doc);
	app->dirty = 1;
}

static void replan(struct ui_app *app)
{
	plan.loading = 1;
	ui_job_start(app, _("cleanup plan"), job_plan, NULL, plan_done, NULL);
}

void ui_cleanup_open(struct ui_app *app)
{
	if (app->overlay != UI_OV_NONE)
		return;
	app->overlay = UI_OV_CLEANUP;
	app->overlay_state = NULL;
	if (!plan.loading)
		replan(app);
	app->dirty = 1;
}

static struct row *find(const char *kind, const char *name)
{
	for (size_t i = 0; i < plan.n; i++)
		if (!strcmp(plan.rows[i].kind, kind) && !strcmp(plan.rows[i].name, name))
			return &plan.rows[i];
	return NULL;
}

static void apply_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	char *copy = strdup(message), *save = NULL;
	size_t ok = 0, failed = 0;

	(void)arg;
	for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; rc == 0 && l; l = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { l, NULL, NULL, NULL };
		for (int i = 1; i < 4 && f[i - 1]; i++)
			if ((f[i] = strchr(f[i - 1], '\t')))
				*f[i]++ = '\0';
		struct row *r = f[2] ? find(f[1], f[2]) : NULL;
		if (!r)
			continue;
		r->state = f[0][0] == 'O' ? 2 : -1;
		r->marked = r->state < 0;
		snprintf(r->result, sizeof(r->result), "%s", f[3] ? f[3] : "");
		r->state > 0 ? ok++ : failed++;
	}
	free(copy);
	if (rc < 0)
		ui_app_message(app, 1, _("cleanup: %s"), message);
	else
		ui_app_message(app, failed > 0, _("cleanup: %zu done, %zu failed"), ok, failed);
	app->dirty = 1;
}

static void apply_marked(struct ui_app *app, const char *unused)
{
	struct apply_arg *a = calloc(1, sizeof(*a));

	(void)unused;
	if (a) {
		a->kinds = calloc(plan.n + 1, sizeof(*a->kinds));
		a->names = calloc(plan.n + 1, sizeof(*a->names));
	}
	if (!a || !a->kinds || !a->names) {
		apply_arg_free(a);
		return;
	}
	for (size_t i = 0; i < plan.n; i++) {
		struct row *r = &plan.rows[i];
		if (!r->marked)
			continue;
		memcpy(a->kinds[a->n], r->kind, sizeof(r->kind));
		memcpy(a->names[a->n++], r->name, sizeof(r->name));
		r->state = 1;
		const char *args[] = { "cleanup", "--apply", r->name, NULL };
		ui_cmdlog_add(app, args);
	}
	app->overlay = UI_OV_CLEANUP;   /* back from the confirmation */
	ui_job_start(app, _("cleanup"), job_apply, a, apply_done, apply_arg_free);
}

/* One confirmation listing what goes, what it frees and what stays. */
static void confirm(struct ui_app *app)
{
	char body[16384], size[32], title[128];
	size_t len = 0, n = 0;
	unsigned long long total = 0;

	for (size_t i = 0; i < plan.n; i++) {
		const struct row *r = &plan.rows[i];
		if (!r->marked)
			continue;
		n++;
		total += r->bytes;
		sb_units_format_size(size, sizeof(size), r->bytes, SB_UNITS_TEXT);
		len = ui_confirm_cat(body, sizeof(body), len, "%s %s: %s, %s %s%s%s%s%s\n", r->action, r->name, r->reason,
				     _("frees"), size, r->permanent ? _(", PERMANENT workspace") : "",
				     r->keeps_workspace ? _("; kept: disk and workspace") : "",
				     r->keeps_exchange ? _("; kept: exchange folder") : "",
				     r->keeps_host ? _("; kept: host folders") : "");
	}
	if (!n) {
		ui_app_message(app, 1, "%s", _("mark rows with Space first"));
		return;
	}
	sb_units_format_size(size, sizeof(size), total, SB_UNITS_TEXT);
	snprintf(title, sizeof(title), _("clean up %zu marked (frees %s)?"), n, size);
	app->overlay = UI_OV_NONE;
	ui_confirm_open(app, title, body, _("clean up"), apply_marked, "");
}

static size_t marked_count(unsigned long long *bytes)
{
	size_t n = 0;

	*bytes = 0;
	for (size_t i = 0; i < plan.n; i++)
		if (plan.rows[i].marked) {
			n++;
			*bytes += plan.rows[i].bytes;
		}
	return n;
}

static void draw_row(WINDOW *w, int y, int width, const struct row *r, int selected)
{
	char line[512], size[32];
	const char *state = r->state == 2 ? _("done") : r->state == -1 ? _("FAILED") : r->state == 1 ? "..." : r->action;
	attr_t a = selected ? ui_theme_attr(UI_ROLE_SELECTED) : ui_theme_attr(UI_ROLE_DIALOG);

	if (r->marked)
		a |= A_BOLD;
	sb_units_format_size(size, sizeof(size), r->bytes, SB_UNITS_COMPACT);
	snprintf(line, sizeof(line), "%s %-13s %-22.22s %7s %-11s %s", r->marked ? ui_theme_glyphs()->mark : " ",
		 r->reason, r->name, size, state, r->state ? r->result : r->detail);
	ui_draw_text(w, y, 1, width, line, a, UI_LEFT);
}

void ui_cleanup_draw(struct ui_app *app)
{
	static const char *const sorts[] = { N_("the plan"), N_("bytes freed"), N_("reason") };
	struct ui_rect rc = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 2);
	WINDOW *w = app->w_overlay;
	int body = rc.h - 7;
	char title[160], size[32];
	unsigned long long bytes;
	size_t marked = marked_count(&bytes);

	wresize(w, rc.h, rc.w);
	mvwin(w, rc.y, rc.x);
	sb_units_format_size(size, sizeof(size), bytes, SB_UNITS_TEXT);
	snprintf(title, sizeof(title), _("Cleanup planner: %zu stale [%zu marked, frees %s]"), plan.n, marked, size);
	ui_draw_box(w, title);
	snprintf(title, sizeof(title), _("sorted by %s%s%s"), _(sorts[plan.sort]), plan.query_text[0] ? _(", filter: ") : "",
		 plan.query_text);
	ui_draw_text(w, rc.h - 5, 2, rc.w - 4, title, ui_theme_attr(UI_ROLE_DIM), UI_LEFT);
	if (plan.loading && !plan.n)
		ui_draw_put(w, 1, 2, rc.w - 4, _("planning (dry runs of reap, gc and prune)..."), ui_theme_attr(UI_ROLE_DIM));
	else if (!plan.n)
		ui_draw_put(w, 1, 2, rc.w - 4, _("nothing stale: nothing to clean up"), ui_theme_attr(UI_ROLE_DIM));
	else if (!plan.n_order)
		ui_draw_put(w, 1, 2, rc.w - 4, _("no row matches the filter (/ and an empty line clears it)"),
			    ui_theme_attr(UI_ROLE_DIM));
	if (plan.selected < plan.top)
		plan.top = plan.selected;
	if (body > 0 && plan.selected >= plan.top + (size_t)body)
		plan.top = plan.selected - (size_t)body + 1;
	for (int y = 0; y < body && plan.top + (size_t)y < plan.n_order; y++)
		draw_row(w, 1 + y, rc.w - 2, shown(plan.top + (size_t)y), plan.top + (size_t)y == plan.selected);
	if (shown(plan.selected)) {
		const struct row *r = shown(plan.selected);
		char line[512];
		snprintf(line, sizeof(line), _("%s: frees %llu bytes; %s"), r->name, r->bytes, r->detail);
		ui_draw_text(w, rc.h - 4, 2, rc.w - 4, line, ui_theme_attr(UI_ROLE_DIALOG), UI_LEFT);
		snprintf(line, sizeof(line), _("keeps: %s%s%s%s"), r->keeps_workspace ? _("disk and workspace, ") : "",
			 r->keeps_exchange ? _("exchange folder, ") : "", r->keeps_host ? _("host folders, ") : "",
			 r->permanent ? _("nothing (PERMANENT workspace goes)") : "-");
		ui_draw_text(w, rc.h - 3, 2, rc.w - 4, line, ui_theme_attr(UI_ROLE_DIALOG), UI_LEFT);
	}
	ui_draw_put(w, rc.h - 2, 2, rc.w - 4, _("Space:mark *:all u:none d:clean up o:sort /:filter C-r:plan again q:close"),
		    ui_theme_attr(UI_ROLE_KEY));
}

/* A bad query is refused with its reason; the one in force stays. */
static void filter_set(struct ui_app *app, const char *text)
{
	app->overlay = UI_OV_CLEANUP;
	if (ui_filter_replace(app, &fields, &plan.query, plan.query_text, sizeof(plan.query_text), text) < 0)
		return;
	plan.selected = plan.top = 0;
	rebuild();
}

void ui_cleanup_key(struct ui_app *app, int key)
{
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);

	app->dirty = 1;
	if (key == 27 || key == 'q') {
		app->overlay = UI_OV_NONE;
		return;
	}
	switch (a) {
	case UI_ACT_UP:
		plan.selected -= plan.selected > 0;
		break;
	case UI_ACT_DOWN:
		plan.selected += plan.selected + 1 < plan.n_order;
		break;
	case UI_ACT_TOP:
		plan.selected = 0;
		break;
	case UI_ACT_BOTTOM:
		plan.selected = plan.n_order ? plan.n_order - 1 : 0;
		break;
	case UI_ACT_MARK:
		if (shown(plan.selected)) {
			shown(plan.selected)->marked = !shown(plan.selected)->marked;
			plan.selected += plan.selected + 1 < plan.n_order;
		}
		break;
	case UI_ACT_MARK_ALL:   /* what the filter shows, as in the panes */
		for (size_t i = 0; i < plan.n_order; i++)
			shown(i)->marked = shown(i)->state != 2;
		break;
	case UI_ACT_CLEAR_MARKS:
		for (size_t i = 0; i < plan.n; i++)
			plan.rows[i].marked = 0;
		break;
	case UI_ACT_SORT:
		plan.sort = (plan.sort + 1) % SORT_COUNT;
		rebuild();
		break;
	case UI_ACT_FILTER:
		app->overlay = UI_OV_NONE;
		ui_prompt_open(app, _("filter (name reason action kind):"), plan.query_text, filter_set);
		break;
	case UI_ACT_REMOVE:
		if (ui_app_may_change(app, a) && !ui_jobs_busy(app, _("cleanup")))
			confirm(app);
		break;
	case UI_ACT_REFRESH:
		if (!plan.loading)
			replan(app);
		break;
	default:
		break;
	}
}

void ui_cleanup_free(void)
{
	free(plan.rows);
	free(plan.order);
	ui_query_free(plan.query);
	memset(&plan, 0, sizeof(plan));
}
