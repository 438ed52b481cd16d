/* Names in allow-lists: the filtering resolver in the sandbox's keeper
 * (net/resolver.c). The upstream nameserver is a test one (dns-server.py) in
 * the test host's network namespace, made the resolver's upstream by the
 * root's dns_upstream setting: the host's resolv.conf is not touched. It
 * answers every name under .test with the test host's address, so a name
 * without an answer in the sandbox was refused by the resolver. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names names;
static struct nt_host host;
static long dns_pid;   /* leads a process group */

static int dns_listening(void *arg)
{
	(void)arg;
	return tu_sh("ip netns exec %s ss -lun | grep -q '%s:53 '", host.netns, host.addr) == 0;
}

static void setup(void)
{
	sbf_setup(&f, "egress-dns");
	nt_names_init(&names);
	nt_host_start(&host, &names, f.dir);
	char *pid = tu_sh_out("setsid ip netns exec %s python3 '%s/tests/integration/dns-server.py' %s %s "
			      "</dev/null >/dev/null 2>&1 & echo $!", host.netns, SB_SRCDIR, host.addr, host.addr);
	dns_pid = strtol(pid, NULL, 10);
	free(pid);
	cr_assert(dns_pid > 0);
	cr_assert(tu_wait_for(dns_listening, NULL, 10000), "the test nameserver did not come up");
	/* private ranges blocked, as by default: the test host only by the allow-list */
	char *config = sb_path_join(f.dir, "config");
	char *text = sb_strdupf("network_bridge = %s\nnetwork_subnet = %s\ndns_upstream = %s\n", names.bridge,
				names.subnet, host.addr);
	cr_assert_eq(sb_fs_write_atomic(config, text, strlen(text), 0644, NULL), 0);
	free(text);
	free(config);
}

static void teardown(void)
{
	sbf_teardown(&f); /* removes the sandboxes, and with them their network and nft objects */
	if (dns_pid > 0)
		kill(-(pid_t)dns_pid, SIGKILL);
	dns_pid = 0;
	nt_host_stop(&host);
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
}

TestSuite(egress_dns, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static int get(const char *name, const char *target, int port)
{
	return sbf_get_marker(&f, name, target, port);
}

/* What nslookup inside says about name (its output). */
static char *lookup(const char *name, const char *host_name)
{
	char *cmd = sb_strdupf("nslookup -type=a %s 2>&1; true", host_name);
	int status;
	char *out = sbf_sh(&f, NULL, name, cmd, &status);

	free(cmd);
	cr_assert(out);
	return out;
}

static int timeline_has(const char *name, const char *want)
{
	struct tu_run r = SB("timeline", name, "--json");
	int has = r.status == 0 && r.out && strstr(r.out, want) != NULL;

	tu_run_free(&r);
	return has;
}

/* The resolver's sets of the sandbox at address exist (the subnet is this test's own). */
static int resolved_sets(const char *address)
{
	unsigned a, b, c, d;

	cr_assert_eq(sscanf(address, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
	return tu_sh("nft list table inet sandbench_egress | grep -q 'set op_[0-9a-f]*_%02x%02x%02x%02x '", a, b, c,
		     d) == 0;
}

Test(egress_dns, allowed_names_resolve_and_connect_others_are_refused_and_recorded)
{
	char rule[64], other[64], ip_port[40];

	snprintf(rule, sizeof(rule), "good.test:%d", host.port);
	snprintf(other, sizeof(other), "other.test:%d", host.port);
	sbf_ok(SB("create", "web", "--image", SBF_IMAGE, "--permanent", "--allow", rule), "create --allow NAME:PORT");
	struct tu_run r = SB("inspect", "web", "--json");
	cr_assert(strstr(r.out, rule), "the rule is not in the record: %s", r.out);
	json_t *doc = json_loads(r.out, 0, NULL);
	char *address = strdup(json_string_value(json_object_get(doc, "address")));
	json_decref(doc);
	tu_run_free(&r);
	char *conf = sbf_sh(&f, NULL, "web", "cat /etc/resolv.conf", NULL);
	cr_assert(strstr(conf, "nameserver 10."), "resolv.conf does not name the gateway: %s", conf);
	free(conf);

	/* the address itself is not allowed until a name led to it */
	cr_assert_neq(get("web", host.addr, host.port), 0, "a direct address that is not allowed connected");
	snprintf(ip_port, sizeof(ip_port), "denied tcp %s:%d", host.addr, host.port);
	cr_assert(timeline_has("web", ip_port), "the dropped connection is not in the timeline");

	/* the allowed name, and a CNAME chain under it */
	char *out = lookup("web", "good.test");
	cr_assert(strstr(out, host.addr), "good.test did not resolve: %s", out);
	free(out);
	cr_assert_eq(get("web", "good.test", host.port), 0, "the allowed name did not connect");
	cr_assert_eq(get("web", "alias.good.test", host.port), 0, "the CNAME under the allowed name did not connect");
	/* only on the rule's port */
	cr_assert_neq(get("web", "good.test", host.port + 1), 0, "the allowed name connected on another port");

	/* a name not allowed: no answer, recorded */
	out = lookup("web", "bad.test");
	cr_assert_null(strstr(out, host.addr), "bad.test was answered: %s", out);
	free(out);
	cr_assert_neq(get("web", "bad.test", host.port), 0);
	cr_assert(timeline_has("web", "denied dns bad.test"), "the refused name is not in the timeline");

	/* a change on the running sandbox: the old name is refused, its address
	 * dropped at once, the new one resolves */
	sbf_ok(SB("network", "web", "--allow", other), "network --allow NAME:PORT");
	out = lookup("web", "good.test");
	cr_assert_null(strstr(out, host.addr), "good.test still resolved after the change: %s", out);
	free(out);
	cr_assert_neq(get("web", host.addr, host.port), 0, "the address of the old name is still allowed");
	cr_assert(timeline_has("web", "denied dns good.test"));
	cr_assert_eq(get("web", "other.test", host.port), 0, "the new name did not connect without a restart");

	/* rm takes the resolver's sets along */
	cr_assert(resolved_sets(address));
	sbf_ok(SB("rm", "web"), "rm");
	cr_assert_not(resolved_sets(address), "rm left the resolver's sets of %s", address);
	free(address);
}

/* name's A query with id behind its 2-byte length (DNS over TCP), as the
 * octal escapes of printf, into out. */
static void tcp_query(char *out, size_t size, unsigned id, const char *name)
{
	unsigned char msg[300] = { (unsigned char)(id >> 8), (unsigned char)id, 0x01, 0, 0, 1 };
	size_t n = 12, o = 0;

	for (const char *l = name; *l;) {
		size_t len = strcspn(l, ".");
		msg[n++] = (unsigned char)len;
		memcpy(msg + n, l, len);
		n += len;
		l += len + (l[len] == '.');
	}
	n++;                                    /* the root label */
	msg[n + 1] = msg[n + 3] = 1;            /* type A, class IN */
	n += 4;
	o += (size_t)snprintf(out, size, "\\%03o\\%03o", (unsigned)(n >> 8), (unsigned)(n & 0xff));
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, size - o, "\\%03o", msg[i]);
	cr_assert_lt(o, size);
}

/* What the resolver answers over TCP to the bytes of printf_arg, sent in
 * one connection, as hex digits without blanks (see tcp_query). */
static char *ask_tcp(const char *name, const char *printf_arg)
{
	char *cmd = sb_strdupf("printf '%s' | nc -w 3 $(awk '/^nameserver/ { print $2; exit }' /etc/resolv.conf) 53 | "
			       "od -An -tx1 -v | tr -d ' \\n'", printf_arg);
	char *out = sbf_sh(&f, NULL, name, cmd, NULL);

	free(cmd);
	cr_assert(out);
	return out;
}

Test(egress_dns, names_are_answered_over_tcp_too)
{
	char rule[64], good[2048], bad[1024], both[3072], addr_hex[9];
	unsigned a, b, c, d;

	snprintf(rule, sizeof(rule), "good.test:%d", host.port);
	sbf_ok(SB("create", "web", "--image", SBF_IMAGE, "--allow", rule), "create --allow NAME:PORT");
	cr_assert_eq(sscanf(host.addr, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
	snprintf(addr_hex, sizeof(addr_hex), "%02x%02x%02x%02x", a, b, c, d);

	/* two queries in one connection: each answer behind its length, the
	 * allowed name with the address (id 1234, no error), the other refused
	 * (id 5678, NXDOMAIN) */
	tcp_query(good, sizeof(good), 0x1234, "good.test");
	tcp_query(bad, sizeof(bad), 0x5678, "bad.test");
	snprintf(both, sizeof(both), "%s%s", good, bad);
	char *out = ask_tcp("web", both);
	cr_assert(strstr(out, "12348180") && strstr(out, addr_hex), "good.test over TCP: %s", out);
	cr_assert(strstr(out, "56788183"), "bad.test over TCP was not refused: %s", out);
	free(out);
	cr_assert_eq(get("web", "good.test", host.port), 0, "the name resolved over TCP did not connect");
	cr_assert(timeline_has("web", "denied dns bad.test"));

	/* a length over the cap: the connection ends unanswered, and the
	 * resolver serves on, over TCP and UDP */
	out = ask_tcp("web", "\\377\\377\\000\\000");
	cr_assert_str_empty(out, "an oversized message was answered: %s", out);
	free(out);
	out = ask_tcp("web", good);
	cr_assert(strstr(out, "12348180"), "no TCP answer after the oversized message: %s", out);
	free(out);
	out = lookup("web", "good.test");
	cr_assert(strstr(out, host.addr), "no UDP answer after the oversized message: %s", out);
	free(out);
}

Test(egress_dns, names_survive_stop_and_restore)
{
	sbf_ok(SB("create", "web", "--image", SBF_IMAGE, "--permanent", "--allow", "good.test"), "create --allow NAME");
	sbf_ok(SB("stop", "web"), "stop");
	sbf_ok(SB("restore", "web"), "restore");
	/* a name without a port: every port of its addresses */
	cr_assert_eq(get("web", "good.test", host.port), 0, "the resolver does not answer after a restore");
	char *out = lookup("web", "nx.test");
	cr_assert_null(strstr(out, host.addr), "%s", out);
	free(out);
	cr_assert(timeline_has("web", "denied dns nx.test"));
}
