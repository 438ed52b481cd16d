/* The allocation counter behind -Wl,--wrap (tests/allocfail.h). */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocfail.h"
#include "testutil.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);

static long countdown;  /* counted allocations until the one that fails; 0: none */
static int hit;
static long current;     /* the n of the run under way */
static int held;
static int forbidden;

static int strike(void)
{
	if (forbidden) {
		static const char msg[] = "allocfail: an allocation where none may be\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	if (held || countdown <= 0 || --countdown > 0)
		return 0;
	hit = 1;
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return strike() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return strike() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return strike() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	return strike() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return strike() ? NULL : __real_strndup(s, n);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	return strike() ? -1 : __real_vasprintf(out, fmt, ap);
}

/* jansson's own allocations; its parser is spared (tu_in_json_parser) and the
 * failure falls on the next allocation after it */
static void *json_alloc(size_t size)
{
	if (!held && countdown == 1 && tu_in_json_parser())
		return __real_malloc(size);
	return __wrap_malloc(size);
}

void af_fail_nth(long n)
{
	json_set_alloc_funcs(json_alloc, free);
	countdown = n;
	hit = 0;
}

int af_hit(void)
{
	return hit;
}

long af_current(void)
{
	return current;
}

void af_hold(int on)
{
	held = on;
}

void af_forbid(void)
{
	json_set_alloc_funcs(json_alloc, free);
	forbidden = 1;
}

long af_every_allocation(const char *what, af_call call, void *arg)
{
	for (long n = 1;; n++) {
		struct sb_error err = { .code = 1 };

		af_fail_nth(n);
		current = n;
		int rc = call(arg, &err);
		int struck = af_hit();
		af_fail_nth(0);
		current = 0;
		af_hold(0);
		if (!struck) {
			cr_assert_eq(rc, 0, "%s with every allocation granted: %s", what, err.msg);
			return n - 1;
		}
		/* a failure the call got round is fine: the result was checked whole */
		cr_assert(rc <= 0, "%s, allocation %ld failed: returned %d", what, n, rc);
		cr_assert(rc == 0 || (err.code == rc && err.msg[0]),
			  "%s, allocation %ld failed: %d without its error (code %d, '%s')", what, n, rc, err.code, err.msg);
	}
}
