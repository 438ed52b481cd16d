/* The host's view of a tree a sandbox can write: the in-root reader
 * (base/inroot.h) against hostile trees, and the login shell a workbench
 * shell runs (sb_sandbox_login_shell), which reads the sandbox's passwd
 * through it. No runsc: the "rootfs" is a plain directory. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/inroot.h"
#include "base/root.h"
#include "sandbox/sandbox.h"
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

/* ---- the login shell of a sandbox, read inside its root ---- */

static struct sb_root *root;

static void login_setup(void)
{
	struct sb_record rec = {
		.name = "box", .id = "sb-0123456789abcdef", .created = 1700000000, .image_ref = "",
		.kind = SB_KIND_PERMANENT, .expiry_action = SB_EXPIRY_RM, .exchange = 1,
		.owner = "", .state = SB_STATE_RUNNING, .reason = "created",
	};

	setup();
	free(tree);
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	tree = sb_path_join(dir, "sandboxes/box/rootfs");
	mkdir_in("etc");
	mkdir_in("bin");
	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	cr_assert_eq(sb_record_save(root, &rec, NULL), 0);
}

static void login_teardown(void)
{
	sb_root_close(root);
	teardown();
}

TestSuite(login_shell, .init = login_setup, .fini = login_teardown, .timeout = 20);

static void program(const char *rel)
{
	char *path = sb_path_join(tree, rel);

	cr_assert_eq(sb_fs_write_atomic(path, "#!/bin/sh\n", 10, 0755, NULL), 0);
	free(path);
}

/* The chosen shell and the note, "" when none; returns the rc. */
static int login(char *shell, size_t size, char *why, size_t why_size)
{
	char *s = NULL, *w = NULL;
	struct sb_error err;
	int rc = sb_sandbox_login_shell(&s, &w, root, "box", &err);

	snprintf(shell, size, "%s", s ? s : "");
	snprintf(why, why_size, "%s", w ? w : (rc < 0 ? err.msg : ""));
	free(s);
	free(w);
	return rc;
}

Test(login_shell, takes_roots_shell_from_passwd)
{
	char shell[256], why[1024];

	program("bin/sh");
	program("bin/zsh");
	put("etc/passwd", "daemon:x:1:1::/:/bin/false\nroot:x:0:0:root:/root:/bin/zsh\n");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/zsh");
	cr_assert_str_eq(why, "", "no note when passwd's shell is used");
}

Test(login_shell, falls_back_when_passwd_is_hostile)
{
	char shell[256], why[1024];

	program("bin/sh");
	link_to("/proc/self/fd/0", "etc/passwd");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	cr_assert(strstr(why, "/etc/passwd"), "the note names the file: %s", why);
	/* a FIFO the same */
	char *passwd = sb_path_join(tree, "etc/passwd");
	cr_assert_eq(unlink(passwd), 0);
	cr_assert_eq(mkfifo(passwd, 0644), 0);
	free(passwd);
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	cr_assert(strstr(why, "FIFO"), "%s", why);
}

Test(login_shell, never_reads_a_host_passwd)
{
	char shell[256], why[1024];
	const char *evil = "root:x:0:0:root:/root:/bin/evilsh\n";

	program("bin/sh");
	program("bin/evilsh");   /* would be chosen, were the host's file read */
	cr_assert_eq(sb_fs_write_atomic(secret, evil, strlen(evil), 0600, NULL), 0);
	link_to(secret, "etc/passwd");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	cr_assert(strstr(why, "/etc/passwd"), "%s", why);
}

Test(login_shell, checks_the_shell_inside_the_root)
{
	char shell[256], why[1024];

	program("bin/sh");
	/* /bin/bash exists on the host, not in the tree; a symlink to it names the tree's */
	put("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	cr_assert(strstr(why, "/bin/bash"), "%s", why);
	link_to("/usr/bin/env", "bin/bash");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	/* nologin is no shell */
	put("etc/passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n");
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(shell, "/bin/sh");
	cr_assert(strstr(why, "names no login shell"), "%s", why);
}

Test(login_shell, no_shell_at_all_or_not_running)
{
	char shell[256], why[1024];
	struct sb_record rec;

	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), SB_ERR_NOTFOUND);
	cr_assert(strstr(why, "has no shell"), "%s", why);
	cr_assert_eq(sb_record_load(&rec, root, "box", NULL), 0);
	cr_assert_eq(sb_record_transition(root, &rec, SB_STATE_STOPPED, "test", NULL), 0);
	sb_record_clear(&rec);
	cr_assert_eq(login(shell, sizeof(shell), why, sizeof(why)), SB_ERR_STATE);
	cr_assert_eq(sb_sandbox_login_shell(&(char *){ NULL }, NULL, root, "../box", NULL), SB_ERR_INVALID);
}
