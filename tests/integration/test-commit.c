/* sandbench commit with real runsc: a sandbox's disk becomes an image whose
 * new layer, unpacked by sandbench's own unpacker, gives back the tree the
 * sandbox saw (a deleted file, a directory deleted and made again, a hard
 * link pair, a setuid file, a symlink, an owner, an xattr); --change shows in
 * image inspect; a running sandbox is paused around the read and carries on;
 * a hostile upper (a symlink to /etc/shadow, a FIFO, a device node) neither
 * leaks nor blocks; bad input leaves no image behind. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "commit");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(commit, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void make(const char *name, const char *image)
{
	sbf_ok(SB("create", name, "--image", image, "--permanent"), "create");
}

static void sh_ok(const char *name, const char *cmd)
{
	free(sbf_sh(&f, NULL, name, cmd, NULL));
}

/* image inspect --json of ref (json_decref it) */
static json_t *inspect(const char *ref)
{
	struct tu_run r = SB("image", "inspect", ref, "--json");

	cr_assert_eq(r.status, 0, "inspect %s: %s", ref, r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert(doc, "inspect gave no JSON: %s", r.out);
	tu_run_free(&r);
	return doc;
}

static const char *str(json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));

	cr_assert(s, "no '%s' in the JSON", key);
	return s;
}

/* What a tree looks like, path by path: type, mode, owner, size, link count,
 * symlink target, content digest (the guest's own find, stat and md5sum). */
static const char *const listing =
	"cd /opt && find . | sort | while read p; do "
	"printf '%s %s ' \"$p\" \"$(stat -c '%F %a %u:%g %h' \"$p\")\"; "
	"if [ -L \"$p\" ]; then readlink \"$p\"; elif [ -f \"$p\" ]; then md5sum < \"$p\"; else echo; fi; done";

/* How many images and blobs the store has. */
static char *store_counts(void)
{
	return tu_sh_out("ls %s/images/blobs/sha256 | wc -l; grep -o '\"sha256:[0-9a-f]*\": {' %s/images/refs.json | wc -l",
			 f.dir, f.dir);
}

/* The base image: /opt with files to delete, a directory to make again and
 * a file to chown, committed from a stopped sandbox. */
static void make_base(void)
{
	make("base", SBF_IMAGE);
	sh_ok("base", "mkdir -p /opt/d && echo o1 > /opt/d/old1 && echo o2 > /opt/d/old2 && echo keep > /opt/keep && "
		      "echo gone > /opt/gone");
	sbf_ok(SB("stop", "base"), "stop base");
	struct tu_run r = SB("commit", "base", "base1", "--message", "the base");
	cr_assert_eq(r.status, 0, "commit base: %s", r.err);
	cr_assert(strstr(r.out, "localhost/base1:latest"), "a name without registry goes under localhost/: %s", r.out);
	tu_run_free(&r);
}

static const char *const changes =
	"rm /opt/gone && rm -rf /opt/d && mkdir /opt/d && echo n > /opt/d/new && echo h > /opt/h1 && ln /opt/h1 /opt/h2 && "
	"echo s > /opt/suid && chmod 4755 /opt/suid && ln -s ../etc/passwd /opt/sym && "
	"mkdir -m 0750 /opt/newdir && mkdir /srv && echo o > /srv/owned && echo private > /workspace/notes";

/* A peer reads the layer: umoci unpacks an OCI layout of the image (its
 * blobs from the store) into the same tree as sandbench's own unpacker.
 * Skipped without umoci. */
static void umoci_agrees(json_t *img, const char *tag)
{
	if (tu_sh("command -v umoci >/dev/null") != 0) {
		cr_log_warn("no umoci: the peer check is skipped");
		return;
	}
	char *work = tu_tempdir(tag);
	cr_assert_eq(tu_sh("python3 - %s %s %s <<'PY'\n"
			   "import json, os, shutil, sys\n"
			   "store, digest, out = sys.argv[1], sys.argv[2], sys.argv[3]\n"
			   "blob = lambda d: os.path.join(store, 'images/blobs/sha256', d.split(':')[1])\n"
			   "os.makedirs(out + '/layout/blobs/sha256')\n"
			   "m = json.load(open(blob(digest)))\n"
			   "for d in [digest, m['config']['digest']] + [l['digest'] for l in m['layers']]:\n"
			   "    shutil.copy(blob(d), out + '/layout/blobs/sha256/')\n"
			   "open(out + '/layout/oci-layout', 'w').write('{\"imageLayoutVersion\":\"1.0.0\"}')\n"
			   "desc = {'mediaType': m['mediaType'], 'digest': digest, 'size': os.path.getsize(blob(digest)),\n"
			   "        'annotations': {'org.opencontainers.image.ref.name': 't'}}\n"
			   "json.dump({'schemaVersion': 2, 'manifests': [desc]}, open(out + '/layout/index.json', 'w'))\n"
			   "PY",
			   f.dir, str(img, "digest"), work), 0);
	cr_assert_eq(tu_sh("umoci unpack --image %s/layout:t %s/bundle >/dev/null", work, work), 0, "umoci unpack");
	char *peer = sb_strdupf("%s/bundle/rootfs", work);
	const char *trees[][2] = { { peer, "umoci" }, { str(img, "rootfs"), "sb" } };
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(tu_sh("cd %s && find . -path ./proc -prune -o -path ./dev -prune -o "
				   "-printf '%%p %%M %%U:%%G %%n %%s %%l\\n' | sort > %s/%s.txt",
				   trees[i][0], work, trees[i][1]),
			     0);
	cr_assert_eq(tu_sh("diff %s/umoci.txt %s/sb.txt >&2 && diff -r --no-dereference %s/opt %s/opt >&2", work, work, peer,
			   str(img, "rootfs")),
		     0, "umoci's tree differs from sandbench's");
	free(peer);
	tu_remove(work);
	free(work);
}

Test(commit, round_trip)
{
	make_base();
	make("work", "localhost/base1");
	sh_ok("work", changes);
	char *want = sbf_sh(&f, NULL, "work", listing, NULL);
	sbf_ok(SB("stop", "work"), "stop work");
	/* an xattr the guest cannot set here, put in the upper of the stopped sandbox */
	int xattr = tu_sh("python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.sbtest\", b\"hello\")' "
			  "%s/sandboxes/work/upper/opt/h1", f.dir) == 0;
	/* an owner too: this runsc refuses the guest's chown */
	cr_assert_eq(tu_sh("chown 1234:5678 %s/sandboxes/work/upper/srv/owned", f.dir), 0);
	struct tu_run r = SB("commit", "work", "result", "--message", "the work");
	cr_assert_eq(r.status, 0, "commit: %s", r.err);
	tu_run_free(&r);

	make("check", "localhost/result");
	char *got = sbf_sh(&f, NULL, "check", listing, NULL);
	cr_assert_str_eq(got, want, "the committed tree differs:\n%s\n--- the sandbox's:\n%s", got, want);
	cr_assert(!strstr(got, "./gone "), "the deleted file is back: %s", got);
	cr_assert(!strstr(got, "old1"), "the directory made again shows the image's files: %s", got);
	cr_assert(strstr(got, "./d/new "), "%s", got);
	cr_assert(strstr(got, "./suid regular file 4755 0:0 1"), "setuid kept: %s", got);
	cr_assert(strstr(got, "./h1 regular file 644 0:0 2"), "hard link pair kept: %s", got);
	cr_assert(strstr(got, "./sym symbolic link 777 0:0 1 ../etc/passwd"), "symlink kept: %s", got);
	cr_assert(strstr(got, "./newdir directory 750"), "%s", got);
	char *ino = sbf_sh(&f, NULL, "check", "[ $(stat -c %i /opt/h1) = $(stat -c %i /opt/h2) ] && echo same", NULL);
	cr_assert_str_eq(ino, "same\n", "h1 and h2 are one inode");
	char *ws = sbf_sh(&f, NULL, "check", "ls -A /workspace", NULL);
	cr_assert_str_eq(ws, "", "the workspace stays out without --include-workspace: %s", ws);
	free(ws);
	char *owner = sbf_sh(&f, NULL, "check", "stat -c %u:%g /srv/owned", NULL);
	cr_assert_str_eq(owner, "1234:5678\n", "owner kept");
	free(owner);

	json_t *img = inspect("localhost/result"), *base = inspect("localhost/base1");
	cr_assert_str_eq(str(img, "parent"), str(base, "digest"), "the image names its parent");
	cr_assert_eq(json_array_size(json_object_get(img, "layers")), json_array_size(json_object_get(base, "layers")) + 1);
	if (!xattr) {
		cr_log_warn("this file system takes no user xattrs: not checked");
	} else {
		char *x = tu_sh_out("python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], \"user.sbtest\").decode())' %s/opt/h1",
				    str(img, "rootfs"));
		cr_assert_str_eq(x, "hello", "the xattr came through the layer: '%s'", x);
		free(x);
	}
	/* the history entry with the message, the diff_id appended */
	char *hist = tu_sh_out("python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); h=c[\"history\"][-1]; "
			       "print(h[\"comment\"], h[\"created_by\"], len(c[\"rootfs\"][\"diff_ids\"]))' "
			       "%s/images/blobs/sha256/%s",
			       f.dir, str(img, "config") + 7);
	char want_hist[128];
	snprintf(want_hist, sizeof(want_hist), "the work sandbench commit work %zu", json_array_size(json_object_get(img, "layers")));
	cr_assert_str_eq(hist, want_hist, "history and diff_ids of the new config");
	free(hist);
	umoci_agrees(img, "commit-umoci");
	/* image ls shows the parent */
	r = SB("image", "ls");
	char parent12[13];
	snprintf(parent12, sizeof(parent12), "%s", str(base, "digest") + 7);
	cr_assert(strstr(r.out, parent12), "image ls shows the parent: %s", r.out);
	tu_run_free(&r);
	/* the timeline */
	r = SB("timeline", "work", "--json");
	cr_assert(strstr(r.out, "\"commit\"") && strstr(r.out, "localhost/result:latest"), "timeline: %s", r.out);
	tu_run_free(&r);
	json_decref(img);
	json_decref(base);
	free(ino);
	free(got);
	free(want);
}

/* A running sandbox: paused, read, resumed; a write just before is in. */
Test(commit, running_changes_zstd)
{
	make("run", SBF_IMAGE);
	sh_ok("run", "dd if=/dev/zero of=/root/big bs=1024 count=3000 2>/dev/null; echo x > /root/x; "
		     "mkdir /workspace/sub && echo w > /workspace/sub/w");
	struct tu_run r = SB("commit", "run", "tools:1", "--compression", "zstd", "--json", "--include-workspace",
			     "--change", "ENV A=1",
			     "--change", "ENV PATH=/opt/bin:/bin", "--change", "WORKDIR /root", "--change", "USER 1000:1000",
			     "--change", "LABEL org.example=yes", "--change", "CMD [\"/bin/sh\",\"-c\",\"echo hi\"]");
	cr_assert_eq(r.status, 0, "commit: %s", r.err);
	cr_assert(strstr(r.out, "\"paused\": true"), "%s", r.out);
	tu_run_free(&r);
	/* it carries on */
	r = SB("inspect", "run", "--json");
	cr_assert(strstr(r.out, "\"state\": \"running\""), "%s", r.out);
	tu_run_free(&r);
	sh_ok("run", "true");

	json_t *img = inspect("localhost/tools:1");
	json_t *layers = json_object_get(img, "layers");
	cr_assert_str_eq(str(json_array_get(layers, json_array_size(layers) - 1), "mediaType"),
			 "application/vnd.oci.image.layer.v1.tar+zstd");
	char *cfg = json_dumps(json_object_get(img, "exec_config"), JSON_COMPACT);
	cr_assert(cfg && strstr(cfg, "\"A=1\"") && strstr(cfg, "\"PATH=/opt/bin:/bin\"") &&
			  strstr(cfg, "\"WorkingDir\":\"/root\"") && strstr(cfg, "\"User\":\"1000:1000\"") &&
			  strstr(cfg, "\"org.example\":\"yes\"") && strstr(cfg, "\"Cmd\":[\"/bin/sh\",\"-c\",\"echo hi\"]"),
		  "the changes in the config: %s", cfg);
	cr_assert(!strstr(cfg, "PATH=/usr/local"), "ENV replaces a variable of the same name: %s", cfg);
	r = SB("image", "inspect", "localhost/tools:1");
	cr_assert(strstr(r.out, "WorkingDir") && strstr(r.out, "/root"), "inspect shows the changes: %s", r.out);
	tu_run_free(&r);
	/* a sandbox made from it starts with that workspace */
	make("fromws", "localhost/tools:1");
	char *w = sbf_sh(&f, NULL, "fromws", "cat /workspace/sub/w", NULL);
	cr_assert_str_eq(w, "w\n", "the image's /workspace starts the new workspace");
	free(w);
	char *size = tu_sh_out("stat -c %%s %s/root/big", str(img, "rootfs"));
	cr_assert_str_eq(size, "3072000", "the write just before the commit is in it");
	free(size);
	free(cfg);
	json_decref(img);
}

/* A hostile upper: a symlink to the host's /etc/shadow, a FIFO, a device
 * node, a directory symlink out: nothing is followed, opened or leaked. */
Test(commit, hostile_upper)
{
	make("evil", SBF_IMAGE);
	sbf_ok(SB("stop", "evil"), "stop");
	cr_assert_eq(tu_sh("cd %s/sandboxes/evil/upper && mkdir -p root && ln -s /etc/shadow root/shadow && "
			   "mkfifo root/fifo && mknod root/null c 1 3 && ln -s /etc root/etc",
			   f.dir), 0);
	struct tu_run r = SB("commit", "evil", "evil", "--json");
	cr_assert_eq(r.status, 0, "commit: %s", r.err);
	cr_assert(strstr(r.out, "\"skipped\": 1") && strstr(r.out, "/root/null"), "the device node is left out: %s", r.out);
	tu_run_free(&r);
	json_t *img = inspect("localhost/evil");
	json_t *layers = json_object_get(img, "layers");
	const char *layer = str(json_array_get(layers, json_array_size(layers) - 1), "digest");
	char *list = tu_sh_out("tar -tvzf %s/images/blobs/sha256/%s", f.dir, layer + 7);
	cr_assert(strstr(list, "root/shadow -> /etc/shadow"), "a symlink stays a symlink: %s", list);
	cr_assert(strstr(list, "root/fifo") && list[0], "%s", list);
	cr_assert(!strstr(list, "root/null"), "%s", list);
	cr_assert_eq(tu_sh("head -n 1 /etc/shadow > /dev/null 2>&1 && s=$(head -n 1 /etc/shadow) && "
			   "zcat %s/images/blobs/sha256/%s | grep -qF \"$s\"",
			   f.dir, layer + 7),
		     1, "the host's shadow is not in the layer");
	char *kind = tu_sh_out("stat -c %%F %s/root/shadow", str(img, "rootfs"));
	cr_assert_str_eq(kind, "symbolic link");
	free(kind);
	free(list);
	json_decref(img);
}

/* Each class of bad input: a clear error, and no image and no blob more. */
Test(commit, bad_input)
{
	static const struct {
		const char *name, *ref, *change, *want;
		int status;
	} cases[] = {
		{ "nosuch", "x", NULL, "nosuch", 3 },
		{ "ok", "Bad/Ref", NULL, "invalid image reference", 2 },
		{ "ok", "x@sha256:0000000000000000000000000000000000000000000000000000000000000000", NULL, "digest", 2 },
		{ "ok", "x", "FROB x", "unknown instruction", 2 },
		{ "ok", "x", "ENV novalue", "KEY=VALUE", 2 },
		{ "ok", "x", "WORKDIR relative", "absolute", 2 },
		{ "ok", "x", "CMD [1,2]", "JSON array of strings", 2 },
		{ "ok", "x", "USER", "needs a value", 2 },
	};
	make("ok", SBF_IMAGE);
	char *before = store_counts();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tu_run r = cases[i].change ? SB("commit", cases[i].name, cases[i].ref, "--change", cases[i].change)
						  : SB("commit", cases[i].name, cases[i].ref);
		cr_assert_eq(r.status, cases[i].status, "case %zu: status %d: %s", i, r.status, r.err);
		cr_assert(strstr(r.err, cases[i].want), "case %zu: '%s' does not say '%s'", i, r.err, cases[i].want);
		tu_run_free(&r);
		char *after = store_counts();
		cr_assert_str_eq(after, before, "case %zu left something in the store", i);
		free(after);
	}
	struct tu_run r = SB("commit", "ok", "x", "--compression", "lzma");
	cr_assert_eq(r.status, 2, "%s", r.err);
	tu_run_free(&r);
	/* a sandbox with no disk to read: refused (4), nothing made */
	sbf_ok(SB("stop", "ok"), "stop");
	cr_assert_eq(tu_sh("sed -i 's/\"state\": *\"stopped\"/\"state\": \"broken\"/' %s/sandboxes/ok/sandbox.json && "
			   "grep -q '\"broken\"' %s/sandboxes/ok/sandbox.json",
			   f.dir, f.dir),
		     0);
	r = SB("commit", "ok", "x");
	cr_assert_eq(r.status, 4, "a broken sandbox: %d %s", r.status, r.err);
	cr_assert(strstr(r.err, "broken"), "%s", r.err);
	tu_run_free(&r);
	char *after = store_counts();
	cr_assert_str_eq(after, before, "a refused commit left something in the store");
	free(after);
	free(before);
}
