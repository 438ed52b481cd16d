/* Sessions as listed (ls, inspect), kill, and gc of dead holders' sockets. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

#define KILL_WAIT_MS 10000

void sb_session_info_clear(struct sb_session_info *info)
{
	if (!info)
		return;
	free(info->reason);
	info->reason = NULL;
}

void sb_session_list_free(struct sb_session_info *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++)
		sb_session_info_clear(&list[i]);
	free(list);
}

/* An exited session (or one whose holder died) from its files. */
static int sandbox_running(struct sb_root *root, const char *name)
{
	struct sb_sandbox_info info;

	if (sb_sandbox_inspect(&info, root, name, NULL) < 0)
		return 0;
	int running = sb_sandbox_state_live(info.rec.state);
	sb_sandbox_info_clear(&info);
	return running;
}

static int from_files(struct sb_session_info *out, struct sb_root *root, const struct sess_dir *d,
		      struct sb_error *err)
{
	struct sess_status st;
	struct sess_log log;
	int rc = sess_status_read(&st, d->dfd, NULL);

	memset(out, 0, sizeof(*out));
	if (rc == SB_ERR_NOTFOUND)
		snprintf(st.reason, sizeof(st.reason), "%s", _("it never started"));
	else if (st.state == SB_SESSION_RUNNING)
		/* a stop that found the holder slow to finish killed it */
		snprintf(st.reason, sizeof(st.reason), "%s",
			 sandbox_running(root, d->name) ? _("its holder died") : _("the sandbox was stopped"));
	if ((rc = sess_log_open(&log, d->dfd, 0, err)) < 0)
		return rc;
	snprintf(out->sandbox, sizeof(out->sandbox), "%s", d->name);
	snprintf(out->id, sizeof(out->id), "%s", d->id);
	snprintf(out->controller, sizeof(out->controller), "agent");
	out->state = SB_SESSION_EXITED;
	out->reason = strdup(st.reason);
	out->exit_code = st.state == SB_SESSION_RUNNING ? -1 : st.exit_code;
	out->offset = log.end;
	out->first = log.first;
	out->created_at = st.created_at;
	out->last_input = st.last_input;
	out->last_input_off = st.last_input_off;
	out->last_output = st.last_output;
	out->rows = st.rows;
	out->cols = st.cols;
	out->lost = st.lost;
	sess_log_close(&log);
	return out->reason ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int inspect_dir(struct sb_session_info *out, struct sb_root *root, struct sess_dir *d, struct sb_error *err)
{
	struct sb_session *s;

	if (sess_dir_live(d->dfd) && sb_session_connect(&s, root, d->name, d->id, NULL) == 0) {
		int rc = sb_session_status(s, out, NULL);
		sb_session_close(s);
		if (rc == 0)
			return 0;
	}
	return from_files(out, root, d, err);
}

int sb_session_inspect(struct sb_session_info *out, struct sb_root *root, const char *name, const char *id,
		       struct sb_error *err)
{
	struct sess_dir d;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sess_dir_init(&d, root, name, id, err)) == 0 && (rc = sess_dir_open(&d, err)) == 0)
		rc = inspect_dir(out, root, &d, err);
	sess_dir_clear(&d);
	return rc;
}

static int cmp_info(const void *a, const void *b)
{
	const struct sb_session_info *x = a, *y = b;
	int c = strcmp(x->sandbox, y->sandbox);

	return c ? c : strcmp(x->id, y->id);
}

/* The session directories of one sandbox; other entries (files an older
 * state root may have there) are skipped. */
static int list_sandbox(struct sb_session_info **out, size_t *n, size_t *cap, struct sb_root *root, const char *name,
			struct sb_error *err)
{
	struct sess_dir base;
	int rc = sess_dir_init(&base, root, name, NULL, err);
	DIR *dir = rc == 0 ? opendir(base.sessions) : NULL;
	struct dirent *de;

	while (dir && (de = readdir(dir)) && rc == 0) {
		struct stat st;
		struct sess_dir d;
		if (de->d_name[0] == '.' || fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || sess_dir_init(&d, root, name, de->d_name, NULL) < 0)
			continue;
		if (sess_dir_open(&d, NULL) == 0) {
			if (*n == *cap) {
				size_t c = *cap ? *cap * 2 : 8;
				struct sb_session_info *p = realloc(*out, c * sizeof(*p));
				if (!p)
					rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
				else
					*out = p, *cap = c;
			}
			if (rc == 0 && inspect_dir(&(*out)[*n], root, &d, NULL) == 0)
				(*n)++;
		}
		sess_dir_clear(&d);
	}
	if (dir)
		closedir(dir);
	sess_dir_clear(&base);
	return rc;
}

int sb_session_list(struct sb_session_info **out, size_t *count, struct sb_root *root, const char *name,
		    struct sb_error *err)
{
	struct sb_sandbox_info *boxes = NULL, one;
	size_t nb = 0, n = 0, cap = 0;
	int rc;

	*out = NULL;
	*count = 0;
	if (name) {
		if ((rc = sb_sandbox_inspect(&one, root, name, err)) < 0)
			return rc;
		sb_sandbox_info_clear(&one);
		rc = list_sandbox(out, &n, &cap, root, name, err);
	} else if ((rc = sb_sandbox_list(&boxes, &nb, root, err)) == 0) {
		for (size_t i = 0; i < nb && rc == 0; i++)
			rc = list_sandbox(out, &n, &cap, root, boxes[i].rec.name, err);
		sb_sandbox_list_free(boxes, nb);
	}
	if (rc < 0) {
		sb_session_list_free(*out, n);
		*out = NULL;
		return rc;
	}
	if (n)
		qsort(*out, n, sizeof(**out), cmp_info);
	*count = n;
	return 0;
}

/* Until the holder's socket closes, then its lock is free. */
static void await_end(struct sb_session *s, struct sess_dir *d)
{
	long long deadline = sb_clock_monotonic_ms() + KILL_WAIT_MS;
	struct sb_session_item item;

	for (;;) {
		int got = sb_session_next(s, &item, NULL);
		if (got < 0 || (got == 1 && item.kind == SB_ITEM_END))
			break;
		long long left = deadline - sb_clock_monotonic_ms();
		struct pollfd p = { .fd = sb_session_fd(s), .events = POLLIN };
		if (got == 0 && (left <= 0 || poll(&p, 1, (int)left) <= 0))
			return;
	}
	int fd = openat(d->dfd, SESS_LOCK, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		flock(fd, LOCK_SH);   /* the holder is exiting: its lock goes with it */
		close(fd);
	}
}

int sb_session_kill(struct sb_root *root, const char *name, const char *id, int sig, struct sb_error *err)
{
	struct sb_session *s = NULL;
	struct sess_dir d;
	int rc;

	if ((rc = sess_dir_init(&d, root, name, id, err)) < 0 || (rc = sess_dir_open(&d, err)) < 0 ||
	    (rc = sb_session_connect(&s, root, name, id, err)) < 0)
		goto out;
	/* to see the end: subscribe from the end */
	struct sb_session_info info;
	if (sig != SIGINT && (rc = sb_session_status(s, &info, err)) == 0) {
		sb_session_info_clear(&info);
		rc = sb_session_subscribe(s, info.offset, err);
	}
	if (rc == 0)
		rc = sb_session_signal(s, sig, err);
	if (rc == 0 && sig != SIGINT)
		await_end(s, &d);
out:
	sb_session_close(s);
	sess_dir_clear(&d);
	return rc;
}

void sb_session_names_free(char **names, size_t count)
{
	for (size_t i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

/* A dead holder's socket goes, and a status that still says running is
 * corrected; the log and events stay. */
static int gc_session(struct sess_dir *d, int dry_run)
{
	struct sess_status st;
	struct stat sb;
	int stale = 0;

	if (sess_dir_live(d->dfd))
		return 0;
	if (fstatat(d->dfd, SESS_SOCK, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		stale = 1;
		if (!dry_run)
			unlinkat(d->dfd, SESS_SOCK, 0);
	}
	if (sess_status_read(&st, d->dfd, NULL) == 0 && st.state == SB_SESSION_RUNNING) {
		stale = 1;
		st.state = SB_SESSION_EXITED;
		snprintf(st.reason, sizeof(st.reason), "%s", _("its holder died"));
		if (!dry_run)
			sess_status_write(d->dfd, &st, SESS_STATUS_PLAIN, NULL);
	}
	return stale;
}

int sb_session_gc(char ***cleaned, size_t *count, struct sb_root *root, int dry_run, struct sb_error *err)
{
	char *boxes = sb_root_file(root, "sandboxes");
	DIR *top = boxes ? opendir(boxes) : NULL;
	struct dirent *de;
	size_t n = 0;

	*cleaned = NULL;
	*count = 0;
	free(boxes);
	while (top && (de = readdir(top))) {
		struct sess_dir base;
		if (de->d_name[0] == '.' || sess_dir_init(&base, root, de->d_name, NULL, NULL) < 0)
			continue;
		DIR *dir = opendir(base.sessions);
		struct dirent *se;
		while (dir && (se = readdir(dir))) {
			struct sess_dir d;
			if (se->d_name[0] == '.' || sess_dir_init(&d, root, de->d_name, se->d_name, NULL) < 0)
				continue;
			d.dfd = open(d.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (d.dfd >= 0 && gc_session(&d, dry_run)) {
				char **p = realloc(*cleaned, (n + 1) * sizeof(*p));
				if (p && (p[n] = sb_strdupf("%s/%s", d.name, d.id)))
					n++;
				if (p)
					*cleaned = p;
			}
			sess_dir_clear(&d);
		}
		if (dir)
			closedir(dir);
		sess_dir_clear(&base);
	}
	if (top)
		closedir(top);
	*count = n;
	(void)err;
	return 0;
}
