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
#include "cmd_session.h"
#include "base/i18n.h"

#define DETACH_KEY 0x1d        /* Ctrl-] */
#define SCROLLBACK (64 << 10)  /* output shown again on attach */

static void put_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void follow_size(struct sb_session *s)
{
	struct winsize ws;

	if (ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		sb_session_resize(s, ws.ws_row, ws.ws_col, NULL);
}

/* Output as it comes; input lines are shown where they were typed (the
 * agent's terminal does not echo). 1 when the session ended. */
static int show(struct sb_session *s)
{
	struct sb_session_item it;
	struct sb_error err;
	int got;

	while ((got = sb_session_next(s, &it, &err)) == 1) {
		if (it.kind == SB_ITEM_OUTPUT)
			put_all(1, it.data, it.len);
		else if (it.kind == SB_ITEM_EVENT && it.event.type == SB_EVENT_INPUT) {
			put_all(1, it.event.text, strlen(it.event.text));
			put_all(1, "\r\n", 2);
		} else if (it.kind == SB_ITEM_END)
			return 1;
	}
	return got < 0;
}

static int loop(struct sb_session *s, int sfd, int read_only)
{
	/* what came with the subscription's reply is buffered already */
	if (show(s))
		return SB_EXIT_OK;
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = sb_session_fd(s), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = read_only ? -1 : 0, .events = POLLIN },
		};
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			return SB_EXIT_FAILURE;
		if (pfd[0].revents && show(s))
			return SB_EXIT_OK;
		if (pfd[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGWINCH)
					return SB_EXIT_OK;
				if (!read_only)
					follow_size(s);
			}
		}
		if (pfd[2].revents) {
			char buf[4096];
			ssize_t n = read(0, buf, sizeof(buf));
			if (n <= 0)
				return SB_EXIT_OK;
			char *detach = memchr(buf, DETACH_KEY, (size_t)n);
			size_t len = detach ? (size_t)(detach - buf) : (size_t)n;
			struct sb_error err;
			if (len && sb_session_send(s, NULL, buf, len, SB_SOURCE_HUMAN, &err) < 0)
				return sb_cli_fail(&err);
			if (detach)
				return SB_EXIT_OK;
			/* output that came while the send waited for its reply is read
			 * already: poll would not wake for it */
			if (show(s))
				return SB_EXIT_OK;
		}
	}
}

static int attach_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = { { "read-only", no_argument, NULL, 'r' }, { NULL, 0, NULL, 0 } };
	static const int sigs[] = { SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT };
	const struct sb_cli_command *cmd = &sb_cmd_session_attach;
	struct sb_session_info info;
	struct sb_session *s;
	struct sb_root *root;
	struct sb_error err;
	struct termios saved, raw;
	sigset_t mask, old;
	int opt, rc, read_only = 0, tty = isatty(0);

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'r')
			return sb_cli_usage_error("session", cmd, _("invalid option"));
		read_only = 1;
	}
	if (argc - optind != 2)
		return sb_cli_usage_error("session", cmd, _("expected a sandbox name and a session id"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_session_connect(&s, root, argv[optind], argv[optind + 1], &err) < 0 ||
	    (!read_only && sb_session_take(s, SB_SOURCE_HUMAN, &err) < 0) || sb_session_status(s, &info, &err) < 0) {
		sb_session_close(s);
		return sb_cli_fail(&err);
	}
	unsigned long long since = info.offset > SCROLLBACK ? info.offset - SCROLLBACK : 0;
	sb_session_info_clear(&info);
	if (sb_session_subscribe(s, since < info.first ? info.first : since, &err) < 0) {
		sb_session_close(s);
		return sb_cli_fail(&err);
	}
	/* blocked before the size is read: a resize from then on is queued */
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* the terminal is raw: the line ends in \r\n, outside the message */
	fprintf(stderr, read_only ? _("[watching session %s; Ctrl-C leaves]")
				  : _("[attached to session %s; you have control; Ctrl-] detaches]"),
		argv[optind + 1]);
	fputs("\r\n", stderr);
	if (!read_only && tty)
		follow_size(s);
	if (tty && !read_only && tcgetattr(0, &saved) == 0) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSANOW, &raw);
	} else {
		tty = 0;
	}
	rc = sfd < 0 ? SB_EXIT_FAILURE : loop(s, sfd, read_only);
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sb_session_close(s);   /* hands control back */
	return rc;
}

const struct sb_cli_command sb_cmd_session_attach = {
	.name = "attach",
	.synopsis = "NAME ID [--read-only]",
	.summary = N_("attach this terminal to a session (take control until detached with Ctrl-])"),
	.help = N_("  --read-only  watch only: no input, the agent keeps control\n"),
	.run = attach_run,
};
