/* The runsc backend: struct sb_backend_ops over the runsc driver. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "internal.h"

struct runsc_be {
	struct sb_root *root;
	struct sb_runsc *rs;
	char build[96];
};

static int be_open(void **out, struct sb_root *root, struct sb_error *err)
{
	struct runsc_be *be = calloc(1, sizeof(*be));

	*out = NULL;
	if (!be)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	be->root = root;
	*out = be;
	return 0;
}

/* runsc is located on first use: a teardown of what never reached runsc
 * (or rm --force with runsc uninstalled) still unmounts and cleans up. */
static struct sb_runsc *be_rs(struct runsc_be *be, struct sb_error *err)
{
	if (!be->rs && sb_runsc_open(&be->rs, be->root, err) < 0)
		return NULL;
	return be->rs;
}

static void be_close(void *p)
{
	struct runsc_be *be = p;

	if (!be)
		return;
	sb_runsc_close(be->rs);
	free(be);
}

/* The binary's size and modification time: a package upgrade changes them,
 * a reinstall of the same build does not (dpkg keeps the packaged mtime).
 * One stat instead of starting runsc --version. */
static const char *be_build(void *p)
{
	struct runsc_be *be = p;

	if (!be->build[0] && be_rs(be, NULL))
		sb_runsc_build_of(be->build, sizeof(be->build), sb_runsc_path(be->rs));
	return be->build;
}

static int be_boot(void *p, const struct sb_backend_sandbox *sb, const char *image_path, struct sb_error *err)
{
	struct runsc_be *be = p;

	return be_rs(be, err) ? sb_runsc_boot(be->rs, be->root, sb, image_path, err) : SB_ERR_PREREQ;
}

static int be_teardown(void *p, const struct sb_backend_sandbox *sb, unsigned flags, struct sb_error *err)
{
	struct runsc_be *be = p;
	struct sb_error why;
	int rc = 0;

	if (sb->rec->id[0] && !be_rs(be, &why)) {
		rc = sb_error_set(err, why.code, "%s", why.msg);
		if (!(flags & SB_TEARDOWN_FORCE))
			return rc;
	}
	int trc = sb_runsc_teardown(be->rs, sb, flags, rc < 0 ? NULL : err);
	return rc < 0 ? rc : trc;
}

/* The exec's process as a --process file describes it (spec.c). */
static json_t *exec_process(const struct sb_backend_sandbox *sb, const struct sb_backend_exec *x)
{
	return sb_spec_add_caps(sb_spec_limit_process(sb_spec_exec_process(x->argv, x->env, x->secret_env, x->cwd, x->user),
						      sb->rec),
				x->caps);
}

/* The process goes to runsc as a --process file when it carries what runsc
 * exec's command line cannot: its RLIMIT_AS, secret values. Secrets must not
 * be in runsc's command line (/proc/PID/cmdline, which every user may read)
 * nor in a file: the whole process goes into a memory file that runsc (root)
 * opens through this process's /proc/PID/fd while it runs. Returns the fd
 * (the caller closes it), or a negative error. */
static int process_memfd(char *path, size_t size, const json_t *proc, struct sb_error *err)
{
	char *text = proc ? sb_json_dumps(proc, JSON_COMPACT) : NULL;
	int fd = text ? memfd_create("sandbench-exec", MFD_CLOEXEC) : -1;
	int rc = fd;

	if (!text)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if (fd < 0 || sb_fs_write_all(fd, text, strlen(text)) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot pass the process to run to runsc"));
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
	if (rc < 0 && fd >= 0)
		close(fd);
	snprintf(path, size, "/proc/%ld/fd/%d", (long)getpid(), fd);
	return rc;
}

static int be_exec(struct sb_proc_result *res, void *p, const struct sb_backend_sandbox *sb,
		   const struct sb_backend_exec *x, struct sb_error *err)
{
	struct sb_runsc_call c = sb_runsc_call_for(sb, SB_RUNSC_EXEC);
	char path[64], user[32];
	int fd = -1, rc;

	if (!be_rs(p, err))
		return SB_ERR_PREREQ;
	/* one description for both: the --process file and the direct exec */
	json_t *proc = exec_process(sb, x);
	if ((x->secret_env && x->secret_env[0]) || sb_spec_as_limit(sb->rec) || x->caps) {
		if ((fd = process_memfd(path, sizeof(path), proc, err)) < 0) {
			json_decref(proc);
			return fd;
		}
		c.process_file = path;
	} else {
		c.args = x->argv;
		c.env = x->env;
		c.cwd = x->cwd;
		if (x->user) {
			snprintf(user, sizeof(user), "%u:%u", x->user->uid, x->user->gid);
			c.user = user;
		}
	}
	c.internal_pid_file = x->ipid_file;
	c.any_status = 1;
	c.proc = x->proc;
	/* the child that would start runsc exec runs it without the CLI where it can */
	struct sb_runsc_quick q;
	int quick = sb_runsc_quick_init(&q, ((struct runsc_be *)p)->rs, be_build(p), sb->rec->id, proc, x->ipid_file);
	json_decref(proc);
	if (quick) {
		q.detach = x->detach;
		c.pre_exec = sb_runsc_quick_child;
		c.after_fork = sb_runsc_quick_forked;
		c.pre_exec_arg = &q;
	} else if (x->detach) {
		/* runsc exec --detach would leave a runsc process behind per call */
		if (fd >= 0)
			close(fd);
		return sb_error_set(err, SB_ERR_PREREQ, _("this runsc cannot start a process without waiting for it"));
	}
	rc = sb_runsc_run(res, ((struct runsc_be *)p)->rs, &c, err);
	sb_runsc_quick_clear(&q);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* runsc exec --process with terminal: true (notes/runsc.md): the process is
 * described in x->scratch. */
static int be_pty(char ***argv, void *p, const struct sb_backend_sandbox *sb, const struct sb_backend_exec *x,
		  struct sb_error *err)
{
	json_t *proc = sb_spec_limit_process(sb_spec_process(x->argv, x->env, x->cwd, x->user, 1, x->rows, x->cols),
					     sb->rec);
	int rc;

	*argv = NULL;
	if (!be_rs(p, err)) {
		json_decref(proc);
		return SB_ERR_PREREQ;
	}
	if (!proc)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = sb_json_save(x->scratch, proc, err);
	json_decref(proc);
	if (rc < 0)
		return rc;
	struct sb_runsc_call c = sb_runsc_call_for(sb, SB_RUNSC_EXEC);
	c.process_file = x->scratch;
	c.internal_pid_file = x->ipid_file;
	return sb_runsc_argv(argv, ((struct runsc_be *)p)->rs, &c, err);
}

static void be_kill(void *p, const struct sb_backend_sandbox *sb, const char *ipid_file)
{
	char *ipid = NULL;
	struct sb_error ignored;

	if (be_rs(p, NULL) && sb_fs_read_file(&ipid, NULL, ipid_file, 64, NULL) == 0) {
		ipid[strcspn(ipid, "\n")] = '\0';
		struct sb_runsc_call c = sb_runsc_call_for(sb, SB_RUNSC_KILL);
		c.target_pid = ipid;
		c.signal = "KILL";
		c.proc.timeout_ms = 10000;
		sb_runsc_run(NULL, ((struct runsc_be *)p)->rs, &c, &ignored);
	}
	free(ipid);
}

static int be_checkpoint(void *p, const struct sb_backend_sandbox *sb, const char *image_path, struct sb_error *err)
{
	struct sb_runsc_call c = sb_runsc_call_for(sb, SB_RUNSC_CHECKPOINT);

	struct sb_proc_result res;
	int rc;

	c.image_path = image_path;
	if (!be_rs(p, err))
		return SB_ERR_PREREQ;
	/* the connections through published ports would hold TCP endpoints open */
	sb_runsc_forward_reset(sb);
	rc = sb_runsc_run(&res, ((struct runsc_be *)p)->rs, &c, err);
	/* runsc's own message is a Go trace: say what it means */
	if (rc < 0 && res.errout && strstr(res.errout, "unsupported networking state"))
		rc = sb_error_set(err, SB_ERR_BUSY,
				  _("sandbox '%s' has a TCP connection open, or closed less than a minute ago, and this "
				    "runsc cannot checkpoint one; stop it again later"), sb->rec->name);
	sb_proc_result_clear(&res);
	return rc;
}

/* Without the CLI where this runsc build's protocol was measured (freeze.c:
 * ~1 ms against runsc's Go start-up), else, or when that path declines, the
 * CLI. */
static int be_freeze(void *p, const struct sb_backend_sandbox *sb, enum sb_runsc_op op, struct sb_error *err)
{
	struct sb_runsc_call c = sb_runsc_call_for(sb, op);
	int rc;

	c.proc.timeout_ms = 10000;
	if (!be_rs(p, err))
		return SB_ERR_PREREQ;
	if ((rc = sb_runsc_freeze_direct(((struct runsc_be *)p)->rs, be_build(p), sb, op == SB_RUNSC_RESUME,
					 c.proc.timeout_ms, err)) != 1)
		return rc;
	return sb_runsc_run(NULL, ((struct runsc_be *)p)->rs, &c, err);
}

static int be_pause(void *p, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	return be_freeze(p, sb, SB_RUNSC_PAUSE, err);
}

static int be_resume(void *p, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	return be_freeze(p, sb, SB_RUNSC_RESUME, err);
}

static int be_alive(void *p, const struct sb_backend_sandbox *sb)
{
	int fd = sb_runsc_sandbox_pidfd(sb);

	(void)p;
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The kernel's OOM killer ended a process of the sandbox's memory cgroup
 * (runsc's /<id>, there until teardown): with the sentry's memory in it, the
 * whole sandbox. */
static int be_out_of_memory(void *p, const struct sb_backend_sandbox *sb)
{
	char *path = sb_strdupf("/sys/fs/cgroup/memory/%s/memory.oom_control", sb->rec->id), *text = NULL;
	int hit = 0;

	(void)p;
	if (path && sb->rec->id[0] && sb_fs_read_file(&text, NULL, path, 4096, NULL) == 0) {
		const char *k = strstr(text, "oom_kill ");
		hit = k && strtoull(k + 9, NULL, 10) > 0;
	}
	free(text);
	free(path);
	return hit;
}

static unsigned long long json_u64(json_t *obj, const char *path1, const char *path2)
{
	json_t *v = json_object_get(json_object_get(obj, path1), path2);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned long long)json_integer_value(v) : 0;
}

static int be_stats(struct sb_backend_stats *out, void *p, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	struct sb_runsc_call c = sb_runsc_call_for(sb, SB_RUNSC_EVENTS);
	struct sb_proc_result res = { 0 };
	json_t *doc = NULL;
	int rc;

	/* the cgroup files first: microseconds against runsc events' ~40 ms */
	if (sb_runsc_cgroup_stats(out, sb, NULL) == 0)
		return 0;
	c.proc.timeout_ms = 10000;
	if (!be_rs(p, err)) {
		rc = SB_ERR_PREREQ;
		goto out;
	}
	if ((rc = sb_runsc_run(&res, ((struct runsc_be *)p)->rs, &c, err)) < 0)
		goto out;
	/* {"type":"stats","id":..,"data":{"cpu":{"usage":{"total":N}},"memory":{"usage":{"usage":N,"limit":N}},"pids":{"current":N}}} */
	json_t *data = json_object_get(doc = json_loads(res.out, 0, NULL), "data");
	if (!data) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("runsc events of sandbox '%s' gave no statistics"), sb->rec->name);
		goto out;
	}
	json_t *mem = json_object_get(data, "memory");
	out->memory_usage = json_u64(mem, "usage", "usage");
	out->memory_limit = json_u64(mem, "usage", "limit");
	out->cpu_ns = json_u64(json_object_get(data, "cpu"), "usage", "total");
	out->pids = json_u64(data, "pids", "current");
out:
	json_decref(doc);
	sb_proc_result_clear(&res);
	return rc;
}

/* runsc's containers of this root (ROOT/runsc): none is an empty list. */
static int be_list(struct sb_backend_object **out, size_t *count, void *p, struct sb_error *err)
{
	struct sb_runsc_call call = SB_RUNSC_CALL_INIT(SB_RUNSC_LIST, NULL);
	struct sb_proc_result res = { 0 };
	json_t *doc = NULL, *c;
	size_t i;
	int rc;

	*out = NULL;
	*count = 0;
	if (!be_rs(p, err))
		return SB_ERR_PREREQ;
	rc = sb_runsc_run(&res, ((struct runsc_be *)p)->rs, &call, err);
	if (rc < 0)
		goto out;
	doc = json_loads(res.out, JSON_DECODE_ANY, NULL);
	if (!doc || (!json_is_array(doc) && !json_is_null(doc))) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("runsc list printed something that is not JSON"));
		goto out;
	}
	if (!(*out = calloc(json_array_size(doc) + 1, sizeof(**out)))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	json_array_foreach(doc, i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		const char *status = json_string_value(json_object_get(c, "status"));
		if (!id || strlen(id) >= sizeof((*out)->id))
			continue;
		struct sb_backend_object *o = &(*out)[(*count)++];
		snprintf(o->id, sizeof(o->id), "%s", id);
		snprintf(o->status, sizeof(o->status), "%s", status ? status : "");
	}
out:
	json_decref(doc);
	sb_proc_result_clear(&res);
	return rc;
}

static int be_remove_object(void *p, const char *id, struct sb_error *err)
{
	struct sb_runsc *rs = be_rs(p, err);
	struct sb_runsc_call kill = SB_RUNSC_CALL_INIT(SB_RUNSC_KILL, id);
	struct sb_runsc_call del = SB_RUNSC_CALL_INIT(SB_RUNSC_DELETE, id);
	struct sb_error ignored;

	kill.signal = "KILL";
	kill.any_status = 1;
	del.force = 1;
	if (!rs)
		return SB_ERR_PREREQ;
	sb_runsc_run(NULL, rs, &kill, &ignored);
	int rc = sb_runsc_run(NULL, rs, &del, err);
	sb_runsc_remove_cgroups(id);
	return rc;
}

static int be_disk_mounted(void *p, const struct sb_backend_sandbox *sb)
{
	(void)p;
	return sb_fs_mount_point(sb->rootfs);
}

const struct sb_backend_ops sb_backend_runsc = {
	.version = SB_BACKEND_OPS_VERSION,
	.name = "runsc",
	.caps = SB_BACKEND_CAP_CHECKPOINT | SB_BACKEND_CAP_HOST_MOUNTS | SB_BACKEND_CAP_LIVE_STATS |
		SB_BACKEND_CAP_NET_NAT,
	.open = be_open,
	.close = be_close,
	.build = be_build,
	.boot = be_boot,
	.teardown = be_teardown,
	.exec = be_exec,
	.pty = be_pty,
	.kill = be_kill,
	.checkpoint = be_checkpoint,
	.pause = be_pause,
	.resume = be_resume,
	.alive = be_alive,
	.out_of_memory = be_out_of_memory,
	.stats = be_stats,
	.list = be_list,
	.remove_object = be_remove_object,
	.disk_mounted = be_disk_mounted,
};
