#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "net/internal.h"
#include "nettest.h"
#include "net/network.h"
#include "testutil.h"

void nt_names_init(struct nt_names *n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	cr_assert(fd >= 0 && read(fd, &n->rnd, sizeof(n->rnd)) == sizeof(n->rnd));
	close(fd);
	snprintf(n->sfx, sizeof(n->sfx), "%05x", n->rnd & 0xfffff);
	snprintf(n->bridge, sizeof(n->bridge), "sbt%s", n->sfx);
	snprintf(n->subnet, sizeof(n->subnet), "10.%u.%u.0/24", 200 + (n->rnd >> 20) % 40, (n->rnd >> 8) & 255);
}

struct httpd_at {
	const char *netns, *addr;
	int port;
};

static int httpd_ready(void *arg)
{
	const struct httpd_at *a = arg;
	char *out = tu_sh_out("printf 'GET /marker.txt HTTP/1.0\\r\\n\\r\\n' | %s%s busybox nc -w 1 %s %d 2>/dev/null; true",
			      a->netns ? "ip netns exec " : "", a->netns ? a->netns : "", a->addr, a->port);
	int up = out && strstr(out, NT_MARKER);

	free(out);
	return up;
}

pid_t nt_httpd_start(const char *netns, const char *addr, int port, const char *www)
{
	char listen[40];
	struct httpd_at at = { netns, addr, port };
	pid_t pid;

	snprintf(listen, sizeof(listen), "%s:%d", addr, port);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0); /* "ip netns exec" may fork: the whole group is killed */
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (netns)
			execlp("ip", "ip", "netns", "exec", netns, "busybox", "httpd", "-f", "-p", listen, "-h", www,
			       (char *)NULL);
		else
			execlp("busybox", "busybox", "httpd", "-f", "-p", listen, "-h", www, (char *)NULL);
		_exit(127);
	}
	cr_assert(tu_wait_for(httpd_ready, &at, 10000), "the test HTTP server at %s did not come up", listen);
	return pid;
}

void nt_httpd_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void config_write(const struct nt_names *n, const char *root, const char *private)
{
	char *conf = sb_path_join(root, "config");
	char *text = sb_strdupf("network_bridge = %s\nnetwork_subnet = %s\n%s", n->bridge, n->subnet, private);

	cr_assert_eq(sb_fs_write_atomic(conf, text, strlen(text), 0644, NULL), 0);
	free(conf);
	free(text);
}

void nt_config_write(const struct nt_names *n, const char *root)
{
	/* test hosts live at private addresses: allowed explicitly */
	config_write(n, root, "network_private = allow\n");
}

void nt_config_write_blocking(const struct nt_names *n, const char *root)
{
	config_write(n, root, "");
}

void nt_host_start(struct nt_host *h, const struct nt_names *n, const char *dir)
{
	/* one /30 of 10.199.0.0/16 out of 16384: hosts of parallel tests do not meet */
	unsigned third = (n->rnd >> 4) & 255, base = ((n->rnd >> 12) & 63) * 4;
	snprintf(h->netns, sizeof(h->netns), "sbt-host-%s", n->sfx);
	snprintf(h->veth, sizeof(h->veth), "sbth%s", n->sfx);
	snprintf(h->host_addr, sizeof(h->host_addr), "10.199.%u.%u", third, base + 1);
	snprintf(h->addr, sizeof(h->addr), "10.199.%u.%u", third, base + 2);
	h->port = 8000 + (int)(n->rnd % 1000);
	h->www = sb_path_join(dir, "www");
	cr_assert_eq(tu_sh("mkdir -p %s && echo " NT_MARKER " > %s/marker.txt", h->www, h->www), 0);
	cr_assert_eq(tu_sh("ip netns add %s && ip link add %s type veth peer name eth0 netns %s && "
			   "ip addr add %s/30 dev %s && ip link set %s up && "
			   "ip -n %s addr add %s/30 dev eth0 && ip -n %s link set eth0 up && ip -n %s link set lo up",
			   h->netns, h->veth, h->netns, h->host_addr, h->veth, h->veth, h->netns, h->addr, h->netns,
			   h->netns), 0);
	h->httpd = nt_httpd_start(h->netns, h->addr, h->port, h->www);
}

void nt_host_stop(struct nt_host *h)
{
	if (!h->netns[0])
		return;
	nt_httpd_stop(h->httpd);
	tu_sh("ip link del %s 2>/dev/null; ip netns del %s 2>/dev/null; true", h->veth, h->netns);
	free(h->www);
	memset(h, 0, sizeof(*h));
}

char *nt_http_get_cmd(const struct nt_host *h)
{
	return sb_strdupf("printf 'GET /marker.txt HTTP/1.0\\r\\n\\r\\n' | nc -w 5 %s %d", h->addr, h->port);
}

int nt_netns_exists(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return access(path, F_OK) == 0;
}

int nt_link_exists(const char *ifname)
{
	char path[300];

	snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
	return access(path, F_OK) == 0;
}

int nt_nat_has(const char *addr)
{
	char *out = tu_sh_out("nft list set inet %s sandboxes 2>/dev/null; true", SB_NAT_TABLE);
	int found = 0;

	cr_assert_not_null(out);
	for (const char *p = strstr(out, addr); p && !found; p = strstr(p + 1, addr))
		found = p[-1] == ' ' && (p[strlen(addr)] == ' ' || p[strlen(addr)] == ',');
	free(out);
	return found;
}

void nt_assert_gone(const struct sb_netinfo *n)
{
	cr_assert_not(nt_netns_exists(n->netns), "netns %s left", n->netns);
	cr_assert_not(nt_link_exists(n->veth), "veth %s left", n->veth);
	cr_assert_not(nt_nat_has(n->address), "nft element %s left", n->address);
}
