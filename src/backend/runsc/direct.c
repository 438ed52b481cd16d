/* The way into a sandbox without the runsc CLI (freeze.c: pause and resume;
 * exec_direct.c: the warm pool's quick exec): runsc's lock and state file of
 * the container and the sandbox's control socket (urpc.c), each checked to be
 * as measured on the runsc builds of the table below (docs/pause.md), so that
 * the CLI, `runsc list` (gc) and this path can take turns on one sandbox. Any
 * other build or state is left to the CLI. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "internal.h"

/* The runsc builds (sb_runsc_build_of: size and modification time of the
 * binary) whose pause and resume were traced (docs/pause.md): the same
 * requests and replies on the same abstract socket, the same lock and state
 * file. A build missing here uses the CLI. */
static const struct {
	const char *build;
	const char *what;
} measured_builds[] = {
	{ "runsc:24013136:1681030439.000000000", "Debian runsc 0.0~20221219.0-2+b3 amd64" },
};

/* the container's state file is a few KB (its OCI spec); runsc's lock is
 * held for moments, longer only by another runsc: then the CLI waits */
#define STATE_MAX (1 << 20)
#define LOCK_WAIT_MS 1000

int sb_runsc_build_of(char *out, size_t size, const char *path)
{
	struct stat st;

	out[0] = '\0';
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	snprintf(out, size, "runsc:%lld:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	return 0;
}

static int measured(const char *build)
{
	for (size_t i = 0; build && i < sizeof(measured_builds) / sizeof(measured_builds[0]); i++)
		if (!strcmp(build, measured_builds[i].build))
			return 1;
	return 0;
}

/* Counts the occurrences of needle in text (len bytes, may hold NULs). */
static int occurrences(const char *text, size_t len, const char *needle, const char **first)
{
	size_t n = strlen(needle);
	int count = 0;

	*first = NULL;
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), needle, n)); p += n) {
		if (!count)
			*first = p;
		count++;
	}
	return count;
}

int sb_runsc_state_edit(char **out, size_t *out_len, long *pid, const char *text, size_t len, const char *id,
			const char *from, const char *to)
{
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *jpid = json_object_get(json_object_get(doc, "sandbox"), "pid");
	const char *status = json_string_value(json_object_get(doc, "status"));
	const char *cid = json_string_value(json_object_get(doc, "id"));
	char *was = sb_strdupf("\"status\":\"%s\"", from), *now = sb_strdupf("\"status\":\"%s\"", to);
	const char *at;
	int rc = SB_ERR_FORMAT;

	*out = NULL;
	*out_len = 0;
	*pid = 0;
	if (!was || !now)
		rc = SB_ERR_NOMEM;
	/* the status as runsc wrote it (compact, once in the file): replaced in
	 * place, every other byte kept as runsc wrote it */
	else if (json_is_object(doc) && cid && !strcmp(cid, id) && status && !strcmp(status, from) &&
		 json_is_integer(jpid) && json_integer_value(jpid) > 1 && occurrences(text, len, was, &at) == 1 &&
		 (*out = malloc(len - strlen(was) + strlen(now) + 1))) {
		size_t head = (size_t)(at - text), tail = len - head - strlen(was), nlen = strlen(now);
		memcpy(*out, text, head);
		memcpy(*out + head, now, nlen);
		memcpy(*out + head + nlen, at + strlen(was), tail);
		*out_len = head + nlen + tail;
		(*out)[*out_len] = '\0';
		*pid = (long)json_integer_value(jpid);
		rc = 0;
	} else if (json_is_object(doc) && status && strcmp(status, from))
		rc = SB_ERR_STATE;
	free(was);
	free(now);
	json_decref(doc);
	return rc;
}

/* runsc's lock of the container, as runsc takes it; -1 when it cannot be had
 * in a moment (or is missing: then the CLI says why). */
static int lock_state(const char *path)
{
	long long deadline = sb_clock_monotonic_ms() + LOCK_WAIT_MS;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		struct timespec ts = { 0, 2000000 };
		if ((errno != EWOULDBLOCK && errno != EINTR) || sb_clock_monotonic_ms() > deadline) {
			close(fd);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
}

void sb_runsc_direct_close(struct sb_runsc_direct *d)
{
	if (d->sock >= 0)
		close(d->sock);
	if (d->lock_fd >= 0)
		close(d->lock_fd); /* releases the flock */
	free(d->lock_path);
	free(d->state_path);
	free(d->text);
	free(d->edited);
}

const char *sb_runsc_direct_open(struct sb_runsc_direct *d, const struct sb_runsc *rs, const char *build,
				 const char *from, const char *to)
{
	const char *dir = sb_runsc_state_dir(rs);
	char name[128], peer_build[96];
	pid_t peer;
	struct sb_error e;

	if (!measured(build))
		return "not a runsc build whose protocol was measured";
	if (!d->id[0] || strspn(d->id, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(d->id) || strlen(d->id) > 64)
		return "not a container id of ours";
	d->lock_path = sb_strdupf("%s/%s_sandbox:%s.lock", dir, d->id, d->id);
	d->state_path = sb_strdupf("%s/%s_sandbox:%s.state", dir, d->id, d->id);
	if (!d->lock_path || !d->state_path)
		return "out of memory";
	if ((d->lock_fd = lock_state(d->lock_path)) < 0)
		return "runsc's lock of the container is missing or held";
	if (sb_fs_read_file(&d->text, &d->len, d->state_path, STATE_MAX, NULL) < 0)
		return "its state file cannot be read";
	int rc = sb_runsc_state_edit(&d->edited, &d->edited_len, &d->pid, d->text, d->len, d->id, from, to);
	if (rc == SB_ERR_STATE)
		return strcmp(from, "running") ? "runsc says it is not paused" : "runsc says it is not running";
	if (rc < 0)
		return "its state file is not as measured";
	snprintf(name, sizeof(name), "runsc-sandbox.%s", d->id);
	if (sb_urpc_connect(&d->sock, &peer, name, &e) < 0)
		return "its control socket does not answer";
	/* the socket's owner is the sandbox of the state file, started from a
	 * measured build: a binary replaced since runs on under "(deleted)" */
	char *exe = sb_strdupf("/proc/%ld/exe", (long)peer);
	int built = exe && sb_runsc_build_of(peer_build, sizeof(peer_build), exe) == 0;
	free(exe);
	if ((long)peer != d->pid)
		return "its control socket belongs to another process";
	if (!built || !measured(peer_build))
		return "the sandbox runs another runsc build";
	return NULL;
}
