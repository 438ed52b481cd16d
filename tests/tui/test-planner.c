/* The cleanup planner and the exposure view of the workbench, end to end:
 * the real binary on a pty at 80x24 without colour, real sandboxes. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "harness.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

#define WAIT 30000

static struct sbf f;
static struct tui *running;
static struct nt_names net;   /* network tests only: a bridge and subnet of their own */

static void setup(void)
{
	sbf_setup(&f, "planner");
}

static void teardown(void)
{
	if (running)
		tui_finish(running, 0);
	running = NULL;
	sbf_teardown(&f);
	if (net.sfx[0])
		tu_sh("ip link del %s 2>/dev/null; true", net.bridge);
}

TestSuite(planner, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) sbf_ok(tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL), "sandbench " #__VA_ARGS__)

static char *box_path(const char *name)
{
	return sb_strdupf("%s/sandboxes/%s", f.dir, name);
}

static unsigned long long du(const char *name)
{
	char *dir = box_path(name), *out = tu_sh_out("du -sx -B1 '%s' | cut -f1", dir);
	unsigned long long n = strtoull(out, NULL, 10);

	free(out);
	free(dir);
	return n;
}

static int exists(const char *name)
{
	char *dir = box_path(name);
	int ok = access(dir, F_OK) == 0;

	free(dir);
	return ok;
}

/* The workbench at 80x24 on a monochrome terminal. */
static struct tui *open_small(void)
{
	/* the reaper would remove the expired sandbox before the planner shows it */
	const char *argv[] = { "--root", f.dir, "tui", "--no-reap", NULL };
	const char *env[] = { "TERM=xterm-mono", NULL };
	struct tui *t = tui_start(24, 80, argv, env);

	cr_assert_not_null(t);
	running = t;
	cr_assert_eq(tui_wait_text(t, "Sandboxes", WAIT), 0, "the workbench did not draw");
	return t;
}

static void quit(struct tui *t)
{
	tui_send(t, "q");
	running = NULL;
	cr_assert_eq(tui_finish(t, WAIT), 0);
}

/* The planner's own query and sort: as planned (sandboxes by name first),
 * by reason, by the bytes each frees; a bad query is refused and the one in
 * force stays; an empty one shows all again. */
static void filter_and_sort(struct tui *t, unsigned long long exp, unsigned long long nock)
{
	tui_send(t, "/reason:expir*\r");
	cr_assert_eq(tui_wait_text(t, "filter: reason:expir*", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, " brk ", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, " nock "), -1, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, " exp "), -1, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, " soon "), -1, "%s", tui_screen(t));
	tui_send(t, "/\x15" "size:big\r");
	cr_assert_eq(tui_wait_text(t, "unknown field 'size'", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "filter: reason:expir*", WAIT), 0, "the query in force stays:\n%s", tui_screen(t));
	tui_send(t, "/\x15\r");
	cr_assert_eq(tui_wait_row(t, "broken", " brk ", WAIT), 0, "an empty query shows all:\n%s", tui_screen(t));
	/* as planned: by name, so nock above soon; by reason, no-checkpoint below expiring */
	cr_assert_eq(tui_wait_above(t, " nock ", " soon ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "o");
	cr_assert_eq(tui_wait_text(t, "sorted by bytes freed", WAIT), 0, "%s", tui_screen(t));
	if (nock > exp)
		cr_assert_eq(tui_wait_above(t, " nock ", " exp ", WAIT), 0, "%llu > %llu:\n%s", nock, exp, tui_screen(t));
	else
		cr_assert_eq(tui_wait_above(t, " exp ", " nock ", WAIT), 0, "%llu <= %llu:\n%s", nock, exp, tui_screen(t));
	tui_send(t, "o");
	cr_assert_eq(tui_wait_text(t, "sorted by reason", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, " soon ", " nock ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "o");
	cr_assert_eq(tui_wait_text(t, "sorted by the plan", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, " nock ", " soon ", WAIT), 0, "%s", tui_screen(t));
}

Test(planner, lists_what_is_stale_and_cleans_up_exactly_the_marked)
{
	SB("create", "exp", "--image", SBF_IMAGE, "--temporary=1h");
	SB("create", "brk", "--image", SBF_IMAGE, "--permanent");
	SB("create", "fine", "--image", SBF_IMAGE, "--permanent");
	SB("create", "nock", "--image", SBF_IMAGE, "--permanent");
	SB("create", "soon", "--image", SBF_IMAGE, "--temporary=5m");
	sbf_bash_image(&f);
	SB("stop", "brk");
	SB("stop", "nock");
	char *act = sb_strdupf("%s/sandboxes/exp/activity", f.dir);
	struct timespec ts[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	cr_assert_eq(utimensat(AT_FDCWD, act, ts, 0), 0);
	free(act);
	cr_assert_eq(tu_sh("echo garbage > '%s/sandboxes/brk/sandbox.json'", f.dir), 0);
	cr_assert_eq(tu_sh("rm -rf '%s/sandboxes/nock/checkpoint' && head -c 300000 /dev/urandom > '%s/sandboxes/nock/workspace/f'",
			   f.dir, f.dir), 0);
	unsigned long long brk = du("brk"), nock = du("nock");
	char want[128];

	struct tui *t = open_small();
	tui_send(t, "Z");
	cr_assert_eq(tui_wait_text(t, "Cleanup planner", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "broken", "brk", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "expired", "exp", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "no-checkpoint", "nock", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "expiring", "soon", WAIT), 0, "near expiry (within 10 minutes):\n%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "unused-image", SBF_BASH_IMAGE, WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, " fine "), -1, "a running permanent sandbox is not stale");
	filter_and_sort(t, du("exp"), nock);
	/* rows by name: brk, exp, nock; the selected row's exact bytes below the list */
	tui_send(t, "g");
	snprintf(want, sizeof(want), "brk: frees %llu bytes", brk);
	cr_assert_eq(tui_wait_text(t, want, WAIT), 0, "%s", tui_screen(t));
	tui_send(t, " j");
	snprintf(want, sizeof(want), "nock: frees %llu bytes", nock);
	cr_assert_eq(tui_wait_text(t, want, WAIT), 0, "%s", tui_screen(t));
	tui_send(t, " ");
	cr_assert_eq(tui_wait_text(t, "[2 marked", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "d");
	cr_assert_eq(tui_wait_text(t, "clean up 2 marked", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "rm --force brk", "frees", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "rm nock", "frees", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "cleanup: 2 done, 0 failed", 120000), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "brk", "done", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "nock", "done", WAIT), 0, "%s", tui_screen(t));
	cr_assert(!exists("brk") && !exists("nock"), "the marked two are gone");
	cr_assert(exists("exp") && exists("fine") && exists("soon"), "the others stay");
	struct tu_run r = tu_sandbench(f.dir, NULL, "image", "ls", NULL);
	cr_assert(strstr(r.out, SBF_BASH_IMAGE), "the unmarked image stays: %s", r.out);
	tu_run_free(&r);
	tui_send(t, "q");
	cr_assert_eq(tui_wait_gone(t, "Cleanup planner", WAIT), 0);
	/* the command of each is in the log */
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, "cleanup --apply nock", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
}

Test(planner, exposure_flags_rw_mounts_and_network_and_filters)
{
	char *host = tu_tempdir("planner-host"), *mnt = sb_strdupf("%s:/data:rw", host);

	/* not the default bridge, which a root beside this one may hold */
	nt_names_init(&net);
	nt_config_write_blocking(&net, f.dir);
	SB("create", "wide", "--image", SBF_IMAGE, "--permanent", "--network", "on", "--mount", mnt, "--owner", "team:w");
	SB("create", "narrow", "--image", SBF_IMAGE, "--permanent", "--owner", "team:n");
	struct tui *t = open_small();
	tui_send(t, ":exposure\n");
	cr_assert_eq(tui_wait_text(t, "Exposure per sandbox", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "! wide", " on ", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "narrow", " off ", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "! narrow"), -1, "the defaults are no warning: %s", tui_screen(t));
	/* a query: only what has a read-write host folder */
	tui_send(t, "/warn:rw-mount\n");
	cr_assert_eq(tui_wait_text(t, "/warn:rw-mount", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, "team:n", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "widens: network open-egress rw-mount", WAIT), 0, "%s", tui_screen(t));
	/* a bad query is refused, the one in force stays */
	tui_send(t, "/\x15" "bogus:x\n");
	cr_assert_eq(tui_wait_text(t, "unknown field 'bogus'", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "/warn:rw-mount", WAIT), 0, "%s", tui_screen(t));
	/* per owner */
	tui_send(t, "w");
	cr_assert_eq(tui_wait_text(t, "Exposure per owner", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "! team:w", "1", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
	SB("rm", "wide");
	tu_remove(host);
	free(host);
	free(mnt);
}
