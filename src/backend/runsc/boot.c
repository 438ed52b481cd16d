/* Boot and teardown of a runsc sandbox: its overlay disk, its spec, runsc
 * create+start (or restore) from a keeper process, and the way back. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"
#include "base/hooks.h"

#define KILL_WAIT_MS 3000

/* The paths runsc needs of a sandbox, all in its own directory. */
struct boot_paths {
	char *bundle, *pid_file, *log;
};

static void paths_clear(struct boot_paths *p)
{
	free(p->bundle);
	free(p->pid_file);
	free(p->log);
}

static int paths_fill(struct boot_paths *p, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	memset(p, 0, sizeof(*p));
	p->bundle = sb_path_join(sb->dir, "bundle");
	p->pid_file = sb_path_join(sb->dir, "runsc.pid");
	p->log = sb_path_join(sb->dir, "runsc.log");
	if (!p->bundle || !p->pid_file || !p->log) {
		paths_clear(p);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

struct sb_runsc_call sb_runsc_call_for(const struct sb_backend_sandbox *sb, enum sb_runsc_op op)
{
	struct sb_runsc_call c = SB_RUNSC_CALL_INIT(op, sb->rec->id);

	c.net = sb->rec->network ? SB_RUNSC_NET_SANDBOX : SB_RUNSC_NET_NONE;
	c.proc.timeout_ms = sb->timeout_ms;
	return c;
}

static int write_spec(const struct sb_backend_sandbox *sb, const char *bundle, struct sb_error *err)
{
	struct sb_spec_params p = {
		.rec = sb->rec, .rootfs = sb->rootfs, .workspace = sb->workspace, .exchange = sb->exchange,
		.netns_path = sb->net ? sb->net->netns_path : NULL, .hosts = sb->hosts, .resolv = sb->resolv,
		.mount_sources = sb->mount_sources,
	};

	return sb_spec_write(bundle, &p, err);
}

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

/* runsc failures whose cause is known: its words, and what they mean to the user. */
static const struct {
	const char *runsc_says;
	const char *meaning;
} known_causes[] = {
	/* measured: a guest process kept the stdio of an exec whose host side was
	 * killed; runsc checkpoints the host FD's number, which is gone at restore */
	{ "host.inode.afterLoad", N_("a process inside held a host file (the terminal or pipe of an ended session) "
				     "when the checkpoint was taken") },
};

static const char *known_cause(const char *line)
{
	for (size_t i = 0; line && i < sizeof(known_causes) / sizeof(known_causes[0]); i++)
		if (strstr(line, known_causes[i].runsc_says))
			return _(known_causes[i].meaning);
	return NULL;
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
	sb_log("runsc %s of sandbox '%s' failed: %.400s", what, name, why ? why : "");
	const char *cause = known_cause(why);
	if (cause)
		sb_error_set(err, rc, _("runsc %s of sandbox '%s' failed: %s"), what, name, cause);
	else
		sb_error_set(err, rc, _("runsc %s of sandbox '%s' failed; %s"), what, name, sb_runsc_log_hint());
	free(text);
	return rc;
}

struct boot_ctx {
	struct sb_runsc *rs;
	const struct sb_backend_sandbox *sb;
	const struct boot_paths *paths;
	const char *image_path;          /* restore from here; NULL: create + start */
	int (*net_hook)(void *);         /* start/restore pre_exec (netstack workaround) or NULL */
	void *net_hook_arg;
};

static int boot_calls(const struct boot_ctx *c, int logfd, struct sb_error *err)
{
	const char *name = c->sb->rec->name;
	struct sb_runsc_call call = sb_runsc_call_for(c->sb, c->image_path ? SB_RUNSC_RESTORE : SB_RUNSC_CREATE);
	int rc;

	call.bundle = c->paths->bundle;
	call.pid_file = c->paths->pid_file;
	call.image_path = c->image_path;
	call.detach = c->image_path != NULL;
	/* restore sets the network up; create leaves it to start */
	if (c->image_path) {
		call.pre_exec = c->net_hook;
		call.pre_exec_arg = c->net_hook_arg;
	}
	/* the sandbox inherits this stdio: never a pipe that someone reads to EOF */
	call.proc.stdout_fd = call.proc.stderr_fd = logfd;
	if ((rc = sb_runsc_run(NULL, c->rs, &call, err)) < 0)
		return log_error(rc, c->paths->log, c->image_path ? "restore" : "create", name, err);
	if (!c->image_path) {
		struct sb_runsc_call start = sb_runsc_call_for(c->sb, SB_RUNSC_START);
		start.pre_exec = c->net_hook;
		start.pre_exec_arg = c->net_hook_arg;
		start.proc.stdout_fd = start.proc.stderr_fd = logfd;
		if ((rc = sb_runsc_run(NULL, c->rs, &start, err)) < 0)
			return log_error(rc, c->paths->log, "start", name, err);
	}
	return 0;
}

/* runsc's sandbox and gofer processes outlive the runsc call that started them
 * and are reparented to the nearest subreaper; `runsc delete` then polls until
 * that one reaps them (~1.7 s when it is a slow pid 1). So they are started
 * from a keeper: a forked child that is a subreaper, holds nothing of ours (no
 * lock, no stdio), reaps them the moment they exit and ends with them. */
static int keeper_start(const struct boot_ctx *c, int logfd, struct sb_error *err)
{
	struct {
		int rc;
		struct sb_error err;
	} result = { SB_ERR_RUNTIME, { SB_ERR_RUNTIME, "" } };
	int p[2];

	if (sb_fault_point(SB_FAULT_RUN, "runsc keeper") < 0 || pipe2(p, O_CLOEXEC) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start sandbox '%s'"), c->sb->rec->name);
	pid_t pid = fork();
	if (pid == 0) {
		/* the pipe and the log become fds 3 and 4: copies above them first, so
		 * that neither is overwritten by the other's dup2; the diagnostic log's
		 * FILE may sit on 3 or 4 too, so the keeper does not write it */
		int devnull = open("/dev/null", O_RDWR), res = fcntl(p[1], F_DUPFD, 5), log = fcntl(logfd, F_DUPFD, 5);
		sb_log_set(NULL);
		setsid();
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		/* named for ps; in / so that it keeps no directory of the caller busy */
		prctl(PR_SET_NAME, "sb-keeper", 0, 0, 0);
		if (chdir("/") < 0)
			_exit(126);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
		    res < 0 || log < 0 || dup2(res, 3) < 0 || dup2(log, 4) < 0)
			_exit(126);
		syscall(SYS_close_range, 5, ~0U, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		/* the published ports first: one in use fails the boot before it starts */
		int *listeners = NULL, dns[2] = { -1, -1 };
		result.rc = sb_runsc_forward_listen(&listeners, c->sb, &result.err);
		/* the filtering resolver's port too (net/resolver.c): every network-on
		 * sandbox gets one, since `sandbench network` may add names later */
		if (result.rc == 0 && c->sb->net)
			result.rc = sb_resolver_open(dns, c->sb->net, &result.err);
		if (result.rc == 0)
			result.rc = boot_calls(c, 4, &result.err);
		if (result.rc == 0 && dns[0] >= 0 && sb_resolver_start(dns, c->sb->net) < 0)
			result.rc = sb_error_set(&result.err, SB_ERR_RUNTIME, _("cannot start the filtering resolver"));
		if (write(3, &result, sizeof(result)) < 0) {
			/* the caller was killed meanwhile: the sandbox still needs its reaper */
		}
		if (result.rc < 0)
			_exit(1);
		close(3);
		close(4);
		if (listeners)
			sb_runsc_forward_run(listeners, c->sb);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start sandbox '%s'"), c->sb->rec->name);
	}
	ssize_t n;
	while ((n = read(p[0], &result, sizeof(result))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n != (ssize_t)sizeof(result)) {
		char *text = NULL;
		sb_fs_read_file(&text, NULL, c->paths->log, 1 << 16, NULL);
		sb_error_set(err, SB_ERR_RUNTIME, _("the runsc keeper of sandbox '%s' died: %s"), c->sb->rec->name,
			     text ? text : "");
		free(text);
		return SB_ERR_RUNTIME;
	}
	if (result.rc < 0) {
		waitpid(pid, NULL, 0);
		if (err)
			*err = result.err;
	}
	return result.rc;
}


int sb_runsc_boot(struct sb_runsc *rs, struct sb_root *root, const struct sb_backend_sandbox *sb,
		  const char *image_path, struct sb_error *err)
{
	struct boot_ctx c = { .rs = rs, .sb = sb, .image_path = image_path };
	struct boot_paths p;
	const char *name = sb->rec->name;
	int rc;

	if ((rc = paths_fill(&p, sb, err)) < 0)
		return rc;
	c.paths = &p;
	/* a temporary sandbox's disk is thrown away anyway: no syncs for it */
	rc = sb_overlay_mount(sb->rootfs, sb->lower, sb->upper, sb->work, sb->rec->kind == SB_KIND_TEMPORARY, err);
	if (rc == 0 && sb->net)
		rc = sb_runsc_net_hook(&c.net_hook, &c.net_hook_arg, root, sb->net, err);
	if (rc == 0)
		rc = write_spec(sb, p.bundle, err);
	if (rc < 0) {
		paths_clear(&p);
		sb_error_wrap(err, _("cannot prepare sandbox '%s'"), name);
		return rc;
	}
	unlink(p.pid_file);
	int logfd = open(p.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open the log of sandbox '%s'"), name);
	} else {
		/* the keeper makes these calls and does not log */
		sb_log("runsc %s %s (in its keeper)", image_path ? "restore" : "create, start", sb->rec->id);
		rc = keeper_start(&c, logfd, err);
	}
	if (logfd >= 0)
		close(logfd);
	if (rc < 0) {
		/* the error points at the log for runsc's own words: the keeper's
		 * runsc wrote them to the sandbox's log file, which goes with it */
		char *said = NULL;
		if (sb_fs_read_file(&said, NULL, p.log, 1 << 16, NULL) == 0 && said[0])
			sb_log("runsc of sandbox '%s' said: %s", name, said);
		free(said);
	}
	paths_clear(&p);
	if (rc < 0) {
		struct sb_error ignored;
		struct sb_runsc_call del = sb_runsc_call_for(sb, SB_RUNSC_DELETE);
		del.force = 1;
		sb_runsc_run(NULL, rs, &del, &ignored);
		sb_error_wrap(err, _("cannot start sandbox '%s'"), name);
		return rc;
	}
	return 0;
}

/* runsc makes a cgroup /<id> in every v1 hierarchy; a failed boot can leak it. */
void sb_runsc_remove_cgroups(const char *id)
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
/* Its bundle, or its container id (the last argument): a claimed pool
 * member (docs/pool.md) runs on under a renamed directory. */
static int is_sandbox_process(const char *bundle, const char *id, pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int match = 0;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	if (sb_fs_read_file(&text, &len, path, 1 << 16, NULL) < 0)
		return 0;
	if (!strcmp(text, "runsc-sandbox")) {
		size_t last = 0;
		for (size_t i = 0; i < len && !match; i += strlen(text + i) + 1) {
			match = !strncmp(text + i, "--bundle=", 9) && !strcmp(text + i + 9, bundle);
			last = i;
		}
		match |= *id && !strcmp(text + last, id);
	}
	free(text);
	return match;
}

int sb_runsc_sandbox_pidfd(const struct sb_backend_sandbox *sb)
{
	char *pid_file = sb_path_join(sb->dir, "runsc.pid"), *bundle = sb_path_join(sb->dir, "bundle");
	char *text = NULL;
	long pid = 0;
	int fd = -1;

	if (pid_file && bundle && sb_fs_read_file(&text, NULL, pid_file, 64, NULL) == 0)
		pid = strtol(text, NULL, 10);
	/* opened before the process is identified: a pid reused after that
	 * check leaves the pidfd naming the exited process */
	if (pid > 1 && (fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) >= 0 && !is_sandbox_process(bundle, sb->rec->id, (pid_t)pid)) {
		close(fd);
		fd = -1;
	}
	free(text);
	free(pid_file);
	free(bundle);
	return fd;
}

/* Ends the sandbox with SIGKILL to its runsc-sandbox process and waits for
 * its exit (its keeper reaps it at once): what `runsc kill` achieves,
 * without starting runsc. */
static int kill_sandbox_process(const struct sb_backend_sandbox *sb)
{
	int fd = sb_runsc_sandbox_pidfd(sb), ok = 0;

	if (fd >= 0 && syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ok = poll(&pfd, 1, KILL_WAIT_MS) == 1;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int sb_runsc_teardown(struct sb_runsc *rs, const struct sb_backend_sandbox *sb, unsigned flags, struct sb_error *err)
{
	struct sb_error ignored;
	int rc = 0;

	if (rs && sb->rec->id[0]) {
		/* end the sandbox, then delete: delete -force alone polls for the
		 * exit with a backoff (~100 ms); a killed sandbox is reaped by its
		 * keeper at once. runsc kill only when the process is not found. */
		if (!(flags & SB_TEARDOWN_STOPPED) && !kill_sandbox_process(sb)) {
			struct sb_runsc_call kill = sb_runsc_call_for(sb, SB_RUNSC_KILL);
			kill.signal = "KILL";
			sb_runsc_run(NULL, rs, &kill, &ignored);
		}
		struct sb_runsc_call del = sb_runsc_call_for(sb, SB_RUNSC_DELETE);
		del.force = 1;
		if ((rc = sb_runsc_run(NULL, rs, &del, err)) < 0) {
			/* fine when runsc does not know the container (stopped, or a create
			 * that never reached runsc): state fails then too */
			struct sb_runsc_call state = sb_runsc_call_for(sb, SB_RUNSC_STATE);
			if (sb_runsc_run(NULL, rs, &state, &ignored) < 0)
				rc = 0;
		}
		sb_runsc_remove_cgroups(sb->rec->id);
	}
	if (rc < 0 && !(flags & SB_TEARDOWN_FORCE))
		return rc;
	int urc = sb_overlay_umount(sb->rootfs, rc < 0 ? &ignored : err);
	return rc < 0 ? rc : urc;
}
