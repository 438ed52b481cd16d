/* Live resources of the running sandboxes: CPU %, memory against its limit,
 * tasks (the library reads the sandbox's cgroup: no runsc call), the disk of
 * the selected one (walked at most every DISK_MS, in the job's child), and a
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

#define DISK_MS 30000   /* a big workspace is walked at most this often */
/* "%63s": a name of at most SB_SANDBOX_NAME_MAX bytes */
#define NAME_FMT_(n) "%" #n "s"
#define NAME_FMT(n) NAME_FMT_(n)

struct res_state {
	/* the selected sandbox's history, oldest first */
	char hist_name[SB_SANDBOX_NAME_MAX + 1];
	double cpu[UI_RES_HISTORY];
	unsigned long long mem[UI_RES_HISTORY];
	size_t n_hist;
	/* the disk of one sandbox, cached */
	char disk_name[SB_SANDBOX_NAME_MAX + 1];
	struct sb_disk_usage disk;
	long long disk_at;   /* monotonic ms; 0: never */
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
	free(app->resources);
	app->resources = NULL;
}

const struct ui_memuse *ui_resources_find(const struct ui_app *app, const char *name)
{
	for (size_t i = 0; i < app->n_memuse; i++)
		if (!strcmp(app->memuse[i].name, name))
			return &app->memuse[i];
	return NULL;
}

/* arg: the names, one per line; a name starting with '+' also has its disk
 * measured. Result lines: "name mem limit cpu_ns tasks" and "=name upper workspace". */
static int job_sample(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	char *save = NULL;

	(void)err;
	for (char *name = strtok_r(arg, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
		struct sb_sandbox_stats st;
		struct sb_disk_usage d;
		struct sb_error ignored;
		int disk = *name == '+';
		name += disk;
		if (sb_sandbox_stats(&st, root, name, &ignored) == 0)
			ui_job_result(ctx, "%s %llu %llu %llu %llu", name, st.memory_usage, st.memory_limit, st.cpu_ns,
				      st.pids);
		if (disk && sb_sandbox_disk_usage(&d, root, name, &ignored) == 0)
			ui_job_result(ctx, "=%s %llu %llu", name, d.upper, d.workspace);
	}
	return 0;
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
			if (sscanf(line + 1, NAME_FMT(SB_SANDBOX_NAME_MAX) " %llu %llu", rs->disk_name, &rs->disk.upper,
				   &rs->disk.workspace) == 3)
				rs->disk_at = at;
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
	app->dirty = 1;
}

void ui_resources_poll(struct ui_app *app)
{
	struct res_state *rs = state(app);
	size_t cap = UI_MEMUSE_MAX * (SB_SANDBOX_NAME_MAX + 3) + 1, len = 0, n = 0;
	struct sb_sandbox_info *sel = ui_app_selected_sandbox(app);
	long long now = sb_clock_monotonic_ms();
	char *names;

	if (!rs || rs->busy || app->pane != UI_PANE_SANDBOXES || app->focus_shell >= 0 || !(names = malloc(cap)))
		return;
	names[0] = '\0';
	/* the selected one first (its disk when due), then the first running ones of the list */
	if (sel && sel->rec.state == SB_STATE_RUNNING) {
		int disk = strcmp(rs->disk_name, sel->rec.name) || !rs->disk_at || now - rs->disk_at >= DISK_MS;
		len += (size_t)snprintf(names + len, cap - len, "%s%s\n", disk ? "+" : "", sel->rec.name);
		n++;
	}
	for (size_t i = 0; i < app->n_order && n < UI_MEMUSE_MAX; i++) {
		const struct sb_sandbox_info *s = &app->sbx[app->order[i]];
		if (s->rec.state != SB_STATE_RUNNING || s == sel)
			continue;
		len += (size_t)snprintf(names + len, cap - len, "%s\n", s->rec.name);
		n++;
	}
	if (n == 0) {
		app->n_memuse = 0;
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
	if (!strcmp(rs->disk_name, s->rec.name) && rs->disk_at) {
		sb_units_format_size(a, sizeof(a), rs->disk.upper, SB_UNITS_COMPACT);
		sb_units_format_size(b, sizeof(b), rs->disk.workspace, SB_UNITS_COMPACT);
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
