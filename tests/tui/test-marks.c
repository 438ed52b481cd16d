/* The workbench's marks and bulk actions, filter queries, command line and
 * command log, end to end against real sandboxes (the fixture of test-tui.c). */
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
#include "testutil.h"
#include "tuitest.h"

static void create(const char *name, const char *extra)
{
	cli_ok("create", name, "--image", image, extra ? extra : "--temporary=10m", NULL);
}

/* The names `sandbench ls` lists, as " a b c " (a leading and a trailing blank). */
static char *listed(void)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, "ls", NULL);
	char *out = calloc(1, strlen(r.out ? r.out : "") + 3), *save = NULL;

	cr_assert_eq(r.status, 0, "%s", r.err);
	strcat(out, " ");
	for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strcspn(line, " ");
		if (strncmp(line, "NAME", 4))
			sprintf(out + strlen(out), "%.*s ", (int)n, line);
	}
	tu_run_free(&r);
	return out;
}

Test(tui, mark_three_of_five_and_remove_them_in_one_confirmation)
{
	static const char *const names[] = { "m1", "m2", "m3", "m4", "m5" };

	for (size_t i = 0; i < 5; i++)
		create(names[i], NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^m5 ", "running", WAIT), 0);
	/* Space marks m1 and moves to m2; j to m3; C-Space marks m1..m3 */
	tui_send(t, "g ");
	cr_assert_eq(tui_wait_text(t, "[1 marked]", WAIT), 0, "the mark count in the title");
	tui_send(t, "j");
	tui_send_bytes(t, "\0", 1);
	cr_assert_eq(tui_wait_text(t, "[3 marked]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "d");
	cr_assert_eq(tui_wait_text(t, "remove 3 marked sandboxes?", WAIT), 0, "%s", tui_screen(t));
	/* per sandbox: what goes and what stays */
	for (size_t i = 0; i < 3; i++) {
		char line[64];
		snprintf(line, sizeof(line), "%s (running): removed: workspace", names[i]);
		cr_assert_eq(tui_wait_row(t, line, "kept: exchange folder", WAIT), 0, "%s", tui_screen(t));
	}
	cr_assert_eq(tui_find_row(t, "m4 (running)"), -1, "m4 is not marked");
	cr_assert_eq(tui_find_row(t, "m5 (running)"), -1, "m5 is not marked");
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "remove: all 3 done", 120000), 0, "%s", tui_screen(t));
	char *ls = listed();
	cr_assert(strstr(ls, " m4 ") && strstr(ls, " m5 "), "the unmarked two are untouched: %s", ls);
	cr_assert(!strstr(ls, " m1 ") && !strstr(ls, " m2 ") && !strstr(ls, " m3 "), "the marked three are gone: %s", ls);
	free(ls);
	/* the command of each is in the log */
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, "Commands behind the actions", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, " rm m2", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
}

/* No row starts with prefix (the details pane names the sandbox too, but
 * not at the start of a row). */
static int no_line_starts(struct tui *t, const char *prefix, const char *unused)
{
	(void)unused;
	for (const char *row = tui_screen(t); row; row = strchr(row, '\n') ? strchr(row, '\n') + 1 : NULL)
		if (!strncmp(row + strspn(row, " "), prefix, strlen(prefix)))
			return 0;
	return 1;
}

/* Types a query into the filter line and waits until the list holds exactly
 * the sandboxes of want (of f1 f2 f3). */
static void filter_shows(struct tui *t, const char *query, const char *want)
{
	static const char *const all[] = { "f1", "f2", "f3" };
	char keys[160], anchor[8];

	snprintf(keys, sizeof(keys), "/\x15%s\r", query);   /* C-u: a fresh line */
	tui_send(t, keys);
	for (size_t i = 0; i < 3; i++) {
		snprintf(anchor, sizeof(anchor), "%s ", all[i]);
		if (strstr(want, all[i]))
			cr_assert_eq(tui_wait_line_start(t, anchor, WAIT), 0, "'%s' hides %s:\n%s", query, all[i], tui_screen(t));
		else
			cr_assert_eq(tui_wait_cond(t, no_line_starts, anchor, NULL, WAIT), 0, "'%s' shows %s:\n%s", query,
				     all[i], tui_screen(t));
	}
	snprintf(keys, sizeof(keys), "filter: %s", query);
	cr_assert_eq(tui_wait_text(t, keys, WAIT), 0, "the query in force is shown:\n%s", tui_screen(t));
}

Test(tui, filter_queries_of_each_form)
{
	create("f1", "--temporary=10m");
	cli_ok("create", "f2", "--image", image, "--permanent", "--owner=plugin:search");
	cli_ok("create", "f3", "--image", image, "--temporary=10m", "--label=team=x");
	cli_ok("stop", "f3", NULL, NULL, NULL, NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^f3 ", "stopped", WAIT), 0);

	filter_shows(t, "f2", "f2");                        /* plain text */
	filter_shows(t, "/^f[13]$/", "f1 f3");              /* regex */
	filter_shows(t, "!f2", "f1 f3");                    /* inverted */
	filter_shows(t, "state:stopped", "f3");
	filter_shows(t, "kind:temporary", "f1 f3");
	filter_shows(t, "owner:plugin:*", "f2");
	filter_shows(t, "label:team=x", "f3");
	filter_shows(t, "net:off", "f1 f2 f3");
	filter_shows(t, "image:sha256:*", "f1 f2 f3");
	filter_shows(t, "idle<2h kind:temporary !state:stopped", "f1");   /* AND */
	filter_shows(t, "idle>2h", "");
	/* a bad query says why and leaves the filter in force */
	filter_shows(t, "kind:permanent", "f2");
	tui_send(t, "/\x15" "colour:red\r");
	cr_assert_eq(tui_wait_text(t, "unknown field 'colour'", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "filter: kind:permanent", WAIT), 0, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, "f2 "), -1);
	cr_assert_eq(tui_find_row(t, "f1 "), -1);
	/* history: Up brings back the query before */
	tui_send(t, "/\x15");
	tui_send(t, "\x1bOA");
	cr_assert_eq(tui_wait_text(t, "/kind:permanent", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x1bOA\r");
	cr_assert_eq(tui_wait_text(t, "filter: idle>2h", WAIT), 0, "%s", tui_screen(t));
	/* the Images pane has its own query, on its own fields */
	tui_send(t, "2/user:nobody\r");
	cr_assert_eq(tui_wait_text(t, "no image matches the filter", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "[2 Images (0)]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/\x15user:f2 name:*default*\r");
	cr_assert_eq(tui_wait_text(t, "[2 Images (1)]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "sandbench/default", "f1, f2, f3", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/\x15state:x\r");
	cr_assert_eq(tui_wait_text(t, "unknown field 'state' (fields: name digest user)", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "1");
	cr_assert_eq(tui_wait_text(t, "filter: idle>2h", WAIT), 0, "each pane keeps its own:\n%s", tui_screen(t));
	quit(t);
}

Test(tui, command_line_with_an_alias_and_completion)
{
	create("c-one", NULL);
	create("c-two", NULL);
	create("keep", NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^keep ", "running", WAIT), 0);
	/* Tab completes the command, then a sandbox name */
	tui_send(t, ":ima\t");
	cr_assert_eq(tui_wait_text(t, ":images ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[2 Images", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, ":sb\r");
	cr_assert_eq(tui_wait_text(t, "[1 Sandboxes", WAIT), 0, "%s", tui_screen(t));
	/* :del is :rm; the glob marks the two, one confirmation removes both */
	tui_send(t, ":del c-*\r");
	cr_assert_eq(tui_wait_text(t, "remove 2 marked sandboxes?", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "keep (running)"), -1);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "remove: all 2 done", 120000), 0, "%s", tui_screen(t));
	char *ls = listed();
	cr_assert(strstr(ls, " keep ") && !strstr(ls, " c-one ") && !strstr(ls, " c-two "), "%s", ls);
	free(ls);
	/* an unknown command says so; :ls filters */
	tui_send(t, ":frobnicate\r");
	cr_assert_eq(tui_wait_text(t, "unknown command ':frobnicate'", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, ":ls state:stopped\r");
	cr_assert_eq(tui_wait_text(t, "filter: state:stopped", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, "keep ", WAIT), 0);
	quit(t);
}

/* The command the log shows for an action, run from a shell, does the same. */
Test(tui, logged_command_re_run_from_a_shell_does_the_same)
{
	create("lg", NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^lg ", "running", WAIT), 0);
	tui_send(t, "x");
	cr_assert_eq(tui_wait_row(t, "^lg ", "stopped", 60000), 0, "%s", tui_screen(t));
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, " stop lg", WAIT), 0, "%s", tui_screen(t));
	/* the line as the screen shows it */
	const char *screen = tui_screen(t), *at = strstr(screen, "sandbench --root ");
	cr_assert_not_null(at);
	const char *end = strstr(at, " stop lg");
	cr_assert(end && !memchr(at, '\n', (size_t)(end - at)), "%s", screen);
	char *line = strndup(at, (size_t)(end - at) + strlen(" stop lg"));
	tui_send(t, "q");
	cli_ok("restore", "lg", NULL, NULL, NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^lg ", "running", 60000), 0);
	/* the shell's sandbench is the one built here */
	char *bin = tu_buildpath("sandbench"), *dir = strdup(bin);
	*strrchr(dir, '/') = '\0';
	cr_assert_eq(tu_sh("PATH='%s':$PATH %s >/dev/null", dir, line), 0, "%s", line);
	char *state = cli_state("lg");
	cr_assert_str_eq(state ? state : "", "stopped", "the logged command stopped it as the workbench did");
	free(state);
	free(line);
	free(bin);
	free(dir);
	quit(t);
}

/* The new views at 80x24 without colour: the bulk confirmation (its footer
 * too), the command line, the command log and a refused query. */
Test(tui, new_views_at_80x24_in_monochrome)
{
	create("s1", NULL);
	create("s2", NULL);
	const char *argv[] = { "--root", root_dir, NULL }, *env[] = { "TERM=xterm-mono", NULL };
	struct tui *t = tui_start(24, 80, argv, env);
	running = t;
	cr_assert_eq(tui_wait_row(t, "^s2 ", "running", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "*");
	cr_assert_eq(tui_wait_text(t, "[2 marked]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_line_start(t, "\u25cf s1", WAIT), 0, "a mark shows without colour:\n%s", tui_screen(t));
	tui_send(t, "x");
	cr_assert_eq(tui_wait_text(t, "stop 2 marked sandboxes?", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "s2: stopped, memory kept on disk", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "y: stop 2 sandboxes", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "n");
	cr_assert_eq(tui_wait_gone(t, "marked sandboxes?", WAIT), 0);
	tui_send(t, "u");
	cr_assert_eq(tui_wait_gone(t, "marked]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, ":ima\t");
	cr_assert_eq(tui_wait_text(t, ":images", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x1b");
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, "Commands behind the actions", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "y, Enter: copy", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	tui_send(t, "/\x15kind:\r");
	cr_assert_eq(tui_wait_text(t, "needs a value", WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

/* A bulk action whose item fails reports it and leaves the others done: a
 * broken sandbox (its record says so, as a crash leaves it) refuses removal
 * without --force, the two beside it go. */
Test(tui, bulk_failure_of_one_leaves_the_others_done)
{
	create("b1", NULL);
	create("b2", NULL);
	create("b3", NULL);
	cli_ok("stop", "b2", NULL, NULL, NULL, NULL);
	/* sed -i renames its result into place: a reader sees the old or the new record */
	cr_assert_eq(tu_sh("sed -i 's/\"state\": *\"stopped\"/\"state\": \"broken\"/' %s/sandboxes/b2/sandbox.json", root_dir), 0);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^b2 ", "broken", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "*d");
	cr_assert_eq(tui_wait_text(t, "remove 3 marked sandboxes?", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "remove: 2 of 3 done, 1 failed", 120000), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "remove b2 failed", WAIT), 0, "the event log names it:\n%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "[1 marked]", WAIT), 0, "the failed one stays marked:\n%s", tui_screen(t));
	char *ls = listed();
	cr_assert(strstr(ls, " b2 ") && !strstr(ls, " b1 ") && !strstr(ls, " b3 "), "%s", ls);
	free(ls);
	quit(t);
}

/* gc asks first with its dry run: a record deleted by hand leaves a container
 * and a disk that nothing accounts for; n keeps them, y reconciles. */
Test(tui, gc_asks_first_with_its_dry_run)
{
	create("lost", NULL);
	char *json = sb_strdupf("%s/sandboxes/lost/sandbox.json", root_dir);
	cr_assert_eq(unlink(json), 0);
	free(json);
	struct tui *t = open_tui(NULL, NULL);
	tui_send(t, "X");
	cr_assert_eq(tui_wait_text(t, "Reconcile (gc)?", 60000), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "container", ": ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "n");
	cr_assert_eq(tui_wait_gone(t, "Reconcile (gc)?", WAIT), 0);
	struct tu_run r = tu_sandbench(root_dir, NULL, "gc", "--dry-run", NULL);
	cr_assert(r.out && strstr(r.out, "container"), "n changed nothing: %s", r.out);
	tu_run_free(&r);
	tui_send(t, "X");
	cr_assert_eq(tui_wait_text(t, "Reconcile (gc)?", 60000), 0);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "gc: done", 60000), 0, "%s", tui_screen(t));
	r = tu_sandbench(root_dir, NULL, "gc", "--dry-run", NULL);
	cr_assert(r.out && strstr(r.out, "nothing to reconcile"), "y reconciled: %s", r.out);
	tu_run_free(&r);
	quit(t);
}

/* A number field of inspect --json ("idle_seconds"); -1 when absent or null. */
static long long cli_number(const char *name, const char *field)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, "inspect", name, "--json", NULL);
	char key[64];
	const char *p;
	long long v = -1;

	snprintf(key, sizeof(key), "\"%s\": ", field);
	if (r.out && (p = strstr(r.out, key)) && p[strlen(key)] != 'n')
		v = strtoll(p + strlen(key), NULL, 10);
	tu_run_free(&r);
	return v;
}

/* Marks all (the two), runs the action of key on them with one confirmation
 * and waits until it says both are done (which unmarks them). */
static void bulk_both(struct tui *t, const char *key, const char *verb)
{
	char want[96];

	tui_send(t, "*");
	cr_assert_eq(tui_wait_text(t, "[2 marked]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, key);
	snprintf(want, sizeof(want), "%s 2 marked sandboxes?", verb);
	cr_assert_eq(tui_wait_text(t, want, WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "y");
	snprintf(want, sizeof(want), "%s: all 2 done", verb);
	cr_assert_eq(tui_wait_text(t, want, 120000), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, "marked]", WAIT), 0, "done ones are unmarked:\n%s", tui_screen(t));
}

/* restore, touch, extend and expire on marked sandboxes, each for real, its
 * effect read back through the CLI. */
Test(tui, bulk_restore_touch_extend_expire_on_marks)
{
	static const char *const names[] = { "k1", "k2" };

	for (size_t i = 0; i < 2; i++) {
		cli_ok("create", names[i], "--image", image, "--temporary=10m", "--expiry=stop");
		cli_ok("stop", names[i], NULL, NULL, NULL, NULL);
	}
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^k2 ", "stopped", WAIT), 0, "%s", tui_screen(t));

	bulk_both(t, "r", "restore");
	for (size_t i = 0; i < 2; i++) {
		char *state = cli_state(names[i]);
		cr_assert_str_eq(state ? state : "", "running", "%s restored", names[i]);
		free(state);
	}
	/* idle for 5 minutes (below the timeout: the open workbench's reaper stays off them) */
	for (size_t i = 0; i < 2; i++) {
		char *act = sb_strdupf("%s/sandboxes/%s/activity", root_dir, names[i]);
		struct timespec ts[2] = { { time(NULL) - 300, 0 }, { time(NULL) - 300, 0 } };
		cr_assert_eq(utimensat(AT_FDCWD, act, ts, 0), 0);
		free(act);
		cr_assert_geq(cli_number(names[i], "idle_seconds"), 299, "%s backdated", names[i]);
	}
	bulk_both(t, "t", "touch");
	for (size_t i = 0; i < 2; i++)
		cr_assert_lt(cli_number(names[i], "idle_seconds"), 200, "touch restarted the idle time of %s", names[i]);
	long long before[2];
	for (size_t i = 0; i < 2; i++) {
		before[i] = cli_number(names[i], "expires_in");
		cr_assert(before[i] > 0 && before[i] <= 600, "%s expires within its 10m: %lld", names[i], before[i]);
	}
	bulk_both(t, "+", "extend");
	for (size_t i = 0; i < 2; i++)
		cr_assert_gt(cli_number(names[i], "expires_in"), before[i] + 3000, "extend moved the expiry of %s an hour",
			     names[i]);
	bulk_both(t, "E", "expire");
	for (size_t i = 0; i < 2; i++) {
		char *state = cli_state(names[i]);
		cr_assert_str_eq(state ? state : "", "stopped", "%s expired by its expiry action (stop)", names[i]);
		free(state);
	}
	quit(t);
}

/* The Sessions pane takes '/' queries on its own fields (id, state,
 * control, idle), like the other panes. */
Test(tui, sessions_pane_filter_query)
{
	create("ss", NULL);
	cli_ok("session", "start", "ss", NULL, NULL, NULL);
	cli_ok("session", "start", "ss", NULL, NULL, NULL);
	cli_ok("session", "kill", "ss", "1", NULL, NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^ss ", "running", WAIT), 0);
	tui_send(t, "4");
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (2)]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "^1 ", "exited", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/state:exited\r");
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (1)]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "filter: state:exited", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, no_line_starts, "0 ", NULL, WAIT), 0, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, "exited"), -1, "%s", tui_screen(t));
	tui_send(t, "/\x15" "control:agent\r");
	cr_assert_eq(tui_wait_row(t, "^0 ", "running", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (1)]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/\x15" "idle>1d\r");
	cr_assert_eq(tui_wait_text(t, "no session matches the filter", WAIT), 0, "%s", tui_screen(t));
	/* a bad query says why, the one in force stays */
	tui_send(t, "/\x15" "owner:x\r");
	cr_assert_eq(tui_wait_text(t, "unknown field 'owner' (fields: id state control idle)", WAIT), 0, "%s",
		     tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "filter: idle>1d", WAIT), 0, "%s", tui_screen(t));
	/* the Sandboxes pane keeps its own (none) */
	tui_send(t, "1");
	cr_assert_eq(tui_wait_gone(t, "filter: idle>1d", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "4/\x15\r");
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (2)]", WAIT), 0, "an empty query shows all:\n%s", tui_screen(t));
	quit(t);
}

/* y in the command log copies the selected line with OSC 52: the terminal
 * gets ESC ] 52 ; c ; base64(line) BEL (base64 by the coreutils tool here). */
Test(tui, command_log_copies_with_osc52)
{
	create("cp1", NULL);
	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^cp1 ", "running", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "t");
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, " touch cp1", WAIT), 0, "%s", tui_screen(t));
	const char *screen = tui_screen(t), *at = strstr(screen, "sandbench --root ");
	cr_assert_not_null(at, "%s", screen);
	const char *end = strstr(at, " touch cp1");
	cr_assert(end && !memchr(at, '\n', (size_t)(end - at)), "%s", screen);
	char *line = strndup(at, (size_t)(end - at) + strlen(" touch cp1"));
	cr_assert_null(strchr(line, '\''), "%s", line);
	char *b64 = tu_sh_out("printf '%%s' '%s' | base64 -w0", line);
	char *seq = sb_strdupf("\033]52;c;%s\a", b64);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_output(t, seq, WAIT), 0, "no OSC 52 with the base64 of '%s' (%s)", line, b64);
	cr_assert_eq(tui_wait_text(t, "copied to the terminal's clipboard", WAIT), 0, "%s", tui_screen(t));
	free(seq);
	free(b64);
	free(line);
	quit(t);
}
