#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/digest.h"
#include "base/fs.h"
#include "sandbox/sandbox.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

void sbf_setup(struct sbf *f, const char *tag)
{
	struct sb_error err;

	f->dir = tu_tempdir(tag);
	cr_assert_not_null(f->dir);
	cr_assert_eq(sb_root_open(&f->root, f->dir, &err), 0, "%s", err.msg);
	struct tu_run r = tu_sandbench(f->dir, NULL, "image", "bootstrap", "--busybox", "--name", SBF_IMAGE, "--quiet", NULL);
	cr_assert_eq(r.status, 0, "bootstrap: %s", r.err);
	tu_run_free(&r);
	sb_sandbox_process_init(NULL);
}

void sbf_bash_image(struct sbf *f)
{
	char *tree = tu_tempdir("bash-rootfs");
	cr_assert_not_null(tree);
	/* the busybox rootfs, then bash and every library ldd names, at their host paths */
	cr_assert_eq(tu_sh("set -e; src=$(%s/sandbench --root '%s' image inspect %s --json | sed -n "
			   "'s/.*\"rootfs\": \"\\(.*\\)\".*/\\1/p'); cp -a \"$src/.\" '%s/'; "
			   "for f in /bin/bash $(ldd /bin/bash | grep -o '/[^ ]*'); do "
			   "mkdir -p \"%s$(dirname $f)\"; cp -L \"$f\" \"%s$f\"; done; "
			   "tar -C '%s' -cf '%s.tar' .",
			   getenv("SB_TOP_BUILDDIR") ? getenv("SB_TOP_BUILDDIR") : ".", f->dir, SBF_IMAGE, tree, tree, tree,
			   tree, tree),
		     0, "cannot build the bash rootfs");
	char *tar = malloc(strlen(tree) + 5);
	cr_assert_not_null(tar);
	sprintf(tar, "%s.tar", tree);
	struct tu_run r = tu_sandbench(f->dir, NULL, "image", "import", tar, "--name", SBF_BASH_IMAGE, "--quiet", NULL);
	cr_assert_eq(r.status, 0, "import: %s", r.err);
	tu_run_free(&r);
	unlink(tar);
	free(tar);
	tu_remove(tree);
	free(tree);
}

void sbf_teardown(struct sbf *f)
{
	struct sb_sandbox_info *list;
	size_t n;

	if (f->root && sb_sandbox_list(&list, &n, f->root, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			sb_sandbox_remove(f->root, list[i].rec.name, SB_REMOVE_FORCE, NULL);
		sb_sandbox_list_free(list, n);
	}
	sb_root_close(f->root);
	tu_remove(f->dir);
	free(f->dir);
	memset(f, 0, sizeof(*f));
}

int sbf_mounted_below(const char *path)
{
	char *text;
	int found;

	if (sb_fs_read_file(&text, NULL, "/proc/self/mountinfo", 1 << 22, NULL) < 0)
		return 0;
	found = strstr(text, path) != NULL;
	free(text);
	return found;
}

int sbf_runsc_has(const struct sbf *f, const char *id)
{
	char *out = tu_sh_out("timeout 30 runsc --root='%s/runsc' list --format json", f->dir);
	int found = out && strstr(out, id) != NULL;

	free(out);
	return found;
}

int sbf_cgroup_exists(const char *id)
{
	DIR *d = opendir("/sys/fs/cgroup");
	struct dirent *de;
	int found = 0;

	while (d && (de = readdir(d)) && !found) {
		char *p = sb_strdupf("/sys/fs/cgroup/%s/%s", de->d_name, id);
		struct stat st;
		found = de->d_name[0] != '.' && p && stat(p, &st) == 0;
		free(p);
	}
	if (d)
		closedir(d);
	return found;
}

void sbf_ok(struct tu_run r, const char *what)
{
	cr_assert_eq(r.status, 0, "%s: %s", what, r.err);
	tu_run_free(&r);
}

char *sbf_sh(const struct sbf *f, const char *const *env, const char *name, const char *cmd, int *status)
{
	struct tu_run r = tu_sandbench(f->dir, env, "exec", name, "--", "sh", "-c", cmd, NULL);
	char *out = r.out;

	if (status)
		*status = r.status;
	else
		cr_assert_eq(r.status, 0, "%s in %s: %s", cmd, name, r.err);
	r.out = NULL;
	tu_run_free(&r);
	return out;
}

static int has_line(const char *text, const char *word)
{
	for (const char *p = text; (p = strstr(p, word)); p++)
		if ((p == text || p[-1] == '\n') && (p[strlen(word)] == '\n' || !p[strlen(word)]))
			return 1;
	return 0;
}

/* A process (not this one) whose command line names the root, or 0. */
static pid_t process_naming(const char *root)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	cr_assert_not_null(d);
	while (!found && (de = readdir(d))) {
		pid_t pid = (pid_t)atol(de->d_name);
		char path[64], *text = NULL;
		size_t len;
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
		if (sb_fs_read_file(&text, &len, path, 1 << 16, NULL) < 0)
			continue;
		for (size_t i = 0; i < len; i++)
			text[i] = text[i] ? text[i] : ' ';
		if (strstr(text, root))
			found = pid;
		free(text);
	}
	closedir(d);
	return found;
}

void sbf_assert_reconciled(const struct sbf *f, const char *when)
{
	struct sb_sandbox_info *list;
	size_t n, running = 0;
	char ids[4096] = "", images[8192] = "";

	cr_assert_eq(sb_sandbox_list(&list, &n, f->root, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		int up = sb_sandbox_state_live(list[i].rec.state);
		char *disk = sb_strdupf("%s/sandboxes/%s/rootfs", f->dir, list[i].rec.name);
		running += up;
		if (list[i].rec.disk)
			snprintf(images + strlen(images), sizeof(images) - strlen(images), "%s/sandboxes/%s/disk.img\n",
				 f->dir, list[i].rec.name);
		if (up)
			snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s\n", list[i].rec.id);
		else
			cr_assert(!sbf_runsc_has(f, list[i].rec.id) && !sbf_cgroup_exists(list[i].rec.id) &&
					  !sbf_mounted_below(disk),
				  "%s: '%s' is %s but its container, cgroup or disk is still there", when,
				  list[i].rec.name, sb_sandbox_state_name(list[i].rec.state));
		free(disk);
	}
	sb_sandbox_list_free(list, n);
	/* runsc's containers: only the running sandboxes' */
	char *listed = tu_sh_out("runsc --root %s/runsc list 2>/dev/null | awk 'NR > 1 { print $1 }'", f->dir);
	for (char *line = strtok(listed, "\n"); line; line = strtok(NULL, "\n"))
		cr_assert(has_line(ids, line), "%s: runsc still has container %s", when, line);
	free(listed);
	/* loop devices: each one the disk of a listed capped sandbox */
	char *loops = tu_sh_out("cat /sys/block/loop*/loop/backing_file 2>/dev/null | grep -F '%s/'; true", f->dir);
	for (char *line = strtok(loops, "\n"); line; line = strtok(NULL, "\n"))
		cr_assert(has_line(images, line), "%s: loop device left on %s", when, line);
	free(loops);
	/* sandbox directories: each one a listed sandbox */
	char *dirs = tu_sh_out("cd %s/sandboxes && for d in *; do [ -d \"$d\" ] && echo \"$d\"; done; true", f->dir);
	for (char *d = strtok(dirs, "\n"); d; d = strtok(NULL, "\n")) {
		struct sb_sandbox_info info;
		cr_assert_eq(sb_sandbox_inspect(&info, f->root, d, NULL), 0, "%s: directory of no sandbox: %s", when, d);
		sb_sandbox_info_clear(&info);
	}
	free(dirs);
	/* half-written state files (base/fs: PATH.tmp.PID), outside the guests' trees */
	char *tmp = tu_sh_out("find %s -path '*/rootfs' -prune -o -path '*/upper' -prune -o -path '*/workspace' -prune "
			      "-o -name '*.tmp.*' -print", f->dir);
	cr_assert_str_eq(tmp, "", "%s: temp files left: %s", when, tmp);
	free(tmp);
	if (!running) {
		pid_t pid = process_naming(f->dir);
		cr_assert_eq(pid, 0, "%s: process %ld names the root, with no sandbox running", when, (long)pid);
	}
}

int sbf_get_marker(const struct sbf *f, const char *name, const char *target, int port)
{
	char *cmd = sb_strdupf("printf 'GET /marker.txt HTTP/1.0\\r\\n\\r\\n' | nc -w 3 %s %d | grep -q " NT_MARKER,
			       target, port);
	int status;
	char *out = sbf_sh(f, NULL, name, cmd, &status);

	free(out);
	free(cmd);
	return status;
}

json_t *sbf_run_json(struct tu_run r, const char *what)
{
	cr_assert_eq(r.status, 0, "%s: %s", what, r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "%s: %s", what, r.out);
	tu_run_free(&r);
	return doc;
}

char *sbf_take_log(const struct sbf *f)
{
	char *path = sb_strdupf("%s/log", f->dir), *text = NULL;

	if (sb_fs_read_file(&text, NULL, path, 1 << 20, NULL) < 0)
		text = strdup("");
	cr_assert_not_null(text);
	unlink(path);
	free(path);
	return text;
}
