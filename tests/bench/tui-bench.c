/* The workbench benchmark driver (run by tests/bench/bench-tui):
 *  1. a root with 1,000 sandbox records: time to the first full frame, CPU
 *     per refresh (re-read of every record, sort, render), peak RSS;
 *  2. embedded-terminal throughput: `seq 1 200000` in an attached shell until
 *     the last line shows, and the same in a tmux pane running
 *     `sandbench shell` on the same sandbox, in the same run;
 *  3. the cost of mirroring a session: `seq 1 200000` sent to an agent
 *     session and read back to its prompt through the library, unwatched and
 *     while the workbench mirrors it (time until the prompt, and the
 *     workbench's CPU for the flood), medians of RUNS each, alternating;
 *  4. review and cleanup at scale: 1,000 records of which 20 run, the
 *     first frame (with the live resources of the running ones) against
 *     `sandbench ls --json` of the same root, one query keystroke, and a
 *     bulk remove of 100 marked sandboxes against 100 `sandbench rm` in a
 *     shell loop, with the workbench's CPU and peak RSS.
 * Prints one line per measurement. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "harness.h"
#include "image/bootstrap.h"
#include "sandbox/record.h"
#include "base/root.h"
#include "sandbox/sandbox.h"
#include "session/session.h"
#include "testutil.h"

#define RECORDS 1000
#define REFRESHES 50
#define WAIT 60000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "bench-tui: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

/* utime + stime of pid in ms */
static double cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	/* fields after ")": state(3) ... utime(14) stime(15) */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
		return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

static long peak_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void make_records(const char *dir)
{
	struct sb_root *root;
	struct sb_error err;
	long long now = sb_clock_now();

	if (sb_root_open(&root, dir, &err) < 0)
		die("root", err.msg);
	for (int i = 0; i < RECORDS; i++) {
		struct sb_record rec = { 0 };
		char *sdir, *act;
		rec.schema = SB_RECORD_SCHEMA;
		snprintf(rec.name, sizeof(rec.name), "bench-%04d", i);
		snprintf(rec.id, sizeof(rec.id), "sb-%016x", i);
		rec.created = now - i;
		rec.image_ref = i % 2 ? "docker.io/library/python:3.12" : "localhost/sandbench/default:latest";
		snprintf(rec.image_digest, sizeof(rec.image_digest), "sha256:%064d", i % 7);
		rec.kind = i % 3 ? SB_KIND_TEMPORARY : SB_KIND_PERMANENT;
		rec.idle_timeout = rec.kind == SB_KIND_TEMPORARY ? 86400 : 0;
		rec.expiry_action = SB_EXPIRY_RM;
		rec.network = i % 4 == 0;
		rec.exchange = 1;
		rec.memory = 512ULL << 20;
		rec.owner = i % 5 ? "plugin:search" : "";
		rec.state = i % 2 ? SB_STATE_STOPPED : SB_STATE_CREATED;
		rec.reason = "benchmark record";
		rec.state_changed = now;
		sdir = sb_strdupf("%s/sandboxes/%s", sb_root_path(root), rec.name);
		act = sb_strdupf("%s/activity", sdir);
		if (sb_fs_mkdirs(sdir, 0700, &err) < 0 || sb_record_save(root, &rec, &err) < 0)
			die("record", err.msg);
		close(open(act, O_WRONLY | O_CREAT, 0600));
		free(sdir);
		free(act);
	}
	sb_root_close(root);
}

static void bench_records(void)
{
	char *dir = tu_tempdir("benchtui");
	const char *argv[] = { "--root", dir, "tui", "--readonly", NULL };
	double t0, first, cpu0, cpu1, wall0, wall1;
	struct tui *t;

	make_records(dir);
	t0 = now_ms();
	t = tui_start(40, 120, argv, NULL);
	if (!t || tui_wait_text(t, "1000 sandboxes", WAIT) < 0 || tui_wait_text(t, "q quit", WAIT) < 0 ||
	    tui_wait_line_start(t, "bench-0000", WAIT) < 0)
		die("the first frame did not come", NULL);
	first = now_ms() - t0;
	printf("records                 %d\n", RECORDS);
	printf("first full frame        %.1f ms wall, %.0f ms CPU   (target < 100 ms)\n", first, cpu_ms(tui_pid(t)));
	/* each round: refresh (re-read every record), reverse the sort, wait for the new frame */
	cpu0 = cpu_ms(tui_pid(t));
	wall0 = now_ms();
	for (int i = 0; i < REFRESHES; i++) {
		tui_send(t, "\x12O");
		if (tui_wait_text(t, i % 2 ? "NAME▲" : "NAME▼", WAIT) < 0)
			die("refresh did not show", NULL);
	}
	wall1 = now_ms();
	cpu1 = cpu_ms(tui_pid(t));
	printf("CPU per refresh         %.2f ms   (target < 10 ms; %d refreshes of %d records, wall %.1f ms each)\n",
	       (cpu1 - cpu0) / REFRESHES, REFRESHES, RECORDS, (wall1 - wall0) / REFRESHES);
	printf("peak RSS                %.1f MB   (target < 30 MB)\n", peak_rss_kb(tui_pid(t)) / 1024.0);
	tui_send(t, "q");
	tui_finish(t, WAIT);
	tu_remove(dir);
	free(dir);
}

static int tmux_has_line(const char *session, const char *prefix)
{
	char *out = tu_sh_out("tmux capture-pane -p -t %s", session);
	int found = 0;

	for (char *line = out; out && line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line + strspn(line, " "), prefix, strlen(prefix)))
			found = 1;
	free(out);
	return found;
}

static double tmux_wait(const char *session, const char *prefix)
{
	double t0 = now_ms();
	struct timespec tick = { 0, 20 * 1000000 };

	/* tmux offers no event for "text appeared": poll its screen every 20 ms
	 * (each poll is a tmux client process: polling faster would steal the
	 * CPU that tmux itself needs on two cores) */
	while (!tmux_has_line(session, prefix)) {
		if (now_ms() - t0 > WAIT)
			die("tmux did not show", prefix);
		nanosleep(&tick, NULL);
	}
	return now_ms() - t0;
}

static void bench_throughput(void)
{
	char *dir = tu_tempdir("benchtp");
	struct sb_root *root;
	struct sb_bootstrap_opts bo = { .kind = SB_BOOTSTRAP_BUSYBOX };
	struct sb_bootstrap_result res;
	struct sb_sandbox_spec spec = { .name = "tp", .kind = SB_KIND_PERMANENT, .network = -1 };
	struct sb_error err;
	const char *argv[] = { "--root", dir, NULL };
	char *bin = tu_buildpath("sandbench");
	struct tui *t;
	double t0, ours, theirs, in_tmux;

	if (sb_root_open(&root, dir, &err) < 0 || sb_image_bootstrap(&res, root, &bo, &err) < 0)
		die("image", err.msg);
	spec.image = res.image.digest;
	if (sb_sandbox_process_init(&err) < 0 || sb_sandbox_create(NULL, root, &spec, &err) < 0)
		die("sandbox", err.msg);

	t = tui_start(40, 120, argv, NULL);
	if (!t || tui_wait_text(t, "running", WAIT) < 0)
		die("workbench", NULL);
	tui_send(t, "\r");
	if (tui_wait_text(t, "[1:tp]", WAIT) < 0 || tui_wait_text(t, "#", WAIT) < 0)
		die("no shell prompt in the workbench", NULL);
	t0 = now_ms();
	tui_send(t, "seq 1 200000\r");
	if (tui_wait_line_start(t, "200000", WAIT) < 0)
		die("the last line did not show in the workbench", NULL);
	ours = now_ms() - t0;
	tui_send(t, "exit\r");
	tui_wait_text(t, "shell closed", WAIT);
	tui_send(t, "q");
	tui_finish(t, WAIT);

	/* the same shell in a plain tmux pane */
	if (tu_sh("tmux new-session -d -s sbbench-tp -x 120 -y 40 '%s --root %s shell tp'", bin, dir) != 0)
		die("tmux", NULL);
	tmux_wait("sbbench-tp", "/");   /* the prompt */
	t0 = now_ms();
	tu_sh("tmux send-keys -t sbbench-tp 'seq 1 200000' Enter");
	tmux_wait("sbbench-tp", "200000");
	theirs = now_ms() - t0;
	tu_sh("tmux kill-session -t sbbench-tp");

	/* the workbench's embedded shell inside a tmux pane of the same size: the
	 * same outer terminal for both, so only the embedding differs */
	if (tu_sh("tmux new-session -d -s sbbench-wb -x 120 -y 40 '%s --root %s'", bin, dir) != 0)
		die("tmux", NULL);
	tmux_wait("sbbench-wb", "tp ");
	tu_sh("tmux send-keys -t sbbench-wb Enter");
	tmux_wait("sbbench-wb", "/");   /* the prompt, in the embedded shell */
	t0 = now_ms();
	tu_sh("tmux send-keys -t sbbench-wb 'seq 1 200000' Enter");
	tmux_wait("sbbench-wb", "200000");
	in_tmux = now_ms() - t0;
	tu_sh("tmux send-keys -t sbbench-wb C-g q");
	tu_sh("tmux kill-session -t sbbench-wb 2>/dev/null || true");

	printf("seq 1 200000, tmux pane with sandbench shell      %.0f ms\n", theirs);
	printf("seq 1 200000, workbench shell in a tmux pane      %.0f ms   (target: <= the line above)\n", in_tmux);
	printf("seq 1 200000, workbench read by the test harness  %.0f ms   (libvterm in the test process as the outer terminal)\n",
	       ours);

	sb_sandbox_remove(root, "tp", SB_REMOVE_FORCE, NULL);
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
	free(bin);
}

#define RUNS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sends seq 1 last as the agent and reads until its prompt; the elapsed ms. */
static double flood(struct sb_root *root, struct sb_session *s, int last, unsigned long long *bytes)
{
	char line[64];
	unsigned long long off;
	struct sb_session_read_opts ro = { .max_wait_ms = WAIT };
	struct sb_session_read_result rr;
	struct sb_error err;
	double t0 = now_ms();

	snprintf(line, sizeof(line), "seq 1 %d\n", last);
	if (sb_session_send(s, &off, line, strlen(line), SB_SOURCE_AGENT, &err) < 0)
		die("session send", err.msg);
	ro.since = (long long)off;
	if (sb_session_read(&rr, root, "mr", "0", &ro, &err) < 0 || rr.reason != SB_READ_PROMPT)
		die("session read", rr.reason != SB_READ_PROMPT ? "no prompt" : err.msg);
	*bytes = rr.offset - rr.since;
	sb_session_read_result_clear(&rr);
	return now_ms() - t0;
}

static void bench_mirror(void)
{
	char *dir = tu_tempdir("benchmr"), want[16];
	struct sb_root *root;
	struct sb_bootstrap_opts bo = { .kind = SB_BOOTSTRAP_BUSYBOX };
	struct sb_bootstrap_result res;
	struct sb_sandbox_spec spec = { .name = "mr", .kind = SB_KIND_PERMANENT, .network = -1 };
	struct sb_session_opts so = { 0 };
	struct sb_session_info info;
	struct sb_session *s;
	struct sb_error err;
	const char *argv[] = { "--root", dir, NULL };
	double alone[RUNS], watched[RUNS], shown[RUNS], cpu[RUNS];
	unsigned long long bytes = 0;
	struct tui *t;

	if (sb_root_open(&root, dir, &err) < 0 || sb_image_bootstrap(&res, root, &bo, &err) < 0)
		die("image", err.msg);
	spec.image = res.image.digest;
	if (sb_sandbox_process_init(&err) < 0 || sb_sandbox_create(NULL, root, &spec, &err) < 0 ||
	    sb_session_start(&info, root, "mr", NULL, &so, &err) < 0 || sb_session_connect(&s, root, "mr", "0", &err) < 0)
		die("session", err.msg);
	sb_session_info_clear(&info);
	t = tui_start(40, 120, argv, NULL);
	if (!t || tui_wait_row(t, "^mr ", "running", WAIT) < 0)
		die("workbench", NULL);
	tui_send(t, "4");
	if (tui_wait_row(t, "^0 ", "agent", WAIT) < 0)
		die("no session in the workbench", NULL);
	for (int i = 0; i < RUNS; i++) {
		alone[i] = flood(root, s, 200000, &bytes);
		tui_send(t, "\r");
		if (tui_wait_text(t, "watching session 0 of mr", WAIT) < 0)
			die("the mirror did not open", NULL);
		double c0 = cpu_ms(tui_pid(t)), t0 = now_ms();
		watched[i] = flood(root, s, 200000 + 1 + i, &bytes);
		snprintf(want, sizeof(want), "%d", 200000 + 1 + i);
		if (tui_wait_line_start(t, want, WAIT) < 0)
			die("the last line did not show in the mirror", want);
		shown[i] = now_ms() - t0;
		cpu[i] = cpu_ms(tui_pid(t)) - c0;
		tui_send(t, "q");   /* not watching for the next unwatched run */
		if (tui_wait_gone(t, "watching session 0 of mr", WAIT) < 0)
			die("the mirror did not close", NULL);
	}
	double a = median(alone, RUNS), w = median(watched, RUNS);
	printf("session flood (%llu bytes) to its prompt, unwatched       %.0f ms (median of %d)\n", bytes, a, RUNS);
	printf("session flood to its prompt, mirrored by the workbench    %.0f ms (ratio %.2f)\n", w, w / a);
	printf("session flood, until the mirror shows its last line       %.0f ms\n", median(shown, RUNS));
	printf("session flood, workbench CPU while mirroring              %.0f ms (%.1f ms per MB)\n", median(cpu, RUNS),
	       median(cpu, RUNS) / ((double)bytes / 1e6));
	tui_send(t, "q");
	tui_finish(t, WAIT);
	sb_session_close(s);
	sb_sandbox_remove(root, "mr", SB_REMOVE_FORCE, NULL);
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
}

#define RUNNING 20

static double run_ms(const char *cmd)
{
	double t0 = now_ms();

	if (tu_sh("%s", cmd) != 0)
		die("command failed", cmd);
	return now_ms() - t0;
}

/* A root with RECORDS records, the first RUNNING of them real running sandboxes. */
static char *scale_root(const char *tag, int running)
{
	char *dir = tu_tempdir(tag);
	struct sb_root *root;
	struct sb_bootstrap_opts bo = { .kind = SB_BOOTSTRAP_BUSYBOX };
	struct sb_bootstrap_result res;
	struct sb_error err;

	make_records(dir);
	if (sb_root_open(&root, dir, &err) < 0 || sb_image_bootstrap(&res, root, &bo, &err) < 0)
		die("image", err.msg);
	for (int i = 0; i < running; i++) {
		char name[32];
		snprintf(name, sizeof(name), "run-%02d", i);
		struct sb_sandbox_spec spec = { .name = name, .kind = SB_KIND_PERMANENT, .network = -1,
						.image = res.image.digest };
		if (sb_sandbox_process_init(&err) < 0 || sb_sandbox_create(NULL, root, &spec, &err) < 0)
			die("sandbox", err.msg);
	}
	sb_root_close(root);
	return dir;
}

static void drop_root(char *dir)
{
	struct sb_root *root;

	if (sb_root_open(&root, dir, NULL) == 0) {
		for (int i = 0; i < RUNNING; i++) {
			char name[32];
			snprintf(name, sizeof(name), "run-%02d", i);
			sb_sandbox_remove(root, name, SB_REMOVE_FORCE, NULL);
		}
		sb_root_close(root);
	}
	tu_remove(dir);
	free(dir);
}

static void bench_scale(void)
{
	char *dir = scale_root("benchsc", RUNNING), *loop = scale_root("benchsl", 0), *bin = tu_buildpath("sandbench");
	const char *argv[] = { "--root", dir, NULL };
	double frame[RUNS], ls[RUNS], key[RUNS];
	char cmd[1024];
	struct tui *t = NULL;

	for (int i = 0; i < RUNS; i++) {
		snprintf(cmd, sizeof(cmd), "%s --root %s ls --json >/dev/null", bin, dir);
		ls[i] = run_ms(cmd);
		double t0 = now_ms();
		t = tui_start(40, 120, argv, NULL);
		if (!t || tui_wait_text(t, "1020 sandboxes, 20 running", WAIT) < 0 || tui_wait_line_start(t, "bench-0000", WAIT) < 0)
			die("the first frame did not come", NULL);
		frame[i] = now_ms() - t0;
		if (i + 1 < RUNS) {
			tui_send(t, "q");
			tui_finish(t, WAIT);
		}
	}
	/* one keystroke of a query: "bench-01" shows 100, "bench-012" 10 */
	for (int i = 0; i < RUNS; i++) {
		tui_send(t, "/\x15" "bench-01");
		if (tui_wait_text(t, "Sandboxes (100)", WAIT) < 0)
			die("the filter did not apply", NULL);
		double t0 = now_ms();
		tui_send(t, "2");
		if (tui_wait_text(t, "Sandboxes (10)", WAIT) < 0)
			die("the keystroke did not apply", NULL);
		key[i] = now_ms() - t0;
		tui_send(t, "\x1b");
		if (tui_wait_text(t, "Sandboxes (1020)", WAIT) < 0)
			die("the filter did not clear", NULL);
	}
	/* bulk remove of 100 marked ones, one confirmation */
	double cpu0 = cpu_ms(tui_pid(t)), t0 = now_ms();
	tui_send(t, ":rm bench-01*\r");
	if (tui_wait_text(t, "remove 100 marked sandboxes?", WAIT) < 0)
		die("no confirmation", tui_screen(t));
	tui_send(t, "y");
	if (tui_wait_text(t, "remove: all 100 done", 10 * WAIT) < 0)
		die("the bulk remove did not finish", tui_screen(t));
	double bulk = now_ms() - t0, bulk_cpu = cpu_ms(tui_pid(t)) - cpu0;
	long rss = peak_rss_kb(tui_pid(t));
	tui_send(t, "q");
	tui_finish(t, WAIT);
	snprintf(cmd, sizeof(cmd), "for i in $(seq 100 199); do %s --root %s rm bench-0$i >/dev/null || exit 1; done", bin,
		 loop);
	double shell = run_ms(cmd);

	double f = median(frame, RUNS), l = median(ls, RUNS);
	printf("records %d, running %d\n", RECORDS + RUNNING, RUNNING);
	printf("first frame                          %.0f ms   ls --json %.0f ms   ratio %.2f   (medians of %d)\n", f, l, f / l,
	       RUNS);
	printf("query keystroke (100 -> 10 rows)     %.1f ms   (median of %d)\n", median(key, RUNS), RUNS);
	printf("bulk remove of 100 marked            %.0f ms   100 x sandbench rm %.0f ms   ratio %.2f   (one run each)\n",
	       bulk, shell, bulk / shell);
	printf("workbench CPU during the remove      %.0f ms (its job children not counted)   peak RSS %.1f MB\n",
	       bulk_cpu, rss / 1024.0);
	drop_root(dir);
	drop_root(loop);
	free(bin);
}

int main(int argc, char **argv)
{
	int which = argc > 1 ? atoi(argv[1]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (which == 0 || which == 1)
		bench_records();
	if (which == 0 || which == 2)
		bench_throughput();
	if (which == 0 || which == 3)
		bench_mirror();
	if (which == 0 || which == 4)
		bench_scale();
	return 0;
}
