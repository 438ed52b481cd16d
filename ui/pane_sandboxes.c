/* The Sandboxes pane: one row per sandbox, sortable by any column, filtered
 * live by name, owner, label or state. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "draw.h"
#include "base/i18n.h"
#include "query.h"
#include "theme.h"
#include "ui.h"
#include "base/units.h"
#include "sandbox/cleanup.h"

static const struct {
	const char *header;      /* N_() */
	int width;               /* 0: takes the rest */
	enum ui_align align;
} columns[UI_COL_COUNT] = {
	[UI_COL_NAME] = { N_("NAME"), 16, UI_LEFT },
	/* wide enough for a service's "running (unhealthy)" */
	[UI_COL_STATE] = { N_("STATE"), 19, UI_LEFT },
	[UI_COL_KIND] = { N_("KIND"), 9, UI_LEFT },
	/* durations are at most 6 wide ("23h59m") */
	[UI_COL_IDLE] = { N_("IDLE"), 6, UI_RIGHT },
	[UI_COL_EXPIRES] = { N_("EXPIRES"), 7, UI_RIGHT },
	[UI_COL_NET] = { N_("NET"), 4, UI_LEFT },
	[UI_COL_IMAGE] = { N_("IMAGE"), 0, UI_LEFT },
	[UI_COL_OWNER] = { N_("OWNER"), 15, UI_LEFT },   /* 15: TASKS took one column from it */
	/* all of the sandbox's folder (resources.c): "1023M" */
	[UI_COL_DISK] = { N_("DISK"), 5, UI_RIGHT },
	[UI_COL_CPU] = { N_("CPU"), 4, UI_RIGHT },
	/* in use / limit: "123M/512M" */
	[UI_COL_MEMORY] = { N_("MEM"), 9, UI_RIGHT },
	/* the sandbox's host tasks (sentry threads, gofer), not the processes
	 * inside: those need an exec (T); the help and the details say so */
	[UI_COL_TASKS] = { N_("TASKS"), 5, UI_RIGHT },
};

const char *ui_sb_column_name(enum ui_sb_column c)
{
	return _(columns[c].header);
}

void ui_format_image(char *buf, size_t size, const char *ref, const char *digest)
{
	const char *hex = digest ? strchr(digest, ':') : NULL;
	const char *short_ref = ref ? ref : "";

	/* Docker Hub's canonical prefix adds nothing on a narrow screen */
	if (!strncmp(short_ref, "docker.io/library/", 18))
		short_ref += 18;
	else if (!strncmp(short_ref, "docker.io/", 10))
		short_ref += 10;
	if (hex && *short_ref)
		snprintf(buf, size, "%s@%.12s", short_ref, hex + 1);
	else if (hex)
		snprintf(buf, size, "@%.12s", hex + 1);
	else
		snprintf(buf, size, "%s", short_ref);
}

/* The sample of a running sandbox (resources.c), NULL when there is none. */
static const struct ui_memuse *sample(const struct ui_app *app, const struct sb_sandbox_info *s)
{
	return s->rec.state == SB_STATE_RUNNING ? ui_resources_find(app, s->rec.name) : NULL;
}

/* Memory in use where it was sampled, else the limit, else 0. */
static unsigned long long memory_shown(const struct ui_app *app, const struct sb_sandbox_info *s)
{
	const struct ui_memuse *m = sample(app, s);

	return m ? m->used : s->rec.memory;
}

static void memory_cell(const struct ui_app *app, const struct sb_sandbox_info *s, char *buf, size_t size)
{
	const struct ui_memuse *m = sample(app, s);
	char used[16], limit[16];

	sb_units_format_size(used, sizeof(used), memory_shown(app, s), SB_UNITS_COMPACT);
	sb_units_format_size(limit, sizeof(limit), s->rec.memory, SB_UNITS_COMPACT);
	if (!memory_shown(app, s))
		snprintf(buf, size, "-");
	else if (m && s->rec.memory)
		snprintf(buf, size, "%s/%s", used, limit);
	else
		snprintf(buf, size, "%s", used);
}

/* The bytes of the sandbox's folder, -1 while not measured yet. */
static long long disk_shown(const struct ui_app *app, const struct sb_sandbox_info *s)
{
	const struct sb_disk_usage *d = ui_resources_disk(app, s->rec.name);

	return d ? (long long)d->total : -1;
}

static void cell_text(const struct ui_app *app, const struct sb_sandbox_info *s, enum ui_sb_column c, char *buf,
		      size_t size)
{
	switch (c) {
	case UI_COL_NAME:
		snprintf(buf, size, "%s", s->rec.name);
		break;
	case UI_COL_STATE:
		/* with a service: its health, from the supervisor's file (no runsc call) */
		sb_sandbox_state_text(buf, size, s);
		break;
	case UI_COL_KIND:
		snprintf(buf, size, "%s", sb_sandbox_kind_name(s->rec.kind));
		break;
	case UI_COL_IDLE:
		sb_units_format_duration(buf, size, s->idle_seconds);
		break;
	case UI_COL_EXPIRES:
		sb_units_format_duration(buf, size, s->expires_in);
		break;
	case UI_COL_NET:
		snprintf(buf, size, "%s", s->rec.network ? _("on") : _("off"));
		break;
	case UI_COL_IMAGE:
		ui_format_image(buf, size, s->rec.image_ref, s->rec.image_digest);
		break;
	case UI_COL_OWNER:
		snprintf(buf, size, "%s", s->rec.owner ? s->rec.owner : "");
		break;
	case UI_COL_MEMORY:
		memory_cell(app, s, buf, size);
		break;
	case UI_COL_DISK: {
		long long disk = disk_shown(app, s);
		if (disk >= 0)
			sb_units_format_size(buf, size, (unsigned long long)disk, SB_UNITS_COMPACT);
		else
			snprintf(buf, size, "%s", ui_theme_glyphs()->ellipsis);
		break;
	}
	case UI_COL_CPU:
		if (sample(app, s) && sample(app, s)->cpu_pct >= 0)
			snprintf(buf, size, "%.0f%%", sample(app, s)->cpu_pct);
		else
			snprintf(buf, size, "-");
		break;
	case UI_COL_TASKS:
		if (sample(app, s))
			snprintf(buf, size, "%llu", sample(app, s)->tasks);
		else
			snprintf(buf, size, "-");
		break;
	case UI_COL_COUNT:
		buf[0] = '\0';
		break;
	}
}

static long long cmp_ll(long long a, long long b)
{
	return a < b ? -1 : a > b;
}

/* qsort has no context argument: the sort runs in the loop thread only */
static const struct ui_app *sort_app;

static int compare(const void *pa, const void *pb)
{
	const struct sb_sandbox_info *a = &sort_app->sbx[*(const size_t *)pa], *b = &sort_app->sbx[*(const size_t *)pb];
	long long r = 0;
	char ta[256], tb[256];

	switch (sort_app->sort_col) {
	case UI_COL_IDLE:
		r = cmp_ll(a->idle_seconds, b->idle_seconds);
		break;
	case UI_COL_EXPIRES:
		/* "never" sorts last */
		r = cmp_ll(a->expires_in < 0 ? (1LL << 62) : a->expires_in, b->expires_in < 0 ? (1LL << 62) : b->expires_in);
		break;
	case UI_COL_MEMORY:
		r = cmp_ll((long long)memory_shown(sort_app, a), (long long)memory_shown(sort_app, b));
		break;
	case UI_COL_DISK:
		r = cmp_ll(disk_shown(sort_app, a), disk_shown(sort_app, b));
		break;
	case UI_COL_CPU:
		r = cmp_ll(sample(sort_app, a) ? (long long)(sample(sort_app, a)->cpu_pct * 100) : -1,
			   sample(sort_app, b) ? (long long)(sample(sort_app, b)->cpu_pct * 100) : -1);
		break;
	case UI_COL_TASKS:
		r = cmp_ll(sample(sort_app, a) ? (long long)sample(sort_app, a)->tasks : -1,
			   sample(sort_app, b) ? (long long)sample(sort_app, b)->tasks : -1);
		break;
	case UI_COL_STATE:
		r = cmp_ll(a->rec.state, b->rec.state);
		break;
	default:
		cell_text(sort_app, a, sort_app->sort_col, ta, sizeof(ta));
		cell_text(sort_app, b, sort_app->sort_col, tb, sizeof(tb));
		r = strcmp(ta, tb);
		break;
	}
	if (r == 0)
		r = strcmp(a->rec.name, b->rec.name);
	return (int)(sort_app->sort_reverse ? -r : r);
}

/* A row for the query: the disk is the workbench's, not the record's. */
struct sandbox_row {
	const struct ui_app *app;
	const struct sb_sandbox_info *s;
};

/* The query's view of a sandbox (query.h): the texts a plain term searches
 * are the name, owner, state and labels, as before the query had fields. */
static size_t values(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct sb_sandbox_info *s = ((const struct sandbox_row *)row)->s;
	size_t n = 0;

#define VAL(...) (n < max ? (void)snprintf(vals[n++], UI_QUERY_VALUE_MAX, __VA_ARGS__) : (void)0)
	if (!field || !strcmp(field, "name"))
		VAL("%s", s->rec.name);
	if ((!field || !strcmp(field, "owner")) && s->rec.owner)
		VAL("%s", s->rec.owner);
	if (!field || !strcmp(field, "state"))
		VAL("%s", sb_sandbox_state_name(s->rec.state));
	for (size_t i = 0; (!field || !strcmp(field, "label")) && i < s->rec.n_labels; i++)
		VAL("%s=%s", s->rec.labels[i].key, s->rec.labels[i].value);
	if (!field)
		return n;
	if (!strcmp(field, "kind"))
		VAL("%s", sb_sandbox_kind_name(s->rec.kind));
	else if (!strcmp(field, "net"))
		VAL("%s", s->rec.network ? "on" : "off");
	else if (!strcmp(field, "idle"))
		VAL("%lld", s->idle_seconds);
	else if (!strcmp(field, "expires") && s->expires_in >= 0)
		VAL("%lld", s->expires_in);
	else if (!strcmp(field, "disk") && disk_shown(((const struct sandbox_row *)row)->app, s) >= 0)
		VAL("%lld", disk_shown(((const struct sandbox_row *)row)->app, s));
	else if (!strcmp(field, "image")) {
		if (s->rec.image_ref)
			VAL("%s", s->rec.image_ref);
		if (n < max)
			ui_format_image(vals[n++], UI_QUERY_VALUE_MAX, s->rec.image_ref, NULL);
		VAL("%s", s->rec.image_digest);
	}
#undef VAL
	return n;
}

static const char *const field_names[] = { "name", "state", "kind", "owner", "label", "net", "image", "idle",
					   "expires", "disk", NULL };
static const char *const duration_names[] = { "idle", "expires", NULL };
static const char *const size_names[] = { "disk", NULL };
static const struct ui_query_fields fields = { field_names, duration_names, values, size_names };

static void refilter(struct ui_app *app)
{
	ui_sandboxes_rebuild(app, NULL);
}

void ui_sandboxes_rebuild(struct ui_app *app, const char *keep)
{
	char selected[SB_SANDBOX_NAME_MAX + 1] = "";
	struct sb_sandbox_info *sel = keep ? NULL : ui_app_selected_sandbox(app);
	size_t *order;

	snprintf(selected, sizeof(selected), "%s", keep ? keep : sel ? sel->rec.name : "");
	order = realloc(app->order, sizeof(*order) * (app->n_sbx ? app->n_sbx : 1));
	if (!order)
		return;
	app->order = order;
	app->n_order = 0;
	for (size_t i = 0; i < app->n_sbx; i++) {
		struct sandbox_row r = { app, &app->sbx[i] };
		if (ui_filter_match(app, UI_PANE_SANDBOXES, &r))
			order[app->n_order++] = i;
	}
	sort_app = app;
	qsort(order, app->n_order, sizeof(*order), compare);
	/* the selection follows its sandbox */
	for (size_t i = 0; selected[0] && i < app->n_order; i++)
		if (!strcmp(app->sbx[order[i]].rec.name, selected))
			app->views[UI_PANE_SANDBOXES].selected = i;
	app->dirty = 1;
}

static size_t rows(struct ui_app *app)
{
	return app->n_order;
}

static enum ui_role state_role(enum sb_sandbox_state s)
{
	static const enum ui_role roles[] = {
		[SB_STATE_CREATED] = UI_ROLE_CREATED, [SB_STATE_RUNNING] = UI_ROLE_RUNNING,
		[SB_STATE_STOPPED] = UI_ROLE_STOPPED, [SB_STATE_BROKEN] = UI_ROLE_BROKEN,
		[SB_STATE_PAUSED] = UI_ROLE_PAUSED,
	};

	return (size_t)s < sizeof(roles) / sizeof(roles[0]) ? roles[s] : UI_ROLE_NORMAL;
}

/* Column widths for a window width: fixed ones first, the image takes the rest;
 * when it is narrow DISK goes first (it needs 125 columns), then the owner and
 * the other resource columns (119). */
static void widths(int width, int *w)
{
	static const enum ui_sb_column drops[][4] = {
		{ UI_COL_DISK, UI_COL_COUNT },
		{ UI_COL_OWNER, UI_COL_MEMORY, UI_COL_CPU, UI_COL_TASKS },
	};
	int fixed = 0;

	for (int c = 0; c < UI_COL_COUNT; c++)
		w[c] = columns[c].width;
	for (int c = 0; c < UI_COL_COUNT; c++)
		fixed += w[c] ? w[c] + 1 : 0;
	/* 15: a short digest ("@3f2a1b0c9d8e") still fits after "x~" */
	for (size_t g = 0; g < sizeof(drops) / sizeof(drops[0]) && width - fixed < 15; g++)
		for (size_t i = 0; i < 4 && drops[g][i] != UI_COL_COUNT; i++) {
			fixed -= w[drops[g][i]] + 1;
			w[drops[g][i]] = 0;
		}
	w[UI_COL_IMAGE] = width - fixed - 1 > 8 ? width - fixed - 1 : 8;
}

/* "long/reference:tag@3f2a1b0c9d8e" in width columns: the pinned digest stays
 * whole, the reference gives way ("long/ref~@3f2a1b0c9d8e"). */
static void fit_image(char *buf, int width)
{
	char *at = strrchr(buf, '@');
	int len = (int)strlen(buf);

	if (!at || len <= width || at - buf < 2)
		return;
	int keep = width - (len - (int)(at - buf)) - 1;
	if (keep < 1)
		return;
	memmove(buf + keep + 1, at, strlen(at) + 1);
	buf[keep] = '~';
}

static void draw(struct ui_app *app, WINDOW *w, int focused)
{
	struct ui_pane_view *v = &app->views[UI_PANE_SANDBOXES];
	int h = getmaxy(w) - 2, width = getmaxx(w), wd[UI_COL_COUNT], x = 0;
	char buf[512];

	widths(width, wd);
	for (int c = 0; c < UI_COL_COUNT; c++) {
		if (!wd[c])
			continue;
		snprintf(buf, sizeof(buf), "%s%s", _(columns[c].header),
			 app->sort_col == (enum ui_sb_column)c ? (app->sort_reverse ? ui_theme_glyphs()->sort_down : ui_theme_glyphs()->sort_up) : "");
		ui_draw_text(w, 1, x, wd[c], buf, ui_theme_attr(UI_ROLE_COLUMNS), columns[c].align);
		x += wd[c] + 1;
	}
	if (app->n_order == 0) {
		const char *msg = !app->listed ? _("reading…")
				  : app->filters[UI_PANE_SANDBOXES].text[0] ? _("no sandbox matches the filter (Esc on '/' clears it)")
				  : _("no sandboxes yet: press c to create one");
		ui_draw_put(w, 3, 2, width - 4, msg, ui_theme_attr(UI_ROLE_DIM));
		return;
	}
	ui_app_clamp_view(app, UI_PANE_SANDBOXES, app->n_order, h);
	for (int r = 0; r < h && v->top + (size_t)r < app->n_order; r++) {
		size_t idx = v->top + (size_t)r;
		const struct sb_sandbox_info *s = &app->sbx[app->order[idx]];
		int sel = idx == v->selected;
		attr_t base = sel ? ui_theme_attr(focused ? UI_ROLE_SELECTED : UI_ROLE_SELECTED_DIM) : A_NORMAL;
		x = 0;
		if (sel)
			ui_draw_text(w, 2 + r, 0, width, "", base, UI_LEFT);
		for (int c = 0; c < UI_COL_COUNT; c++) {
			if (!wd[c])
				continue;
			attr_t a = base;
			cell_text(app, s, c, buf, sizeof(buf));
			if (!sel && c == UI_COL_STATE)
				a = ui_theme_attr(state_role(s->rec.state));
			else if (!sel && ((c == UI_COL_NET && s->rec.network) ||
					  (c == UI_COL_EXPIRES && s->expires_in >= 0 && s->expires_in < 60)))
				a = ui_theme_attr(UI_ROLE_WARN);
			if (c == UI_COL_IMAGE)
				fit_image(buf, wd[c]);
			if (c == UI_COL_NAME && (ui_shells_count(app, s->rec.name) || ui_marked(app, s->rec.name))) {
				/* marked: a glyph before the name (and bold, for monochrome);
				 * attached shells: a star after it */
				char name[600];
				int marked = ui_marked(app, s->rec.name);
				snprintf(name, sizeof(name), "%s%s%s%s", marked ? ui_theme_glyphs()->mark : "", marked ? " " : "",
					 buf, ui_shells_count(app, s->rec.name) ? "*" : "");
				ui_draw_text(w, 2 + r, x, wd[c], name, marked ? a | A_BOLD : a, columns[c].align);
			} else {
				ui_draw_text(w, 2 + r, x, wd[c], buf, a, columns[c].align);
			}
			x += wd[c] + 1;
		}
	}
}

static void line_pair(void (*line)(void *, const char *, const char *, int), void *ctx, const char *label,
		      const char *value, int warn)
{
	line(ctx, label, value, warn);
}

/* The service and the published ports; a port reachable from other hosts is flagged. */
/* A capped disk: its size and what its file system has in use (the cap is
 * what a sandbox that fills it hits: marked from 90%). */
static void disk_limit_details(const struct sb_sandbox_info *s, void (*line)(void *, const char *, const char *, int),
			       void *ctx)
{
	char cap[16], used[16], buf[64];

	if (!s->rec.disk) {
		line_pair(line, ctx, _("Disk limit"), _("no limit"), 0);
		return;
	}
	sb_units_format_size(cap, sizeof(cap), s->rec.disk, SB_UNITS_COMPACT);
	if (!s->disk_size) {
		line_pair(line, ctx, _("Disk limit"), cap, 0);
		return;
	}
	sb_units_format_size(used, sizeof(used), s->disk_used, SB_UNITS_COMPACT);
	snprintf(buf, sizeof(buf), _("%s (%s used)"), cap, used);
	line_pair(line, ctx, _("Disk limit"), buf, s->disk_used >= s->disk_size / 10 * 9);
}

static void service_details(const struct sb_sandbox_info *s, void (*line)(void *, const char *, const char *, int),
			    void *ctx)
{
	char buf[512];

	if (s->rec.service.command) {
		line_pair(line, ctx, _("Service"), s->rec.service.command, 0);
		snprintf(buf, sizeof(buf), "%s", sb_service_restart_name(s->rec.service.restart));
		line_pair(line, ctx, _("Restart"), buf, 0);
		if (s->rec.service.health)
			line_pair(line, ctx, _("Health check"), s->rec.service.health, 0);
	}
	for (size_t i = 0; i < s->rec.n_publish; i++) {
		const struct sb_publish *p = &s->rec.publish[i];
		int open_ = !sb_publish_loopback(p);
		snprintf(buf, sizeof(buf), "%s:%u -> %u%s", p->address, p->host_port, p->port,
			 open_ ? _(" (warning: reachable from other hosts)") : "");
		line_pair(line, ctx, _("Published"), buf, open_);
	}
}

static void details(struct ui_app *app, size_t row, void (*line)(void *, const char *, const char *, int), void *ctx)
{
	const struct sb_sandbox_info *s;
	char buf[1024], t[64];

	if (row >= app->n_order)
		return;
	s = &app->sbx[app->order[row]];
	line_pair(line, ctx, _("Name"), s->rec.name, 0);
	line_pair(line, ctx, _("ID"), s->rec.id, 0);
	sb_sandbox_state_text(t, sizeof(t), s);
	line_pair(line, ctx, _("State"), t, s->rec.state == SB_STATE_BROKEN || strstr(t, "unhealthy"));
	line_pair(line, ctx, _("Reason"), s->rec.reason ? s->rec.reason : "", 0);
	/* near the top: what runs in it now, before what it was made with */
	snprintf(buf, sizeof(buf), "%zu", ui_shells_count(app, s->rec.name));
	line_pair(line, ctx, _("Shells"), buf, 0);
	if (ui_sessions_summary(app, s->rec.name, buf, sizeof(buf)))
		line_pair(line, ctx, _("Sessions"), buf, 0);
	ui_resources_details(app, s, line, ctx);
	if (s->rec.state == SB_STATE_STOPPED)
		line_pair(line, ctx, _("Memory kept"), s->has_checkpoint ? _("yes (checkpoint)") : _("no (cold start)"), 0);
	if (s->rec.state == SB_STATE_PAUSED)
		line_pair(line, ctx, _("Memory kept"), _("yes (in RAM, frozen: z or a command resumes it)"), 0);
	line_pair(line, ctx, _("Kind"), sb_sandbox_kind_name(s->rec.kind), 0);
	if (s->rec.kind == SB_KIND_TEMPORARY) {
		sb_units_format_duration(t, sizeof(t), s->rec.idle_timeout);
		char act[64];
		sb_expiry_format(act, sizeof(act), s->rec.expiry_action, s->rec.expiry_stop_after);
		snprintf(buf, sizeof(buf), _("%s, then %s"), t, act);
		line_pair(line, ctx, _("Idle timeout"), buf, 0);
		sb_units_format_duration(t, sizeof(t), s->expires_in);
		line_pair(line, ctx, _("Expires in"), t, s->expires_in >= 0 && s->expires_in < 60);
	}
	sb_units_format_duration(t, sizeof(t), s->idle_seconds);
	line_pair(line, ctx, _("Idle"), t, 0);
	line_pair(line, ctx, _("Network"), s->rec.network ? _("on") : _("off"), s->rec.network);
	if (s->rec.network) {
		char *egress = sb_sandbox_egress_text(app->root, &s->rec);
		line_pair(line, ctx, _("Egress"), egress ? egress : "?", s->rec.egress.mode != SB_EGRESS_DENY_ALL);
		free(egress);
	}
	service_details(s, line, ctx);
	line_pair(line, ctx, _("Image"), s->rec.image_ref ? s->rec.image_ref : "", 0);
	line_pair(line, ctx, _("Digest"), s->rec.image_digest, 0);
	if (s->rec.memory)
		sb_units_format_size(t, sizeof(t), s->rec.memory, SB_UNITS_COMPACT);
	line_pair(line, ctx, _("Memory limit"), s->rec.memory ? t : _("no limit"), 0);
	if (s->rec.cpus > 0)
		snprintf(t, sizeof(t), "%.2g", s->rec.cpus);
	line_pair(line, ctx, _("CPUs"), s->rec.cpus > 0 ? t : _("no limit"), 0);
	disk_limit_details(s, line, ctx);
	line_pair(line, ctx, _("Owner"), s->rec.owner && *s->rec.owner ? s->rec.owner : "-", 0);
	for (size_t i = 0; i < s->rec.n_labels; i++) {
		snprintf(buf, sizeof(buf), "%s=%s", s->rec.labels[i].key, s->rec.labels[i].value);
		line_pair(line, ctx, i == 0 ? _("Labels") : "", buf, 0);
	}
	line_pair(line, ctx, _("Workspace"), s->workspace ? s->workspace : "", 0);
	line_pair(line, ctx, _("Exchange"), s->rec.exchange ? _("/exchange (rw)") : _("off"), s->rec.exchange);
	for (size_t i = 0; i < s->rec.n_mounts; i++) {
		const struct sb_sandbox_mount *m = &s->rec.mounts[i];
		snprintf(buf, sizeof(buf), "%s -> %s (%s)", m->host, m->path, sb_mount_mode_name(m->mode));
		line_pair(line, ctx, i == 0 ? _("Host mounts") : "", buf, m->mode == SB_MOUNT_RW);
	}
	time_t created = (time_t)s->rec.created;
	struct tm tm;
	if (!localtime_r(&created, &tm) || !strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(t, sizeof(t), "%lld", (long long)created); /* out of localtime's range */
	line_pair(line, ctx, _("Created"), t, 0);
}

static int action(struct ui_app *app, enum ui_action a)
{
	struct sb_sandbox_info *s = ui_app_selected_sandbox(app);

	switch (a) {
	case UI_ACT_SORT:
		app->sort_col = (app->sort_col + 1) % UI_COL_COUNT;
		ui_sandboxes_rebuild(app, NULL);
		ui_app_message(app, 0, _("sorted by %s"), ui_sb_column_name(app->sort_col));
		return 1;
	case UI_ACT_SORT_REVERSE:
		app->sort_reverse = !app->sort_reverse;
		ui_sandboxes_rebuild(app, NULL);
		return 1;
	case UI_ACT_DIFF:
	case UI_ACT_COPY_OUT:
		if (!s)
			ui_app_message(app, 1, _("no sandbox selected"));
		else if (a == UI_ACT_DIFF)
			ui_diff_open(app, s->rec.name);
		else
			ui_copy_out_ask_path(app, s->rec.name, NULL);
		return 1;
	case UI_ACT_MARK: case UI_ACT_MARK_RANGE: case UI_ACT_MARK_ALL: case UI_ACT_CLEAR_MARKS:
		return ui_marks_action(app, a);
	case UI_ACT_SHELL: case UI_ACT_STOP: case UI_ACT_RESTORE: case UI_ACT_REMOVE: case UI_ACT_EXPIRE:
	case UI_ACT_EXTEND: case UI_ACT_TOUCH: case UI_ACT_INSPECT: case UI_ACT_PAUSE:
		/* with marks, the lifecycle actions act on the marked ones */
		if (a != UI_ACT_SHELL && a != UI_ACT_INSPECT && ui_marks_bulk(app, a))
			return 1;
		if (!s) {
			ui_app_message(app, 1, _("no sandbox selected"));
			return 1;
		}
		ui_action_sandbox(app, a, s);
		return 1;
	default:
		return 0;
	}
}

static const enum ui_action hints[] = {
	UI_ACT_SHELL, UI_ACT_CREATE, UI_ACT_STOP, UI_ACT_RESTORE, UI_ACT_REMOVE, UI_ACT_FILTER, UI_ACT_SORT,
	UI_ACT_INSPECT, UI_ACT_NONE,
};

const struct ui_pane ui_pane_sandboxes = {
	.title = N_("Sandboxes"),
	.rows = rows,
	.draw = draw,
	.details = details,
	.action = action,
	.hints = hints,
	.fields = &fields,
	.refilter = refilter,
};
