/* Host mounts re-verified at every boot, end to end through the sandbench
 * binary (root, real runsc): sandbox A has a parent folder rw and swaps the
 * folder sandbox B mounts while B is stopped; B's restore (warm or cold)
 * refuses and says what changed, until the folder is put back. What is bound
 * is the verified folder (staged under ROOT/sandboxes/<name>/mounts, gone
 * after stop and rm). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *top;   /* the host folders given to the sandboxes: top/P, top/P/child */

static void setup(void)
{
	sbf_setup(&f, "mounts");
	top = sb_strdupf("%s-host", f.dir);
	cr_assert_eq(tu_sh("mkdir -p %s/P/child && echo original > %s/P/child/f", top, top), 0);
}

static void teardown(void)
{
	sbf_teardown(&f);
	tu_remove(top);
	free(top);
}

TestSuite(mounts, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* "top/<rest>": a --mount argument below the host folders */
static char *host_spec(const char *rest)
{
	char *s = sb_strdupf("%s/%s", top, rest);

	cr_assert_not_null(s);
	return s;
}

/* ROOT/sandboxes/<name>/<rel> */
static char *box_path(const char *name, const char *rel)
{
	char *s = sb_strdupf("%s/sandboxes/%s/%s", f.dir, name, rel);

	cr_assert_not_null(s);
	return s;
}

/* Restore refuses with exit status 7 (unsafe; 3, not found, when the folder
 * is gone): the sandbox stays stopped with its checkpoint (if it had one),
 * the reason names the folder and says what changed, nothing stays staged. */
static void assert_refused(const char *name, const char *what, int checkpoint)
{
	struct tu_run r = SB("restore", name);
	struct sb_sandbox_info info;
	int want = strstr(what, "no longer") ? 3 : 7;

	cr_assert_eq(r.status, want, "restore must refuse (%d): %s", r.status, r.err);
	cr_assert(strstr(r.err, "mount changed") && strstr(r.err, "/P/child"), "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, name, NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert_eq(strncmp(info.rec.reason, "mount changed: ", 15), 0, "%s", info.rec.reason);
	cr_assert(strstr(info.rec.reason, "/P/child") && strstr(info.rec.reason, what), "%s", info.rec.reason);
	cr_assert_eq(info.has_checkpoint, checkpoint, "the checkpoint is kept");
	sb_sandbox_info_clear(&info);
	char *mounts = box_path(name, "mounts");
	cr_assert_not(sbf_mounted_below(mounts), "nothing of %s stays mounted", mounts);
	free(mounts);
	r = SB("exec", name, "--", "cat", "/c/passwd");
	cr_assert_neq(r.status, 0, "a refused sandbox runs nothing");
	cr_assert_null(strstr(r.out, "root:"), "%s", r.out);
	tu_run_free(&r);
}

/* The mount options of the mount at path in /proc/self/mountinfo ("" if none). */
static char *mount_options(const char *path)
{
	char *out = tu_sh_out("awk -v p='%s' '$5 == p { print $6 }' /proc/self/mountinfo", path);

	return out ? out : strdup("");
}

Test(mounts, swapped_folder_refuses_restore_until_it_is_back)
{
	char *parent = host_spec("P:/p:rw"), *child = host_spec("P/child:/c:rw");
	char *marker = sb_strdupf("/etc/sandbench-mounts-test-%ld", (long)getpid());
	struct sb_sandbox_info info;
	struct stat st;
	char *out;
	int status;

	sbf_ok(SB("create", "a", "--image", SBF_IMAGE, "--mount", parent), "create a");
	sbf_ok(SB("create", "b", "--image", SBF_IMAGE, "--mount", child), "create b");
	out = sbf_sh(&f, NULL, "b", "cat /c/f", &status);
	cr_assert_str_eq(out, "original\n", "%d", status);
	free(out);
	char *staged = box_path("b", "mounts/0");
	cr_assert(sbf_mounted_below(staged), "b's folder is bound at %s", staged);
	sbf_ok(SB("stop", "b"), "stop b");
	cr_assert_not(sbf_mounted_below(staged), "stop unmounts the staged folder");

	/* a, with the parent rw, points b's folder at the host's /etc */
	free(sbf_sh(&f, NULL, "a", "mv /p/child /p/child.old && ln -s /etc /p/child", NULL));
	assert_refused("b", "symbolic link", 1);
	char *cmd = sb_strdupf("touch /c/%s", strrchr(marker, '/') + 1);
	out = sbf_sh(&f, NULL, "b", cmd, &status);
	cr_assert_neq(status, 0);
	free(out);
	free(cmd);
	cr_assert_neq(stat(marker, &st), 0, "the host's /etc is untouched");

	/* another real folder in its place: a different inode */
	free(sbf_sh(&f, NULL, "a", "rm /p/child && mkdir /p/child && echo impostor > /p/child/f", NULL));
	assert_refused("b", "another folder", 1);

	/* the original back: restore works and shows the original content */
	free(sbf_sh(&f, NULL, "a", "rm -r /p/child && mv /p/child.old /p/child", NULL));
	sbf_ok(SB("restore", "b"), "restore b with its folder back");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "b", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert(strstr(info.rec.reason, "restored from checkpoint"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	out = sbf_sh(&f, NULL, "b", "cat /c/f && echo from-b > /c/new", &status);
	cr_assert_str_eq(out, "original\n", "%d", status);
	free(out);
	cr_assert_eq(tu_sh("grep -q from-b %s/P/child/new", top), 0, "rw writes reach the host folder");

	sbf_ok(SB("rm", "a", "b"), "rm");
	char *dir_a = box_path("a", ""), *dir_b = box_path("b", "");
	cr_assert_not(sbf_mounted_below(dir_a), "nothing of a stays mounted");
	cr_assert_not(sbf_mounted_below(dir_b), "nothing of b stays mounted");
	cr_assert_eq(tu_sh("test -f %s/P/child/f && test -f %s/P/child/new", top, top), 0, "rm keeps host folders");
	free(dir_a);
	free(dir_b);
	free(staged);
	free(marker);
	free(parent);
	free(child);
}

Test(mounts, cold_start_is_checked_too)
{
	char *child = host_spec("P/child:/c");
	struct sb_sandbox_info info;
	char *out;
	int status;

	sbf_ok(SB("create", "b", "--image", SBF_IMAGE, "--permanent", "--mount", child), "create b");
	/* read-only: runsc refuses writes, and so does the host's staged bind */
	char *staged = box_path("b", "mounts/0");
	char *opts = mount_options(staged);
	cr_assert_eq(strncmp(opts, "ro", 2), 0, "staged read-only: %s", opts);
	free(opts);
	out = sbf_sh(&f, NULL, "b", "touch /c/x", &status);
	cr_assert_neq(status, 0, "%s", out);
	free(out);
	sbf_ok(SB("stop", "b"), "stop b");
	char *ckpt = box_path("b", "checkpoint");
	cr_assert_eq(sb_fs_remove_tree(ckpt, NULL), 0);
	free(ckpt);

	cr_assert_eq(tu_sh("mv %s/P/child %s/P/child.old && ln -s /etc %s/P/child", top, top, top), 0);
	assert_refused("b", "symbolic link", 0);
	cr_assert_eq(tu_sh("rm %s/P/child && mkdir %s/P/child", top, top), 0);
	assert_refused("b", "another folder", 0);
	/* gone altogether */
	cr_assert_eq(tu_sh("rmdir %s/P/child", top), 0);
	assert_refused("b", "no longer exists", 0);

	cr_assert_eq(tu_sh("mv %s/P/child.old %s/P/child", top, top), 0);
	sbf_ok(SB("restore", "b"), "restore b with its folder back");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "b", NULL), 0);
	cr_assert(strstr(info.rec.reason, "cold start"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	out = sbf_sh(&f, NULL, "b", "cat /c/f", &status);
	cr_assert_str_eq(out, "original\n", "%d", status);
	free(out);
	sbf_ok(SB("rm", "b"), "rm b");
	cr_assert_not(sbf_mounted_below(staged));
	free(staged);
	free(child);
}

/* A record without identities (migrated from schema 1): the path rules are
 * checked at the next boot and the folder it finds is recorded then. */
static void forget_identity(const char *name)
{
	struct sb_record rec;

	cr_assert_eq(sb_record_load(&rec, f.root, name, NULL), 0);
	rec.mounts[0].dev = rec.mounts[0].ino = 0;
	cr_assert_eq(sb_record_save(f.root, &rec, NULL), 0);
	sb_record_clear(&rec);
}

Test(mounts, unrecorded_identity_is_taken_at_the_next_boot)
{
	char *child = host_spec("P/child:/c");
	struct sb_sandbox_info info;
	struct stat st;

	sbf_ok(SB("create", "b", "--image", SBF_IMAGE, "--mount", child), "create b");
	sbf_ok(SB("stop", "b"), "stop b");
	forget_identity("b");
	cr_assert_eq(tu_sh("mv %s/P/child %s/P/child.old && ln -s /etc %s/P/child", top, top, top), 0);
	assert_refused("b", "symbolic link", 1);
	cr_assert_eq(tu_sh("rm %s/P/child && mv %s/P/child.old %s/P/child", top, top, top), 0);

	sbf_ok(SB("restore", "b"), "restore b");
	char *path = sb_strdupf("%s/P/child", top);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "b", NULL), 0);
	cr_assert_eq(info.rec.mounts[0].dev, (unsigned long long)st.st_dev, "recorded at that boot");
	cr_assert_eq(info.rec.mounts[0].ino, (unsigned long long)st.st_ino);
	sb_sandbox_info_clear(&info);
	free(path);
	free(child);
}

Test(mounts, deny_list_is_checked_at_every_boot)
{
	char *child = host_spec("P/child:/c");

	sbf_ok(SB("create", "b", "--image", SBF_IMAGE, "--mount", child), "create b");
	sbf_ok(SB("stop", "b"), "stop b");
	/* the folder now holds SSH keys: the policy refuses it, as create would */
	cr_assert_eq(tu_sh("mkdir %s/P/child/.ssh", top), 0);
	assert_refused("b", "SSH keys", 1);
	cr_assert_eq(tu_sh("rmdir %s/P/child/.ssh", top), 0);
	sbf_ok(SB("restore", "b"), "restore b");
	free(child);
}
