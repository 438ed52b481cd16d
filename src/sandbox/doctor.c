#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/archive_dl.h"
#include "base/crypto_dl.h"
#include "base/curl_dl.h"
#include "backend/backend.h"
#include "sandbox/doctor.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/proc.h"

#define MIN_FREE_FAIL (256ULL << 20)
#define MIN_FREE_WARN (2ULL << 30)

struct doctor_ctx {
	struct sb_root *root;
	char *runsc;
};

typedef void (*check_fn)(struct sb_check *c, struct doctor_ctx *ctx);

static void check_fail(struct sb_check *c, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check_fail(struct sb_check *c, const char *fix, const char *fmt, ...)
{
	va_list ap;

	c->status = SB_CHECK_FAIL;
	c->fix = fix;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static void check_root(struct sb_check *c, struct doctor_ctx *ctx)
{
	(void)ctx;
	if (geteuid() != 0)
		check_fail(c, N_("run sandbench as root (for example with sudo)"),
			   _("running as uid %ld; runsc needs root"), (long)geteuid());
	else
		snprintf(c->detail, sizeof(c->detail), "%s", _("running as root"));
}

static void check_runsc(struct sb_check *c, struct doctor_ctx *ctx)
{
	struct sb_error err;

	if (sb_runsc_locate(&ctx->runsc, &err) < 0)
		check_fail(c, N_("apt-get install runsc"), "%s", err.msg);
	else
		snprintf(c->detail, sizeof(c->detail), "%s", ctx->runsc);
}

static int file_has_line(const char *path, const char *needle)
{
	char *text;
	int found;

	if (sb_fs_read_file(&text, NULL, path, 1 << 20, NULL) < 0)
		return 0;
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

static void check_overlay(struct sb_check *c, struct doctor_ctx *ctx)
{
	(void)ctx;
	if (!file_has_line("/proc/filesystems", "\toverlay\n"))
		check_fail(c, N_("load the overlay module: modprobe overlay"),
			   "%s", _("the kernel does not list overlayfs in /proc/filesystems"));
	else
		snprintf(c->detail, sizeof(c->detail), "%s", _("overlayfs available"));
}

static void check_cgroups(struct sb_check *c, struct doctor_ctx *ctx)
{
	struct stat st;

	(void)ctx;
	if (stat("/sys/fs/cgroup", &st) < 0 || !S_ISDIR(st.st_mode))
		check_fail(c, N_("mount the cgroup hierarchies at /sys/fs/cgroup (systemd does this at boot)"),
			   "%s", _("/sys/fs/cgroup is missing"));
	else if (!file_has_line("/proc/cgroups", "memory\t") && stat("/sys/fs/cgroup/cgroup.controllers", &st) < 0)
		check_fail(c, N_("enable the memory cgroup controller (cgroup_enable=memory on the kernel command line)"),
			   "%s", _("the memory cgroup controller is not available"));
	else
		snprintf(c->detail, sizeof(c->detail), "%s", _("cgroups mounted, memory controller present"));
}

static void check_disk(struct sb_check *c, struct doctor_ctx *ctx)
{
	struct statvfs vfs;
	unsigned long long avail;

	if (statvfs(sb_root_path(ctx->root), &vfs) < 0) {
		check_fail(c, N_("check that the state root is on a mounted filesystem"),
			   _("cannot read free space of %s: %s"), sb_root_path(ctx->root), strerror(errno));
		return;
	}
	avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
	snprintf(c->detail, sizeof(c->detail), _("%llu MiB free under %s"), avail >> 20, sb_root_path(ctx->root));
	if (avail < MIN_FREE_FAIL) {
		c->status = SB_CHECK_FAIL;
		c->fix = N_("free disk space under the state root, or choose another with --root");
	} else if (avail < MIN_FREE_WARN) {
		c->status = SB_CHECK_WARN;
		c->fix = N_("free disk space under the state root: images and checkpoints need room");
	}
}

static void check_boot(struct sb_check *c, struct doctor_ctx *ctx)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	struct sb_error err;
	char line[200];

	if (!ctx->runsc) {
		check_fail(c, N_("apt-get install runsc"), "%s", _("skipped: runsc is missing"));
		return;
	}
	char *state = sb_root_file(ctx->root, "runsc");
	char *root_flag = state ? sb_strdupf("--root=%s", state) : NULL;
	char *argv[] = { ctx->runsc, root_flag, "--network=none", "do", "/bin/true", NULL };
	opts.timeout_ms = 30000;
	if (!root_flag) {
		check_fail(c, NULL, "%s", _("out of memory"));
	} else if (sb_proc_run(&res, argv, &opts, &err) < 0) {
		check_fail(c, N_("check 'runsc --debug do /bin/true' for the cause"), "%s", err.msg);
		sb_proc_result_clear(&res);
	} else {
		if (res.status != 0)
			check_fail(c, N_("check 'runsc --debug do /bin/true' for the cause"),
				   _("runsc could not boot a sandbox (exit %d): %s"), res.status,
				   sb_proc_last_line(&res, line, sizeof(line)));
		else
			snprintf(c->detail, sizeof(c->detail), "%s", _("booted a test sandbox"));
		sb_proc_result_clear(&res);
	}
	free(root_flag);
	free(state);
}

/* System calls sandbench cannot do without, probed with arguments that fail
 * at once (a bad fd): ENOSYS alone says the kernel lacks the call. */
static const struct {
	const char *name;
	long nr;
	const char *use;
} syscalls[] = {
	{ "openat2", SYS_openat2, N_("reading a sandbox's files inside its root") },
	{ "open_tree", SYS_open_tree, N_("binding verified host folders") },
	{ "mount_setattr", SYS_mount_setattr, N_("binding verified host folders") },
};

static void check_kernel(struct sb_check *c, struct doctor_ctx *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++) {
		errno = 0;
		if (syscall(syscalls[i].nr, -1, "", 0, NULL, 0) < 0 && errno == ENOSYS) {
			check_fail(c, N_("run a Linux kernel of version 5.12 or later (Debian 12 ships 6.1)"),
				   _("the kernel lacks the system call %s (needed for %s)"), syscalls[i].name,
				   _(syscalls[i].use));
			return;
		}
	}
	snprintf(c->detail, sizeof(c->detail), "%s", _("openat2, open_tree and mount_setattr available"));
}

/* Loaded on first use (dynlib.h): only a pull or an import would find out. */
static int (*const lazy_libraries[])(struct sb_error *err) = { sb_curl_load, sb_archive_load, sb_crypto_load };

static void check_libraries(struct sb_check *c, struct doctor_ctx *ctx)
{
	struct sb_error err;

	(void)ctx;
	for (size_t i = 0; i < sizeof(lazy_libraries) / sizeof(lazy_libraries[0]); i++) {
		if (lazy_libraries[i](&err) < 0) {
			check_fail(c, N_("apt-get install libcurl4 libarchive13 libssl3"), "%s", err.msg);
			return;
		}
	}
	snprintf(c->detail, sizeof(c->detail), "%s", _("libcurl, libarchive and libcrypto load (pulls and imports use them)"));
}

/* create --disk needs both; without them only that option is refused, so a warning */
static void check_disk_caps(struct sb_check *c, struct doctor_ctx *ctx)
{
	char *mkfs = sb_path_search("mkfs.ext4");

	(void)ctx;
	if (access("/dev/loop-control", R_OK | W_OK) < 0) {
		c->status = SB_CHECK_WARN;
		c->fix = N_("load the loop module (modprobe loop) to cap sandboxes' disks");
		snprintf(c->detail, sizeof(c->detail), "%s", _("no loop devices: create --disk is refused"));
	} else if (!mkfs) {
		c->status = SB_CHECK_WARN;
		c->fix = N_("apt-get install e2fsprogs");
		snprintf(c->detail, sizeof(c->detail), "%s", _("mkfs.ext4 is missing: create --disk is refused"));
	} else {
		snprintf(c->detail, sizeof(c->detail), "%s", _("loop devices and mkfs.ext4 available (create --disk)"));
	}
	free(mkfs);
}

struct check_def {
	const char *name;
	check_fn fn;
	int full_only;           /* only with SB_DOCTOR_FULL: too slow for every command */
};

/* Ordered: later checks may rely on what earlier ones found (runsc before boot). */
static const struct check_def checks[] = {
	{ "root", check_root, 0 },
	{ "runsc", check_runsc, 0 },
	{ "overlayfs", check_overlay, 0 },
	{ "cgroups", check_cgroups, 0 },
	{ "kernel", check_kernel, 0 },
	{ "disk", check_disk, 0 },
	{ "libraries", check_libraries, 1 },
	{ "disk-caps", check_disk_caps, 1 },
	{ "boot", check_boot, 1 },
};

int sb_doctor_run(struct sb_doctor_report *report, struct sb_root *root, unsigned flags, struct sb_error *err)
{
	struct doctor_ctx ctx = { .root = root };

	(void)err;
	memset(report, 0, sizeof(*report));
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		if (checks[i].full_only && !(flags & SB_DOCTOR_FULL))
			continue;
		struct sb_check *c = &report->checks[report->count++];
		c->name = checks[i].name;
		checks[i].fn(c, &ctx);
		if (c->status == SB_CHECK_FAIL)
			report->failures++;
	}
	free(ctx.runsc);
	return 0;
}

int sb_doctor_require(struct sb_root *root, struct sb_error *err)
{
	struct sb_doctor_report report;

	sb_doctor_run(&report, root, 0, err);
	for (int i = 0; i < report.count; i++) {
		const struct sb_check *c = &report.checks[i];
		if (c->status == SB_CHECK_FAIL)
			return sb_error_set(err, SB_ERR_PREREQ, _("refusing to run: %s: %s; fix: %s"),
					    c->name, c->detail, c->fix ? _(c->fix) : "-");
	}
	return 0;
}
