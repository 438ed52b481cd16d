/* The filtering resolver of a sandbox whose allow-list names hosts (net/dns.h
 * for the messages). It runs as a thread of the sandbox's keeper (the
 * subreaper that lives exactly as long as the sandbox, backend/runsc/boot.c),
 * on a UDP port of the bridge's address that the sandbox's DNS packets to the
 * gateway are DNATed to (egress_nft.c). No daemon, nothing to reattach: the
 * keeper of each boot serves again. It answers over UDP and over TCP (each
 * message behind its 2-byte length, several per connection, RFC 7766), since
 * some resolvers ask over TCP first or only.
 *
 * Per query it reads the policy file the network module writes
 * (ROOT/network/dns/NAME.policy), so `sandbench network` changes apply to the
 * next query. A name under an allowed one is asked of the upstream; its A
 * records (at the end of a CNAME chain) go into the sandbox's nftables sets
 * with the record's TTL as the element's timeout, before the answer is sent.
 * Any other name gets NXDOMAIN and is appended to NAME.denied, which the
 * timeline collects (sb_network_denials). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"
#include "net/dns.h"

#define UPSTREAM_WAIT_MS 2000
#define POLICY_MAX (64 << 10)
#define DENIED_FILE_MAX (64 << 10)   /* a guest asking for names in a loop fills no disk */
#define MIN_TIMEOUT_S 60             /* see docs/egress.md: a 0-second TTL would cut a connection at once */
#define MAX_UPSTREAMS 3
#define MAX_NAMES 64
#define TCP_CONNS 4                  /* the sandbox's own: one more closes the idlest */
#define TCP_IDLE_MS 10000

struct policy {
	char sets[2][64];                     /* any port, addr . port */
	uint32_t upstream[MAX_UPSTREAMS];     /* network order */
	size_t n_upstream;
	struct {
		char name[SB_DNS_NAME_MAX + 1];
		int port;
	} names[MAX_NAMES];
	size_t n_names;
};

struct server {
	int fd[2];               /* UDP, TCP listener (non-blocking) */
	uint32_t client;         /* the sandbox's address, network order */
	char *policy_path, *denied_path;
};

/* A TCP client: what it sent of its next message(s) so far. */
struct conn {
	int fd;                  /* -1: a free slot */
	long long last;          /* monotonic ms of its last byte */
	size_t have;
	uint8_t buf[2 + SB_DNS_MSG_MAX];
};

/* The policy file ("sets A B", "upstream ADDR", "name NAME PORT" lines); -1 when unreadable. */
static int policy_read(struct policy *p, const char *path)
{
	char *text = NULL, *save = NULL;

	memset(p, 0, sizeof(*p));
	if (sb_fs_read_file(&text, NULL, path, POLICY_MAX, NULL) < 0)
		return -1;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char word[16], a[SB_DNS_NAME_MAX + 1], b[64];
		int port;
		struct in_addr in;
		if (sscanf(l, "sets %63s %63s", p->sets[0], p->sets[1]) == 2)
			continue;
		if (sscanf(l, "upstream %15s", b) == 1 && inet_pton(AF_INET, b, &in) == 1 && p->n_upstream < MAX_UPSTREAMS)
			p->upstream[p->n_upstream++] = in.s_addr;
		else if (sscanf(l, "%15s %253s %d", word, a, &port) == 3 && !strcmp(word, "name") && p->n_names < MAX_NAMES) {
			snprintf(p->names[p->n_names].name, sizeof(p->names[0].name), "%s", a);
			p->names[p->n_names++].port = port;
		}
	}
	free(text);
	return p->sets[0][0] ? 0 : -1;
}

static int allowed(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_names; i++)
		if (sb_dns_name_under(name, p->names[i].name))
			return 1;
	return 0;
}

static void note_denied(const struct server *s, const char *name)
{
	struct stat st;
	char line[SB_DNS_NAME_MAX + 32];
	int fd = open(s->denied_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	int n = snprintf(line, sizeof(line), "%lld %s\n", sb_clock_now_ms(), name);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < DENIED_FILE_MAX && write(fd, line, (size_t)n) < 0) {
		/* nothing to do: the answer is NXDOMAIN either way */
	}
	close(fd);
}

/* Asks the upstreams in turn; 0 with *a filled, -1 when none answered. */
static int ask_upstream(struct sb_dns_answer *a, const struct policy *p, const struct sb_dns_query *q)
{
	uint8_t out[SB_DNS_MSG_MAX], in[SB_DNS_UP_MAX];

	for (size_t i = 0; i < p->n_upstream; i++) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(53), .sin_addr.s_addr = p->upstream[i] };
		uint16_t id;
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || getrandom(&id, sizeof(id), 0) != sizeof(id) ||
		    connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		size_t len = sb_dns_build_query(out, q, id);
		struct sb_dns_query asked = *q;
		asked.id = id;
		long long until = sb_clock_monotonic_ms() + UPSTREAM_WAIT_MS;
		int ok = send(fd, out, len, 0) == (ssize_t)len ? 0 : -1;
		while (ok == 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			long long left = until - sb_clock_monotonic_ms();
			if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
				ok = -1;
				break;
			}
			ssize_t r = recv(fd, in, sizeof(in), 0);
			/* a stray or forged datagram is skipped: wait on for ours */
			if (r > 0 && sb_dns_parse_answer(a, &asked, in, (size_t)r) == 0)
				break;
		}
		close(fd);
		if (ok == 0)
			return 0;
	}
	return -1;
}

/* Runs nft with script on stdin and waits for it. The keeper's own loop
 * reaps every child that signals SIGCHLD (waitpid(-1)), and an exec makes a
 * child signal SIGCHLD again; so nft is the child of an intermediate cloned
 * without an exit signal, which never execs and reports nft's status. */
static int run_nft(const char *script)
{
	static const char *const paths[] = { "/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", NULL };
	const char *nft = NULL;
	int fds[2], st = 0;
	size_t len = strlen(script);

	for (int i = 0; paths[i] && !nft; i++)
		if (access(paths[i], X_OK) == 0)
			nft = paths[i];
	/* the script fits a pipe's buffer (a few elements): written before the exec */
	if (!nft || len > 60000 || pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	if (write(fds[1], script, len) != (ssize_t)len) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[1]);
	pid_t pid = (pid_t)syscall(SYS_clone, 0, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		pid_t child = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
		if (child == 0) {
			int devnull = open("/dev/null", O_RDWR);
			if (devnull < 0 || dup2(fds[0], 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
				_exit(126);
			char *const argv[] = { (char *)"nft", (char *)"-f", (char *)"-", NULL };
			execv(nft, argv);
			_exit(127);
		}
		int cst = 0;
		while (child > 0 && waitpid(child, &cst, 0) < 0 && errno == EINTR)
			;
		_exit(child > 0 && WIFEXITED(cst) ? WEXITSTATUS(cst) : 126);
	}
	close(fds[0]);
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The answer's addresses into the sets of every rule q's name is under. */
static int admit(const struct policy *p, const struct sb_dns_query *q, const struct sb_dns_answer *a)
{
	struct sb_buf b = { 0 };
	unsigned t = a->ttl < MIN_TIMEOUT_S ? MIN_TIMEOUT_S : a->ttl;
	int ok = 1;

	for (size_t r = 0; r < p->n_names; r++) {
		if (!sb_dns_name_under(q->name, p->names[r].name))
			continue;
		for (size_t i = 0; ok && i < a->n_addrs; i++) {
			char el[48], line[256], dotted[16];
			int port = p->names[r].port;
			const char *set = p->sets[port ? 1 : 0];
			sb_ipv4_format(dotted, a->addrs[i]);
			if (port)
				snprintf(el, sizeof(el), "%s . %d", dotted, port);
			else
				snprintf(el, sizeof(el), "%s", dotted);
			/* add, delete, add: re-arms the timeout of an element already there */
			int n = snprintf(line, sizeof(line),
					 "add element inet " SB_EGRESS_TABLE " %s { %s }\n"
					 "delete element inet " SB_EGRESS_TABLE " %s { %s }\n"
					 "add element inet " SB_EGRESS_TABLE " %s { %s timeout %us }\n",
					 set, el, set, el, set, el, t);
			ok = n > 0 && (size_t)n < sizeof(line) && sb_buf_add(&b, line, (size_t)n) == 0;
		}
	}
	int rc = ok && b.len ? run_nft(b.data) : ok ? 0 : -1;
	sb_buf_clear(&b);
	return rc;
}

/* One query; the answer's length into *len (0: none is sent). */
static void handle(const struct server *s, const uint8_t *msg, size_t len, uint8_t *out, size_t *out_len)
{
	struct sb_dns_query q;
	struct sb_dns_answer a;
	struct policy p;

	*out_len = 0;
	if (sb_dns_parse_query(&q, msg, len) < 0)
		return;   /* not a query we understand: no answer, as to noise */
	if (policy_read(&p, s->policy_path) < 0) {
		*out_len = sb_dns_build_answer(out, &q, SB_DNS_REFUSED, NULL);
		return;
	}
	if (!allowed(&p, q.name)) {
		note_denied(s, q.name);
		*out_len = sb_dns_build_answer(out, &q, SB_DNS_NXDOMAIN, NULL);
		return;
	}
	/* an allowed name has addresses of type A only (sandboxes have IPv4):
	 * other types are answered empty, so that resolvers go on to A at once */
	if (q.qtype != SB_DNS_TYPE_A) {
		*out_len = sb_dns_build_answer(out, &q, SB_DNS_NOERROR, NULL);
		return;
	}
	if (ask_upstream(&a, &p, &q) >= 0 && (a.rcode != SB_DNS_NOERROR || admit(&p, &q, &a) == 0))
		*out_len = sb_dns_build_answer(out, &q, a.rcode, a.rcode == SB_DNS_NOERROR ? &a : NULL);
	else
		*out_len = sb_dns_build_answer(out, &q, SB_DNS_SERVFAIL, NULL);
}

static void serve_datagram(const struct server *s)
{
	uint8_t in[SB_DNS_MSG_MAX + 1], out[SB_DNS_MSG_MAX];
	struct sockaddr_in from = { 0 }; /* the analyser does not see recvfrom fill it */
	socklen_t fl = sizeof(from);
	size_t len;
	ssize_t r = recvfrom(s->fd[0], in, sizeof(in), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

	/* only the sandbox itself; a datagram over the cap is dropped */
	if (r <= 0 || (size_t)r > SB_DNS_MSG_MAX || fl != sizeof(from) || from.sin_addr.s_addr != s->client)
		return;
	handle(s, in, (size_t)r, out, &len);
	if (len)
		sendto(s->fd[0], out, len, 0, (struct sockaddr *)&from, fl);
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	c->fd = -1;
}

/* A new connection from the sandbox into a free slot, or the idlest one's. */
static void tcp_accept(const struct server *s, struct conn *conns)
{
	struct sockaddr_in from = { 0 };
	socklen_t fl = sizeof(from);
	int fd = accept4(s->fd[1], (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *slot = &conns[0];

	if (fd < 0)
		return;
	if (fl != sizeof(from) || from.sin_addr.s_addr != s->client) {
		close(fd);
		return;
	}
	for (int i = 0; i < TCP_CONNS && slot->fd >= 0; i++)
		if (conns[i].fd < 0 || conns[i].last < slot->last)
			slot = &conns[i];
	if (slot->fd >= 0)
		conn_close(slot);
	*slot = (struct conn){ .fd = fd, .last = sb_clock_monotonic_ms() };
}

/* Reads what c sent and answers each whole message; closes it at its end,
 * on noise or an oversized message, or when the answer does not go out. */
static void tcp_read(const struct server *s, struct conn *c)
{
	ssize_t r = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, 0);

	if (r <= 0) {
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	c->have += (size_t)r;
	c->last = sb_clock_monotonic_ms();
	while (c->have >= 2) {
		size_t len = (size_t)c->buf[0] << 8 | c->buf[1], n;
		uint8_t out[2 + SB_DNS_MSG_MAX];
		if (len == 0 || len > SB_DNS_MSG_MAX) {
			conn_close(c);
			return;
		}
		if (c->have < 2 + len)
			return;
		handle(s, c->buf + 2, len, out + 2, &n);
		out[0] = (uint8_t)(n >> 8);
		out[1] = (uint8_t)n;
		if (!n || send(c->fd, out, n + 2, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(n + 2)) {
			conn_close(c);
			return;
		}
		c->have -= 2 + len;
		memmove(c->buf, c->buf + 2 + len, c->have);
	}
}

static void *serve(void *arg)
{
	const struct server *s = arg;
	struct conn conns[TCP_CONNS];

	for (int i = 0; i < TCP_CONNS; i++)
		conns[i].fd = -1;
	for (;;) {
		struct pollfd pfd[2 + TCP_CONNS] = { { .fd = s->fd[0], .events = POLLIN }, { .fd = s->fd[1], .events = POLLIN } };
		long long now = sb_clock_monotonic_ms();
		int idle_ms = -1;   /* no connection: no wake-up until a packet (a keeper per sandbox) */
		for (int i = 0; i < TCP_CONNS; i++) {
			long long left = conns[i].last + TCP_IDLE_MS - now;
			if (conns[i].fd >= 0 && left <= 0)
				conn_close(&conns[i]);
			else if (conns[i].fd >= 0 && (idle_ms < 0 || left < idle_ms))
				idle_ms = (int)left;
			pfd[2 + i] = (struct pollfd){ .fd = conns[i].fd, .events = POLLIN };
		}
		if (poll(pfd, 2 + TCP_CONNS, idle_ms) <= 0)
			continue;
		if (pfd[0].revents)
			serve_datagram(s);
		if (pfd[1].revents)
			tcp_accept(s, conns);
		for (int i = 0; i < TCP_CONNS; i++)
			if (pfd[2 + i].revents && conns[i].fd == pfd[2 + i].fd)
				tcp_read(s, &conns[i]);
	}
	return NULL;
}

/* One socket of type on at (the keeper of the last boot may still hold it
 * for a moment: SO_REUSEADDR); -1 with errno. */
static int listen_on(int type, const struct sockaddr_in *at)
{
	int one = 1, s = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (const struct sockaddr *)at, sizeof(*at)) < 0 || (type != SOCK_DGRAM && listen(s, TCP_CONNS) < 0)) {
		int e = errno;
		if (s >= 0)
			close(s);
		errno = e;
		return -1;
	}
	return s;
}

int sb_resolver_open(int fd[2], const struct sb_netinfo *n, struct sb_error *err)
{
	struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons((uint16_t)n->dns_port) };

	fd[0] = fd[1] = -1;
	if (inet_pton(AF_INET, n->gateway, &at.sin_addr) != 1)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not an IPv4 address"), n->gateway);
	if ((fd[0] = listen_on(SOCK_DGRAM, &at)) < 0 || (fd[1] = listen_on(SOCK_STREAM | SOCK_NONBLOCK, &at)) < 0) {
		int e = errno;
		if (fd[0] >= 0)
			close(fd[0]);
		fd[0] = -1;
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot listen for the sandbox's DNS queries on %s:%d"),
				      n->gateway, n->dns_port);
	}
	return 0;
}

int sb_resolver_start(const int fd[2], const struct sb_netinfo *n)
{
	static struct server s;   /* one per keeper, for the keeper's lifetime */
	struct in_addr client;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;

	if (inet_pton(AF_INET, n->address, &client) != 1 || !(s.policy_path = strdup(n->dns_policy)) ||
	    !(s.denied_path = strdup(n->dns_denied)))
		return -1;
	s.fd[0] = fd[0];
	s.fd[1] = fd[1];
	s.client = client.s_addr;
	/* the thread takes no signal: the keeper's loop waits for them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &attr, serve, &s) == 0 ? 0 : -1;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
