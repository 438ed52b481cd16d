/* A growing byte buffer, always NUL-terminated so that text can be used as a
 * string. A zeroed struct is an empty buffer. */
#ifndef SB_BUF_H
#define SB_BUF_H

#include <stddef.h>

struct sb_buf {
	char *data;              /* NULL until the first byte */
	size_t len, cap;
};

/* 0, or -ENOMEM leaving the buffer as it was. */
int sb_buf_add(struct sb_buf *b, const void *data, size_t len);
/* Hands the bytes to the caller (free()); the buffer is empty again. */
char *sb_buf_steal(struct sb_buf *b, size_t *len);
/* Drops the first n bytes (n <= len): what stays moves to the front. */
void sb_buf_drop(struct sb_buf *b, size_t n);
void sb_buf_clear(struct sb_buf *b);

#endif
