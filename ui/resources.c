/* Live resources of the running sandboxes: CPU %, memory against its limit,
 * tasks (the library reads the sandbox's cgroup: no runsc call), the disk of
 * every listed sandbox (sb_sandbox_disk_usage, walked in the job's child: a
 * few per sample, each again only when it changed or its time is due), and a
 * history of the selected one's CPU and memory for the details pane. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/i18n.h"
#include "base/units.h"
#include "sandbox/cleanup.h"
#include "ui.h"

/* A sandbox's disk is walked again after these (ms), or at once (at the next
 * sample) when its state or last activity moved; never sooner than
 * DISK_SLOW times its last walk took, so a huge workspace is not walked
 * back to back. */
#define DISK_RUNNING_MS 10000
#define DISK_IDLE_MS 60000   /* stopped or paused: only the host writes its workspace */
#define DISK_SLOW 20
#define DISK_PER_SAMPLE 6    /* walks one sample asks for */
#define DISK_BUDGET_MS 300   /* the child stops walking after this; the rest waits */
/* "%63s": a name of at most SB_SANDBOX_NAME_MAX bytes */
#define NAME_FMT_(n) "%" #n "s"
#define NAME_FMT(n) NAME_FMT_(n)

/* A sandbox's disk as last measured, and what it was measured against. */
struct disk_entry {
	char name[SB_SANDBOX_NAME_MAX + 1];
	struct sb_disk_usage usage;
	long long at;              /* monotonic ms of the result; 0: never */
	long long walk_ms;         /* what the walk took */
	long long activity;        /* the sandbox's last activity and state when asked */
	int state, asked_state, seen;
	long long asked_activity;
	unsigned asked_serial;     /* the sample that asked for it last */
};

struct res_state {
	/* the selected sandbox's history, oldest first */
	char hist_name[SB_SANDBOX_NAME_MAX + 1];
	double cpu[UI_RES_HISTORY];
	unsigned long long mem[UI_RES_HISTORY];
	size_t n_hist;
	/* the disk of the listed sandboxes, sorted by name (bsearch: the sort by DISK looks up every row) */
	struct disk_entry *disk;
	size_t n_disk, cap_disk;
	unsigned serial;           /* counts the samples */
	int busy;
};

static struct res_state *state(struct ui_app *app)
{
	if (!app->resources)
		app->resources = calloc(1, sizeof(struct res_state));
	return app->resources;
}

void ui_resources_free(struct ui_app *app)
{
	struct res_state *rs = app->resources;

	if (rs)
		free(rs->disk);
	free(rs);
	app->resources = NULL;
}

const struct ui_memuse *ui_resources_find(const struct ui_app *app, const char *name)
{
	for (size_t i = 0; i < app->n_memuse; i++)
		if (!strcmp(app->memuse[i].name, name))
			return &app->memuse[i];
	return NULL;
}

static int disk_cmp(const void *key, const void *entry)
{
	return strcmp(key, ((const struct disk_entry *)entry)->name);
}

static struct disk_entry *disk_find(const struct res_state *rs, const char *name)
{
	return rs && rs->n_disk ? bsearch(name, rs->disk, rs->n_disk, sizeof(*rs->disk), disk_cmp) : NULL;
}

const struct sb_disk_usage *ui_resources_disk(const struct ui_app *app, const char *name)
{
	const struct disk_entry *e = disk_find(app->resources, name);

	return e && e->at ? &e->usage : NULL;
}

/* The entry of name, added in its place when new; NULL when out of memory. */
static struct disk_entry *disk_add(struct res_state *rs, const char *name)
{
	size_t at = 0;

	if (rs->n_disk == rs->cap_disk) {
		size_t cap = rs->cap_disk ? rs->cap_disk * 2 : 32;
		struct disk_entry *p = realloc(rs->disk, cap * sizeof(*p));
		if (!p)
			return NULL;
		rs->disk = p;
		rs->cap_disk = cap;
	}
	while (at < rs->n_disk && strcmp(rs->disk[at].name, name) < 0)
		at++;
	memmove(rs->disk + at + 1, rs->disk + at, (rs->n_disk - at) * sizeof(*rs->disk));
	rs->n_disk++;
	memset(&rs->disk[at], 0, sizeof(rs->disk[at]));
	snprintf(rs->disk[at].name, sizeof(rs->disk[at].name), "%s", name);
	return &rs->disk[at];
}

/* Forgets the disk of sandboxes no longer listed. */
static void disk_prune(struct res_state *rs, const struct ui_app *app)
{
	size_t kept = 0;
	struct disk_entry *e;

	for (size_t i = 0; i < rs->n_disk; i++)
		rs->disk[i].seen = 0;
	for (size_t i = 0; i < app->n_sbx; i++)
		if ((e = disk_find(rs, app->sbx[i].rec.name)) != NULL)
			e->seen = 1;
	for (size_t i = 0; i < rs->n_disk; i++) {
		if (!rs->disk[i].seen)
			continue;
		if (kept != i)
			rs->disk[kept] = rs->disk[i];
		kept++;
	}
	rs->n_disk = kept;
}

/* Unknown, or its state or activity moved, or measured long enough ago. */
static int disk_due(const struct disk_entry *e, const struct sb_sandbox_info *s, unsigned serial, long long now)
{
	long long every = s->rec.state == SB_STATE_RUNNING ? DISK_RUNNING_MS : DISK_IDLE_MS;

	if (e && e->asked_serial == serial)
		return 0;   /* asked for in this sample already */
	if (!e || !e->at)
		return 1;
	if (now - e->at < e->walk_ms * DISK_SLOW)
		return 0;
	return e->activity != s->last_activity || e->state != (int)s->rec.state || now - e->at >= every;
}

static void disk_ask_one(struct res_state *rs, const struct sb_sandbox_info *s, char *names, size_t cap, size_t *len,
			 size_t *asked, long long now)
{
	struct disk_entry *e = disk_find(rs, s->rec.name);

	if (!disk_due(e, s, rs->serial, now) || (!e && !(e = disk_add(rs, s->rec.name))))
		return;
	e->asked_serial = rs->serial;
	e->asked_activity = s->last_activity;
	e->asked_state = (int)s->rec.state;
	*len += (size_t)snprintf(names + *len, cap - *len, "+%s\n", s->rec.name);
	(*asked)++;
}

/* Up to DISK_PER_SAMPLE walks that are due: the rows on screen first (from
 * the top of the view), then those the filter hides (a disk> query needs
 * their size). Returns how many. */
static size_t disk_ask(struct res_state *rs, struct ui_app *app, char *names, size_t cap, size_t *len, long long now)
{
	size_t asked = 0, top = app->views[UI_PANE_SANDBOXES].top;

	rs->serial++;
	disk_prune(rs, app);
	for (size_t i = 0; i < app->n_order && asked < DISK_PER_SAMPLE; i++)
		disk_ask_one(rs, &app->sbx[app->order[(top + i) % app->n_order]], names, cap, len, &asked, now);
	for (size_t i = 0; i < app->n_sbx && asked < DISK_PER_SAMPLE; i++)
		disk_ask_one(rs, &app->sbx[i], names, cap, len, &asked, now);
	return asked;
}

/* arg: the names, one per line; a name starting with '+' has its disk
 * measured instead. Result lines: "name mem limit cpu_ns tasks" and
 * "=name upper workspace checkpoint sessions other total walk_ms". */
static int job_sample(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	char *save = NULL;
	long long disk_from = 0;

	(void)err;
	for (char *name = strtok_r(arg, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
		struct sb_sandbox_stats st;
		struct sb_disk_usage d;
		struct sb_error ignored;
		long long t0 = sb_clock_monotonic_ms();
		if (*name != '+') {
			if (sb_sandbox_stats(&st, root, name, &ignored) == 0)
				ui_job_result(ctx, "%s %llu %llu %llu %llu", name, st.memory_usage, st.memory_limit,
					      st.cpu_ns, st.pids);
			continue;
		}
		if (!disk_from)
			disk_from = t0;
		if (t0 - disk_from < DISK_BUDGET_MS && sb_sandbox_disk_usage(&d, root, name + 1, &ignored) == 0)
			ui_job_result(ctx, "=%s %llu %llu %llu %llu %llu %llu %lld", name + 1, d.upper, d.workspace,
				      d.checkpoint, d.sessions, d.other, d.total, sb_clock_monotonic_ms() - t0);
	}
	return 0;
}

/* A "=name ..." line into the cache; 1 when it was one of ours. */
static int parse_disk(struct res_state *rs, const char *line, long long at)
{
	char name[SB_SANDBOX_NAME_MAX + 1];
	struct sb_disk_usage d;
	long long walk_ms;
	struct disk_entry *e;

	if (sscanf(line, NAME_FMT(SB_SANDBOX_NAME_MAX) " %llu %llu %llu %llu %llu %llu %lld", name, &d.upper,
		   &d.workspace, &d.checkpoint, &d.sessions, &d.other, &d.total, &walk_ms) != 8 ||
	    !(e = disk_find(rs, name)))
		return 0;
	e->usage = d;
	e->at = at;
	e->walk_ms = walk_ms;
	e->activity = e->asked_activity;
	e->state = e->asked_state;
	return 1;
}

static void add_history(struct res_state *rs, const struct ui_memuse *m)
{
	if (strcmp(rs->hist_name, m->name)) {
		snprintf(rs->hist_name, sizeof(rs->hist_name), "%s", m->name);
		rs->n_hist = 0;
	}
	if (m->cpu_pct < 0)
		return;
	if (rs->n_hist == UI_RES_HISTORY) {
		memmove(rs->cpu, rs->cpu + 1, (UI_RES_HISTORY - 1) * sizeof(rs->cpu[0]));
		memmove(rs->mem, rs->mem + 1, (UI_RES_HISTORY - 1) * sizeof(rs->mem[0]));
		rs->n_hist--;
	}
	rs->cpu[rs->n_hist] = m->cpu_pct;
	rs->mem[rs->n_hist++] = m->used;
}

/* One sample line into m, with the CPU % from the previous sample of the same sandbox. */
static int parse_sample(struct ui_memuse *m, const char *line, const struct ui_memuse *prev, size_t n_prev, long long at)
{
	char name[SB_SANDBOX_NAME_MAX + 1];

	if (sscanf(line, NAME_FMT(SB_SANDBOX_NAME_MAX) " %llu %llu %llu %llu", name, &m->used, &m->limit, &m->cpu_ns,
		   &m->tasks) != 5)
		return -1;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->at_ms = at;
	m->cpu_pct = -1;
	for (size_t i = 0; i < n_prev; i++)
		if (!strcmp(prev[i].name, name) && at > prev[i].at_ms && m->cpu_ns >= prev[i].cpu_ns)
			m->cpu_pct = (double)(m->cpu_ns - prev[i].cpu_ns) / 1e6 * 100.0 / (double)(at - prev[i].at_ms);
	return 0;
}

static void sample_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct res_state *rs = state(app);
	struct ui_memuse prev[UI_MEMUSE_MAX];
	size_t n_prev = app->n_memuse;
	long long at = sb_clock_monotonic_ms();
	struct sb_sandbox_info *sel = ui_app_selected_sandbox(app);
	char *text = strdup(rc == 0 ? message : ""), *save = NULL;
	int disk = 0;

	(void)arg;
	if (!rs || !text) {
		free(text);
		return;
	}
	rs->busy = 0;
	memcpy(prev, app->memuse, n_prev * sizeof(prev[0]));
	app->n_memuse = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (*line == '=') {
			disk |= parse_disk(rs, line + 1, at);
			continue;
		}
		struct ui_memuse *m = &app->memuse[app->n_memuse];
		if (app->n_memuse < UI_MEMUSE_MAX && parse_sample(m, line, prev, n_prev, at) == 0) {
			app->n_memuse++;
			if (sel && !strcmp(sel->rec.name, m->name))
				add_history(rs, m);
		}
	}
	free(text);
	/* a new size can move a row of the sort by DISK or across a disk> query */
	if (disk && (app->sort_col == UI_COL_DISK || app->filters[UI_PANE_SANDBOXES].text[0]))
		ui_sandboxes_rebuild(app, NULL);
	app->dirty = 1;
}

void ui_resources_poll(struct ui_app *app)
{
	struct res_state *rs = state(app);
	size_t cap = (UI_MEMUSE_MAX + DISK_PER_SAMPLE) * (SB_SANDBOX_NAME_MAX + 3) + 1, len = 0, n = 0;
	struct sb_sandbox_info *sel = ui_app_selected_sandbox(app);
	char *names;

	if (!rs || rs->busy || app->pane != UI_PANE_SANDBOXES || app->focus_shell >= 0 || !(names = malloc(cap)))
		return;
	names[0] = '\0';
	/* the selected one first, then the first running ones of the list */
	if (sel && sel->rec.state == SB_STATE_RUNNING) {
		len += (size_t)snprintf(names + len, cap - len, "%s\n", sel->rec.name);
		n++;
	}
	for (size_t i = 0; i < app->n_order && n < UI_MEMUSE_MAX; i++) {
		const struct sb_sandbox_info *s = &app->sbx[app->order[i]];
		if (s->rec.state != SB_STATE_RUNNING || s == sel)
			continue;
		len += (size_t)snprintf(names + len, cap - len, "%s\n", s->rec.name);
		n++;
	}
	if (n == 0)
		app->n_memuse = 0;
	if (n + disk_ask(rs, app, names, cap, &len, sb_clock_monotonic_ms()) == 0) {
		free(names);
		return;
	}
	rs->busy = ui_job_start(app, "", job_sample, names, sample_done, free) == 0;
}

/* A sparkline of v (n values, 0..max) in width cells, newest right, with
 * plain characters: monochrome terminals and any font show it. */
static void sparkline(char *buf, size_t size, const double *v, size_t n, double max, size_t width)
{
	static const char levels[] = "_.-:=+*#";
	size_t from = n > width ? n - width : 0, len = 0;

	for (size_t i = from; i < n && len + 1 < size; i++) {
		int l = max > 0 ? (int)(v[i] / max * 7.0 + 0.5) : 0;
		buf[len++] = levels[l < 0 ? 0 : l > 7 ? 7 : l];
	}
	buf[len] = '\0';
}

void ui_resources_details(struct ui_app *app, const struct sb_sandbox_info *s,
			  void (*line)(void *, const char *, const char *, int), void *ctx)
{
	struct res_state *rs = state(app);
	const struct ui_memuse *m = ui_resources_find(app, s->rec.name);
	char buf[160], a[32], b[32];

	if (s->rec.state != SB_STATE_RUNNING || !m || !rs)
		return;
	if (m->cpu_pct >= 0) {
		snprintf(buf, sizeof(buf), "%.0f%%", m->cpu_pct);
		line(ctx, _("CPU"), buf, m->cpu_pct >= 90);
	}
	sb_units_format_size(a, sizeof(a), m->used, SB_UNITS_COMPACT);
	sb_units_format_size(b, sizeof(b), m->limit, SB_UNITS_COMPACT);
	if (m->limit)
		snprintf(buf, sizeof(buf), _("%s of %s (%.0f%%)"), a, b, (double)m->used * 100.0 / (double)m->limit);
	else
		snprintf(buf, sizeof(buf), "%s", a);
	line(ctx, _("Memory used"), buf, m->limit && m->used * 10 >= m->limit * 9);
	snprintf(buf, sizeof(buf), _("%llu (host tasks of the sandbox)"), m->tasks);
	line(ctx, _("Tasks"), buf, 0);
	const struct sb_disk_usage *d = ui_resources_disk(app, s->rec.name);
	if (d) {
		sb_units_format_size(a, sizeof(a), d->upper, SB_UNITS_COMPACT);
		sb_units_format_size(b, sizeof(b), d->workspace, SB_UNITS_COMPACT);
		snprintf(buf, sizeof(buf), _("%s own disk, %s workspace"), a, b);
		line(ctx, _("Disk"), buf, 0);
	}
	if (strcmp(rs->hist_name, s->rec.name) || rs->n_hist < 2)
		return;
	double mem[UI_RES_HISTORY], max_cpu = 100, max_mem = 0;
	char spark[UI_RES_HISTORY + 1];
	for (size_t i = 0; i < rs->n_hist; i++) {
		mem[i] = (double)rs->mem[i];
		max_cpu = rs->cpu[i] > max_cpu ? rs->cpu[i] : max_cpu;
		max_mem = mem[i] > max_mem ? mem[i] : max_mem;
	}
	sparkline(spark, sizeof(spark), rs->cpu, rs->n_hist, max_cpu, UI_RES_HISTORY);
	snprintf(buf, sizeof(buf), "[%-*s] %.0f%%", UI_RES_HISTORY, spark, max_cpu);
	line(ctx, _("CPU history"), buf, 0);
	sparkline(spark, sizeof(spark), mem, rs->n_hist, m->limit ? (double)m->limit : max_mem, UI_RES_HISTORY);
	sb_units_format_size(b, sizeof(b), m->limit ? m->limit : (unsigned long long)max_mem, SB_UNITS_COMPACT);
	snprintf(buf, sizeof(buf), "[%-*s] %s", UI_RES_HISTORY, spark, b);
	line(ctx, _("Mem history"), buf, 0);
}
