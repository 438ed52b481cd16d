/* Network pieces that need no root: subnets, address leases, resolv.conf,
 * and the netstack hook's refusal to run outside a separate namespace. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/digest.h"
#include "base/fs.h"
#include "backend/runsc/internal.h"
#include "net/internal.h"
#include "net/network.h"
#include "base/root.h"
#include "testutil.h"

static char *dir;
static struct sb_root *root;

static void setup(void)
{
	dir = tu_tempdir("netcfg");
	cr_assert_not_null(dir);
	char *r = sb_path_join(dir, "root");
	cr_assert_eq(sb_root_open(&root, r, NULL), 0);
	free(r);
}

static void teardown(void)
{
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
}

TestSuite(net_config, .init = setup, .fini = teardown);

Test(net_config, subnet_parse)
{
	struct sb_subnet s;
	struct sb_error err;
	char buf[16];

	cr_assert_eq(sb_subnet_parse(&s, "10.213.0.0/24", NULL), 0);
	cr_assert_eq(s.prefix, 24);
	cr_assert_str_eq(sb_ipv4_format(buf, sb_subnet_gateway(&s)), "10.213.0.1");
	cr_assert_not(sb_subnet_contains(&s, s.net + 1), "the gateway is not a sandbox address");
	cr_assert(sb_subnet_contains(&s, s.net + 2));
	cr_assert(sb_subnet_contains(&s, s.net + 254));
	cr_assert_not(sb_subnet_contains(&s, s.net + 255), "broadcast");
	cr_assert_eq(sb_subnet_parse(&s, "10.213.0.1/24", &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "host bits"));
	cr_assert_eq(sb_subnet_parse(&s, "10.0.0.0/8", NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_subnet_parse(&s, "10.0.0.0/30", NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_subnet_parse(&s, "10.0.0.0", NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_subnet_parse(&s, "10.0.0/24", NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_subnet_parse(&s, "10.0.0.0/24x", NULL), SB_ERR_INVALID);
}

Test(net_config, leases_are_stable_unique_and_bounded)
{
	struct sb_subnet s;
	uint32_t a, b, again, c;
	char buf[16];

	cr_assert_eq(sb_subnet_parse(&s, "10.77.5.0/29", NULL), 0); /* 5 sandbox addresses */
	cr_assert_eq(sb_lease_take(&a, root, &s, "one", NULL), 0);
	cr_assert_str_eq(sb_ipv4_format(buf, a), "10.77.5.2");
	cr_assert_eq(sb_lease_take(&b, root, &s, "two", NULL), 0);
	cr_assert_neq(a, b);
	cr_assert_eq(sb_lease_take(&again, root, &s, "one", NULL), 0);
	cr_assert_eq(again, a, "a name keeps its address");
	cr_assert_eq(sb_lease_find(&again, root, "two", NULL), 0);
	cr_assert_eq(again, b);
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		cr_assert_eq(sb_lease_take(&c, root, &s, name, NULL), 0);
	}
	cr_assert_eq(sb_lease_take(&c, root, &s, "full", NULL), SB_ERR_LIMIT);
	/* a released address is taken again (lowest free first) */
	cr_assert_eq(sb_lease_release(root, "one", NULL), 0);
	cr_assert_eq(sb_lease_find(&c, root, "one", NULL), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_lease_take(&c, root, &s, "full", NULL), 0);
	cr_assert_eq(c, a);
	cr_assert_eq(sb_lease_release(root, "never-leased", NULL), 0);

	struct sb_lease *list;
	size_t n;
	cr_assert_eq(sb_lease_list(&list, &n, root, NULL), 0);
	cr_assert_eq(n, 5);
	free(list);
	/* no temp files are left next to the leases */
	cr_assert_eq(tu_sh("test $(ls -A %s/root/network/leases | wc -l) -eq 5", dir), 0);
}

Test(net_config, lease_outside_a_changed_subnet_is_refused)
{
	struct sb_subnet s1, s2;
	uint32_t a;

	cr_assert_eq(sb_subnet_parse(&s1, "10.77.6.0/24", NULL), 0);
	cr_assert_eq(sb_subnet_parse(&s2, "10.77.7.0/24", NULL), 0);
	cr_assert_eq(sb_lease_take(&a, root, &s1, "moved", NULL), 0);
	cr_assert_eq(sb_lease_take(&a, root, &s2, "moved", NULL), SB_ERR_STATE);
	/* no new address while one lies outside: its veth, numbered within the
	 * old subnet, would share a name with the new one's */
	struct sb_error err;
	cr_assert_eq(sb_lease_check_subnet(root, &s1, NULL), 0);
	cr_assert_eq(sb_lease_check_subnet(root, &s2, &err), SB_ERR_STATE);
	cr_assert(strstr(err.msg, "sandbox 'moved' has address 10.77.6.2 outside the configured subnet"), "%s", err.msg);
	cr_assert_eq(sb_lease_release(root, "moved", NULL), 0);
	cr_assert_eq(sb_lease_check_subnet(root, &s2, NULL), 0);
}

/* The tag is the start of the SHA-256 of the root's path, kept in
 * ROOT/network/tag beside that path: read back from there, and made again
 * when the path there is another (the root moved). */
Test(net_config, tag_is_kept_beside_the_roots_path)
{
	char tag[7], kept[7], digest[SB_DIGEST_STR_LEN], *text;
	const char *path = sb_root_path(root);
	char *file = sb_root_file(root, "network/tag"), *want;

	cr_assert_eq(sb_network_tag(tag, root, NULL), 0);
	cr_assert_eq(sb_sha256_buffer(digest, path, strlen(path), NULL), 0);
	cr_assert_eq(strncmp(tag, sb_digest_hex(digest), 6), 0, "%s", tag);
	want = sb_strdupf("%s\n%s\n", path, tag);
	cr_assert_eq(sb_fs_read_file(&text, NULL, file, 4096, NULL), 0);
	cr_assert_str_eq(text, want);
	free(text);
	text = sb_strdupf("%s\nabcdef\n", path);
	cr_assert_eq(sb_fs_write_atomic(file, text, strlen(text), 0600, NULL), 0);
	free(text);
	cr_assert_eq(sb_network_tag(kept, root, NULL), 0);
	cr_assert_str_eq(kept, "abcdef", "the kept tag is not the one used");
	cr_assert_eq(sb_fs_write_atomic(file, "/elsewhere\nabcdef\n", 18, 0600, NULL), 0);
	cr_assert_eq(sb_network_tag(kept, root, NULL), 0);
	cr_assert_str_eq(kept, tag, "another path's tag was used");
	cr_assert_eq(sb_fs_read_file(&text, NULL, file, 4096, NULL), 0);
	cr_assert_str_eq(text, want, "the tag of the root's path is not kept again");
	free(text);
	free(want);
	free(file);
}

/* A claimed pool member's lease: same address, new name, whole file. */
Test(net_config, lease_rename_keeps_the_address)
{
	struct sb_subnet s;
	uint32_t a, b, found;

	cr_assert_eq(sb_subnet_parse(&s, "10.77.8.0/24", NULL), 0);
	cr_assert_eq(sb_lease_take(&a, root, &s, "_pool-1", NULL), 0);
	cr_assert_eq(sb_lease_take(&b, root, &s, "taken", NULL), 0);
	cr_assert_eq(sb_lease_rename(root, "_pool-1", "taken", NULL), SB_ERR_EXISTS, "two leases under one name");
	cr_assert_eq(sb_lease_rename(root, "nosuch", "fresh", NULL), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_lease_rename(root, "_pool-1", "fresh", NULL), 0);
	cr_assert_eq(sb_lease_find(&found, root, "fresh", NULL), 0);
	cr_assert_eq(found, a, "the renamed lease moved to another address");
	cr_assert_eq(sb_lease_find(&found, root, "_pool-1", NULL), SB_ERR_NOTFOUND);
	cr_assert_eq(tu_sh("test $(ls -A %s/root/network/leases | wc -l) -eq 2", dir), 0, "a temp file was left");
}

static char *write_file(const char *name, const char *text)
{
	char *p = sb_path_join(dir, name);

	cr_assert_eq(sb_fs_write_atomic(p, text, strlen(text), 0644, NULL), 0);
	return p;
}

Test(net_config, resolv_conf_keeps_reachable_nameservers)
{
	char *src = write_file("r1", "# comment\nnameserver 127.0.0.53\nnameserver 192.0.2.53\n"
				     "nameserver 2001:db8::1\nsearch example.test\noptions ndots:2\n"
				     "nameserver 198.51.100.1\n");
	const char *sources[] = { src, NULL };
	char *text;
	int count;

	cr_assert_eq(sb_resolv_conf_build(&text, &count, sources, NULL), 0);
	cr_assert_eq(count, 2);
	cr_assert(strstr(text, "nameserver 192.0.2.53\n"));
	cr_assert(strstr(text, "nameserver 198.51.100.1\n"));
	cr_assert_null(strstr(text, "127.0.0.53"), "loopback is the sandbox's own");
	cr_assert_null(strstr(text, "2001:db8"), "sandboxes have IPv4 only");
	cr_assert(strstr(text, "search example.test\n"));
	cr_assert(strstr(text, "options ndots:2\n"));
	free(text);
	free(src);
}

Test(net_config, resolv_conf_loopback_only_host_uses_the_next_source)
{
	char *stub = write_file("stub", "nameserver 127.0.0.53\noptions edns0\n");
	char *upstream = write_file("upstream", "nameserver 203.0.113.7\n");
	const char *sources[] = { stub, "/nonexistent/resolv.conf", upstream, NULL };
	const char *only_stub[] = { stub, NULL };
	char *text;
	int count;

	cr_assert_eq(sb_resolv_conf_build(&text, &count, sources, NULL), 0);
	cr_assert_eq(count, 1);
	cr_assert(strstr(text, "nameserver 203.0.113.7\n"));
	cr_assert_null(strstr(text, "edns0"), "lines come from the chosen source only");
	free(text);
	cr_assert_eq(sb_resolv_conf_build(&text, &count, only_stub, NULL), 0);
	cr_assert_eq(count, 0);
	cr_assert_null(strstr(text, "\nnameserver "));
	cr_assert(strstr(text, "no nameserver"));
	free(text);
	free(stub);
	free(upstream);
}

/* Runs the hook in a child (it would change this process's mounts if it went through). */
static int hook_status(const char *netns)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(sb_netstack_pre_exec((void *)netns) == 0 ? 0 : 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WEXITSTATUS(status);
}

Test(net_config, netstack_hook_refuses_the_callers_own_namespace)
{
	cr_assert_eq(hook_status("/proc/self/ns/net"), 1);
	cr_assert_eq(hook_status("/run/netns/sandbench-test-absent"), 1);
	cr_assert_eq(hook_status(NULL), 1);
}

Test(net_config, info_and_names_without_setup)
{
	struct sb_netinfo info;
	struct sb_error err;
	struct sb_network_config bad = { .bridge = "much-too-long-bridge-name" };

	cr_assert_eq(sb_network_info(&info, root, NULL, "nobody", &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_network_info(&info, root, &bad, "x", NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_network_info(&info, root, NULL, "../etc", NULL), SB_ERR_INVALID);
	/* the sandbox name rule, with its message */
	char longest[SB_NAME_MAX + 2];
	memset(longest, 'n', SB_NAME_MAX);
	longest[SB_NAME_MAX] = '\0';
	cr_assert_eq(sb_network_info(&info, root, NULL, longest, NULL), SB_ERR_NOTFOUND);
	strcat(longest, "n");
	cr_assert_eq(sb_network_info(&info, root, NULL, longest, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "invalid sandbox name"), "%s", err.msg);
	cr_assert_str_eq(sb_net_orphan_kind_name(SB_NET_ORPHAN_NETNS), "netns");
}

Test(net_config, missing_tool_is_a_prerequisite_error)
{
	const char *argv[] = { "sandbench-no-such-tool", "x", NULL };
	struct sb_error err;

	cr_assert_eq(sb_net_cmd(NULL, argv, NULL, &err), SB_ERR_PREREQ);
	cr_assert(strstr(err.msg, "sandbench-no-such-tool"), "%s", err.msg);
	const char *fails[] = { "sh", "-c", "echo why >&2; exit 3", NULL };
	cr_assert_eq(sb_net_cmd(NULL, fails, NULL, &err), SB_ERR_IO);
	cr_assert(strstr(err.msg, "exit 3") && strstr(err.msg, "why"), "%s", err.msg);
	const char *cat[] = { "cat", NULL };
	char *out;
	cr_assert_eq(sb_net_cmd(&out, cat, "given on stdin", NULL), 0);
	cr_assert_str_eq(out, "given on stdin");
	free(out);
}

Test(net_config, egress_rules_parse_and_format)
{
	static const struct {
		const char *text, *canonical;
	} good[] = {
		{ "10.0.0.0/8", "10.0.0.0/8" }, { "192.0.2.1", "192.0.2.1" }, { "192.0.2.1/32:80", "192.0.2.1:80" },
		{ "0.0.0.0/0:443", "0.0.0.0/0:443" }, { "198.51.100.0/24:65535", "198.51.100.0/24:65535" },
		{ "sandbox:svc", "sandbox:svc" }, { "sandbox:svc.1:8080", "sandbox:svc.1:8080" },
		/* names: canonical in lower case, without the final dot */
		{ "example.org", "example.org" }, { "Api.Example.ORG.:443", "api.example.org:443" },
	};
	static const char *const bad[] = {
		"300.1.1.1", "x:99999", "10.0.0.1:0", "10.0.0.1:", "10.0.0.1:80x", "10.0.0.0/33", "10.0.0.1/8",
		"sandbox:", "sandbox:svc:0", "sandbox:svc:", "sandbox:a/b", "sandbox:.x", "sandbox:svc:80:1",
		"exa mple.org", "example.org/24", "::1", "fe80::1", "", "/8", "10.0.0.0/", "10.0.0.1:-1",
		/* found by fuzz-egress: these formatted as sandbox:30 */
		"sandbOx:30", "sandbox.:30", "SANDBOX",
	};
	struct sb_egress_rule r;
	struct sb_error err;
	char buf[SB_EGRESS_RULE_MAX];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(sb_egress_rule_parse(&r, good[i].text, &err), 0, "%s: %s", good[i].text, err.msg);
		cr_assert_str_eq(sb_egress_rule_format(buf, &r), good[i].canonical);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(sb_egress_rule_parse(&r, bad[i], &err), SB_ERR_INVALID, "%s accepted", bad[i]);
		cr_assert(strstr(err.msg, bad[i]), "the message does not name '%s': %s", bad[i], err.msg);
	}
	cr_assert_eq(sb_egress_mode_parse("deny-all"), SB_EGRESS_DENY_ALL);
	cr_assert_eq(sb_egress_mode_parse("open"), -1);
	struct sb_egress e = { .mode = SB_EGRESS_ALLOW };
	cr_assert_eq(sb_egress_rule_parse(&r, "10.0.0.0/8:443", NULL), 0);
	cr_assert_eq(sb_egress_add_rule(&e, &r), 0);
	cr_assert_eq(sb_egress_add_rule(&e, &r), 0);
	cr_assert_eq(e.n_rules, 1, "a duplicate rule is kept once");
	char *text = sb_egress_describe(&e);
	cr_assert_str_eq(text, "allow 10.0.0.0/8:443");
	free(text);
	sb_egress_clear(&e);
}
