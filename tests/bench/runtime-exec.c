/* bench-runtime's driver for the library path (what the workbench uses, no
 * CLI process start): runs `true` RUNS times in sandbox NAME through
 * sb_sandbox_exec and prints the median in milliseconds. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/root.h"
#include "sandbox/sandbox.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct sb_root *root;
	struct sb_error err;
	char *cmd[] = { "true", NULL };
	int runs = argc > 3 ? atoi(argv[3]) : 10;

	if (argc < 3 || runs < 1 || runs > 1000) {
		fprintf(stderr, "usage: runtime-exec ROOT NAME [RUNS]\n");
		return 2;
	}
	double *ms = calloc((size_t)runs, sizeof(*ms));
	if (!ms || sb_sandbox_process_init(&err) < 0 || sb_root_open(&root, argv[1], &err) < 0) {
		fprintf(stderr, "runtime-exec: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		struct sb_exec_opts opts = { .argv = cmd, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
		struct sb_exec_result res;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (sb_sandbox_exec(&res, root, argv[2], &opts, &err) < 0 || res.exit_code != 0) {
			fprintf(stderr, "runtime-exec: %s\n", err.msg);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms[i] = (double)(b.tv_sec - a.tv_sec) * 1000 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		sb_exec_result_clear(&res);
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp);
	printf("%.2f\n", runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2);
	free(ms);
	sb_root_close(root);
	return 0;
}
