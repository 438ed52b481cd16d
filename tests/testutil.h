/* Shared helpers for the Criterion suites: scratch roots, running the real
 * binary, waiting for conditions with a deadline (never sleeping to wait). */
#ifndef SB_TESTUTIL_H
#define SB_TESTUTIL_H

#include <jansson.h>
#include <stddef.h>

/* A fresh directory under /var/tmp (not tmpfs: overlayfs and runsc need a real fs). */
char *tu_tempdir(const char *tag);
/* rm -rf that refuses anything outside /var/tmp/sbtest-* and /tmp/sbtest-*. */
void tu_remove(const char *dir);
/* Path of a file in the source tree (fixtures) or the build tree (binaries). */
char *tu_srcpath(const char *rel);
char *tu_buildpath(const char *rel);

struct tu_run {
	int status;          /* exit status, 128+signal when killed */
	char *out, *err;     /* captured stdout and stderr */
};

/* Runs the built sandbench with --root root and the given arguments (NULL-terminated);
 * env is an optional NULL-terminated list of extra "K=V" settings. One that sets
 * $SANDBENCH_NOW or $SANDBENCH_BOOT_ID runs tests/sandbench-test, the CLI of the
 * test build, instead: the installed binary ignores both. */
struct tu_run tu_sandbench(const char *root, const char *const *env, const char *arg, ...);
/* Runs a shell command line (fixture scripts); returns its exit status. */
int tu_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, capturing stdout (malloc'd, trailing newline stripped). */
char *tu_sh_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tu_run_free(struct tu_run *r);

/* Makes jansson's nth allocation from now on fail (n >= 1), that one only,
 * as running out of memory for a moment would (in json_load* the next one
 * after it); 0 lifts it. tu_json_fail_hit says whether that allocation came. */
void tu_json_fail_nth(long n);
int tu_json_fail_hit(void);
/* Calls build(arg) with jansson's 1st, 2nd, ... allocation failing in turn,
 * until a call makes fewer allocations. Every result must be NULL or equal to
 * want: a document that lost a part when one allocation failed is the bug this
 * finds. Returns the number of allocations a build makes, or -n when the
 * failure of the nth one gave a partial document. */
/* 1 when called from inside jansson's parser (json_load*), whose failed
 * allocations drop a byte and go on (akheron/jansson#362): failing one there
 * tests jansson, not us. */
int tu_in_json_parser(void);
long tu_json_whole_or_nothing(json_t *(*build)(const void *arg), const void *arg, const json_t *want);

/* Polls cond(arg) every few ms until it is true or timeout_ms passes; returns its last value. */
int tu_wait_for(int (*cond)(void *arg), void *arg, int timeout_ms);

#endif
