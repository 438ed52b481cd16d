/* Live numbers of a running sandbox from its cgroup files: a few small reads
 * (microseconds) instead of one `runsc events --stats` (a Go binary started,
 * ~40 ms). runsc puts its sandbox process into a cgroup named after the
 * container id in every v1 hierarchy (or one v2 group); we find it through
 * /proc/PID/cgroup of the verified runsc-sandbox process, so wherever runsc
 * (or the service manager above it) placed it, we read that one. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

#define CG_BASE "/sys/fs/cgroup"

struct cg_paths {
	char memory[512], cpuacct[512], pids[512], v2[512];
};

/* Keeps a hierarchy's group only when it is the container's own (named by
 * its id): the host's root group would give the whole machine's numbers. */
static void take(char *dst, size_t size, const char *dir, const char *path, const char *id)
{
	const char *base = strrchr(path, '/');

	if (!dst[0] && base && !strcmp(base + 1, id) && !strstr(path, "/..") &&
	    (size_t)snprintf(dst, size, "%s%s%s", CG_BASE, dir, path) >= size)
		dst[0] = '\0'; /* cut, it would name a parent group */
}

static int has_controller(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Lines "N:controllers:/path" of /proc/PID/cgroup; v1 hierarchies are
 * mounted under /sys/fs/cgroup/<controllers>, the v2 one at /sys/fs/cgroup
 * or /sys/fs/cgroup/unified. */
static void parse_cgroups(struct cg_paths *cp, char *text, const char *id)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL, dir[160];
		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		if (!*ctl) {
			snprintf(dir, sizeof(dir), "%s", access(CG_BASE "/unified/cgroup.procs", F_OK) == 0 ? "/unified" : "");
			take(cp->v2, sizeof(cp->v2), dir, path, id);
			continue;
		}
		snprintf(dir, sizeof(dir), "/%s", ctl);
		if (has_controller(ctl, "memory"))
			take(cp->memory, sizeof(cp->memory), dir, path, id);
		if (has_controller(ctl, "cpuacct"))
			take(cp->cpuacct, sizeof(cp->cpuacct), dir, path, id);
		if (has_controller(ctl, "pids"))
			take(cp->pids, sizeof(cp->pids), dir, path, id);
	}
}

/* The number in dir/file (the first one of "key N" lines when key is set); 0 when absent. */
static unsigned long long read_u64(const char *dir, const char *file, const char *key, int *ok)
{
	char path[600], *text = NULL;
	unsigned long long v = 0;

	if (!dir[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (sb_fs_read_file(&text, NULL, path, 1 << 16, NULL) < 0)
		return 0;
	const char *at = text;
	if (key) {
		size_t n = strlen(key);
		for (at = text; at && (strncmp(at, key, n) || at[n] != ' '); at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
			;
		at = at ? at + n + 1 : NULL;
	}
	if (at && !strncmp(at, "max", 3))
		v = 0;   /* v2: no limit */
	else if (at && (v = strtoull(at, NULL, 10), 1))
		(*ok)++;
	free(text);
	return v;
}

int sb_runsc_cgroup_stats(struct sb_backend_stats *out, const struct sb_backend_sandbox *sb, struct sb_error *err)
{
	char *pid_file = sb_path_join(sb->dir, "runsc.pid"), *text = NULL, path[64];
	struct cg_paths cp = { "", "", "", "" };
	int fd = sb_runsc_sandbox_pidfd(sb), ok = 0;
	long pid = 0;

	memset(out, 0, sizeof(*out));
	/* the pidfd proves runsc.pid names this sandbox's process */
	if (fd >= 0 && pid_file && sb_fs_read_file(&text, NULL, pid_file, 64, NULL) == 0)
		pid = strtol(text, NULL, 10);
	free(text);
	text = NULL;
	free(pid_file);
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	if (pid > 1 && sb_fs_read_file(&text, NULL, path, 1 << 16, NULL) == 0)
		parse_cgroups(&cp, text, sb->rec->id);
	free(text);
	if (fd >= 0)
		close(fd);
	if (cp.memory[0] || cp.cpuacct[0]) {
		out->memory_usage = read_u64(cp.memory, "memory.usage_in_bytes", NULL, &ok);
		out->memory_limit = read_u64(cp.memory, "memory.limit_in_bytes", NULL, &ok);
		out->cpu_ns = read_u64(cp.cpuacct, "cpuacct.usage", NULL, &ok);
		out->pids = read_u64(cp.pids[0] ? cp.pids : cp.v2, "pids.current", NULL, &ok);
	} else if (cp.v2[0]) {
		out->memory_usage = read_u64(cp.v2, "memory.current", NULL, &ok);
		out->memory_limit = read_u64(cp.v2, "memory.max", NULL, &ok);
		out->cpu_ns = read_u64(cp.v2, "cpu.stat", "usage_usec", &ok) * 1000ULL;
		out->pids = read_u64(cp.v2, "pids.current", NULL, &ok);
	}
	/* v1 reports "no limit" as a huge page-rounded number */
	if (out->memory_limit >= (1ULL << 62))
		out->memory_limit = 0;
	if (!ok)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("no cgroup of sandbox '%s' found"), sb->rec->name);
	return 0;
}
