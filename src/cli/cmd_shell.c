#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

/* Copies what is readable from one fd to another; -1 at EOF or error (EIO on a
 * pty master means the shell is gone). */
static int pump(int from, int to)
{
	char buf[8192];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = to, .events = POLLOUT };
			poll(&p, 1, 1000);
			continue;
		}
		if (w < 0 && errno != EINTR)
			return -1;
		if (w > 0)
			off += w;
	}
	return (int)n;
}

static void follow_size(struct sb_shell *s)
{
	struct winsize ws;

	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		sb_shell_resize(s, ws.ws_row, ws.ws_col);
}

static int loop(struct sb_shell *s, int sfd)
{
	int master = sb_shell_fd(s), status = 0, stdin_open = 1, by_signal = 0;

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = master, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = stdin_open ? 0 : -1, .events = POLLIN },
		};
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents && pump(master, 1) < 0)
			break;
		if (pfd[2].revents) {
			if (pump(0, master) < 0)
				stdin_open = 0;
			else
				sb_shell_activity(s);
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH)
					follow_size(s);
				else if (si.ssi_signo != SIGCHLD) {
					status = 128 + (int)si.ssi_signo;
					by_signal = 1;
					break;
				}
			}
		}
		if (sb_shell_poll(s, &status))
			break;
	}
	/* what the shell wrote last, then its status (the pty may report EOF first) */
	while (pump(master, 1) > 0)
		;
	if (!by_signal)
		sb_shell_wait(s, 5000, &status);
	sb_shell_close(s);
	return status;
}

static int shell_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = { { NULL, 0, NULL, 0 } };
	static const int sigs[] = { SIGWINCH, SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT };
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	struct termios saved, raw;
	struct sb_shell *s;
	struct sb_root *root;
	struct sb_error err;
	sigset_t mask, old;
	int rc, tty = isatty(0);

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	if (getopt_long(argc, argv, "", options, NULL) != -1)
		return sb_cli_usage_error(NULL, &sb_cmd_shell, _("invalid option"));
	if (optind + 1 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_shell, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (tty)
		ioctl(0, TIOCGWINSZ, &ws);
	struct sb_shell_opts o = { .rows = ws.ws_row, .cols = ws.ws_col };
	if (sb_shell_open(&s, root, argv[optind], &o, &err) < 0)
		return sb_cli_fail(&err);
	/* signals arrive through a signalfd: the loop restores the terminal on each way out */
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (tty && tcgetattr(0, &saved) == 0) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSANOW, &raw);
	} else {
		tty = 0;
	}
	rc = sfd < 0 ? (sb_shell_close(s), SB_EXIT_FAILURE) : loop(s, sfd);
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

const struct sb_cli_command sb_cmd_shell = {
	.name = "shell",
	.synopsis = "NAME",
	.summary = N_("open an interactive shell in a sandbox on this terminal"),
	.run = shell_run,
};
