/* A state root on a small file system that fills up: mid-pull, mid-commit,
 * mid-create and mid-session-log. Each test makes its own ext4 on a loop
 * device (a file under /var/tmp), mounted at a scratch folder that holds the
 * state root, and removes mount and loop device by their names in .fini, also
 * when an assertion failed.
 *
 * sandbench refuses create and fork below 256 MiB free (doctor's disk check,
 * src/sandbox/doctor.c); pull, commit and session output have no such check.
 * So pull, commit and the session log run on a file system filled to a few
 * MiB (or to nothing) before the command starts: the command itself runs into
 * ENOSPC while writing its blobs or its log, the real mid-operation path.
 * create passes the free-space check and then runs out of inodes, which is
 * ENOSPC for every file it makes: the test leaves 0, 1, 2, 4, ... inodes
 * free, so each attempt fails at a later file, until one succeeds.
 *
 * After each failure: one line on stderr, nothing new listed, no record that
 * lies (what ls and inspect say matches runsc), gc reconciles the root once
 * space is freed, and the same command then succeeds. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/fs.h"
#include "regfixture.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

#define FS_MIB 320                 /* above doctor's 256 MiB with the busybox image in it */

struct loopfs {
	char *img_dir, *mnt;
	char *dev;                        /* /dev/loopN, once attached */
	int mounted;
};

static struct loopfs lf;
static struct sbf f;

static void loopfs_make(void)
{
	lf.img_dir = tu_tempdir("full-img");
	lf.mnt = tu_tempdir("full-mnt");
	cr_assert(lf.img_dir && lf.mnt);
	cr_assert_eq(tu_sh("truncate -s %dM %s/fs.img && mkfs.ext4 -q -F -m 0 %s/fs.img", FS_MIB, lf.img_dir, lf.img_dir),
		     0, "mkfs.ext4");
	lf.dev = tu_sh_out("losetup --show -f %s/fs.img", lf.img_dir);
	cr_assert(lf.dev && strncmp(lf.dev, "/dev/loop", 9) == 0, "losetup");
	cr_assert_eq(tu_sh("mount %s %s", lf.dev, lf.mnt), 0, "mount");
	lf.mounted = 1;
}

static void loopfs_drop(void)
{
	if (lf.mounted)
		tu_sh("umount %s || umount -l %s", lf.mnt, lf.mnt);
	if (lf.dev && strncmp(lf.dev, "/dev/loop", 9) == 0)
		tu_sh("losetup -d %s", lf.dev);
	tu_remove(lf.img_dir);
	tu_remove(lf.mnt);
	free(lf.img_dir);
	free(lf.mnt);
	free(lf.dev);
	memset(&lf, 0, sizeof(lf));
}

static char *mnt_path(const char *name)
{
	return sb_path_join(lf.mnt, name);
}

/* A busybox state root on the loop file system (sbf_setup's, in another place). */
static void setup(void)
{
	struct sb_error err;

	loopfs_make();
	f.dir = mnt_path("root");
	cr_assert_eq(mkdir(f.dir, 0700), 0);
	cr_assert_eq(sb_root_open(&f.root, f.dir, &err), 0, "%s", err.msg);
	struct tu_run r = tu_sandbench(f.dir, NULL, "image", "bootstrap", "--busybox", "--name", SBF_IMAGE, "--quiet", NULL);
	cr_assert_eq(r.status, 0, "bootstrap: %s", r.err);
	tu_run_free(&r);
	sb_sandbox_process_init(NULL);
}

static void teardown(void)
{
	char *filler = mnt_path("filler"), *inodes = mnt_path("inodes");

	if (lf.mounted) {          /* rm and gc need room */
		unlink(filler);
		tu_sh("rm -rf %s", inodes);
	}
	free(filler);
	free(inodes);
	if (f.root)
		sbf_teardown(&f);
	loopfs_drop();
}

static unsigned long long avail_bytes(void)
{
	struct statvfs v;

	cr_assert_eq(statvfs(lf.mnt, &v), 0);
	return (unsigned long long)v.f_bavail * v.f_frsize;
}

/* Fills the file system up to leave bytes free (0: until a write fails). */
static void fill(unsigned long long leave)
{
	char *path = mnt_path("filler");
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	unsigned long long avail = avail_bytes();
	static char block[1 << 16];

	cr_assert_geq(fd, 0);
	/* leave 0: most in one go, the rest (what the extent tree leaves) by writes */
	unsigned long long want = leave ? leave : 1 << 20;
	if (avail > want + (1 << 20)) {
		struct stat st;
		cr_assert_eq(fstat(fd, &st), 0);
		cr_assert_eq(posix_fallocate(fd, st.st_size, (off_t)(avail - want)), 0, "fallocate");
	}
	if (!leave) {
		for (size_t n = sizeof(block); n; n /= 2)
			while (write(fd, block, n) > 0)
				;
		cr_assert_eq(errno, ENOSPC);
	}
	fsync(fd);
	close(fd);
	free(path);
}

/* Uses up every inode but leave. */
static void fill_inodes(unsigned leave)
{
	char *dir = mnt_path("inodes"), name[64];
	unsigned n = 0;

	cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
	for (;; n++) {
		snprintf(name, sizeof(name), "%s/%u", dir, n);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			cr_assert_eq(errno, ENOSPC, "%s: %s", name, strerror(errno));
			break;
		}
		close(fd);
	}
	for (unsigned i = 0; i < leave && i < n; i++) {
		snprintf(name, sizeof(name), "%s/%u", dir, n - 1 - i);
		unlink(name);
	}
	free(dir);
}

static void unfill(void)
{
	char *path = mnt_path("filler"), *dir = mnt_path("inodes");

	unlink(path);
	tu_sh("rm -rf %s", dir);
	tu_sh("sync -f %s", lf.mnt);
	free(path);
	free(dir);
}

/* The error of a failed command: one line, naming the full disk. */
static void assert_one_line_full(struct tu_run *r, const char *what)
{
	cr_assert_neq(r->status, 0, "%s succeeded on a full disk", what);
	size_t len = strlen(r->err);
	cr_assert(len > 0 && r->err[len - 1] == '\n' && !memchr(r->err, '\n', len - 1), "%s: not one line: %s", what,
		  r->err);
	cr_assert(strstr(r->err, "No space left on device"), "%s: does not say the disk is full: %s", what, r->err);
}

static struct tu_run sbr(const char *a0, const char *a1, const char *a2, const char *a3, const char *a4,
			 const char *a5)
{
	return tu_sandbench(f.dir, NULL, a0, a1, a2, a3, a4, a5, NULL);
}

/* Blobs in the store (not the partial ones a pull keeps to resume). */
static int blob_count(const char *root)
{
	char *out = tu_sh_out("ls %s/images/blobs/sha256 2>/dev/null | wc -l", root);
	int n = out ? atoi(out) : -1;

	free(out);
	return n;
}

static int image_listed(const char *root, const char *name)
{
	struct tu_run r = tu_sandbench(root, NULL, "image", "ls", "--json", NULL);
	int found = r.status == 0 && strstr(r.out, name) != NULL;

	cr_assert_eq(r.status, 0, "image ls: %s", r.err);
	tu_run_free(&r);
	return found;
}

TestSuite(full_disk, .init = setup, .fini = teardown, .timeout = 600);

Test(full_disk, commit_on_a_full_disk_leaves_no_image_and_works_once_freed)
{
	sbf_ok(sbr("create", "c1", "--image", SBF_IMAGE, NULL, NULL), "create");
	free(sbf_sh(&f, NULL, "c1", "head -c 6000000 /dev/urandom > /big && echo ok", NULL));
	int before = blob_count(f.dir);

	fill(2 << 20);   /* the 6 MB layer runs into the end of the disk */
	struct tu_run r = sbr("commit", "c1", "full:one", NULL, NULL, NULL);
	assert_one_line_full(&r, "commit");
	tu_run_free(&r);
	cr_assert(!image_listed(f.dir, "full:one"), "a half image is listed");
	/* the record tells the truth: still running, and runsc agrees */
	r = sbr("inspect", "c1", "--json", NULL, NULL, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"state\": \"running\""), "%s", r.out);
	tu_run_free(&r);

	unfill();
	sbf_ok(sbr("gc", NULL, NULL, NULL, NULL, NULL), "gc");
	cr_assert_eq(blob_count(f.dir), before, "the failed commit left blobs gc does not clean");
	sbf_assert_reconciled(&f, "after the failed commit");
	sbf_ok(sbr("commit", "c1", "full:one", NULL, NULL, NULL), "commit after freeing space");
	cr_assert(image_listed(f.dir, "full:one"));
	char *out = sbf_sh(&f, NULL, "c1", "wc -c < /big", NULL);
	cr_assert(strstr(out, "6000000"), "%s", out);
	free(out);
}

/* Every attempt is a fresh create on a disk with k inodes left; it fails at a
 * later file each time until it has all it needs. */
Test(full_disk, create_out_of_space_leaves_nothing_that_lies_and_works_once_freed)
{
	int attempts = 0, created = 0;

	for (unsigned k = 0; !created && k <= 4096; k = k ? k * 2 : 1, attempts++) {
		fill_inodes(k);
		struct tu_run r = sbr("create", "n1", "--image", SBF_IMAGE, NULL, NULL);
		created = r.status == 0;
		if (!created)
			assert_one_line_full(&r, "create");
		tu_run_free(&r);
		unfill();
		if (created)
			break;
		/* whatever the failed create left: not listed as running unless it runs */
		r = sbr("ls", "--json", NULL, NULL, NULL, NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert(!strstr(r.out, "\"running\"") || sbf_runsc_has(&f, "n1"), "k=%u: ls lies: %s", k, r.out);
		tu_run_free(&r);
		sbf_ok(sbr("gc", NULL, NULL, NULL, NULL, NULL), "gc");
		sbf_assert_reconciled(&f, "after a create that ran out of space");
		r = sbr("rm", "-f", "n1", NULL, NULL, NULL);
		tu_run_free(&r);
	}
	cr_assert(created, "create never succeeded");
	cr_assert_gt(attempts, 2, "create failed at too few points to mean anything");
	char *out = sbf_sh(&f, NULL, "n1", "echo alive", NULL);
	cr_assert(strstr(out, "alive"));
	free(out);
	cr_log_info("create: %d attempts with too few inodes failed cleanly before one succeeded", attempts);
}

static int read_has(const char *id, const char *needle)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "read", "s1", id, "--since", "0", "--format", "clean", NULL);
	int has = r.status == 0 && strstr(r.out, needle) != NULL;

	tu_run_free(&r);
	return has;
}

static int marker_seen(void *arg)
{
	return read_has(arg, "output lost: disk full");
}

static int back_seen(void *arg)
{
	return read_has(arg, "back-42");
}

/* the holder has counted at least *arg bytes as lost */
static int lost_counted(void *arg)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "ls", "s1", "--json", NULL);
	json_t *doc = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
	json_int_t lost = json_integer_value(json_object_get(json_array_get(doc, 0), "lost"));

	json_decref(doc);
	tu_run_free(&r);
	return lost >= *(json_int_t *)arg;
}

static int settled(void *arg)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "read", "s1", "w", "--since", "0", "--max-wait", "5", NULL);
	int ok = r.status == 0 && strstr(r.out, "settled");

	(void)arg;
	tu_run_free(&r);
	return ok;
}

/* The holder cannot write its log: it says so in the output and the timeline
 * once it can, the session lives on, and logging resumes. */
Test(full_disk, session_output_lost_on_a_full_disk_is_marked_and_logging_resumes)
{
	sbf_ok(sbr("create", "s1", "--image", SBF_IMAGE, NULL, NULL), "create");
	struct tu_run r = sbr("session", "start", "s1", "w", NULL, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	/* one command through first: a session whose runsc exec is still settling
	 * when the disk fills can end (see docs/security.md, "Full disk") */
	r = sbr("session", "send", "s1", "w", "--", "echo settled");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	/* a read can end at the first prompt, before the shell has taken the line */
	cr_assert(tu_wait_for(settled, NULL, 20000), "the shell did not run 'echo settled'");

	fill(0);
	/* more than the slack in the log's last block */
	r = sbr("session", "send", "s1", "w", "--", "seq 100000 120000 | sed 's/^/lost-/'");
	cr_assert_eq(r.status, 0, "send on a full disk: %s", r.err);
	tu_run_free(&r);
	/* the reader sees the loss while the disk is full (ls asks the holder),
	 * all of the command's output but what fit in the log's last block
	 * (20,001 lines of 13 bytes with the terminal's CR): space given back
	 * before that would log the rest */
	json_int_t all = 20001 * 13 - 4096;
	cr_assert(tu_wait_for(lost_counted, &all, 60000), "the holder does not say that the output was lost");
	r = sbr("session", "ls", "s1", "--json", NULL, NULL);
	cr_assert(r.status == 0 && strstr(r.out, "\"running\""), "the session died: %s %s", r.out, r.err);
	tu_run_free(&r);

	unfill();
	if (!tu_wait_for(marker_seen, "w", 20000)) {
		r = tu_sandbench(f.dir, NULL, "session", "read", "s1", "w", "--since", "0", "--format", "clean", NULL);
		cr_log_error("read: %d %s %s", r.status, r.out, r.err);
		tu_run_free(&r);
		cr_assert_fail("no mark of the lost output");
	}
	cr_assert(!read_has("w", "lost-120000"), "output written on a full disk is in the log");
	r = sbr("session", "send", "s1", "w", "--", "echo back-$((6*7))");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert(tu_wait_for(back_seen, "w", 20000), "logging did not resume");
	r = sbr("timeline", "s1", "--json", NULL, NULL, NULL);
	cr_assert(r.status == 0 && strstr(r.out, "output lost: disk full"), "timeline: %s %s", r.out, r.err);
	tu_run_free(&r);
	r = sbr("session", "ls", "s1", "--json", NULL, NULL);
	cr_assert(r.status == 0 && strstr(r.out, "\"running\""), "%s", r.out);
	tu_run_free(&r);
}

/* The session's entry in session ls --json (a reference into doc). */
static json_t *session_entry(json_t **doc, const char *id)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "ls", "s1", "--json", NULL);
	size_t i;
	json_t *e, *found = NULL;

	*doc = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
	json_array_foreach(*doc, i, e)
		if (strcmp(json_string_value(json_object_get(e, "id")) ?: "", id) == 0)
			found = e;
	tu_run_free(&r);
	return found;
}

static int session_exited(void *arg)
{
	json_t *doc;
	json_t *e = session_entry(&doc, arg);
	int exited = e && strcmp(json_string_value(json_object_get(e, "state")) ?: "", "exited") == 0;

	json_decref(doc);
	return exited;
}

/* The disk fills the moment session start returns, nothing sent through
 * first: the session lives on (start returned only once its runsc exec had
 * written its last file), and when it ends on the still full disk, its
 * holder records why (the end's status record was put on disk at start). */
Test(full_disk, session_started_as_the_disk_fills_lives_and_records_its_end)
{
	sbf_ok(sbr("create", "s1", "--image", SBF_IMAGE, NULL, NULL), "create");
	struct tu_run r = sbr("session", "start", "s1", "e", NULL, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	fill(0);

	json_t *doc;
	json_t *e = session_entry(&doc, "e");
	cr_assert(e, "session ls on a full disk lists no session 'e'");
	cr_assert_str_eq(json_string_value(json_object_get(e, "state")), "running", "reason: %s",
			 json_string_value(json_object_get(e, "reason")));
	json_decref(doc);
	cr_assert_eq(avail_bytes(), 0, "the disk is not full");

	r = sbr("session", "send", "s1", "e", "--", "exit 7");
	cr_assert_eq(r.status, 0, "send on a full disk: %s", r.err);
	tu_run_free(&r);
	cr_assert(tu_wait_for(session_exited, "e", 20000), "the session did not end");
	e = session_entry(&doc, "e");
	cr_assert(e);
	const char *reason = json_string_value(json_object_get(e, "reason"));
	cr_assert(reason && strstr(reason, "exited with status 7"), "reason on a full disk: %s", reason);
	cr_assert_eq(json_integer_value(json_object_get(e, "exit_code")), 7);
	json_decref(doc);
}

/* The pull suite: Debian's docker-registry (regfixture) serving the layered
 * test image uncompressed, into a state root on the loop file system. */
static void pull_setup(void)
{
	rf_setup();
	loopfs_make();
}

static void pull_teardown(void)
{
	char *filler = mnt_path("filler");

	unlink(filler);
	free(filler);
	rf_teardown();
	loopfs_drop();
}

TestSuite(full_disk_pull, .init = pull_setup, .fini = pull_teardown, .timeout = 300);

Test(full_disk_pull, pull_on_a_full_disk_leaves_no_half_image_and_works_once_freed)
{
	char *root = mnt_path("root");

	rf_start_registry(NULL);
	rf_push("layered-plain", "sb/layered:latest", NULL);
	char *ref = rf_ref_at(rf.port, "sb/layered");

	fill(1 << 20);   /* less than the uncompressed layers */
	struct tu_run r = tu_sandbench(root, NULL, "image", "pull", "--insecure", "--quiet", ref, NULL);
	assert_one_line_full(&r, "pull");
	tu_run_free(&r);
	cr_assert(!image_listed(root, "sb/layered"), "a half image is listed");

	/* what it fetched stays for a resume, unlisted; the image store's gc
	 * (image prune) takes it all, the root's gc leaves the store alone */
	unfill();
	r = tu_sandbench(root, NULL, "gc", NULL);
	cr_assert_eq(r.status, 0, "gc: %s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(root, NULL, "image", "prune", NULL);
	cr_assert_eq(r.status, 0, "image prune: %s", r.err);
	tu_run_free(&r);
	cr_assert_eq(blob_count(root), 0, "the failed pull left blobs image prune does not clean");
	char *partial = tu_sh_out("ls %s/images/blobs/partial 2>/dev/null | wc -l", root);
	cr_assert(partial && atoi(partial) == 0, "partial blobs left after prune: %s", partial);
	free(partial);
	r = tu_sandbench(root, NULL, "image", "pull", "--insecure", "--quiet", ref, NULL);
	cr_assert_eq(r.status, 0, "pull after freeing space: %s", r.err);
	tu_run_free(&r);
	cr_assert(image_listed(root, "sb/layered"));
	partial = tu_sh_out("ls %s/images/blobs/partial 2>/dev/null | wc -l", root);
	cr_assert(partial && atoi(partial) == 0, "partial blobs left after the pull: %s", partial);
	free(partial);
	free(ref);
	free(root);
}
