#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "base/proc.h"

/* The workers' fork server. A worker forked from the MCP server shares the
 * server's pages for as long as it lives, and whichever of the two writes a
 * page first copies it then (copy on write): the server on its way to the
 * next request, the worker on its way to the call. Measured on exec (docs/
 * mcp.md), that was most of what the protocol layer added, and more over
 * HTTP, whose server also maps libmicrohttpd and the TLS libraries it pulls
 * in. The spawner is forked when serving starts, before a transport exists,
 * and then only forks: workers share its few pages, never the server's.
 *
 * Over a socket pair, one message each way: the server sends a worker's
 * three pipe ends (request read end, result and log write ends) as
 * SCM_RIGHTS; the spawner forks the worker and answers with its pidfd
 * (none: the fork failed). Its workers are reaped by the kernel (SIGCHLD
 * ignored); the server signals and waits for them through their pidfds. */

#define SPAWN_FDS 3

/* One byte with up to n descriptors; 0, or -1 with errno. */
static int send_fds(int sock, const int *fds, int n)
{
	char byte = 0, ctl[CMSG_SPACE(SPAWN_FDS * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n > 0) {
		m.msg_control = ctl;
		m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	}
	while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* One message: how many descriptors came with it (into fds, at most max),
 * or -1 when the other end is gone (or failed). */
static int recv_fds(int sock, int *fds, int max)
{
	char byte, ctl[CMSG_SPACE(SPAWN_FDS * sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t got;

	while ((got = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (got <= 0)
		return -1;
	int n = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n < max)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

/* Calls fn(fd, arg) for each open descriptor but the directory's own. */
static void each_fd(void (*fn)(int fd, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fn(atoi(e->d_name), arg);
	closedir(d);
}

static void note_fd(int fd, void *arg)
{
	struct sb_mcp_server *srv = arg;

	if (fd < MCP_SPAWN_FD_MAX)
		srv->spawn_fds[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

/* What the server holds when serving starts (the root's lock, the log) is
 * what a worker may need; a spawner started again later is a copy of a
 * server that also holds sockets, other calls' pipes and the next spare's:
 * it closes all of those. A worker that held a copy of its own request
 * pipe's write end would wait for its request for ever. */
static void close_later_fd(int fd, void *arg)
{
	const struct sb_mcp_server *srv = arg;

	if (fd > 2 && fd != srv->spawner_fd &&
	    (fd >= MCP_SPAWN_FD_MAX || !(srv->spawn_fds[fd / 8] & (1u << (fd % 8)))))
		close(fd);
}

static void __attribute__((noreturn)) spawner_main(struct sb_mcp_server *srv, int sock)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* the transport's fds (stdio: the client's pipes) stay the server's */
	for (int i = 0; i < 2 && null >= 0; i++)
		if (srv->spawn_null[i] >= 0)
			dup2(null, srv->spawn_null[i]);
	if (null >= 0)
		close(null);
	/* this copy's own end of the socket pair, which close_later_fd keeps */
	srv->spawner_fd = sock;
	each_fd(close_later_fd, srv);
	signal(SIGCHLD, SIG_IGN);
	prctl(PR_SET_NAME, "sandbench-spawn");
	for (;;) {
		int fds[SPAWN_FDS];
		int n = recv_fds(sock, fds, SPAWN_FDS);
		if (n < 0)
			_exit(0);
		pid_t pid = n == SPAWN_FDS ? fork() : -1;
		if (pid == 0) {
			close(sock);
			signal(SIGCHLD, SIG_DFL);
			prctl(PR_SET_NAME, "sandbench-work");
			mcp_worker_main(srv, fds[0], fds[1], fds[2]);
		}
		for (int i = 0; i < n; i++)
			close(fds[i]);
		int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (pid > 0 && pidfd < 0)
			kill(pid, SIGKILL);
		if (send_fds(sock, &pidfd, pidfd >= 0) < 0)
			_exit(0);
		if (pidfd >= 0)
			close(pidfd);
	}
}

static int spawner_start(struct sb_mcp_server *srv)
{
	int sv[2];

	if (!srv->spawn_fds_known) {
		each_fd(note_fd, srv);
		srv->spawn_fds_known = 1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		spawner_main(srv, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	/* the server's orphan reaper leaves it to mcp_spawner_stop, whose wait
	 * would otherwise find its pid reaped, or reused by another child */
	sb_proc_keep(pid, 1);
	srv->spawner_pid = pid;
	srv->spawner_fd = sv[0];
	return 0;
}

int mcp_spawner_start(struct sb_mcp_server *srv, const int null[2])
{
	mcp_spawner_stop(srv);
	srv->spawn_null[0] = null[0];
	srv->spawn_null[1] = null[1];
	memset(srv->spawn_fds, 0, sizeof(srv->spawn_fds));
	srv->spawn_fds_known = 0;
	return spawner_start(srv);
}

int mcp_spawner_ready(struct sb_mcp_server *srv)
{
	return srv->spawner_fd >= 0 ? 0 : spawner_start(srv);
}

void mcp_spawner_stop(struct sb_mcp_server *srv)
{
	if (srv->spawner_fd < 0)
		return;
	/* the end of its socket ends it */
	close(srv->spawner_fd);
	srv->spawner_fd = -1;
	while (waitpid(srv->spawner_pid, NULL, 0) < 0 && errno == EINTR)
		;
	sb_proc_keep(srv->spawner_pid, 0);
	srv->spawner_pid = 0;
}

int mcp_spawn(struct sb_mcp_server *srv, const int fds[3])
{
	int pidfd;

	if (srv->spawner_fd >= 0 && send_fds(srv->spawner_fd, fds, SPAWN_FDS) == 0) {
		int n = recv_fds(srv->spawner_fd, &pidfd, 1);
		if (n >= 0)
			return n == 1 ? pidfd : -1;
	}
	/* gone (killed by hand, say): mcp_spawner_ready starts another */
	mcp_spawner_stop(srv);
	return -2;
}
