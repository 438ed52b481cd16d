/* bench-session's driver: in one run on one sandbox, the round trip of
 * `true` through a session (library over the socket; the two CLI calls)
 * against `sandbench exec` and raw `runsc exec`; `seq 1 1000000` through a
 * session read against the same in a tmux pane; memory per idle session
 * (holder and its runsc exec apart), and with 100 sessions in 10 sandboxes.
 * Usage: session-bench ROOT IMAGE (bench-session makes both). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "sandbox/sandbox.h"
#include "session/session.h"
#include "testutil.h"
#include "benchutil.h"

#define now_ms bench_now_ms
#define pct bench_pct

static const char *root_dir, *image, *bin;
static struct sb_root *root;

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "session-bench: %s: %s\n", what, msg ? msg : "");
	exit(1);
}

static void report(const char *what, double *v, int n, double base_p50)
{
	double p50 = pct(v, n, 0.5), p99 = pct(v, n, 0.99), iqr = pct(v, n, 0.75) - pct(v, n, 0.25);

	printf("%-34s n=%-4d p50 %8.3f ms  p99 %8.3f ms  IQR %7.3f ms", what, n, p50, p99, iqr);
	if (base_p50 > 0)
		printf("  exec/this %6.1fx", base_p50 / p50);
	printf("\n");
}

static int sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *sh_out(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	static char buf[4096];
	size_t n = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;

	if (p)
		pclose(p);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* send `cmd`, then the subscription's items until a prompt event after it */
static double round_trip(struct sb_session *s, const char *cmd, size_t *bytes)
{
	struct sb_error err;
	unsigned long long off;
	double t0 = now_ms();

	if (sb_session_send(s, &off, cmd, strlen(cmd), SB_SOURCE_AGENT, &err) < 0)
		die("send", err.msg);
	for (;;) {
		struct sb_session_item it;
		int got;
		while ((got = sb_session_next(s, &it, &err)) == 1) {
			if (it.kind == SB_ITEM_OUTPUT && bytes)
				*bytes += it.len;
			if (it.kind == SB_ITEM_EVENT && it.event.type == SB_EVENT_PROMPT && it.event.offset > off &&
			    !it.event.more)
				return now_ms() - t0;
			if (it.kind == SB_ITEM_END)
				die("session", "ended");
		}
		if (got < 0)
			die("next", err.msg);
		struct pollfd p = { .fd = sb_session_fd(s), .events = POLLIN };
		poll(&p, 1, -1);
	}
}

static void start(const char *name, const char *id)
{
	struct sb_session_info info;
	struct sb_error err;

	if (sb_session_start(&info, root, name, id, NULL, &err) < 0)
		die("start", err.msg);
	sb_session_info_clear(&info);
}

static void create(const char *name)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s --root %s create %s --image %s --network off >/dev/null", bin, root_dir, name, image);
	if (sh(cmd) != 0)
		die("create", name);
}

static void latency(void)
{
	enum { N_LIB = 300, N_CLI = 40, N_EXEC = 30 };
	static double lib[N_LIB], cli[N_CLI], ex[N_EXEC], raw[N_EXEC];
	struct sb_session *s;
	struct sb_error err;
	char cmd[1024];

	create("lat");
	start("lat", "0");
	if (sb_session_connect(&s, root, "lat", "0", &err) < 0)
		die("connect", err.msg);
	struct sb_session_info info;
	if (sb_session_status(s, &info, &err) < 0 || sb_session_subscribe(s, info.offset, &err) < 0)
		die("subscribe", err.msg);
	sb_session_info_clear(&info);
	for (int i = 0; i < 20; i++)
		round_trip(s, "true\n", NULL);
	for (int i = 0; i < N_LIB; i++)
		lib[i] = round_trip(s, "true\n", NULL);
	sb_session_close(s);
	for (int i = 0; i < N_CLI; i++) {
		double t0 = now_ms();
		snprintf(cmd, sizeof(cmd), "%s --root %s session send lat 0 -- true", bin, root_dir);
		char off[64];
		snprintf(off, sizeof(off), "%s", sh_out(cmd));
		snprintf(cmd, sizeof(cmd), "%s --root %s session read lat 0 --since %s --max-wait 10 >/dev/null", bin,
			 root_dir, off);
		if (sh(cmd) != 0)
			die("cli read", off);
		cli[i] = now_ms() - t0;
	}
	for (int i = 0; i < N_EXEC; i++) {
		double t0 = now_ms();
		snprintf(cmd, sizeof(cmd), "%s --root %s exec lat true", bin, root_dir);
		if (sh(cmd) != 0)
			die("exec", NULL);
		ex[i] = now_ms() - t0;
	}
	snprintf(cmd, sizeof(cmd), "%s --root %s inspect lat --json | sed -n 's/.*\"id\": \"\\(.*\\)\".*/\\1/p'", bin,
		 root_dir);
	char id[128];
	snprintf(id, sizeof(id), "%s", sh_out(cmd));
	for (int i = 0; i < N_EXEC; i++) {
		double t0 = now_ms();
		snprintf(cmd, sizeof(cmd), "runsc --root=%s/runsc --network=none --platform=ptrace exec %s true", root_dir, id);
		if (sh(cmd) != 0)
			die("runsc exec", id);
		raw[i] = now_ms() - t0;
	}
	double exec_p50 = pct(ex, N_EXEC, 0.5);
	printf("round trip of `true` (send, read until the prompt mark with its exit code)\n");
	report("session, library over the socket", lib, N_LIB, exec_p50);
	report("session, two CLI calls", cli, N_CLI, exec_p50);
	report("sandbench exec NAME true", ex, N_EXEC, exec_p50);
	report("raw runsc exec ID true", raw, N_EXEC, exec_p50);
}

static void throughput(void)
{
	struct sb_session *s;
	struct sb_error err;
	char cmd[2048];
	size_t bytes = 0;

	if (sb_session_connect(&s, root, "lat", "0", &err) < 0)
		die("connect", err.msg);
	struct sb_session_info info;
	if (sb_session_status(s, &info, &err) < 0 || sb_session_subscribe(s, info.offset, &err) < 0)
		die("subscribe", err.msg);
	sb_session_info_clear(&info);
	double ours = round_trip(s, "/usr/bin/seq 1 1000000\n", &bytes);
	sb_session_close(s);
	/* through the CLI: send, then one read until the prompt */
	double t0 = now_ms();
	snprintf(cmd, sizeof(cmd),
		 "off=$(%s --root %s session send lat 0 -- '/usr/bin/seq 1 1000000'); %s --root %s session read lat 0 --since $off "
		 "--max-wait 600 --json | grep -c '\"reason\": \"prompt\"' >/dev/null",
		 bin, root_dir, bin, root_dir);
	if (sh(cmd) != 0)
		die("cli seq", NULL);
	double cli = now_ms() - t0;
	/* tmux: `sandbench shell` in a pane, until the last line shows */
	snprintf(cmd, sizeof(cmd), "tmux new-session -d -s sbbench-seq -x 120 -y 40 '%s --root %s shell lat'", bin, root_dir);
	if (sh(cmd) != 0)
		die("tmux", NULL);
	while (!strstr(sh_out("tmux capture-pane -p -t sbbench-seq | grep -c '#' || true"), "1"))
		poll(NULL, 0, 20);
	t0 = now_ms();
	sh("tmux send-keys -t sbbench-seq '/usr/bin/seq 1 1000000; echo seq-''done' Enter");
	/* tmux has no event for "text appeared": its screen is polled every 20 ms */
	while (strcmp(sh_out("tmux capture-pane -p -t sbbench-seq | grep -c '^seq-done' || true"), "1") != 0)
		poll(NULL, 0, 20);
	double tmux = now_ms() - t0;
	sh("tmux kill-session -t sbbench-seq");
	printf("\nseq 1 1000000 (coreutils, %zu bytes)\n", bytes);
	printf("%-34s %8.0f ms\n", "session, library", ours);
	printf("%-34s %8.0f ms\n", "session, send + read (CLI)", cli);
	printf("%-34s %8.0f ms   tmux/session %.2fx\n", "sandbench shell in tmux", tmux, tmux / ours);
}

/* RSS and PSS (kB) of pid from smaps_rollup */
static void mem(pid_t pid, long *rss, long *pss)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
	FILE *f = fopen(path, "r");
	*rss = *pss = 0;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Rss: %ld kB", rss);
		sscanf(line, "Pss: %ld kB", pss);
	}
	if (f)
		fclose(f);
}

static pid_t child_of(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	FILE *f = fopen(path, "r");
	long c = 0;
	if (f) {
		if (fscanf(f, "%ld", &c) != 1)
			c = 0;
		fclose(f);
	}
	return (pid_t)c;
}

static void memory(void)
{
	struct sb_session_info *list;
	struct sb_error err;
	size_t n;
	long hr = 0, hp = 0, rr = 0, rp = 0;

	if (sb_session_list(&list, &n, root, "lat", &err) < 0 || n == 0)
		die("list", err.msg);
	mem(list[0].pid, &hr, &hp);
	mem(child_of(list[0].pid), &rr, &rp);
	sb_session_list_free(list, n);
	printf("\nmemory of one idle session\n");
	printf("%-34s RSS %6ld kB  PSS %6ld kB\n", "holder", hr, hp);
	printf("%-34s RSS %6ld kB  PSS %6ld kB\n", "its runsc exec", rr, rp);

	char name[32], id[8];
	for (int b = 0; b < 10; b++) {
		snprintf(name, sizeof(name), "m%d", b);
		create(name);
		for (int i = 0; i < 10; i++) {
			snprintf(id, sizeof(id), "%d", i);
			start(name, id);
		}
	}
	if (sb_session_list(&list, &n, root, NULL, &err) < 0)
		die("list", err.msg);
	long sh_r = 0, sh_p = 0, sr_r = 0, sr_p = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		if (list[i].sandbox[0] != 'm' || list[i].state != SB_SESSION_RUNNING)
			continue;
		long a, b2, c, d;
		mem(list[i].pid, &a, &b2);
		mem(child_of(list[i].pid), &c, &d);
		sh_r += a, sh_p += b2, sr_r += c, sr_p += d, k++;
	}
	sb_session_list_free(list, n);
	printf("\n%ld sessions in 10 sandboxes (totals; per session)\n", k);
	printf("%-34s RSS %7ld kB  PSS %7ld kB;  PSS %5ld kB each\n", "holders", sh_r, sh_p, k ? sh_p / k : 0);
	printf("%-34s RSS %7ld kB  PSS %7ld kB;  PSS %5ld kB each\n", "runsc exec processes", sr_r, sr_p, k ? sr_p / k : 0);
}

int main(int argc, char **argv)
{
	struct sb_error err;

	if (argc != 4)
		die("usage", "session-bench BIN ROOT IMAGE");
	bin = argv[1];
	root_dir = argv[2];
	image = argv[3];
	signal(SIGPIPE, SIG_IGN);
	if (sb_root_open(&root, root_dir, &err) < 0)
		die("root", err.msg);
	sb_sandbox_process_init(NULL);
	double load[1];
	if (getloadavg(load, 1) == 1)
		printf("load average %.1f at the start\n", load[0]);
	latency();
	throughput();
	memory();
	if (getloadavg(load, 1) == 1)
		printf("load average %.1f at the end\n", load[0]);
	sb_root_close(root);
	return 0;
}
