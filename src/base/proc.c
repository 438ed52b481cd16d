#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/i18n.h"
#include "base/clock.h"
#include "base/hooks.h"
#include "base/proc.h"

struct capture {
	int fd;
	int dst;                 /* tee: where the output goes on, else -1 */
	int broken;              /* dst's reader went away */
	char *buf;
	size_t len, cap, max;
	unsigned long long total;
	int hold_ms;             /* > 0: the latest chunk waits in held (see hold_tail_ms) */
	char *held;
	size_t held_len;
	long long held_at;
};

static int subreaper;
static volatile sig_atomic_t interrupted;

void sb_proc_interrupt(int on)
{
	interrupted = on;
}
/* The children their owners wait for. It grows as needed; a child it had no
 * room for is counted in kept_lost, and no orphan is reaped while that count
 * is not zero (zombies for a while, never an owner's child taken from it). */
static pid_t *kept;
static size_t kept_len, kept_cap, kept_lost;

int sb_proc_subreaper_enable(struct sb_error *err)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot become a child subreaper"));
	subreaper = 1;
	return 0;
}

void sb_proc_keep(pid_t pid, int keep)
{
	for (size_t i = 0; i < kept_len; i++) {
		if (kept[i] == pid) {
			if (!keep)
				kept[i] = kept[--kept_len];
			return;
		}
	}
	if (!keep) {
		kept_lost -= kept_lost > 0;
		return;
	}
	if (kept_len == kept_cap) {
		size_t cap = kept_cap ? kept_cap * 2 : 16;
		pid_t *grown = realloc(kept, cap * sizeof(*kept));
		if (!grown) {
			kept_lost++;
			return;
		}
		kept = grown;
		kept_cap = cap;
	}
	kept[kept_len++] = pid;
}

static int is_kept(pid_t pid)
{
	if (kept_lost)
		return 1;
	for (size_t i = 0; i < kept_len; i++)
		if (kept[i] == pid)
			return 1;
	return 0;
}

int sb_proc_stat(pid_t pid, char *state, unsigned long long *start_time)
{
	char path[64], buf[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	(void)fclose(f); /* read only */
	buf[n] = '\0';
	/* "pid (comm) S ...": the fields follow the last ')' (comm may hold ')') */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	if (state)
		*state = p[2];
	/* starttime is field 22, the 20th after the ')' */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (start_time)
		*start_time = p ? strtoull(p + 1, NULL, 10) : 0;
	return 0;
}

static int is_zombie(pid_t pid)
{
	char state = 0;

	return sb_proc_stat(pid, &state, NULL) == 0 && state == 'Z';
}

void sb_proc_reap_orphans(void)
{
	char path[64];
	long pid;
	FILE *f;

	if (!subreaper)
		return;
	/* a loop calls this every turn: one look (the zombie is left as it is)
	 * tells whether there is anything to reap at all */
	siginfo_t si = { 0 };
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	if (!(f = fopen(path, "re")))
		return;
	/* read as a stream: a fixed buffer would cut the last pid of a long list
	 * into another, shorter one */
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && !is_kept((pid_t)pid) && is_zombie((pid_t)pid))
			waitpid((pid_t)pid, NULL, WNOHANG);
	(void)fclose(f); /* read only */
}

/* Copies a chunk to the tee's fd whole (waiting when it is non-blocking and
 * full); 0, or -1 when its reader is gone or it fails. */
static int forward(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w > 0) {
			p += w;
			len -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			poll(&pfd, 1, -1);
		} else if (w < 0 && errno != EINTR) {
			return -1;
		}
	}
	return 0;
}

/* Passes the held chunk on; -1 (dst dropped) when its reader is gone. */
static int release_held(struct capture *c)
{
	int rc = 0;

	if (c->held && c->dst >= 0 && forward(c->dst, c->held, c->held_len) < 0) {
		c->dst = -1;
		rc = -1;
	}
	free(c->held);
	c->held = NULL;
	c->held_len = 0;
	return rc;
}

/* Reads one chunk: grows the buffer as output arrives (most programs print
 * little, and a large buffer touched up front would make every later fork
 * copy it) and passes it on to the tee's fd. Returns the bytes read, 0 at
 * EOF (the pipe is closed), -1 when nothing was there. */
static ssize_t capture_read(struct capture *c)
{
	char tmp[8192];
	ssize_t r = read(c->fd, tmp, sizeof(tmp));

	if (r <= 0) {
		if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(c->fd);
			c->fd = -1;
			return 0;
		}
		return -1;
	}
	c->total += (unsigned long long)r;
	if (c->dst >= 0 && c->hold_ms > 0) {
		/* the one before goes on; this one waits for what follows it */
		char *copy = malloc((size_t)r);
		if (release_held(c) == 0 && copy) {
			memcpy(copy, tmp, (size_t)r);
			c->held = copy;
			c->held_len = (size_t)r;
			c->held_at = sb_clock_monotonic_ms();
			copy = NULL;
		} else if (c->dst >= 0 && forward(c->dst, tmp, (size_t)r) < 0) {
			c->dst = -1;
		}
		free(copy);
		if (c->dst < 0) {
			c->broken = 1;
			close(c->fd);
			c->fd = -1;
		}
	} else if (c->dst >= 0 && forward(c->dst, tmp, (size_t)r) < 0) {
		/* as if the child had written to the fd itself: it gets EPIPE */
		c->broken = 1;
		c->dst = -1;
		close(c->fd);
		c->fd = -1;
	}
	size_t keep = (size_t)r;
	if (c->len + keep > c->max)
		keep = c->max - c->len;
	if (c->len + keep + 1 > c->cap) {
		size_t cap = c->cap * 2 > c->len + keep + 1 ? c->cap * 2 : c->len + keep + 1;
		char *buf = realloc(c->buf, cap);
		if (!buf)
			return r;
		c->buf = buf;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, tmp, keep);
	c->len += keep;
	c->buf[c->len] = '\0';
	return r;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* What the child gets as stdout or stderr: the given fd, or the pipe when
 * that is captured (none given, or a tee). */
static int child_fd(const struct sb_proc_opts *o, int given, int pipe_w)
{
	return given >= 0 && !o->tee ? given : pipe_w;
}

static void child_exec(char *const argv[], const struct sb_proc_opts *o, int out_w, int err_w)
{
	int in = o->stdin_fd >= 0 ? o->stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);

	setpgid(0, 0);
	if (in < 0 || dup2(in, 0) < 0 || dup2(child_fd(o, o->stdout_fd, out_w), 1) < 0 ||
	    dup2(child_fd(o, o->stderr_fd, err_w), 2) < 0)
		_exit(126);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (o->pre_exec && o->pre_exec(o->pre_exec_arg) != 0)
		_exit(126);
	execvp(argv[0], argv);
	_exit(errno == ENOENT ? 127 : 126);
}

/* The child of child_exec without a copy of this process: posix_spawn
 * shares the address space until exec, which saves a fork's page-table copy
 * on every runsc call. Returns 0 or an errno value. */
static int spawn(pid_t *pid, char *const argv[], const struct sb_proc_opts *o, int out_w, int err_w)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	int rc;

	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return rc;
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	sigemptyset(&none);
	rc = o->stdin_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, o->stdin_fd, 0)
			      : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, child_fd(o, o->stdout_fd, out_w), 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, child_fd(o, o->stderr_fd, err_w), 2);
	if (rc == 0)
		rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	if (rc == 0)
		rc = posix_spawnattr_setpgroup(&attr, 0);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (rc == 0)
		rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

int sb_proc_run(struct sb_proc_result *out, char *const argv[], const struct sb_proc_opts *opts,
		struct sb_error *err)
{
	static const struct sb_proc_opts defaults = SB_PROC_OPTS_DEFAULT;
	const struct sb_proc_opts *o = opts ? opts : &defaults;
	size_t max = o->capture_max ? o->capture_max : 65536;
	struct capture cap[2] = {
		{ .fd = -1, .dst = o->tee ? o->stdout_fd : -1, .cap = 1, .max = max },
		{ .fd = -1, .dst = o->tee ? o->stderr_fd : -1, .cap = 1, .max = max, .hold_ms = o->hold_tail_ms },
	};
	int pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, status = 0, e = 0;
	pid_t pid = -1;

	memset(out, 0, sizeof(*out));
	cap[0].buf = calloc(1, 1);
	cap[1].buf = calloc(1, 1);
	if (!cap[0].buf || !cap[1].buf) {
		free(cap[0].buf);
		free(cap[1].buf);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (sb_fault_point(SB_FAULT_RUN, argv[0]) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)
		e = errno;
	else if (o->pre_exec) {
		if ((pid = fork()) == 0)
			child_exec(argv, o, pout[1], perr[1]);
		e = pid < 0 ? errno : 0;
		if (pid > 0 && o->after_fork)
			o->after_fork(o->pre_exec_arg);
	} else {
		e = spawn(&pid, argv, o, pout[1], perr[1]);
	}
	close_fd(pout[1]);
	close_fd(perr[1]);
	if (e) {
		close_fd(pout[0]);
		close_fd(perr[0]);
	}
	if (e == ENOENT) {
		/* as from a shell (and the fork path): not found is status 127 */
		out->status = 127;
		out->out = cap[0].buf;
		out->errout = cap[1].buf;
		return 0;
	}
	if (e) {
		free(cap[0].buf);
		free(cap[1].buf);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot run %s"), argv[0]);
	}
	cap[0].fd = pout[0];
	cap[1].fd = perr[0];
	sb_proc_keep(pid, 1);
	/* a tee's reader that goes away gives EPIPE; SIGPIPE must not end this process */
	sigset_t pipe_set, old_mask;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (o->tee)
		sigprocmask(SIG_BLOCK, &pipe_set, &old_mask);

	long long deadline = o->timeout_ms > 0 ? sb_clock_monotonic_ms() + o->timeout_ms : 0;
	int exited = 0;
	/* pidfd: the child's exit wakes poll at once (exec latency counts) */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* Wait for the child's exit, reading what it writes. A grandchild (runsc's
	 * sandbox) may keep the pipes open after the child exits, so EOF is not the end. */
	for (;;) {
		struct pollfd pfd[3];
		/* the child's exit wakes the pidfd; a subreaper also looks for exited
		 * orphans now and then (runsc's own are reaped by the keeper) */
		int n = 0, wait_ms = pidfd < 0 ? 20 : subreaper ? 50 : 1000;
		for (int i = 0; i < 2; i++)
			if (cap[i].fd >= 0)
				pfd[n++] = (struct pollfd){ .fd = cap[i].fd, .events = POLLIN };
		if (pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (interrupted)
			break;
		if (deadline) {
			long long left = deadline - sb_clock_monotonic_ms();
			if (left <= 0) {
				out->timed_out = 1;
				break;
			}
			if (left < wait_ms)
				wait_ms = (int)left;
		}
		if (cap[1].held) {
			long long quiet = cap[1].held_at + cap[1].hold_ms - sb_clock_monotonic_ms();
			wait_ms = quiet < 0 ? 0 : quiet < wait_ms ? (int)quiet : wait_ms;
		}
		if (poll(pfd, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
			break;
		if (cap[1].held && sb_clock_monotonic_ms() - cap[1].held_at >= cap[1].hold_ms && release_held(&cap[1]) < 0)
			cap[1].broken = 1;
		for (int i = 0, j = 0; i < 2; i++) {
			if (cap[i].fd < 0)
				continue;
			if (pfd[j++].revents)
				capture_read(&cap[i]);
		}
		sb_proc_reap_orphans();
		if (waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			/* drain what is already buffered, without waiting for EOF */
			for (int i = 0; i < 2; i++) {
				if (cap[i].fd >= 0)
					fcntl(cap[i].fd, F_SETFL, O_NONBLOCK);
				/* a tee passes everything on; a capture stops at its max */
				while (cap[i].fd >= 0 && (cap[i].dst >= 0 || cap[i].len < cap[i].max) &&
				       capture_read(&cap[i]) > 0)
					;
			}
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (out->timed_out || (interrupted && !exited)) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sb_proc_keep(pid, 0);
	sb_proc_reap_orphans();
	for (int i = 0; i < 2; i++)
		if (cap[i].fd >= 0)
			close(cap[i].fd);
	if (o->tee) {
		static const struct timespec now;
		while ((cap[0].broken || cap[1].broken) && sigtimedwait(&pipe_set, NULL, &now) == SIGPIPE)
			;
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	}
	/* held back only for a child that ended: the caller decides */
	if (!exited && release_held(&cap[1]) < 0)
		cap[1].broken = 1;
	out->held = cap[1].held;
	out->held_len = cap[1].held_len;
	out->out = cap[0].buf;
	out->out_len = cap[0].len;
	out->errout = cap[1].buf;
	out->err_len = cap[1].len;
	out->out_total = cap[0].total;
	out->err_total = cap[1].total;
	out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (interrupted && !out->timed_out && !exited)
		return sb_error_set(err, SB_ERR_INTERRUPTED, _("%s was interrupted"), argv[0]);
	if (out->timed_out)
		return sb_error_set(err, SB_ERR_TIMEOUT, _("%s did not finish within %d ms"), argv[0], o->timeout_ms);
	return 0;
}

void sb_proc_result_clear(struct sb_proc_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->errout);
	free(r->held);
	memset(r, 0, sizeof(*r));
}

const char *sb_proc_last_line(const struct sb_proc_result *r, char *buf, size_t size)
{
	const char *s = r->errout ? r->errout : "";
	const char *end = s + strlen(s);

	while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
		end--;
	const char *start = end;
	while (start > s && start[-1] != '\n')
		start--;
	size_t n = (size_t)(end - start);
	if (n >= size)
		n = size - 1;
	memcpy(buf, start, n);
	buf[n] = '\0';
	return buf;
}
