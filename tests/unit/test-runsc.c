/* The runsc driver's argv tables and error reporting, with fake runsc scripts
 * (no root, no real runsc). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/root.h"
#include "backend/runsc/internal.h"
#include "testutil.h"

static char *dir, *fake;
static struct sb_root *root;

static void write_fake(const char *body)
{
	char *text = sb_strdupf("#!/bin/sh\n%s\n", body);
	cr_assert_eq(sb_fs_write_atomic(fake, text, strlen(text), 0755, NULL), 0);
	free(text);
}

static void setup(void)
{
	dir = tu_tempdir("runsc");
	cr_assert_not_null(dir);
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	fake = sb_path_join(dir, "fake-runsc");
	write_fake("exit 0");
	setenv("SANDBENCH_RUNSC", fake, 1);
}

static void teardown(void)
{
	unsetenv("SANDBENCH_RUNSC");
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
	free(fake);
}

TestSuite(runsc, .init = setup, .fini = teardown);

static char *joined(struct sb_runsc *rs, const struct sb_runsc_call *c)
{
	char **argv, *s = strdup("");
	cr_assert_eq(sb_runsc_argv(&argv, rs, c, NULL), 0);
	for (char **a = argv + 1; *a; a++) {
		char *n = sb_strdupf("%s%s%s", s, *s ? " " : "", *a);
		free(s);
		s = n;
	}
	sb_backend_argv_free(argv);
	/* the root differs per test run: show it as ROOT */
	char *state = sb_strdupf("--root=%s/runsc", dir), *at = strstr(s, state);
	cr_assert_not_null(at, "--root on every call: %s", s);
	char *out = sb_strdupf("%.*s--root=ROOT%s", (int)(at - s), s, at + strlen(state));
	free(state);
	free(s);
	return out;
}

Test(runsc, argv_global_flags_first_and_shaping_flags_everywhere)
{
	struct sb_runsc *rs;
	cr_assert_eq(sb_runsc_open(&rs, root, NULL), 0);

	struct sb_runsc_call c = SB_RUNSC_CALL_INIT(SB_RUNSC_CREATE, "sb-1");
	c.bundle = "/b";
	c.pid_file = "/p";
	char *s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT --network=none --platform=ptrace create --bundle /b --pid-file /p sb-1");
	free(s);

	char *env[] = { "A=1", "B=2", NULL }, *args[] = { "sh", "-c", "echo --detach", NULL };
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_EXEC, "sb-1");
	c.net = SB_RUNSC_NET_SANDBOX;
	c.cwd = "/w";
	c.env = env;
	c.args = args;
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT --network=sandbox --platform=ptrace exec --cwd /w --env A=1 --env B=2 sb-1 sh -c echo --detach");
	free(s);

	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_RESTORE, "sb-1");
	c.detach = 1;
	c.image_path = "/ck";
	c.bundle = "/b";
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT --network=none --platform=ptrace restore --detach --image-path /ck --bundle /b sb-1");
	free(s);

	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_CHECKPOINT, "sb-1");
	c.image_path = "/ck";
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT --network=none --platform=ptrace checkpoint --image-path /ck sb-1");
	free(s);

	/* queries and teardown do not shape the sandbox */
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_KILL, "sb-1");
	c.signal = "TERM";
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT kill sb-1 TERM");
	free(s);
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_DELETE, "sb-1");
	c.force = 1;
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT delete -force sb-1");
	free(s);
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_LIST, NULL);
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT list --format json");
	free(s);
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_EVENTS, "sb-1");
	s = joined(rs, &c);
	cr_assert_str_eq(s, "--root=ROOT events --stats sb-1");
	free(s);

	struct sb_error err;
	char **argv;
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_START, NULL);
	cr_assert_eq(sb_runsc_argv(&argv, rs, &c, &err), SB_ERR_INVALID, "an id is required");
	sb_runsc_close(rs);
}

Test(runsc, failure_names_operation_and_container_and_keeps_runscs_words_out)
{
	struct sb_runsc *rs;
	struct sb_error err;

	write_fake("echo 'some debug line' >&2; echo 'container \"sb-9\" does not exist' >&2; exit 1");
	cr_assert_eq(sb_runsc_open(&rs, root, NULL), 0);
	struct sb_runsc_call c = SB_RUNSC_CALL_INIT(SB_RUNSC_START, "sb-9");
	cr_assert_eq(sb_runsc_run(NULL, rs, &c, &err), SB_ERR_RUNTIME);
	cr_assert(strstr(err.msg, "runsc start of 'sb-9' failed (exit 1)"), "%s", err.msg);
	/* runsc's own words are the log's, not the user's */
	cr_assert(!strstr(err.msg, "does not exist") && strstr(err.msg, "SANDBENCH_LOG"), "%s", err.msg);

	/* exec: the command's status is not a runsc failure */
	write_fake("echo out; exit 42");
	struct sb_proc_result res;
	c = (struct sb_runsc_call)SB_RUNSC_CALL_INIT(SB_RUNSC_EXEC, "sb-9");
	char *args[] = { "true", NULL };
	c.args = args;
	c.any_status = 1;
	cr_assert_eq(sb_runsc_run(&res, rs, &c, &err), 0);
	cr_assert_eq(res.status, 42);
	cr_assert_str_eq(res.out, "out\n");
	sb_proc_result_clear(&res);
	sb_runsc_close(rs);
}

Test(runsc, every_call_has_a_deadline)
{
	struct sb_runsc *rs;
	struct sb_error err;

	write_fake("exec sleep 30");
	cr_assert_eq(sb_runsc_open(&rs, root, NULL), 0);
	struct sb_runsc_call c = SB_RUNSC_CALL_INIT(SB_RUNSC_STATE, "sb-1");
	c.proc.timeout_ms = 200;
	cr_assert_eq(sb_runsc_run(NULL, rs, &c, &err), SB_ERR_TIMEOUT);
	cr_assert(strstr(err.msg, "runsc state of 'sb-1' did not finish"), "%s", err.msg);
	sb_runsc_close(rs);
}

Test(runsc, missing_runsc_is_a_prerequisite_error)
{
	struct sb_runsc *rs;
	struct sb_error err;

	setenv("SANDBENCH_RUNSC", "/nonexistent", 1);
	cr_assert_eq(sb_runsc_open(&rs, root, &err), SB_ERR_PREREQ);
	cr_assert_null(rs);
}

static json_t *build_spec(const void *arg)
{
	json_t *doc;

	return sb_spec_build(&doc, arg, NULL) == 0 ? doc : NULL;
}

static json_t *build_shell_process(const void *arg)
{
	(void)arg;
	return sb_spec_process((char *[]){ "/bin/sh", "-i", NULL }, NULL, NULL, NULL, 1, 24, 80);
}

/* A spec that cannot be built whole is an error, never a sandbox with fewer
 * mounts or limits: each of jansson's allocations fails in turn. */
Test(runsc, spec_is_whole_or_an_error_when_memory_runs_out)
{
	struct sb_sandbox_mount mounts[] = { { "/srv/a", "/a", SB_MOUNT_RO }, { "/srv/b", "/b", SB_MOUNT_RW } };
	struct sb_record rec = { .name = "box", .mounts = mounts, .n_mounts = 2, .memory = 256ULL << 20, .cpus = 1.5 };
	const char *const staged[] = { "/box/mounts/0", "/box/mounts/1" };
	struct sb_spec_params p = { .rec = &rec, .rootfs = "/rootfs", .workspace = "/ws", .exchange = "/ex",
				    .netns_path = "/run/netns/sb-x", .mount_sources = staged };
	struct sb_error err;
	json_t *want;

	cr_assert_eq(sb_spec_build(&want, &p, &err), 0, "%s", err.msg);
	json_t *res = json_object_get(json_object_get(want, "linux"), "resources");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "memory"), "limit")), 256LL << 20);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "cpu"), "quota")), 150000);
	cr_assert_eq(json_array_size(json_object_get(want, "mounts")), 6 + 2 + 2, "base, workspace, exchange, host");
	long n = tu_json_whole_or_nothing(build_spec, &p, want);
	cr_assert_gt(n, 100, "failing allocation %ld gave a spec that lacks a part", -n);
	json_decref(want);

	want = build_shell_process(NULL);
	cr_assert_not_null(json_object_get(want, "consoleSize"));
	n = tu_json_whole_or_nothing(build_shell_process, NULL, want);
	cr_assert_gt(n, 20, "failing allocation %ld gave a process that lacks a part", -n);
	json_decref(want);
}
