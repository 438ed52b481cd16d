/* Egress policies end to end through the sandbench binary (root, real runsc):
 * the default keeps sandboxes from private and link-local addresses, an
 * allow-list lets through only what it names and the kernel's record of the
 * rest reaches the timeline, a change applies to a running sandbox and
 * survives stop and restore, and bad rules create nothing. Test hosts are
 * network namespaces made here (one also answering at 169.254.169.254 through
 * a host route to it that the test adds and removes); everything is removed
 * by name, nftables objects included. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/fs.h"
#include "nettest.h"
#include "net/network.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

#define METADATA "169.254.169.254"

static struct sbf f;
static struct nt_names names;
static struct nt_host host;
static int metadata_route;
static int metadata_lock = -1;   /* the host has one route to the metadata address */
static long metadata_httpd;      /* pid of the test host's second server */

static void setup(void)
{
	sbf_setup(&f, "egress");
	nt_names_init(&names);
	nt_config_write_blocking(&names, f.dir);
}

static void teardown(void)
{
	sbf_teardown(&f); /* removes the sandboxes, and with them their network */
	if (metadata_httpd > 0)
		kill((pid_t)metadata_httpd, SIGKILL);
	metadata_httpd = 0;
	if (metadata_route)
		tu_sh("ip route del " METADATA "/32 dev %s 2>/dev/null; true", host.veth);
	metadata_route = 0;
	if (metadata_lock >= 0)
		close(metadata_lock);
	metadata_lock = -1;
	nt_host_stop(&host);
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
}

TestSuite(egress, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static int metadata_listening(void *arg)
{
	(void)arg;
	return tu_sh("ip netns exec %s ss -ltn | grep -q '" METADATA ":%d '", host.netns, host.port) == 0;
}

/* The test host also answers at the metadata address: if the policy let a
 * packet through, it would reach the test host, never the host's real network. */
static void host_start(int with_metadata)
{
	nt_host_start(&host, &names, f.dir);
	if (!with_metadata)
		return;
	/* the route is the host's, one for all: tests that run at once (Criterion
	 * runs a suite's tests in parallel) take turns */
	metadata_lock = open("/var/tmp/sandbench-test-metadata.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert(metadata_lock >= 0 && flock(metadata_lock, LOCK_EX) == 0);
	cr_assert_eq(tu_sh("ip -n %s addr add " METADATA "/32 dev eth0 && ip route add " METADATA "/32 dev %s",
			   host.netns, host.veth), 0);
	metadata_route = 1;
	/* busybox httpd listens on the test host's address only: a second one on the metadata address */
	char *pid = tu_sh_out("ip netns exec %s busybox httpd -f -p " METADATA ":%d -h %s </dev/null >/dev/null 2>&1 & "
			      "echo $!", host.netns, host.port, host.www);
	metadata_httpd = strtol(pid, NULL, 10);
	free(pid);
	cr_assert(metadata_httpd > 0);
	cr_assert(tu_wait_for(metadata_listening, NULL, 10000), "the metadata test server did not come up");
}

static int get(const char *name, const char *target, int port)
{
	return sbf_get_marker(&f, name, target, port);
}

static char *timeline(const char *name)
{
	struct tu_run r = SB("timeline", name, "--json");
	char *out = r.out;

	cr_assert_eq(r.status, 0, "timeline: %s", r.err);
	r.out = NULL;
	tu_run_free(&r);
	return out;
}

static void assert_denied(const char *name, const char *addr, int port)
{
	char want[64];
	char *tl = timeline(name);

	snprintf(want, sizeof(want), "denied tcp %s:%d", addr, port);
	cr_assert(strstr(tl, want), "no '%s' in the timeline: %s", want, tl);
	free(tl);
}

static json_t *inspect_json(const char *name)
{
	struct tu_run r = SB("inspect", name, "--json");
	json_t *doc = json_loads(r.out ? r.out : "", 0, NULL);

	cr_assert_eq(r.status, 0, "inspect: %s", r.err);
	cr_assert_not_null(doc, "%s", r.out);
	tu_run_free(&r);
	return doc;
}

static const char *egress_mode(json_t *doc)
{
	return json_string_value(json_object_get(json_object_get(doc, "egress"), "mode"));
}

/* The sandbox's nftables chain and set, by the root's tag and its address. */
static int nft_objects(const char *address)
{
	char tag[7];
	unsigned a, b, c, d;

	cr_assert_eq(sb_network_tag(tag, f.root, NULL), 0);
	cr_assert_eq(sscanf(address, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
	unsigned hex = a << 24 | b << 16 | c << 8 | d;
	return tu_sh("nft list chain inet sandbench_egress eg_%s_%08x >/dev/null 2>&1", tag, hex) == 0 ||
	       tu_sh("nft list set inet sandbench_egress dn_%s_%08x >/dev/null 2>&1", tag, hex) == 0;
}

Test(egress, default_blocks_private_and_metadata_and_records_it)
{
	host_start(1);
	sbf_ok(SB("create", "web", "--image", SBF_IMAGE, "--network", "on"), "create");
	cr_assert_neq(get("web", host.addr, host.port), 0, "the default reached a private test host");
	cr_assert_neq(get("web", METADATA, host.port), 0, "the default reached the metadata address");
	assert_denied("web", host.addr, host.port);
	assert_denied("web", METADATA, host.port);

	json_t *doc = inspect_json("web");
	cr_assert_str_eq(egress_mode(doc), "default");
	char *address = strdup(json_string_value(json_object_get(doc, "address")));
	json_decref(doc);
	struct tu_run r = SB("inspect", "web");
	cr_assert(strstr(r.out, "no link-local, metadata, host or private addresses"), "%s", r.out);
	tu_run_free(&r);

	/* an allow-list naming the test host, on the running sandbox */
	char rule[40];
	snprintf(rule, sizeof(rule), "%s:%d", host.addr, host.port);
	sbf_ok(SB("network", "web", "--allow", rule), "network --allow");
	cr_assert_eq(get("web", host.addr, host.port), 0, "the allow-list did not apply without a restart");
	cr_assert_neq(get("web", METADATA, host.port), 0);
	char *tl = timeline("web");
	cr_assert(strstr(tl, "\"kind\": \"network\"") || strstr(tl, "\"kind\":\"network\""), "%s", tl);
	cr_assert(strstr(tl, rule), "the change is not in the timeline: %s", tl);
	free(tl);

	/* rm removes its nftables objects */
	cr_assert(nft_objects(address));
	sbf_ok(SB("rm", "web"), "rm");
	cr_assert_not(nft_objects(address), "rm left the egress chain or set of %s", address);
	free(address);
}

Test(egress, allow_list_drops_other_ports_and_the_policy_survives_stop_and_restore)
{
	char rule[40];

	host_start(0);
	snprintf(rule, sizeof(rule), "%s:%d", host.addr, host.port);
	sbf_ok(SB("create", "web", "--image", SBF_IMAGE, "--permanent", "--allow", rule), "create --allow");
	json_t *doc = inspect_json("web");
	cr_assert_str_eq(egress_mode(doc), "allow");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_object_get(doc, "egress"), "allow"), 0)),
			 rule);
	json_decref(doc);

	/* stop and restore before any TCP traffic: this runsc cannot checkpoint
	 * connected or closing TCP endpoints (notes/runsc.md) */
	sbf_ok(SB("network", "web", "--deny-all"), "network --deny-all");
	sbf_ok(SB("stop", "web"), "stop");
	sbf_ok(SB("restore", "web"), "restore");
	doc = inspect_json("web");
	cr_assert_str_eq(egress_mode(doc), "deny-all");
	json_decref(doc);
	cr_assert_neq(get("web", host.addr, host.port), 0, "deny-all did not survive stop and restore");
	assert_denied("web", host.addr, host.port);

	/* back to the allow-list, on the running sandbox */
	sbf_ok(SB("network", "web", "--allow", rule), "network --allow");
	cr_assert_eq(get("web", host.addr, host.port), 0, "the allowed CIDR:port did not connect");
	cr_assert_neq(get("web", host.addr, host.port + 1), 0);
	assert_denied("web", host.addr, host.port + 1);

	/* reset: the default, which blocks the private test host too */
	sbf_ok(SB("network", "web", "--reset"), "network --reset");
	cr_assert_neq(get("web", host.addr, host.port), 0);
	sbf_ok(SB("network", "web", "--allow", host.addr), "network --allow ADDR");
	cr_assert_eq(get("web", host.addr, host.port), 0);
}

Test(egress, deny_all_at_create)
{
	host_start(0);
	sbf_ok(SB("create", "shut", "--image", SBF_IMAGE, "--deny-all"), "create --deny-all");
	cr_assert_neq(get("shut", host.addr, host.port), 0);
	assert_denied("shut", host.addr, host.port);
	struct tu_run r = SB("network", "shut");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "deny-all"), "%s", r.out);
	tu_run_free(&r);
}

/* Each bad rule: a clear message naming it, exit non-zero, nothing created. */
Test(egress, bad_rules_are_refused_and_create_nothing)
{
	static const struct {
		const char *rule, *says;
	} bad[] = {
		{ "300.1.1.1", "not an IPv4 address" },
		{ "x:99999", "port" },
		{ "10.0.0.1/33", "prefix" },
		{ "10.0.0.1/8", "host bits" },
		{ "exa$mple.org", "is not a host name" },
		{ "a..example.org:80", "is not a host name" },
		{ "example.org/24", "a name takes no prefix" },
		{ "@nosuch", "no allow profile" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run r = SB("create", "bad", "--image", SBF_IMAGE, "--allow", bad[i].rule);
		cr_assert_neq(r.status, 0, "%s accepted", bad[i].rule);
		cr_assert(strstr(r.err, bad[i].rule) && strstr(r.err, bad[i].says), "%s: %s", bad[i].rule, r.err);
		tu_run_free(&r);
		char *dir = sb_strdupf("%s/sandboxes/bad", f.dir);
		cr_assert_neq(access(dir, F_OK), 0, "%s left a sandbox behind", bad[i].rule);
		free(dir);
	}
	cr_assert_not(nt_link_exists(names.bridge), "a refused create made network objects");
	struct tu_run r = SB("create", "bad", "--image", SBF_IMAGE, "--network", "off", "--deny-all");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "network on"), "%s", r.err);
	tu_run_free(&r);
}

Test(egress, profile_from_the_config)
{
	char *config = sb_path_join(f.dir, "config"), *text;

	host_start(0);
	text = sb_strdupf("network_bridge = %s\nnetwork_subnet = %s\nallow_profile = test %s:%d\n", names.bridge,
			  names.subnet, host.addr, host.port);
	cr_assert_eq(sb_fs_write_atomic(config, text, strlen(text), 0644, NULL), 0);
	free(text);
	free(config);
	sbf_ok(SB("create", "prof", "--image", SBF_IMAGE, "--allow", "@test"), "create --allow @test");
	cr_assert_eq(get("prof", host.addr, host.port), 0);
	cr_assert_neq(get("prof", host.addr, host.port + 1), 0);
}

/* Serves marker.txt on ports 8080 and 8081 inside sandbox name (busybox
 * httpd, which goes to the background itself). */
static int serving(void *arg)
{
	return get(arg, "127.0.0.1", 8080) == 0 && get(arg, "127.0.0.1", 8081) == 0;
}

static void serve(char *name)
{
	int status;
	char *out = sbf_sh(&f, NULL, name,
			   "mkdir -p /tmp/w && echo " NT_MARKER " > /tmp/w/marker.txt && "
			   "httpd -p 8080 -h /tmp/w && httpd -p 8081 -h /tmp/w",
			   &status);

	cr_assert_eq(status, 0, "httpd in %s: %s", name, out);
	free(out);
	cr_assert(tu_wait_for(serving, name, 10000), "the HTTP servers in %s did not come up", name);
}

/* Whether the NAT table's sandbox-to-sandbox pairs mention address. */
static int in_peers(const char *address)
{
	return tu_sh("nft list set inet sandbench peers 2>/dev/null | grep -qw '%s'", address) == 0;
}

Test(egress, sandbox_to_sandbox_only_the_named_one_on_its_port)
{
	char svc[16], client[16], other[16];

	sbf_ok(SB("create", "svc", "--image", SBF_IMAGE, "--permanent", "--network", "on"), "create svc");
	sbf_ok(SB("create", "client", "--image", SBF_IMAGE, "--allow", "sandbox:svc:8080"), "create client");
	/* other's policy allows the whole subnet: the bridge still isolates it */
	sbf_ok(SB("create", "other", "--image", SBF_IMAGE, "--allow", names.subnet), "create other");
	cr_assert_eq(sb_network_address(svc, f.root, "svc", NULL), 0);
	cr_assert_eq(sb_network_address(client, f.root, "client", NULL), 0);
	cr_assert_eq(sb_network_address(other, f.root, "other", NULL), 0);
	serve("svc");
	serve("other");

	cr_assert_eq(get("client", svc, 8080), 0, "the allowed sandbox:svc:8080 did not connect");
	cr_assert_neq(get("client", svc, 8081), 0, "another port of svc was reachable");
	assert_denied("client", svc, 8081);
	cr_assert_neq(get("client", other, 8080), 0, "a sandbox not named was reachable");
	cr_assert_neq(get("other", svc, 8080), 0, "svc was reachable from a sandbox without the rule");
	cr_assert_neq(get("svc", client, 8080), 0);

	/* shown as written */
	json_t *doc = inspect_json("client");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_object_get(doc, "egress"), "allow"), 0)),
			 "sandbox:svc:8080");
	json_decref(doc);
	struct tu_run r = SB("network", "client");
	cr_assert(r.status == 0 && strstr(r.out, "allow sandbox:svc:8080"), "%s %s", r.out, r.err);
	tu_run_free(&r);

	/* changes on running sandboxes apply at once */
	sbf_ok(SB("network", "client", "--allow", "sandbox:svc:8081"), "network --allow sandbox:svc:8081");
	cr_assert_eq(get("client", svc, 8081), 0);
	cr_assert_neq(get("client", svc, 8080), 0);
	sbf_ok(SB("network", "other", "--allow", "sandbox:svc"), "network --allow sandbox:svc");
	cr_assert_eq(get("other", svc, 8080), 0);
	cr_assert_eq(get("other", svc, 8081), 0);
	cr_assert_neq(get("other", client, 8080), 0);
	sbf_ok(SB("network", "other", "--reset"), "network --reset");
	cr_assert_neq(get("other", svc, 8080), 0, "the removed rule still let other through");
	cr_assert_not(in_peers(other));

	/* rm takes the pairs along, on either side */
	cr_assert(in_peers(client));
	sbf_ok(SB("rm", "-f", "client"), "rm client");
	cr_assert_not(in_peers(client), "rm left the sandbox's pairs");
	sbf_ok(SB("network", "other", "--allow", "sandbox:svc:8080"), "network other --allow");
	cr_assert(in_peers(svc));
	sbf_ok(SB("rm", "-f", "svc"), "rm svc");
	cr_assert_not(in_peers(svc), "rm left the pairs to the sandbox");

	/* a new svc under the old name: other's rule reaches it at once */
	sbf_ok(SB("create", "svc", "--image", SBF_IMAGE, "--network", "on"), "create svc again");
	cr_assert_eq(sb_network_address(svc, f.root, "svc", NULL), 0);
	cr_assert(in_peers(svc), "the policy naming svc was not applied again");
	serve("svc");
	/* the first connection, within nc's 3 s: other's neighbour entry for
	 * svc (the bridge's MAC, by proxy ARP) must still hold (docs/egress.md) */
	cr_assert_eq(get("other", svc, 8080), 0, "the rule did not follow the new svc");
	cr_assert_neq(get("other", svc, 8081), 0);
}

Test(egress, bad_sandbox_rules)
{
	static const struct {
		const char *rule, *says;
	} bad[] = {
		{ "sandbox:nosuch", "no sandbox named 'nosuch'" },
		{ "sandbox:quiet", "sandbox 'quiet' has network off" },
		{ "sandbox:quiet:0", "port" },
		{ "sandbox:quiet:http", "port" },
		{ "sandbox:", "is not sandbox:NAME" },
		{ "sandbox:a/b", "sandbox name" },
	};

	sbf_ok(SB("create", "quiet", "--image", SBF_IMAGE, "--network", "off"), "create quiet");
	sbf_ok(SB("create", "loud", "--image", SBF_IMAGE, "--network", "on"), "create loud");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run r = SB("create", "bad", "--image", SBF_IMAGE, "--allow", bad[i].rule);
		cr_assert_neq(r.status, 0, "%s accepted", bad[i].rule);
		cr_assert(strstr(r.err, bad[i].rule) && strstr(r.err, bad[i].says), "%s: %s", bad[i].rule, r.err);
		cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "not one line: %s", r.err);
		tu_run_free(&r);
		r = SB("network", "loud", "--allow", bad[i].rule);
		cr_assert_neq(r.status, 0, "network: %s accepted", bad[i].rule);
		cr_assert(strstr(r.err, bad[i].says), "%s: %s", bad[i].rule, r.err);
		tu_run_free(&r);
	}
	json_t *doc = inspect_json("loud");
	cr_assert_str_eq(egress_mode(doc), "default", "a refused rule changed the policy");
	json_decref(doc);
}
