#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "base/i18n.h"

#define IN_CHUNK (128 * 1024)
#define OUT_CHUNK (256 * 1024)

struct sb_gunzip {
	pthread_t thread;
	int gz_fd, out_fd;
	const char *what;
	unsigned long long consumed;   /* atomic */
	char error[256];               /* set by the thread */
};

/* 0, or -1 when the reader went away (it closed its end: not an error here). */
static int send_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *inflate_thread(void *arg)
{
	struct sb_gunzip *g = arg;
	unsigned char *in = malloc(IN_CHUNK), *out = malloc(OUT_CHUNK);
	z_stream zs = { 0 };
	int zr = Z_OK, ended = 0;

	/* 16: gzip framing only */
	if (!in || !out || inflateInit2(&zs, 15 + 16) != Z_OK) {
		snprintf(g->error, sizeof(g->error), "%s", _("out of memory"));
		goto out;
	}
	for (;;) {
		ssize_t n = read(g->gz_fd, in, IN_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(g->error, sizeof(g->error), "%s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (!ended)
				snprintf(g->error, sizeof(g->error), "%s", _("the gzip stream is truncated"));
			break;
		}
		__atomic_add_fetch(&g->consumed, (unsigned long long)n, __ATOMIC_RELAXED);
		zs.next_in = in;
		zs.avail_in = (uInt)n;
		while (zs.avail_in > 0) {
			/* a gzip file may hold several members, one after the other */
			if (ended && inflateReset(&zs) != Z_OK)
				break;
			ended = 0;
			do {
				zs.next_out = out;
				zs.avail_out = OUT_CHUNK;
				zr = inflate(&zs, Z_NO_FLUSH);
				if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
					snprintf(g->error, sizeof(g->error), _("corrupt gzip data: %s"),
						 zs.msg ? zs.msg : "?");
					goto out;
				}
				if (send_all(g->out_fd, out, OUT_CHUNK - zs.avail_out) < 0)
					goto out;
			} while (zs.avail_out == 0 && zr != Z_STREAM_END);
			if (zr == Z_STREAM_END)
				ended = 1;
			else if (zr == Z_BUF_ERROR && zs.avail_in > 0)
				break;
		}
	}
out:
	inflateEnd(&zs);
	/* end of the tar stream for the reader */
	shutdown(g->out_fd, SHUT_WR);
	free(in);
	free(out);
	return NULL;
}

int sb_gunzip_start(struct sb_gunzip **out, int *tar_fd, int gz_fd, const char *what, struct sb_error *err)
{
	struct sb_gunzip *g = calloc(1, sizeof(*g));
	int sv[2];

	*out = NULL;
	*tar_fd = -1;
	if (!g)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(g);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unpack layer '%s'"), what);
	}
	g->gz_fd = gz_fd;
	g->out_fd = sv[1];
	g->what = what;
	int e = pthread_create(&g->thread, NULL, inflate_thread, g);
	if (e != 0) {
		close(sv[0]);
		close(sv[1]);
		free(g);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot unpack layer '%s'"), what);
	}
	*out = g;
	*tar_fd = sv[0];
	return 0;
}

unsigned long long sb_gunzip_consumed(struct sb_gunzip *g)
{
	return __atomic_load_n(&g->consumed, __ATOMIC_RELAXED);
}

int sb_gunzip_finish(struct sb_gunzip *g, struct sb_error *err)
{
	int rc = 0;

	if (!g)
		return 0;
	pthread_join(g->thread, NULL);
	close(g->out_fd);
	if (g->error[0])
		rc = sb_error_set(err, SB_ERR_FORMAT, _("layer '%s' cannot be decompressed: %s"), g->what, g->error);
	free(g);
	return rc;
}
