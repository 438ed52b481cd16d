/* sandbench cp and diff with real runsc: files and trees in and out of
 * running and stopped sandboxes, tar streams both ways, the workspace and
 * the exchange folder; a hostile guest's symlinks, FIFOs, big files and
 * forged tar streams must neither leak a host file, nor write outside the
 * destination, nor block; diff's added, changed and deleted entries with
 * whiteouts and opaque directories understood. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *host;   /* a scratch folder on the host */
static char *victim; /* a host folder the guest points its symlinks at */
static char *sbx;    /* "sandbench --root ROOT" for shell pipelines */
static char *hpaths[128]; /* paths of the host folder made by hpath, freed with the test */
static size_t n_hpaths;

static void setup(void)
{
	sbf_setup(&f, "files");
	host = tu_tempdir("files-host");
	victim = tu_tempdir("files-victim");
	char *bin = tu_buildpath("sandbench");
	sbx = sb_strdupf("%s --root %s", bin, f.dir);
	free(bin);
	cr_assert_eq(tu_sh("printf 'HOST SECRET\\n' > %s/secret && mkdir -p %s/src/sub && printf one > %s/src/a && "
			   "printf two > %s/src/sub/b && ln -s a %s/src/link && printf hello > %s/hello",
			   victim, host, host, host, host, host), 0);
}

static void teardown(void)
{
	sbf_teardown(&f);
	tu_remove(host);
	tu_remove(victim);
	free(host);
	free(victim);
	free(sbx);
	while (n_hpaths)
		free(hpaths[--n_hpaths]);
}

TestSuite(files, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void make(const char *name)
{
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--permanent"), "create");
}

static char *hpath(const char *rel)
{
	char *p = sb_strdupf("%s/%s", host, rel);

	cr_assert(p && n_hpaths < sizeof(hpaths) / sizeof(hpaths[0]));
	return hpaths[n_hpaths++] = p;
}

/* cat of a host file ("" when missing) */
static char *hcat(const char *rel)
{
	char *p = hpath(rel), *text = NULL;

	if (sb_fs_read_file(&text, NULL, p, 1 << 20, NULL) < 0)
		text = strdup("");
	return text;
}

static void assert_hcat(const char *rel, const char *want)
{
	char *got = hcat(rel);

	cr_assert_str_eq(got, want, "%s/%s holds '%s', not '%s'", host, rel, got, want);
	free(got);
}

static int hexists(const char *rel)
{
	struct stat st;
	char *p = hpath(rel);
	int rc = lstat(p, &st) == 0;

	return rc;
}

/* runs cp with args and expects status; returns stderr (malloc'd) */
static char *cp_status(int status, const char *a, const char *b, const char *c, const char *d)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "cp", a, b, c, d, NULL);

	cr_assert_eq(r.status, status, "cp %s %s %s %s: status %d, not %d: %s", a, b ? b : "", c ? c : "", d ? d : "",
		     r.status, status, r.err);
	char *e = r.err;
	r.err = NULL;
	tu_run_free(&r);
	return e;
}

static void cp_ok(const char *a, const char *b, const char *c, const char *d)
{
	free(cp_status(0, a, b, c, d));
}

/* The test root's image (ours to change) with dash as its /bin/sh: a shell
 * that, unlike busybox's, finds tar only as a program in PATH. */
static void image_with_dash(void)
{
	char *rootfs = tu_sh_out("ls -d %s/images/rootfs/*/ | head -n 1", f.dir);

	cr_assert_eq(tu_sh("cd %s && rm -f bin/sh bin/tar && cp /bin/dash bin/sh && mkdir -p lib/x86_64-linux-gnu lib64 && "
			   "cp /lib/x86_64-linux-gnu/libc.so.6 lib/x86_64-linux-gnu/ && cp /lib64/ld-linux-x86-64.so.2 lib64/",
			   rootfs), 0);
	free(rootfs);
}

static void assert_victim_untouched(void)
{
	char *list = tu_sh_out("ls -A %s", victim), *text = tu_sh_out("cat %s/secret", victim);

	cr_assert_str_eq(list, "secret", "the host folder gained files: %s", list);
	cr_assert_str_eq(text, "HOST SECRET", "the host file was rewritten: %s", text);
	free(list);
	free(text);
}

Test(files, file_in_and_out_of_a_running_sandbox)
{
	char *hello = hpath("hello"), *back = hpath("back"), *dir = hpath("outdir");

	make("run1");
	/* into a directory under its own name, then onto a new name */
	cp_ok(hello, "run1:/root", NULL, NULL);
	cp_ok(hello, "run1:/root/renamed", NULL, NULL);
	char *out = sbf_sh(&f, NULL, "run1", "cat /root/hello; echo; cat /root/renamed; ls -ln /root/hello", NULL);
	cr_assert(strstr(out, "hello\nhello"), "%s", out);
	cr_assert(strstr(out, " 0 "), "files copied in are root's: %s", out);
	free(out);
	cp_ok("run1:/root/renamed", back, NULL, NULL);
	assert_hcat("back", "hello");
	/* each copy is in the timeline: direction, paths, route, bytes; the
	 * guest's tar is no exec entry of its own */
	struct tu_run t = SB("timeline", "run1", "--json");
	cr_assert_eq(t.status, 0, "%s", t.err);
	char *want_in = sb_strdupf("\"cp in: %s -> run1:/root (guest)\"", hello);
	char *want_out = sb_strdupf("\"cp out: run1:/root/renamed -> %s (guest)\"", back);
	cr_assert(strstr(t.out, want_in) && strstr(t.out, want_out), "%s", t.out);
	cr_assert(strstr(t.out, "\"kind\":\"file\"") && strstr(t.out, "\"out_bytes\":5"), "%s", t.out);
	cr_assert_null(strstr(t.out, "readlink"), "no exec entry for cp's own tar: %s", t.out);
	free(want_in);
	free(want_out);
	tu_run_free(&t);
	/* onto an existing file: replaced */
	sbf_sh(&f, NULL, "run1", "printf changed > /root/renamed", NULL);
	cp_ok("run1:/root/renamed", back, NULL, NULL);
	assert_hcat("back", "changed");
	/* a trailing slash asks for a directory that must exist */
	char *slash = sb_strdupf("%s/", dir);
	free(cp_status(3, "run1:/root/hello", slash, NULL, NULL));
	cr_assert_not(hexists("outdir"));
	free(slash);
}

Test(files, trees_in_and_out_need_r)
{
	char *src = hpath("src"), *dot = hpath("src/."), *out = hpath("tree"), *out2 = hpath("tree2");

	make("tree");
	char *e = cp_status(2, src, "tree:/srv", NULL, NULL);
	cr_assert(strstr(e, "-r"), "a directory without -r says so: %s", e);
	free(e);
	/* a missing destination becomes the copy; an existing one receives it */
	cp_ok("-r", src, "tree:/srv", NULL);
	sbf_sh(&f, NULL, "tree", "mkdir -p /opt/into", NULL);
	cp_ok("-r", src, "tree:/opt/into", NULL);
	cp_ok("-r", dot, "tree:/opt", NULL);
	char *ls = sbf_sh(&f, NULL, "tree", "cat /srv/a /srv/sub/b /opt/into/src/a /opt/a; readlink /srv/link", NULL);
	cr_assert_str_eq(ls, "onetwooneonea\n");
	free(ls);
	e = cp_status(2, "tree:/srv", out, NULL, NULL);
	free(e);
	cp_ok("-r", "tree:/srv", out, NULL);
	cr_assert_eq(tu_sh("diff -r --no-dereference %s %s", src, out), 0, "the tree came back different");
	/* out of the workspace (host side) the same way */
	cp_ok("-r", src, "tree:/workspace/w", NULL);
	cp_ok("-r", "tree:/workspace/w", out2, NULL);
	cr_assert_eq(tu_sh("diff -r --no-dereference %s %s", src, out2), 0, "the workspace tree came back different");
}

Test(files, tar_streams_both_ways)
{
	make("tar");
	sbf_sh(&f, NULL, "tar", "mkdir -p /opt/in", NULL);
	cr_assert_eq(tu_sh("tar -C %s/src -cf - . | %s cp - tar:/opt/in", host, sbx), 0);
	char *ls = sbf_sh(&f, NULL, "tar", "cat /opt/in/a /opt/in/sub/b", NULL);
	cr_assert_str_eq(ls, "onetwo");
	free(ls);
	/* into the workspace too, gzip'd */
	cr_assert_eq(tu_sh("tar -C %s/src -czf - . | %s cp - tar:/workspace", host, sbx), 0);
	char *ws = tu_sh_out("cat %s/sandboxes/tar/workspace/sub/b", f.dir);
	cr_assert_str_eq(ws, "two");
	free(ws);
	/* out: named after the source */
	char *list = tu_sh_out("%s cp -r tar:/opt/in - | tar -tf - | sort | tr '\\n' ' '", sbx);
	cr_assert(strstr(list, "in/sub/b") && strstr(list, "in/a"), "%s", list);
	free(list);
	list = tu_sh_out("%s cp -r tar:/workspace/sub - | tar -tf - | sort | tr '\\n' ' '", sbx);
	cr_assert(strstr(list, "sub/b"), "%s", list);
	free(list);
	/* a stream extracts into a directory only */
	cr_assert_eq(tu_sh("tar -C %s/src -cf - . | %s cp - tar:/opt/in/a 2>/dev/null", host, sbx), 4);
}

Test(files, stopped_sandbox_host_side)
{
	char *hello = hpath("hello"), *src = hpath("src");

	make("stp");
	sbf_sh(&f, NULL, "stp", "mkdir -p /opt/t && printf inner > /opt/t/f && printf ws > /workspace/w && rm /bin/ls", NULL);
	sbf_ok(SB("stop", "stp"), "stop");
	/* out: from the upper, from the image below it, never a deleted file */
	cp_ok("stp:/opt/t/f", hpath("f"), NULL, NULL);
	assert_hcat("f", "inner");
	cp_ok("stp:/bin/busybox", hpath("bb"), NULL, NULL);
	cr_assert(hexists("bb"));
	free(cp_status(3, "stp:/bin/ls", hpath("ls"), NULL, NULL));
	cp_ok("-r", "stp:/opt/t", hpath("t"), NULL);
	assert_hcat("t/f", "inner");
	cp_ok("stp:/workspace/w", hpath("w"), NULL, NULL);
	assert_hcat("w", "ws");
	/* in: the workspace always; the root file system refuses while memory is kept */
	cp_ok(hello, "stp:/workspace/", NULL, NULL);
	char *e = cp_status(4, hello, "stp:/etc/", NULL, NULL);
	cr_assert(strstr(e, "--discard-memory"), "%s", e);
	free(e);
	struct tu_run r = SB("cp", "--json", "--discard-memory", "-r", src, "stp:/bin/ls");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"memory_discarded\": true") && strstr(r.out, "\"route\": \"host\""), "%s", r.out);
	tu_run_free(&r);
	cp_ok(hello, "stp:/etc/", NULL, NULL);
	r = SB("restore", "stp");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = SB("inspect", "stp");
	cr_assert(strstr(r.out, "cold start"), "restore cold-started: %s", r.out);
	tu_run_free(&r);
	/* the guest sees it: a new directory where a deleted file was, the workspace file */
	char *out = sbf_sh(&f, NULL, "stp", "cat /etc/hello /workspace/hello /bin/ls/a /bin/ls/sub/b", NULL);
	cr_assert_str_eq(out, "hellohelloonetwo");
	free(out);
}

Test(files, exchange_folder)
{
	char *hello = hpath("hello");

	make("ex");
	struct tu_run r = SB("cp", "--json", hello, "ex:/exchange/");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"route\": \"host\""), "%s", r.out);
	tu_run_free(&r);
	char *text = tu_sh_out("cat %s/exchange/hello", f.dir);
	cr_assert_str_eq(text, "hello");
	free(text);
	char *out = sbf_sh(&f, NULL, "ex", "cat /exchange/hello; printf back > /exchange/from-guest", NULL);
	cr_assert_str_eq(out, "hello");
	free(out);
	cp_ok("ex:/exchange/from-guest", hpath("fg"), NULL, NULL);
	assert_hcat("fg", "back");
}

static char *in(const char *name, const char *path)
{
	static char buf[4][256];
	static int i;

	snprintf(buf[i & 3], sizeof(buf[0]), "%s:%s", name, path);
	return buf[i++ & 3];
}

/* The guest's symlinks lead to its own files, never the host's, running or stopped. */
static void symlinks_stay_inside(const char *name)
{
	char *s1 = hpath("s1"), *s2 = hpath("s2"), *own = hpath("own"), *pw = hpath("pw");

	free(cp_status(3, in(name, "/workspace/shadow"), s1, NULL, NULL));
	cr_assert_not(hexists("s1"));
	cp_ok(in(name, "/workspace/own"), own, NULL, NULL);
	assert_hcat("own", "sandbox's own");
	free(cp_status(3, in(name, "/root/hostlink"), s2, NULL, NULL));
	cr_assert_not(hexists("s2"));
	cp_ok(in(name, "/workspace/d/passwd"), pw, NULL, NULL);
	char *got = hcat("pw"), *hosts = tu_sh_out("cat /etc/passwd");
	cr_assert(strstr(got, "root:") && strcmp(got, hosts), "the sandbox's passwd, not the host's: %s", got);
	free(got);
	free(hosts);
	unlink(own);
	unlink(pw);
}

Test(files, hostile_symlinks_never_leak)
{
	make("evil");
	char *cmd = sb_strdupf("ln -s /etc/shadow /workspace/shadow; printf \"sandbox's own\" > /etc/own; "
			       "ln -s ../etc/own /workspace/own; ln -s %s/secret /root/hostlink; ln -s /etc /workspace/d",
			       victim);
	sbf_sh(&f, NULL, "evil", cmd, NULL);
	free(cmd);
	symlinks_stay_inside("evil");
	sbf_ok(SB("stop", "evil"), "stop");
	symlinks_stay_inside("evil");
	assert_victim_untouched();
}

Test(files, destination_symlinks_are_replaced)
{
	char *hello = hpath("hello"), *target = sb_strdupf("%s/secret", victim);

	make("dst");
	char *cmd = sb_strdupf("ln -s %s /workspace/x; ln -s %s /etc/lnk", target, target);
	sbf_sh(&f, NULL, "dst", cmd, NULL);
	free(cmd);
	cp_ok(hello, "dst:/workspace/x", NULL, NULL);
	cp_ok(hello, "dst:/etc/lnk", NULL, NULL);
	char *out = sbf_sh(&f, NULL, "dst", "cat /workspace/x /etc/lnk; [ -L /workspace/x ] || [ -L /etc/lnk ] || echo REG", NULL);
	cr_assert_str_eq(out, "hellohelloREG\n");
	free(out);
	sbf_sh(&f, NULL, "dst", "ln -s /etc/hostname-nope /etc/lnk2", NULL);
	sbf_ok(SB("stop", "dst"), "stop");
	cp_ok("--discard-memory", hello, "dst:/etc/lnk2", NULL);
	char *kind = tu_sh_out("stat -c %%F %s/sandboxes/dst/upper/etc/lnk2", f.dir);
	cr_assert_str_eq(kind, "regular file");
	free(kind);
	assert_victim_untouched();
	free(target);
}

/* A FIFO the guest makes lives in runsc's memory only (measured: neither
 * the workspace nor the upper gets one); one the host finds there (another
 * runtime's, an image's) is made by the test on the host side. */
Test(files, fifos_are_refused_at_once)
{
	make("fifo");
	sbf_sh(&f, NULL, "fifo", "mkfifo /root/ff; mkdir /root/dir; mkfifo /root/dir/p; printf x > /root/dir/x", NULL);
	cr_assert_eq(tu_sh("cd %s/sandboxes/fifo/workspace && mkfifo ff && mkdir dir && mkfifo dir/p && printf x > dir/x",
			   f.dir), 0);
	/* host side (the workspace) and through the guest (its root) */
	char *e = cp_status(7, "fifo:/workspace/ff", hpath("a"), NULL, NULL);
	cr_assert(strstr(e, "FIFO"), "%s", e);
	free(e);
	free(cp_status(7, "fifo:/root/ff", hpath("b"), NULL, NULL));
	cr_assert_not(hexists("a") || hexists("b"));
	/* in a tree: left out and said */
	e = cp_status(0, "-r", "fifo:/root/dir", hpath("dir"), NULL);
	cr_assert(strstr(e, "left out"), "%s", e);
	free(e);
	free(cp_status(0, "-r", "fifo:/workspace/dir", hpath("wdir"), NULL));
	assert_hcat("dir/x", "x");
	assert_hcat("wdir/x", "x");
	cr_assert_not(hexists("dir/p") || hexists("wdir/p"));
	/* copying onto a FIFO replaces it, never opens it */
	cp_ok(hpath("hello"), "fifo:/workspace/ff", NULL, NULL);
	char *kind = tu_sh_out("stat -c %%F %s/sandboxes/fifo/workspace/ff", f.dir);
	cr_assert_str_eq(kind, "regular file");
	free(kind);
	/* a stopped sandbox's upper */
	sbf_ok(SB("stop", "fifo"), "stop");
	cr_assert_eq(tu_sh("mkfifo %s/sandboxes/fifo/upper/root/hostfifo", f.dir), 0);
	free(cp_status(7, "fifo:/root/hostfifo", hpath("c"), NULL, NULL));
	cr_assert_not(hexists("c"));
}

Test(files, the_size_cap)
{
	make("cap");
	sbf_sh(&f, NULL, "cap", "dd if=/dev/zero of=/root/big bs=1024 count=2048 2>/dev/null; cp /root/big /workspace/big", NULL);
	char *e = cp_status(7, "--max-size", "1m", "cap:/root/big", hpath("big"));
	cr_assert(strstr(e, "cap"), "%s", e);
	free(e);
	free(cp_status(7, "--max-size", "1m", "cap:/workspace/big", hpath("big")));
	cr_assert_not(hexists("big"), "nothing of a refused copy stays");
	cr_assert_eq(tu_sh("head -c 2000000 /dev/zero > %s/big-in", host), 0);
	free(cp_status(7, "--max-size", "1m", hpath("big-in"), "cap:/root/in"));
	char *out = sbf_sh(&f, NULL, "cap", "ls /root", NULL);
	cr_assert_null(strstr(out, "in"), "a refused copy in leaves nothing: %s", out);
	free(out);
	cp_ok("cap:/root/big", hpath("big"), NULL, NULL);
}

/* A guest whose tar forges its stream: entries leading out, a symlink and a
 * file written through it. The host refuses and writes nothing outside. */
Test(files, forged_tar_from_the_guest)
{
	image_with_dash();
	make("forge");
	char *forged = sb_strdupf("%s/forged.tar", host);
	cr_assert_eq(tu_sh("cd %s && mkdir -p f/d && ln -s %s f/d/l && tar -cf %s -C f d && mkdir -p g/d/l && printf pwned > g/d/l/secret && "
			   "tar -rf %s -C g d/l/secret", host, victim, forged, forged), 0);
	char *ws = sb_strdupf("%s/sandboxes/forge/workspace", f.dir);
	cr_assert_eq(tu_sh("cp %s %s/forged.tar && printf '#!/bin/sh\\ncat /workspace/forged.tar\\n' > %s/tar && chmod 755 %s/tar",
			   forged, ws, ws, ws), 0);
	sbf_sh(&f, NULL, "forge", "ln -s /workspace/tar /bin/tar; mkdir /root/d", NULL);
	char *e = cp_status(7, "-r", "forge:/root/d", hpath("out"), NULL);
	cr_assert(strstr(e, "symbolic link"), "%s", e);
	free(e);
	cr_assert_not(hexists("out"), "a refused copy leaves no half tree");
	assert_victim_untouched();
	/* a name leading out */
	cr_assert_eq(tu_sh("cd %s && printf up > up && tar -cf %s --transform 's,^up,d/../../up,' up", host, forged), 0);
	cr_assert_eq(tu_sh("cp %s %s/forged.tar", forged, ws), 0);
	free(cp_status(7, "-r", "forge:/root/d", hpath("out"), NULL));
	cr_assert_not(hexists("out"));
	/* and from the caller's side */
	cr_assert_eq(tu_sh("%s cp - forge:/workspace < %s 2>/dev/null", sbx, forged), 7);
	free(forged);
	free(ws);
}

Test(files, a_guest_without_tar)
{
	image_with_dash();
	make("notar");
	char *e = cp_status(5, "notar:/etc/passwd", hpath("p"), NULL, NULL);
	cr_assert(strstr(e, "has no tar"), "%s", e);
	free(e);
	cp_ok(hpath("hello"), "notar:/workspace/", NULL, NULL);
}

Test(files, bad_input)
{
	make("bad");
	free(cp_status(3, "nosuch:/etc/passwd", hpath("x"), NULL, NULL));
	char *e = cp_status(2, "bad:etc/passwd", hpath("x"), NULL, NULL);
	cr_assert(strstr(e, "absolute"), "%s", e);
	free(e);
	e = cp_status(2, hpath("hello"), hpath("x"), NULL, NULL);
	cr_assert(strstr(e, "neither side"), "%s", e);
	free(e);
	free(cp_status(2, "bad:/a", "bad:/b", NULL, NULL));
	free(cp_status(3, "bad:/no/such", hpath("x"), NULL, NULL));
	free(cp_status(3, hpath("no-such"), "bad:/root", NULL, NULL));
	free(cp_status(4, "-r", hpath("src"), "bad:/etc/passwd", NULL));
	struct tu_run r = SB("diff", "nosuch");
	cr_assert_eq(r.status, 3, "%s", r.err);
	tu_run_free(&r);
}

/* A line of a diff's text of that kind ("  D link  /bin/ls") naming path
 * (maybe followed by '/' or a note). */
static int has_line(const char *text, char kind, const char *path)
{
	size_t plen = strlen(path);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = l + strcspn(l, "\n"), *s = strstr(l, path);
		if (l[0] == ' ' && l[2] == kind && s && s < end && (s + plen == end || s[plen] == '/' || s[plen] == ' '))
			return 1;
	}
	return 0;
}

static void assert_diff(const char *name)
{
	struct tu_run r = SB("diff", name);
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *t = r.out, *ws = strstr(t, "Workspace"), *ex = strstr(t, "Exchange");
	cr_assert(ws && ex, "%s", t);
	cr_assert(has_line(t, 'A', "/root/added"), "%s", t);
	cr_assert(has_line(t, 'C', "/etc/passwd"), "%s", t);
	cr_assert(has_line(t, 'D', "/bin/ls"), "%s", t);
	cr_assert(has_line(t, 'D', "/sbin"), "a deleted directory: %s", t);
	cr_assert(has_line(t, 'C', "/usr/sbin"), "an opaque directory: %s", t);
	cr_assert(strstr(t, "deleted and made again"), "%s", t);
	cr_assert(has_line(t, 'D', "/usr/sbin/arping") && has_line(t, 'A', "/usr/sbin/fresh"), "%s", t);
	cr_assert_null(strstr(t, "/workspace/\n"), "the mount point is no change: %s", t);
	cr_assert(strstr(ws, "/workspace/wfile") && strstr(ws, "/workspace/wfile") < ex, "the workspace apart: %s", t);
	cr_assert(strstr(ex, "/exchange/xfile"), "the exchange apart: %s", t);
	cr_assert(strstr(t, "/root/added") < ws, "%s", t);
	tu_run_free(&r);
}

Test(files, diff_running_and_stopped)
{
	make("chg");
	sbf_sh(&f, NULL, "chg",
	       "printf x > /root/added; echo 'extra:x:1:1::/:/bin/sh' >> /etc/passwd; rm /bin/ls; rm -rf /sbin; "
	       "rm -rf /usr/sbin; mkdir /usr/sbin; printf n > /usr/sbin/fresh; printf w > /workspace/wfile; "
	       "printf e > /exchange/xfile",
	       NULL);
	assert_diff("chg");
	struct tu_run r = SB("diff", "chg");
	cr_assert(strstr(r.out, "is running"), "a running sandbox's diff says so: %s", r.out);
	tu_run_free(&r);
	sbf_ok(SB("stop", "chg"), "stop");
	assert_diff("chg");
	/* JSON: the parts apart, kinds and sizes */
	r = SB("diff", "chg", "--json", "--max", "3");
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	cr_assert_not_null(doc, "%s", je.text);
	json_t *root = json_object_get(doc, "root"), *ws = json_object_get(doc, "workspace");
	cr_assert_eq(json_array_size(json_object_get(root, "changes")), 3);
	cr_assert_gt(json_integer_value(json_object_get(root, "more")), 0, "the cap says how many more");
	json_t *w0 = json_array_get(json_object_get(ws, "changes"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(w0, "path")), "/workspace/wfile");
	cr_assert_str_eq(json_string_value(json_object_get(w0, "kind")), "A");
	cr_assert_eq(json_integer_value(json_object_get(w0, "size")), 1);
	cr_assert(json_is_false(json_object_get(doc, "running")));
	json_decref(doc);
	tu_run_free(&r);
	r = SB("diff", "chg", "--max", "2");
	cr_assert(strstr(r.out, "and ") && strstr(r.out, " more"), "%s", r.out);
	tu_run_free(&r);
}
