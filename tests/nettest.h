/* Network test fixtures: random per-test names and a test host (a network
 * namespace with an HTTP server, linked to the host by a veth) that sandboxes
 * may reach. Everything is named with the per-test suffix and removed by name. */
#ifndef SB_NETTEST_H
#define SB_NETTEST_H

#include <sys/types.h>

struct nt_names {
	unsigned rnd;
	char sfx[8];            /* 5 hex digits */
	char bridge[16];        /* "sbt<sfx>" */
	char subnet[24];        /* a random 10.2xx.y.0/24 */
};

struct nt_host {
	char netns[32], veth[16], addr[16], host_addr[16];
	int port;
	pid_t httpd;
	char *www;
};

void nt_names_init(struct nt_names *n);
/* Writes root/config giving sandboxes of root n's bridge and subnet: tests
 * run in parallel, each on its own; private ranges (where test hosts are)
 * are allowed. */
void nt_config_write(const struct nt_names *n, const char *root);
/* The same with private ranges blocked, as by default: a test host is
 * reached only through an explicit --allow. */
void nt_config_write_blocking(const struct nt_names *n, const char *root);
/* Starts the test host; its files go to dir/www. Aborts the test on failure. */
void nt_host_start(struct nt_host *h, const struct nt_names *n, const char *dir);
/* Stops and removes what nt_host_start made; nothing when it was not started. */
void nt_host_stop(struct nt_host *h);
/* A busybox httpd serving www at addr:port in netns (NULL: the host's own),
 * up and answering when this returns; aborts the test on failure. Its pid
 * leads a process group, which nt_httpd_stop kills whole (pid <= 0: nothing). */
pid_t nt_httpd_start(const char *netns, const char *addr, int port, const char *www);
void nt_httpd_stop(pid_t pid);
/* A shell command for inside a sandbox (busybox nc) that GETs the marker file. */
char *nt_http_get_cmd(const struct nt_host *h);
int nt_netns_exists(const char *name);
int nt_link_exists(const char *ifname);
/* Whether addr is in sandbench's NAT set. */
int nt_nat_has(const char *addr);
/* No namespace, veth or NAT element of n is left. */
struct sb_netinfo;
void nt_assert_gone(const struct sb_netinfo *n);
/* The text of the marker file. */
#define NT_MARKER "sandbench-marker"

#endif
