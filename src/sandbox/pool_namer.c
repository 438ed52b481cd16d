/* A warm pool member's namer (docs/pool.md): the process that sets the
 * hostname at the claim without starting one there. At boot it is started
 * inside the member (src/guest/namer.c, with CAP_SYS_ADMIN, not waited for)
 * on two FIFOs of the member's own directory: the claim writes the name into
 * one and reads "ok" and the namer's end from the other. A process start
 * inside a sandbox costs milliseconds; this costs a write and a read.
 *
 * The program reaches the guest as a file of the member's workspace, for the
 * moment of its start: no guest code runs in a member until it is claimed,
 * and the file is gone before the member can be. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

#define NAMER_IN "namer.in"          /* the claim writes the name here */
#define NAMER_OUT "namer.out"        /* and reads the namer's answer and end here */
#define NAMER_PID "namer.pid"        /* its pid inside */
#define NAMER_GUEST ".sandbench-namer" /* in the workspace while it starts */
#define NAMER_MAX (4 << 20)
#define NAMER_MS 5000

static const char *namer_program(void)
{
	static const char *const where[] = { SB_LIBEXECDIR "/sandbench-namer",
					     SB_BUILDDIR "/src/guest/sandbench-namer" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* The program into the workspace as NAMER_GUEST (a member's workspace has
 * only what its image seeds, and nothing runs there yet to race us). 1: the
 * image has a file of that name, which stays. */
static int place_program(int ws, const char *prog, struct sb_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = sb_fs_read_file(&data, &len, prog, NAMER_MAX, err);
	int fd = rc == 0 ? openat(ws, NAMER_GUEST, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500) : -1;

	if (rc == 0 && fd < 0 && errno == EEXIST) {
		sb_log("pool: the image's workspace has a '%s': no namer", NAMER_GUEST);
		rc = 1;
	} else if (rc == 0 && (fd < 0 || sb_fs_write_all(fd, data, len) < 0)) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot place the pool's namer '%s' in the workspace"), prog);
	}
	if (fd >= 0)
		close(fd);
	free(data);
	return rc;
}

/* The FIFOs, and the ends the namer gets: stdin read and write (it must
 * never see an end of file while it waits), stdout write only (its end is
 * the claim's answer). */
static int make_fifos(int dir, int *in, int *out, struct sb_error *err)
{
	int probe = -1;

	*in = *out = -1;
	if (mkfifoat(dir, NAMER_IN, 0600) < 0 || mkfifoat(dir, NAMER_OUT, 0600) < 0 ||
	    (*in = openat(dir, NAMER_IN, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (probe = openat(dir, NAMER_OUT, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (*out = openat(dir, NAMER_OUT, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = errno;
		if (probe >= 0)
			close(probe);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot make the pool's namer FIFOs"));
	}
	close(probe);
	return 0;
}

static void remove_namer(int dir)
{
	for (const char *const *f = (const char *const[]){ NAMER_IN, NAMER_OUT, NAMER_PID, NULL }; *f; f++)
		(void)unlinkat(dir, *f, 0);
}

/* 0: started; 1: not, and nothing ran (this runsc cannot start a process
 * without waiting for it); negative: it may run, the member must go. */
static int start_in(struct sb_box *b, int dir, int ws, const char *prog, struct sb_error *err)
{
	int in = -1, out = -1, rc, placed = 0;
	char *ipid = sb_path_join(b->dir, NAMER_PID);

	if (!ipid)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = make_fifos(dir, &in, &out, err)) == 0)
		placed = (rc = place_program(ws, prog, err)) == 0;
	if (placed && (rc = sb_box_backend(b, err)) == 0) {
		char *const argv[] = { "/workspace/" NAMER_GUEST, NULL };
		static const char *const caps[] = { "CAP_SYS_ADMIN", NULL };
		struct sb_backend_exec x = { .argv = argv, .cwd = "/", .caps = caps, .detach = 1, .ipid_file = ipid,
					     .proc = SB_PROC_OPTS_DEFAULT };
		struct sb_proc_result res;
		memset(&res, 0, sizeof(res));
		x.proc.stdin_fd = in;
		x.proc.stdout_fd = x.proc.stderr_fd = out;
		x.proc.timeout_ms = NAMER_MS;
		rc = b->be->exec(&res, b->be_state, sb_box_target(b), &x, err);
		if (rc == SB_ERR_PREREQ) {
			sb_log("pool: no namer in '%s': %s", b->rec.name, err->msg);
			rc = 1;
		} else if (rc == 0 && res.status != 0) {
			rc = sb_error_set(err, SB_ERR_RUNTIME, _("the pool's namer did not start (status %d)"), res.status);
		}
		sb_proc_result_clear(&res);
	}
	/* started or not, the program leaves the workspace now: a running
	 * process keeps what it executes */
	if (placed && unlinkat(ws, NAMER_GUEST, 0) < 0 && errno != ENOENT && rc >= 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot remove the pool's namer from the workspace"));
	if (rc)
		remove_namer(dir);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(ipid);
	return rc;
}

int sb_pool_namer_start(struct sb_root *root, const char *name, struct sb_error *err)
{
	const char *prog = namer_program();
	struct sb_error own;
	struct sb_box b;
	int rc, dir = -1, ws = -1;

	/* the roll-back's reason quotes the failure */
	if (!err)
		err = &own;
	if (!prog) {
		sb_log("pool: no sandbench-namer: members are named by an exec at the claim");
		return 0;
	}
	/* under the member's lock: a claim takes members without waiting for it */
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err)) < 0)
		return rc;
	if (b.rec.state != SB_STATE_RUNNING)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(b.rec.state));
	else if ((dir = open(b.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		 (ws = open(b.workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open sandbox '%s'"), name);
	else
		rc = start_in(&b, dir, ws, prog, err);
	if (dir >= 0)
		close(dir);
	if (ws >= 0)
		close(ws);
	/* a member whose namer may run without its FIFOs would keep it after
	 * its claim: it goes */
	if (rc < 0)
		sb_box_roll_back(&b, err);
	sb_box_close(&b);
	return rc < 0 ? rc : 0;
}

/* The namer's answer, read until its end (its stdout closes as it exits). */
static int await_answer(int fd, const char *name, struct sb_error *err)
{
	char buf[256];
	ssize_t len = sb_fs_read_to_end(fd, buf, sizeof(buf), NAMER_MS);

	if (len < 0)
		return sb_error_set(err, SB_ERR_TIMEOUT, _("the pool's namer did not name sandbox '%s' in time"), name);
	if (strcmp(buf, "ok\n") != 0)
		return sb_error_set(err, SB_ERR_RUNTIME, _("the pool's namer could not name sandbox '%s': %s"), name,
				    len ? buf : _("it ended"));
	return 0;
}

int sb_pool_namer_name(struct sb_box *b, struct sb_error *err)
{
	int dir = open(b->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int out = -1, in = -1, rc = 0;
	struct stat st;
	char line[SB_SANDBOX_NAME_MAX + 2];

	if (dir < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open sandbox '%s'"), b->rec.name);
	/* no namer (its boot had none, or it has gone): nothing was sent, the
	 * caller names the sandbox the slow way */
	out = openat(dir, NAMER_OUT, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (out >= 0 && fstat(out, &st) == 0 && S_ISFIFO(st.st_mode))
		in = openat(dir, NAMER_IN, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0) {
		rc = 1;
	} else {
		int n = snprintf(line, sizeof(line), "%s\n", b->rec.name);
		if (write(in, line, (size_t)n) != n)
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot pass sandbox '%s' its name"), b->rec.name);
		close(in);
		if (rc == 0 && (rc = await_answer(out, b->rec.name, err)) == 0)
			sb_log("pool: '%s' named by its namer", b->rec.name);
	}
	if (out >= 0)
		close(out);
	remove_namer(dir);
	close(dir);
	return rc;
}
