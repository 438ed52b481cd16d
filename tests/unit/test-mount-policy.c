/* Host mount policy: syntax, normalisation, and every deny rule. */
#include "config.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/internal.h"
#include "testutil.h"

static char *dir;

static void setup(void)
{
	dir = tu_tempdir("mountpol");
	cr_assert_not_null(dir);
}

static void teardown(void)
{
	tu_remove(dir);
	free(dir);
}

TestSuite(mount_policy, .init = setup, .fini = teardown);

/* A folder under the test dir; returns its path (malloc'd). */
static char *mkdir_in(const char *rel)
{
	char *p = sb_path_join(dir, rel);

	cr_assert_eq(sb_fs_mkdirs(p, 0755, NULL), 0);
	return p;
}

static int parse_code(const char *spec, const struct sb_mount_policy *pol)
{
	struct sb_mount m;
	struct sb_error err;
	int rc = sb_mount_parse(&m, spec, pol, &err);

	if (rc < 0) {
		cr_assert_null(m.host);
		cr_assert(err.msg[0] != '\0');
	}
	sb_mount_clear(&m);
	return rc;
}

static int parse_host(const char *host, const struct sb_mount_policy *pol)
{
	char *spec = sb_strdupf("%s:/mnt/x", host);
	int rc = parse_code(spec, pol);

	free(spec);
	return rc;
}

Test(mount_policy, mode_defaults_to_read_only)
{
	char *d = mkdir_in("data"), *spec;
	struct sb_mount m;

	spec = sb_strdupf("%s:/data", d);
	cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0);
	cr_assert_str_eq(m.host, d);
	cr_assert_str_eq(m.path, "/data");
	cr_assert_eq(m.rw, 0);
	sb_mount_clear(&m);
	free(spec);

	spec = sb_strdupf("%s:/data:rw", d);
	cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0);
	cr_assert_eq(m.rw, 1);
	sb_mount_clear(&m);
	free(spec);

	spec = sb_strdupf("%s:/data:ro", d);
	cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0);
	cr_assert_eq(m.rw, 0);
	sb_mount_clear(&m);
	free(spec);
	free(d);
}

Test(mount_policy, host_path_may_contain_colons)
{
	char *d = mkdir_in("a:b"), *spec = sb_strdupf("%s:/in:rw", d);
	struct sb_mount m;

	cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0);
	cr_assert_str_eq(m.host, d);
	cr_assert_str_eq(m.path, "/in");
	cr_assert_eq(m.rw, 1);
	sb_mount_clear(&m);
	free(spec);
	free(d);
}

Test(mount_policy, syntax_errors)
{
	char *d = mkdir_in("s"), *spec;

	cr_assert_eq(parse_code("nocolon", NULL), SB_ERR_INVALID);
	cr_assert_eq(parse_code(":/x", NULL), SB_ERR_INVALID);
	spec = sb_strdupf("%s:", d);
	cr_assert_eq(parse_code(spec, NULL), SB_ERR_INVALID);
	free(spec);
	spec = sb_strdupf("%s:relative/path", d);
	cr_assert_eq(parse_code(spec, NULL), SB_ERR_INVALID);
	free(spec);
	spec = sb_strdupf("%s:/..", d);
	cr_assert_eq(parse_code(spec, NULL), SB_ERR_INVALID);
	free(spec);
	free(d);
}

Test(mount_policy, split_cuts_only_what_parses)
{
	static const struct {
		const char *in, *host, *path;
		enum sb_mount_mode mode;
	} good[] = {
		{ "/h:/p", "/h", "/p", SB_MOUNT_RO },
		{ "/h:/p:rw", "/h", "/p", SB_MOUNT_RW },
		{ "/h:/p:ro", "/h", "/p", SB_MOUNT_RO },
		{ "/a:b:/p:rw", "/a:b", "/p", SB_MOUNT_RW },
		{ "rel:/p", "rel", "/p", SB_MOUNT_RO },
	};
	static const char *const bad[] = { "", "nocolon", ":/x", "/h:", "/h:rel", "/h:/p:", "/h:rw", ":rw", "/h:/p:xx" };
	struct sb_sandbox_mount m;
	struct sb_error err;
	char buf[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", good[i].in);
		cr_assert_eq(sb_sandbox_mount_parse(&m, buf, NULL), 0, "%s", good[i].in);
		cr_assert_str_eq(m.host, good[i].host);
		cr_assert_str_eq(m.path, good[i].path);
		cr_assert_eq(m.mode, good[i].mode, "%s", good[i].in);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		cr_assert_eq(sb_sandbox_mount_parse(&m, buf, &err), SB_ERR_INVALID, "%s", bad[i]);
		cr_assert_str_eq(buf, bad[i], "left as it was");
		cr_assert(strstr(err.msg, "HOST:PATH[:ro|rw]"), "%s", err.msg);
	}
}

Test(mount_policy, missing_host_path)
{
	char *spec = sb_strdupf("%s/absent:/x", dir);

	cr_assert_eq(parse_code(spec, NULL), SB_ERR_NOTFOUND);
	free(spec);
}

Test(mount_policy, sandbox_path_is_normalised)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "//a/./b/", "/a/b" },
		{ "/a/../b", "/b" },
		{ "/a/b/..", "/a" },
		{ "/x//y///z", "/x/y/z" },
	};
	char *d = mkdir_in("n");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *spec = sb_strdupf("%s:%s", d, cases[i].in);
		struct sb_mount m;
		cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0, "%s", cases[i].in);
		cr_assert_str_eq(m.path, cases[i].out);
		sb_mount_clear(&m);
		free(spec);
	}
	free(d);
}

Test(mount_policy, reserved_sandbox_paths)
{
	static const char *const refused[] = {
		"/", "/proc", "/proc/self", "/sys", "/sys/fs", "/dev", "/dev/shm",
		"/workspace", "/workspace/sub", "/exchange", "/exchange/x", "/a/../proc",
	};
	static const char *const accepted[] = { "/procx", "/devices", "/workspaces", "/mnt/exchange" };
	char *d = mkdir_in("r");

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char *spec = sb_strdupf("%s:%s", d, refused[i]);
		cr_assert_eq(parse_code(spec, NULL), SB_ERR_UNSAFE, "%s", refused[i]);
		free(spec);
	}
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		char *spec = sb_strdupf("%s:%s", d, accepted[i]);
		cr_assert_eq(parse_code(spec, NULL), 0, "%s", accepted[i]);
		free(spec);
	}
	free(d);
}

Test(mount_policy, system_host_paths_are_refused)
{
	/* /run and /var/lib contain runtime sockets and state: refused as ancestors */
	static const char *const refused[] = { "/", "/proc", "/proc/1", "/sys", "/sys/fs", "/dev",
					       "/boot", "/etc", "/etc/ssl", "/root", "/run", "/var/lib",
					       "/var/run" };
	const struct sb_mount_policy allow = { .allow_sensitive = 1 };

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct stat st;
		if (stat(refused[i], &st) < 0)
			continue; /* this host lacks it: nothing to mount */
		cr_assert_eq(parse_host(refused[i], NULL), SB_ERR_UNSAFE, "%s", refused[i]);
		cr_assert_eq(parse_host(refused[i], &allow), 0, "%s with allow_sensitive", refused[i]);
	}
	/* an ordinary folder next to them is fine */
	cr_assert_eq(parse_host("/usr/share", NULL), 0);
}

Test(mount_policy, symlinks_are_resolved_before_the_policy)
{
	char *link = sb_path_join(dir, "innocent"), *d = mkdir_in("real");
	struct sb_mount m;

	cr_assert_eq(symlink("/etc", link), 0);
	cr_assert_eq(parse_host(link, NULL), SB_ERR_UNSAFE);
	unlink(link);
	cr_assert_eq(symlink(d, link), 0);
	char *spec = sb_strdupf("%s:/x", link);
	cr_assert_eq(sb_mount_parse(&m, spec, NULL, NULL), 0);
	cr_assert_str_eq(m.host, d);
	sb_mount_clear(&m);
	free(spec);
	free(link);
	free(d);
}

Test(mount_policy, credential_folders_anywhere)
{
	static const char *const names[] = { ".ssh", ".gnupg", ".aws", ".kube", ".docker" };
	const struct sb_mount_policy allow = { .allow_sensitive = 1 };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *home = sb_strdupf("home%zu", i);
		char *inner = sb_strdupf("%s/%s/sub", home, names[i]);
		char *deep = mkdir_in(inner), *top = sb_path_join(dir, home);
		/* inside the credential folder */
		cr_assert_eq(parse_host(deep, NULL), SB_ERR_UNSAFE, "%s", deep);
		/* the folder that holds it */
		cr_assert_eq(parse_host(top, NULL), SB_ERR_UNSAFE, "%s", top);
		cr_assert_eq(parse_host(top, &allow), 0);
		free(home);
		free(inner);
		free(deep);
		free(top);
	}
	/* a similar name is not a credential folder */
	char *ok = mkdir_in("x.ssh/.sshkeys-not");
	cr_assert_eq(parse_host(ok, NULL), 0);
	free(ok);
}

Test(mount_policy, runtime_sockets_are_refused)
{
	char *d = mkdir_in("sock"), *sock = sb_path_join(d, "docker.sock");

	cr_assert_eq(sb_fs_write_atomic(sock, "", 0, 0600, NULL), 0);
	cr_assert_eq(parse_host(sock, NULL), SB_ERR_UNSAFE);
	cr_assert_eq(parse_host(d, NULL), SB_ERR_UNSAFE);
	free(sock);
	free(d);
}

Test(mount_policy, state_root_inside_and_above)
{
	char *root = mkdir_in("state/root"), *below = mkdir_in("state/root/exchange");
	char *above = sb_path_join(dir, "state"), *beside = mkdir_in("state2");
	const struct sb_mount_policy pol = { .state_root = root };

	cr_assert_eq(parse_host(root, &pol), SB_ERR_UNSAFE);
	cr_assert_eq(parse_host(below, &pol), SB_ERR_UNSAFE);
	cr_assert_eq(parse_host(above, &pol), SB_ERR_UNSAFE);
	cr_assert_eq(parse_host(beside, &pol), 0);
	free(root);
	free(below);
	free(above);
	free(beside);
}

Test(mount_policy, overlapping_sandbox_paths)
{
	struct sb_mount ms[3] = { { .path = "/a" }, { .path = "/b" }, { .path = "/ab" } };

	cr_assert_eq(sb_mount_check_overlaps(ms, 3, NULL), 0);
	ms[2].path = "/a/sub";
	cr_assert_eq(sb_mount_check_overlaps(ms, 3, NULL), SB_ERR_INVALID);
	ms[2].path = "/b";
	cr_assert_eq(sb_mount_check_overlaps(ms, 3, NULL), SB_ERR_INVALID);
}

Test(mount_policy, resolve_from_parts)
{
	char *d = mkdir_in("parts"), *link = sb_path_join(dir, "parts-link");
	struct sb_mount m;

	cr_assert_eq(symlink(d, link), 0);
	cr_assert_eq(sb_mount_resolve(&m, link, "/data//x/.", 1, NULL, NULL), 0);
	cr_assert_str_eq(m.host, d);
	cr_assert_str_eq(m.path, "/data/x");
	cr_assert_eq(m.rw, 1);
	sb_mount_clear(&m);
	cr_assert_eq(sb_mount_resolve(&m, "", "/x", 0, NULL, NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_mount_resolve(&m, d, "/exchange", 0, NULL, NULL), SB_ERR_UNSAFE);
	cr_assert_eq(sb_mount_resolve(&m, "/proc", "/x", 0, NULL, NULL), SB_ERR_UNSAFE);
	free(link);
	free(d);
}
