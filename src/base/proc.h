/* Running helper programs (runsc, mount helpers) with a deadline, never
 * through a shell, with bounded capture of their output. */
#ifndef SB_PROC_H
#define SB_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

struct sb_proc_opts {
	int timeout_ms;          /* <= 0: no deadline */
	size_t capture_max;      /* bytes kept of stdout and of stderr each; 0: 64 KiB */
	int stdin_fd;            /* -1: /dev/null */
	int stdout_fd;           /* -1: captured; otherwise inherited as given */
	int stderr_fd;           /* -1: captured */
	/* With stdout_fd or stderr_fd given: the child writes to a pipe and what
	 * it writes is copied to that fd as it comes, and captured (capture_max)
	 * as well. A reader that goes away (EPIPE) closes the pipe: the child sees
	 * EPIPE as it would have on the fd itself. */
	int tee;
	/* With tee: stderr's latest write is passed on only when more comes or
	 * after this many ms of quiet; at the child's exit it is left in the
	 * result's held, for the caller to pass on or not (what `runsc exec`
	 * itself says as it fails shares the command's stderr). 0: none. */
	int hold_tail_ms;
	/* Runs in the child between fork and exec (namespace set-up); a non-zero
	 * return makes the child exit 126 without running argv. */
	int (*pre_exec)(void *arg);
	void *pre_exec_arg;
	/* Runs here once that child exists (with pre_exec_arg): to close what
	 * was opened for the child alone. */
	void (*after_fork)(void *arg);
};

struct sb_proc_result {
	int status;              /* exit status, or 128+signal */
	int timed_out;
	char *out;               /* captured stdout, NUL-terminated ("" if none) */
	char *errout;            /* captured stderr */
	size_t out_len, err_len;
	unsigned long long out_total, err_total;   /* bytes written to each captured stream, kept or not */
	char *held;              /* hold_tail_ms: stderr's last write, not passed on (NULL: none) */
	size_t held_len;
};

#define SB_PROC_OPTS_DEFAULT { .timeout_ms = 60000, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 }

/* Runs argv[0] (a path, or a name searched in PATH) and waits for it or the
 * deadline; on the deadline the child's process group is killed. Returns 0 when
 * the program ran (whatever its exit status: see out->status), negative when it
 * could not be started or waited for. */
int sb_proc_run(struct sb_proc_result *out, char *const argv[], const struct sb_proc_opts *opts,
		struct sb_error *err);
void sb_proc_result_clear(struct sb_proc_result *r);
/* runsc leaves its sandbox, gofer and exec helpers orphaned, and `runsc delete`
 * polls until its sandbox process is reaped. A front end that makes itself a
 * child subreaper adopts those orphans; sb_proc_run then reaps them while it
 * waits, and sb_proc_reap_orphans does so on demand. */
int sb_proc_subreaper_enable(struct sb_error *err);
/* Reaps exited adopted children, never the ones marked with sb_proc_keep (the
 * caller waits for those itself) nor the child of a running sb_proc_run. */
void sb_proc_reap_orphans(void);
/* Marks (keep = 1) or unmarks a child that its owner will wait for. */
void sb_proc_keep(pid_t pid, int keep);

/* Async-signal-safe. on = 1 makes the running (and every later) sb_proc_run
 * kill its child and return SB_ERR_INTERRUPTED (a front end's SIGINT handler
 * calls it); on = 0 lets programs run again (for the clean-up after it). */
void sb_proc_interrupt(int on);

/* State letter ('R', 'S', 'Z', ...) and start time (clock ticks after boot: with
 * the pid it names one process for good) of pid; -1 when it does not exist. */
int sb_proc_stat(pid_t pid, char *state, unsigned long long *start_time);

/* Last non-empty line of a program's stderr (for one-line error messages). */
const char *sb_proc_last_line(const struct sb_proc_result *r, char *buf, size_t size);

#endif
