/* Live resources (CPU, memory, tasks, disk, history), the process list with
 * a signal, and custom commands from the key file, end to end against real
 * sandboxes (the fixture of test-tui.c). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "harness.h"
#include "testutil.h"
#include "tuitest.h"

/* The n-th cell from the end (1: the last) of the first row starting with prefix. */
static void cell_from_end(struct tui *t, const char *prefix, int n, char *out, size_t size)
{
	const char *row = tui_screen(t);

	out[0] = '\0';
	while (row && strncmp(row + strspn(row, " "), prefix, strlen(prefix)) != 0)
		row = strchr(row, '\n') ? strchr(row, '\n') + 1 : NULL;
	if (!row)
		return;
	size_t end = strcspn(row, "\n");
	for (int i = 1; i <= n; i++) {
		while (end > 0 && row[end - 1] == ' ')
			end--;
		size_t start = end;
		while (start > 0 && row[start - 1] != ' ')
			start--;
		if (i == n)
			snprintf(out, size, "%.*s", (int)(end - start), row + start);
		end = start;
	}
}

/* The CPU column (third from the end: CPU MEM TASKS) as a number; -1 when not one. */
static int cpu_of(struct tui *t, const char *prefix)
{
	char cell[32];

	cell_from_end(t, prefix, 3, cell, sizeof(cell));
	return cell[0] >= '0' && cell[0] <= '9' && strchr(cell, '%') ? atoi(cell) : -1;
}

static int cpu_above(struct tui *t, const char *prefix, const char *limit)
{
	return cpu_of(t, prefix) > atoi(limit);
}

static int cpu_below(struct tui *t, const char *prefix, const char *limit)
{
	int c = cpu_of(t, prefix);
	return c >= 0 && c < atoi(limit);
}

/* MEM shows "USED/LIMIT" and TASKS a count. */
static int memory_and_tasks(struct tui *t, const char *prefix, const char *limit)
{
	char mem[32], pids[32], want[40];

	cell_from_end(t, prefix, 2, mem, sizeof(mem));
	cell_from_end(t, prefix, 1, pids, sizeof(pids));
	snprintf(want, sizeof(want), "/%s", limit);
	return mem[0] >= '0' && mem[0] <= '9' && strstr(mem, want) && atoi(pids) > 0;
}

Test(tui, cpu_rises_with_a_busy_loop_and_falls_after_it)
{
	cli_ok("create", "busy", "--image", image, "--memory=256m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "^busy ", "running", WAIT), 0);
	cr_assert_eq(tui_wait_cond(t, memory_and_tasks, "busy ", "256M", WAIT), 0, "%s", tui_screen(t));
	/* the column says what it counts: host tasks, not processes inside */
	cr_assert_eq(tui_wait_row(t, "NAME", " TASKS", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, " PIDS"), -1, "%s", tui_screen(t));
	/* idle first (booting took CPU), so that the rise is the loop's */
	cr_assert_eq(tui_wait_cond(t, cpu_below, "busy ", "10", WAIT), 0, "idle:\n%s", tui_screen(t));
	cli_ok("exec", "busy", "--", "sh", "-c", "while :; do :; done >/dev/null 2>&1 </dev/null & echo $! >/tmp/busy.pid");
	/* a whole core when the machine is free; others' tests share it */
	cr_assert_eq(tui_wait_cond(t, cpu_above, "busy ", "25", WAIT), 0, "busy:\n%s", tui_screen(t));
	/* the details pane: CPU, memory against the limit, tasks, disk, history */
	cr_assert_eq(tui_wait_text(t, "of 256M", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "host tasks of the sandbox", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "workspace", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "CPU history", WAIT), 0, "%s", tui_screen(t));
	cli_ok("exec", "busy", "--", "sh", "-c", "kill $(cat /tmp/busy.pid)");
	cr_assert_eq(tui_wait_cond(t, cpu_below, "busy ", "10", WAIT), 0, "after:\n%s", tui_screen(t));
	quit(t);
}

Test(tui, disk_column_counts_the_workspace_without_following_links)
{
	cli_ok("create", "disk", "--image", image, NULL, NULL);
	/* 3 MB in the workspace, a link to the image's / that must not be walked */
	cli_ok("exec", "disk", "--", "sh", "-c", "dd if=/dev/zero of=/workspace/f bs=1024 count=3072 2>/dev/null; ln -s / /workspace/root");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "^disk ", "running", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "3.0M workspace", WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

/* The details' "Disk limit  32M (25M used)": the megabytes used, -1 before a number shows. */
static int limit_used_above(struct tui *t, const char *mb, const char *unused)
{
	const char *screen = tui_screen(t), *row = strstr(screen, "Disk limit"), *open = row ? strchr(row, '(') : NULL;
	const char *nl = row ? strchr(row, '\n') : NULL;
	char *end;

	(void)unused;
	if (!open || (nl && open > nl))
		return 0;
	double v = strtod(open + 1, &end);
	return end != open + 1 && *end == 'M' && v > atof(mb);
}

Test(tui, a_capped_disk_shows_its_limit_and_what_is_used)
{
	cli_ok("create", "capped", "--image", image, "--disk=32m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "^capped ", "running", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "Disk limit", "32M (", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "Disk limit") >= 0 && limit_used_above(t, "20", NULL), 0, "%s", tui_screen(t));
	cli_ok("exec", "capped", "--", "sh", "-c", "dd if=/dev/zero of=/workspace/f bs=1048576 count=40 2>/dev/null; true");
	cr_assert_eq(tui_wait_cond(t, limit_used_above, "20", NULL, WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

/* The DISK cell (fourth from the end: DISK CPU MEM TASKS) of the row starting
 * with prefix, in bytes ("20M", "1.5K", "512B"); -1 while "..." or none. */
static long long disk_of(struct tui *t, const char *prefix)
{
	static const char units[] = "BKMGT";
	char cell[32], *end;

	cell_from_end(t, prefix, 4, cell, sizeof(cell));
	double v = strtod(cell, &end);
	const char *u = end != cell && *end ? strchr(units, *end) : NULL;
	if (!u || end[1])
		return -1;
	for (; u > units; u--)
		v *= 1024;
	return (long long)v;
}

static int disk_at_least(struct tui *t, const char *prefix, const char *bytes)
{
	return disk_of(t, prefix) >= atoll(bytes);
}

static int disk_known_below(struct tui *t, const char *prefix, const char *bytes)
{
	long long d = disk_of(t, prefix);
	return d > 0 && d < atoll(bytes);
}

/* DISK needs 125 columns (at 120 it is the first to go): 140, still without
 * the side details pane. Both sizes are known before the write, then the
 * written one grows past 20M and the other stays below; sort and query use it. */
Test(tui, disk_column_shows_what_each_sandbox_wrote)
{
	char twenty[32];
	const char *argv[] = { "--root", root_dir, NULL };

	snprintf(twenty, sizeof(twenty), "%lld", 20LL << 20);
	cli_ok("create", "fat", "--image", image, NULL, NULL);
	cli_ok("create", "thin", "--image", image, NULL, NULL);
	struct tui *t = tui_start(40, 140, argv, NULL);
	cr_assert_not_null(t);
	running = t;
	cr_assert_eq(tui_wait_row(t, "NAME", " DISK", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, disk_known_below, "fat ", twenty, WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, disk_known_below, "thin ", twenty, WAIT), 0, "%s", tui_screen(t));
	cli_ok("exec", "fat", "--", "sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1048576 count=20 2>/dev/null");
	cr_assert_eq(tui_wait_cond(t, disk_at_least, "fat ", twenty, WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, disk_known_below, "thin ", twenty, WAIT), 0, "%s", tui_screen(t));
	/* o cycles the sort: NAME STATE KIND IDLE EXPIRES NET IMAGE OWNER DISK */
	tui_send(t, "oooooooo");
	cr_assert_eq(tui_wait_text(t, "sorted by DISK", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, "thin ", "fat ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "O");
	cr_assert_eq(tui_wait_above(t, "fat ", "thin ", WAIT), 0, "%s", tui_screen(t));
	/* a size query keeps the big one only; a bad size is refused with its reason */
	tui_send(t, "/disk>10M\r");
	cr_assert_eq(tui_wait_text(t, "Sandboxes (1)", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, "thin ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/\x15" "disk>huge");
	cr_assert_eq(tui_wait_text(t, "not a size", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x1b");
	cr_assert_eq(tui_wait_text(t, "Sandboxes (2)", WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

/* At 80x24 there is no details pane: the process view carries the numbers
 * and the history graph, in plain characters on a monochrome terminal. */
Test(tui, resources_and_history_at_80x24_in_monochrome)
{
	const char *env[] = { "TERM=xterm-mono", NULL };
	const char *argv[] = { "--root", root_dir, NULL };

	cli_ok("create", "small", "--image", image, "--memory=256m", NULL);
	struct tui *t = tui_start(24, 80, argv, env);
	cr_assert_not_null(t);
	running = t;
	cr_assert_eq(tui_wait_row(t, "^small ", "running", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "T");
	cr_assert_eq(tui_wait_text(t, "Processes in small", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "of 256M", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "sleep 3600", WAIT), 0, "%s", tui_screen(t));
	/* two samples make a graph: "[__" and the scale */
	cr_assert_eq(tui_wait_row(t, "CPU history", "[__", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "Mem history", "] 256M", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
}

static int no_row_with(struct tui *t, const char *text, const char *unused)
{
	(void)unused;
	return tui_find_row(t, text) < 0;
}

static int both_shown(struct tui *t, const char *a, const char *b)
{
	return tui_find_row(t, a) >= 0 && tui_find_row(t, b) >= 0;
}

Test(tui, process_list_and_a_signal_that_ends_one)
{
	cli_ok("create", "pl", "--image", image, NULL, NULL);
	cli_ok("exec", "pl", "--", "sh", "-c", "sleep 4242 >/dev/null 2>&1 </dev/null &");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "^pl ", "running", WAIT), 0);
	tui_send(t, "T");
	cr_assert_eq(tui_wait_text(t, "Processes in pl", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "sleep 4242", WAIT), 0, "%s", tui_screen(t));
	/* rows by pid: the init, its sleep 3600, ours, ps itself */
	tui_send(t, "jj");
	tui_send(t, "t");
	/* the dialog is drawn whole: its last line, then the process it names */
	cr_assert_eq(tui_wait_text(t, "in sandbox pl", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, both_shown, "in sandbox pl", "sleep 4242", WAIT), 0,
		     "the dialog names the process:\n%s", tui_screen(t));
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "sent TERM to process", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "Processes in pl", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_cond(t, no_row_with, "sleep 4242", NULL, WAIT), 0, "%s", tui_screen(t));
	struct tu_run r = tu_sandbench(root_dir, NULL, "exec", "pl", "--", "ps", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_null(strstr(r.out, "sleep 4242"), "%s", r.out);
	tu_run_free(&r);
	/* the command behind it */
	tui_send(t, "qL");
	cr_assert_eq(tui_wait_text(t, "exec pl -- kill -TERM ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
}

/* A fresh folder inside the test's root: the suite's teardown removes it
 * with the root even when an assertion ends the test half-way. */
static char *scratch(const char *tag)
{
	char *dir = sb_strdupf("%s/%s", root_dir, tag);

	cr_assert_eq(sb_fs_mkdirs(dir, 0755, NULL), 0);
	return dir;
}

/* A keys.conf in a fresh XDG_CONFIG_HOME; returns the env entry (malloc'd). */
static char *key_file(char **dir, const char *text)
{
	*dir = scratch("xdg");
	char *sub = sb_strdupf("%s/sandbench", *dir), *conf = sb_strdupf("%s/keys.conf", sub);

	cr_assert_eq(sb_fs_mkdirs(sub, 0755, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(conf, text, strlen(text), 0644, NULL), 0);
	free(sub);
	free(conf);
	return sb_strdupf("XDG_CONFIG_HOME=%s", *dir);
}

Test(tui, custom_command_runs_with_the_name_and_shows_its_output)
{
	char *dir, *env = key_file(&dir, "command = Y \"sandbench exec $NAME -- echo custom:$NAME:$OWNER\"\n");
	const char *envv[] = { env, NULL };

	cli_ok("create", "cc1", "--image", image, "--owner=plugin:x", NULL);
	struct tui *t = open_tui(NULL, envv);
	cr_assert_eq(tui_wait_row(t, "^cc1 ", "running", WAIT), 0);
	tui_send(t, "Y");
	cr_assert_eq(tui_wait_text(t, "custom:cc1:plugin:x", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "[exit status 0]", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
	tu_remove(dir);
	free(dir);
	free(env);
}

Test(tui, custom_command_hostile_owner_and_name_cannot_inject)
{
	char *marker = scratch("m"), owner[512], *dir, *env;

	/* names are validated: a name with shell syntax never becomes a sandbox */
	struct tu_run bad = tu_sandbench(root_dir, NULL, "create", "a;touch${IFS}x", "--image", image, NULL);
	cr_assert_neq(bad.status, 0);
	cr_assert(strstr(bad.err, "name"), "refused for its name: %s", bad.err);
	tu_run_free(&bad);
	snprintf(owner, sizeof(owner), "x';touch %s/a;'\"$(touch %s/b)\"`touch %s/c`", marker, marker, marker);
	env = key_file(&dir, "command = Y \"sandbench exec $NAME -- echo [$OWNER]\"\n"
			     "command = V \"sandbench exec $NAME -- sh -c 'echo \"[$1]\"' sh $OWNER\"\n"
			     "command = W \"sandbench exec $NAME -- echo $BOGUS\"\n");
	const char *envv[] = { env, NULL };
	char *own = sb_strdupf("--owner=%s", owner);
	cli_ok("create", "inj", "--image", image, own, NULL);
	struct tui *t = open_tui(NULL, envv);
	/* the bad line is named at start */
	cr_assert_eq(tui_wait_text(t, "keys.conf:3: unknown variable $BOGUS", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "^inj ", "running", WAIT), 0);
	char want[100];
	/* as much as the viewer's width shows: quotes and all, untouched */
	snprintf(want, sizeof(want), "[%.90s", owner);
	tui_send(t, "Y");
	cr_assert_eq(tui_wait_text(t, "[exit status 0]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, want), -1, "the owner arrives as one literal word:\n%s", tui_screen(t));
	tui_send(t, "q");
	/* through a shell inside, as its argument: still literal */
	tui_send(t, "V");
	cr_assert_eq(tui_wait_text(t, "[exit status 0]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_neq(tui_find_row(t, want), -1, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);
	char *a = sb_strdupf("%s/a", marker), *b = sb_strdupf("%s/b", marker), *c = sb_strdupf("%s/c", marker);
	cr_assert(access(a, F_OK) != 0 && access(b, F_OK) != 0 && access(c, F_OK) != 0, "a value ran on the host");
	free(a);
	free(b);
	free(c);
	free(own);
	tu_remove(marker);
	free(marker);
	tu_remove(dir);
	free(dir);
	free(env);
}
