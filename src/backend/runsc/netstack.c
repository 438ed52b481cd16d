#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/backend.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "base/jsonfile.h"
#include "internal.h"
#include "net/network.h"
#include "base/proc.h"

/* What this runsc reads below /proc/sys; nothing else is carried over. */
static const char *const proc_sys_keep[] = {
	"kernel/cap_last_cap", "kernel/overflowuid", "kernel/overflowgid", "kernel/pid_max",
	"kernel/ngroups_max", "vm/mmap_min_addr", "vm/overcommit_memory", "vm/max_map_count",
};
#define N_KEEP (sizeof(proc_sys_keep) / sizeof(proc_sys_keep[0]))

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int sb_netstack_pre_exec(void *arg)
{
	const char *netns = arg;
	char values[N_KEEP][64], path[96];
	ssize_t lens[N_KEEP];
	struct stat target, self;

	if (!netns || stat(netns, &target) < 0 || stat("/proc/self/ns/net", &self) < 0)
		return -1;
	if (target.st_dev == self.st_dev && target.st_ino == self.st_ino)
		return -1;
	for (size_t i = 0; i < N_KEEP; i++) {
		lens[i] = -1;
		memcpy(path, "/proc/sys/", 10); /* NOLINT(bugprone-not-null-terminated-result): the strcpy below ends it */
		strcpy(path + 10, proc_sys_keep[i]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		lens[i] = read(fd, values[i], sizeof(values[i]));
		close(fd);
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("sandbench-proc-sys", "/proc/sys", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0555") < 0 ||
	    mkdir("/proc/sys/kernel", 0555) < 0 || mkdir("/proc/sys/vm", 0555) < 0)
		return -1;
	for (size_t i = 0; i < N_KEEP; i++) {
		if (lens[i] <= 0)
			continue;
		memcpy(path, "/proc/sys/", 10); /* NOLINT(bugprone-not-null-terminated-result): the strcpy below ends it */
		strcpy(path + 10, proc_sys_keep[i]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		if (fd < 0 || write_all(fd, values[i], (size_t)lens[i]) < 0) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Identity of the runsc binary and the kernel: a new one of either is probed again. */
static int host_identity(json_t **out, const char *runsc, struct sb_error *err)
{
	struct utsname u;
	struct stat st;

	if (stat(runsc, &st) < 0)
		return sb_error_errno(err, SB_ERR_PREREQ, errno, _("cannot stat runsc '%s'"), runsc);
	uname(&u);
	*out = json_pack("{s:s, s:I, s:I, s:I, s:s}", "runsc", runsc, "size", (json_int_t)st.st_size,
			 "mtime", (json_int_t)st.st_mtime, "inode", (json_int_t)st.st_ino, "kernel", u.release);
	return *out ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

struct probe {
	char *dir, *runsc, *root_flag, *bundle, *id;
	char netns[SB_NETNS_NAME_MAX + 8], netns_path[SB_NETNS_NAME_MAX + 24];
};

static int probe_runsc(struct sb_proc_result *res, struct probe *p, const char *cmd, int workaround,
		       struct sb_error *err)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	char *create[] = { p->runsc, p->root_flag, "--network=sandbox", "--ignore-cgroups", "create", "--bundle",
			   p->bundle, p->id, NULL };
	char *start[] = { p->runsc, p->root_flag, "--network=sandbox", "--ignore-cgroups", "start", p->id, NULL };
	char *del[] = { p->runsc, p->root_flag, "delete", "-force", p->id, NULL };
	char **argv = strcmp(cmd, "create") == 0 ? create : strcmp(cmd, "start") == 0 ? start : del;

	opts.timeout_ms = 30000;
	if (workaround) {
		opts.pre_exec = sb_netstack_pre_exec;
		opts.pre_exec_arg = p->netns_path;
	}
	return sb_proc_run(res, argv, &opts, err);
}

/* One attempt: create and start; 0 and *refused set when runsc gave the
 * root-namespace error; a negative error for any other failure. */
static int probe_attempt(int *refused, struct probe *p, int workaround, struct sb_error *err)
{
	struct sb_proc_result res;
	char line[300];
	int rc = probe_runsc(&res, p, "create", 0, err);

	*refused = 0;
	if (rc == 0 && res.status != 0) {
		sb_log("runsc create of a network probe failed: %s", sb_proc_last_line(&res, line, sizeof(line)));
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("runsc could not create a probe sandbox; %s"), sb_runsc_log_hint());
	}
	sb_proc_result_clear(&res);
	if (rc == 0 && (rc = probe_runsc(&res, p, "start", workaround, err)) == 0 && res.status != 0) {
		if (strstr(res.errout, SB_NETSTACK_ROOTNS_ERROR))
			*refused = 1;
		else {
			sb_log("runsc start of a network probe failed: %s", sb_proc_last_line(&res, line, sizeof(line)));
			rc = sb_error_set(err, SB_ERR_RUNTIME, _("runsc could not start a probe sandbox with network; %s"),
					  sb_runsc_log_hint());
		}
	}
	sb_proc_result_clear(&res);
	probe_runsc(&res, p, "delete", 0, NULL);
	sb_proc_result_clear(&res);
	return rc;
}

static int probe_prepare(struct probe *p, struct sb_root *root, struct sb_error *err)
{
	char tag[7];
	int rc;

	if ((rc = sb_network_tag(tag, root, err)) < 0)
		return rc;
	snprintf(p->netns, sizeof(p->netns), "sb-%s=probe", tag);
	snprintf(p->netns_path, sizeof(p->netns_path), "/run/netns/%s", p->netns);
	p->dir = sb_root_file(root, "network/probe");
	p->root_flag = p->dir ? sb_strdupf("--root=%s/runsc", p->dir) : NULL;
	p->bundle = p->dir ? sb_path_join(p->dir, "bundle") : NULL;
	p->id = sb_strdupf("sbprobe-%ld", (long)getpid());
	if (!p->dir || !p->root_flag || !p->bundle || !p->id)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_fs_remove_tree(p->dir, err)) < 0 || (rc = sb_fs_mkdirs(p->bundle, 0700, err)) < 0)
		return rc;
	/* the host's root read-only is enough to run /bin/true */
	json_t *spec = json_pack("{s:s, s:{s:[s], s:s, s:{s:i, s:i}, s:[s]}, s:{s:s, s:b},"
				 " s:{s:[{s:s}, {s:s}, {s:s}, {s:s}, {s:s, s:s}]}}",
				 "ociVersion", "1.0.2",
				 "process", "args", "/bin/true", "cwd", "/", "user", "uid", 0, "gid", 0,
				 "env", "PATH=/usr/bin:/bin",
				 "root", "path", "/", "readonly", 1,
				 "linux", "namespaces", "type", "pid", "type", "mount", "type", "ipc", "type", "uts",
				 "type", "network", "path", p->netns_path);
	char *config = sb_path_join(p->bundle, "config.json");
	rc = spec && config ? sb_json_save(config, spec, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	json_decref(spec);
	free(config);
	if (rc < 0)
		return rc;
	const char *add[] = { "ip", "netns", "add", p->netns, NULL };
	const char *del[] = { "ip", "netns", "del", p->netns, NULL };
	if (access(p->netns_path, F_OK) == 0)
		sb_net_cmd(NULL, del, NULL, NULL);
	return sb_net_cmd(NULL, add, NULL, err);
}

static void probe_cleanup(struct probe *p)
{
	const char *del[] = { "ip", "netns", "del", p->netns, NULL };

	if (p->netns[0] && access(p->netns_path, F_OK) == 0)
		sb_net_cmd(NULL, del, NULL, NULL);
	if (p->dir)
		sb_fs_remove_tree(p->dir, NULL);
	free(p->dir);
	free(p->root_flag);
	free(p->bundle);
	free(p->id);
}

static int probe(int *needed, struct sb_root *root, const char *runsc, struct sb_error *err)
{
	struct probe p = { .runsc = (char *)runsc };
	int refused = 0, rc = probe_prepare(&p, root, err);

	if (rc == 0)
		rc = probe_attempt(&refused, &p, 0, err);
	*needed = refused;
	if (rc == 0 && refused) {
		rc = probe_attempt(&refused, &p, 1, err);
		if (rc == 0 && refused)
			rc = sb_error_set(err, SB_ERR_PREREQ,
					  _("runsc refuses its own network stack here even with the /proc/sys workaround"));
	}
	probe_cleanup(&p);
	if (rc < 0)
		sb_error_wrap(err, _("cannot find out how runsc runs with network"));
	return rc;
}

/* 1 and *needed when cache holds the answer for this host identity. */
static int cached(int *needed, const char *cache, const json_t *id)
{
	json_t *doc;
	int found = 0;

	if (sb_json_load(&doc, cache, 1 << 16, NULL) < 0)
		return 0;
	if (json_equal(json_object_get(doc, "host"), id) && json_is_boolean(json_object_get(doc, "workaround"))) {
		*needed = json_is_true(json_object_get(doc, "workaround"));
		found = 1;
	}
	json_decref(doc);
	return found;
}

/* Probes under ROOT/network/netstack.lock (parallel creates would share the
 * probe's directory and namespace) unless another process just did. */
static int probe_locked(int *needed, struct sb_root *root, const char *runsc, const char *cache, const json_t *id,
			struct sb_error *err)
{
	char *dir = sb_root_file(root, "network"), *lock = dir ? sb_path_join(dir, "netstack.lock") : NULL;
	int fd = -1, rc;

	if (!lock)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if ((rc = sb_fs_mkdirs(dir, 0700, err)) == 0 &&
		 ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 || flock(fd, LOCK_EX) < 0))
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock '%s'"), lock);
	if (rc == 0 && !cached(needed, cache, id)) {
		rc = probe(needed, root, runsc, err);
		json_t *fresh = rc == 0 ? json_pack("{s:O, s:b}", "host", id, "workaround", *needed) : NULL;
		if (rc == 0)
			rc = fresh ? sb_json_save(cache, fresh, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		json_decref(fresh);
	}
	if (fd >= 0)
		close(fd);
	free(lock);
	free(dir);
	return rc;
}

int sb_netstack_needed(int *needed, struct sb_root *root, struct sb_error *err)
{
	char *runsc, *cache;
	json_t *id;
	int rc = 0;

	*needed = 0;
	if ((rc = sb_runsc_locate(&runsc, err)) < 0)
		return rc;
	if ((rc = host_identity(&id, runsc, err)) < 0) {
		free(runsc);
		return rc;
	}
	if (!(cache = sb_root_file(root, "network/netstack.json")))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if (!cached(needed, cache, id))
		rc = probe_locked(needed, root, runsc, cache, id, err);
	free(runsc);
	json_decref(id);
	free(cache);
	return rc;
}

int sb_runsc_net_hook(int (**fn)(void *), void **arg, struct sb_root *root, const struct sb_netinfo *info,
		      struct sb_error *err)
{
	int needed, rc = sb_netstack_needed(&needed, root, err);

	*fn = NULL;
	*arg = NULL;
	if (rc < 0)
		return rc;
	if (needed) {
		*fn = sb_netstack_pre_exec;
		*arg = (void *)info->netns_path;
	}
	return 0;
}
