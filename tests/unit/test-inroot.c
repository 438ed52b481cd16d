/* The host's view of a tree a sandbox can write: the in-root reader
 * (base/inroot.h) against hostile trees. No runsc: the "rootfs" is a plain
 * directory. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/inroot.h"
#include "testutil.h"

#define SECRET "host-secret-content\n"

static char *dir, *tree, *secret;   /* scratch dir, the sandbox's tree in it, a host file beside it */
static int saved_stdin = -1, stdin_writer = -1;

static void put(const char *rel, const char *text)
{
	char *path = sb_path_join(tree, rel);

	cr_assert_eq(sb_fs_write_atomic(path, text, strlen(text), 0644, NULL), 0, "%s", path);
	free(path);
}

static void link_to(const char *target, const char *rel)
{
	char *path = sb_path_join(tree, rel);

	cr_assert_eq(symlink(target, path), 0, "%s -> %s", rel, target);
	free(path);
}

static void mkdir_in(const char *rel)
{
	char *path = sb_path_join(tree, rel);

	cr_assert_eq(sb_fs_mkdirs(path, 0755, NULL), 0, "%s", path);
	free(path);
}

static void setup(void)
{
	int p[2];

	dir = tu_tempdir("inroot");
	cr_assert_not_null(dir);
	tree = sb_path_join(dir, "tree");
	secret = sb_path_join(dir, "secret");
	mkdir_in("etc");
	cr_assert_eq(sb_fs_write_atomic(secret, SECRET, strlen(SECRET), 0600, NULL), 0);
	/* our stdin is a pipe nobody writes: a reader that follows /proc/self/fd/0 blocks for good */
	cr_assert_eq(pipe(p), 0);
	saved_stdin = dup(0);
	dup2(p[0], 0);
	close(p[0]);
	stdin_writer = p[1];
}

static void teardown(void)
{
	if (saved_stdin >= 0) {
		dup2(saved_stdin, 0);
		close(saved_stdin);
	}
	if (stdin_writer >= 0)
		close(stdin_writer);
	tu_remove(dir);
	free(dir);
	free(tree);
	free(secret);
}

TestSuite(inroot, .init = setup, .fini = teardown, .timeout = 20);

static int read_in(char **out, const char *path, size_t cap, struct sb_error *err)
{
	size_t len = 0;
	int rc = sb_inroot_read(out, &len, tree, path, cap, err);

	if (rc == 0)
		cr_assert_eq(strlen(*out), len);
	else
		cr_assert_null(*out, "nothing is returned on error");
	return rc;
}

Test(inroot, reads_a_regular_file)
{
	struct sb_error err;
	char *text;

	put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
	cr_assert_eq(read_in(&text, "/etc/passwd", 1 << 20, &err), 0, "%s", err.msg);
	cr_assert_str_eq(text, "root:x:0:0:root:/root:/bin/sh\n");
	free(text);
	/* relative symlinks inside the tree are followed inside it */
	link_to("passwd", "etc/passwd.link");
	cr_assert_eq(read_in(&text, "etc/passwd.link", 1 << 20, &err), 0, "%s", err.msg);
	cr_assert_str_eq(text, "root:x:0:0:root:/root:/bin/sh\n");
	free(text);
}

Test(inroot, a_magic_link_does_not_block)
{
	struct sb_error err;
	char *text;

	link_to("/proc/self/fd/0", "etc/passwd");
	cr_assert_lt(read_in(&text, "/etc/passwd", 1 << 20, &err), 0, "the host's stdin was read");
	cr_assert(strstr(err.msg, "/etc/passwd"), "the message names the file: %s", err.msg);
	/* the same through a directory symlink */
	link_to("/proc/self/fd", "etc/fds");
	cr_assert_lt(read_in(&text, "/etc/fds/0", 1 << 20, &err), 0);
}

Test(inroot, symlinks_cannot_leave_the_tree)
{
	struct sb_error err;
	char *text, *up = sb_strdupf("../../../../../../../..%s", secret);

	link_to(secret, "etc/abs");
	link_to(up, "etc/up");
	link_to(dir, "etc/parent");   /* a directory outside, then a name in it */
	cr_assert_eq(read_in(&text, "/etc/abs", 1 << 20, &err), SB_ERR_NOTFOUND, "%s", err.msg);
	cr_assert_eq(read_in(&text, "/etc/up", 1 << 20, &err), SB_ERR_NOTFOUND, "%s", err.msg);
	cr_assert_eq(read_in(&text, "/etc/parent/secret", 1 << 20, &err), SB_ERR_NOTFOUND, "%s", err.msg);
	cr_assert_eq(read_in(&text, "../secret", 1 << 20, &err), SB_ERR_NOTFOUND, "%s", err.msg);
	/* an absolute link names the tree's own file of that path, never the host's */
	mkdir_in(dir);
	put(secret, "the tree's own\n");
	cr_assert_eq(read_in(&text, "/etc/abs", 1 << 20, &err), 0, "%s", err.msg);
	cr_assert_str_eq(text, "the tree's own\n");
	free(text);
	cr_assert_eq(read_in(&text, "/etc/up", 1 << 20, &err), 0, "%s", err.msg);
	cr_assert_str_eq(text, "the tree's own\n");
	free(text);
	free(up);
}

Test(inroot, a_fifo_is_refused_without_blocking)
{
	char *fifo = sb_path_join(tree, "etc/passwd");
	struct sb_error err;
	struct stat st;
	char *text;

	cr_assert_eq(mkfifo(fifo, 0644), 0);
	cr_assert_eq(read_in(&text, "/etc/passwd", 1 << 20, &err), SB_ERR_UNSAFE);
	cr_assert(strstr(err.msg, "FIFO"), "%s", err.msg);
	/* looked at, never opened */
	cr_assert_eq(sb_inroot_stat(&st, tree, "/etc/passwd", &err), 0, "%s", err.msg);
	cr_assert(S_ISFIFO(st.st_mode));
	/* and through a symlink to it */
	link_to("/etc/passwd", "etc/shadow");
	cr_assert_eq(read_in(&text, "/etc/shadow", 1 << 20, &err), SB_ERR_UNSAFE);
	free(fifo);
}

Test(inroot, a_directory_is_refused)
{
	struct sb_error err;
	char *text;

	cr_assert_eq(read_in(&text, "/etc", 1 << 20, &err), SB_ERR_UNSAFE);
	cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
	cr_assert_eq(read_in(&text, "/", 1 << 20, &err), SB_ERR_UNSAFE);
}

Test(inroot, a_file_over_the_cap_is_refused)
{
	char *big = calloc(1, 70001), *text;
	struct sb_error err;

	memset(big, 'x', 70000);
	put("etc/big", big);
	cr_assert_eq(read_in(&text, "/etc/big", 69999, &err), SB_ERR_LIMIT);
	cr_assert(strstr(err.msg, "69999"), "the message gives the cap: %s", err.msg);
	cr_assert_eq(read_in(&text, "/etc/big", 70000, &err), 0, "exactly the cap is fine: %s", err.msg);
	cr_assert_eq(strlen(text), 70000);
	free(text);
	free(big);
}

Test(inroot, a_missing_root_or_file_is_not_found)
{
	struct sb_error err;
	char *text = NULL;
	struct stat st;

	cr_assert_eq(read_in(&text, "/etc/none", 1 << 20, &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_inroot_stat(&st, tree, "/etc/none/x", &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_inroot_read(&text, NULL, "/nonexistent-sbtest-root", "/etc/passwd", 100, &err), SB_ERR_NOTFOUND);
}
