/* Error reporting: every fallible function returns 0 or a negative sb_err code
 * and fills a caller-owned struct sb_error naming the object and the cause. */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#include <stdarg.h>

enum sb_err {
	SB_OK = 0,
	SB_ERR_INVALID = -1,   /* bad argument, name or option */
	SB_ERR_NOTFOUND = -2,  /* no such sandbox, image, file, tag */
	SB_ERR_EXISTS = -3,    /* name already taken */
	SB_ERR_IO = -4,        /* a system call failed */
	SB_ERR_NOMEM = -5,
	SB_ERR_BUSY = -6,      /* locked, or in use by something else */
	SB_ERR_PREREQ = -7,    /* a runtime prerequisite is missing: fail closed */
	SB_ERR_RUNTIME = -8,   /* runsc failed */
	SB_ERR_NETWORK = -9,   /* HTTP / registry transport */
	SB_ERR_AUTH = -10,     /* credentials refused */
	SB_ERR_DIGEST = -11,   /* content does not match its digest */
	SB_ERR_FORMAT = -12,   /* malformed input: JSON, manifest, archive */
	SB_ERR_UNSAFE = -13,   /* hostile input refused */
	SB_ERR_LIMIT = -14,    /* a size or count limit was hit */
	SB_ERR_NOSPACE = -15,  /* disk full */
	SB_ERR_TIMEOUT = -16,  /* a deadline passed */
	SB_ERR_STATE = -17,    /* operation not valid in the current state */
	SB_ERR_INTERRUPTED = -18,
};

struct sb_error {
	int code;
	char msg[1024];
};

/* Sets err (which may be NULL) and returns code, so callers can write
 * `return sb_error_set(err, SB_ERR_INVALID, "...")`. */
int sb_error_set(struct sb_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int sb_error_vset(struct sb_error *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Like sb_error_set, appending ": strerror(errnum)"; ENOSPC/EDQUOT map to
 * SB_ERR_NOSPACE and ENOMEM to SB_ERR_NOMEM whatever code says. */
int sb_error_errno(struct sb_error *err, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prefixes the existing message with more context: "ctx: old message".
 * Returns err's code, which it cannot know when err is NULL (then
 * SB_ERR_INVALID): a caller whose err may be NULL returns its own rc. */
int sb_error_wrap(struct sb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_error_clear(struct sb_error *err);

#if defined(__clang_analyzer__) && !defined(SB_ERROR_IMPL)
/* clang-tidy's analyser does not see into error.c: without this it takes
 * `return sb_error_set(...)` for a possible success and reports the caller's
 * clean-up on that impossible path (double free, use after free). */
#define SB_ERROR_NEG_(call) ({ int sb_rc_ = (call); sb_rc_ < 0 ? sb_rc_ : SB_ERR_INVALID; })
#define sb_error_set(...) SB_ERROR_NEG_(sb_error_set(__VA_ARGS__))
#define sb_error_errno(...) SB_ERROR_NEG_(sb_error_errno(__VA_ARGS__))
#define sb_error_wrap(...) SB_ERROR_NEG_(sb_error_wrap(__VA_ARGS__))
#endif
/* Stable machine name of a code ("not-found", ...), for --json output. */
const char *sb_error_name(int code);

#endif
