/* session start: the session directory, its lock, the agent shell's set-up,
 * and the holder forked (double fork, own session) so that it outlives the
 * caller. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

#define READY_MS 30000

/* The agent shell: no line editing, no rc files (they would set their own
 * prompt), no history file (secrets are typed in), and a prompt that reports
 * the last status in an OSC 133 mark before it and ends with another (bash:
 * from PROMPT_COMMAND, which also says whether more input waits; other
 * shells: expanded in PS1). */
struct agent_shell {
	char *argv[6];
	char *env_store[4];
	char **env;
	char *shell;
};

static int agent_setup(struct agent_shell *ag, struct sb_root *root, const char *name, const struct sb_session_opts *o,
		       struct sb_error *err)
{
	char *why = NULL;
	size_t n = 0, k = 0, k2 = 0;
	int rc = 0;

	if (o->shell)
		ag->shell = strdup(o->shell);
	else
		rc = sb_sandbox_login_shell(&ag->shell, &why, root, name, err);
	free(why);
	if (rc < 0)
		return rc;
	const char *base = ag->shell ? strrchr(ag->shell, '/') : NULL;
	base = base ? base + 1 : ag->shell;
	ag->argv[k++] = ag->shell;
	int bash = base && strcmp(base, "bash") == 0;
	if (bash) {
		ag->argv[k++] = "--noediting";
		ag->argv[k++] = "--norc";
		ag->argv[k++] = "--noprofile";
	}
	ag->argv[k++] = "-i";
	ag->argv[k] = NULL;
	if (bash) {
		/* builtins only (no fork per prompt): the status, and whether more input waits */
		ag->env_store[0] = sb_strdupf("PS1=root@%s:$PWD# \033]133;B\a", name);
		ag->env_store[3] = strdup("PROMPT_COMMAND=__sb=$?; read -t 0 && __sbm=1 || __sbm=0; "
					  "printf '\033]133;D;%s;%s\a' $__sb $__sbm");
	} else {
		ag->env_store[0] = sb_strdupf("PS1=\033]133;D;$?\aroot@%s:$PWD# \033]133;B\a", name);
	}
	ag->env_store[1] = strdup("PS2=");
	ag->env_store[2] = strdup("HISTFILE=");
	while (o->env && o->env[n])
		n++;
	ag->env = calloc(n + 5, sizeof(*ag->env));
	if (!ag->shell || !ag->env_store[0] || !ag->env_store[1] || !ag->env_store[2] || (bash && !ag->env_store[3]) ||
	    !ag->env)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (int i = 0; i < 4 && ag->env_store[i]; i++)
		ag->env[k2++] = ag->env_store[i];
	for (size_t i = 0; i < n; i++)
		ag->env[k2++] = o->env[i];
	return 0;
}

static void agent_clear(struct agent_shell *ag)
{
	free(ag->shell);
	for (int i = 0; i < 4; i++)
		free(ag->env_store[i]);
	free(ag->env);
}

static int check_secrets(const struct sb_session_opts *o, struct sb_error *err)
{
	for (size_t i = 0; i < o->n_secrets; i++) {
		const char *p = o->secrets[i].name;
		int ok = p && (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'));
		for (; ok && *p; p++)
			ok = *p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');
		if (!ok)
			return sb_error_set(err, SB_ERR_INVALID, _("secret name '%s' is not a variable name"),
					    o->secrets[i].name ? o->secrets[i].name : "");
	}
	if (o->n_secrets && o->argv)
		return sb_error_set(err, SB_ERR_INVALID, _("secrets are exported by a shell: give a shell, not a program"));
	/* the redactor's own rules (a value too short to redact), before anything starts */
	struct sb_redact *r;
	int rc = sb_redact_new(&r, o->secrets, o->n_secrets, err);
	sb_redact_free(r);
	return rc;
}

/* The lowest number that no session directory has. */
static int pick_id(struct sess_dir *d, char *id, size_t size)
{
	struct stat st;

	for (unsigned i = 0; i < 100000; i++) {
		snprintf(id, size, "%u", i);
		char *p = sb_path_join(d->sessions, id);
		int taken = p && lstat(p, &st) == 0;
		free(p);
		if (!p)
			return -1;
		if (!taken)
			return 0;
	}
	return -1;
}

static int open_dir(struct sess_dir *d, int *lock_fd, struct sb_error *err)
{
	int rc;

	if ((rc = sb_fs_mkdirs(d->dir, 0700, err)) < 0)
		return rc;
	d->dfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->dfd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open session '%s' of sandbox '%s'"), d->id, d->name);
	*lock_fd = openat(d->dfd, SESS_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*lock_fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock session '%s' of sandbox '%s'"), d->id, d->name);
	if (flock(*lock_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? SB_ERR_EXISTS
					    : sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock session '%s'"), d->id);
	return 0;
}

/* What the holder says on its ready pipe: "OK <pid>" or "ERR <code> <message>". */
static int await_ready(int fd, const struct sess_dir *d, struct sb_error *err)
{
	char buf[1200];

	if (sb_fs_read_to_end(fd, buf, sizeof(buf), READY_MS) < 0)
		return sb_error_set(err, SB_ERR_TIMEOUT, _("session '%s' of sandbox '%s' did not start"), d->id, d->name);
	if (strncmp(buf, "OK ", 3) == 0)
		return 0;
	int code = SB_ERR_RUNTIME, at = 0;
	if (sscanf(buf, "ERR %d %n", &code, &at) >= 1 && at > 0)
		return sb_error_set(err, code < 0 ? code : SB_ERR_RUNTIME, "%s", buf + at);
	return sb_error_set(err, SB_ERR_RUNTIME, _("the holder of session '%s' of sandbox '%s' failed to start"), d->id,
			    d->name);
}

static int spawn(struct sess_dir *d, struct sb_root *root, const struct sb_session_opts *o, char *const *argv,
		 char *const *env, int lock_fd, struct sb_error *err)
{
	int pipefd[2];

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start session '%s'"), d->id);
	struct holder_args a = {
		.root_path = sb_root_path(root), .dir = d, .opts = o, .argv = argv, .env = env, .lock_fd = lock_fd,
		.ready_fd = pipefd[1],
	};
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		setsid();
		pid_t holder = fork();
		if (holder != 0)
			_exit(holder < 0);
		sess_holder_main(&a);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start session '%s'"), d->id);
	}
	sb_proc_keep(pid, 1);
	waitpid(pid, NULL, 0);
	sb_proc_keep(pid, 0);
	int rc = await_ready(pipefd[0], d, err);
	close(pipefd[0]);
	return rc;
}

static int check_running(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_sandbox_info info;
	int rc = sb_sandbox_wake(NULL, root, name, _("a session is started in it"), err);

	if (rc < 0)
		return rc;
	rc = sb_sandbox_inspect(&info, root, name, err);
	if (rc == 0 && info.rec.state != SB_STATE_RUNNING)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(info.rec.state));
	if (rc == 0 || rc == SB_ERR_STATE)
		sb_sandbox_info_clear(&info);
	return rc;
}

int sb_session_start(struct sb_session_info *out, struct sb_root *root, const char *name, const char *id,
		     const struct sb_session_opts *opts, struct sb_error *err)
{
	static const struct sb_session_opts defaults;
	const struct sb_session_opts *o = opts ? opts : &defaults;
	struct agent_shell ag = { 0 };
	struct sess_dir d;
	char picked[16];
	int rc, lock_fd = -1;

	memset(out, 0, sizeof(*out));
	if ((rc = sess_dir_init(&d, root, name, id, err)) < 0 || (rc = check_secrets(o, err)) < 0 ||
	    (rc = check_running(root, name, err)) < 0)
		goto out;
	if (!id) {
		if (pick_id(&d, picked, sizeof(picked)) < 0) {
			rc = sb_error_set(err, SB_ERR_LIMIT, _("sandbox '%s' has no free session number"), name);
			goto out;
		}
		sess_dir_clear(&d);
		if ((rc = sess_dir_init(&d, root, name, picked, err)) < 0)
			goto out;
		id = picked;
	}
	rc = open_dir(&d, &lock_fd, err);
	if (rc == SB_ERR_EXISTS) {
		if (o->reuse) {
			rc = sb_session_inspect(out, root, name, id, err);
			out->reused = 1;
		} else {
			rc = sb_error_set(err, SB_ERR_EXISTS, _("sandbox '%s' already has a session '%s' (--reuse returns it)"),
					  name, id);
		}
		goto out;
	}
	if (rc < 0 || (!o->argv && (rc = agent_setup(&ag, root, name, o, err)) < 0))
		goto out;
	if ((rc = spawn(&d, root, o, o->argv ? o->argv : ag.argv, o->argv ? o->env : ag.env, lock_fd, err)) == 0)
		rc = sb_session_inspect(out, root, name, id, err);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	agent_clear(&ag);
	sess_dir_clear(&d);
	return rc;
}
