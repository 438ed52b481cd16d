/* The escape and isolation suite, files: from inside real sandboxes (real
 * runsc, busybox sh), every attempt to reach host files outside the given
 * mounts, to write through a read-only mount, or to see another sandbox must
 * fail, inside (the attempt's own error) and outside (the host's files are as
 * they were, compared before and after). The host side, given symlinks the
 * guest planted in its workspace and the exchange folder, must not follow
 * them either: cp out and in, diff, rm, gc and the workbench's file views
 * (the library calls it makes). Cases test-files.c, test-commit.c and
 * test-sandbox-hostile.c cover are not repeated. The network, limits and
 * blocking attempts are in test-escape-host.c; docs/security.md has the table. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "escape.h"
#include "sandbox/files.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct esc e;

static void setup(void)
{
	sbf_setup(&f, "escape");
	esc_setup(&e, &f);
}

static void teardown(void)
{
	sbf_teardown(&f);
	esc_teardown(&e);
}

TestSuite(escape, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

Test(escape, proc_root_links_lead_to_the_sandbox_only)
{
	char *before = esc_victim_sum(&e);

	ESC_MAKE(&e, "p", NULL);
	/* /proc/self/root and /proc/1/root are the guest's own root: the host's
	 * paths named through them do not exist there, and a write lands in the
	 * sandbox's tree, never the host's */
	static const char *const tries[] = {
		"cat /proc/self/root@V@/secret",
		"cat /proc/1/root@V@/secret",
		"echo pwned > /proc/self/root@V@/secret",
		"echo pwned > /proc/1/root@V@/secret",
		"ls /proc/1/root@R@/sandboxes",
		"ls /proc/self/root@R@/sandboxes",
		"cat /proc/self/root/../..@V@/secret",
		"cat /proc/1/cwd@V@/secret",
		"cat /proc/self/root/proc/1/root@V@/secret",
		"cd /proc/1/root/.. && cd .. && cat .@V@/secret",
		NULL,
	};
	esc_all_fail(&e, "p", tries);
	char *marker = esc_expand(&e, "/tmp/escape-marker-@S@"), *cmd = esc_expand(&e, "echo in > /proc/self/root/tmp/escape-marker-@S@");
	free(sbf_sh(&f, NULL, "p", cmd, NULL));
	cr_assert_neq(access(marker, F_OK), 0, "a write through /proc/self/root reached the host's /tmp");
	free(cmd);
	cmd = sb_strdupf("cat %s", marker);
	char *own = sbf_sh(&f, NULL, "p", cmd, NULL);
	free(cmd);
	free(marker);
	cr_assert_str_eq(own, "in\n", "it landed in the sandbox's own root");
	free(own);
	esc_assert_victim(&e, before, "the /proc links");
	free(before);
}

Test(escape, the_hosts_proc_is_not_there)
{
	ESC_MAKE(&e, "a", NULL);
	ESC_MAKE(&e, "b", NULL);
	/* the guest's /proc lists its own processes: its init, not the host's,
	 * and no runsc, no other sandbox */
	char *out = sbf_sh(&f, NULL, "b", "cat /proc/1/cmdline | tr '\\0' ' '; echo; "
				       "for p in /proc/[0-9]*; do cat $p/cmdline; echo; done | grep -c . ; "
				       "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c -e 'run[s]c' -e 'gofe[r]' -e 'system[d]' -e 'sandbenc[h]'; true",
			   NULL);
	int n_procs = 0, n_host = -1;
	char *nl = strchr(out, '\n');
	cr_assert(nl && strstr(out, "trap") && nl - out < 200, "pid 1 is the sandbox's init: %s", out);
	cr_assert_eq(sscanf(nl + 1, "%d %d", &n_procs, &n_host), 2, "%s", out);
	cr_assert(n_procs > 0 && n_procs < 10, "the guest sees %d processes: %s", n_procs, out);
	cr_assert_eq(n_host, 0, "the guest sees host processes: %s", out);
	free(out);
	/* what the host's /proc would give away */
	static const char *const tries[] = {
		"grep -q sandbench /proc/mounts",
		"grep -q @R@ /proc/self/mountinfo",
		"cat /proc/1/environ | tr '\\0' '\\n' | grep -q SANDBENCH",
		"ls /proc/sys/fs/binfmt_misc/register",
		"echo 1 > /proc/sysrq-trigger",
		"echo x > /proc/sys/kernel/core_pattern",
		NULL,
	};
	esc_all_fail(&e, "b", tries);
}

Test(escape, another_sandbox_is_invisible)
{
	ESC_MAKE(&e, "a", NULL);
	ESC_MAKE(&e, "b", NULL);
	/* a's workspace, a session of a, a's timeline: all hold a marker */
	cr_assert_eq(tu_sh("printf x > %s/sandboxes/a/workspace/amark-%s", f.dir, e.sfx), 0);
	char *m = sb_strdupf("echo tl-%s-$((1+1))", e.sfx);
	free(sbf_sh(&f, NULL, "a", m, NULL));
	free(m);
	sbf_ok(SB("session", "start", "a", "s1"), "session start");
	/* b looks for them: by name everywhere, at the host's paths, by content */
	static const char *const tries[] = {
		"find / -path /proc -prune -o -path /sys -prune -o -name 'amark-*' -print | grep -q .",
		"ls @R@/sandboxes/a",
		"ls /var/lib/sandbench/sandboxes",
		"cat @R@/sandboxes/a/timeline.jsonl",
		"ls @R@/sandboxes/a/sessions",
		"ls @R@/sandboxes/a/workspace",
		"grep -rqs tl-@S@-2 /bin /etc /root /workspace /exchange /tmp /var /home /usr",
		"ls /proc/*/root/workspace/amark-*",
		NULL,
	};
	esc_all_fail(&e, "b", tries);
	sbf_ok(SB("session", "kill", "a", "s1"), "session kill");
}

Test(escape, hardlinks_across_mounts_are_refused)
{
	char *share = esc_share(&e, "hl-share");
	char *ro = sb_strdupf("%s:/ro", e.victim), *rw = sb_strdupf("%s:/rw:rw", share);
	char *before = esc_victim_sum(&e);

	ESC_MAKE(&e, "h", "--mount", ro, "--mount", rw, NULL);
	free(sbf_sh(&f, NULL, "h", "echo w > /workspace/w; echo r > /rw/r; echo x > /exchange/x-h", NULL));
	static const char *const tries[] = {
		"ln /ro/secret /workspace/l1",
		"ln /ro/secret /rw/l2",
		"ln /ro/secret /ro/l3",
		"ln /etc/passwd /workspace/l4",
		"ln /etc/passwd /exchange/l5",
		"ln /workspace/w /rw/l6",
		"ln /rw/r /workspace/l7",
		"ln /exchange/x-h /workspace/l8",
		"ln /workspace/w /etc/l9",
		NULL,
	};
	esc_all_fail(&e, "h", tries);
	/* the host files keep their one link, and no new name appeared */
	char *links = tu_sh_out("stat -c %%h %s/secret %s/r %s/sandboxes/h/workspace/w %s/exchange/x-h", e.victim, share,
				f.dir, f.dir);
	cr_assert_str_eq(links, "1\n1\n1\n1", "a host file gained a link: %s", links);
	free(links);
	cr_assert_eq(tu_sh("ls %s/sandboxes/h/workspace %s %s/exchange | grep -q '^l[0-9]'", f.dir, share, f.dir), 1);
	esc_assert_victim(&e, before, "the hard links");
	free(before);
	free(ro);
	free(rw);
}

Test(escape, a_read_only_mount_stays_read_only)
{
	char *ro = sb_strdupf("%s:/ro:ro", e.victim);
	char *before = esc_victim_sum(&e);

	ESC_MAKE(&e, "r", "--mount", ro, NULL);
	/* the mount is there and readable: what follows fails for being read-only */
	char *text = sbf_sh(&f, NULL, "r", "cat /ro/secret", NULL);
	cr_assert_str_eq(text, "HOST SECRET\n");
	free(text);
	static const char *const tries[] = {
		"echo x >> /ro/secret",
		"mount -o remount,rw /ro",
		"mount -o remount,rw,bind /ro",
		"mount --bind /workspace /ro",
		"umount /ro",
		"umount -l /ro",
		"mv /ro/secret /ro/moved",
		"mv /ro/sub /ro/sub2",
		"rm /ro/secret",
		"rm -r /ro/sub",
		"chmod 666 /ro/secret",
		"chmod 777 /ro",
		"chown 1:1 /ro/secret",
		"touch -d 2000-01-01 /ro/secret",
		"truncate -s 0 /ro/secret",
		"touch /ro/new",
		"mkdir /ro/newdir",
		"ln -s /etc /ro/link",
		"mknod /ro/dev c 1 3",
		"mkfifo /ro/fifo",
		/* reopening a read-only descriptor for writing through its magic link */
		"exec 3</ro/secret; echo x > /proc/self/fd/3",
		"exec 3</ro/secret; echo x >> /proc/self/fd/3",
		"exec 3</ro/secret; echo x >&3",
		"exec 3</ro; cd /proc/self/fd/3 && echo x > new",
		"exec 3</ro/sub; echo x > /proc/self/fd/3/inner",
		"cd /ro/sub && echo x > ../new",
		NULL,
	};
	esc_all_fail(&e, "r", tries);
	/* O_PATH descriptors, reopened through /proc/self/fd, linkat'ed, chmod'ed */
	esc_probe(&e, "r", "/ro/secret");
	/* a rename out of the mount copies at best: the host file stays */
	free(sbf_sh(&f, NULL, "r", "mv /ro/secret /workspace/stolen 2>/dev/null; true", NULL));
	esc_assert_victim(&e, before, "the read-only mount's attempts");
	/* and the same after a stop and a restore (the mount is verified again) */
	sbf_ok(SB("stop", "r"), "stop");
	sbf_ok(SB("restore", "r"), "restore");
	esc_all_fail(&e, "r", tries);
	esc_assert_victim(&e, before, "the attempts after a restore");
	free(before);
	free(ro);
}

/* Symlinks the guest plants in its workspace, its disk and the exchange
 * folder, each pointing at a host file or folder. */
static void plant_symlinks(const char *name)
{
	char *tmpl = sb_strdupf("ln -s @V@/secret /exchange/xs-@S@%1$s; ln -s @V@ /exchange/xd-@S@%1$s; "
				"ln -s @V@ /workspace/d; ln -s @V@/secret /workspace/s; ln -s @V@ /root/d; "
				"mkdir -p /exchange/xt-@S@%1$s && ln -s @V@ /exchange/xt-@S@%1$s/d && "
				"ln -s @V@/secret /exchange/xt-@S@%1$s/s", name);
	char *cmd = esc_expand(&e, tmpl);
	free(sbf_sh(&f, NULL, name, cmd, NULL));
	free(cmd);
	free(tmpl);
}

/* What must hold of a copy out: no regular file with the host's secret in it. */
static void assert_no_secret_below(const char *dir)
{
	cr_assert_neq(tu_sh("grep -rqs 'HOST SECRET' %s", dir), 0, "the host's secret was copied into %s", dir);
}

Test(escape, host_side_never_follows_exchange_and_workspace_symlinks)
{
	char *before = esc_victim_sum(&e);
	char *out = esc_share(&e, "cp-out"), *in = esc_share(&e, "cp-in");
	cr_assert_eq(tu_sh("printf 'from the host' > %s/f", in), 0);

	ESC_MAKE(&e, "s", NULL);
	plant_symlinks("s");
	/* cp out: the file symlinks of the exchange folder lead nowhere, a tree keeps them as links */
	char *src = sb_strdupf("s:/exchange/xs-%ss", e.sfx), *dst = sb_strdupf("%s/one", out);
	struct tu_run r = SB("cp", src, dst);
	cr_assert_neq(r.status, 0, "copied the host file the exchange symlink names: %s", r.out);
	tu_run_free(&r);
	free(src);
	src = sb_strdupf("s:/exchange/xd-%ss/secret", e.sfx);
	r = SB("cp", src, dst);
	cr_assert_neq(r.status, 0, "copied through the exchange's directory symlink: %s", r.out);
	tu_run_free(&r);
	free(src);
	src = sb_strdupf("s:/exchange/xt-%ss", e.sfx);
	free(dst);
	dst = sb_strdupf("%s/tree", out);
	sbf_ok(SB("cp", "-r", src, dst), "cp -r of the exchange tree");
	assert_no_secret_below(out);
	free(src);
	/* cp in through them: replaced or refused, never written through */
	char *file = sb_strdupf("%s/f", in);
	static const char *const into[] = { "s:/exchange/xs-@S@s", "s:/exchange/xd-@S@s/secret", "s:/exchange/xd-@S@s/new",
					    "s:/workspace/d/new", "s:/workspace/s", "s:/exchange/xt-@S@s/d/secret",
					    "s:/root/d/secret" };
	for (size_t i = 0; i < sizeof(into) / sizeof(into[0]); i++) {
		char *path = esc_expand(&e, into[i]), *target = strdup(path);
		tu_run_free((struct tu_run[]){ SB("cp", file, target) });
		esc_assert_victim(&e, before, target);
		free(path);
		free(target);
	}
	free(dst);
	dst = sb_strdupf("s:/exchange/xd-%ss/", e.sfx);
	tu_run_free((struct tu_run[]){ SB("cp", "-r", in, dst) });
	esc_assert_victim(&e, before, "cp -r in");
	/* diff lists names, never what they point at */
	r = SB("diff", "s");
	cr_assert_eq(r.status, 0, "diff: %s", r.err);
	cr_assert(strstr(r.out, "/workspace/d") && !strstr(r.out, "HOST SECRET"), "%s", r.out);
	tu_run_free(&r);
	/* the workbench's diff view copies an entry out as it does (a file, else the tree) */
	esc_view_copy(&e, "s", "/workspace/d", out);
	esc_view_copy(&e, "s", "/workspace/s", out);
	char *xd = sb_strdupf("/exchange/xd-%ss", e.sfx);
	esc_view_copy(&e, "s", xd, out);
	free(xd);
	assert_no_secret_below(out);
	/* rm and gc walk the trees holding the links: they remove the links only */
	sbf_ok(SB("rm", "s", "--force"), "rm");
	esc_assert_victim(&e, before, "rm");
	ESC_MAKE(&e, "o", NULL);
	plant_symlinks("o");
	sbf_ok(SB("stop", "o"), "stop");
	cr_assert_eq(tu_sh("rm %s/sandboxes/o/sandbox.json", f.dir), 0);
	r = SB("gc");
	cr_assert_eq(r.status, 0, "gc: %s", r.err);
	tu_run_free(&r);
	cr_assert_neq(tu_sh("test -e %s/sandboxes/o", f.dir), 0, "gc left the recordless sandbox");
	esc_assert_victim(&e, before, "gc");
	free(before);
	free(dst);
	free(file);
}
