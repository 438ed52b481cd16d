/* Secret values kept out of everything sandbench records (the timeline,
 * session logs): each occurrence of a value becomes "[secret NAME]". Values
 * shorter than SB_REDACT_MIN_VALUE bytes are refused: redacting "1" would
 * garble every record and still tell the value. */
#ifndef SB_REDACT_H
#define SB_REDACT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

#define SB_REDACT_MIN_VALUE 3

struct sb_secret {
	const char *name;
	const char *value;
};

struct sb_redact;

/* Copies the secrets. SB_ERR_INVALID for a value that is too short or a
 * name that is empty. n may be 0: the redactor then passes everything on. */
int sb_redact_new(struct sb_redact **out, const struct sb_secret *secrets, size_t n, struct sb_error *err);
void sb_redact_free(struct sb_redact *r);

/* A stream: appends data to out with the secrets replaced. A tail that may
 * begin a secret is kept back until the next call shows whether it does, or
 * until sb_redact_flush. 0 or -ENOMEM. */
int sb_redact_feed(struct sb_redact *r, struct sb_buf *out, const void *data, size_t len);
int sb_redact_flush(struct sb_redact *r, struct sb_buf *out);
/* Whole text at once: a malloc'd, NUL-terminated copy (NULL when out of
 * memory), *out_len its length (out_len may be NULL). r may be NULL. */
char *sb_redact_text(const struct sb_redact *r, const void *data, size_t len, size_t *out_len);

/* Parses "NAME=VALUE" (the --secret-env form) into pointers into s, which
 * must outlive the secret. SB_ERR_INVALID when there is no '=' or NAME is empty. */
int sb_secret_parse(struct sb_secret *out, char *s, struct sb_error *err);

#endif
