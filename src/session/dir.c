/* A session's directory, ROOT/sandboxes/<name>/sessions/<id>/, and the
 * short socket address into it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/name.h"
#include "base/root.h"
#include "sandbox/sandbox.h"

int sess_id_check(const char *id, struct sb_error *err)
{
	return sb_name_check(id, _("session id"), err);
}

int sess_dir_init(struct sess_dir *d, struct sb_root *root, const char *name, const char *id, struct sb_error *err)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->dfd = -1;
	if ((rc = sb_sandbox_name_check(name, err)) < 0 || (id && (rc = sess_id_check(id, err)) < 0))
		return rc;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->id, sizeof(d->id), "%s", id ? id : "");
	char *rel = sb_strdupf("sandboxes/%s", name);
	d->sandbox_dir = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	d->record = sb_root_record_file(root, name);
	d->sessions = d->sandbox_dir ? sb_path_join(d->sandbox_dir, "sessions") : NULL;
	d->dir = d->sessions && id ? sb_path_join(d->sessions, id) : NULL;
	if (!d->record || !d->sessions || (id && !d->dir))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

int sess_dir_open(struct sess_dir *d, struct sb_error *err)
{
	struct stat st;
	if (!d->record || stat(d->record, &st) < 0)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), d->name);
	d->dfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->dfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return sb_error_set(err, SB_ERR_NOTFOUND, _("sandbox '%s' has no session '%s'"), d->name, d->id);
	if (d->dfd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open session '%s' of sandbox '%s'"), d->id,
				      d->name);
	return 0;
}

void sess_dir_clear(struct sess_dir *d)
{
	if (!d)
		return;
	if (d->dfd >= 0)
		close(d->dfd);
	free(d->sandbox_dir);
	free(d->record);
	free(d->sessions);
	free(d->dir);
	d->dfd = -1;
	d->sandbox_dir = d->record = d->sessions = d->dir = NULL;
}

int sess_dir_live(int dfd)
{
	int fd = openat(dfd, SESS_LOCK, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int live = 0;

	if (fd < 0)
		return 0;
	/* a shared lock is refused only while the holder has its exclusive one */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		live = errno == EWOULDBLOCK;
	close(fd);
	return live;
}

void sess_sockaddr(struct sockaddr_un *sa, int dfd)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/" SESS_SOCK, dfd);
}
