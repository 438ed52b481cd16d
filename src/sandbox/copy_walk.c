/* cp's flow: a tree walked into a sink, and the meter between every source
 * and its sink (counts, the cap, special files). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

#define CHUNK (256 * 1024)
#define REL_MAX 4096
/* each level holds a descriptor or two */
#define MAX_DEPTH 256

static const char *type_name(mode_t type)
{
	switch (type) {
	case S_IFIFO:
		return _("a FIFO");
	case S_IFSOCK:
		return _("a socket");
	case S_IFCHR:
	case S_IFBLK:
		return _("a device");
	default:
		return _("a special file");
	}
}

static int copyable(mode_t type)
{
	return type == S_IFREG || type == S_IFDIR || type == S_IFLNK || type == 0;
}

static int meter_begin(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err)
{
	struct sb_xmeter *m = (struct sb_xmeter *)s;
	struct sb_copy_result *r = m->res;

	if (!copyable(e->type)) {
		if (!e->path[0])
			return sb_error_set(err, SB_ERR_UNSAFE,
					    _("'%s' is %s: only files, directories and symbolic links are copied"), m->top,
					    type_name(e->type));
		if (!r->skipped++ && !(r->skipped_first = strdup(e->path)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		return 1;
	}
	if (e->type == S_IFREG && e->size > m->max - r->bytes)
		return sb_error_set(err, SB_ERR_LIMIT,
				    _("copying '%s' is refused: it holds more than the cap of %llu bytes (see --max-size)"),
				    m->top, m->max);
	m->left = e->type == S_IFREG ? e->size : 0;
	int rc = m->next->begin(m->next, e, err);
	if (rc >= 0) {
		if (e->type == S_IFDIR)
			r->dirs++;
		else if (e->type == S_IFLNK)
			r->links++;
		else
			r->files++;
	}
	return rc;
}

static int meter_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	struct sb_xmeter *m = (struct sb_xmeter *)s;

	if (len > m->left)
		return sb_error_set(err, SB_ERR_FORMAT, _("copying '%s': a file grew past its announced size"), m->top);
	m->left -= len;
	m->res->bytes += len;
	return m->next->data(m->next, buf, len, err);
}

static int meter_end(struct sb_xsink *s, struct sb_error *err)
{
	struct sb_xmeter *m = (struct sb_xmeter *)s;

	return m->next->end(m->next, err);
}

void sb_xmeter_init(struct sb_xmeter *m, struct sb_xsink *next, struct sb_copy_result *res, unsigned long long max,
		    const char *top)
{
	*m = (struct sb_xmeter){ { meter_begin, meter_data, meter_end }, next, res, max ? max : SB_COPY_MAX_DEFAULT, top, 0 };
}

/* A file's data, exactly the size its entry announced. */
static int send_data(struct sb_xsink *s, const struct sb_vnode *n, unsigned long long size, struct sb_error *err)
{
	char *buf = malloc(CHUNK);
	int fd, rc = sb_vnode_open_read(&fd, n, err);

	if (rc == 0 && !buf)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	while (rc == 0 && size > 0) {
		ssize_t r = read(fd, buf, size < CHUNK ? (size_t)size : CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			char *label = sb_vnode_label(n);
			rc = r < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), label ? label : "?")
				   : sb_error_set(err, SB_ERR_BUSY, _("'%s' shrank while it was copied"), label ? label : "?");
			free(label);
			break;
		}
		size -= (unsigned long long)r;
		rc = s->data(s, buf, (size_t)r, err);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* e's symlink target (malloc'd into *target). */
static int read_link(char **target, const struct sb_vnode *n, struct sb_error *err)
{
	char *buf = malloc(4096);
	ssize_t l = buf ? readlinkat(n->fd >= 0 ? n->fd : n->lower, "", buf, 4095) : -1;

	if (l < 0) {
		free(buf);
		return sb_error_errno(err, SB_ERR_IO, buf ? errno : ENOMEM, _("cannot read the symbolic link '%s'"), n->path);
	}
	buf[l] = '\0';
	*target = buf;
	return 0;
}

static int walk(struct sb_xsink *s, const struct sb_vnode *n, char *rel, size_t len, int depth, struct sb_error *err)
{
	char *target = NULL;
	struct sb_xentry e = {
		.path = rel, .type = n->st.st_mode & S_IFMT, .perm = n->st.st_mode & 07777, .uid = n->st.st_uid,
		.gid = n->st.st_gid, .mtime = n->st.st_mtime, .size = S_ISREG(n->st.st_mode) ? (unsigned long long)n->st.st_size : 0,
	};

	int rc = S_ISLNK(n->st.st_mode) ? read_link(&target, n, err) : 0;

	if (rc < 0)
		return rc;
	e.link = target;
	rc = s->begin(s, &e, err);
	free(target);
	if (rc < 0)
		return rc;
	/* 1: no data follows (a directory's entries do) */
	if (S_ISREG(n->st.st_mode))
		return rc == 1 ? 0 : (rc = send_data(s, n, e.size, err)) < 0 ? rc : s->end(s, err);
	if (!S_ISDIR(n->st.st_mode))
		return 0;
	if (depth == MAX_DEPTH)
		return sb_error_set(err, SB_ERR_LIMIT, _("the tree below '%s' is too deep"), n->path);
	char **names;
	size_t count;
	if ((rc = sb_vnode_list(&names, &count, n, err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < count; i++) {
		size_t nlen = strlen(names[i]);
		if (len + nlen + 2 > REL_MAX) {
			rc = sb_error_set(err, SB_ERR_LIMIT, _("a path below '%s' is too long"), n->path);
			break;
		}
		struct sb_vnode child;
		if ((rc = sb_vnode_child(&child, n, names[i], err)) < 0) {
			/* gone since the listing: a running guest's workspace changes */
			if (rc == SB_ERR_NOTFOUND)
				rc = 0;
			continue;
		}
		size_t l = len;
		if (l)
			rel[l++] = '/';
		memcpy(rel + l, names[i], nlen + 1);
		rc = walk(s, &child, rel, l + nlen, depth + 1, err);
		rel[len] = '\0';
		sb_vnode_clear(&child);
	}
	sb_names_free(names, count);
	return rc;
}

int sb_xwalk(struct sb_xsink *s, const struct sb_vnode *top, struct sb_error *err)
{
	char *rel = calloc(1, REL_MAX);
	int rc;

	if (!rel)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = walk(s, top, rel, 0, 0, err);
	free(rel);
	return rc;
}
