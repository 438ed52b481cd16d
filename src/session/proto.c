/* The holder's wire format: length-prefixed frames, their types in a table. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"

/* The smallest payload each type has; types not listed are refused. */
static const struct {
	uint8_t type;
	size_t min;
} msg_table[] = {
	{ MSG_INPUT, 1 },  { MSG_CTRL, 2 },  { MSG_RESIZE, 4 },  { MSG_SIGNAL, 1 }, { MSG_TAKE, 1 },
	{ MSG_RELEASE, 0 }, { MSG_SUBSCRIBE, 8 }, { MSG_STATUS, 0 }, { MSG_OK, 8 },  { MSG_ERROR, 4 },
	{ MSG_OUTPUT, 16 }, { MSG_EVENT, 2 },  { MSG_LIVE, 0 },   { MSG_STATE, 2 },  { MSG_END, 0 },
};

uint64_t sess_get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void sess_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

int sess_frame_put(struct sb_buf *out, uint8_t type, const void *head, size_t hlen, const void *body, size_t blen)
{
	size_t n = 1 + hlen + blen;
	unsigned char h[5] = { (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
			       (unsigned char)(n >> 24), type };
	size_t was = out->len;

	if (sb_buf_add(out, h, sizeof(h)) < 0 || (hlen && sb_buf_add(out, head, hlen) < 0) ||
	    (blen && sb_buf_add(out, body, blen) < 0)) {
		out->len = was;
		return -ENOMEM;
	}
	return 0;
}

int sess_frame_take(struct sess_frame *f, const struct sb_buf *in, size_t *off, struct sb_error *err)
{
	const unsigned char *p = (const unsigned char *)in->data + *off;
	size_t have = in->len - *off;

	if (have < 4)
		return 0;
	size_t n = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
	if (n < 1 || n > SESS_FRAME_MAX + 64)
		return sb_error_set(err, SB_ERR_FORMAT, _("session frame of %zu bytes refused"), n);
	if (have < 4 + n)
		return 0;
	f->type = p[4];
	f->p = p + 5;
	f->len = n - 1;
	for (size_t i = 0; i < sizeof(msg_table) / sizeof(msg_table[0]); i++)
		if (msg_table[i].type == f->type) {
			if (f->len < msg_table[i].min)
				break;
			*off += 4 + n;
			return 1;
		}
	return sb_error_set(err, SB_ERR_FORMAT, _("session frame of type %u refused"), (unsigned)f->type);
}

ssize_t sess_fill(struct sb_buf *in, size_t *off, int fd)
{
	sb_buf_drop(in, *off);
	*off = 0;
	if (in->cap - in->len < SESS_CHUNK) {
		/* grows the buffer by a chunk, then gives the bytes back */
		size_t was = in->len;
		static const char zero[SESS_CHUNK];
		if (sb_buf_add(in, zero, SESS_CHUNK) < 0)
			return -ENOMEM;
		in->len = was;
	}
	ssize_t n = read(fd, in->data + in->len, in->cap - in->len - 1);
	if (n < 0)
		return -errno;
	in->len += (size_t)n;
	in->data[in->len] = '\0';
	return n;
}
