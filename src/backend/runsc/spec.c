#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "internal.h"

#define CPU_PERIOD 100000
/* pids.limit counts runsc's host threads, not guest processes: a loose cap only */
#define PIDS_LIMIT 4096
/* RLIMIT_AS of every process = this many times the memory limit. The sentry
 * keeps no per-sandbox memory account that could fail one allocation: the
 * host's memory cgroup ends the whole sandbox. An address-space limit makes
 * one greedy process's malloc fail inside instead. It counts what a program
 * maps without using (thread stacks, malloc arenas, reserved heaps), hence
 * the room above the limit; measured in docs/security.md ("Memory"). */
#define AS_FACTOR 2

static const char *const default_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LANG=C.UTF-8",
	NULL,
};

/* The capabilities runsc's own default spec grants; nothing more. */
static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
static const char *const cap_sets[] = { "bounding", "effective", "permitted", "ambient", NULL };
static const char *const namespaces[] = { "pid", "ipc", "uts", "mount", NULL };

/* Kernel file systems every container gets. */
static const struct {
	const char *dest, *type, *source;
	const char *opts[5];
} base_mounts[] = {
	{ "/proc", "proc", "proc", { NULL } },
	{ "/dev", "tmpfs", "tmpfs", { "nosuid", "strictatime", "mode=755", "size=65536k", NULL } },
	{ "/dev/pts", "devpts", "devpts", { "nosuid", "noexec", "newinstance", "ptmxmode=0666", NULL } },
	{ "/dev/shm", "tmpfs", "shm", { "nosuid", "noexec", "nodev", "mode=1777", NULL } },
	{ "/sys", "sysfs", "sysfs", { "nosuid", "noexec", "nodev", "ro", NULL } },
	{ "/tmp", "tmpfs", "tmpfs", { "nosuid", "nodev", "mode=1777", NULL } },
};

static json_t *str_array(const char *const *v)
{
	json_t *a = json_array();

	for (; v && *v; v++)
		a = sb_json_append(a, json_string(*v));
	return a;
}

json_t *sb_spec_process(char *const *args, char *const *env, const char *cwd, const struct sb_backend_user *user,
			int terminal, unsigned short rows, unsigned short cols)
{
	json_t *capobj = json_object();

	for (const char *const *s = cap_sets; *s; s++)
		capobj = sb_json_set(capobj, *s, str_array(caps));
	json_t *p = json_pack("{s:b, s:{s:I, s:I}, s:o, s:o, s:s, s:o, s:b, s:[{s:s, s:i, s:i}]}",
			      "terminal", terminal, "user", "uid", (json_int_t)(user ? user->uid : 0),
			      "gid", (json_int_t)(user ? user->gid : 0),
			      "args", str_array((const char *const *)args),
			      "env", str_array(env ? (const char *const *)env : default_env),
			      "cwd", cwd ? cwd : "/workspace", "capabilities", capobj, "noNewPrivileges", 1,
			      "rlimits", "type", "RLIMIT_NOFILE", "hard", 1048576, "soft", 1048576);
	if (terminal && rows && cols)
		p = sb_json_set(p, "consoleSize", json_pack("{s:i, s:i}", "height", rows, "width", cols));
	return p;
}

json_t *sb_spec_add_caps(json_t *proc, const char *const *more)
{
	json_t *capobj = json_object_get(proc, "capabilities");

	for (const char *const *s = cap_sets; proc && more && *s; s++)
		for (const char *const *c = more; *c; c++)
			if (json_array_append_new(json_object_get(capobj, *s), json_string(*c)) < 0) {
				json_decref(proc);
				return NULL;
			}
	return proc;
}

unsigned long long sb_spec_as_limit(const struct sb_record *rec)
{
	if (!rec || !rec->memory)
		return 0;
	return rec->memory > ~0ULL / AS_FACTOR ? ~0ULL : rec->memory * AS_FACTOR;
}

json_t *sb_spec_limit_process(json_t *proc, const struct sb_record *rec)
{
	unsigned long long as = sb_spec_as_limit(rec);
	json_t *rl = json_object_get(proc, "rlimits");

	if (!proc || !as)
		return proc;
	if (!rl || json_array_append_new(rl, json_pack("{s:s, s:I, s:I}", "type", "RLIMIT_AS", "hard", (json_int_t)as,
							"soft", (json_int_t)as)) < 0) {
		json_decref(proc);
		return NULL;
	}
	return proc;
}

static size_t count(const char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Its index in all[0..n) when a variable of kv's name is there; else n. */
static size_t find_key(char **all, size_t n, const char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < n; i++)
		if (!strncmp(all[i], kv, klen) && all[i][klen] == '=')
			return i;
	return n;
}

json_t *sb_spec_exec_process(char *const *args, char *const *env, char *const *more_env, const char *cwd,
			     const struct sb_backend_user *user)
{
	const char *const *parts[] = { default_env, (const char *const *)env, (const char *const *)more_env };
	size_t n = 0;

	for (size_t i = 0; i < 3; i++)
		n += count(parts[i]);
	char **all = calloc(n + 1, sizeof(*all));
	if (!all)
		return NULL;
	n = 0;
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; parts[i] && parts[i][k]; k++) {
			size_t at = find_key(all, n, parts[i][k]);
			all[at] = (char *)parts[i][k];
			n += at == n;
		}
	json_t *p = sb_spec_process(args, all, cwd, user, 0, 0, 0);
	free(all);
	return p;
}

static json_t *bind(const char *src, const char *dest, int ro)
{
	return json_pack("{s:s, s:s, s:s, s:[s, s]}", "destination", dest, "type", "bind", "source", src, "options",
			 "rbind", ro ? "ro" : "rw");
}

static json_t *resources(const struct sb_record *rec)
{
	json_t *r = json_pack("{s:{s:I}}", "pids", "limit", (json_int_t)PIDS_LIMIT);

	if (rec->memory)
		r = sb_json_set(r, "memory", json_pack("{s:I}", "limit", (json_int_t)rec->memory));
	if (rec->cpus > 0)
		r = sb_json_set(r, "cpu", json_pack("{s:I, s:I}", "quota", (json_int_t)(rec->cpus * CPU_PERIOD),
						     "period", (json_int_t)CPU_PERIOD));
	return r;
}

/* The sandbox's init: it only has to stay alive; commands come through exec. */
static char *const init_args[] = { "/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done", NULL };

int sb_spec_build(json_t **out, const struct sb_spec_params *p, struct sb_error *err)
{
	json_t *mounts = json_array(), *ns = json_array();

	*out = NULL;
	/* fail closed: a host path bound as it is may have changed since it was checked */
	if (p->rec->n_mounts && !p->mount_sources) {
		json_decref(mounts);
		json_decref(ns);
		return sb_error_set(err, SB_ERR_UNSAFE, _("the host mounts of sandbox '%s' were not verified for this boot"),
				    p->rec->name);
	}
	for (size_t i = 0; i < sizeof(base_mounts) / sizeof(base_mounts[0]); i++)
		mounts = sb_json_append(mounts, json_pack("{s:s, s:s, s:s, s:o}", "destination", base_mounts[i].dest,
							  "type", base_mounts[i].type, "source", base_mounts[i].source,
							  "options", str_array(base_mounts[i].opts)));
	mounts = sb_json_append(mounts, bind(p->workspace, "/workspace", 0));
	if (p->exchange)
		mounts = sb_json_append(mounts, bind(p->exchange, "/exchange", 0));
	for (size_t i = 0; i < p->rec->n_mounts; i++)
		mounts = sb_json_append(mounts, bind(p->mount_sources[i], p->rec->mounts[i].path,
						     p->rec->mounts[i].mode == SB_MOUNT_RO));
	/* last, so that no other mount hides them; never written into the guest's
	 * tree, whose /etc the guest may have turned into a symlink */
	if (p->hosts)
		mounts = sb_json_append(mounts, bind(p->hosts, "/etc/hosts", 1));
	if (p->resolv)
		mounts = sb_json_append(mounts, bind(p->resolv, "/etc/resolv.conf", 1));
	for (const char *const *n = namespaces; *n; n++)
		ns = sb_json_append(ns, json_pack("{s:s}", "type", *n));
	ns = sb_json_append(ns, p->netns_path ? json_pack("{s:s, s:s}", "type", "network", "path", p->netns_path)
					      : json_pack("{s:s}", "type", "network"));
	json_t *doc = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:{s:o, s:o}}",
				"ociVersion", "1.0.2",
				"process", sb_spec_limit_process(sb_spec_process(init_args, NULL, "/", NULL, 0, 0, 0), p->rec),
				"root", "path", p->rootfs, "readonly", 0,
				"hostname", p->rec->name,
				"mounts", mounts,
				"linux", "namespaces", ns, "resources", resources(p->rec));
	if (!doc)
		return sb_error_set(err, SB_ERR_NOMEM, _("cannot build the runtime spec of sandbox '%s'"), p->rec->name);
	*out = doc;
	return 0;
}

int sb_spec_write(const char *bundle_dir, const struct sb_spec_params *p, struct sb_error *err)
{
	json_t *doc;
	int rc = sb_spec_build(&doc, p, err);

	if (rc < 0)
		return rc;
	char *path = sb_path_join(bundle_dir, "config.json");
	char *text = sb_json_dumps(doc, JSON_COMPACT);
	/* before every boot, mostly the same as the last time: written only when
	 * it differs, no fsync needed (a torn file differs and is rewritten) */
	if (!path || !text)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else
		rc = sb_fs_write_changed(path, text, strlen(text), 0644, err);
	free(text);
	free(path);
	json_decref(doc);
	return rc;
}
