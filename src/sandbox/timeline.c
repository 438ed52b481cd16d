/* The timeline: see timeline.h; the file format is in docs/timeline.md.
 *
 * Each file starts with a header line {"timeline":1,"base":N}: N is the
 * absolute position of its first byte, so that a position (base + offset)
 * names the same line before and after a rotation. Appenders hold a shared
 * flock on the file while they write; a rotation holds it exclusively,
 * swaps a fresh file in and marks the old one read-only (mode 0400), which
 * tells an appender that waited for it to open the new one. Creating and
 * rotating the file happen under the sandbox's own lock, so that they never
 * race with its removal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/utf8.h"
#include "sandbox/timeline.h"

#define FILE_NAME "timeline.jsonl"
#define OLD_NAME "timeline.jsonl.1"
#define TEXT_MAX (64 << 10)
/* a line is at most the texts and copies with every byte escaped as \u00XX */
#define LINE_MAX (2 << 20)
/* what one read takes of a file at most: its newest part */
#define READ_MAX (128 << 20)
#define HEADER_MAX 64
#define SEALED_MODE 0400

static const char *const kind_names[] = {
	[SB_TIMELINE_EXEC] = "exec", [SB_TIMELINE_INPUT] = "input",
	[SB_TIMELINE_LIFECYCLE] = "lifecycle", [SB_TIMELINE_FILE] = "file",
	[SB_TIMELINE_COMMIT] = "commit", [SB_TIMELINE_NETWORK] = "network",
	[SB_TIMELINE_SERVICE] = "service", [SB_TIMELINE_SESSION] = "session",
};
static const char *const source_names[] = {
	[SB_TIMELINE_AGENT] = "agent", [SB_TIMELINE_HUMAN] = "human",
	[SB_TIMELINE_WORKBENCH] = "workbench", [SB_TIMELINE_SANDBENCH] = "sandbench",
};
static enum sb_timeline_source actor = SB_TIMELINE_AGENT;

const char *sb_timeline_kind_name(enum sb_timeline_kind k) { return sb_enum_name(kind_names, SB_ENUM_NAMES(kind_names), k); }
const char *sb_timeline_source_name(enum sb_timeline_source s) { return sb_enum_name(source_names, SB_ENUM_NAMES(source_names), s); }
int sb_timeline_kind_parse(const char *s) { return sb_enum_parse(kind_names, SB_ENUM_NAMES(kind_names), s); }
int sb_timeline_source_parse(const char *s) { return sb_enum_parse(source_names, SB_ENUM_NAMES(source_names), s); }
void sb_timeline_set_actor(enum sb_timeline_source s) { actor = s; }
enum sb_timeline_source sb_timeline_actor(void) { return actor; }

/* ---- the line ---- */

/* A JSON string of s, bytes that are not UTF-8 (binary output) given as U+FFFD. */
static json_t *text_json(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);

	if (j || !s)
		return j;
	struct sb_buf b = { 0 };
	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		/* the character at i is the shortest valid prefix there, if any */
		for (n = 1; n <= 4 && (i + n > len || !sb_utf8_valid(s + i, n)); n++)
			;
		n = n <= 4 ? n : 0;
		if (sb_buf_add(&b, n ? s + i : "\xef\xbf\xbd", n ? n : 3) < 0) {
			sb_buf_clear(&b);
			return NULL;
		}
	}
	j = json_stringn(b.data ? b.data : "", b.len);
	sb_buf_clear(&b);
	return j;
}

static json_t *set_text(json_t *o, const char *key, const char *s)
{
	return s ? sb_json_set(o, key, text_json(s, strlen(s))) : o;
}

json_t *sb_timeline_entry_to_json(const struct sb_timeline_entry *e)
{
	json_t *o = json_pack("{s:I, s:s, s:s}", "time_ms", (json_int_t)e->time_ms, "kind", sb_timeline_kind_name(e->kind),
			      "source", sb_timeline_source_name(e->source));

	o = set_text(o, "text", e->text);
	o = set_text(o, "cwd", e->cwd);
	o = set_text(o, "detail", e->detail);
	o = set_text(o, "session", e->session);
	if (e->exit_code >= 0)
		o = sb_json_set(o, "exit", json_integer(e->exit_code));
	if (e->timed_out)
		o = sb_json_set(o, "timed_out", json_true());
	if (e->duration_ms >= 0)
		o = sb_json_set(o, "duration_ms", json_integer(e->duration_ms));
	if (e->out_bytes >= 0)
		o = sb_json_set(o, "out_bytes", json_integer(e->out_bytes));
	if (e->out)
		o = sb_json_set(o, "stdout", text_json(e->out, e->out_len));
	if (e->err)
		o = sb_json_set(o, "stderr", text_json(e->err, e->err_len));
	if (e->out || e->err || e->truncated)
		o = sb_json_set(o, "truncated", json_boolean(e->truncated));
	if (e->secrets && e->secrets[0]) {
		json_t *names = json_array();
		for (const char *const *s = e->secrets; *s; s++)
			names = sb_json_append(names, text_json(*s, strlen(*s)));
		o = sb_json_set(o, "secrets", names);
	}
	return o;
}

/* The entry's texts and copies as written: redacted, then cut at their caps. */
struct prepared {
	char *text[4];                       /* text, cwd, detail, session */
	struct sb_buf copy[2];               /* stdout, stderr */
	int truncated;
};

static char *prepare_text(struct prepared *p, struct sb_redact *r, const char *s)
{
	size_t len;
	char *t = s ? sb_redact_text(r, s, strlen(s), &len) : NULL;

	if (t && len > TEXT_MAX) {
		t[sb_utf8_boundary(t, TEXT_MAX)] = '\0';
		p->truncated = 1;
	}
	return t;
}

/* The first cap bytes of the redacted stream. A stream's redacted output is
 * a prefix of the whole text's, so feeding stops once cap bytes came out. A
 * copy that is not complete (the command wrote more than was kept) is never
 * flushed: its held-back tail may be the start of a secret. */
static int prepare_copy(struct sb_buf *out, int *truncated, struct sb_redact *r, const char *data, size_t len,
			int complete, size_t cap)
{
	struct sb_buf scratch = { 0 };
	size_t used = 0;
	int rc = 0;

	if (!r) {
		/* a few bytes past the cap show where its character ends */
		used = len < cap + 4 ? len : cap + 4;
		rc = sb_buf_add(out, data, used);
	} else {
		while (rc == 0 && used < len && out->len < cap) {
			size_t n = len - used < 4096 ? len - used : 4096;
			rc = sb_redact_feed(r, out, data + used, n);
			used += n;
		}
		/* the redactor is empty again for the next text either way */
		if (rc == 0)
			rc = sb_redact_flush(r, used == len && complete ? out : &scratch);
		sb_buf_clear(&scratch);
	}
	if (rc < 0)
		return rc;
	int cut = out->len > cap || used < len || !complete;
	if (out->len > cap)
		out->len = sb_utf8_boundary(out->data, cap);
	else if (cut)
		out->len = sb_utf8_boundary(out->data, out->len);
	*truncated |= cut;
	return 0;
}

static void prepared_clear(struct prepared *p)
{
	for (size_t i = 0; i < 4; i++)
		free(p->text[i]);
	sb_buf_clear(&p->copy[0]);
	sb_buf_clear(&p->copy[1]);
}

/* The line to append, "\n{...}\n": the caller writes it from the second byte
 * unless the file's last line is unfinished (*len without the first byte). */
static char *entry_line(size_t *len, const struct sb_timeline_entry *e, struct sb_redact *r, size_t output_max)
{
	struct prepared p = { 0 };
	struct sb_timeline_entry w = *e;
	const char *const texts[4] = { e->text, e->cwd, e->detail, e->session };
	const char **dst[4] = { &w.text, &w.cwd, &w.detail, &w.session };
	char *line = NULL;
	int failed = 0;
	/* out_bytes counts both streams: when the copies are short, either may be */
	int complete = e->out_bytes < 0 || e->out_len + e->err_len >= (unsigned long long)e->out_bytes;

	for (size_t i = 0; i < 4; i++)
		if (texts[i] && !(*dst[i] = p.text[i] = prepare_text(&p, r, texts[i])))
			failed = 1;
	if (!failed && e->out)
		failed = prepare_copy(&p.copy[0], &p.truncated, r, e->out, e->out_len, complete, output_max) < 0;
	if (!failed && e->err)
		failed = prepare_copy(&p.copy[1], &p.truncated, r, e->err, e->err_len, complete, output_max) < 0;
	w.out = e->out ? (p.copy[0].data ? p.copy[0].data : "") : NULL;
	w.out_len = p.copy[0].len;
	w.err = e->err ? (p.copy[1].data ? p.copy[1].data : "") : NULL;
	w.err_len = p.copy[1].len;
	w.truncated = e->truncated || p.truncated;
	if (!w.time_ms)
		w.time_ms = sb_clock_now_ms();
	json_t *doc = failed ? NULL : sb_timeline_entry_to_json(&w);
	char *body = doc ? sb_json_dumps(doc, JSON_COMPACT) : NULL;
	if (body && (line = sb_strdupf("\n%s\n", body)))
		*len = strlen(line) - 1;
	json_decref(doc);
	free(body);
	prepared_clear(&p);
	return line;
}

/* ---- the files ---- */

struct files {
	char *dir, *cur, *old, *tmp, *lock;
	const char *name;
};

static void files_clear(struct files *f)
{
	free(f->dir);
	free(f->cur);
	free(f->old);
	free(f->tmp);
	free(f->lock);
}

static int files_init(struct files *f, struct sb_root *root, const char *name, struct sb_error *err)
{
	int rc;

	memset(f, 0, sizeof(*f));
	f->name = name;
	if ((rc = sb_sandbox_name_check(name, err)) < 0)
		return rc;
	char *rel = sb_strdupf("sandboxes/%s", name), tmp[64];
	f->dir = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	snprintf(tmp, sizeof(tmp), FILE_NAME ".new.%ld", (long)getpid());
	if (!f->dir || !(f->cur = sb_path_join(f->dir, FILE_NAME)) || !(f->old = sb_path_join(f->dir, OLD_NAME)) ||
	    !(f->tmp = sb_path_join(f->dir, tmp)) || !(f->lock = sb_path_join(f->dir, "lock"))) {
		files_clear(f);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

static int not_found(const struct files *f, struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), f->name);
}

static int io_error(const struct files *f, int e, struct sb_error *err)
{
	return sb_error_errno(err, SB_ERR_IO, e, _("cannot write the timeline of sandbox '%s'"), f->name);
}

/* The sandbox's lock, shared: held while the file is created or rotated, so
 * that this never races with the sandbox's removal. -1 and SB_ERR_NOTFOUND
 * when the sandbox is gone. */
static int lock_sandbox(const struct files *f, struct sb_error *err)
{
	int fd = open(f->lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return errno == ENOENT ? not_found(f, err) : io_error(f, errno, err);
	while (flock(fd, LOCK_SH) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return io_error(f, e, err);
		}
	}
	return fd;
}

/* The base of the file open at fd (its header), 0 when it has none. */
static unsigned long long file_base(int fd)
{
	char buf[HEADER_MAX + 1];
	ssize_t n = pread(fd, buf, HEADER_MAX, 0);
	unsigned long long base = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (!nl)
		return 0;
	*nl = '\0';
	json_t *doc = json_loads(buf, 0, NULL), *b = json_object_get(doc, "base");
	if (json_is_integer(b) && json_integer_value(b) >= 0 && !json_object_get(doc, "kind"))
		base = (unsigned long long)json_integer_value(b);
	json_decref(doc);
	return base;
}

/* A fresh file holding only its header, at f->tmp. */
static int write_fresh(const struct files *f, unsigned long long base, struct sb_error *err)
{
	char header[HEADER_MAX];
	int n = snprintf(header, sizeof(header), "{\"timeline\":1,\"base\":%llu}\n", base);
	int fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return errno == ENOENT ? not_found(f, err) : io_error(f, errno, err);
	/* whatever the umask: 0400 would read as sealed */
	int rc = fchmod(fd, 0600) < 0 || sb_fs_write_all(fd, header, (size_t)n) < 0 ? io_error(f, errno, err) : 0;
	close(fd);
	if (rc < 0)
		unlink(f->tmp);
	return rc;
}

/* Creates the file (none yet). Losing the race to another creator is fine. */
static int create_file(const struct files *f, int locked, struct sb_error *err)
{
	int lock = locked ? -1 : lock_sandbox(f, err);
	int rc = lock < 0 && !locked ? lock : write_fresh(f, 0, err);

	if (rc == 0 && renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->cur, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST)
			rc = io_error(f, errno, err);
		unlink(f->tmp);
	}
	if (lock >= 0)
		close(lock);
	return rc;
}

/* Rotates the full file open at fd (whose shared flock the caller holds):
 * a fresh file takes its place, it becomes timeline.jsonl.1 (replacing the
 * older one) and is sealed. Whoever rotated first wins; the caller then
 * appends to whatever file is current. */
static int rotate(const struct files *f, int fd, int locked, struct sb_error *err)
{
	int lock = locked ? -1 : lock_sandbox(f, err);
	struct stat st;
	int rc = 0;

	if (lock < 0 && !locked)
		return lock;
	/* not atomic: another appender may rotate while this waits, then fd is sealed */
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (fstat(fd, &st) < 0) {
		rc = io_error(f, errno, err);
	} else if ((st.st_mode & 0777) != SEALED_MODE) {
		rc = write_fresh(f, file_base(fd) + (unsigned long long)st.st_size, err);
		/* exchanged, there is never a moment without a current file; the
		 * older one goes first: ext4 writes out a file renamed over another
		 * at once (auto_da_alloc), milliseconds on an exec's path */
		if (rc == 0 && renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->cur, RENAME_EXCHANGE) == 0)
			rc = (unlink(f->old) < 0 && errno != ENOENT) || rename(f->tmp, f->old) < 0 ? io_error(f, errno, err) : 0;
		else if (rc == 0 && (rename(f->cur, f->old) < 0 || rename(f->tmp, f->cur) < 0))
			rc = io_error(f, errno, err);
		if (rc == 0)
			fchmod(fd, SEALED_MODE);
		unlink(f->tmp);
	}
	if (lock >= 0)
		close(lock);
	return rc;
}

/* One attempt: 0 written, 1 try again (the file was created, rotated or
 * sealed meanwhile), or a negative error. */
static int append_once(const struct files *f, char *line, size_t len, size_t file_max, int locked,
		       struct sb_error *err)
{
	struct stat st;
	char last = '\n';
	int fd = open(f->cur, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY), rc = 0;

	if (fd < 0) {
		if (errno != ENOENT)
			return io_error(f, errno, err);
		return (rc = create_file(f, locked, err)) < 0 ? rc : 1;
	}
	while (flock(fd, LOCK_SH) < 0 && errno == EINTR)
		;
	if (fstat(fd, &st) < 0)
		rc = io_error(f, errno, err);
	else if (!S_ISREG(st.st_mode))
		rc = sb_error_set(err, SB_ERR_UNSAFE, _("the timeline of sandbox '%s' is not a regular file"), f->name);
	else if ((st.st_mode & 0777) == SEALED_MODE)
		rc = 1;
	else if (st.st_size > HEADER_MAX && (size_t)st.st_size + len > file_max)
		rc = (rc = rotate(f, fd, locked, err)) < 0 ? rc : 1;
	if (rc == 0) {
		/* a torn last line (a crash mid-write) is ended first: it stays one
		 * malformed line instead of swallowing this entry */
		if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
			last = '\n';
		size_t skip = last == '\n';
		ssize_t w = write(fd, line + skip, len + 1 - skip);
		if (w < 0)
			rc = io_error(f, errno, err);
		else if ((size_t)w != len + 1 - skip)
			rc = sb_error_set(err, SB_ERR_NOSPACE, _("the timeline of sandbox '%s' is short of space"), f->name);
	}
	close(fd);
	return rc;
}

int sb_timeline_add(struct sb_root *root, const char *name, const struct sb_settings *set, int locked,
		    const struct sb_timeline_entry *e, struct sb_redact *r, struct sb_error *err)
{
	struct files f;
	size_t len = 0;
	int rc;

	if ((rc = files_init(&f, root, name, err)) < 0)
		return rc;
	char *line = entry_line(&len, e, r, set->timeline_output);
	if (!line)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if (len > LINE_MAX)
		rc = sb_error_set(err, SB_ERR_LIMIT, _("a timeline entry of sandbox '%s' is too long"), name);
	/* a few rounds: each one lost only to another writer's creation or rotation */
	int tries = 0;
	while (rc == 0 && (rc = append_once(&f, line, len, set->timeline_size, locked, err)) == 1)
		rc = ++tries < 8 ? 0 : sb_error_set(err, SB_ERR_BUSY, _("the timeline of sandbox '%s' keeps changing"), name);
	free(line);
	files_clear(&f);
	return rc;
}

int sb_timeline_append(struct sb_root *root, const char *name, const struct sb_timeline_entry *e,
		       struct sb_redact *r, struct sb_error *err)
{
	struct sb_settings set;
	int rc = sb_settings_load(&set, root, err);

	return rc < 0 ? rc : sb_timeline_add(root, name, &set, 0, e, r, err);
}

/* ---- reading ---- */

struct reader {
	struct sb_timeline *t;
	size_t cap;
	long long since_ms;
	unsigned flags;
};

static int opt_string(const char **dst, size_t *len, json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	if (!v)
		return 0;
	if (!json_is_string(v))
		return -1;
	*dst = json_string_value(v);
	if (len)
		*len = json_string_length(v);
	return 0;
}

static int opt_count(long long *dst, json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*dst = json_integer_value(v);
	return 0;
}

static int opt_bool(int *dst, json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return -1;
	*dst = json_is_true(v);
	return 0;
}

/* The names in "secrets": a NULL-terminated array (malloc'd) of strings in doc. */
static int opt_names(struct sb_timeline_entry *e, json_t *doc)
{
	json_t *v = json_object_get(doc, "secrets"), *s;
	size_t i;

	if (!v)
		return 0;
	if (!json_is_array(v))
		return -1;
	const char **names = calloc(json_array_size(v) + 1, sizeof(*names));
	if (!names)
		return -2;
	json_array_foreach(v, i, s) {
		if (!json_is_string(s)) {
			free(names);
			return -1;
		}
		names[i] = json_string_value(s);
	}
	e->secrets = names;
	e->n_secrets = json_array_size(v);
	return 0;
}

/* An entry from its parsed line; -1 when it is not one (the line is skipped),
 * -2 when out of memory (the read fails: an entry is never dropped unsaid).
 * The strings point into doc. */
static int entry_from_json(struct sb_timeline_entry *e, json_t *doc)
{
	const char *kind = NULL, *source = NULL;
	long long time_ms = -1, exit_code = -1;

	*e = (struct sb_timeline_entry)SB_TIMELINE_ENTRY_INIT(0, 0);
	if (!json_is_object(doc) || opt_count(&time_ms, doc, "time_ms") < 0 || opt_string(&kind, NULL, doc, "kind") < 0 ||
	    opt_string(&source, NULL, doc, "source") < 0 || time_ms < 0 || !kind || !source ||
	    sb_timeline_kind_parse(kind) < 0 || sb_timeline_source_parse(source) < 0)
		return -1;
	e->time_ms = time_ms;
	e->kind = sb_timeline_kind_parse(kind);
	e->source = sb_timeline_source_parse(source);
	if (opt_string(&e->text, NULL, doc, "text") < 0 || opt_string(&e->cwd, NULL, doc, "cwd") < 0 ||
	    opt_string(&e->detail, NULL, doc, "detail") < 0 || opt_string(&e->session, NULL, doc, "session") < 0 ||
	    opt_string(&e->out, &e->out_len, doc, "stdout") < 0 || opt_string(&e->err, &e->err_len, doc, "stderr") < 0 ||
	    opt_count(&exit_code, doc, "exit") < 0 || opt_count(&e->duration_ms, doc, "duration_ms") < 0 ||
	    opt_count(&e->out_bytes, doc, "out_bytes") < 0 || opt_bool(&e->timed_out, doc, "timed_out") < 0 ||
	    opt_bool(&e->truncated, doc, "truncated") < 0 || exit_code > 255)
		return -1;
	e->exit_code = (int)exit_code;
	return opt_names(e, doc);
}

static int is_header(json_t *doc)
{
	return json_is_object(doc) && json_object_get(doc, "base") && !json_object_get(doc, "kind");
}

/* One complete line at absolute position pos. -1 only when out of memory. */
static int take_line(struct reader *rd, const char *line, size_t len, unsigned long long pos)
{
	struct sb_timeline *t = rd->t;

	if (len == 0)
		return 0;
	json_error_t jerr;
	json_t *doc = len <= LINE_MAX ? json_loadb(line, len, 0, &jerr) : NULL;
	struct sb_timeline_entry e;
	int rc = 0;
	if (!doc && len <= LINE_MAX && json_error_code(&jerr) == json_error_out_of_memory)
		return -1;
	if (doc && is_header(doc)) {
		json_decref(doc);
		return 0;
	}
	if (!doc || (rc = entry_from_json(&e, doc)) < 0) {
		json_decref(doc);
		if (doc && rc == -2)
			return -1;
		t->skipped++;
		return 0;
	}
	if (e.time_ms < rd->since_ms) {
		free((void *)e.secrets);
		json_decref(doc);
		return 0;
	}
	if (rd->flags & SB_TIMELINE_NO_OUTPUT) {
		e.out = e.err = NULL;
		e.out_len = e.err_len = 0;
		json_object_del(doc, "stdout");
		json_object_del(doc, "stderr");
	}
	if (t->count == rd->cap) {
		size_t cap = rd->cap ? rd->cap * 2 : 64;
		struct sb_timeline_entry *v = realloc(t->entries, cap * sizeof(*v));
		if (!v) {
			free((void *)e.secrets);
			json_decref(doc);
			return -1;
		}
		t->entries = v;
		rd->cap = cap;
	}
	if (json_array_append_new(t->priv, doc) < 0) {
		free((void *)e.secrets);
		return -1;
	}
	e.pos = pos;
	t->entries[t->count++] = e;
	return 0;
}

/* Reads the file at fd (whose first byte is at base) from offset off to
 * its last complete line; *end gets the position after that line. */
static int read_file(struct reader *rd, unsigned long long *end, int fd, unsigned long long base, unsigned long long off)
{
	struct stat st;
	int partial = 0;

	if (fstat(fd, &st) < 0)
		return -1;
	unsigned long long size = (unsigned long long)st.st_size;
	if (off > size)
		off = size;
	/* a file past every cap (not rotated for a while): its newest part */
	if (size - off > READ_MAX) {
		off = size - READ_MAX;
		partial = 1;
		rd->t->dropped = 1;
	}
	size_t want = (size_t)(size - off), got = 0;
	char *buf = malloc(want + 1);
	if (!buf)
		return -1;
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	char *p = buf, *stop = buf + got, *nl;
	if (partial && (nl = memchr(p, '\n', (size_t)(stop - p))))
		p = nl + 1;
	int rc = 0;
	while (rc == 0 && (nl = memchr(p, '\n', (size_t)(stop - p)))) {
		rc = take_line(rd, p, (size_t)(nl - p), base + off + (unsigned long long)(p - buf));
		p = nl + 1;
	}
	*end = base + off + (unsigned long long)(p - buf);
	free(buf);
	return rc;
}

static int open_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	/* host-only files; still, never a FIFO or a device */
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The current file and the rotated one, opened so that no rotation came
 * between the two opens (the current path still names the one opened). */
static void open_pair(int *cur, int *old, const struct files *f)
{
	for (int i = 0; i < 4; i++) {
		struct stat a, b;
		*cur = open_read(f->cur);
		*old = open_read(f->old);
		if (*cur < 0 || (fstat(*cur, &a) == 0 && stat(f->cur, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev))
			return;
		close(*cur);
		if (*old >= 0)
			close(*old);
	}
	*cur = open_read(f->cur);
	*old = open_read(f->old);
}

static int reader_start(struct sb_timeline **out, struct files *f, struct sb_root *root, const char *name,
			struct sb_error *err)
{
	struct stat st;
	int rc;

	*out = NULL;
	if ((rc = files_init(f, root, name, err)) < 0)
		return rc;
	if (stat(f->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		rc = not_found(f, err);
		files_clear(f);
		return rc;
	}
	if (!(*out = calloc(1, sizeof(**out))) || !((*out)->priv = json_array())) {
		free(*out);
		*out = NULL;
		files_clear(f);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

static unsigned long long file_end(int fd, unsigned long long base)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? base + (unsigned long long)st.st_size : base;
}

int sb_timeline_read(struct sb_timeline **out, struct sb_root *root, const char *name,
		     const struct sb_timeline_query *q, struct sb_error *err)
{
	static const struct sb_timeline_query all;
	struct files f;
	int cur, old, rc;

	if (!q)
		q = &all;
	if ((rc = reader_start(out, &f, root, name, err)) < 0)
		return rc;
	struct reader rd = { .t = *out, .since_ms = q->since_ms, .flags = q->flags };
	unsigned long long from = q->from, base0 = 0, base1 = 0, end = from;
	open_pair(&cur, &old, &f);
	if (cur >= 0)
		base0 = file_base(cur);
	if (old >= 0)
		base1 = file_base(old);
	/* a position past the end: the sandbox was made again under this name */
	if (cur >= 0 && from > file_end(cur, base0)) {
		rd.t->dropped = 1;
		from = 0;
	}
	if (cur < 0) {
		end = from;
	} else if (from >= base0) {
		rc = read_file(&rd, &end, cur, base0, from - base0);
	} else {
		if (old >= 0 && from >= base1)
			rc = read_file(&rd, &end, old, base1, from - base1);
		else if (old >= 0)
			rc = read_file(&rd, &end, old, base1, 0);
		rd.t->dropped |= from > 0 && from < (old >= 0 ? base1 : base0);
		if (rc == 0)
			rc = read_file(&rd, &end, cur, base0, 0);
	}
	rd.t->next = end;
	if (cur >= 0)
		close(cur);
	if (old >= 0)
		close(old);
	files_clear(&f);
	if (rc < 0) {
		sb_timeline_free(*out);
		*out = NULL;
		return sb_error_set(err, SB_ERR_NOMEM, _("cannot read the timeline of sandbox '%s': out of memory"), name);
	}
	return 0;
}

/* The line at off in fd, up to LINE_MAX bytes before its newline, into
 * *out (malloc'd, not NUL-terminated), read in chunks that double from 4 KiB:
 * entries are a few hundred bytes, and a LINE_MAX buffer per lookup cost more
 * than the lookup. Its length; -1 when no whole line is there (or no memory). */
static ssize_t line_at(char **out, int fd, off_t off)
{
	size_t have = 0, cap = 4096;
	char *buf = NULL, *b;

	*out = NULL;
	for (;;) {
		if (have == cap) {
			if (cap > LINE_MAX)
				break;
			cap = cap * 2 > LINE_MAX ? LINE_MAX + 1 : cap * 2;
		}
		if (!(b = realloc(buf, cap)))
			break;
		buf = b;
		ssize_t n = pread(fd, buf + have, cap - have, off + (off_t)have);
		char *nl = n > 0 ? memchr(buf + have, '\n', (size_t)n) : NULL;
		if (nl) {
			*out = buf;
			return nl - buf;
		}
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	free(buf);
	return -1;
}

int sb_timeline_read_at(struct sb_timeline **out, struct sb_root *root, const char *name, unsigned long long pos,
			struct sb_error *err)
{
	struct files f;
	int cur, old, fd = -1, rc;
	unsigned long long base = 0;

	if ((rc = reader_start(out, &f, root, name, err)) < 0)
		return rc;
	open_pair(&cur, &old, &f);
	unsigned long long base0 = cur >= 0 ? file_base(cur) : 0, base1 = old >= 0 ? file_base(old) : 0;
	if (cur >= 0 && pos >= base0)
		fd = cur, base = base0;
	else if (old >= 0 && pos >= base1)
		fd = old, base = base1;
	struct reader rd = { .t = *out };
	char *line = NULL;
	ssize_t len = fd >= 0 ? line_at(&line, fd, (off_t)(pos - base)) : -1;
	if (len >= 0)
		rc = take_line(&rd, line, (size_t)len, pos);
	free(line);
	if (cur >= 0)
		close(cur);
	if (old >= 0)
		close(old);
	if (rc < 0 || len < 0 || (*out)->count != 1) {
		sb_timeline_free(*out);
		*out = NULL;
		rc = rc < 0 ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory"))
			    : sb_error_set(err, SB_ERR_NOTFOUND, _("sandbox '%s' has no timeline entry at position %llu"), name, pos);
	}
	files_clear(&f);
	return rc;
}

void sb_timeline_free(struct sb_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->count; i++)
		free((void *)t->entries[i].secrets);
	free(t->entries);
	json_decref(t->priv);
	free(t);
}

/* ---- following ---- */

struct sb_timeline_watch {
	int fd;
	char *name;
};

int sb_timeline_watch_open(struct sb_timeline_watch **out, struct sb_root *root, const char *name,
			   struct sb_error *err)
{
	struct files f;
	int rc;

	*out = NULL;
	if ((rc = files_init(&f, root, name, err)) < 0)
		return rc;
	struct sb_timeline_watch *w = calloc(1, sizeof(*w));
	if (!w || !(w->name = strdup(name))) {
		free(w);
		files_clear(&f);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	/* the directory, not the file: rotation swaps the file, removal ends the directory */
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot watch the timeline of sandbox '%s'"), name);
	else if (inotify_add_watch(w->fd, f.dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
					       IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
		rc = errno == ENOENT || errno == ENOTDIR
			     ? not_found(&f, err)
			     : sb_error_errno(err, SB_ERR_IO, errno, _("cannot watch the timeline of sandbox '%s'"), name);
	files_clear(&f);
	if (rc < 0) {
		sb_timeline_watch_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

void sb_timeline_watch_close(struct sb_timeline_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->name);
	free(w);
}

int sb_timeline_watch_fd(const struct sb_timeline_watch *w)
{
	return w->fd;
}

int sb_timeline_watch_check(struct sb_timeline_watch *w, struct sb_error *err)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int moved = 0, gone = 0;
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
				gone = 1;
			else if ((ev->mask & IN_Q_OVERFLOW) || (ev->len && !strcmp(ev->name, FILE_NAME)))
				moved = 1;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (gone)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("sandbox '%s' was removed"), w->name);
	return moved;
}
