/* Interactive sessions: `runsc exec --process` with terminal: true on a pty
 * (the recipe in notes/runsc.md), registered so that stop can end them. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

struct sb_session {
	struct sb_root *root;
	char name[SB_SANDBOX_NAME_MAX + 1];
	char *reg;                       /* sessions/<pid>: "<start time> <stem>" */
	char *stem;                      /* sessions/proc-<pid>-<n>: .json the process, .ipid its pid inside */
	char *proc_file, *ipid_file;
	int master;
	pid_t pid;
	int done, status;
	time_t last_touch;
};

static char *const default_shell[] = { "/bin/sh", "-i", NULL };
static char *const shell_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TERM=xterm-256color",
	"LANG=C.UTF-8", NULL,
};

static void child(int slave, char **argv)
{
	setsid();
	if (ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
		_exit(126);
	if (slave > 2)
		close(slave);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(argv[0], argv);
	_exit(127);
}

/* The host command of the session: the backend describes the process in
 * stem.json and has its pid inside written to stem.ipid. */
static int host_command(char ***argv, struct sb_session *s, struct sb_box *b, char *const *cmd, unsigned short rows,
			unsigned short cols, struct sb_error *err)
{
	static unsigned serial;
	char file[64];

	snprintf(file, sizeof(file), "proc-%ld-%u", (long)getpid(), serial++);
	s->stem = sb_path_join(b->sessions, file);
	s->proc_file = s->stem ? sb_strdupf("%s.json", s->stem) : NULL;
	s->ipid_file = s->stem ? sb_strdupf("%s.ipid", s->stem) : NULL;
	if (!s->proc_file || !s->ipid_file)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	struct sb_backend_exec x = {
		.argv = cmd ? cmd : default_shell, .env = shell_env, .cwd = "/workspace",
		.ipid_file = s->ipid_file, .scratch = s->proc_file, .rows = rows, .cols = cols,
	};
	return b->be->pty(argv, b->be_state, sb_box_target(b), &x, err);
}

int sb_session_open(struct sb_session **out, struct sb_root *root, const char *name, char *const *argv,
		    unsigned short rows, unsigned short cols, struct sb_error *err)
{
	struct winsize ws = { .ws_row = rows ? rows : 24, .ws_col = cols ? cols : 80 };
	struct sb_session *s = calloc(1, sizeof(*s));
	char **rargv = NULL;
	struct sb_box b;
	int rc, slave = -1;

	*out = NULL;
	if (!s)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	s->master = -1;
	s->root = root;
	snprintf(s->name, sizeof(s->name), "%.63s", name ? name : "");
	/* exclusive while starting: a stop cannot slip between the check and the registration */
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err)) < 0)
		goto fail;
	if (b.rec.state != SB_STATE_RUNNING) {
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(b.rec.state));
		goto fail;
	}
	if ((rc = sb_box_backend(&b, err)) < 0 || (rc = sb_fs_mkdirs(b.sessions, 0700, err)) < 0 ||
	    (rc = host_command(&rargv, s, &b, argv, ws.ws_row, ws.ws_col, err)) < 0)
		goto fail;
	if (openpty(&s->master, &slave, NULL, NULL, &ws) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open a terminal for sandbox '%s'"), name);
		goto fail;
	}
	fcntl(s->master, F_SETFD, FD_CLOEXEC);
	fcntl(s->master, F_SETFL, fcntl(s->master, F_GETFL) | O_NONBLOCK);
	s->pid = fork();
	if (s->pid == 0) {
		close(s->master);
		child(slave, rargv);
	}
	close(slave);
	if (s->pid < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot start a shell in sandbox '%s'"), name);
		goto fail;
	}
	sb_proc_keep(s->pid, 1);
	unsigned long long start = 0;
	sb_proc_stat(s->pid, NULL, &start);
	char *pidname = sb_strdupf("%ld", (long)s->pid), *text = sb_strdupf("%llu %s\n", start, s->stem);
	s->reg = pidname ? sb_path_join(b.sessions, pidname) : NULL;
	if (!s->reg || !text || (rc = sb_fs_write_atomic(s->reg, text, strlen(text), 0600, err)) < 0) {
		if (rc == 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	free(pidname);
	free(text);
	sb_box_touch(&b, NULL);
	sb_backend_argv_free(rargv);
	sb_box_close(&b);
	if (rc < 0) {
		sb_session_close(s);
		return rc;
	}
	*out = s;
	return 0;
fail:
	sb_backend_argv_free(rargv);
	sb_box_close(&b);
	sb_session_close(s);
	return rc;
}

int sb_session_fd(const struct sb_session *s)
{
	return s->master;
}

pid_t sb_session_pid(const struct sb_session *s)
{
	return s->pid;
}

int sb_session_resize(struct sb_session *s, unsigned short rows, unsigned short cols)
{
	struct winsize ws = { .ws_row = rows, .ws_col = cols };

	return ioctl(s->master, TIOCSWINSZ, &ws) < 0 ? -errno : 0;
}

void sb_session_activity(struct sb_session *s)
{
	time_t now = time(NULL);

	if (now == s->last_touch)
		return;
	s->last_touch = now;
	sb_sandbox_touch(s->root, s->name, NULL);
}

int sb_session_poll(struct sb_session *s, int *status)
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

int sb_session_wait(struct sb_session *s, int timeout_ms, int *status)
{
	if (!sb_session_poll(s, status) && s->pid > 0) {
		int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (fd >= 0) {
			poll(&pfd, 1, timeout_ms);
			close(fd);
		}
	}
	return sb_session_poll(s, status);
}

void sb_session_close(struct sb_session *s)
{
	if (!s)
		return;
	if (s->master >= 0)
		close(s->master);
	if (s->pid > 0 && !sb_session_poll(s, NULL)) {
		/* closing the master hangs up the shell; runsc exec follows it */
		int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (fd < 0 || poll(&pfd, 1, 2000) <= 0)
			kill(s->pid, SIGKILL);
		if (fd >= 0)
			close(fd);
		waitpid(s->pid, NULL, 0);
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
