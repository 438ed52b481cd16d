/* The timeline's pure parts and its files, without runsc: --since parsing, an
 * entry's JSON, appends and reads in a scratch sandbox directory (redaction,
 * caps, rotation, positions across rotations, torn and malformed lines,
 * concurrent writers, the watch). */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/redact.h"
#include "base/root.h"
#include "sandbox/timeline.h"
#include "testutil.h"

#define NOW 1800000000000LL

static long long since(const char *text)
{
	struct sb_error err;
	long long v;

	cr_assert_eq(sb_timeline_parse_since(&v, text, NOW, &err), 0, "%s: %s", text, err.msg);
	return v;
}

Test(timeline, since_durations_and_unix_seconds)
{
	cr_assert_eq(since("90s"), NOW - 90000);
	cr_assert_eq(since("10m"), NOW - 600000);
	cr_assert_eq(since("2h"), NOW - 7200000);
	cr_assert_eq(since("1d"), NOW - 86400000);
	cr_assert_eq(since("0s"), NOW);
	/* a bare number is a point in time, not a duration */
	cr_assert_eq(since("1764583200"), 1764583200000LL);
	cr_assert_eq(since("0"), 0);
}

Test(timeline, since_local_and_utc_times)
{
	/* an hour east of UTC, without tzdata */
	setenv("TZ", "CET-1", 1);
	tzset();
	struct tm utc = { .tm_year = 126, .tm_mon = 11, .tm_mday = 1, .tm_hour = 10 };
	long long at10z = (long long)timegm(&utc) * 1000;
	cr_assert_eq(since("2026-12-01T10:00:00Z"), at10z);
	cr_assert_eq(since("2026-12-01 10:00Z"), at10z);
	cr_assert_eq(since("2026-12-01T11:00:00"), at10z, "local time is an hour ahead");
	cr_assert_eq(since("2026-12-01T11:00"), at10z);
	cr_assert_eq(since("2026-12-01T11:00:07"), at10z + 7000);
	cr_assert_eq(since("2026-12-01"), at10z - 11 * 3600000LL, "the date alone is its local midnight (23:00Z)");
	unsetenv("TZ");
	tzset();
}

Test(timeline, since_refuses_what_it_cannot_read)
{
	static const char *const bad[] = {
		"", "yesterday", "10x", "-5m", "10m5", "5 m", "1e5", "2026-13-01", "2026-02-30", "2026-12-01T25:00",
		"2026-12-1", "2026-12-01T10", "2026-12-01T10:00:00+01:00", "99999999999999", "2026-12-01T10:00:61",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sb_error err;
		long long v;
		cr_assert_eq(sb_timeline_parse_since(&v, bad[i], NOW, &err), SB_ERR_INVALID, "'%s' accepted", bad[i]);
		char quoted[64];
		snprintf(quoted, sizeof(quoted), "'%s'", bad[i]);
		cr_assert(strstr(err.msg, quoted), "the message names the text: %s", err.msg);
	}
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	cr_assert(json_is_string(v), "no string '%s'", key);
	return json_string_value(v);
}

static long long num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	cr_assert(json_is_integer(v), "no number '%s'", key);
	return json_integer_value(v);
}

Test(timeline, entry_json)
{
	const char *names[] = { "TOKEN", "PASS", NULL };
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_HUMAN);
	e.time_ms = 1234;
	e.text = "echo hi";
	e.cwd = "/workspace";
	e.session = "7";
	e.exit_code = 3;
	e.duration_ms = 41;
	e.out_bytes = 9;
	e.out = "hi\n\0x";
	e.out_len = 5;
	e.err = "";
	e.secrets = names;
	json_t *o = sb_timeline_entry_to_json(&e);
	cr_assert_not_null(o);
	cr_assert_eq(num(o, "time_ms"), 1234);
	cr_assert_str_eq(str(o, "kind"), "exec");
	cr_assert_str_eq(str(o, "source"), "human");
	cr_assert_str_eq(str(o, "text"), "echo hi");
	cr_assert_str_eq(str(o, "cwd"), "/workspace");
	cr_assert_str_eq(str(o, "session"), "7");
	cr_assert_eq(num(o, "exit"), 3);
	cr_assert_eq(num(o, "duration_ms"), 41);
	cr_assert_eq(num(o, "out_bytes"), 9);
	cr_assert_eq(json_string_length(json_object_get(o, "stdout")), 5, "a NUL in the output is kept");
	cr_assert_str_eq(str(o, "stderr"), "");
	cr_assert(json_is_false(json_object_get(o, "truncated")));
	cr_assert_eq(json_array_size(json_object_get(o, "secrets")), 2);
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "secrets"), 1)), "PASS");
	cr_assert_null(json_object_get(o, "detail"));
	json_decref(o);

	/* a lifecycle entry has none of an exec's fields */
	struct sb_timeline_entry l = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_LIFECYCLE, SB_TIMELINE_SANDBENCH);
	l.text = "stopped";
	l.detail = "expired after 60 s idle";
	o = sb_timeline_entry_to_json(&l);
	cr_assert_str_eq(str(o, "source"), "sandbench");
	cr_assert_str_eq(str(o, "detail"), "expired after 60 s idle");
	static const char *const absent[] = { "exit", "duration_ms", "out_bytes", "stdout", "stderr", "truncated",
					      "secrets", "cwd", "session", "timed_out" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		cr_assert_null(json_object_get(o, absent[i]), "'%s' in a lifecycle entry", absent[i]);
	json_decref(o);
}

Test(timeline, entry_json_of_binary_output)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	e.text = "cat \xff.bin";
	e.out = "ok\xff\xfe \xc3\xa9 \xed\xa0\x80";  /* bad bytes, an é, a surrogate */
	e.out_len = strlen(e.out);
	json_t *o = sb_timeline_entry_to_json(&e);
	cr_assert_not_null(o, "output that is not UTF-8 still gives an entry");
	cr_assert_str_eq(str(o, "text"), "cat \xef\xbf\xbd.bin");
	cr_assert_str_eq(str(o, "stdout"), "ok\xef\xbf\xbd\xef\xbf\xbd \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(o);
	cr_assert_eq(sb_timeline_kind_parse("file"), SB_TIMELINE_FILE);
	cr_assert_eq(sb_timeline_source_parse("workbench"), SB_TIMELINE_WORKBENCH);
	cr_assert_eq(sb_timeline_source_parse("root"), -1);
	cr_assert_str_eq(sb_timeline_kind_name(99), "unknown");
}

/* ---- files in a scratch root ---- */

static char *dir;
static struct sb_root *root;

static char *box_path(const char *rel)
{
	char *p = sb_strdupf("%s/sandboxes/box/%s", dir, rel);
	cr_assert_not_null(p);
	return p;
}

static void write_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
	cr_assert(fd >= 0, "%s", path);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void config(const char *text)
{
	char *p = sb_strdupf("%s/config", dir);
	write_file(p, text, O_TRUNC);
	free(p);
}

static void setup(void)
{
	struct sb_error err;

	dir = tu_tempdir("timeline");
	cr_assert_eq(sb_root_open(&root, dir, &err), 0, "%s", err.msg);
	char *box = sb_strdupf("%s/sandboxes/box", dir);
	cr_assert_eq(sb_fs_mkdirs(box, 0700, NULL), 0);
	free(box);
	char *lock = box_path("lock");
	write_file(lock, "", 0);
	free(lock);
}

static void teardown(void)
{
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
}

TestSuite(timeline_file, .init = setup, .fini = teardown, .timeout = 60);

static void add(const char *text, long long time_ms)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	struct sb_error err;

	e.text = text;
	e.time_ms = time_ms;
	e.exit_code = 0;
	cr_assert_eq(sb_timeline_append(root, "box", &e, NULL, &err), 0, "%s", err.msg);
}

static struct sb_timeline *read_from(unsigned long long from, long long since_ms, unsigned flags)
{
	struct sb_timeline_query q = { .from = from, .since_ms = since_ms, .flags = flags };
	struct sb_timeline *t;
	struct sb_error err;

	cr_assert_eq(sb_timeline_read(&t, root, "box", &q, &err), 0, "%s", err.msg);
	return t;
}

Test(timeline_file, append_read_and_continue)
{
	add("first", 1000);
	add("second", 2000);
	struct sb_timeline *t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 2);
	cr_assert_str_eq(t->entries[0].text, "first");
	cr_assert_eq(t->entries[1].time_ms, 2000);
	cr_assert_eq(t->entries[1].exit_code, 0);
	cr_assert_eq(t->entries[1].duration_ms, -1, "not measured stays so");
	cr_assert(t->entries[0].pos < t->entries[1].pos);
	unsigned long long next = t->next, second = t->entries[1].pos;
	sb_timeline_free(t);

	t = read_from(next, 0, 0);
	cr_assert_eq(t->count, 0, "nothing new");
	cr_assert_eq(t->next, next);
	sb_timeline_free(t);
	add("third", 3000);
	t = read_from(next, 0, 0);
	cr_assert_eq(t->count, 1);
	cr_assert_str_eq(t->entries[0].text, "third");
	sb_timeline_free(t);

	t = read_from(0, 2000, 0);
	cr_assert_eq(t->count, 2, "since 2000: second and third");
	sb_timeline_free(t);

	struct sb_error err;
	cr_assert_eq(sb_timeline_read_at(&t, root, "box", second, &err), 0, "%s", err.msg);
	cr_assert_eq(t->count, 1);
	cr_assert_str_eq(t->entries[0].text, "second");
	sb_timeline_free(t);
	cr_assert_eq(sb_timeline_read_at(&t, root, "box", second + 1, &err), SB_ERR_NOTFOUND, "mid-line is no entry");
	cr_assert_null(t);

	/* a line longer than the reader's first chunks (4 and 8 KiB) */
	static char long_text[20001];
	memset(long_text, 'l', sizeof(long_text) - 1);
	add(long_text, 4000);
	t = read_from(next, 0, 0);
	cr_assert_eq(t->count, 2);
	unsigned long long long_pos = t->entries[1].pos;
	sb_timeline_free(t);
	cr_assert_eq(sb_timeline_read_at(&t, root, "box", long_pos, &err), 0, "%s", err.msg);
	cr_assert_eq(t->count, 1);
	cr_assert_str_eq(t->entries[0].text, long_text);
	sb_timeline_free(t);
}

Test(timeline_file, redacted_and_capped)
{
	static const struct sb_secret sec[] = { { "TOKEN", "s3cr3t-value" } };
	const char *names[] = { "TOKEN", NULL };
	struct sb_redact *r;
	struct sb_error err;
	char out[64];

	config("timeline_output = 32\n");
	cr_assert_eq(sb_redact_new(&r, sec, 1, &err), 0, "%s", err.msg);
	/* the value straddles the cap: no part of it may stay */
	memset(out, 'a', 26);
	strcpy(out + 26, "s3cr3t-value and more");
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	e.text = "echo s3cr3t-value";
	e.cwd = "/tmp/s3cr3t-value";
	e.out = out;
	e.out_len = strlen(out);
	e.err = "s3cr3t-value";
	e.err_len = strlen(e.err);
	e.out_bytes = (long long)(e.out_len + e.err_len);
	e.secrets = names;
	cr_assert_eq(sb_timeline_append(root, "box", &e, r, &err), 0, "%s", err.msg);

	/* a copy that is short of the output is never flushed: a value may begin at its end */
	char *partial = "xxxxs3cr3t-v";
	struct sb_timeline_entry p = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	p.text = "head";
	p.out = partial;
	p.out_len = strlen(partial);
	p.out_bytes = 1000;
	cr_assert_eq(sb_timeline_append(root, "box", &p, r, &err), 0, "%s", err.msg);

	/* a character is not cut in half at the cap */
	char wide[64];
	memset(wide, 'b', 31);
	strcpy(wide + 31, "\xc3\xa9tc");
	struct sb_timeline_entry u = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	u.text = "wide";
	u.out = wide;
	u.out_len = strlen(wide);
	cr_assert_eq(sb_timeline_append(root, "box", &u, NULL, &err), 0, "%s", err.msg);
	sb_redact_free(r);

	struct sb_timeline *t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 3);
	const struct sb_timeline_entry *g = &t->entries[0];
	cr_assert_str_eq(g->text, "echo [secret TOKEN]");
	cr_assert_str_eq(g->cwd, "/tmp/[secret TOKEN]");
	cr_assert_eq(g->out_len, 32);
	cr_assert_eq(memcmp(g->out, "aaaaaaaaaaaaaaaaaaaaaaaaaa[secre", 32), 0, "%.*s", (int)g->out_len, g->out);
	cr_assert_str_eq(g->err, "[secret TOKEN]");
	cr_assert(g->truncated);
	cr_assert_eq(g->n_secrets, 1);
	cr_assert_str_eq(g->secrets[0], "TOKEN");
	cr_assert_str_eq(t->entries[1].out, "xxxx", "the held-back start of a value is dropped");
	cr_assert(t->entries[1].truncated);
	cr_assert_eq(t->entries[2].out_len, 31, "cut before the two bytes of the é");
	cr_assert(t->entries[2].truncated);
	unsigned long long pos = g->pos;
	sb_timeline_free(t);

	t = read_from(0, 0, SB_TIMELINE_NO_OUTPUT);
	cr_assert_null(t->entries[0].out, "a list without the copies");
	sb_timeline_free(t);
	cr_assert_eq(sb_timeline_read_at(&t, root, "box", pos, &err), 0, "%s", err.msg);
	cr_assert_eq(t->entries[0].out_len, 32, "one entry with its copy");
	sb_timeline_free(t);

	char *file = box_path("timeline.jsonl"), *text;
	cr_assert_eq(sb_fs_read_file(&text, NULL, file, 1 << 20, NULL), 0);
	cr_assert_null(strstr(text, "s3cr3t"), "a part of the value is on disk: %s", text);
	free(text);
	free(file);
}

static int file_exists(const char *rel)
{
	char *p = box_path(rel);
	struct stat st;
	int ok = stat(p, &st) == 0;
	free(p);
	return ok;
}

static off_t file_size(const char *rel)
{
	char *p = box_path(rel);
	struct stat st;
	off_t size = stat(p, &st) == 0 ? st.st_size : -1;
	free(p);
	return size;
}

Test(timeline_file, rotation_keeps_the_newest_and_positions_hold)
{
	char text[64];

	config("timeline_size = 4k\n");
	for (int i = 0; i < 20; i++) {
		snprintf(text, sizeof(text), "entry %03d", i);
		add(text, 1000 + i);
	}
	cr_assert(!file_exists("timeline.jsonl.1"), "20 small entries fit in 4k");
	struct sb_timeline *t = read_from(0, 0, 0);
	unsigned long long next = t->next;
	sb_timeline_free(t);
	/* until one rotation has happened: a position from before it still holds */
	int i = 20;
	for (; !file_exists("timeline.jsonl.1"); i++) {
		snprintf(text, sizeof(text), "entry %03d", i);
		add(text, 1000 + i);
	}
	t = read_from(next, 0, 0);
	cr_assert_eq(t->count, (size_t)(i - 20), "continued across the rotation");
	cr_assert(!t->dropped);
	cr_assert_str_eq(t->entries[0].text, "entry 020");
	sb_timeline_free(t);

	for (; i < 400; i++) {
		snprintf(text, sizeof(text), "entry %03d", i);
		add(text, 1000 + i);
	}
	cr_assert(file_size("timeline.jsonl") <= 4096 && file_size("timeline.jsonl.1") <= 4096);
	t = read_from(0, 0, 0);
	cr_assert_gt(t->count, 20);
	cr_assert_str_eq(t->entries[t->count - 1].text, "entry 399", "the newest is kept");
	cr_assert_str_neq(t->entries[0].text, "entry 000", "the oldest went");
	for (size_t k = 1; k < t->count; k++) {
		cr_assert_eq(t->entries[k].time_ms, t->entries[k - 1].time_ms + 1, "in order, none missing in between");
		cr_assert(t->entries[k].pos > t->entries[k - 1].pos);
	}
	sb_timeline_free(t);
	t = read_from(next, 0, 0);
	cr_assert(t->dropped, "a position rotated away says so");
	sb_timeline_free(t);
}

Test(timeline_file, torn_and_malformed_lines_are_skipped)
{
	add("before", 1000);
	char *file = box_path("timeline.jsonl");
	write_file(file, "not json\n{\"time_ms\":\"x\",\"kind\":\"exec\",\"source\":\"agent\"}\n"
			 "{\"time_ms\":5,\"kind\":\"dance\",\"source\":\"agent\"}\n\n", O_APPEND);
	/* a crash in the middle of a write */
	write_file(file, "{\"time_ms\":1,\"kind\":\"ex", O_APPEND);
	struct sb_timeline *t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 1);
	cr_assert_eq(t->skipped, 3, "junk, a wrong type, an unknown kind");
	unsigned long long next = t->next;
	sb_timeline_free(t);

	add("after", 2000);
	t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 2, "the torn line did not swallow the next entry");
	cr_assert_str_eq(t->entries[1].text, "after");
	cr_assert_eq(t->skipped, 4, "the torn line, ended, is skipped");
	sb_timeline_free(t);
	t = read_from(next, 0, 0);
	cr_assert_eq(t->count, 1, "a follower waiting at the torn line gets the next entry");
	sb_timeline_free(t);
	free(file);
}

/* Writers in parallel, rotating or not: every line whole, each writer's in order. */
static void writers(int n, int each)
{
	for (int w = 0; w < n; w++) {
		if (fork() == 0) {
			char text[32];
			for (int i = 0; i < each; i++) {
				struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
				snprintf(text, sizeof(text), "w%d", w);
				e.text = text;
				e.time_ms = i + 1;
				if (sb_timeline_append(root, "box", &e, NULL, NULL) < 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < n; w++) {
		int status;
		cr_assert_neq(wait(&status), -1);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a writer failed");
	}
}

static void check_writers(const struct sb_timeline *t, int n)
{
	long long last[8] = { 0 };

	cr_assert_eq(t->skipped, 0, "a torn or mixed line");
	for (size_t i = 0; i < t->count; i++) {
		int w = t->entries[i].text[1] - '0';
		cr_assert(w >= 0 && w < n);
		cr_assert_gt(t->entries[i].time_ms, last[w], "writer %d out of order", w);
		last[w] = t->entries[i].time_ms;
	}
}

Test(timeline_file, parallel_writers)
{
	writers(4, 250);
	struct sb_timeline *t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 1000, "every entry");
	check_writers(t, 4);
	sb_timeline_free(t);

	config("timeline_size = 4k\n");
	writers(4, 250);
	t = read_from(0, 0, 0);
	check_writers(t, 4);
	cr_assert_gt(t->count, 0);
	sb_timeline_free(t);
	cr_assert(file_size("timeline.jsonl") <= 4096 + 200 && file_size("timeline.jsonl.1") <= 4096 + 200);
}

Test(timeline_file, watch_wakes_on_append_and_ends_with_the_sandbox)
{
	struct sb_timeline_watch *w;
	struct sb_error err;

	cr_assert_eq(sb_timeline_watch_open(&w, root, "box", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_timeline_watch_check(w, &err), 0, "nothing yet");
	add("one", 1);
	struct pollfd p = { .fd = sb_timeline_watch_fd(w), .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 10000), 1, "the append woke the watch");
	cr_assert_eq(sb_timeline_watch_check(w, &err), 1);
	cr_assert_eq(sb_timeline_watch_check(w, &err), 0, "drained");
	char *box = sb_strdupf("%s/sandboxes/box", dir);
	cr_assert_eq(sb_fs_remove_tree(box, NULL), 0);
	free(box);
	cr_assert_eq(poll(&p, 1, 10000), 1, "the removal woke the watch");
	cr_assert_eq(sb_timeline_watch_check(w, &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "'box' was removed"), "%s", err.msg);
	sb_timeline_watch_close(w);
}

Test(timeline_file, unknown_sandbox)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	struct sb_timeline_watch *w;
	struct sb_timeline *t;
	struct sb_error err;

	cr_assert_eq(sb_timeline_read(&t, root, "ghost", NULL, &err), SB_ERR_NOTFOUND);
	cr_assert_str_eq(err.msg, "no sandbox named 'ghost'");
	cr_assert_eq(sb_timeline_append(root, "ghost", &e, NULL, &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_timeline_watch_open(&w, root, "ghost", &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_timeline_read(&t, root, "../box", NULL, &err), SB_ERR_INVALID, "a name, never a path");
	/* a sandbox without a timeline yet has an empty one */
	t = read_from(0, 0, 0);
	cr_assert_eq(t->count, 0);
	sb_timeline_free(t);
}
