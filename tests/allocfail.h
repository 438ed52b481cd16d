/* Allocation failures on demand, for tests/unit/test-alloc-fail (issue 14).
 * The program is linked with -Wl,--wrap=malloc,... (tests/tests.am), so every
 * call that the library archive and the test make to malloc, calloc, realloc,
 * strdup, strndup and vasprintf goes through a counter here first (in
 * test-alloc-fail, and in test-urpc for af_forbid); jansson,
 * a shared library, is counted through json_set_alloc_funcs. The shipped
 * binary is never linked with any of this. Not counted: what other shared
 * libraries (glibc's stdio and opendir, libarchive, zlib) allocate inside. */
#ifndef SB_TEST_ALLOCFAIL_H
#define SB_TEST_ALLOCFAIL_H

#include "base/error.h"

/* The nth counted allocation from now fails (ENOMEM); 0: none fails. */
void af_fail_nth(long n);
/* 1 when the armed failure has struck. */
int af_hit(void);
/* The allocation that fails in the run under way (0: none). */
long af_current(void);
/* on 1: the test's own checks allocate uncounted until af_hold(0). */
void af_hold(int on);
/* From now on a counted allocation aborts the process (a forked child that
 * must allocate nothing). */
void af_forbid(void);

/* One library call under test: 0 with a whole result (checked by the call
 * itself, which frees what it made), or the library's negative code with err
 * filled. */
typedef int (*af_call)(void *arg, struct sb_error *err);

/* Runs call for n = 1, 2, ... until it makes no more allocations than n-1:
 * each run must succeed whole or fail with a negative code and a message.
 * Returns the number of allocations of a whole run (the iterations). */
long af_every_allocation(const char *what, af_call call, void *arg);

#endif
