/* cp through a running sandbox's own tar: runsc gives the root file system
 * exclusive file access, so the guest neither sees what the host writes
 * into its upper nor need have written its own writes there yet. The guest
 * reads and writes its tree itself; the host only makes or reads the tar
 * stream (copy_tar.c) on a pipe to an exec of `sh -c SCRIPT`, which runs on a
 * thread of its own while this one streams. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sandbox/timeline.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/proc.h"

/* exit statuses of the scripts */
enum { NO_TAR = 90, NOT_FOUND = 91, IS_DIR = 92, NOT_DIR = 93, NO_TEMP = 94 };

/* $1 path, $2 "r" for a tree: the tar of what path names (symlinks followed
 * inside the guest), named after its last component */
static const char out_script[] =
	"command -v tar >/dev/null 2>&1 || exit 90\n"
	"p=$(readlink -f -- \"$1\" 2>/dev/null) && { [ -e \"$p\" ] || [ -L \"$p\" ]; } || exit 91\n"
	"case $1 in */) [ -d \"$p\" ] || exit 93;; esac\n"
	"[ -d \"$p\" ] && [ \"$2\" != r ] && exit 92\n"
	"[ \"$p\" = / ] && cd / && exec tar -cf - .\n"
	"cd -- \"${p%/*}/\" && exec tar -cf - -- \"${p##*/}\"\n";

/* $1 new|merge, $2 directory, $3 name: a stream whose top is "x" becomes
 * $2/$3 whole (made under a temporary name, then moved; a symlink there is
 * replaced) or is merged into the directory $2/$3 */
static const char in_script[] =
	"command -v tar >/dev/null 2>&1 || exit 90\n"
	"cd -- \"$2\" || exit 91\n"
	"if [ \"$1\" = merge ]; then\n"
	"  if [ -n \"$3\" ]; then cd -- \"$3\" || exit 91; fi\n"
	"  exec tar -xf - --strip-components=1\n"
	"fi\n"
	"t=$(mktemp -d .sbcp.XXXXXX) || exit 94\n"
	"tar -C \"$t\" -xf - && { [ ! -L \"$3\" ] || rm -f -- \"$3\"; } && mv -f -- \"$t/x\" \"$3\"\n"
	"rc=$?\n"
	"rm -rf -- \"$t\"\n"
	"exit $rc\n";

/* $1 path, $2 a name in it: d (directory, symlinks followed), f (anything
 * else, a symlink too) or m (missing) for each, then p when path's parent is
 * a directory */
static const char probe_script[] =
	"command -v tar >/dev/null 2>&1 || { echo notar; exit 0; }\n"
	"k() { if [ -d \"$1\" ]; then echo d; elif [ -e \"$1\" ] || [ -L \"$1\" ]; then echo f; else echo m; fi; }\n"
	"k \"$1\"; if [ -n \"$2\" ]; then k \"${1%/}/$2\"; else echo m; fi\n"
	"if [ -d \"$(dirname -- \"$1\")\" ]; then echo p; else echo n; fi\n";

struct job {
	pthread_t thread;
	struct sb_root *root;
	const char *name;
	char *argv[8];
	int in_fd, out_fd;               /* the guest's stdin and stdout; closed once it is done */
	struct sb_exec_result res;
	struct sb_error err;
	int rc;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	struct sb_exec_opts opts = {
		/* cp works as root, as docker cp does, whatever the image's User */
		.argv = j->argv, .cwd = "/", .user = "0", .stdin_fd = j->in_fd, .stdout_fd = j->out_fd, .stderr_fd = -1,
		.capture_max = 64 * 1024, .source = sb_timeline_actor(), .unrecorded = 1,
	};

	j->rc = sb_sandbox_exec(&j->res, j->root, j->name, &opts, &j->err);
	/* the other end now sees EOF, or EPIPE */
	if (j->in_fd >= 0)
		close(j->in_fd);
	if (j->out_fd >= 0)
		close(j->out_fd);
	return NULL;
}

static int job_start(struct job *j, struct sb_error *err)
{
	int e = pthread_create(&j->thread, NULL, run_job, j);

	if (e) {
		if (j->in_fd >= 0)
			close(j->in_fd);
		if (j->out_fd >= 0)
			close(j->out_fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot start a copy in sandbox '%s'"), j->name);
	}
	return 0;
}

/* The error a script's exit status stands for; 0 when it succeeded. */
static int job_error(const struct job *j, const char *path, struct sb_error *err)
{
	char line[512];

	if (j->rc < 0) {
		if (err)
			*err = j->err;
		return j->rc;
	}
	switch (j->res.exit_code) {
	case 0:
		return 0;
	case NO_TAR:
		return sb_error_set(err, SB_ERR_PREREQ,
				    _("sandbox '%s' has no tar: copying to or from its running root file system needs one "
				      "(busybox has it); /workspace and /exchange need none"), j->name);
	case NOT_FOUND:
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' does not exist"), j->name, path);
	case IS_DIR:
		return sb_error_set(err, SB_ERR_INVALID, _("'%s:%s' is a directory: copy it with -r"), j->name, path);
	case NOT_DIR:
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' is not a directory"), j->name, path);
	case NO_TEMP:
		return sb_error_set(err, SB_ERR_IO, _("cannot make a temporary directory next to '%s:%s'"), j->name, path);
	default: {
		struct sb_proc_result pr = { .errout = j->res.errout, .err_len = j->res.err_len };
		const char *last = sb_proc_last_line(&pr, line, sizeof(line));
		return sb_error_set(err, SB_ERR_RUNTIME, _("copying '%s:%s' failed inside the sandbox (exit status %d): %s"),
				    j->name, path, j->res.exit_code, last && *last ? last : _("no message"));
	}
	}
}

static void job_init(struct job *j, struct sb_root *root, const char *name, const char *script)
{
	memset(j, 0, sizeof(*j));
	j->root = root;
	j->name = name;
	j->in_fd = j->out_fd = -1;
	j->argv[0] = "/bin/sh";
	j->argv[1] = "-c";
	j->argv[2] = (char *)script;
	j->argv[3] = "sh";
}

int sb_guest_probe(struct sb_guest_probe *out, struct sb_root *root, const char *name, const char *path,
		   const char *base, struct sb_error *err)
{
	struct job j;
	int rc;

	job_init(&j, root, name, probe_script);
	j.argv[4] = (char *)path;
	j.argv[5] = (char *)base;
	run_job(&j);
	if ((rc = job_error(&j, path, err)) == 0) {
		const char *o = j.res.out ? j.res.out : "";
		if (!strncmp(o, "notar", 5)) {
			j.res.exit_code = NO_TAR;
			rc = job_error(&j, path, err);
		} else if (strlen(o) < 6 || !strchr("dfm", o[0]) || !strchr("dfm", o[2]) || !strchr("pn", o[4])) {
			rc = sb_error_set(err, SB_ERR_RUNTIME, _("cannot tell what '%s:%s' is: the sandbox's shell answered '%.40s'"),
					  name, path, o);
		} else {
			*out = (struct sb_guest_probe){ o[0], o[2], o[4] == 'p' };
		}
	}
	sb_exec_result_clear(&j.res);
	return rc;
}

int sb_guest_copy_out(struct sb_xsink *s, struct sb_root *root, const char *name, const char *path, int recursive,
		      struct sb_error *err)
{
	struct sb_error rerr;
	struct job j;
	int p[2], rc;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a pipe"));
	job_init(&j, root, name, out_script);
	j.argv[4] = (char *)path;
	j.argv[5] = recursive ? "r" : "";
	j.out_fd = p[1];
	if ((rc = job_start(&j, err)) < 0) {
		close(p[0]);
		return rc;
	}
	char *label = sb_strdupf("%s:%s", name, path);
	int rrc = sb_xtar_read(s, p[0], 1, label ? label : path, &rerr);
	/* stopping early (the cap, a refused entry): the guest's tar sees EPIPE */
	close(p[0]);
	pthread_join(j.thread, NULL);
	free(label);
	rc = job_error(&j, path, err);
	/* the guest's own failure explains a stream that broke off */
	if (rc == 0 || (rrc < 0 && rrc != SB_ERR_FORMAT)) {
		if (rrc < 0 && err)
			*err = rerr;
		rc = rrc;
	}
	sb_exec_result_clear(&j.res);
	return rc;
}

/* Writes to a pipe whose reader is gone fail with EPIPE instead of a
 * SIGPIPE that would end the caller: blocked in this thread while it
 * streams, and one it caused is taken back. */
static void pipe_signal_block(sigset_t *old, int *pending_before)
{
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, old);
	sigpending(&pend);
	*pending_before = sigismember(&pend, SIGPIPE);
}

static void pipe_signal_restore(const sigset_t *old, int pending_before)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (!pending_before)
		while (sigtimedwait(&set, NULL, &zero) == SIGPIPE)
			;
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int sb_guest_copy_in(struct sb_root *root, const char *name, const char *dir, const char *target, int merge,
		     int (*produce)(void *arg, struct sb_xsink *s, struct sb_error *err), void *arg,
		     struct sb_error *err)
{
	struct sb_xtar_out *t = NULL;
	struct sb_error perr;
	struct job j;
	sigset_t old;
	int p[2], rc, prc, pending;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a pipe"));
	job_init(&j, root, name, in_script);
	j.argv[4] = merge ? "merge" : "new";
	j.argv[5] = (char *)dir;
	j.argv[6] = (char *)target;
	j.in_fd = p[0];
	if ((rc = job_start(&j, err)) < 0) {
		close(p[1]);
		return rc;
	}
	pipe_signal_block(&old, &pending);
	prc = sb_xtar_out_new(&t, p[1], "x", 1, 1, &perr);
	if (prc == 0)
		prc = produce(arg, sb_xtar_out_sink(t), &perr);
	if (prc == 0)
		prc = sb_xtar_out_close(t, &perr);
	/* a stream that failed must not end as a whole archive: its end is not
	 * written to the guest (the fd goes to /dev/null first, atomically) */
	int devnull = prc < 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
	if (devnull >= 0) {
		dup3(devnull, p[1], O_CLOEXEC);
		close(devnull);
	}
	sb_xtar_out_free(t);
	close(p[1]);
	pthread_join(j.thread, NULL);
	pipe_signal_restore(&old, pending);
	char *where = sb_strdupf("%s/%s", dir, target);
	rc = job_error(&j, where ? where : dir, err);
	free(where);
	/* the source's own failure first; a broken pipe is the guest's */
	if (prc < 0 && (rc == 0 || perr.code != SB_ERR_IO)) {
		if (err)
			*err = perr;
		rc = prc;
	}
	sb_exec_result_clear(&j.res);
	return rc;
}
