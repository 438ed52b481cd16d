/* The fault matrix: every fault point of a command (each program it runs,
 * each state write, each removal: src/base/hooks.h) struck in turn, by a
 * SIGKILL of the command there and by a failure there (ENOSPC for a write,
 * EIO for a program), through the test build's CLI (tests/hooks.c). After
 * each: a failure is one clear line, `sandbench gc` (the installed CLI)
 * brings the root back to a state where ls, inspect and a new create work,
 * with no leaked runsc container, mount, cgroup, process or temp file, and
 * the permanent sandbox's workspace is never lost. Each suite prints its row
 * of the matrix (points, and the strikes survived of each kind). Commands:
 * create (plain and with a capped disk), exec, session start, stop,
 * restore, rm, gc, fork, commit, image import, build and pull. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "regfixture.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *image_tar;   /* a rootfs tar to import: the busybox image's tree */
static char *build_ctx;   /* a build's context: a Dockerfile and a file it copies */
static char *pull_ref;    /* the busybox image in the suite's docker-registry */

static void setup(void)
{
	sbf_setup(&f, "faults");
}

static void teardown(void)
{
	if (image_tar)
		unlink(image_tar);
	free(image_tar);
	image_tar = NULL;
	if (build_ctx)
		tu_remove(build_ctx);
	free(build_ctx);
	build_ctx = NULL;
	free(pull_ref);
	pull_ref = NULL;
	sbf_teardown(&f);
}

static void pull_setup(void)
{
	setup();
	rf_setup();
}

static void pull_teardown(void)
{
	rf_teardown();
	teardown();
}

static void make_image_tar(void)
{
	image_tar = sb_strdupf("%s.rootfs.tar", f.dir);
	cr_assert_not_null(image_tar);
	cr_assert_eq(tu_sh("set -e; src=$(%s/sandbench --root '%s' image inspect %s --json | "
			   "sed -n 's/.*\"rootfs\": \"\\(.*\\)\".*/\\1/p'); tar -C \"$src\" -cf '%s' .",
			   getenv("SB_TOP_BUILDDIR") ? getenv("SB_TOP_BUILDDIR") : ".", f.dir, SBF_IMAGE, image_tar),
		     0, "cannot make the image tar");
}

static void make_build_ctx(void)
{
	build_ctx = sb_strdupf("%s.ctx", f.dir);
	cr_assert_not_null(build_ctx);
	cr_assert_eq(tu_sh("set -e; mkdir -p '%s'; echo copied > '%s/f'; "
			   "printf 'FROM %s\\nRUN echo built > /built\\nCOPY f /f\\n' > '%s/Dockerfile'",
			   build_ctx, build_ctx, SBF_IMAGE, build_ctx),
		     0, "cannot make the build's context");
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 1800);
TestSuite(faults_pull, .init = pull_setup, .fini = pull_teardown, .timeout = 1800);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

enum pre { PRE_NONE, PRE_RUNNING, PRE_STOPPED };

struct scenario {
	const char *name;
	enum pre pre;            /* the state of the permanent sandbox "m" first */
	const char *argv[8];     /* the command struck */
	int removes;             /* the command removes "m" (its workspace goes) */
	const char *made;        /* an image the command makes: removed after each strike */
	int progress;            /* its stderr has progress lines before the error (build) */
};

/* The sandbox "m" in the state asked for, with a file in its workspace. */
static void prepare(enum pre pre)
{
	struct sb_sandbox_info info;
	int have = sb_sandbox_inspect(&info, f.root, "m", NULL) == 0;
	enum sb_sandbox_state st = have ? info.rec.state : SB_STATE_CREATED;

	if (have)
		sb_sandbox_info_clear(&info);
	if (pre == PRE_RUNNING && have && st == SB_STATE_RUNNING)
		return;
	if (pre == PRE_STOPPED && have && st == SB_STATE_STOPPED)
		return;
	if (have)
		sbf_ok(SB("rm", "-f", "m"), "rm m");
	if (pre == PRE_NONE)
		return;
	sbf_ok(SB("create", "m", "--image", SBF_IMAGE, "--permanent"), "create m");
	free(sbf_sh(&f, NULL, "m", "echo kept > /workspace/keep", NULL));
	if (pre == PRE_STOPPED)
		sbf_ok(SB("stop", "m"), "stop m");
}

/* Lines of a fault log: the points the command reached. */
static long points_reached(const char *log)
{
	char *n = tu_sh_out("wc -l < '%s' 2>/dev/null || echo 0", log);
	long v = atol(n);

	free(n);
	return v;
}

/* "@tar": the image tar; "@ctx": the build's context; "@ref": the image in
 * the registry; any other word as it is. */
static const char *subst(const char *word)
{
	if (word && !strcmp(word, "@tar"))
		return image_tar;
	if (word && !strcmp(word, "@ctx"))
		return build_ctx;
	if (word && !strcmp(word, "@ref"))
		return pull_ref;
	return word;
}

/* The command with SANDBENCH_FAULT=at:mode (at 0: none), its fault log
 * counting the points it reached. */
static struct tu_run strike(const struct scenario *s, long at, const char *mode, long *reached)
{
	static unsigned serial;
	char fault[64], logenv[512], fresh[32], *log = sb_strdupf("%s/fault.log", f.dir);
	const char *env[] = { fault, logenv, NULL }, *a[8];

	/* "@" in the command stands for a name never used before (a session, a
	 * fork), the other "@" words for what the suite made (subst) */
	snprintf(fresh, sizeof(fresh), "s%u", ++serial);
	for (int i = 0; i < 8; i++)
		a[i] = s->argv[i] && !strcmp(s->argv[i], "@") ? fresh : subst(s->argv[i]);

	cr_assert_not_null(log);
	unlink(log);
	snprintf(fault, sizeof(fault), "SANDBENCH_FAULT=%ld:%s", at, mode);
	snprintf(logenv, sizeof(logenv), "SANDBENCH_FAULT_LOG=%s", log);
	struct tu_run r = tu_sandbench(f.dir, env, a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
	*reached = points_reached(log);
	unlink(log);
	free(log);
	return r;
}

/* After gc: ls and inspect answer, m kept its workspace (unless removed), a
 * new sandbox works, and nothing leaked. */
static void assert_recovered(const struct scenario *s, const char *when)
{
	struct tu_run r = SB("gc");
	cr_assert_eq(r.status, 0, "%s: gc: %s", when, r.err);
	tu_run_free(&r);
	r = SB("ls", "--json");
	cr_assert_eq(r.status, 0, "%s: ls: %s", when, r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "%s: ls --json: %s", when, r.out);
	json_decref(doc);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	int have = sb_sandbox_inspect(&info, f.root, "m", NULL) == 0;
	if (have) {
		sb_sandbox_info_clear(&info);
		sbf_ok(SB("inspect", "m", "--json"), when);
	}
	if (s->pre != PRE_NONE && !s->removes) {
		cr_assert(have, "%s: the permanent sandbox is gone", when);
		char *keep = tu_sh_out("cat %s/sandboxes/m/workspace/keep", f.dir);
		cr_assert_str_eq(keep, "kept", "%s: the workspace lost its file (%s)", when, keep);
		free(keep);
	}
	sbf_assert_reconciled(&f, when);
	sbf_ok(SB("create", "probe", "--image", SBF_IMAGE, "--temporary"), when);
	free(sbf_sh(&f, NULL, "probe", "true", NULL));
	sbf_ok(SB("rm", "-f", "probe"), when);
	/* what the strike made besides m (forks, images) goes, so that the next
	 * starts alike */
	if (s->made) {
		const char *made = subst(s->made);
		/* no half image: if it is listed, a sandbox starts from it */
		r = SB("image", "inspect", made);
		if (r.status == 0) {
			sbf_ok(SB("create", "probe", "--image", made, "--temporary"), when);
			free(sbf_sh(&f, NULL, "probe", "true", NULL));
			sbf_ok(SB("rm", "-f", "probe"), when);
		}
		tu_run_free(&r);
		r = SB("image", "rm", made);
		tu_run_free(&r);
		sbf_ok(SB("image", "prune"), when);
	}
	struct sb_sandbox_info *list;
	size_t n;
	cr_assert_eq(sb_sandbox_list(&list, &n, f.root, NULL), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i].rec.name, "m"))
			sbf_ok(SB("rm", "-f", list[i].rec.name), when);
	sb_sandbox_list_free(list, n);
}

/* Exactly one line, from sandbench, and not a raw diagnostic of runsc
 * (after the progress lines of a command that prints them: "Step N/M"). */
static void assert_one_line(const struct tu_run *r, int progress, const char *when)
{
	const char *line = r->err;

	while (progress && !strncmp(line, "Step ", 5) && strchr(line, '\n'))
		line = strchr(line, '\n') + 1;
	const char *nl = strchr(line, '\n');
	cr_assert(!strncmp(line, "sandbench: ", 11) && nl && !nl[1], "%s: not one clear line:\n%s", when, r->err);
}

static void run_matrix(const struct scenario *s)
{
	static const char *const modes[] = { "kill", "fail" };
	long points, reached, survived[2] = { 0, 0 }, missed[2] = { 0, 0 };

	prepare(s->pre);
	struct tu_run r = strike(s, 0, "kill", &points);
	cr_assert_eq(r.status, 0, "%s without a fault: %s", s->name, r.err);
	tu_run_free(&r);
	assert_recovered(s, s->name);
	cr_assert_gt(points, 0, "%s reaches no fault point", s->name);
	for (int m = 0; m < 2; m++) {
		for (long at = 1; at <= points; at++) {
			char when[128];
			snprintf(when, sizeof(when), "%s, %s at point %ld of %ld", s->name, modes[m], at, points);
			prepare(s->pre);
			r = strike(s, at, modes[m], &reached);
			if (reached < at) {
				/* this time the command took a shorter path (gc with less
				 * to do): a strike that missed is no strike */
				cr_assert_eq(r.status, 0, "%s: %s", when, r.err);
				tu_run_free(&r);
				missed[m]++;
				continue;
			}
			if (m == 0)
				cr_assert_eq(r.status, 128 + 9, "%s: not killed (status %d): %s", when, r.status, r.err);
			else if (r.status != 0)
				assert_one_line(&r, s->progress, when);
			tu_run_free(&r);
			assert_recovered(s, when);
			survived[m]++;
		}
	}
	fprintf(stderr, "fault matrix: %-14s %3ld points  kill %ld/%ld  fail %ld/%ld  (not reached: %ld, %ld)\n",
		s->name, points, survived[0], points - missed[0], survived[1], points - missed[1], missed[0], missed[1]);
}

static const struct scenario scenarios[] = {
	{ "create", PRE_NONE, { "create", "m", "--image", SBF_IMAGE, "--permanent" }, 0 },
	{ "create --disk", PRE_NONE, { "create", "m", "--image", SBF_IMAGE, "--permanent", "--disk", "32m" }, 0 },
	{ "exec", PRE_RUNNING, { "exec", "m", "--", "true" }, 0 },
	{ "session start", PRE_RUNNING, { "session", "start", "m", "@" }, 0 },
	{ "stop", PRE_RUNNING, { "stop", "m" }, 0 },
	{ "restore", PRE_STOPPED, { "restore", "m" }, 0 },
	{ "rm", PRE_RUNNING, { "rm", "-f", "m" }, 1 },
	{ "gc", PRE_RUNNING, { "gc" }, 0 },
	{ "fork", PRE_RUNNING, { "fork", "m", "@" }, 0 },
	{ "commit", PRE_STOPPED, { "commit", "m", "localhost/fault:commit" }, 0, "localhost/fault:commit" },
	{ "image import", PRE_NONE, { "image", "import", "@tar", "--name", "localhost/fault:import" }, 0,
	  "localhost/fault:import" },
	/* every step again (no cache): a RUN in a sandbox of its own, a COPY, the commit */
	{ "image build", PRE_NONE, { "image", "build", "-t", "localhost/fault:build", "--no-cache", "@ctx" }, 0,
	  "localhost/fault:build", 1 },
	{ "image pull", PRE_NONE, { "image", "pull", "--insecure", "--quiet", "@ref" }, 0, "@ref" },
};

Test(faults, create) { run_matrix(&scenarios[0]); }
Test(faults, create_disk) { run_matrix(&scenarios[1]); }
Test(faults, exec) { run_matrix(&scenarios[2]); }
Test(faults, session_start) { run_matrix(&scenarios[3]); }
Test(faults, stop) { run_matrix(&scenarios[4]); }
Test(faults, restore) { run_matrix(&scenarios[5]); }
Test(faults, rm) { run_matrix(&scenarios[6]); }
Test(faults, gc) { run_matrix(&scenarios[7]); }
Test(faults, fork) { run_matrix(&scenarios[8]); }
Test(faults, commit) { run_matrix(&scenarios[9]); }
Test(faults, image_import)
{
	make_image_tar();
	run_matrix(&scenarios[10]);
}

Test(faults, image_build)
{
	make_build_ctx();
	run_matrix(&scenarios[11]);
}

/* from Debian's docker-registry on 127.0.0.1 (tests/regfixture.c) */
Test(faults_pull, image_pull)
{
	rf_start_registry(NULL);
	rf_push("busybox", "sb/busybox:latest", NULL);
	pull_ref = rf_ref_at(rf.port, "sb/busybox");
	run_matrix(&scenarios[12]);
}
