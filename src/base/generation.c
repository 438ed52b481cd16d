#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/generation.h"
#include "base/i18n.h"

#define GEN_FILE "generation"

struct sb_generation {
	char *path;
	int fd;                  /* ROOT/generation, -1 until it exists */
	int ino_fd;              /* inotify, -1 without */
};

int sb_generation_bump(struct sb_root *root, enum sb_generation_slot slot, struct sb_error *err)
{
	uint64_t c[SB_GEN_SLOTS] = { 0 };
	char *path = sb_root_file(root, GEN_FILE);
	int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644) : -1, rc = 0;

	free(path);
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot count a change in '%s/%s'"), sb_root_path(root),
				      GEN_FILE);
	/* the lock makes read-increment-write one step: a lost update could leave
	 * a counter at a value a reader already saw, hiding a change */
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (pread(fd, c, sizeof(c), 0) < 0)
		memset(c, 0, sizeof(c));
	c[slot]++;
	if (pwrite(fd, c, sizeof(c), 0) != (ssize_t)sizeof(c))
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot count a change in '%s/%s'"), sb_root_path(root),
				    GEN_FILE);
	close(fd);
	return rc;
}

/* (Re)opens the counter file, creating it when we may, and watches it. */
static void attach(struct sb_generation *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = open(g->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (g->fd < 0)
		g->fd = open(g->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (g->fd >= 0 && g->ino_fd >= 0)
		inotify_add_watch(g->ino_fd, g->path, IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF);
}

int sb_generation_open(struct sb_generation **out, struct sb_root *root, struct sb_error *err)
{
	struct sb_generation *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g || !(g->path = sb_root_file(root, GEN_FILE))) {
		free(g);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	g->fd = -1;
	g->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	attach(g);
	*out = g;
	return 0;
}

void sb_generation_close(struct sb_generation *g)
{
	if (!g)
		return;
	if (g->fd >= 0)
		close(g->fd);
	if (g->ino_fd >= 0)
		close(g->ino_fd);
	free(g->path);
	free(g);
}

int sb_generation_fd(const struct sb_generation *g)
{
	return g && g->fd >= 0 ? g->ino_fd : -1;
}

/* Empties the inotify queue; 1 when the watched file may have been unlinked
 * or replaced (our open descriptor keeps its inode: no IN_DELETE_SELF then,
 * but its link count changes, IN_ATTRIB). */
static int drain(struct sb_generation *g)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int moved = 0;
	ssize_t n;

	while ((n = read(g->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n; p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->mask & (IN_ATTRIB | IN_MOVE_SELF | IN_IGNORED))
				moved = 1;
		}
	}
	return moved;
}

int sb_generation_read(unsigned long long out[SB_GEN_SLOTS], struct sb_generation *g, struct sb_error *err)
{
	uint64_t c[SB_GEN_SLOTS] = { 0 };
	struct stat st;

	memset(out, 0, sizeof(unsigned long long) * SB_GEN_SLOTS);
	/* without inotify, one more syscall each time tells a deleted file */
	if ((g->ino_fd < 0 || drain(g)) && g->fd >= 0 && fstat(g->fd, &st) == 0 && st.st_nlink == 0)
		attach(g);
	if (g->fd < 0)
		attach(g);
	if (g->fd < 0)
		return errno == ENOENT ? 0
				       : sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the change counters '%s'"), g->path);
	if (pread(g->fd, c, sizeof(c), 0) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the change counters '%s'"), g->path);
	for (int i = 0; i < SB_GEN_SLOTS; i++)
		out[i] = c[i];
	return 0;
}
