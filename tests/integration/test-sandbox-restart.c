/* A host restart does not strand sandboxes. Simulated two ways: the runtime
 * of a network-on permanent sandbox dies with its disk and network (its
 * runsc processes killed, its overlay unmounted, its netns, bridge and NAT
 * elements deleted), and the host's boot id changes under running
 * sandboxes. Either way the sandbox lists as stopped, restore cold-starts it
 * from its kept disk with its network back, and a temporary sandbox whose
 * host restarted is removed. Also: an old (schema 1) record keeps working, and
 * a checkpoint of another runtime build is not restored. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/jsonfile.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names names;
static struct nt_host host;

static void setup(void)
{
	sbf_setup(&f, "restart");
	nt_names_init(&names);
	nt_config_write(&names, f.dir);
}

static void teardown(void)
{
	sbf_teardown(&f);
	nt_host_stop(&host);
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
}

TestSuite(restart, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static const char *const boot_a[] = { "SANDBENCH_BOOT_ID=11111111-1111-4111-8111-111111111111", NULL };
static const char *const boot_b[] = { "SANDBENCH_BOOT_ID=22222222-2222-4222-8222-222222222222", NULL };

/* The record of name as `inspect --json` shows it. */
static json_t *inspect(const char *const *env, const char *name)
{
	struct tu_run r = tu_sandbench(f.dir, env, "inspect", name, "--json", NULL);
	cr_assert_eq(r.status, 0, "inspect %s: %s", name, r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "%s", r.out);
	tu_run_free(&r);
	return doc;
}

static const char *field(json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));
	return s ? s : "";
}

/* The state of name in `ls --json` ("" when not listed). */
static char *listed_state(const char *const *env, const char *name)
{
	struct tu_run r = tu_sandbench(f.dir, env, "ls", "--json", NULL);
	cr_assert_eq(r.status, 0, "ls: %s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL), *s;
	size_t i;
	char *state = strdup("");
	cr_assert(json_is_array(doc), "%s", r.out);
	json_array_foreach(doc, i, s) {
		if (!strcmp(field(s, "name"), name)) {
			free(state);
			state = strdup(field(s, "state"));
		}
	}
	json_decref(doc);
	tu_run_free(&r);
	return state;
}

/* What a host restart takes from a sandbox, done by hand: its processes, its
 * mounted disk, its namespace, the bridge and its NAT elements (only this
 * test's: the table is shared with other roots). */
static void kill_runtime(const char *name, const char *addr)
{
	char *dir = sb_strdupf("%s/sandboxes/%s", f.dir, name);

	/* [e]: the pattern must not match the shell that runs pkill; pkill
	 * fails when it matched nothing */
	cr_assert_eq(tu_sh("pkill -KILL -f -- '--bundl[e]=%s/bundle'", dir), 0, "no runsc process of %s to kill", name);
	cr_assert_eq(tu_sh("umount -l %s/rootfs", dir), 0);
	cr_assert_eq(tu_sh("for n in $(ip netns list | cut -d' ' -f1 | grep -- '-%s$'); do ip netns del $n; done", name), 0);
	cr_assert_eq(tu_sh("ip link del %s", names.bridge), 0);
	tu_sh("nft delete element inet sandbench sandboxes '{ %s }' 2>/dev/null; "
	      "nft delete element inet sandbench bridges '{ \"%s\" }' 2>/dev/null; true", addr, names.bridge);
	free(dir);
}

Test(restart, runtime_gone_with_its_network_lists_stopped_and_restores_cold)
{
	char name[16];
	snprintf(name, sizeof(name), "hr%s", names.sfx);
	nt_host_start(&host, &names, f.dir);
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--permanent", "--network", "on"), "create");
	free(sbf_sh(&f, NULL, name, "echo kept > /workspace/w; echo rootfs > /root-file", NULL));
	json_t *doc = inspect(NULL, name);
	char *addr = strdup(field(doc, "address"));
	json_decref(doc);
	cr_assert(addr[0], "no address");

	kill_runtime(name, addr);
	char *state = listed_state(NULL, name);
	cr_assert_str_eq(state, "stopped", "a dead sandbox listed as %s", state);
	free(state);
	doc = inspect(NULL, name);
	cr_assert(strstr(field(doc, "reason"), "restore cold-starts it"), "%s", field(doc, "reason"));
	json_decref(doc);

	sbf_ok(SB("restore", name), "restore");
	doc = inspect(NULL, name);
	cr_assert_str_eq(field(doc, "state"), "running");
	cr_assert(strstr(field(doc, "reason"), "cold start"), "%s", field(doc, "reason"));
	json_decref(doc);
	char *out = sbf_sh(&f, NULL, name, "cat /workspace/w /root-file", NULL);
	cr_assert_str_eq(out, "kept\nrootfs\n");
	free(out);
	/* the network came back: the test host answers */
	char *get = nt_http_get_cmd(&host);
	out = sbf_sh(&f, NULL, name, get, NULL);
	cr_assert(strstr(out, NT_MARKER), "no answer from the test host: %s", out);
	free(out);
	free(get);
	free(addr);
}

Test(restart, changed_boot_id_stops_permanent_and_removes_temporary)
{
	sbf_ok(tu_sandbench(f.dir, boot_a, "create", "perm", "--image", SBF_IMAGE, "--permanent", NULL), "create perm");
	sbf_ok(tu_sandbench(f.dir, boot_a, "create", "temp", "--image", SBF_IMAGE, "--temporary", NULL), "create temp");
	free(sbf_sh(&f, boot_a, "perm", "echo kept > /workspace/w", NULL));

	/* the first command after the restart reconciles */
	char *state = listed_state(boot_b, "perm");
	cr_assert_str_eq(state, "stopped");
	free(state);
	state = listed_state(boot_b, "temp");
	cr_assert_str_eq(state, "", "a temporary sandbox survived a host restart");
	free(state);
	cr_assert_not(sbf_mounted_below(f.dir), "a disk of the old boot is still mounted");
	json_t *doc = inspect(boot_b, "perm");
	cr_assert(strstr(field(doc, "reason"), "host restarted"), "%s", field(doc, "reason"));
	json_decref(doc);

	sbf_ok(tu_sandbench(f.dir, boot_b, "restore", "perm", NULL), "restore");
	char *out = sbf_sh(&f, boot_b, "perm", "cat /workspace/w", NULL);
	cr_assert_str_eq(out, "kept\n");
	free(out);
	sbf_ok(tu_sandbench(f.dir, boot_b, "stop", "perm", NULL), "stop");
	sbf_ok(tu_sandbench(f.dir, boot_b, "restore", "perm", NULL), "restore again");
	doc = inspect(boot_b, "perm");
	cr_assert(strstr(field(doc, "reason"), "restored from checkpoint"), "%s", field(doc, "reason"));
	json_decref(doc);
}

/* Rewrites name's record with edit (a python3 expression statement on r). */
static void edit_record(const char *name, const char *edit)
{
	cr_assert_eq(tu_sh("python3 -c 'import json,sys; p=sys.argv[1]; r=json.load(open(p)); %s; json.dump(r, open(p, \"w\"))' "
			   "%s/sandboxes/%s/sandbox.json", edit, f.dir, name), 0);
}

/* A permanent sandbox with a file in its workspace, stopped. */
static void stopped_with_a_file(const char *name)
{
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--permanent"), "create");
	free(sbf_sh(&f, NULL, name, "echo kept > /workspace/w", NULL));
	sbf_ok(SB("stop", name), "stop");
}

static void assert_file_kept(const char *name)
{
	char *out = sbf_sh(&f, NULL, name, "cat /workspace/w", NULL);

	cr_assert_str_eq(out, "kept\n");
	free(out);
}

Test(restart, a_schema_1_record_keeps_working)
{
	stopped_with_a_file("old");
	/* what wave 1 wrote: no backend, no runtime, no mount identities */
	edit_record("old", "r[\"schema\"]=1; r.pop(\"backend\"); r.pop(\"runtime\")");
	sbf_ok(SB("restore", "old"), "restore");
	assert_file_kept("old");
	json_t *doc;
	char *path = sb_strdupf("%s/sandboxes/old/sandbox.json", f.dir);
	cr_assert_eq(sb_json_load(&doc, path, 1 << 20, NULL), 0);
	cr_assert_eq(json_integer_value(json_object_get(doc, "schema")), 2);
	cr_assert_str_eq(field(doc, "backend"), "runsc");
	json_decref(doc);
	free(path);
}

Test(restart, a_checkpoint_of_another_runtime_build_is_not_restored)
{
	stopped_with_a_file("build");
	edit_record("build", "r[\"runtime\"][\"build\"]=\"runsc:1:2.000000003\"");
	sbf_ok(SB("restore", "build"), "restore");
	json_t *doc = inspect(NULL, "build");
	cr_assert(strstr(field(doc, "reason"), "another runtime build"), "%s", field(doc, "reason"));
	json_decref(doc);
	assert_file_kept("build");
}

/* A restored sandbox whose runtime then dies is cold-started: the memory
 * image its restore consumed is never loaded again over its newer disk. */
Test(restart, a_consumed_checkpoint_is_never_restored_again)
{
	stopped_with_a_file("once");
	sbf_ok(SB("restore", "once"), "restore");
	free(sbf_sh(&f, NULL, "once", "echo newer > /workspace/w", NULL));
	char *dir = sb_strdupf("%s/sandboxes/once", f.dir);
	cr_assert_eq(tu_sh("pkill -KILL -f -- '--bundl[e]=%s/bundle'", dir), 0);
	free(dir);
	sbf_ok(SB("restore", "once"), "restore after the runtime died");
	json_t *doc = inspect(NULL, "once");
	cr_assert(strstr(field(doc, "reason"), "cold start"), "%s", field(doc, "reason"));
	json_decref(doc);
	char *out = sbf_sh(&f, NULL, "once", "cat /workspace/w", NULL);
	cr_assert_str_eq(out, "newer\n");
	free(out);
}
