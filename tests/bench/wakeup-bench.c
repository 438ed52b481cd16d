/* bench-wakeup's driver: the wake-up of a paused sandbox, measured as the
 * time from an input sent through an already open session to the first
 * output of its command (the input resumes the sandbox by itself), against
 * raw `runsc resume` of a sandbox of the same kind, sb_sandbox_resume alone
 * (without the runsc CLI on a measured runsc build, docs/pause.md, and
 * through the CLI as another build would: a copy of runsc, whose build
 * differs), and the same round trip through the session when the sandbox is
 * not paused. Usage: wakeup-bench SANDBENCH ROOT IMAGE [N] (bench-wakeup
 * makes the root and the image). */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/sandbox.h"
#include "session/session.h"
#include "benchutil.h"

#define now_ms bench_now_ms

static const char *bin, *root_dir, *image;
static struct sb_root *root;

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "wakeup-bench: %s: %s\n", what, msg ? msg : "");
	exit(1);
}

/* the quantile of a copy: the runs keep their order */
static double pct(const double *v, int n, double p)
{
	double *c = malloc((size_t)n * sizeof(*c));
	if (!c)
		die("memory", NULL);
	memcpy(c, v, (size_t)n * sizeof(*c));
	double r = bench_pct(c, n, p);
	free(c);
	return r;
}

static void report(const char *what, const double *v, int n, double raw_p50)
{
	double p50 = pct(v, n, 0.5);

	printf("| %-52s | %4d | %8.2f | %8.2f | %5.2fx |\n", what, n, p50, pct(v, n, 0.99), p50 / raw_p50);
}

static void run(const char *cmd)
{
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("command failed", cmd);
}

static void create(const char *name)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s --root %s create %s --image %s --permanent --network off >/dev/null", bin,
		 root_dir, name, image);
	run(cmd);
}

/* Sends the input that prints marker, then takes items until the marker has
 * come out (the terminal's echo of the input shows the expression, not it). */
static double first_output(struct sb_session *s, int i)
{
	char input[64], marker[32], seen[4096];
	size_t have = 0;
	struct sb_error err;
	unsigned long long off;

	snprintf(input, sizeof(input), "echo $((%d+1))w\n", i);
	snprintf(marker, sizeof(marker), "%dw", i + 1);
	double t0 = now_ms();
	if (sb_session_send(s, &off, input, strlen(input), SB_SOURCE_AGENT, &err) < 0)
		die("send", err.msg);
	for (;;) {
		struct sb_session_item it;
		int got;
		while ((got = sb_session_next(s, &it, &err)) == 1) {
			if (it.kind == SB_ITEM_END)
				die("session", "ended");
			if (it.kind != SB_ITEM_OUTPUT)
				continue;
			size_t n = it.len < sizeof(seen) - 1 - have ? it.len : sizeof(seen) - 1 - have;
			memcpy(seen + have, it.data, n);
			seen[have += n] = '\0';
			if (strstr(seen, marker))
				return now_ms() - t0;
		}
		if (got < 0)
			die("next", err.msg);
		struct pollfd p = { .fd = sb_session_fd(s), .events = POLLIN };
		poll(&p, 1, 10000);
	}
}

static void pause_box(const char *name)
{
	struct sb_error err;

	if (sb_sandbox_pause(root, name, &err) < 0)
		die("pause", err.msg);
}

/* n times: pause name, then the time of sb_sandbox_resume alone */
static void resumes(double *out, int n, const char *name)
{
	struct sb_error err;

	for (int i = 0; i < n; i++) {
		pause_box(name);
		double t0 = now_ms();
		if (sb_sandbox_resume(root, name, &err) < 0)
			die("resume", err.msg);
		out[i] = now_ms() - t0;
	}
}

static void raw_runsc(const char *verb, const char *id)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "runsc --root=%s/runsc %s %s", root_dir, verb, id);
	run(cmd);
}

int main(int argc, char **argv)
{
	struct sb_error err;
	struct sb_session *s;
	struct sb_session_info info;
	struct sb_sandbox_info sbi;

	if (argc < 4)
		die("usage", "wakeup-bench SANDBENCH ROOT IMAGE [N]");
	bin = argv[1], root_dir = argv[2], image = argv[3];
	int n = argc > 4 ? atoi(argv[4]) : 50;
	if (n < 2 || sb_root_open(&root, root_dir, &err) < 0)
		die("root", n < 2 ? "N must be 2 or more" : err.msg);
	double *raw = calloc((size_t)n, sizeof(double)), *lib = calloc((size_t)n, sizeof(double));
	double *wake = calloc((size_t)n, sizeof(double)), *warm = calloc((size_t)n, sizeof(double));
	double *cli = calloc((size_t)n, sizeof(double));
	if (!raw || !lib || !wake || !warm || !cli)
		die("memory", NULL);

	/* raw runsc on a sandbox of the same kind, paused and resumed by runsc alone */
	create("raw");
	if (sb_sandbox_inspect(&sbi, root, "raw", &err) < 0)
		die("inspect", err.msg);
	for (int i = 0; i < n; i++) {
		raw_runsc("pause", sbi.rec.id);
		double t0 = now_ms();
		raw_runsc("resume", sbi.rec.id);
		raw[i] = now_ms() - t0;
	}
	sb_sandbox_info_clear(&sbi);

	create("wake");
	resumes(lib, n, "wake");
	/* the same through the runsc CLI: a copy of runsc is another build */
	char cmd[1024], *other = sb_strdupf("%s/runsc-other", root_dir);
	if (!other)
		die("memory", NULL);
	snprintf(cmd, sizeof(cmd), "cp \"$(command -v runsc)\" %s", other);
	run(cmd);
	setenv("SANDBENCH_RUNSC", other, 1);
	resumes(cli, n, "wake");
	unsetenv("SANDBENCH_RUNSC");
	unlink(other);
	free(other);

	if (sb_session_start(&info, root, "wake", "0", NULL, &err) < 0)
		die("session start", err.msg);
	sb_session_info_clear(&info);
	if (sb_session_connect(&s, root, "wake", "0", &err) < 0 || sb_session_status(s, &info, &err) < 0 ||
	    sb_session_subscribe(s, info.offset, &err) < 0)
		die("subscribe", err.msg);
	sb_session_info_clear(&info);
	for (int i = 0; i < 5; i++)
		first_output(s, i);
	for (int i = 0; i < n; i++)
		warm[i] = first_output(s, 1000 + i);
	for (int i = 0; i < n; i++) {
		pause_box("wake");
		wake[i] = first_output(s, 2000 + i);
	}
	sb_session_close(s);
	if (sb_sandbox_inspect(&sbi, root, "wake", &err) < 0 || sbi.rec.state != SB_STATE_RUNNING)
		die("state", "the session's input did not leave the sandbox running");
	sb_sandbox_info_clear(&sbi);

	double raw_p50 = pct(raw, n, 0.5);
	printf("| %-52s | %4s | %8s | %8s | %6s |\n", "wake-up (ms)", "n", "p50", "p99", "/ raw");
	printf("|%s|------|----------|----------|--------|\n", "------------------------------------------------------");
	report("raw runsc resume ID (paused by runsc pause)", raw, n, raw_p50);
	report("sb_sandbox_resume, direct (urpc + record, timeline)", lib, n, raw_p50);
	report("sb_sandbox_resume, through the CLI (another build)", cli, n, raw_p50);
	report("paused: session input -> first output (the wake-up)", wake, n, raw_p50);
	report("running: session input -> first output (no wake)", warm, n, raw_p50);
	printf("goal: wake-up p50 < 25 ms; overhead over raw runsc resume: p50 %+.2f ms\n", pct(wake, n, 0.5) - raw_p50);
	free(raw), free(lib), free(wake), free(warm), free(cli);
	sb_root_close(root);
	return 0;
}
