#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

int sb_buf_add(struct sb_buf *b, const void *data, size_t len)
{
	if (len >= b->cap - b->len || !b->data) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len <= len) {
			if (cap > ((size_t)-1) / 2)
				return -ENOMEM;
			cap *= 2;
		}
		char *p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

char *sb_buf_steal(struct sb_buf *b, size_t *len)
{
	char *p = b->data ? b->data : calloc(1, 1);

	if (len)
		*len = b->data ? b->len : 0;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void sb_buf_drop(struct sb_buf *b, size_t n)
{
	/* an empty buffer has no data to move (memmove of NULL is undefined) */
	if (n == 0)
		return;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void sb_buf_clear(struct sb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
