/* status.json: the holder's pid, the state and why it ended. Written whole
 * (atomically) at start and at the end; a holder that died without writing
 * its end is known by its free lock. The end must survive a full disk: the
 * start also writes a spare record at its final size, which the end
 * overwrites in place (no block to allocate) and renames over status.json
 * (a rename onto an existing name allocates nothing either). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

json_t *sess_status_json(const struct sess_status *st, unsigned long long offset, unsigned long long first,
			 const char *controller, int watchers)
{
	return json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:i, s:I, s:I, s:s, s:i, s:I}", "pid",
			 (json_int_t)st->pid, "state", st->state == SB_SESSION_RUNNING ? "running" : "exited", "reason",
			 st->reason, "exit_code", st->exit_code, "created_at", (json_int_t)st->created_at,
			 "started_at", (json_int_t)st->started_at, "last_input", (json_int_t)st->last_input,
			 "last_output", (json_int_t)st->last_output, "last_input_off", (json_int_t)st->last_input_off,
			 "rows", st->rows, "cols", st->cols, "restarts", st->restarts, "offset", (json_int_t)offset,
			 "first", (json_int_t)first, "controller", controller ? controller : "agent", "watchers",
			 watchers, "lost", (json_int_t)st->lost);
}

static long long num(const json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(doc, key));
}

void sess_status_from_json(struct sess_status *st, unsigned long long *offset, unsigned long long *first,
			   char controller[16], int *watchers, const json_t *doc)
{
	const char *state = json_string_value(json_object_get(doc, "state"));
	const char *reason = json_string_value(json_object_get(doc, "reason"));
	const char *ctl = json_string_value(json_object_get(doc, "controller"));
	json_t *code = json_object_get(doc, "exit_code");

	memset(st, 0, sizeof(*st));
	st->pid = (pid_t)num(doc, "pid");
	st->state = state && strcmp(state, "running") == 0 ? SB_SESSION_RUNNING : SB_SESSION_EXITED;
	snprintf(st->reason, sizeof(st->reason), "%s", reason ? reason : "");
	st->exit_code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
	st->created_at = num(doc, "created_at");
	st->started_at = num(doc, "started_at");
	st->last_input = num(doc, "last_input");
	st->last_output = num(doc, "last_output");
	st->last_input_off = (unsigned long long)num(doc, "last_input_off");
	st->rows = (unsigned short)num(doc, "rows");
	st->cols = (unsigned short)num(doc, "cols");
	st->restarts = (int)num(doc, "restarts");
	st->lost = (unsigned long long)num(doc, "lost");
	if (offset)
		*offset = (unsigned long long)num(doc, "offset");
	if (first)
		*first = (unsigned long long)num(doc, "first");
	if (controller)
		snprintf(controller, 16, "%s", ctl ? ctl : "agent");
	if (watchers)
		*watchers = (int)num(doc, "watchers");
}

/* The record padded with blanks to SESS_STATUS_SIZE (JSON allows them after
 * the value), so that every write of it covers the same blocks. */
static char *status_text(const struct sess_status *st, size_t *len)
{
	json_t *doc = sess_status_json(st, 0, 0, NULL, 0);
	char *text = doc ? sb_json_dumps(doc, JSON_COMPACT) : NULL;
	char *padded = text ? malloc(SESS_STATUS_SIZE) : NULL;
	size_t n = text ? strlen(text) : 0;

	json_decref(doc);
	if (padded && n <= SESS_STATUS_SIZE) {
		memcpy(padded, text, n); /* NOLINT(bugprone-not-null-terminated-result): padded with blanks */
		memset(padded + n, ' ', SESS_STATUS_SIZE - n);
		*len = SESS_STATUS_SIZE;
	} else {
		free(padded);
		padded = NULL;
	}
	free(text);
	return padded;
}

/* Writes text to name from offset 0 and syncs it; create: a new file, else
 * the existing one in place. -1 and errno on failure. */
static int put_file(int dfd, const char *name, int create, const char *text, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_TRUNC : 0), 0600);
	int rc = fd >= 0 && pwrite(fd, text, len, 0) == (ssize_t)len && fsync(fd) == 0 ? 0 : -1;
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
	return rc;
}

static int put_status(int dfd, const char *name, int create, const char *text, size_t len)
{
	return put_file(dfd, name, create, text, len) == 0 && renameat(dfd, name, dfd, SESS_STATUS) == 0 ? 0 : -1;
}

int sess_status_write(int dfd, const struct sess_status *st, enum sess_status_how how, struct sb_error *err)
{
	size_t len = 0;
	char *text = status_text(st, &len);
	char tmp[64];
	int rc = 0;

	if (!text)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	snprintf(tmp, sizeof(tmp), SESS_STATUS ".%ld", (long)getpid());
	if (how == SESS_STATUS_FROM_SPARE && put_status(dfd, SESS_STATUS_SPARE, 0, text, len) == 0)
		rc = 0;
	else if (put_status(dfd, tmp, 1, text, len) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write a session's status"));
		unlinkat(dfd, tmp, 0);
	} else if (how == SESS_STATUS_KEEP_SPARE && put_file(dfd, SESS_STATUS_SPARE, 1, text, len) < 0)
		/* the spare for the end: this record, at the same size, on disk now */
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write a session's status"));
	free(text);
	return rc;
}

int sess_status_read(struct sess_status *st, int dfd, struct sb_error *err)
{
	char buf[4096];
	int fd = openat(dfd, SESS_STATUS, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	int e = errno;

	if (fd >= 0)
		close(fd);
	memset(st, 0, sizeof(*st));
	st->exit_code = -1;
	st->state = SB_SESSION_EXITED;
	if (n < 0)
		return e == ENOENT ? sb_error_set(err, SB_ERR_NOTFOUND, _("the session has no status"))
				   : sb_error_errno(err, SB_ERR_IO, e, _("cannot read a session's status"));
	json_t *doc = json_loadb(buf, (size_t)n, 0, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return sb_error_set(err, SB_ERR_FORMAT, _("a session's status is not valid JSON"));
	}
	sess_status_from_json(st, NULL, NULL, NULL, NULL, doc);
	json_decref(doc);
	return 0;
}
