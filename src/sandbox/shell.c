/* Interactive shells: `runsc exec --process` with terminal: true on a pty
 * (the recipe in notes/runsc.md), registered so that stop can end them. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

struct sb_shell {
	struct sb_root *root;
	char name[SB_SANDBOX_NAME_MAX + 1];
	char *reg;                       /* shells/<pid>: "<start time> <stem>" */
	char *stem;                      /* shells/proc-<pid>-<n>: .json the process, .ipid its pid inside */
	char *proc_file, *ipid_file;
	int master;
	pid_t pid;
	int done, status;
	time_t last_touch;
};

static char *const default_shell[] = { "/bin/sh", "-i", NULL };
static const char *const shell_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TERM=xterm-256color",
	"LANG=C.UTF-8",
};
#define N_SHELL_ENV (sizeof(shell_env) / sizeof(shell_env[0]))

static int same_key(const char *a, const char *b)
{
	size_t n = strcspn(a, "=");

	return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == '\0');
}

/* The defaults, each unless env or term gives it, then env: NULL-terminated,
 * pointing into the inputs (and into tbuf for TERM). */
static char **merge_env(char *const *env, const char *term, char *tbuf, size_t tsize)
{
	size_t n = 0, k = 0;

	while (env && env[n])
		n++;
	char **out = calloc(N_SHELL_ENV + n + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < N_SHELL_ENV; i++) {
		const char *d = shell_env[i];
		int given = 0;
		for (size_t j = 0; j < n && !given; j++)
			given = same_key(d, env[j]);
		if (given)
			continue;
		if (term && same_key(d, "TERM")) {
			snprintf(tbuf, tsize, "TERM=%s", term);
			d = tbuf;
		}
		out[k++] = (char *)d;
	}
	for (size_t j = 0; j < n; j++)
		out[k++] = env[j];
	return out;
}

/* openpty(3), but both ends close-on-exec from birth */
static int pty_open(int *master, int *slave, const struct winsize *ws)
{
	char name[64];
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), sl = -1;

	if (m < 0)
		return -1;
	if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof(name)) != 0 ||
	    (sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || ioctl(sl, TIOCSWINSZ, ws) < 0) {
		int e = errno;
		close(m);
		if (sl >= 0)
			close(sl);
		errno = e;
		return -1;
	}
	*master = m;
	*slave = sl;
	return 0;
}

static void child(int slave, char **argv)
{
	setsid();
	/* dup2 onto itself (slave already 0, 1 or 2) would keep close-on-exec */
	if (fcntl(slave, F_SETFD, 0) < 0 || ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
		_exit(126);
	if (slave > 2)
		close(slave);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(argv[0], argv);
	_exit(127);
}

/* The host command of the shell: the backend describes the process in
 * stem.json and has its pid inside written to stem.ipid. */
static int host_command(char ***argv, struct sb_shell *s, struct sb_box *b, const struct sb_shell_opts *o,
			struct sb_error *err)
{
	static unsigned serial;
	char file[64], tbuf[128];

	snprintf(file, sizeof(file), "proc-%ld-%u", (long)getpid(), serial++);
	s->stem = sb_path_join(b->shells, file);
	s->proc_file = s->stem ? sb_strdupf("%s.json", s->stem) : NULL;
	s->ipid_file = s->stem ? sb_strdupf("%s.ipid", s->stem) : NULL;
	struct sb_box_proc bp;
	int rc = sb_box_proc_make(&bp, b, o->env, o->cwd, NULL, err);
	if (rc < 0)
		return rc;
	char **env = merge_env(sb_box_proc_env(&bp), o->term, tbuf, sizeof(tbuf));
	if (!s->proc_file || !s->ipid_file || !env) {
		free(env);
		sb_box_proc_clear(&bp);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	struct sb_backend_exec x = {
		.argv = o->argv ? o->argv : default_shell, .env = env, .cwd = bp.cwd, .user = bp.has_user ? &bp.user : NULL,
		.ipid_file = s->ipid_file, .scratch = s->proc_file, .rows = o->rows, .cols = o->cols,
	};
	rc = b->be->pty(argv, b->be_state, sb_box_target(b), &x, err);
	free(env);
	sb_box_proc_clear(&bp);
	return rc;
}

static int echo_off(int slave)
{
	struct termios t;

	if (tcgetattr(slave, &t) < 0)
		return -1;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
	return tcsetattr(slave, TCSANOW, &t);
}

/* shells/<pid> of the process stop waits for: "<start time> <stem>". */
static int register_shell(struct sb_shell *s, struct sb_box *b, pid_t pid, struct sb_error *err)
{
	unsigned long long start = 0;
	int rc = 0;

	sb_proc_stat(pid, NULL, &start);
	char *pidname = sb_strdupf("%ld", (long)pid), *text = sb_strdupf("%llu %s\n", start, s->stem);
	s->reg = pidname ? sb_path_join(b->shells, pidname) : NULL;
	if (!s->reg || !text)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else
		rc = sb_fs_write_atomic(s->reg, text, strlen(text), 0600, err);
	free(pidname);
	free(text);
	return rc;
}

int sb_shell_open(struct sb_shell **out, struct sb_root *root, const char *name, const struct sb_shell_opts *opts,
		  struct sb_error *err)
{
	static const struct sb_shell_opts defaults;
	const struct sb_shell_opts *o = opts ? opts : &defaults;
	struct winsize ws = { .ws_row = o->rows ? o->rows : 24, .ws_col = o->cols ? o->cols : 80 };
	struct sb_shell_opts sized = *o;
	struct sb_shell *s = calloc(1, sizeof(*s));
	char **rargv = NULL;
	struct sb_box b = { .lock_fd = -1 };
	int rc, slave = -1;

	*out = NULL;
	sized.rows = ws.ws_row;
	sized.cols = ws.ws_col;
	if (!s)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	s->master = -1;
	s->root = root;
	snprintf(s->name, sizeof(s->name), "%.63s", name ? name : "");
	/* exclusive while starting: a stop cannot slip between the check and the registration */
	if ((rc = sb_sandbox_wake(NULL, root, name, _("a shell is opened in it"), err)) < 0 ||
	    (rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err)) < 0)
		goto fail;
	if (b.rec.state != SB_STATE_RUNNING) {
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(b.rec.state));
		goto fail;
	}
	if ((rc = sb_box_backend(&b, err)) < 0 || (rc = sb_fs_mkdirs(b.shells, 0700, err)) < 0 ||
	    (rc = host_command(&rargv, s, &b, &sized, err)) < 0)
		goto fail;
	if (pty_open(&s->master, &slave, &ws) < 0 || (o->no_echo && echo_off(slave) < 0)) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open a terminal for sandbox '%s'"), name);
		goto fail;
	}
	fcntl(s->master, F_SETFL, fcntl(s->master, F_GETFL) | O_NONBLOCK);
	s->pid = fork();
	if (s->pid == 0) {
		close(s->master);
		child(slave, rargv);
	}
	close(slave);
	slave = -1;
	if (s->pid < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot start a shell in sandbox '%s'"), name);
		goto fail;
	}
	sb_proc_keep(s->pid, 1);
	if ((rc = register_shell(s, &b, o->register_caller ? getpid() : s->pid, err)) < 0)
		goto fail;
	sb_box_touch(&b, NULL);
	sb_backend_argv_free(rargv);
	sb_box_close(&b);
	*out = s;
	return 0;
fail:
	if (slave >= 0)
		close(slave);
	sb_backend_argv_free(rargv);
	sb_box_close(&b);
	sb_shell_close(s);
	return rc;
}

int sb_shell_fd(const struct sb_shell *s)
{
	return s->master;
}

pid_t sb_shell_pid(const struct sb_shell *s)
{
	return s->pid;
}

int sb_shell_resize(struct sb_shell *s, unsigned short rows, unsigned short cols)
{
	struct winsize ws = { .ws_row = rows, .ws_col = cols };

	return ioctl(s->master, TIOCSWINSZ, &ws) < 0 ? -errno : 0;
}

void sb_shell_activity(struct sb_shell *s)
{
	time_t now = time(NULL);
	struct sb_box b = { .lock_fd = -1 };

	/* input to a paused sandbox's shell (a session's too) wakes it: every
	 * time, not once a second; one lstat when it is not paused */
	sb_sandbox_wake(NULL, s->root, s->name, _("input to a shell or session in it"), NULL);
	if (now == s->last_touch)
		return;
	s->last_touch = now;
	/* the activity file's mtime needs no lock; a stop holding it waits for this
	 * shell. Without the lock it is never made: a sandbox being removed would
	 * get it back after the removal's walk */
	if (sb_box_open(&b, s->root, s->name, BOX_LOCK_NONE, 0, NULL) == 0)
		sb_box_touch_existing(&b);
	sb_box_close(&b);
}

void sb_shell_kill(struct sb_shell *s)
{
	struct sb_box b = { .lock_fd = -1 };

	if (s->ipid_file && sb_box_open(&b, s->root, s->name, BOX_LOCK_NONE, 1, NULL) == 0)
		sb_box_kill_inside(&b, s->ipid_file);
	sb_box_close(&b);
}

int sb_shell_settled(const struct sb_shell *s)
{
	struct stat st;

	return !s->ipid_file || (stat(s->ipid_file, &st) == 0 && st.st_size > 0);
}

int sb_shell_ended_by_stop(const struct sb_shell *s)
{
	return s->reg && access(s->reg, F_OK) < 0 && errno == ENOENT;
}

int sb_shell_poll(struct sb_shell *s, int *status)
{
	int st;

	if (!s->done && s->pid > 0 && waitpid(s->pid, &st, WNOHANG) == s->pid) {
		s->done = 1;
		s->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		sb_proc_keep(s->pid, 0);
	}
	if (s->done && status)
		*status = s->status;
	return s->done;
}

int sb_shell_wait(struct sb_shell *s, int timeout_ms, int *status)
{
	if (!sb_shell_poll(s, status) && s->pid > 0) {
		int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (fd >= 0) {
			poll(&pfd, 1, timeout_ms);
			close(fd);
		}
	}
	return sb_shell_poll(s, status);
}

void sb_shell_close(struct sb_shell *s)
{
	if (!s)
		return;
	if (s->master >= 0)
		close(s->master);
	if (s->pid > 0 && !sb_shell_poll(s, NULL)) {
		/* closing the master hangs up the shell; runsc exec follows it. The
		 * kill goes through the pidfd: never to a pid that is someone else's now */
		int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (fd >= 0 && poll(&pfd, 1, 2000) <= 0)
			syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		if (fd >= 0) {
			close(fd);
			waitpid(s->pid, NULL, 0);
		}
		sb_proc_keep(s->pid, 0);
	}
	if (s->reg)
		unlink(s->reg);
	if (s->proc_file)
		unlink(s->proc_file);
	if (s->ipid_file)
		unlink(s->ipid_file);
	free(s->reg);
	free(s->stem);
	free(s->proc_file);
	free(s->ipid_file);
	free(s);
}

int sb_sandbox_process_init(struct sb_error *err)
{
	return sb_proc_subreaper_enable(err);
}
