/* The diff view: what a sandbox changed against its pinned image (the root
 * file system), and the files of its workspace and of the exchange folder,
 * each area apart (sandbox/files.h), computed in a job (a big tree takes a
 * while) and shown when it is done. C copies the selected file out: the
 * host path is asked for in the status line, the copy (the library's cp,
 * resolved inside the sandbox) runs as a job. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "draw.h"
#include "base/i18n.h"
#include "base/units.h"
#include "sandbox/files.h"
#include "ui.h"

struct drow {
	int header;                  /* an area's heading (entry: the area) */
	size_t entry;
};

struct diff_view {
	char name[SB_SANDBOX_NAME_MAX + 1];
	struct sb_diff *d;
	struct drow *rows;
	size_t n, selected, top;
};

/* The copy being asked for: the prompt's callback has no context. */
static struct {
	char name[SB_SANDBOX_NAME_MAX + 1];
	char path[PATH_MAX];
	int back_to_diff;            /* reopen the diff view after the prompt */
} pending;

static const char *area_title(enum sb_diff_area a)
{
	static const char *const titles[SB_DIFF_AREAS] = {
		[SB_DIFF_ROOT] = N_("Root file system, against the image"),
		[SB_DIFF_WORKSPACE] = N_("/workspace (every file: no image to compare with)"),
		[SB_DIFF_EXCHANGE] = N_("/exchange (shared with other sandboxes)"),
	};

	return _(titles[a]);
}

static void diff_data_free(struct sb_diff *d);

void ui_diff_free(struct ui_app *app)
{
	struct diff_view *v = app->diff;

	if (!v)
		return;
	diff_data_free(v->d);
	free(v->rows);
	free(v);
	app->diff = NULL;
}

static int build_rows(struct diff_view *v)
{
	v->rows = calloc(v->d->count + SB_DIFF_AREAS, sizeof(*v->rows));
	if (!v->rows)
		return -1;
	for (int a = 0; a < SB_DIFF_AREAS; a++) {
		if (a == SB_DIFF_EXCHANGE && !v->d->exchange)
			continue;
		v->rows[v->n++] = (struct drow){ .header = 1, .entry = (size_t)a };
		for (size_t i = 0; i < v->d->count; i++)
			if (v->d->entries[i].area == (enum sb_diff_area)a)
				v->rows[v->n++] = (struct drow){ .entry = i };
	}
	return 0;
}

/* ---- the diff runs as a job: a large tree must not freeze the screen ----
 * The child writes the diff into a memory file the parent made (inherited
 * through the fork): a header record, then one per entry, each ended by a
 * NUL (a guest's path may hold any other byte). The parent rebuilds a struct
 * sb_diff of its own from it (freed by diff_data_free, not the library). */

#define DIFF_DATA_MAX (256ULL << 20)

struct diff_job {
	char name[SB_SANDBOX_NAME_MAX + 1];
	int fd;                      /* the workbench's */
	pid_t owner;                 /* the workbench: a job closes what it inherited, it reopens the file */
};

static void diff_job_free(void *arg)
{
	struct diff_job *j = arg;

	close(j->fd);
	free(j);
}

static int job_diff(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct diff_job *j = arg;
	struct sb_diff *d;
	char path[64];
	FILE *f;
	int rc = sb_sandbox_diff(&d, root, j->name, NULL, err);

	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)j->owner, j->fd);
	if (!(f = fopen(path, "we"))) {
		rc = sb_error_set(err, SB_ERR_IO, _("cannot hand the diff over: %s"), strerror(errno));
		sb_diff_free(d);
		return rc;
	}
	fprintf(f, "%d %d %zu %zu %zu %llu %llu %llu", d->running, d->exchange, d->more[0], d->more[1], d->more[2],
		d->bytes[0], d->bytes[1], d->bytes[2]);
	fputc('\0', f);
	for (size_t i = 0; i < d->count; i++) {
		const struct sb_diff_entry *e = &d->entries[i];
		fprintf(f, "%d %d %d %llu %lld %d %s", (int)e->area, (int)e->kind, (int)e->type, e->size, e->mtime,
			e->opaque, e->path);
		fputc('\0', f);
	}
	int failed = ferror(f); /* a write that failed before the last flush shows only here */
	rc = fclose(f) == 0 && !failed ? 0 : sb_error_set(err, SB_ERR_IO, _("cannot hand the diff over: %s"), strerror(errno));
	ui_job_result(ctx, "%zu", d->count);
	sb_diff_free(d);
	return rc;
}

static void diff_data_free(struct sb_diff *d)
{
	for (size_t i = 0; d && i < d->count; i++)
		free(d->entries[i].path);
	if (d)
		free(d->entries);
	free(d);
}

static int parse_entry(struct sb_diff_entry *e, const char *rec)
{
	int area, kind, type, n = -1;

	if (sscanf(rec, "%d %d %d %llu %lld %d %n", &area, &kind, &type, &e->size, &e->mtime, &e->opaque, &n) < 6 ||
	    n < 0 || area < 0 || area >= SB_DIFF_AREAS)
		return -1;
	e->area = (enum sb_diff_area)area;
	e->kind = (enum sb_diff_kind)kind;
	e->type = (char)type;
	return (e->path = strdup(rec + n)) ? 0 : -1;
}

/* The records of data[0..len) (len > 0, data[len - 1] == NUL) as a diff. */
static struct sb_diff *parse_data(const char *data, size_t len)
{
	struct sb_diff *d = calloc(1, sizeof(*d));
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += data[i] == '\0';
	/* NOLINTNEXTLINE(clang-analyzer-optin.portability.UnixAPI): data ends in NUL, so n > 0 */
	if (!d || !(d->entries = calloc(n, sizeof(*d->entries))) ||
	    sscanf(data, "%d %d %zu %zu %zu %llu %llu %llu", &d->running, &d->exchange, &d->more[0], &d->more[1],
		   &d->more[2], &d->bytes[0], &d->bytes[1], &d->bytes[2]) != 8) {
		diff_data_free(d);
		return NULL;
	}
	for (const char *rec = data + strlen(data) + 1; rec < data + len; rec += strlen(rec) + 1) {
		if (parse_entry(&d->entries[d->count], rec) < 0) {
			diff_data_free(d);
			return NULL;
		}
		d->count++;
	}
	return d;
}

static struct sb_diff *read_data(int fd)
{
	struct stat st;
	struct sb_diff *d = NULL;
	char *data;

	if (fstat(fd, &st) < 0 || st.st_size < 1 || (unsigned long long)st.st_size > DIFF_DATA_MAX ||
	    !(data = malloc((size_t)st.st_size)))
		return NULL;
	if (pread(fd, data, (size_t)st.st_size, 0) == st.st_size && data[st.st_size - 1] == '\0')
		d = parse_data(data, (size_t)st.st_size);
	free(data);
	return d;
}

static void diff_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	struct diff_job *j = arg;
	struct diff_view *v;

	if (rc < 0) {
		ui_app_message(app, 1, "%s", message);
		return;
	}
	if (!(v = calloc(1, sizeof(*v))) || !(v->d = read_data(j->fd)) || build_rows(v) < 0) {
		if (v)
			diff_data_free(v->d);
		free(v);
		ui_app_message(app, 1, _("%s: the diff could not be read back"), j->name);
		return;
	}
	snprintf(v->name, sizeof(v->name), "%s", j->name);
	ui_diff_free(app);
	app->diff = v;
	v->selected = v->n > 1 ? 1 : 0;
	if (app->overlay == UI_OV_NONE || app->overlay == UI_OV_DIFF) {
		app->overlay = UI_OV_DIFF;   /* not over a dialog opened meanwhile: D shows it again */
		app->dirty = 1;
	}
}

void ui_diff_open(struct ui_app *app, const char *name)
{
	struct diff_job *j = calloc(1, sizeof(*j));
	char label[SB_SANDBOX_NAME_MAX + 64];

	if (!j || (j->fd = memfd_create("sandbench-diff", MFD_CLOEXEC)) < 0) {
		free(j);
		ui_app_message(app, 1, _("cannot make room for the diff: %s"), strerror(errno));
		return;
	}
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->owner = getpid();
	snprintf(label, sizeof(label), _("diff of %s"), name);
	ui_job_start(app, label, job_diff, j, diff_done, diff_job_free);
}

static void area_line(const struct diff_view *v, enum sb_diff_area a, char *buf, size_t size)
{
	char bytes[32];
	size_t n = 0;

	for (size_t i = 0; i < v->d->count; i++)
		n += v->d->entries[i].area == a;
	sb_units_format_size(bytes, sizeof(bytes), v->d->bytes[a], SB_UNITS_COMPACT);
	if (v->d->more[a])
		snprintf(buf, size, _("%s: %zu listed, %zu more, %s"), area_title(a), n, v->d->more[a], bytes);
	else
		snprintf(buf, size, _("%s: %zu, %s"), area_title(a), n, bytes);
}

static void entry_line(const struct sb_diff_entry *e, char *buf, size_t size)
{
	char bytes[32] = "";

	if (e->type == 'f')
		sb_units_format_size(bytes, sizeof(bytes), e->size, SB_UNITS_COMPACT);
	snprintf(buf, size, "  %c %c %8s  %s%s", (char)e->kind, e->type, bytes, e->path,
		 e->opaque ? _("  (made again: nothing of the image's below it)") : "");
}

void ui_diff_draw(struct ui_app *app)
{
	struct diff_view *v = app->diff;
	struct ui_rect r = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 8);
	WINDOW *w = app->w_overlay;
	int body = r.h - 3;
	char title[160], line[PATH_MAX + 200], keys[32];

	if (!v)
		return;
	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	snprintf(title, sizeof(title), _("%s: what changed%s"), v->name,
		 v->d->running ? _(" (running: a write in flight may be missing)") : "");
	ui_draw_box(w, title);
	if (v->selected < v->top)
		v->top = v->selected;
	if (body > 0 && v->selected >= v->top + (size_t)body)
		v->top = v->selected - (size_t)body + 1;
	for (int i = 0; i < body && v->top + (size_t)i < v->n; i++) {
		const struct drow *row = &v->rows[v->top + (size_t)i];
		int sel = v->top + (size_t)i == v->selected;
		if (row->header)
			area_line(v, (enum sb_diff_area)row->entry, line, sizeof(line));
		else
			entry_line(&v->d->entries[row->entry], line, sizeof(line));
		ui_draw_text(w, 1 + i, 1, r.w - 2, line,
			     sel ? ui_theme_attr(UI_ROLE_SELECTED)
				 : ui_theme_attr(row->header ? UI_ROLE_COLUMNS : UI_ROLE_DIALOG),
			     UI_LEFT);
	}
	ui_keymap_describe(&app->keys, UI_ACT_COPY_OUT, keys, sizeof(keys));
	snprintf(line, sizeof(line), _(" A added, C changed, D deleted   %s: copy the file out   Esc closes "), keys);
	ui_draw_put(w, r.h - 1, 2, r.w - 4, line, ui_theme_attr(UI_ROLE_DIALOG));
}

static void copy_selected(struct ui_app *app, struct diff_view *v)
{
	const struct drow *row = v->selected < v->n ? &v->rows[v->selected] : NULL;
	const struct sb_diff_entry *e = row && !row->header ? &v->d->entries[row->entry] : NULL;

	if (!e || e->kind == SB_DIFF_DELETED || (e->type != 'f' && e->type != 'd' && e->type != 'l')) {
		ui_app_message(app, 1, _("select a file that is there to copy it out"));
		return;
	}
	ui_copy_out_ask(app, v->name, e->path);
	pending.back_to_diff = 1;
}

void ui_diff_key(struct ui_app *app, int key)
{
	struct diff_view *v = app->diff;
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);
	size_t page = app->layout.rows > 8 ? (size_t)app->layout.rows - 8 : 1;

	app->dirty = 1;
	if (!v || key == 27 || a == UI_ACT_QUIT || a == UI_ACT_DIFF) {
		ui_overlay_close(app);
		ui_diff_free(app);
		return;
	}
	if (a == UI_ACT_DOWN && v->selected + 1 < v->n)
		v->selected++;
	else if (a == UI_ACT_UP && v->selected > 0)
		v->selected--;
	else if (a == UI_ACT_PAGE_DOWN)
		v->selected = v->selected + page < v->n ? v->selected + page : (v->n ? v->n - 1 : 0);
	else if (a == UI_ACT_PAGE_UP)
		v->selected = v->selected > page ? v->selected - page : 0;
	else if (a == UI_ACT_TOP)
		v->selected = 0;
	else if (a == UI_ACT_BOTTOM)
		v->selected = v->n ? v->n - 1 : 0;
	else if (a == UI_ACT_COPY_OUT || a == UI_ACT_SHELL)
		copy_selected(app, v);
	else if (a == UI_ACT_REFRESH) {
		char name[SB_SANDBOX_NAME_MAX + 1];
		snprintf(name, sizeof(name), "%s", v->name);
		ui_diff_open(app, name);
	}
}

/* ---- copying out ---- */

struct copy_job {
	char name[SB_SANDBOX_NAME_MAX + 1];
	char path[PATH_MAX], host[PATH_MAX];
	int recursive;
};

static int job_copy(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct copy_job *c = arg;
	struct sb_copy_opts o = { .flags = c->recursive ? SB_COPY_RECURSIVE : 0 };
	struct sb_copy_result res = { 0 };
	char bytes[32];
	int rc = sb_sandbox_copy_out(&res, root, c->name, c->path, c->host, &o, err);

	if (rc == SB_ERR_INVALID && !c->recursive) {
		/* a directory: copy the tree */
		sb_copy_result_clear(&res);
		memset(&res, 0, sizeof(res));
		o.flags |= SB_COPY_RECURSIVE;
		rc = sb_sandbox_copy_out(&res, root, c->name, c->path, c->host, &o, err);
	}
	if (rc == 0) {
		sb_units_format_size(bytes, sizeof(bytes), res.bytes, SB_UNITS_COMPACT);
		ui_job_result(ctx, _("copied %s:%s to %s (%s, %llu files)"), c->name, c->path, c->host, bytes, res.files);
	}
	sb_copy_result_clear(&res);
	return rc;
}

static void copy_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	ui_app_message(app, rc < 0, "%s", message);
	ui_event_add(app, rc < 0, "%s", message);
}

static void host_path_done(struct ui_app *app, const char *text)
{
	struct copy_job *c;
	char label[PATH_MAX + 64];

	if (pending.back_to_diff && app->diff) {
		app->overlay = UI_OV_DIFF;
		app->dirty = 1;
	}
	pending.back_to_diff = 0;
	if (!*text)
		return;
	if (!(c = calloc(1, sizeof(*c)))) {
		ui_app_message(app, 1, _("out of memory"));
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", pending.name);
	snprintf(c->path, sizeof(c->path), "%s", pending.path);
	snprintf(c->host, sizeof(c->host), "%s", text);
	snprintf(label, sizeof(label), _("copying %s:%s"), c->name, c->path);
	ui_job_start(app, label, job_copy, c, copy_done, free);
}

void ui_copy_out_ask(struct ui_app *app, const char *name, const char *path)
{
	char cwd[PATH_MAX], initial[PATH_MAX + 256], label[PATH_MAX + 128];
	const char *base = strrchr(path, '/');

	snprintf(pending.name, sizeof(pending.name), "%s", name);
	snprintf(pending.path, sizeof(pending.path), "%s", path);
	pending.back_to_diff = 0;
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/tmp");
	snprintf(initial, sizeof(initial), "%s/%s", strcmp(cwd, "/") ? cwd : "", base && base[1] ? base + 1 : name);
	snprintf(label, sizeof(label), _("copy %s:%s to the host path:"), name, path);
	ui_prompt_open(app, label, initial, host_path_done);
}

static void guest_path_done(struct ui_app *app, const char *text)
{
	if (!*text)
		return;
	char name[sizeof(pending.name)];

	if (text[0] != '/') {
		ui_app_message(app, 1, _("'%s' is not an absolute path inside the sandbox"), text);
		return;
	}
	snprintf(name, sizeof(name), "%s", pending.name);   /* ui_copy_out_ask sets pending */
	ui_copy_out_ask(app, name, text);
}

void ui_copy_out_ask_path(struct ui_app *app, const char *name, const char *initial)
{
	char label[SB_SANDBOX_NAME_MAX + 64];

	snprintf(pending.name, sizeof(pending.name), "%s", name);
	snprintf(label, sizeof(label), _("copy out of %s, the path inside:"), name);
	ui_prompt_open(app, label, initial ? initial : "/workspace/", guest_path_done);
}
