/* Published ports: the keeper of a sandbox listens on each host address and
 * relays every connection to the sandbox's address on its bridge, with
 * splice(2) through a pipe per direction, all in one epoll loop (no thread or
 * process per connection). The keeper lives exactly as long as the sandbox
 * does, so the listeners go with a stop, a rm or a crash, and gc has nothing
 * of theirs to sweep. The host reaches the sandbox from its own stack
 * (output and input, never forward), so the egress policy, which filters
 * what a sandbox forwards, does not stand in the way: a published port
 * answers under --deny-all too. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"

#define CHUNK (1 << 16)
#define BIND_TRIES 50       /* the keeper of the last boot may still be closing its listeners */
#define BIND_WAIT_MS 20
#define RESET_WAIT_MS 2000  /* how long a checkpoint waits for the keeper's resets */
#define RESET_FILE "forward.reset"

static struct conn *conns;   /* the keeper's open connections */
/* closed during one batch of events, freed after it: a later event of the
 * same batch may name a closed connection */
static struct conn *graveyard;

enum ep_kind { EP_LISTEN, EP_SIGNAL, EP_CONN };

struct ep {
	enum ep_kind kind;
	int index;               /* listener: its publish entry; conn: its side */
	struct conn *conn;
};

/* Side 0 the host's client, side 1 the sandbox; direction d moves side d's
 * input to side 1-d through pipe[d], which holds pending[d] bytes. */
struct conn {
	struct conn *prev, *next;    /* every open one, for a reset before a checkpoint */
	int fd[2], pipe[2][2];
	size_t pending[2];
	int eof[2], gone[2], connecting, dead;
	struct ep ep[2];
};

static int listen_one(const struct sb_publish *p, const char *name, struct sb_error *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p->host_port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0 || inet_pton(AF_INET, p->address, &a.sin_addr) != 1)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	for (int i = 0; i < BIND_TRIES && (rc = bind(fd, (struct sockaddr *)&a, sizeof(a))) < 0 && errno == EADDRINUSE; i++)
		poll(NULL, 0, BIND_WAIT_MS);
	if (rc == 0 && listen(fd, SOMAXCONN) == 0)
		return fd;
fail:
	if (errno == EADDRINUSE)
		sb_error_set(err, SB_ERR_EXISTS, _("cannot publish %s:%u of sandbox '%s': the port is in use"), p->address,
			     p->host_port, name);
	else
		sb_error_errno(err, SB_ERR_IO, errno, _("cannot publish %s:%u of sandbox '%s'"), p->address, p->host_port,
			       name);
	if (fd >= 0)
		close(fd);
	return -1;
}

int sb_runsc_forward_listen(int **out, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	const struct sb_record *rec = sb->rec;

	*out = NULL;
	if (!rec->n_publish)
		return 0;
	if (!sb->net)
		return sb_error_set(err, SB_ERR_INVALID, _("sandbox '%s' publishes ports but has no network"), rec->name);
	if (!(*out = malloc(rec->n_publish * sizeof(**out))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < rec->n_publish; i++) {
		if (((*out)[i] = listen_one(&rec->publish[i], rec->name, err)) < 0) {
			while (i-- > 0)
				close((*out)[i]);
			free(*out);
			*out = NULL;
			return err ? err->code : SB_ERR_IO;
		}
	}
	return 0;
}

/* The sandbox side never gets a FIN from here and is reset at the end: a
 * sandbox that closed first and then got a FIN (or whose FIN crossed ours)
 * would keep the connection in TIME_WAIT for a minute, and this runsc refuses
 * to checkpoint a sandbox holding a TCP endpoint in any state but closed
 * (measured: "endpoint cannot be saved in connected state"; a reset is
 * ignored in TIME_WAIT), so stop would fail for that minute. */
static void conn_close(int ep, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (conns == c)
		conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->fd[1] >= 0) {
		struct linger reset = { 1, 0 };
		setsockopt(c->fd[1], SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	}
	for (int i = 0; i < 2; i++) {
		if (c->fd[i] >= 0) {
			epoll_ctl(ep, EPOLL_CTL_DEL, c->fd[i], NULL);
			close(c->fd[i]);
		}
		for (int j = 0; j < 2; j++)
			if (c->pipe[i][j] >= 0)
				close(c->pipe[i][j]);
	}
	c->dead = 1;
	c->next = graveyard;
	graveyard = c;
}

/* What each side waits for now: input while its pipe is empty, output while
 * the other direction's pipe holds something for it. */
static void conn_arm(int ep, struct conn *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->gone[i])
			continue;
		struct epoll_event ev = { .data.ptr = &c->ep[i] };
		if (c->connecting && i == 1)
			ev.events = EPOLLOUT;
		else
			ev.events = (!c->pending[i] && !c->eof[i] && !c->connecting ? EPOLLIN : 0) |
				    (c->pending[1 - i] ? EPOLLOUT : 0);
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd[i], &ev);
	}
}

/* Moves what it can in direction d; -1 when the connection is broken. */
static int pump(struct conn *c, int d)
{
	for (;;) {
		if (!c->pending[d] && !c->eof[d]) {
			ssize_t n = splice(c->fd[d], NULL, c->pipe[d][1], NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n == 0) {
				c->eof[d] = 1;
				/* the client's end is not passed on as a FIN: one that
				 * crosses the sandbox's own leaves it in TIME_WAIT (see
				 * conn_close); the sandbox side is reset when it is done */
				if (d == 1)
					shutdown(c->fd[0], SHUT_WR);
				return 0;
			}
			if (n < 0)
				return errno == EAGAIN ? 0 : errno == EINTR ? pump(c, d) : -1;
			c->pending[d] = (size_t)n;
		}
		if (!c->pending[d])
			return 0;
		ssize_t w = splice(c->pipe[d][0], NULL, c->fd[1 - d], NULL, c->pending[d], SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (w < 0)
			return errno == EAGAIN ? 0 : errno == EINTR ? pump(c, d) : -1;
		c->pending[d] -= (size_t)w;
	}
}

static void conn_new(int ep, int listener, const struct sockaddr_in *to)
{
	int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *c;

	if (fd < 0)
		return;
	if (!(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return;
	}
	c->fd[0] = fd;
	c->fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->pipe[0][0] = c->pipe[0][1] = c->pipe[1][0] = c->pipe[1][1] = -1;
	int ok = c->fd[1] >= 0 && pipe2(c->pipe[0], O_NONBLOCK | O_CLOEXEC) == 0 &&
		 pipe2(c->pipe[1], O_NONBLOCK | O_CLOEXEC) == 0 &&
		 (connect(c->fd[1], (const struct sockaddr *)to, sizeof(*to)) == 0 || errno == EINPROGRESS);
	c->connecting = 1;
	for (int i = 0; ok && i < 2; i++) {
		c->ep[i] = (struct ep){ EP_CONN, i, c };
		struct epoll_event ev = { .events = 0, .data.ptr = &c->ep[i] };
		ok = epoll_ctl(ep, EPOLL_CTL_ADD, c->fd[i], &ev) == 0;
		if (!ok)
			c->gone[i] = 1;
	}
	if ((c->next = conns))
		conns->prev = c;
	conns = c;
	if (!ok) {
		conn_close(ep, c);
		return;
	}
	conn_arm(ep, c);
}

/* SIGUSR1 (sb_runsc_forward_reset): every connection reset, then the
 * number of the request written back, so that the checkpoint waits for it. */
static void reset_all(int ep, const char *dir, unsigned *seq)
{
	char *path = sb_path_join(dir, RESET_FILE), text[16];

	while (conns)
		conn_close(ep, conns);
	snprintf(text, sizeof(text), "%u", ++*seq);
	if (path)
		sb_fs_replace(path, text, strlen(text), 0600, 0, NULL);
	free(path);
}

static void conn_event(int ep, struct conn *c, int side, unsigned events)
{
	int broken = 0;

	if (c->connecting) {
		int e = 0;
		socklen_t len = sizeof(e);
		if (side != 1 || getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e) {
			/* the client hung up first, or the sandbox refused */
			if (side == 1 || (events & (EPOLLHUP | EPOLLERR))) {
				conn_close(ep, c);
				return;
			}
		} else {
			c->connecting = 0;
		}
	}
	if (!c->connecting) {
		broken = (events & EPOLLERR) || pump(c, 0) < 0 || pump(c, 1) < 0;
		/* hung up both ways: nothing more comes from it, nothing reaches it */
		if (!broken && (events & EPOLLHUP) && c->eof[side]) {
			epoll_ctl(ep, EPOLL_CTL_DEL, c->fd[side], NULL);
			c->gone[side] = 1;
		}
	}
	if (broken || (c->eof[1] && !c->pending[1] && (c->eof[0] || c->gone[0])) ||
	    (c->gone[0] && c->gone[1]) || (c->gone[side] && !c->pending[side])) {
		conn_close(ep, c);
		return;
	}
	conn_arm(ep, c);
}

/* Reaps what ended; 1 while a child is left. */
static int reap(void)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0 || (pid < 0 && errno == EINTR))
		;
	return pid == 0;
}

void sb_runsc_forward_run(const int *listeners, const struct sb_backend_sandbox *sb)
{
	size_t n = sb->rec->n_publish;
	struct ep sig = { EP_SIGNAL, 0, NULL }, *leps = calloc(n, sizeof(*leps));
	sigset_t set;
	int ep = epoll_create1(EPOLL_CLOEXEC), sfd;

	unsigned seq = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &sig };
	if (ep < 0 || sfd < 0 || !leps || epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) < 0)
		goto plain;
	for (size_t i = 0; i < n; i++) {
		leps[i] = (struct ep){ EP_LISTEN, (int)i, NULL };
		ev.data.ptr = &leps[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, listeners[i], &ev);
	}
	/* a child that ended before the mask was set sent its signal already */
	while (reap()) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < k; i++) {
			struct ep *e = evs[i].data.ptr;
			if (e->kind == EP_SIGNAL) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					if (si.ssi_signo == SIGUSR1)
						reset_all(ep, sb->dir, &seq);
			} else if (e->kind == EP_LISTEN) {
				const struct sb_publish *p = &sb->rec->publish[e->index];
				struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(p->port) };
				inet_pton(AF_INET, sb->net->address, &to.sin_addr);
				conn_new(ep, listeners[e->index], &to);
			} else if (!e->conn->dead) {
				conn_event(ep, e->conn, e->index, evs[i].events);
			}
		}
		while (graveyard) {
			struct conn *c = graveyard;
			graveyard = c->next;
			free(c);
		}
	}
	/* the sandbox is gone: its connections and listeners go with the process */
	_exit(0);
plain:
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

/* The keeper: the parent of the sandbox's runsc-sandbox process, by name. */
static pid_t keeper_pid(const struct sb_backend_sandbox *sb)
{
	char path[64], *text = NULL;
	pid_t keeper = 0;
	int fd = sb_runsc_sandbox_pidfd(sb);

	if (fd < 0)
		return 0;
	char *pid_file = sb_path_join(sb->dir, "runsc.pid");
	if (pid_file && sb_fs_read_file(&text, NULL, pid_file, 64, NULL) == 0) {
		snprintf(path, sizeof(path), "/proc/%ld/stat", strtol(text, NULL, 10));
		free(text);
		text = NULL;
		/* "pid (comm) state ppid ...": comm may hold spaces, so after the last ')' */
		char *close_paren;
		if (sb_fs_read_file(&text, NULL, path, 4096, NULL) == 0 && (close_paren = strrchr(text, ')')))
			keeper = (pid_t)strtol(close_paren + 3, NULL, 10);
		free(text);
		text = NULL;
		snprintf(path, sizeof(path), "/proc/%ld/comm", (long)keeper);
		if (keeper <= 1 || sb_fs_read_file(&text, NULL, path, 64, NULL) < 0 || strcmp(text, "sb-keeper\n"))
			keeper = 0;
	}
	free(text);
	free(pid_file);
	close(fd);
	return keeper;
}

int sb_runsc_forward_reset(const struct sb_backend_sandbox *sb)
{
	char *path = sb_path_join(sb->dir, RESET_FILE), *before = NULL, *now = NULL;
	pid_t keeper = sb->rec->n_publish ? keeper_pid(sb) : 0;
	int done = 0;

	if (!path || keeper <= 0) {
		free(path);
		return 0;
	}
	sb_fs_read_file(&before, NULL, path, 64, NULL);
	if (kill(keeper, SIGUSR1) == 0) {
		for (int waited = 0; !done && waited < RESET_WAIT_MS; waited += 5) {
			poll(NULL, 0, 5);
			free(now);
			now = NULL;
			done = sb_fs_read_file(&now, NULL, path, 64, NULL) == 0 && (!before || strcmp(before, now));
		}
	}
	free(before);
	free(now);
	free(path);
	return done;
}
