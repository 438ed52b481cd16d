/* Eight CLIs at once, with the workbench open and the reaper running: each
 * worker loops over create, exec, session start, stop, restore and rm on a
 * sandbox of its own (every command must succeed, and the sandbox must end
 * in the state the worker's successful commands add up to) and on three
 * sandboxes all workers share (a command may be refused by another's, with
 * one clear line). No command may hang past its deadline, no record may be
 * corrupt, activity is not lost, and gc finds the root reconciled.
 * $SB_STRESS_SECONDS bounds the loop (default 15; tests/bench/bench-stress
 * runs it longer). */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"
#include "tui/harness.h"

#define WORKERS 8
#define SHARED 3
#define DEADLINE_MS 120000   /* of one command (tu_sandbench's own timeout) */

static struct sbf f;
static struct tui *bench;      /* the workbench, and the reaper and workers: */
static pid_t reaper, workers[WORKERS];   /* ended by the teardown after a failure */

static void setup(void)
{
	sbf_setup(&f, "stress");
}

static void teardown(void)
{
	for (int w = 0; w < WORKERS; w++)
		if (workers[w] > 0 && kill(workers[w], SIGKILL) == 0)
			waitpid(workers[w], NULL, 0);
	if (reaper > 0 && kill(reaper, SIGTERM) == 0)
		waitpid(reaper, NULL, 0);
	if (bench)
		tui_finish(bench, 1000);
	sbf_teardown(&f);
}

TestSuite(stress, .init = setup, .fini = teardown, .timeout = 1800);

enum own { OWN_ABSENT, OWN_RUNNING, OWN_STOPPED };
static const char *const own_names[] = { "absent", "running", "stopped" };

struct op {
	const char *verb;
	enum own from, to;      /* for the worker's own sandbox */
};

/* What a worker may do to its own sandbox in each state, and where it leads. */
static const struct op own_ops[] = {
	{ "create", OWN_ABSENT, OWN_RUNNING },
	{ "exec", OWN_RUNNING, OWN_RUNNING },
	{ "session", OWN_RUNNING, OWN_RUNNING },
	{ "stop", OWN_RUNNING, OWN_STOPPED },
	{ "restore", OWN_STOPPED, OWN_RUNNING },
	{ "rm", OWN_RUNNING, OWN_ABSENT },
	{ "rm", OWN_STOPPED, OWN_ABSENT },
};
#define N_OWN_OPS (sizeof(own_ops) / sizeof(own_ops[0]))

static int seconds(void)
{
	const char *s = getenv("SB_STRESS_SECONDS");
	int v = s ? atoi(s) : 0;

	return v > 0 ? v : 15;
}

/* One command on name; the session verb starts a session of a fresh name. */
static struct tu_run run_verb(const char *verb, const char *name, unsigned serial)
{
	char session[32];

	snprintf(session, sizeof(session), "s%u", serial);
	if (!strcmp(verb, "create"))
		return tu_sandbench(f.dir, NULL, "create", name, "--image", SBF_IMAGE,
				    name[0] == 'w' ? "--permanent" : "--temporary", NULL);
	if (!strcmp(verb, "exec"))
		return tu_sandbench(f.dir, NULL, "exec", name, "--", "true", NULL);
	if (!strcmp(verb, "session"))
		return tu_sandbench(f.dir, NULL, "session", "start", name, session, NULL);
	if (!strcmp(verb, "rm"))
		return tu_sandbench(f.dir, NULL, "rm", "-f", name, NULL);
	return tu_sandbench(f.dir, NULL, verb, name, NULL);
}

static int one_clear_line(const char *err)
{
	const char *nl = strchr(err, '\n');

	return !strncmp(err, "sandbench: ", 11) && nl && !nl[1];
}

/* A refusal ends in sandbench's own line. An exec's stderr is its command's,
 * so runsc's refusal of a sandbox stopped under it comes before that line. */
static int ends_in_a_clear_line(const char *err)
{
	size_t n = strlen(err);
	const char *last = err;

	if (n < 2 || err[n - 1] != '\n')
		return 0;
	for (const char *p = err; p < err + n - 1; p++)
		if (*p == '\n')
			last = p + 1;
	return !strncmp(last, "sandbench: ", 11);
}

/* A worker: its log gets, at the end, "final NAME STATE LAST_EXEC OPS OK
 * REFUSED"; it exits 1 at the first wrong result (the reason in the log). */
static __attribute__((noreturn)) void worker(int w, FILE *log)
{
	char own[16];
	enum own state = OWN_ABSENT;
	unsigned seed = (unsigned)(w * 7919 + 17), serial = 0;
	long long end = sb_clock_monotonic_ms() + seconds() * 1000LL, last_exec = 0;
	long ops = 0, ok = 0, refused = 0;

	snprintf(own, sizeof(own), "w%d", w);
	while (sb_clock_monotonic_ms() < end) {
		long long t0 = sb_clock_monotonic_ms();
		struct tu_run r;
		ops++;
		if (rand_r(&seed) % 2) {
			const struct op *choice[N_OWN_OPS];
			size_t n = 0;
			for (size_t i = 0; i < N_OWN_OPS; i++)
				if (own_ops[i].from == state)
					choice[n++] = &own_ops[i];
			const struct op *op = choice[rand_r(&seed) % n];
			long long at = sb_clock_now();
			r = run_verb(op->verb, own, ++serial);
			if (r.status != 0) {
				fprintf(log, "own %s %s (was %s): status %d: %s\n", op->verb, own, own_names[state],
					r.status, r.err);
				_exit(1);
			}
			if (!strcmp(op->verb, "exec") || !strcmp(op->verb, "session"))
				last_exec = at;
			state = op->to;
			ok++;
		} else {
			static const char *const verbs[] = { "create", "exec", "session", "stop", "restore", "rm" };
			char name[16];
			snprintf(name, sizeof(name), "c%u", rand_r(&seed) % SHARED);
			const char *verb = verbs[rand_r(&seed) % 6];
			r = run_verb(verb, name, ++serial);
			if (r.status == 0) {
				ok++;
			} else if (!strcmp(verb, "exec") ? ends_in_a_clear_line(r.err) : one_clear_line(r.err)) {
				refused++;
			} else {
				fprintf(log, "shared %s %s: status %d, not one clear line: %s\n", verb, name, r.status, r.err);
				_exit(1);
			}
		}
		tu_run_free(&r);
		if (sb_clock_monotonic_ms() - t0 >= DEADLINE_MS) {
			fprintf(log, "a command took %lld ms\n", sb_clock_monotonic_ms() - t0);
			_exit(1);
		}
	}
	fprintf(log, "final %s %s %lld %ld %ld %ld\n", own, own_names[state], last_exec, ops, ok, refused);
	/* _exit: this is a fork of Criterion's worker, whose exit handlers are not ours */
	_exit(0);
}

static pid_t start_reaper(void)
{
	char *bin = tu_buildpath("sandbench");
	pid_t pid = fork();

	if (pid == 0) {
		execl(bin, bin, "--root", f.dir, "reap", "--watch=1s", (char *)NULL);
		_exit(127);
	}
	free(bin);
	cr_assert_gt(pid, 0);
	sb_proc_keep(pid, 1);
	return pid;
}

/* The worker's final line, checked against the sandbox as it is now. */
static void check_final(int w, const char *log, long totals[3])
{
	char name[16], state[16];
	long long last_exec;
	long ops, ok, refused;
	const char *line = strstr(log, "final ");

	cr_assert_not_null(line, "worker %d wrote no final line:\n%s", w, log);
	cr_assert_eq(sscanf(line, "final %15s %15s %lld %ld %ld %ld", name, state, &last_exec, &ops, &ok, &refused), 6);
	totals[0] += ops;
	totals[1] += ok;
	totals[2] += refused;
	struct tu_run r = tu_sandbench(f.dir, NULL, "inspect", name, "--json", NULL);
	if (!strcmp(state, "absent")) {
		cr_assert_neq(r.status, 0, "%s should be gone: %s", name, r.out);
		cr_assert(one_clear_line(r.err), "%s", r.err);
	} else {
		cr_assert_eq(r.status, 0, "%s should be %s: %s", name, state, r.err);
		json_t *doc = json_loads(r.out, 0, NULL);
		cr_assert_not_null(doc, "a corrupt record of %s: %s", name, r.out);
		cr_assert_str_eq(json_string_value(json_object_get(doc, "state")), state, "%s", name);
		/* activity is not lost: the last exec or session counts */
		cr_assert_geq(json_integer_value(json_object_get(doc, "last_activity")), last_exec, "%s", name);
		json_decref(doc);
	}
	tu_run_free(&r);
}

Test(stress, eight_clis_workbench_and_reaper)
{
	char *logs[WORKERS];
	pid_t *pids = workers;
	const char *argv[] = { "--root", f.dir, "tui", NULL };
	struct tui *t = bench = tui_start(40, 120, argv, NULL);
	long totals[3] = { 0, 0, 0 };

	cr_assert_not_null(t);
	cr_assert_eq(tui_wait_text(t, "Enter shell", 30000), 0, "%s", tui_screen(t));
	reaper = start_reaper();
	for (int w = 0; w < WORKERS; w++) {
		logs[w] = sb_strdupf("%s/worker-%d.log", f.dir, w);
		cr_assert_not_null(logs[w]);
		if ((pids[w] = fork()) == 0) {
			FILE *log = fopen(logs[w], "we");
			if (!log)
				_exit(2);
			setvbuf(log, NULL, _IONBF, 0);
			worker(w, log);
		}
		cr_assert_gt(pids[w], 0);
		sb_proc_keep(pids[w], 1);
	}
	for (int w = 0; w < WORKERS; w++) {
		int status;
		char *text = NULL;
		cr_assert_eq(waitpid(pids[w], &status, 0), pids[w]);
		sb_proc_keep(pids[w], 0);
		pids[w] = 0;
		sb_fs_read_file(&text, NULL, logs[w], 1 << 20, NULL);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %d:\n%s", w, text ? text : "");
		check_final(w, text, totals);
		free(text);
		unlink(logs[w]);
		free(logs[w]);
	}
	kill(reaper, SIGTERM);
	waitpid(reaper, NULL, 0);
	sb_proc_keep(reaper, 0);
	reaper = 0;
	/* the workbench lived through it and still answers */
	cr_assert_eq(kill(tui_pid(t), 0), 0, "the workbench died");
	tui_send(t, "q");
	bench = NULL;
	cr_assert_eq(tui_finish(t, 30000), 0, "the workbench did not quit cleanly");
	/* every record loads, and gc has nothing broken to find */
	struct tu_run r = tu_sandbench(f.dir, NULL, "ls", "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "ls --json: %s", r.out);
	json_decref(doc);
	tu_run_free(&r);
	sbf_ok(tu_sandbench(f.dir, NULL, "gc", NULL), "gc");
	sbf_assert_reconciled(&f, "after the workers");
	fprintf(stderr, "stress: %d CLIs for %d s: %ld commands, %ld succeeded, %ld refused by another's\n", WORKERS,
		seconds(), totals[0], totals[1], totals[2]);
}
