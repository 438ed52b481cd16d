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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/digest.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "backend/runsc/overlay.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "backend/runsc/spec.h"

#define SESSION_END_MS 3000

int sb_sandbox_name_check(const char *name, struct sb_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > SB_SANDBOX_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						       "0123456789-_.") != n ||
	    name[0] == '.' || name[0] == '-')
		return sb_error_set(err, SB_ERR_INVALID,
				    _("invalid sandbox name '%s': use 1-%d letters, digits, '-', '_' or '.', "
				      "not starting with '.' or '-'"),
				    name ? name : "", SB_SANDBOX_NAME_MAX);
	return 0;
}

/* Paths below ROOT/sandboxes/<name>, by field. */
static const struct {
	size_t offset;
	const char *rel;
} box_paths[] = {
	{ offsetof(struct sb_box, rootfs), "rootfs" },
	{ offsetof(struct sb_box, upper), "upper" },
	{ offsetof(struct sb_box, work), "work" },
	{ offsetof(struct sb_box, workspace), "workspace" },
	{ offsetof(struct sb_box, bundle), "bundle" },
	{ offsetof(struct sb_box, checkpoint), "checkpoint" },
	{ offsetof(struct sb_box, checkpoint_tmp), "checkpoint.tmp" },
	{ offsetof(struct sb_box, activity), "activity" },
	{ offsetof(struct sb_box, exec_lock), "exec.lock" },
	{ offsetof(struct sb_box, sessions), "sessions" },
	{ offsetof(struct sb_box, pid_file), "runsc.pid" },
	{ offsetof(struct sb_box, resolv), "resolv.conf" },
};

int sb_box_open(struct sb_box *b, struct sb_root *root, const char *name, enum box_lock lock, int load,
		struct sb_error *err)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->root = root;
	b->lock_fd = -1;
	if ((rc = sb_sandbox_name_check(name, err)) < 0)
		return rc;
	char *rel = sb_strdupf("sandboxes/%s", name);
	b->dir = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	if (!b->dir)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < sizeof(box_paths) / sizeof(box_paths[0]); i++) {
		char **field = (char **)((char *)b + box_paths[i].offset);
		if (!(*field = sb_path_join(b->dir, box_paths[i].rel)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if ((rc = sb_settings_load(&b->settings, root, err)) < 0)
		return rc;
	if (lock != BOX_LOCK_NONE && (rc = sb_box_lock(b, lock, err)) < 0)
		return rc;
	if (load) {
		if ((rc = sb_record_load(&b->rec, root, name, err)) < 0)
			return rc;
		b->loaded = 1;
	}
	return 0;
}

int sb_box_lock(struct sb_box *b, enum box_lock lock, struct sb_error *err)
{
	const char *name = strrchr(b->dir, '/') + 1;
	char *path = sb_path_join(b->dir, "lock");

	b->lock_fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	free(path);
	if (b->lock_fd < 0)
		return errno == ENOENT ? sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), name)
				       : sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock sandbox '%s'"), name);
	while (flock(b->lock_fd, lock == BOX_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH) < 0)
		if (errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock sandbox '%s'"), name);
	return 0;
}

void sb_box_close(struct sb_box *b)
{
	if (!b)
		return;
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	for (size_t i = 0; i < sizeof(box_paths) / sizeof(box_paths[0]); i++)
		free(*(char **)((char *)b + box_paths[i].offset));
	free(b->dir);
	sb_runsc_close(b->rs);
	sb_record_clear(&b->rec);
	sb_netinfo_clear(&b->net);
	memset(b, 0, sizeof(*b));
	b->lock_fd = -1;
}

int sb_box_runsc(struct sb_box *b, struct sb_error *err)
{
	return b->rs ? 0 : sb_runsc_open(&b->rs, b->root, err);
}

struct sb_runsc_call sb_box_call(const struct sb_box *b, enum sb_runsc_op op)
{
	struct sb_runsc_call c = SB_RUNSC_CALL_INIT(op, b->rec.id);

	c.net = b->rec.network ? SB_RUNSC_NET_SANDBOX : SB_RUNSC_NET_NONE;
	c.proc.timeout_ms = b->settings.runsc_timeout_ms;
	return c;
}

char *sb_box_lower(const struct sb_box *b)
{
	char *rel = sb_strdupf("images/rootfs/%s", sb_digest_hex(b->rec.image_digest));
	char *path = rel ? sb_root_file(b->root, rel) : NULL;

	free(rel);
	return path;
}

int sb_box_exec_begin(struct sb_box *b)
{
	int fd = open(b->exec_lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd >= 0 && flock(fd, LOCK_SH) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int sb_box_exec_running(struct sb_box *b)
{
	int fd = open(b->exec_lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int busy = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;

	if (fd >= 0)
		close(fd);
	return busy;
}

int sb_box_touch(struct sb_box *b, struct sb_error *err)
{
	struct timespec ts[2] = { { .tv_sec = sb_clock_now() }, { .tv_sec = sb_clock_now() } };
	int fd = open(b->activity, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || futimens(fd, ts) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot record activity of sandbox '%s'"), b->rec.name);
	}
	close(fd);
	return 0;
}

/* Written afresh before every boot: no fsync, a torn file is rewritten. */
static int write_plain(const char *path, const char *text, struct sb_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot write '%s'"), path);
	}
	return close(fd) < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path) : 0;
}

/* A resolv.conf: the sandbox has none of its own with network off. */
static int write_etc(struct sb_box *b, struct sb_error *err)
{
	static const char resolv_off[] = "# network is off for this sandbox\n";
	char *etc = sb_path_join(b->rootfs, "etc");
	char *resolv = etc ? sb_path_join(etc, "resolv.conf") : NULL;
	char *hosts = etc ? sb_path_join(etc, "hosts") : NULL;
	char *hosts_text = sb_strdupf("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t%s\n", b->rec.name);
	char *net_text = NULL;
	int rc;

	if (!resolv || !hosts || !hosts_text)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if ((rc = sb_fs_mkdirs(etc, 0755, err)) == 0 &&
		 (!b->rec.network || (rc = sb_fs_read_file(&net_text, NULL, b->net.resolv_conf, 1 << 16, err)) == 0)) {
		const char *text = b->rec.network ? net_text : resolv_off;
		/* unlink first: the image may ship a symlink (systemd-resolved) */
		unlink(resolv);
		unlink(hosts);
		rc = write_plain(resolv, text, err);
		if (rc == 0)
			rc = write_plain(hosts, hosts_text, err);
	}
	free(etc);
	free(resolv);
	free(hosts);
	free(hosts_text);
	free(net_text);
	return rc;
}

static int write_spec(struct sb_box *b, struct sb_error *err)
{
	char *exchange = b->rec.exchange ? sb_root_file(b->root, "exchange") : NULL;
	struct sb_spec_params p = {
		.rec = &b->rec, .rootfs = b->rootfs, .workspace = b->workspace, .exchange = exchange,
		.netns_path = b->rec.network ? b->net.netns_path : NULL,
	};
	int rc = sb_spec_write(b->bundle, &p, err);

	free(exchange);
	return rc;
}

/* The create (or restore) and start calls, in the keeper. */
/* Lines of a Go panic trace: they do not say what went wrong. */
static const char *const trace_prefixes[] = { "\t", " ", "goroutine ", "panic(", "gvisor.dev/", "created by ", "main.", NULL };

static int is_trace(const char *line)
{
	for (const char *const *p = trace_prefixes; *p; p++)
		if (!strncmp(line, *p, strlen(*p)))
			return 1;
	/* frames: "pkg.Func({0xc000...}, ...)" */
	return !*line || strstr(line, "(0x") || strstr(line, "{0x") || strstr(line, "+0x");
}

/* runsc's error goes to the log with the sandbox's output: its first line that
 * is not part of a stack trace says why. */
static int log_error(int rc, const char *log, const char *what, const char *name, struct sb_error *err)
{
	char *text = NULL, *save = NULL, *why = NULL;

	if (rc == SB_ERR_TIMEOUT || sb_fs_read_file(&text, NULL, log, 1 << 20, NULL) < 0)
		return rc;
	/* the last line that says what failed; else the last one that is no frame */
	char *any = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (is_trace(l))
			continue;
		any = l;
		if (strstr(l, "error") || strstr(l, "fail") || strstr(l, "cannot"))
			why = l;
	}
	if (!why)
		why = any;
	sb_error_set(err, rc, _("runsc %s of sandbox '%s' failed: %.400s"), what, name, why ? why : "");
	free(text);
	return rc;
}

static int boot_calls(struct sb_box *b, const char *image_path, int logfd, const char *log, struct sb_error *err)
{
	struct sb_runsc_call c = sb_box_call(b, image_path ? SB_RUNSC_RESTORE : SB_RUNSC_CREATE);
	int rc;

	c.bundle = b->bundle;
	c.pid_file = b->pid_file;
	c.image_path = image_path;
	c.detach = image_path != NULL;
	/* restore sets the network up; create leaves it to start */
	if (image_path) {
		c.pre_exec = b->net_hook;
		c.pre_exec_arg = b->net_hook_arg;
	}
	/* the sandbox inherits this stdio: never a pipe that someone reads to EOF */
	c.proc.stdout_fd = c.proc.stderr_fd = logfd;
	if ((rc = sb_runsc_run(NULL, b->rs, &c, err)) < 0)
		return log_error(rc, log, image_path ? "restore" : "create", b->rec.name, err);
	if (!image_path) {
		struct sb_runsc_call start = sb_box_call(b, SB_RUNSC_START);
		start.pre_exec = b->net_hook;
		start.pre_exec_arg = b->net_hook_arg;
		start.proc.stdout_fd = start.proc.stderr_fd = logfd;
		if ((rc = sb_runsc_run(NULL, b->rs, &start, err)) < 0)
			return log_error(rc, log, "start", b->rec.name, err);
	}
	return 0;
}

/* runsc's sandbox and gofer processes outlive the runsc call that started them
 * and are reparented to the nearest subreaper; `runsc delete` then polls until
 * that one reaps them (~1.7 s when it is a slow pid 1). So they are started
 * from a keeper: a forked child that is a subreaper, holds nothing of ours (no
 * lock, no stdio), reaps them the moment they exit and ends with them. */
static int keeper_start(struct sb_box *b, const char *image_path, int logfd, const char *log, struct sb_error *err)
{
	struct {
		int rc;
		struct sb_error err;
	} result = { SB_ERR_RUNTIME, { SB_ERR_RUNTIME, "" } };
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start sandbox '%s'"), b->rec.name);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		setsid();
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		/* named for ps; in / so that it keeps no directory of the caller busy */
		prctl(PR_SET_NAME, "sb-keeper", 0, 0, 0);
		if (chdir("/") < 0)
			_exit(126);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
		    dup2(p[1], 3) < 0 || dup2(logfd, 4) < 0)
			_exit(126);
		syscall(SYS_close_range, 5, ~0U, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		result.rc = boot_calls(b, image_path, 4, log, &result.err);
		if (write(3, &result, sizeof(result)) < 0) {
			/* the caller was killed meanwhile: the sandbox still needs its reaper */
		}
		if (result.rc < 0)
			_exit(1);
		close(3);
		close(4);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start sandbox '%s'"), b->rec.name);
	}
	ssize_t n;
	while ((n = read(p[0], &result, sizeof(result))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n != (ssize_t)sizeof(result)) {
		char *text = NULL;
		sb_fs_read_file(&text, NULL, log, 1 << 16, NULL);
		return sb_error_set(err, SB_ERR_RUNTIME, _("the runsc keeper of sandbox '%s' died: %s"), b->rec.name,
				    text ? text : "");
	}
	if (result.rc < 0) {
		waitpid(pid, NULL, 0);
		*err = result.err;
	}
	return result.rc;
}

int sb_box_boot(struct sb_box *b, const char *image_path, struct sb_error *err)
{
	char *lower = sb_box_lower(b);
	int rc;

	if (!lower)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	/* a temporary sandbox's disk is thrown away anyway: no syncs for it */
	rc = sb_overlay_mount(b->rootfs, lower, b->upper, b->work, b->rec.kind == SB_KIND_TEMPORARY, err);
	free(lower);
	if (rc == 0)
		rc = sb_box_network_up(b, err);
	if (rc == 0)
		rc = write_etc(b, err);
	if (rc == 0)
		rc = write_spec(b, err);
	if (rc == 0)
		rc = sb_box_runsc(b, err);
	if (rc < 0)
		return sb_error_wrap(err, _("cannot prepare sandbox '%s'"), b->rec.name);

	unlink(b->pid_file);
	char *log = sb_path_join(b->dir, "runsc.log");
	int logfd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	if (logfd < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open the log of sandbox '%s'"), b->rec.name);
	else
		rc = keeper_start(b, image_path, logfd, log, err);
	free(log);
	if (logfd >= 0)
		close(logfd);
	if (rc < 0) {
		struct sb_error ignored;
		struct sb_runsc_call del = sb_box_call(b, SB_RUNSC_DELETE);
		del.force = 1;
		sb_runsc_run(NULL, b->rs, &del, &ignored);
		return sb_error_wrap(err, _("cannot start sandbox '%s'"), b->rec.name);
	}
	return 0;
}

/* runsc makes a cgroup /<id> in every v1 hierarchy; a failed boot can leak it. */
void sb_box_remove_cgroups(const char *id)
{
	DIR *d = opendir("/sys/fs/cgroup");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *path = sb_strdupf("/sys/fs/cgroup/%s/%s", de->d_name, id);
		if (path)
			rmdir(path);
		free(path);
	}
	closedir(d);
}

/* True when /proc/<pid>/cmdline is this sandbox's runsc-sandbox process. */
static int is_sandbox_process(const struct sb_box *b, pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int match = 0;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	if (sb_fs_read_file(&text, &len, path, 1 << 16, NULL) < 0)
		return 0;
	if (!strcmp(text, "runsc-sandbox")) {
		for (size_t i = 0; i < len && !match; i += strlen(text + i) + 1)
			match = !strncmp(text + i, "--bundle=", 9) && !strcmp(text + i + 9, b->bundle);
	}
	free(text);
	return match;
}

/* Ends the sandbox with SIGKILL to its runsc-sandbox process, found through
 * runsc's pid file, and waits for its exit (its keeper reaps it at once).
 * That is what `runsc kill` achieves, without starting runsc. The pidfd is
 * opened before the process is identified: if the pid was reused meanwhile,
 * the signal goes to the exited process and fails. */
static int kill_sandbox_process(const struct sb_box *b)
{
	char *text = NULL;
	long pid = 0;
	int fd = -1, ok = 0;

	if (sb_fs_read_file(&text, NULL, b->pid_file, 64, NULL) == 0)
		pid = strtol(text, NULL, 10);
	free(text);
	if (pid > 1 && (fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) >= 0 && is_sandbox_process(b, (pid_t)pid) &&
	    syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ok = poll(&pfd, 1, SESSION_END_MS) == 1;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int sb_box_teardown(struct sb_box *b, int force, struct sb_error *err)
{
	struct sb_error ignored;
	int rc = 0;

	if (b->rec.id[0] && (rc = sb_box_runsc(b, err)) == 0) {
		/* end the sandbox, then delete: delete -force alone polls for the
		 * exit with a backoff (~100 ms); a killed sandbox is reaped by its
		 * keeper at once. runsc kill only when the process is not found. */
		if (!b->container_stopped && !kill_sandbox_process(b)) {
			struct sb_runsc_call kill = sb_box_call(b, SB_RUNSC_KILL);
			kill.signal = "KILL";
			sb_runsc_run(NULL, b->rs, &kill, &ignored);
		}
		struct sb_runsc_call del = sb_box_call(b, SB_RUNSC_DELETE);
		del.force = 1;
		if ((rc = sb_runsc_run(NULL, b->rs, &del, err)) < 0) {
			/* fine when runsc does not know the container (stopped, or a create
			 * that never reached runsc): state fails then too */
			struct sb_runsc_call state = sb_box_call(b, SB_RUNSC_STATE);
			if (sb_runsc_run(NULL, b->rs, &state, &ignored) < 0)
				rc = 0;
		}
		sb_box_remove_cgroups(b->rec.id);
	}
	if (rc < 0 && !force)
		return rc;
	int urc = sb_overlay_umount(b->rootfs, rc < 0 ? &ignored : err);
	return rc < 0 ? rc : urc;
}

static unsigned long long start_time(pid_t pid)
{
	unsigned long long t = 0;

	return sb_proc_stat(pid, NULL, &t) == 0 ? t : 0;
}

void sb_box_kill_inside(struct sb_box *b, const char *ipid_file)
{
	char *ipid = NULL;
	struct sb_error ignored;

	if (sb_fs_read_file(&ipid, NULL, ipid_file, 64, NULL) == 0 && sb_box_runsc(b, &ignored) == 0) {
		ipid[strcspn(ipid, "\n")] = '\0';
		struct sb_runsc_call c = sb_box_call(b, SB_RUNSC_KILL);
		c.target_pid = ipid;
		c.signal = "KILL";
		c.proc.timeout_ms = 10000;
		sb_runsc_run(NULL, b->rs, &c, &ignored);
	}
	free(ipid);
}

/* Session files: sessions/<pid> holding "<start time> <stem>" (the start time
 * guards against a reused pid). */
void sb_box_end_sessions(struct sb_box *b)
{
	DIR *d = opendir(b->sessions);
	struct dirent *de;
	struct pollfd pfd[64];
	int n = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 64) {
		char *end, *text = NULL, *path;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || !(path = sb_path_join(b->sessions, de->d_name)))
			continue;
		if (sb_fs_read_file(&text, NULL, path, 4096, NULL) == 0 &&
		    strtoull(text, &end, 10) == start_time((pid_t)pid)) {
			int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
			if (fd >= 0) {
				end += strspn(end, " ");
				end[strcspn(end, "\n")] = '\0';
				/* the host `runsc exec` exits as soon as its process
				 * inside is gone: its exit means the pty is released */
				char *ipid_file = *end ? sb_strdupf("%s.ipid", end) : NULL;
				if (ipid_file)
					sb_box_kill_inside(b, ipid_file);
				free(ipid_file);
				pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
			}
		}
		unlink(path);
		free(text);
		free(path);
	}
	closedir(d);
	/* the host side follows its process inside; what remains after the grace
	 * period is killed. A pidfd turns readable when its process exits. */
	for (int i = 0; i < n; i++) {
		if (poll(&pfd[i], 1, SESSION_END_MS) <= 0)
			syscall(SYS_pidfd_send_signal, pfd[i].fd, SIGKILL, NULL, 0);
		close(pfd[i].fd);
	}
}
