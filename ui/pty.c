/* The pty master of an embedded shell, seen from the poll loop (see pty.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pty.h"

struct ui_pty {
	int fd;
	char *queue;                 /* bytes not yet accepted by the master */
	size_t qlen, qcap;
};

struct ui_pty *ui_pty_new(int fd)
{
	struct ui_pty *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fd = fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return p;
}

void ui_pty_free(struct ui_pty *p)
{
	if (!p)
		return;
	free(p->queue);
	free(p);
}

int ui_pty_fd(const struct ui_pty *p)
{
	return p->fd;
}

short ui_pty_events(const struct ui_pty *p)
{
	return (short)(POLLIN | (p->qlen ? POLLOUT : 0));
}

ssize_t ui_pty_read(struct ui_pty *p, char *buf, size_t size)
{
	ssize_t n = read(p->fd, buf, size);

	if (n > 0)
		return n;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return -1;   /* EIO (the slave side is closed) or EOF: the child is gone */
}

int ui_pty_flush(struct ui_pty *p)
{
	while (p->qlen) {
		ssize_t n = write(p->fd, p->queue, p->qlen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -1;
		}
		memmove(p->queue, p->queue + n, p->qlen - (size_t)n);
		p->qlen -= (size_t)n;
	}
	return 0;
}

int ui_pty_write(struct ui_pty *p, const char *bytes, size_t len)
{
	if (p->qlen + len > p->qcap) {
		size_t cap = (p->qlen + len) * 2;
		char *q = realloc(p->queue, cap);
		if (!q)
			return -1;
		p->queue = q;
		p->qcap = cap;
	}
	memcpy(p->queue + p->qlen, bytes, len);
	p->qlen += len;
	return ui_pty_flush(p);
}

size_t ui_pty_pending(const struct ui_pty *p)
{
	return p->qlen;
}
