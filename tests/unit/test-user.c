/* USER values resolved in a tree's own /etc/passwd and /etc/group
 * (src/sandbox/user.c): names, numbers, groups, what is refused, and that a
 * symlink in the tree never leads to the host's files. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/internal.h"
#include "testutil.h"

static char *tree;

static void setup(void)
{
	tree = tu_tempdir("user");
	cr_assert_eq(tu_sh("mkdir -p %s/etc && printf 'root:x:0:0:root:/root:/bin/sh\\n"
			   "app:x:1000:1001:App:/home/app:/bin/sh\\nshort:x:7\\nbad:x:1x:0::/:/bin/sh\\n' > %s/etc/passwd && "
			   "printf 'root:x:0:\\nstaff:x:50:\\nodd:x:zz:\\n' > %s/etc/group",
			   tree, tree, tree), 0);
}

static void teardown(void)
{
	tu_remove(tree);
	free(tree);
}

TestSuite(user, .init = setup, .fini = teardown);

Test(user, names_numbers_and_groups)
{
	struct sb_user u;
	struct sb_error err;

	cr_assert_eq(sb_user_resolve(&u, tree, "app", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 1000 && u.gid == 1001);
	cr_assert_str_eq(u.home, "/home/app");
	cr_assert_eq(sb_user_resolve(&u, tree, "1000", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 1000 && u.gid == 1001, "a uid with an entry takes its gid");
	cr_assert_eq(sb_user_resolve(&u, tree, "4242", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 4242 && u.gid == 0, "a uid needs no entry");
	cr_assert_str_eq(u.home, "/");
	cr_assert_eq(sb_user_resolve(&u, tree, "app:staff", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 1000 && u.gid == 50);
	cr_assert_eq(sb_user_resolve(&u, tree, "5:6", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 5 && u.gid == 6);
	cr_assert_eq(sb_user_resolve(&u, tree, "root", &err), 0, "%s", err.msg);
	cr_assert(u.uid == 0 && u.gid == 0);
}

Test(user, refusals)
{
	struct sb_user u;
	struct sb_error err;

	cr_assert_eq(sb_user_resolve(&u, tree, "ghost", &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "user 'ghost' is not in the image's /etc/passwd"), "%s", err.msg);
	cr_assert_eq(sb_user_resolve(&u, tree, "app:wheel", &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "group 'wheel'"), "%s", err.msg);
	cr_assert_eq(sb_user_resolve(&u, tree, "short", &err), SB_ERR_FORMAT, "a line with too few fields");
	cr_assert_eq(sb_user_resolve(&u, tree, "bad", &err), SB_ERR_FORMAT);
	cr_assert_eq(sb_user_resolve(&u, tree, "app:odd", &err), SB_ERR_FORMAT);
	const char *const invalid[] = { "", ":0", "app:", "a\nb" };
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		cr_assert_eq(sb_user_resolve(&u, tree, invalid[i], &err), SB_ERR_INVALID, "'%s'", invalid[i]);
	/* 4294967295 is the kernel's "unchanged", not an id */
	cr_assert_eq(sb_user_resolve(&u, tree, "4294967295", &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_user_resolve(&u, tree, "app", NULL), 0, "err may be NULL");
	cr_assert_eq(sb_user_resolve(&u, tree, "ghost", NULL), SB_ERR_NOTFOUND);
}

/* The tree's passwd and group as symlinks to the host's shadow files: read
 * inside the tree they lead to files it does not have (read on the host,
 * root would be found in shadow, and gshadow's would be malformed). */
Test(user, never_the_hosts_files)
{
	struct sb_user u;
	struct sb_error err;

	cr_assert_eq(tu_sh("ln -sf /etc/shadow %s/etc/passwd && ln -sf /etc/gshadow %s/etc/group", tree, tree), 0);
	cr_assert_eq(sb_user_resolve(&u, tree, "root", &err), SB_ERR_NOTFOUND, "the host's file was read: %s", err.msg);
	cr_assert_eq(sb_user_resolve(&u, tree, "0:root", &err), SB_ERR_NOTFOUND, "the host's file was read: %s", err.msg);
	cr_assert_eq(tu_sh("rm %s/etc/passwd && mkfifo %s/etc/passwd", tree, tree), 0);
	cr_assert_eq(sb_user_resolve(&u, tree, "app", &err), SB_ERR_UNSAFE, "a FIFO is not opened");
}
