/* The output log: segments out.<start offset> in the session directory, the
 * newest appended to; at the cap the oldest go, so offsets stay absolute and
 * a reader asking for what went learns how much (dropped). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"

#define MIN_SEGMENT 4096ULL

static void seg_name(char *buf, size_t size, unsigned long long start)
{
	snprintf(buf, size, SESS_LOG_PREFIX "%020llu", start);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static int scan(struct sess_log *log)
{
	int fd = openat(log->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, SESS_LOG_PREFIX, strlen(SESS_LOG_PREFIX)) != 0)
			continue;
		unsigned long long start = strtoull(de->d_name + strlen(SESS_LOG_PREFIX), &end, 10);
		if (*end)
			continue;
		if (log->n == cap) {
			cap = cap ? cap * 2 : 8;
			unsigned long long *p = realloc(log->starts, cap * sizeof(*p));
			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			log->starts = p;
		}
		log->starts[log->n++] = start;
	}
	closedir(d);
	if (log->n)   /* a fresh session has no log file yet, and qsort wants a base */
		qsort(log->starts, log->n, sizeof(*log->starts), cmp_ull);
	return 0;
}

int sess_log_open(struct sess_log *log, int dfd, unsigned long long cap, struct sb_error *err)
{
	struct stat st;
	char name[64];
	int rc;

	memset(log, 0, sizeof(*log));
	log->dfd = dfd;
	log->fd = -1;
	log->cap = cap;
	if ((rc = scan(log)) < 0)
		return sb_error_errno(err, SB_ERR_IO, -rc, _("cannot read a session's log"));
	if (log->n) {
		unsigned long long last = log->starts[log->n - 1];
		seg_name(name, sizeof(name), last);
		log->first = log->starts[0];
		log->end = last + (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (unsigned long long)st.st_size : 0);
		if (cap) {
			log->fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
			if (log->fd < 0)
				return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open a session's log"));
		}
	}
	log->ring_start = log->end;
	if (cap && !(log->ring = malloc(SESS_RING_SIZE)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

void sess_log_close(struct sess_log *log)
{
	if (log->fd >= 0)
		close(log->fd);
	free(log->starts);
	free(log->ring);
	memset(log, 0, sizeof(*log));
	log->fd = -1;
}

static unsigned long long segment_max(const struct sess_log *log)
{
	return log->cap / 4 > MIN_SEGMENT ? log->cap / 4 : MIN_SEGMENT;
}

/* A new newest segment at end; the oldest go while more than cap is kept. */
static int rotate(struct sess_log *log)
{
	char name[64];
	unsigned long long *p = realloc(log->starts, (log->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	log->starts = p;
	seg_name(name, sizeof(name), log->end);
	int fd = openat(log->dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (log->fd >= 0)
		close(log->fd);
	log->fd = fd;
	log->starts[log->n++] = log->end;
	while (log->n > 1 && log->end - log->starts[0] + segment_max(log) > log->cap) {
		seg_name(name, sizeof(name), log->starts[0]);
		unlinkat(log->dfd, name, 0);
		memmove(log->starts, log->starts + 1, (log->n - 1) * sizeof(*log->starts));
		log->n--;
	}
	log->first = log->starts[0];
	return 0;
}

static void ring_put(struct sess_log *log, const char *data, size_t len)
{
	if (len >= SESS_RING_SIZE) {
		data += len - SESS_RING_SIZE;
		len = SESS_RING_SIZE;
	}
	unsigned long long at = log->end - len;
	for (size_t done = 0; done < len;) {
		size_t pos = (size_t)((at + done) % SESS_RING_SIZE), n = SESS_RING_SIZE - pos;
		if (n > len - done)
			n = len - done;
		memcpy(log->ring + pos, data + done, n);
		done += n;
	}
	if (log->end - log->ring_start > SESS_RING_SIZE)
		log->ring_start = log->end - SESS_RING_SIZE;
}

/* errno stays the cause: the holder tells a full disk from other failures. */
static int append_failed(int e, struct sb_error *err)
{
	int rc = sb_error_errno(err, SB_ERR_IO, e, _("cannot write a session's log"));

	errno = e;
	return rc;
}

int sess_log_append(struct sess_log *log, const void *data, size_t len, struct sb_error *err)
{
	const char *p = data;

	while (len > 0) {
		unsigned long long seg_end = log->n ? log->starts[log->n - 1] + segment_max(log) : log->end;
		int rc;
		if ((log->fd < 0 || log->end >= seg_end) && (rc = rotate(log)) < 0)
			return append_failed(-rc, err);
		seg_end = log->starts[log->n - 1] + segment_max(log);
		size_t n = len < seg_end - log->end ? len : (size_t)(seg_end - log->end);
		ssize_t w = write(log->fd, p, n);
		if (w <= 0)
			return append_failed(w < 0 ? errno : EIO, err);
		log->end += (unsigned long long)w;
		ring_put(log, p, (size_t)w);
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

ssize_t sess_log_read(struct sess_log *log, unsigned long long off, void *buf, size_t max)
{
	if (off < log->first || off >= log->end)
		return 0;
	if (max > log->end - off)
		max = (size_t)(log->end - off);
	if (log->ring && off >= log->ring_start) {
		size_t pos = (size_t)(off % SESS_RING_SIZE);
		if (max > SESS_RING_SIZE - pos)
			max = SESS_RING_SIZE - pos;
		memcpy(buf, log->ring + pos, max);
		return (ssize_t)max;
	}
	size_t i = log->n;
	while (i > 0 && log->starts[i - 1] > off)
		i--;
	if (i == 0)
		return 0;
	if (i < log->n && max > log->starts[i] - off)
		max = (size_t)(log->starts[i] - off);
	char name[64];
	seg_name(name, sizeof(name), log->starts[i - 1]);
	int fd = openat(log->dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, buf, max, (off_t)(off - log->starts[i - 1]));
	int e = errno;
	close(fd);
	return n < 0 ? -e : n;
}
