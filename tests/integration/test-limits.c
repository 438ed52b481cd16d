/* Resource limits with real runsc: a process that asks for more memory than
 * its sandbox has fails inside (RLIMIT_AS, docs/security.md "Memory") while
 * the sandbox, its other processes and its sessions carry on (and services
 * carry the limit too); what runsc says when a call fails stays in the log. A
 * capped disk (--disk) fills inside with ENOSPC and costs the host no more
 * than its size, comes back after a host restart (or while an earlier
 * mount of it lives on elsewhere), and goes with rm. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/fs.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "limits");
}

/* a process a test keeps a mount namespace with (ended here even when the
 * test failed before it ended it) */
static pid_t holder;

static void teardown(void)
{
	if (holder > 0)
		kill(holder, SIGKILL);
	sbf_teardown(&f);
}

TestSuite(limits, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* What session id of sandbox name printed after input was sent, until its
 * prompt was back (up to 20 s; malloc'd). */
static char *session_say(const char *name, const char *id, const char *input)
{
	struct tu_run r = SB("session", "send", name, id, "--", input);
	char off[32];

	cr_assert_eq(r.status, 0, "session send: %s", r.err);
	snprintf(off, sizeof(off), "%lld", atoll(r.out));
	tu_run_free(&r);
	r = SB("session", "read", name, id, "--since", off, "--max-wait", "20", "--format", "clean");
	cr_assert_eq(r.status, 0, "session read: %s", r.err);
	char *out = strdup(r.out);
	tu_run_free(&r);
	return out;
}

static void assert_running(const char *name, const char *when)
{
	struct tu_run r = SB("inspect", name);

	cr_assert(r.status == 0 && strstr(r.out, "running"), "%s: %s%s", when, r.out, r.err);
	tu_run_free(&r);
}

Test(limits, a_greedy_process_fails_inside_and_the_sandbox_lives_on)
{
	sbf_bash_image(&f);
	sbf_ok(SB("create", "mem", "--image", SBF_BASH_IMAGE, "--permanent", "--memory", "256m"), "create");
	sbf_ok(SB("session", "start", "mem", "s1"), "session start");
	char *said = session_say("mem", "s1", "echo up-$((20+1))");
	cr_assert(strstr(said, "up-21"), "the session runs: %s", said);
	free(said);
	/* every process carries the address-space limit: twice the memory */
	struct tu_run r = SB("exec", "mem", "--", "sh", "-c", "ulimit -v");
	cr_assert(r.status == 0 && strstr(r.out, "524288"), "RLIMIT_AS of an exec: %s%s", r.out, r.err);
	tu_run_free(&r);
	/* bash starts under it, and one that asks for 1 GiB is refused inside */
	r = SB("exec", "mem", "--", "bash", "-c", "echo bash-ok");
	cr_assert(r.status == 0 && strstr(r.out, "bash-ok"), "bash under the limit: %s%s", r.out, r.err);
	tu_run_free(&r);
	r = SB("exec", "mem", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1G", "count=1");
	cr_assert(r.status != 0 && r.status != 125, "1 GiB in a 256 MiB sandbox: status %d, %s", r.status, r.err);
	cr_assert(!strstr(r.err, "urpc") && !strstr(r.err, "runsc"), "raw runsc text reached the user: %s", r.err);
	tu_run_free(&r);
	assert_running("mem", "after the greedy exec");
	r = SB("exec", "mem", "--", "echo", "still-here");
	cr_assert(r.status == 0 && strstr(r.out, "still-here"), "another exec: %s%s", r.out, r.err);
	tu_run_free(&r);
	/* the same from the session: its shell survives the failed allocation */
	said = session_say("mem", "s1", "dd if=/dev/zero of=/dev/null bs=1G count=1; echo rc-$?-end");
	cr_assert(strstr(said, "rc-1-end"), "dd in the session: %s", said);
	free(said);
	said = session_say("mem", "s1", "echo alive-$((40+2))");
	cr_assert(strstr(said, "alive-42"), "the session survived: %s", said);
	free(said);
	assert_running("mem", "after the session's greedy command");
	sbf_ok(SB("session", "kill", "mem", "s1"), "session kill");
}

static int file_there(void *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

Test(limits, the_default_memory_gives_twice_its_address_space)
{
	/* the service's processes too */
	sbf_ok(SB("create", "free", "--image", SBF_IMAGE, "--permanent", "--service",
		  "ulimit -v > /workspace/svc-as.tmp && mv /workspace/svc-as.tmp /workspace/svc-as; exec sleep 100000"),
	       "create");
	char *svc = sb_strdupf("%s/sandboxes/free/workspace/svc-as", f.dir), *text = NULL;
	cr_assert(tu_wait_for(file_there, svc, 30000), "the service never wrote its limit");
	cr_assert_eq(sb_fs_read_file(&text, NULL, svc, 64, NULL), 0);
	cr_assert(strstr(text, "2097152"), "RLIMIT_AS of the service: %s", text);
	free(text);
	free(svc);
	struct tu_run r = SB("exec", "free", "--", "sh", "-c", "ulimit -v");
	/* the default --memory is 1g */
	cr_assert(r.status == 0 && strstr(r.out, "2097152"), "RLIMIT_AS without --memory: %s%s", r.out, r.err);
	tu_run_free(&r);
}

/* The host's view of a capped sandbox's disk: the image's length and the
 * bytes it holds, and what the rest of the sandbox's folder holds. */
struct disk_view {
	long long length, held, rest;
};

static struct disk_view disk_view(const char *name)
{
	struct disk_view v = { 0 };
	char *img = sb_strdupf("%s/sandboxes/%s/disk.img", f.dir, name);
	struct stat st;

	cr_assert(img && lstat(img, &st) == 0 && S_ISREG(st.st_mode), "no disk image for '%s'", name);
	v.length = (long long)st.st_size;
	v.held = (long long)st.st_blocks * 512;
	char *rest = tu_sh_out("du -sxk --exclude=disk.img %s/sandboxes/%s | cut -f1", f.dir, name);
	v.rest = atoll(rest) * 1024;
	free(rest);
	free(img);
	return v;
}

Test(limits, a_full_disk_fails_inside_and_costs_nothing_outside)
{
	sbf_ok(SB("create", "cap", "--image", SBF_IMAGE, "--permanent", "--disk", "32m"), "create");
	json_t *doc = sbf_run_json(SB("inspect", "cap", "--json"), "inspect");
	json_t *usage = json_object_get(doc, "disk_usage");
	long long size = json_integer_value(json_object_get(usage, "size"));
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "resources"), "disk")), 32LL << 20);
	cr_assert(size > (16LL << 20) && size <= (32LL << 20), "usable size %lld", size);
	cr_assert(strstr(json_string_value(json_object_get(doc, "workspace")), "/disk/workspace"));
	json_decref(doc);
	/* the root file system's changes and the workspace share the cap */
	char *out = sbf_sh(&f, NULL, "cap",
			   "dd if=/dev/zero of=/fill bs=1M count=24 2>/dev/null; echo root-$?; "
			   "dd if=/dev/zero of=/workspace/fill bs=1M count=24 2>&1; echo ws-$?", NULL);
	cr_assert(strstr(out, "root-0") && strstr(out, "No space left on device") && strstr(out, "ws-1"), "%s", out);
	free(out);
	struct disk_view v = disk_view("cap");
	cr_assert_eq(v.length, 32LL << 20, "the image grew");
	cr_assert(v.held <= v.length && v.rest < (2LL << 20), "held %lld, rest of the folder %lld", v.held, v.rest);
	struct tu_run r = SB("inspect", "cap");
	cr_assert(r.status == 0 && strstr(r.out, "disk limit:") && strstr(r.out, "32.0 MiB ("), "%s", r.out);
	tu_run_free(&r);
	/* the sandbox lives on, space comes back when freed, and the cap holds
	 * across stop and restore */
	out = sbf_sh(&f, NULL, "cap", "rm /fill /workspace/fill && echo kept > /workspace/kept && echo ok", NULL);
	cr_assert(strstr(out, "ok"), "%s", out);
	free(out);
	sbf_ok(SB("stop", "cap"), "stop");
	sbf_ok(SB("restore", "cap"), "restore");
	out = sbf_sh(&f, NULL, "cap", "cat /workspace/kept; dd if=/dev/zero of=/workspace/big bs=1M count=40 2>&1; echo ws-$?",
		     NULL);
	cr_assert(strstr(out, "kept") && strstr(out, "No space left on device") && strstr(out, "ws-1"), "%s", out);
	free(out);
	/* removal takes the mount and the loop device with it */
	char *dir = sb_strdupf("%s/sandboxes/cap", f.dir);
	sbf_ok(SB("rm", "-f", "cap"), "rm");
	cr_assert(!sbf_mounted_below(dir), "a mount is left below %s", dir);
	char *loops = tu_sh_out("cat /sys/block/loop*/loop/backing_file 2>/dev/null | grep -F '%s/'; true", dir);
	cr_assert_str_eq(loops, "", "loop devices left: %s", loops);
	free(loops);
	free(dir);
}

Test(limits, a_capped_disk_comes_back_after_a_host_restart_and_goes_with_its_fork)
{
	sbf_ok(SB("create", "cap2", "--image", SBF_IMAGE, "--permanent", "--disk", "24m"), "create");
	free(sbf_sh(&f, NULL, "cap2", "echo survives > /workspace/note", NULL));
	sbf_ok(SB("stop", "cap2"), "stop");
	/* what a host restart leaves: the image without its mount */
	char *disk = sb_strdupf("%s/sandboxes/cap2/disk", f.dir);
	cr_assert_eq(tu_sh("umount %s", disk), 0);
	cr_assert(!sbf_mounted_below(disk));
	sbf_ok(SB("restore", "cap2"), "restore");
	char *out = sbf_sh(&f, NULL, "cap2", "cat /workspace/note", NULL);
	cr_assert(strstr(out, "survives"), "%s", out);
	free(out);
	/* a fork gets a disk of the same size, with the source's files */
	sbf_ok(SB("fork", "cap2", "cap3"), "fork");
	json_t *doc = sbf_run_json(SB("inspect", "cap3", "--json"), "inspect fork");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "resources"), "disk")), 24LL << 20);
	json_decref(doc);
	out = sbf_sh(&f, NULL, "cap3", "cat /workspace/note; dd if=/dev/zero of=/workspace/big bs=1M count=30 2>&1; true", NULL);
	cr_assert(strstr(out, "survives") && strstr(out, "No space left on device"), "%s", out);
	free(out);
	cr_assert_eq(disk_view("cap3").length, 24LL << 20);
	free(disk);
}

/* How many loop devices are on a sandbox's disk image. */
static int loops_on(const char *name)
{
	char *n = tu_sh_out("grep -lx '%s/sandboxes/%s/disk.img' /sys/block/loop*/loop/backing_file 2>/dev/null | wc -l",
			    f.dir, name);
	int count = atoi(n);

	free(n);
	return count;
}

static int file_exists(void *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* gone, or reaped now: the holder's shell ended, and the holder may have
 * come to this process (a subreaper above it) as a zombie */
static int process_gone(void *pid)
{
	waitpid(*(pid_t *)pid, NULL, WNOHANG);
	return kill(*(pid_t *)pid, 0) < 0;
}

/* A disk whose earlier mount lives on in another mount namespace (a process
 * of the sandbox that has not ended yet, or a lazy unmount) is mounted again
 * through the same loop device: one file system, where a second device would
 * mount a second one on the same blocks, blind to what the first had not
 * written yet (a restore once found the upper missing so). */
Test(limits, a_disk_mounted_elsewhere_is_mounted_again_not_twice)
{
	sbf_ok(SB("create", "cap5", "--image", SBF_IMAGE, "--permanent", "--disk", "24m"), "create");
	free(sbf_sh(&f, NULL, "cap5", "echo kept > /workspace/note", NULL));
	sbf_ok(SB("stop", "cap5"), "stop");
	char *pidfile = sb_strdupf("%s/holder.pid", f.dir), *disk = sb_strdupf("%s/sandboxes/cap5/disk", f.dir);
	/* a mount namespace with its own copy of the disk's mount */
	cr_assert_eq(tu_sh("unshare -m sh -c 'echo $$ > %s; exec sleep 600' >/dev/null 2>&1 &", pidfile), 0);
	cr_assert(tu_wait_for(file_exists, pidfile, 10000), "the holder never started");
	char *text = tu_sh_out("cat %s", pidfile);
	holder = (pid_t)atoi(text);
	free(text);
	cr_assert_gt(holder, 1);
	cr_assert_eq(tu_sh("umount %s", disk), 0);
	cr_assert_eq(loops_on("cap5"), 1, "the holder's copy keeps the device");
	sbf_ok(SB("restore", "cap5"), "restore");
	cr_assert_eq(loops_on("cap5"), 1, "restore mounted the disk through a second device");
	char *out = sbf_sh(&f, NULL, "cap5", "cat /workspace/note", NULL);
	cr_assert(strstr(out, "kept"), "%s", out);
	free(out);
	cr_assert_eq(kill(holder, SIGKILL), 0);
	cr_assert(tu_wait_for(process_gone, &holder, 10000), "the holder did not end");
	holder = 0;
	free(pidfile);
	free(disk);
}

Test(limits, bad_disk_sizes_are_refused_and_make_nothing)
{
	static const char *const bad[] = { "0", "-5m", "lots", "1m", "15m" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run r = SB("create", "nope", "--image", SBF_IMAGE, "--disk", bad[i]);
		cr_assert(r.status != 0 && (strstr(r.err, "invalid disk size") || strstr(r.err, "too small")),
			  "--disk %s: %d %s", bad[i], r.status, r.err);
		tu_run_free(&r);
		char *dir = sb_strdupf("%s/sandboxes/nope", f.dir);
		struct stat st;
		cr_assert(lstat(dir, &st) < 0, "--disk %s left a folder", bad[i]);
		free(dir);
	}
}
