/* The plugin flow end to end (root, real runsc): a disposable sandbox with
 * the network on, allowed to reach one test host only (--allow: private
 * ranges stay blocked as by default), installs a small tool from a package
 * index that host serves (an index naming the file and its sha256, the file
 * itself), is committed as an image, and a sandbox with the network off
 * made from that image runs the tool. The test host is a network namespace
 * made here; everything is removed by name. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names names;
static struct nt_host host;

static void setup(void)
{
	sbf_setup(&f, "plugin");
	nt_names_init(&names);
	nt_config_write_blocking(&names, f.dir);
}

static void teardown(void)
{
	sbf_teardown(&f); /* the sandboxes, and with them their network */
	nt_host_stop(&host);
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
}

TestSuite(plugin_flow, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

#define TOOL_OUTPUT "hello from the test index"

/* The index: "NAME PATH SHA256" per package, and the package. */
static void publish(void)
{
	cr_assert_eq(tu_sh("mkdir -p %s/simple/hello-tool && "
			   "printf '#!/bin/sh\\necho \"" TOOL_OUTPUT " ($*)\"\\n' > %s/simple/hello-tool/hello-tool-1.0.sh && "
			   "cd %s && echo \"hello-tool simple/hello-tool/hello-tool-1.0.sh "
			   "$(sha256sum simple/hello-tool/hello-tool-1.0.sh | cut -d' ' -f1)\" > simple/index.txt",
			   host.www, host.www, host.www), 0);
}

/* The installer inside: busybox nc (its static wget cannot resolve, see
 * notes/runsc.md), the headers cut off, the digest checked. */
static char *install_cmd(void)
{
	return sb_strdupf("set -e; fetch() { printf 'GET /%%s HTTP/1.0\\r\\n\\r\\n' \"$1\" | nc -w 5 %s %d | "
			  "sed '1,/^\\r$/d'; }; "
			  "fetch simple/index.txt > /tmp/index; "
			  "set -- $(grep '^hello-tool ' /tmp/index); "
			  "fetch \"$2\" > /tmp/pkg; "
			  "echo \"$3  /tmp/pkg\" | sha256sum -c -s; "
			  "mkdir -p /usr/local/bin; cp /tmp/pkg /usr/local/bin/hello-tool; chmod 0755 /usr/local/bin/hello-tool; "
			  "echo installed",
			  host.addr, host.port);
}

Test(plugin_flow, install_commit_run_offline)
{
	nt_host_start(&host, &names, f.dir);
	publish();
	char rule[64];
	snprintf(rule, sizeof(rule), "%s:%d", host.addr, host.port);

	sbf_ok(SB("create", "plug", "--image", SBF_IMAGE, "--temporary", "--network", "on", "--allow", rule),
	       "create the disposable sandbox");
	char *cmd = install_cmd();
	char *out = sbf_sh(&f, NULL, "plug", cmd, NULL);
	cr_assert_str_eq(out, "installed\n", "install: %s", out);
	free(out);
	free(cmd);
	sbf_ok(SB("commit", "plug", "plugin-tools:1"), "commit");
	sbf_ok(SB("rm", "--force", "plug"), "rm the disposable sandbox");

	sbf_ok(SB("create", "offline", "--image", "plugin-tools:1", "--network", "off"), "create offline");
	out = sbf_sh(&f, NULL, "offline", "hello-tool one two", NULL);
	cr_assert_str_eq(out, TOOL_OUTPUT " (one two)\n", "the installed tool: %s", out);
	free(out);
	char *get = nt_http_get_cmd(&host);
	int st;
	out = sbf_sh(&f, NULL, "offline", get, &st);
	cr_assert_neq(st, 0, "the offline sandbox reached the index: %s", out);
	cr_assert_null(strstr(out, NT_MARKER));
	free(out);
	free(get);
	sbf_ok(SB("rm", "--force", "offline"), "rm");
	struct tu_run r = SB("image", "rm", "plugin-tools:1");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
}
