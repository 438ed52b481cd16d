/* bench-create's driver for the library path (no CLI process start): from
 * before sb_sandbox_create of NAME from IMAGE to the first byte of `echo ok`
 * run in it by sb_sandbox_exec, read from the exec's stdout pipe by a thread
 * as it arrives. Prints "CREATE_MS FIRST_OUTPUT_MS", both from the start. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "base/root.h"
#include "benchutil.h"
#include "sandbox/sandbox.h"

static double start;

struct reader {
	int fd;
	double ms;               /* the first byte's time; -1: it was not the 'o' of ok */
};

/* The pipe's first byte, timed; the rest drained. */
static void *first_byte(void *arg)
{
	struct reader *r = arg;
	char buf[64];

	r->ms = read(r->fd, buf, 1) == 1 && buf[0] == 'o' ? bench_now_ms() - start : -1;
	while (read(r->fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sb_root *root;
	struct sb_error err;
	char *cmd[] = { "echo", "ok", NULL };
	int p[2];
	pthread_t thread;
	struct reader got;

	if (argc != 4) {
		fprintf(stderr, "usage: create-call ROOT NAME IMAGE\n");
		return 2;
	}
	if (sb_sandbox_process_init(&err) < 0 || sb_root_open(&root, argv[1], &err) < 0) {
		fprintf(stderr, "create-call: %s\n", err.msg);
		return 1;
	}
	struct sb_sandbox_spec spec = { .name = argv[2], .image = argv[3], .network = -1 };
	start = bench_now_ms();
	if (sb_sandbox_create(NULL, root, &spec, &err) < 0) {
		fprintf(stderr, "create-call: %s\n", err.msg);
		return 1;
	}
	double created = bench_now_ms() - start;
	if (pipe(p) < 0)
		return 1;
	got.fd = p[0];
	if (pthread_create(&thread, NULL, first_byte, &got) != 0)
		return 1;
	struct sb_exec_opts opts = { .argv = cmd, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = -1 };
	struct sb_exec_result res;
	int rc = sb_sandbox_exec(&res, root, argv[2], &opts, &err);
	close(p[1]);
	pthread_join(thread, NULL);
	close(p[0]);
	if (rc < 0 || res.exit_code != 0 || got.ms < 0) {
		fprintf(stderr, "create-call: echo ok: %s\n", rc < 0 ? err.msg : "no 'ok'");
		return 1;
	}
	sb_exec_result_clear(&res);
	sb_root_close(root);
	printf("%.2f %.2f\n", created, got.ms);
	return 0;
}
