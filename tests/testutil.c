#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/proc.h"
#include "testutil.h"

char *tu_tempdir(const char *tag)
{
	char *dir = sb_strdupf("/var/tmp/sbtest-%s-XXXXXX", tag);

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

void tu_remove(const char *dir)
{
	if (!dir || (strncmp(dir, "/var/tmp/sbtest-", 16) != 0 && strncmp(dir, "/tmp/sbtest-", 12) != 0))
		return;
	sb_fs_remove_tree(dir, NULL);
}

static char *top(const char *env, const char *fallback, const char *rel)
{
	const char *base = getenv(env);

	return sb_path_join(base && *base ? base : fallback, rel);
}

char *tu_srcpath(const char *rel)
{
	return top("SB_TOP_SRCDIR", SB_SRCDIR, rel);
}

char *tu_buildpath(const char *rel)
{
	return top("SB_TOP_BUILDDIR", SB_BUILDDIR, rel);
}

/* An environment that injects time, a host boot or faults needs the CLI of
 * the test build: the installed sandbench ignores them (tests/hooks.c). */
static int injects(const char *const *env)
{
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], "SANDBENCH_NOW=", 14) || !strncmp(env[i], "SANDBENCH_BOOT_ID=", 18) ||
		    !strncmp(env[i], "SANDBENCH_FAULT", 15) || !strncmp(env[i], "SANDBENCH_BACKEND_WITHOUT=", 26))
			return 1;
	return 0;
}

struct tu_run tu_sandbench(const char *root, const char *const *env, const char *arg, ...)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	struct tu_run run = { 0 };
	const char *argv[64];
	char *bin = tu_buildpath(injects(env) ? "tests/sandbench-test" : "sandbench");
	char *envcopy[16];
	int n = 0, ne = 0;
	va_list ap;

	argv[n++] = bin;
	if (root) {
		argv[n++] = "--root";
		argv[n++] = root;
	}
	va_start(ap, arg);
	for (const char *a = arg; a && n < 63; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	/* extra environment: set in this (forked Criterion) process, unset after */
	for (; env && env[ne] && ne < 16; ne++) {
		envcopy[ne] = strdup(env[ne]);
		char *eq = strchr(envcopy[ne], '=');
		*eq = '\0';
		setenv(envcopy[ne], eq + 1, 1);
	}
	opts.timeout_ms = 120000;
	opts.capture_max = 1 << 20;
	if (sb_proc_run(&res, (char *const *)argv, &opts, NULL) == 0 || res.out) {
		run.status = res.status;
		run.out = res.out;
		run.err = res.errout;
	} else {
		run.status = -1;
		run.out = strdup("");
		run.err = strdup("could not run sandbench");
	}
	for (int i = 0; i < ne; i++) {
		unsetenv(envcopy[i]);
		free(envcopy[i]);
	}
	free(bin);
	return run;
}

void tu_run_free(struct tu_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

int tu_sh(const char *fmt, ...)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	va_list ap;
	char *cmd;
	int status;

	va_start(ap, fmt);
	cmd = vformat(fmt, ap);
	va_end(ap);
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	opts.timeout_ms = 300000;
	opts.stdout_fd = 2;
	status = sb_proc_run(&res, argv, &opts, NULL) == 0 ? res.status : -1;
	if (status != 0 && res.errout)
		fprintf(stderr, "command failed (%d): %s\n%s", status, cmd, res.errout);
	sb_proc_result_clear(&res);
	free(cmd);
	return status;
}

char *tu_sh_out(const char *fmt, ...)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	va_list ap;
	char *cmd, *out = NULL;

	va_start(ap, fmt);
	cmd = vformat(fmt, ap);
	va_end(ap);
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	opts.timeout_ms = 300000;
	opts.capture_max = 1 << 20;
	if (sb_proc_run(&res, argv, &opts, NULL) == 0) {
		out = res.out;
		res.out = NULL;
		size_t n = strlen(out);
		while (n > 0 && out[n - 1] == '\n')
			out[--n] = '\0';
	}
	sb_proc_result_clear(&res);
	free(cmd);
	return out;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tu_wait_for(int (*cond)(void *arg), void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int ok;

	while (!(ok = cond(arg)) && now_ms() < deadline)
		poll(NULL, 0, 10); /* a polling interval, not a wait for an event */
	return ok;
}

static long json_countdown;  /* allocations until the one that fails; 0: none */
static int json_hit;

/* jansson's parser drops a byte when its buffer cannot grow, and goes on
 * (akheron/jansson#362): a failure there tests jansson, not us. */
int tu_in_json_parser(void)
{
	void *frames[64];
	int n = backtrace(frames, 64);
	Dl_info info;

	for (int i = 0; i < n; i++)
		if (dladdr(frames[i], &info) && info.dli_sname && !strncmp(info.dli_sname, "json_load", 9))
			return 1;
	return 0;
}

static void *json_malloc_failing(size_t size)
{
	/* spared in the parser, the failure falls on the next allocation after it */
	if (json_countdown > 0 && --json_countdown == 0 && !(json_countdown = tu_in_json_parser())) {
		json_hit = 1;
		return NULL;
	}
	return malloc(size);
}

void tu_json_fail_nth(long n)
{
	json_set_alloc_funcs(json_malloc_failing, free);
	json_countdown = n;
	json_hit = 0;
}

int tu_json_fail_hit(void)
{
	return json_hit;
}

long tu_json_whole_or_nothing(json_t *(*build)(const void *arg), const void *arg, const json_t *want)
{
	for (long n = 1;; n++) {
		tu_json_fail_nth(n);
		json_t *got = build(arg);
		int hit = tu_json_fail_hit();
		tu_json_fail_nth(0);
		/* with nothing failed, it must succeed */
		int whole = got ? json_equal(got, want) : hit;
		json_decref(got);
		if (!whole)
			return -n;
		if (!hit)
			return n - 1;
	}
}

