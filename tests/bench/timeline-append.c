/* The cost of one timeline append, what every exec adds (not run by make
 * check): RUNS appends each of an exec of `true` (no output), of one with
 * 8 KiB of output, and of that with two secrets to redact, into a scratch
 * sandbox directory of ROOT (default settings: 1 MiB files, rotation
 * included). Prints the median, p90 and p99 in microseconds, and those of
 * loading the settings, which sb_timeline_append does and an exec, which
 * has them already, does not.
 *
 *     tests/bench/timeline-append ROOT [RUNS]     (ROOT: a fresh directory) */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/redact.h"
#include "base/root.h"
#include "sandbox/settings.h"
#include "sandbox/timeline.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void report(const char *what, double *us, int runs)
{
	qsort(us, (size_t)runs, sizeof(*us), cmp);
	printf("%-28s median %7.1f us   p90 %7.1f us   p99 %7.1f us\n", what, us[runs / 2], us[runs * 9 / 10],
	       us[runs * 99 / 100]);
}

static int run(const char *what, struct sb_root *root, const struct sb_timeline_entry *e, struct sb_redact *r,
	       double *us, int runs)
{
	struct sb_error err;

	for (int i = 0; i < runs; i++) {
		double a = now_us();
		if (sb_timeline_append(root, "bench", e, r, &err) < 0) {
			fprintf(stderr, "timeline-append: %s\n", err.msg);
			return -1;
		}
		us[i] = now_us() - a;
	}
	report(what, us, runs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct sb_secret secrets[] = { { "TOKEN", "s3cr3t-token-value" }, { "PASS", "hunter2" } };
	int runs = argc > 2 ? atoi(argv[2]) : 2000;
	struct sb_root *root;
	struct sb_redact *r;
	struct sb_error err;

	if (argc < 2 || runs < 100) {
		fprintf(stderr, "usage: timeline-append ROOT [RUNS >= 100]\n");
		return 2;
	}
	char *dir = sb_strdupf("%s/sandboxes/bench", argv[1]), *lock = sb_strdupf("%s/lock", dir);
	double *us = calloc((size_t)runs, sizeof(*us));
	char *out = malloc(8192);
	if (!dir || !lock || !us || !out || sb_root_open(&root, argv[1], &err) < 0 || sb_fs_mkdirs(dir, 0700, &err) < 0 ||
	    sb_redact_new(&r, secrets, 2, &err) < 0) {
		fprintf(stderr, "timeline-append: %s\n", err.msg);
		return 1;
	}
	close(open(lock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	for (int i = 0; i < 8192; i++)
		out[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);

	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	e.text = "true";
	e.cwd = "/workspace";
	e.exit_code = 0;
	e.duration_ms = 38;
	e.out_bytes = 0;
	e.out = e.err = "";
	int rc = run("exec true (no output)", root, &e, NULL, us, runs);
	e.text = "sh -c 'cat big.txt'";
	e.out = out;
	e.out_len = 8192;
	e.out_bytes = 8192;
	if (rc == 0)
		rc = run("8 KiB of output", root, &e, NULL, us, runs);
	if (rc == 0)
		rc = run("8 KiB, 2 secrets redacted", root, &e, r, us, runs);
	for (int i = 0; rc == 0 && i < runs; i++) {
		struct sb_settings set;
		double a = now_us();
		rc = sb_settings_load(&set, root, &err);
		us[i] = now_us() - a;
	}
	if (rc == 0)
		report("of which loading settings", us, runs);
	sb_redact_free(r);
	sb_root_close(root);
	free(us), free(out), free(dir), free(lock);
	return rc < 0;
}
