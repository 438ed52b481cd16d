/* Failure injection: the real runsc behind a wrapper that records every call
 * and fails the operation named by a marker file (ROOT/fail-OP: "exit" makes it
 * fail with a message, "kill" makes it die by SIGKILL before doing anything). */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "image/blob_store.h"
#include "image/bootstrap.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "registry/registry.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *wrapper, *env_runsc;

static void setup(void)
{
	sbf_setup(&f, "faults");
	wrapper = sb_strdupf("%s/wrap-runsc", f.dir);
	char *script = sb_strdupf(
		"#!/bin/sh\n"
		"echo \"$*\" >> '%s/calls.log'\n"
		"for a; do case \"$a\" in create|start|exec|checkpoint|restore|delete|kill|state|list|events) op=$a; break;; esac; done\n"
		"if [ -f '%s/fail-'\"$op\" ]; then\n"
		"  case $(cat '%s/fail-'\"$op\") in\n"
		"    exit) echo \"injected failure of $op\" >&2; exit 1;;\n"
		"    kill) kill -9 $$;;\n"
		"  esac\n"
		"fi\n"
		"exec runsc \"$@\"\n", f.dir, f.dir, f.dir);
	cr_assert_eq(sb_fs_write_atomic(wrapper, script, strlen(script), 0755, NULL), 0);
	free(script);
	env_runsc = sb_strdupf("SANDBENCH_RUNSC=%s", wrapper);
	setenv("SANDBENCH_RUNSC", wrapper, 1);
}

static void teardown(void)
{
	unsetenv("SANDBENCH_RUNSC");
	sbf_teardown(&f);
	free(wrapper);
	free(env_runsc);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 120);

#define SB(...) tu_sandbench(f.dir, (const char *[]){ env_runsc, NULL }, __VA_ARGS__, NULL)

static void inject(const char *op, const char *mode)
{
	char *path = sb_strdupf("%s/fail-%s", f.dir, op);
	if (mode)
		cr_assert_eq(sb_fs_write_atomic(path, mode, strlen(mode), 0644, NULL), 0);
	else
		unlink(path);
	free(path);
}

static int run_ok(struct tu_run r)
{
	int ok = r.status == 0;
	if (!ok)
		fprintf(stderr, "sandbench failed (%d): %s", r.status, r.err);
	tu_run_free(&r);
	return ok;
}

/* How many runsc calls of the log have op as their subcommand. */
static int calls_of(const char *op)
{
	char *log = sb_strdupf("%s/calls.log", f.dir), *text = NULL, *save = NULL;
	char *word = sb_strdupf(" %s ", op);
	int n = 0;

	if (sb_fs_read_file(&text, NULL, log, 1 << 20, NULL) == 0)
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			n += strstr(l, word) != NULL;
	free(text), free(log), free(word);
	return n;
}

static char *box_id(void)
{
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	return id;
}

static void assert_box_gone(const char *id)
{
	char *dir = sb_strdupf("%s/sandboxes/box", f.dir);
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0);
	cr_assert_not(sbf_mounted_below(dir));
	cr_assert_not(sbf_runsc_has(&f, id));
	cr_assert_not(sbf_cgroup_exists(id));
	free(dir);
}

Test(faults, every_call_has_the_root_and_the_same_shaping_flags)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	cr_assert(run_ok(SB("exec", "box", "--", "true")));
	cr_assert(run_ok(SB("stop", "box")));
	cr_assert(run_ok(SB("restore", "box")));
	cr_assert(run_ok(SB("rm", "box")));

	char *log = sb_strdupf("%s/calls.log", f.dir), *text, *save = NULL;
	char *root_flag = sb_strdupf("--root=%s/runsc ", f.dir);
	cr_assert_eq(sb_fs_read_file(&text, NULL, log, 1 << 20, NULL), 0);
	int shaped = 0, lines = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
		cr_assert_eq(strncmp(l, root_flag, strlen(root_flag)), 0, "--root first: %s", l);
		const char *rest = l + strlen(root_flag);
		/* the subcommand is the first word that is not a flag; what precedes it is global */
		const char *op = rest;
		while (!strncmp(op, "--", 2) && strchr(op, ' '))
			op = strchr(op, ' ') + 1;
		static const char *const shaping[] = { "create ", "start ", "exec ", "checkpoint ", "restore " };
		for (size_t i = 0; i < sizeof(shaping) / sizeof(shaping[0]); i++) {
			if (strncmp(op, shaping[i], strlen(shaping[i])) != 0)
				continue;
			cr_assert_eq(strncmp(rest, "--network=none --platform=ptrace ", 33), 0, "shaping flags: %s", l);
			cr_assert_eq(op - rest, 33, "nothing else before the subcommand: %s", l);
			shaped++;
		}
		cr_assert_null(strstr(l, "kvm"));
	}
	cr_assert_geq(shaped, 5, "create, start, exec, checkpoint, restore seen");
	cr_assert_geq(lines, 7);
	free(text), free(log), free(root_flag);
}

Test(faults, checkpoint_dying_leaves_the_sandbox_running)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	inject("checkpoint", "kill");
	struct tu_run r = SB("stop", "box");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "cannot stop sandbox 'box'"), "%s", r.err);
	tu_run_free(&r);
	inject("checkpoint", NULL);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	sb_sandbox_info_clear(&info);
	char *tmp = sb_strdupf("%s/sandboxes/box/checkpoint.tmp", f.dir);
	struct stat st;
	cr_assert_neq(stat(tmp, &st), 0, "the partial checkpoint is gone");
	free(tmp);
	cr_assert(run_ok(SB("exec", "box", "--", "true")), "still usable");
	cr_assert(run_ok(SB("stop", "box")), "and stoppable once runsc works");
}

Test(faults, failing_delete_after_checkpoint_leaves_broken_then_force_cleans)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	inject("delete", "exit");
	struct tu_run r = SB("stop", "box");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_BROKEN);
	cr_assert(strstr(info.rec.reason, "runsc delete"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	inject("delete", NULL);

	r = SB("rm", "box");
	cr_assert_eq(r.status, 4, "broken needs --force: %s", r.err);
	cr_assert(strstr(r.err, "--force"), "%s", r.err);
	tu_run_free(&r);
	cr_assert(run_ok(SB("rm", "--force", "box")));
	assert_box_gone(id);
	free(id);
}

Test(faults, failed_restore_rolls_back_to_stopped)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	cr_assert(run_ok(SB("exec", "box", "--", "sh", "-c", "echo mem > /tmp/in-memory")));
	cr_assert(run_ok(SB("stop", "box")));
	inject("restore", "exit");
	inject("create", "exit");
	struct tu_run r = SB("restore", "box");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "runsc create") && !strstr(r.err, "injected"), "%s", r.err);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert(info.has_checkpoint, "the checkpoint is kept for the next try");
	cr_assert(strstr(info.rec.reason, "restore failed"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	char *dir = sb_strdupf("%s/sandboxes/box/rootfs", f.dir);
	cr_assert_not(sbf_mounted_below(dir), "the disk is unmounted again");
	free(dir);

	inject("restore", NULL);
	inject("create", NULL);
	cr_assert(run_ok(SB("restore", "box")));
	r = SB("exec", "box", "--", "cat", "/tmp/in-memory");
	cr_assert_str_eq(r.out, "mem\n", "the tmpfs (memory) came back: %s", r.err);
	tu_run_free(&r);
}

Test(faults, rm_ends_the_sandbox_process_without_runsc_kill)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	cr_assert(run_ok(SB("rm", "box")));
	cr_assert_eq(calls_of("kill"), 0, "SIGKILL went to the sandbox process directly");
	cr_assert_eq(calls_of("delete"), 1);
	assert_box_gone(id);
	free(id);
}

Test(faults, rm_never_kills_another_process_named_by_the_pid_file)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	/* the pid file names a process that is not the sandbox (as after pid reuse) */
	pid_t bystander = fork();
	if (bystander == 0) {
		pause();
		_exit(0);
	}
	cr_assert_gt(bystander, 0);
	char *pid_file = sb_strdupf("%s/sandboxes/box/runsc.pid", f.dir);
	char *text = sb_strdupf("%ld", (long)bystander);
	cr_assert_eq(sb_fs_write_atomic(pid_file, text, strlen(text), 0644, NULL), 0);
	struct tu_run r = SB("rm", "box");
	int bystander_alive = kill(bystander, 0) == 0;
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert(bystander_alive, "rm left the other process alone");
	cr_assert_eq(calls_of("kill"), 1, "and ended the sandbox through runsc kill");
	assert_box_gone(id);
	free(pid_file), free(text), free(id);
}

/* err may be NULL (base/error.h). Runs call, whose error argument is E, with
 * an error struct and without one: both fail, with the same code (with), and
 * nothing crashes. A call is run twice: only calls without side effects. */
#define FAILS_ALIKE(with, call)                                                                     \
	do {                                                                                        \
		struct sb_error e_ = { 0, "" }, *E = &e_;                                           \
		with = (call);                                                                      \
		E = NULL;                                                                           \
		int without_ = (call);                                                              \
		cr_assert_lt(with, 0, "%s", #call);                                                 \
		cr_assert_eq(without_, with, "%s: %d with an error struct (%s), %d without", #call, \
			     with, e_.msg, without_);                                               \
	} while (0)
#define FAILS(code, call)                                                       \
	do {                                                                    \
		int rc_;                                                        \
		FAILS_ALIKE(rc_, call);                                         \
		cr_assert_eq(rc_, code, "%s: %s", #call, sb_error_name(rc_));   \
	} while (0)

Test(faults, every_public_call_fails_cleanly_without_an_error_struct)
{
	static const char zero[] = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
	struct sb_sandbox_spec spec = { .name = "bad/name", .image = SBF_IMAGE };
	struct sb_sandbox_spec missing_image = { .name = "box", .image = "sandbench-test/absent:1" };
	struct sb_sandbox_mount absent = { "/nonexistent-sandbench-host", "/mnt", SB_MOUNT_RO };
	struct sb_sandbox_spec missing_mount = { .name = "box", .image = SBF_IMAGE, .mounts = &absent, .n_mounts = 1 };
	struct sb_exec_opts eo = { .argv = (char *[]){ "true", NULL }, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
	struct sb_sandbox_mount mount;
	struct sb_sandbox_info info;
	struct sb_sandbox_stats stats;
	struct sb_exec_result res;
	struct sb_shell *shell;
	struct sb_record rec;
	struct sb_root *other;
	char digest[SB_DIGEST_STR_LEN];
	int rc;

	/* sandbox.h (and record.h, which it includes) */
	FAILS(SB_ERR_INVALID, sb_sandbox_name_check("bad/name", E));
	FAILS(SB_ERR_INVALID, sb_sandbox_mount_parse(&mount, (char[]){ "no-colon" }, E));
	FAILS(SB_ERR_INVALID, sb_sandbox_create(&info, f.root, &spec, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_create(NULL, f.root, &missing_image, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_create(NULL, f.root, &missing_mount, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_exec(&res, f.root, "ghost", &eo, E));
	FAILS(SB_ERR_INVALID, sb_sandbox_exec(&res, f.root, "bad/name", &eo, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_stop(f.root, "ghost", NULL, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_restore(f.root, "ghost", E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_remove(f.root, "ghost", 0, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_remove(f.root, "ghost", SB_REMOVE_FORCE, E));
	FAILS(SB_ERR_INVALID, sb_sandbox_remove(f.root, "../x", SB_REMOVE_FORCE, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_touch(f.root, "ghost", E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_extend(f.root, "ghost", 60, E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_inspect(&info, f.root, "ghost", E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_stats(&stats, f.root, "ghost", E));
	FAILS(SB_ERR_NOTFOUND, sb_sandbox_expire(f.root, "ghost", E));
	FAILS(SB_ERR_NOTFOUND, sb_shell_open(&shell, f.root, "ghost", NULL, E));
	FAILS(SB_ERR_NOTFOUND, sb_record_load(&rec, f.root, "ghost", E));
	json_t *empty = json_object();
	FAILS(SB_ERR_FORMAT, sb_record_from_json(&rec, empty, E));
	json_decref(empty);
	/* a record that is not JSON: its code survives the context added to it */
	char *bad_dir = sb_strdupf("%s/sandboxes/garbled", f.dir), *bad_rec = sb_path_join(bad_dir, "sandbox.json");
	cr_assert_eq(sb_fs_mkdirs(bad_dir, 0700, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(bad_rec, "{", 1, 0644, NULL), 0);
	FAILS(SB_ERR_FORMAT, sb_sandbox_inspect(&info, f.root, "garbled", E));
	FAILS(SB_ERR_FORMAT, sb_sandbox_stop(f.root, "garbled", NULL, E));
	cr_assert_eq(sb_sandbox_remove(f.root, "garbled", SB_REMOVE_FORCE, NULL), 0);
	free(bad_dir), free(bad_rec);
	FAILS_ALIKE(rc, sb_root_open(&other, "/proc/version/sandbench", E));

	/* image/ */
	struct sb_image_ref ref;
	struct sb_image_manifest man;
	struct sb_image_config cfg;
	struct sb_image_info img;
	struct sb_image_removal removal;
	struct sb_image_import_result imported;
	struct sb_image_import_opts evil_opts = { .name = "sandbench-test/evil:1" };
	struct sb_bootstrap_result boot;
	struct sb_bootstrap_opts bopts = { .kind = SB_BOOTSTRAP_BUSYBOX, .name = "sandbench-test/boot:1",
					   .busybox = "/nonexistent-sandbench-busybox" };
	struct sb_blob_writer *w;
	char out[SB_IMAGE_REF_MAX], *data;
	size_t len;
	FAILS(SB_ERR_INVALID, sb_image_ref_parse(&ref, "Bad Ref", E));
	FAILS(SB_ERR_INVALID, sb_image_canonical_ref(out, "Bad Ref", E));
	FAILS(SB_ERR_FORMAT, sb_image_manifest_parse(&man, "{", 1, "test", E));
	FAILS(SB_ERR_FORMAT, sb_image_config_parse(&cfg, "[]", 2, "test", E));
	FAILS(SB_ERR_NOTFOUND, sb_image_resolve(&img, f.root, "sandbench-test/absent:1", E));
	FAILS(SB_ERR_NOTFOUND, sb_image_inspect(&img, f.root, "sandbench-test/absent:1", E));
	FAILS(SB_ERR_NOTFOUND, sb_image_remove(&removal, f.root, "sandbench-test/absent:1", 0, E));
	FAILS(SB_ERR_NOTFOUND, sb_image_install(f.root, "sandbench-test/absent:1", zero, NULL, E));
	FAILS(SB_ERR_NOTFOUND, sb_image_install_from(f.root, NULL, zero, "test", NULL, E));
	FAILS_ALIKE(rc, sb_image_import(&imported, f.root, "/nonexistent-sandbench-image.tar", NULL, E));
	FAILS_ALIKE(rc, sb_image_bootstrap(&boot, f.root, &bopts, E));
	/* a layer entry that leaves the root: refused inside the unpacker, which adds context */
	char *evil = sb_strdupf("%s/evil.tar", f.dir);
	cr_assert_eq(tu_sh("python3 -c 'import io,tarfile,sys; t=tarfile.open(sys.argv[1],\"w\"); "
			   "i=tarfile.TarInfo(\"../escape\"); i.size=1; t.addfile(i, io.BytesIO(b\"x\")); t.close()' %s",
			   evil), 0);
	FAILS(SB_ERR_UNSAFE, sb_image_import(&imported, f.root, evil, &evil_opts, E));
	free(evil);
	FAILS(SB_ERR_NOTFOUND, sb_blob_get(&data, &len, f.root, zero, 1 << 20, E));
	FAILS(SB_ERR_FORMAT, sb_blob_writer_open(&w, f.root, "sha256:short", E));
	cr_assert_eq(sb_blob_writer_open(&w, f.root, zero, NULL), 0);
	cr_assert_eq(sb_blob_writer_write(w, "x", 1, NULL), 0);
	cr_assert_eq(sb_blob_writer_commit(digest, w, NULL), SB_ERR_DIGEST);
	sb_blob_writer_free(w);

	/* registry.h: a malformed reference, a CA file that is not there, a registry
	 * that refuses connections */
	struct sb_registry_opts ropts = { .insecure = 1 }, no_ca = { .ca_file = "/nonexistent-sandbench-ca.pem" };
	FAILS(SB_ERR_INVALID, sb_registry_fetch(digest, NULL, f.root, "Bad Ref", &ropts, E));
	FAILS(SB_ERR_INVALID, sb_registry_pull(digest, NULL, f.root, "Bad Ref", &ropts, E));
	FAILS_ALIKE(rc, sb_registry_pull(digest, NULL, f.root, "127.0.0.1:1/absent:1", &no_ca, E));
	FAILS(SB_ERR_NETWORK, sb_registry_pull(digest, NULL, f.root, "127.0.0.1:1/absent:1", &ropts, E));

	/* a root whose sandboxes and image references cannot be read */
	char *sandboxes = sb_strdupf("%s/sandboxes", f.dir), *refs = sb_strdupf("%s/images/refs.json", f.dir);
	char *moved = sb_strdupf("%s/sandboxes.away", f.dir);
	cr_assert_eq(rename(sandboxes, moved), 0);
	cr_assert_eq(sb_fs_write_atomic(sandboxes, "", 0, 0644, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(refs, "{", 1, 0644, NULL), 0);
	struct sb_sandbox_info *list;
	struct sb_reap_item *reaped;
	struct sb_image_info *images;
	struct sb_image_prune_report pruned;
	size_t n;
	FAILS_ALIKE(rc, sb_sandbox_list(&list, &n, f.root, E));
	FAILS_ALIKE(rc, sb_sandbox_reap(&reaped, &n, f.root, 0, E));
	FAILS_ALIKE(rc, sb_image_list(&images, &n, f.root, E));
	FAILS_ALIKE(rc, sb_image_prune(&pruned, f.root, 0, E));
	cr_assert_eq(unlink(sandboxes), 0);
	cr_assert_eq(rename(moved, sandboxes), 0);
	free(sandboxes), free(refs), free(moved);
}

/* The state a failed transition leaves names its cause even when the caller
 * passed no error struct. */
static void assert_box(enum sb_sandbox_state state, const char *reason1, const char *reason2)
{
	struct sb_sandbox_info info;

	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, state, "%s", sb_sandbox_state_name(info.rec.state));
	cr_assert(strstr(info.rec.reason, reason1) && strstr(info.rec.reason, reason2), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
}

/* A record is JSON, which holds UTF-8 only: text that is not is refused by
 * name before anything is made (it used to end as "out of memory"). */
Test(faults, text_a_record_cannot_hold_is_refused_up_front)
{
	char *scratch = tu_tempdir("utf8"), *host = sb_strdupf("%s/bad\xff", scratch);
	struct sb_sandbox_mount mount = { host, "/data", SB_MOUNT_RO };
	struct sb_sandbox_label label = { "k", "v\xff" };
	const struct sb_sandbox_spec specs[] = {
		{ .name = "box", .image = SBF_IMAGE, .owner = "o\xff" },
		{ .name = "box", .image = SBF_IMAGE, .mounts = &mount, .n_mounts = 1 },
		{ .name = "box", .image = SBF_IMAGE, .labels = &label, .n_labels = 1 },
	};
	const char *const what[] = { "owner of the sandbox", "host path of a mount", "value of a label" };
	struct sb_sandbox_info info;
	struct sb_error err;

	cr_assert_eq(mkdir(host, 0700), 0);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		cr_assert_eq(sb_sandbox_create(NULL, f.root, &specs[i], &err), SB_ERR_INVALID, "%s", err.msg);
		cr_assert(strstr(err.msg, what[i]) && strstr(err.msg, "UTF-8"), "%s", err.msg);
		cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), SB_ERR_NOTFOUND, "nothing was made");
	}
	tu_remove(scratch);
	free(scratch);
	free(host);
}

Test(faults, failed_transitions_without_an_error_struct_keep_their_reason)
{
	struct sb_sandbox_spec spec = { .name = "box", .image = SBF_IMAGE };

	inject("create", "exit");
	cr_assert_lt(sb_sandbox_create(NULL, f.root, &spec, NULL), 0);
	inject("create", NULL);
	char *dir = sb_strdupf("%s/sandboxes/box", f.dir);
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0, "the failed create was rolled back");
	free(dir);

	cr_assert_eq(sb_sandbox_create(NULL, f.root, &spec, NULL), 0);
	cr_assert_eq(sb_sandbox_create(NULL, f.root, &spec, NULL), SB_ERR_EXISTS);
	inject("delete", "exit");
	cr_assert_lt(sb_sandbox_stop(f.root, "box", NULL, NULL), 0);
	assert_box(SB_STATE_BROKEN, "stop failed after the checkpoint", "runsc delete");
	inject("delete", NULL);
	cr_assert_eq(sb_sandbox_remove(f.root, "box", SB_REMOVE_FORCE, NULL), 0);

	cr_assert_eq(sb_sandbox_create(NULL, f.root, &spec, NULL), 0);
	cr_assert_eq(sb_sandbox_stop(f.root, "box", NULL, NULL), 0);
	inject("restore", "exit");
	inject("create", "exit");
	cr_assert_lt(sb_sandbox_restore(f.root, "box", NULL), 0);
	assert_box(SB_STATE_STOPPED, "restore failed", "runsc create");
	inject("restore", NULL);
	inject("create", NULL);
	cr_assert_eq(sb_sandbox_restore(f.root, "box", NULL), 0);

	inject("delete", "exit");
	cr_assert_lt(sb_sandbox_remove(f.root, "box", 0, NULL), 0);
	assert_box(SB_STATE_BROKEN, "remove failed", "runsc delete");
	inject("delete", NULL);
}

/* A backend that lacks a capability is never asked for it: create refuses
 * what needs it, stop keeps the disk only and restore cold-starts, inspect
 * shows no live figures (the test build takes the capabilities away). */
Test(faults, a_lesser_backend_is_not_asked_for_what_it_lacks)
{
	const char *env[] = { env_runsc, "SANDBENCH_BACKEND_WITHOUT=checkpoint,host-mounts,live-stats,network", NULL };
	char *host = tu_tempdir("lesser-mount"), *mount = sb_strdupf("%s:/data", host);
	struct tu_run r = tu_sandbench(f.dir, env, "create", "lesser", "--image", SBF_IMAGE, "--mount", mount, NULL);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "cannot bind host folders"), "%s", r.err);
	tu_run_free(&r);
	tu_remove(host);
	free(host);
	free(mount);
	r = tu_sandbench(f.dir, env, "create", "lesser", "--image", SBF_IMAGE, "--network", "on", NULL);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "no network"), "%s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, env, "inspect", "lesser", NULL);
	cr_assert_neq(r.status, 0, "a refused create left a sandbox: %s", r.out);
	tu_run_free(&r);

	r = tu_sandbench(f.dir, env, "create", "lesser", "--image", SBF_IMAGE, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, env, "inspect", "lesser", NULL);
	cr_assert(strstr(r.out, "running") && !strstr(r.out, "memory used:"), "live figures of a lesser backend: %s", r.out);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, env, "exec", "lesser", "--", "sh", "-c", "echo kept > /root/f", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	char *log = sb_root_file(f.root, "calls.log");
	unlink(log);
	free(log);
	r = tu_sandbench(f.dir, env, "stop", "lesser", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	char *calls = tu_sh_out("cat '%s/calls.log'", f.dir);
	cr_assert(!strstr(calls, "checkpoint"), "runsc was asked to checkpoint: %s", calls);
	free(calls);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "lesser", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert(strstr(info.rec.reason, "memory and processes are not"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	r = tu_sandbench(f.dir, env, "restore", "lesser", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "lesser", NULL), 0);
	cr_assert(strstr(info.rec.reason, "cold start"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	r = tu_sandbench(f.dir, env, "exec", "lesser", "--", "cat", "/root/f", NULL);
	cr_assert_str_eq(r.out, "kept\n", "the disk was not kept: %s", r.err);
	tu_run_free(&r);
}
