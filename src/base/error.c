#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* the definitions, not error.h's analyser-only wrappers */
#define SB_ERROR_IMPL
#include "base/error.h"

static const char *const error_names[] = {
	[0] = "ok",
	[-SB_ERR_INVALID] = "invalid",
	[-SB_ERR_NOTFOUND] = "not-found",
	[-SB_ERR_EXISTS] = "exists",
	[-SB_ERR_IO] = "io",
	[-SB_ERR_NOMEM] = "no-memory",
	[-SB_ERR_BUSY] = "busy",
	[-SB_ERR_PREREQ] = "prerequisite",
	[-SB_ERR_RUNTIME] = "runtime",
	[-SB_ERR_NETWORK] = "network",
	[-SB_ERR_AUTH] = "auth",
	[-SB_ERR_DIGEST] = "digest",
	[-SB_ERR_FORMAT] = "format",
	[-SB_ERR_UNSAFE] = "unsafe",
	[-SB_ERR_LIMIT] = "limit",
	[-SB_ERR_NOSPACE] = "no-space",
	[-SB_ERR_TIMEOUT] = "timeout",
	[-SB_ERR_STATE] = "state",
	[-SB_ERR_INTERRUPTED] = "interrupted",
};

const char *sb_error_name(int code)
{
	/* not -code: a peer's INT_MIN (a session holder's error frame) would overflow */
	size_t i = code < 0 ? 0 - (size_t)code : 0;

	if (code > 0 || i >= sizeof(error_names) / sizeof(error_names[0]) || !error_names[i])
		return "unknown";
	return error_names[i];
}

int sb_error_vset(struct sb_error *err, int code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code;
}

int sb_error_set(struct sb_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_error_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int sb_error_errno(struct sb_error *err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (errnum == ENOSPC || errnum == EDQUOT)
		code = SB_ERR_NOSPACE;
	else if (errnum == ENOMEM)
		code = SB_ERR_NOMEM;
	if (!err)
		return code;
	va_start(ap, fmt);
	sb_error_vset(err, code, fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
	return code;
}

int sb_error_wrap(struct sb_error *err, const char *fmt, ...)
{
	char prefix[512];
	size_t pl, ml, cap;
	va_list ap;

	if (!err)
		return SB_ERR_INVALID;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	pl = strlen(prefix) + 2; /* "prefix: " */
	cap = sizeof(err->msg) - 1;
	ml = strnlen(err->msg, cap);
	if (pl + ml > cap)
		ml = cap - pl; /* keep the newer context, cut the tail of the old */
	memmove(err->msg + pl, err->msg, ml);
	memcpy(err->msg, prefix, pl - 2);
	memcpy(err->msg + pl - 2, ": ", 2);
	err->msg[pl + ml] = '\0';
	return err->code;
}

void sb_error_clear(struct sb_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
