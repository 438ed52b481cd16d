/* A guest that turns its own tree against the host: the host never follows a
 * path the sandbox can write. /etc replaced by a symlink to a host folder or
 * to /etc itself, across create, stop/restore and a cold start: the host's
 * files stay as they were, and the sandbox still gets its hosts and
 * resolv.conf (bound read-only from its own directory). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *victim;

static void setup(void)
{
	sbf_setup(&f, "hostile");
	victim = tu_tempdir("victim");
	cr_assert_eq(tu_sh("printf 'original\\n' > %s/hosts", victim), 0);
}

static void teardown(void)
{
	sbf_teardown(&f);
	tu_remove(victim);
	free(victim);
}

TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 180);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* sha256 of the host's own name-resolution files: they must never change */
static char *host_etc_sum(void)
{
	return tu_sh_out("cat /etc/hosts /etc/resolv.conf 2>/dev/null | sha256sum");
}

/* The host's files are as they were before (frees before). */
static void assert_host_etc(char *before)
{
	char *after = host_etc_sum();

	cr_assert_str_eq(before, after, "the host's /etc/hosts or resolv.conf changed");
	free(before);
	free(after);
}

/* What the victim folder holds: one file, untouched. */
static void assert_victim_untouched(void)
{
	char *list = tu_sh_out("ls -A %s", victim), *text = tu_sh_out("cat %s/hosts", victim);

	cr_assert_str_eq(list, "hosts", "the host folder gained files: %s", list);
	cr_assert_str_eq(text, "original", "the host folder's hosts was rewritten: %s", text);
	free(list);
	free(text);
}

/* The sandbox's /etc/hosts names it: it got its own file, read-only. */
static void assert_own_hosts(const char *name)
{
	char *out = sbf_sh(&f, NULL, name, "cat /etc/hosts; echo x > /etc/hosts 2>/dev/null && echo WRITABLE; true", NULL);

	cr_assert(strstr(out, name), "no hosts entry for %s: %s", name, out);
	cr_assert_null(strstr(out, "WRITABLE"), "the guest can write its /etc/hosts");
	free(out);
}

/* Replaces /etc in the sandbox's disk with a symlink to target while it is
 * stopped: what an image with a symlinked /etc, or a guest that swapped it
 * under an older sandbench, leaves behind. */
static void symlink_etc(const char *name, const char *target)
{
	cr_assert_eq(tu_sh("cd %s/sandboxes/%s/upper && rm -rf etc && ln -s %s etc", f.dir, name, target), 0);
}

Test(hostile, guest_cannot_move_its_bound_etc_files)
{
	sbf_ok(SB("create", "mover", "--image", SBF_IMAGE, "--permanent"), "create");
	struct tu_run r = SB("exec", "mover", "--", "sh", "-c", "mv /etc /etc.real && ln -s /x /etc");
	cr_assert_neq(r.status, 0, "moving /etc over its bound files worked: %s", r.out);
	tu_run_free(&r);
	assert_own_hosts("mover");
}

Test(hostile, etc_symlinked_to_a_host_folder_across_restore_and_cold_start)
{
	char *before = host_etc_sum();

	sbf_ok(SB("create", "swap", "--image", SBF_IMAGE, "--permanent"), "create");
	sbf_ok(SB("stop", "swap"), "stop");
	symlink_etc("swap", victim);
	/* the checkpoint no longer fits the tree: restore falls back to a cold start */
	sbf_ok(SB("restore", "swap"), "restore");
	assert_own_hosts("swap");
	assert_victim_untouched();
	/* a cold start without any checkpoint */
	sbf_ok(SB("stop", "swap"), "stop");
	cr_assert_eq(tu_sh("rm -rf %s/sandboxes/swap/checkpoint", f.dir), 0);
	sbf_ok(SB("restore", "swap"), "cold start");
	assert_own_hosts("swap");
	assert_victim_untouched();
	assert_host_etc(before);
}

Test(hostile, etc_symlinked_to_etc_leaves_the_hosts_etc_alone)
{
	char *before = host_etc_sum();

	sbf_ok(SB("create", "loop", "--image", SBF_IMAGE, "--permanent", "--network", "off"), "create");
	sbf_ok(SB("stop", "loop"), "stop");
	symlink_etc("loop", "/etc");
	/* inside, /etc -> /etc resolves to nothing: the boot may refuse, but it
	 * must say why and touch nothing of the host */
	struct tu_run r = SB("restore", "loop");
	if (r.status != 0)
		cr_assert(r.err[0], "a refused restore says why");
	tu_run_free(&r);
	assert_host_etc(before);
}

Test(hostile, image_with_a_symlinked_etc_creates_safely)
{
	char *before = host_etc_sum();
	/* the test root's image is ours to change: its /etc becomes a symlink */
	char *digest = tu_sh_out("ls %s/images/rootfs | head -n 1", f.dir);
	digest[strcspn(digest, "\n")] = '\0';
	cr_assert_eq(tu_sh("cd %s/images/rootfs/%s && rm -rf etc && ln -s %s etc", f.dir, digest, victim), 0);
	sbf_ok(SB("create", "img", "--image", SBF_IMAGE), "create");
	assert_own_hosts("img");
	assert_victim_untouched();
	char *after = host_etc_sum();
	cr_assert_str_eq(before, after, "the host's /etc/hosts or resolv.conf changed");
	free(digest);
	free(before);
	free(after);
}
