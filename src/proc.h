/* Running helper programs (runsc, mount helpers) with a deadline, never
 * through a shell, with bounded capture of their output. */
#ifndef SB_PROC_H
#define SB_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct sb_proc_opts {
	int timeout_ms;          /* <= 0: no deadline */
	size_t capture_max;      /* bytes kept of stdout and of stderr each; 0: 64 KiB */
	int stdin_fd;            /* -1: /dev/null */
	int stdout_fd;           /* -1: captured; otherwise inherited as given */
	int stderr_fd;           /* -1: captured */
	/* Runs in the child between fork and exec (namespace set-up); a non-zero
	 * return makes the child exit 126 without running argv. */
	int (*pre_exec)(void *arg);
	void *pre_exec_arg;
};

struct sb_proc_result {
	int status;              /* exit status, or 128+signal */
	int timed_out;
	char *out;               /* captured stdout, NUL-terminated ("" if none) */
	char *errout;            /* captured stderr */
	size_t out_len, err_len;
};

#define SB_PROC_OPTS_DEFAULT { .timeout_ms = 60000, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 }

/* Runs argv[0] (a path, or a name searched in PATH) and waits for it or the
 * deadline; on the deadline the child's process group is killed. Returns 0 when
 * the program ran (whatever its exit status: see out->status), negative when it
 * could not be started or waited for. */
int sb_proc_run(struct sb_proc_result *out, char *const argv[], const struct sb_proc_opts *opts,
		struct sb_error *err);
void sb_proc_result_clear(struct sb_proc_result *r);
/* Last non-empty line of a program's stderr (for one-line error messages). */
const char *sb_proc_last_line(const struct sb_proc_result *r, char *buf, size_t size);

#endif
