/* The image store on real files: import of every format, the unpacked trees,
 * digest and format errors, atomic installs, removal while in use, prune, and
 * the busybox bootstrap. Fixtures: tests/fixtures/make-images.sh, built once. */
#include "config.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/digest.h"
#include "base/fs.h"
#include "image/bootstrap.h"
#include "image/import.h"
#include "image/store.h"
#include "base/root.h"
#include "testutil.h"

/* Fixtures, shared by every test (read-only). Criterion runs each test in a
 * fresh process image, so the runner hands the path on in the environment. */
#define FIXTURES_ENV "SB_TEST_IMAGE_FIXTURES"
static char *images;
static char *dir;          /* this test's scratch directory */
static struct sb_root *root;

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	char *mk = tu_srcpath("tests/fixtures/make-images.sh");

	(void)set;
	images = tu_tempdir("imgfix");
	if (images && tu_sh("sh %s %s >/dev/null", mk, images) != 0) {
		tu_remove(images);
		free(images);
		images = NULL;
	}
	if (images)
		setenv(FIXTURES_ENV, images, 1);
	free(mk);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	tu_remove(images);
	free(images);
}

static void setup(void)
{
	char *r;

	if (!images && getenv(FIXTURES_ENV))
		images = strdup(getenv(FIXTURES_ENV));
	cr_assert_not_null(images, "make-images.sh failed (see stderr)");
	dir = tu_tempdir("imgstore");
	cr_assert_not_null(dir);
	r = sb_path_join(dir, "root");
	cr_assert_eq(sb_root_open(&root, r, NULL), 0);
	free(r);
}

static void teardown(void)
{
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
	root = NULL;
	dir = NULL;
}

TestSuite(image_store, .init = setup, .fini = teardown, .timeout = 120);

/* A digest recorded by make-images.sh (static buffer per call site is not needed: copied). */
static void fixture_digest(char out[SB_DIGEST_STR_LEN], const char *key)
{
	char *s = tu_sh_out(". %s/digests && echo $%s", images, key);

	cr_assert_not_null(s);
	cr_assert(sb_digest_valid(s), "%s=%s", key, s);
	strcpy(out, s);
	free(s);
}

static char *fixture(const char *name)
{
	return sb_path_join(images, name);
}

static int import(struct sb_image_import_result *res, const char *name, const char *ref, struct sb_error *err)
{
	struct sb_image_import_opts opts = { .name = ref };
	char *path = fixture(name);
	int rc = sb_image_import(res, root, path, &opts, err);

	free(path);
	return rc;
}

static void import_ok(struct sb_image_import_result *res, const char *name, const char *ref)
{
	struct sb_error err;

	cr_assert_eq(import(res, name, ref, &err), 0, "import %s: %s", name, err.msg);
}

static char *refs_json(void)
{
	char *path = sb_root_file(root, "images/refs.json"), *text = NULL;

	if (sb_fs_read_file(&text, NULL, path, 1 << 20, NULL) < 0)
		text = strdup("(none)");
	free(path);
	return text;
}

static int count_entries(const char *rel)
{
	char *path = sb_root_file(root, rel), *n = tu_sh_out("ls -A %s | wc -l", path);
	int count = atoi(n);

	free(path);
	free(n);
	return count;
}

/* The unpacked tree of an image equals the one unpack-tree.sh builds by hand. */
static void assert_layered_tree(const char *rootfs)
{
	char *tree = tu_srcpath("tests/fixtures/unpack-tree.sh"), *expect = sb_path_join(dir, "expected");
	char bb[SB_DIGEST_STR_LEN], *want, *got;

	if (access(expect, F_OK) != 0) {
		fixture_digest(bb, "BUSYBOX_LAYER");
		cr_assert_eq(tu_sh("sh %s expect %s/layered/blobs/sha256/%s %s", tree, images, sb_digest_hex(bb), expect), 0);
	}
	want = tu_sh_out("sh %s list %s", tree, expect);
	got = tu_sh_out("sh %s list %s", tree, rootfs);
	cr_assert_not_null(want);
	cr_assert_not_null(got);
	cr_assert_gt(strlen(want), 1000);
	if (strcmp(want, got) != 0)
		tu_sh("sh %s list %s | diff -u - %s.list >&2; sh %s list %s > %s.list", tree, rootfs, expect, tree, expect,
		      expect);
	cr_assert_str_eq(got, want, "tree of %s differs from the expected one", rootfs);
	free(tree);
	free(expect);
	free(want);
	free(got);
}

Test(image_store, import_every_format_then_resolve_list_inspect)
{
	static const struct {
		const char *file, *name, *format, *ref, *digest_key;
		int layered;
	} cases[] = {
		{ "busybox", NULL, "oci", "localhost/busybox:latest", "BUSYBOX_MANIFEST", 0 },
		{ "layered", NULL, "oci", "localhost/layered:latest", "LAYERED_MANIFEST", 1 },
		{ "layered-zstd", "zstd:1", "oci", "localhost/zstd:1", "LAYERED_ZSTD_MANIFEST", 1 },
		{ "layered-plain", NULL, "oci", "localhost/layered-plain:latest", "LAYERED_PLAIN_MANIFEST", 1 },
		{ "busybox-docker", NULL, "oci", "localhost/busybox-docker:latest", "BUSYBOX_DOCKER_MANIFEST", 0 },
		{ "multiarch", NULL, "oci", "localhost/multiarch:latest", "BUSYBOX_MANIFEST", 0 },
		{ "busybox.oci.tar", "localhost:5000/bb:oci", "oci", "localhost:5000/bb:oci", "BUSYBOX_MANIFEST", 0 },
		{ "docker-save.tar", NULL, "docker-save", "docker.io/sandbench/layered:latest", NULL, 1 },
		{ "docker-save-oci.tar", NULL, "oci", "localhost/sandbench/layered-oci:latest", "LAYERED_MANIFEST", 1 },
		{ "rootfs.tar", "plain:rootfs", "rootfs", "localhost/plain:rootfs", NULL, 0 },
		{ "rootfs.tar.zst", "zst:rootfs", "rootfs", "localhost/zst:rootfs", NULL, 0 },
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++) {
		struct sb_image_import_result res;
		struct sb_image_info info;
		struct sb_error err;
		char want[SB_DIGEST_STR_LEN], *sh;

		import_ok(&res, cases[i].file, cases[i].name);
		cr_assert_str_eq(res.format, cases[i].format, "%s", cases[i].file);
		cr_assert_str_eq(res.ref, cases[i].ref, "%s", cases[i].file);
		if (cases[i].digest_key) {
			fixture_digest(want, cases[i].digest_key);
			cr_assert_str_eq(res.digest, want, "%s: the pinned digest is the layout's", cases[i].file);
		}
		cr_assert_eq(sb_image_resolve(&info, root, cases[i].ref, &err), 0, "%s", err.msg);
		cr_assert_str_eq(info.digest, res.digest);
		cr_assert_str_eq(info.ref, cases[i].ref);
		cr_assert_str_eq(info.platform, "linux/amd64");
		cr_assert_gt(info.size, 1000000, "the unpacked size counts busybox");
		sh = sb_path_join(info.rootfs, "bin/busybox");
		cr_assert_eq(access(sh, X_OK), 0, "%s has an executable bin/busybox", cases[i].file);
		free(sh);
		cr_assert_eq(info.n_layers, cases[i].layered ? 2 : 1, "%s", cases[i].file);
		if (cases[i].layered)
			assert_layered_tree(info.rootfs);
		sb_image_info_clear(&info);
	}

	struct sb_image_info *list;
	size_t count;
	cr_assert_eq(sb_image_list(&list, &count, root, NULL), 0);
	cr_assert_eq(count, n, "one row per reference");
	for (size_t i = 1; i < count; i++)
		cr_assert_lt(strcmp(list[i - 1].ref, list[i].ref), 0, "sorted by reference");
	sb_image_list_free(list, count);
}

Test(image_store, resolve_by_digest_prefix_and_pinned_ref)
{
	struct sb_image_import_result res;
	struct sb_image_info info;
	struct sb_error err;
	char pinned[256], prefix[16];

	import_ok(&res, "busybox", "example.com/team/bb:1");
	cr_assert_eq(sb_image_resolve(&info, root, res.digest, &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.ref, "example.com/team/bb:1", "a digest reports the image's reference");
	sb_image_info_clear(&info);
	snprintf(prefix, sizeof(prefix), "%.8s", sb_digest_hex(res.digest));
	cr_assert_eq(sb_image_resolve(&info, root, prefix, &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, res.digest);
	sb_image_info_clear(&info);
	snprintf(pinned, sizeof(pinned), "example.com/other@%s", res.digest);
	cr_assert_eq(sb_image_resolve(&info, root, pinned, &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, res.digest, "a pinned digest resolves without a recorded reference");
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_resolve(&info, root, "example.com/team/bb:2", &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "example.com/team/bb:2"), "%s", err.msg);
	cr_assert_eq(sb_image_resolve(&info, root, "sha256:zz", &err), SB_ERR_INVALID);
}

/* Copies a fixture layout into the scratch dir. */
static char *copy_layout(const char *name)
{
	char *src = fixture(name), *dst = sb_path_join(dir, name);

	cr_assert_eq(tu_sh("cp -r %s %s", src, dst), 0);
	free(src);
	return dst;
}

Test(image_store, wrong_digest_in_layout_installs_nothing)
{
	char *layout = copy_layout("busybox"), layer[SB_DIGEST_STR_LEN], *before = refs_json(), *after;
	struct sb_image_import_result res;
	struct sb_image_info info;
	struct sb_error err;

	fixture_digest(layer, "BUSYBOX_LAYER");
	cr_assert_eq(tu_sh("printf x >> %s/blobs/sha256/%s", layout, sb_digest_hex(layer)), 0);
	cr_assert_eq(sb_image_import(&res, root, layout, NULL, &err), SB_ERR_DIGEST);
	cr_assert(strstr(err.msg, sb_digest_hex(layer)), "the message names the blob: %s", err.msg);
	cr_assert_eq(sb_image_resolve(&info, root, "busybox", NULL), SB_ERR_NOTFOUND);
	cr_assert_eq(count_entries("images/rootfs"), 0);
	cr_assert(!sb_blob_exists(root, layer), "the bad layer is not in the store");
	after = refs_json();
	cr_assert_str_eq(after, before);
	free(before);
	free(after);
	free(layout);
}

Test(image_store, manifest_that_is_not_json)
{
	char *layout = copy_layout("busybox"), *digest, *msg;
	struct sb_image_import_result res;
	struct sb_error err;

	/* a manifest blob that matches its own name but is not JSON */
	digest = tu_sh_out("cd %s && printf 'no json here' > m && d=$(sha256sum m | cut -d' ' -f1) && "
			   "mv m blobs/sha256/$d && printf '{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
			   "\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:%%s\",\"size\":12}]}' $d "
			   "> index.json && echo $d",
			   layout);
	cr_assert_not_null(digest);
	cr_assert_eq(sb_image_import(&res, root, layout, &(struct sb_image_import_opts){ .name = "x:1" }, &err),
		     SB_ERR_FORMAT);
	msg = strstr(err.msg, digest);
	cr_assert_not_null(msg, "the message names the manifest: %s", err.msg);
	cr_assert(strstr(err.msg, "not valid JSON"), "%s", err.msg);
	cr_assert_eq(count_entries("images/rootfs"), 0);
	free(digest);
	free(layout);
}

Test(image_store, not_an_image_and_rootfs_without_name)
{
	struct sb_image_import_result res;
	struct sb_error err;
	char *junk = sb_path_join(dir, "junk");

	cr_assert_eq(sb_fs_write_atomic(junk, "hello", 5, 0644, NULL), 0);
	cr_assert_eq(sb_image_import(&res, root, junk, NULL, &err), SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, junk), "%s", err.msg);
	cr_assert_eq(import(&res, "rootfs.tar", NULL, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "--name"), "%s", err.msg);
	free(junk);
}

Test(image_store, docker_save_directory_with_two_images_needs_a_choice)
{
	char *save = fixture("docker-save.tar"), *d = sb_path_join(dir, "saved");
	struct sb_image_import_opts opts = { .name = "two:b" };
	struct sb_image_import_result res;
	struct sb_error err;

	/* an unpacked docker save whose manifest.json lists the image twice */
	cr_assert_eq(tu_sh("mkdir %s && tar -C %s -xf %s && cd %s && python3 -c '"
			   "import json; m = json.load(open(\"manifest.json\")); a = dict(m[0], RepoTags=[\"two:a\"]); "
			   "b = dict(m[0], RepoTags=[\"two:b\"]); json.dump([a, b], open(\"manifest.json\", \"w\"))'",
			   d, d, save, d),
		     0);
	cr_assert_eq(sb_image_import(&res, root, d, NULL, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "two:a, two:b") && strstr(err.msg, "--name"), "%s", err.msg);
	cr_assert_eq(sb_image_import(&res, root, d, &opts, &err), 0, "%s", err.msg);
	cr_assert_str_eq(res.format, "docker-save");
	cr_assert_str_eq(res.ref, "localhost/two:b");
	free(save);
	free(d);
}

static void write_record(const char *name, const char *digest)
{
	char *d = sb_strdupf("%s/sandboxes/%s", sb_root_path(root), name), *f = sb_path_join(d, "sandbox.json");
	char *text = sb_strdupf("{\"schema\":1,\"name\":\"%s\",\"image\":{\"ref\":\"x\",\"digest\":\"%s\"}}", name, digest);

	cr_assert_eq(sb_fs_mkdirs(d, 0700, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(f, text, strlen(text), 0600, NULL), 0);
	free(d);
	free(f);
	free(text);
}

Test(image_store, names_made_here_are_under_localhost)
{
	struct sb_image_import_result res;
	struct sb_image_info info;
	struct sb_error err;

	import_ok(&res, "busybox", "tools");
	cr_assert_str_eq(res.ref, "localhost/tools:latest");
	/* the short name finds it, and so does the full one */
	cr_assert_eq(sb_image_resolve(&info, root, "tools", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.ref, "localhost/tools:latest");
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_resolve(&info, root, "localhost/tools:latest", &err), 0, "%s", err.msg);
	sb_image_info_clear(&info);
	/* an explicit registry is the user's choice and stays */
	import_ok(&res, "busybox", "docker.io/library/tools:2");
	cr_assert_str_eq(res.ref, "docker.io/library/tools:2");
	cr_assert_eq(import(&res, "busybox", "tools@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
			    &err),
		     SB_ERR_INVALID);
}

/* A state root from before localhost/ names: the bootstrapped default under
 * docker.io/sandbench/default, an imported image under docker.io/library/,
 * a pulled one, and an old name whose localhost/ form is taken. */
Test(image_store, old_docker_io_names_of_local_images_move_to_localhost)
{
	struct sb_image_import_result bb, layered, zstd;
	struct sb_image_removal rm;
	struct sb_image_info info, *list;
	struct sb_error err;
	size_t count;

	import_ok(&bb, "busybox", "x:1");
	import_ok(&layered, "layered", "y:1");
	import_ok(&zstd, "layered-zstd", "z:1");
	write_record("old", bb.digest);
	cr_assert_eq(tu_sh("cd %s/images && python3 -c '"
			   "import json; d = json.load(open(\"refs.json\")); del d[\"local_names\"]; i = d[\"images\"]; "
			   "i[\"%s\"][\"source\"] = \"pull docker.io/library/layered:latest\"; "
			   "d[\"refs\"] = {\"docker.io/sandbench/default:latest\": \"%s\", "
			   "\"docker.io/library/layered:latest\": \"%s\", "
			   "\"docker.io/library/z:1\": \"%s\", \"localhost/z:1\": \"%s\"}; "
			   "json.dump(d, open(\"refs.json\", \"w\"))'",
			   sb_root_path(root), layered.digest, bb.digest, layered.digest, zstd.digest, bb.digest),
		     0);
	cr_assert_eq(sb_image_resolve(&info, root, SB_IMAGE_DEFAULT_NAME, &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, bb.digest);
	sb_image_info_clear(&info);
	/* what old scripts say still finds it, under its new name */
	cr_assert_eq(sb_image_resolve(&info, root, "sandbench/default", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.ref, "localhost/sandbench/default:latest");
	sb_image_info_clear(&info);
	/* a pull keeps its registry; a taken localhost/ name is not overwritten */
	cr_assert_eq(sb_image_resolve(&info, root, "docker.io/library/layered:latest", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, layered.digest);
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_resolve(&info, root, "docker.io/library/z:1", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, zstd.digest);
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_list(&list, &count, root, &err), 0, "%s", err.msg);
	cr_assert_eq(count, 4);
	for (size_t i = 0; i < count; i++)
		cr_assert_neq(strcmp(list[i].ref, "docker.io/sandbench/default:latest"), 0, "the old name is listed");
	sb_image_list_free(list, count);
	/* the next write keeps the new names; the sandbox still pins its image */
	cr_assert_eq(sb_image_remove(&rm, root, "localhost/z:1", 0, &err), 0, "%s", err.msg);
	sb_image_removal_clear(&rm);
	char *text = refs_json();
	cr_assert(strstr(text, "\"localhost/sandbench/default:latest\"") && !strstr(text, "docker.io/sandbench"), "%s",
		  text);
	free(text);
	cr_assert_eq(sb_image_remove(&rm, root, "sandbench/default", 0, &err), SB_ERR_BUSY);
	cr_assert(strstr(err.msg, "old"), "%s", err.msg);
}

Test(image_store, rm_refused_while_used_then_forced)
{
	struct sb_image_import_result res, res2;
	struct sb_image_removal rm;
	struct sb_image_info info;
	struct sb_error err;

	import_ok(&res, "busybox", NULL);
	import_ok(&res2, "multiarch", NULL);
	cr_assert_str_eq(res.digest, res2.digest, "two references, one image");
	write_record("alpha", res.digest);
	write_record("beta", res.digest);

	cr_assert_eq(sb_image_inspect(&info, root, "busybox", &err), 0, "%s", err.msg);
	cr_assert_eq(info.n_used_by, 2);
	cr_assert_str_eq(info.used_by[0], "alpha");
	sb_image_info_clear(&info);

	/* not the last reference: only the reference goes */
	cr_assert_eq(sb_image_remove(&rm, root, "multiarch", 0, &err), 0, "%s", err.msg);
	cr_assert_eq(rm.removed_image, 0);
	sb_image_removal_clear(&rm);
	cr_assert_eq(sb_image_remove(&rm, root, "busybox", 0, &err), SB_ERR_BUSY);
	cr_assert(strstr(err.msg, "alpha, beta"), "the message names the sandboxes: %s", err.msg);
	cr_assert_eq(sb_image_resolve(&info, root, "busybox", NULL), 0, "a refused rm changes nothing");
	char *rootfs = strdup(info.rootfs);
	sb_image_info_clear(&info);
	cr_assert_eq(access(rootfs, F_OK), 0);

	cr_assert_eq(sb_image_remove(&rm, root, "busybox", 1, &err), 0, "%s", err.msg);
	cr_assert_eq(rm.removed_image, 1);
	cr_assert_eq(rm.n_broken, 2);
	cr_assert_str_eq(rm.broken[1], "beta");
	sb_image_removal_clear(&rm);
	cr_assert_neq(access(rootfs, F_OK), 0, "the rootfs is gone");
	cr_assert_eq(sb_image_resolve(&info, root, res.digest, NULL), SB_ERR_NOTFOUND);
	free(rootfs);
}

static int blob_names_equal(const char *const *digests, size_t n)
{
	char *got = tu_sh_out("ls %s/images/blobs/sha256 | sort | tr '\\n' ' '", sb_root_path(root));
	char want[1024] = "";
	int ok;

	for (size_t i = 0; i < n; i++) {
		strcat(want, sb_digest_hex(digests[i]));
		strcat(want, "\n");
	}
	char *sorted = tu_sh_out("printf '%s' | sort | tr '\\n' ' '", want);
	ok = !strcmp(got, sorted);
	if (!ok)
		fprintf(stderr, "blobs: %s\nwant:  %s\n", got, sorted);
	free(got);
	free(sorted);
	return ok;
}

Test(image_store, prune_removes_exactly_the_unreferenced)
{
	struct sb_image_import_result res;
	struct sb_image_prune_report rep;
	struct sb_image_removal rm;
	char manifest[SB_DIGEST_STR_LEN], config[SB_DIGEST_STR_LEN], layer[SB_DIGEST_STR_LEN], orphan[SB_DIGEST_STR_LEN];
	char *stale = sb_root_file(root, "images/rootfs/0000000000000000000000000000000000000000000000000000000000000000");
	char *partial = sb_root_file(root, "images/blobs/partial/half");

	/* multiarch leaves its index blob, which no image needs */
	import_ok(&res, "multiarch", NULL);
	fixture_digest(manifest, "BUSYBOX_MANIFEST");
	fixture_digest(config, "BUSYBOX_CONFIG");
	fixture_digest(layer, "BUSYBOX_LAYER");
	cr_assert_eq(sb_blob_put(orphan, root, "orphan", 6, NULL), 0);
	cr_assert_eq(count_entries("images/blobs/sha256"), 5);
	cr_assert_eq(sb_fs_mkdirs(stale, 0755, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(partial, "abc", 3, 0644, NULL), 0);

	/* the dry run counts what prune removes next, and removes nothing */
	struct sb_image_prune_report dry;
	cr_assert_eq(sb_image_prune(&dry, root, SB_IMAGE_PRUNE_DRY_RUN, NULL), 0);
	cr_assert_eq(dry.blobs, 2);
	cr_assert_eq(dry.rootfs, 1);
	cr_assert_eq(dry.partial, 1);
	cr_assert_eq(count_entries("images/blobs/sha256"), 5);
	cr_assert_eq(access(stale, F_OK), 0);
	cr_assert_eq(access(partial, F_OK), 0);

	cr_assert_eq(sb_image_prune(&rep, root, 0, NULL), 0);
	cr_assert_eq(rep.bytes, dry.bytes, "the dry run's bytes are what prune frees");
	cr_assert_eq(rep.images, 0);
	cr_assert_eq(rep.blobs, 2);
	cr_assert_eq(rep.rootfs, 1);
	cr_assert_eq(rep.partial, 1);
	cr_assert_gt(rep.bytes, 9);
	cr_assert(blob_names_equal((const char *const[]){ manifest, config, layer }, 3));
	cr_assert_eq(access(stale, F_OK), -1);

	/* an image nothing refers to goes, with its blobs */
	cr_assert_eq(sb_image_remove(&rm, root, "multiarch", 0, NULL), 0);
	sb_image_removal_clear(&rm);
	cr_assert_eq(sb_image_prune(&dry, root, SB_IMAGE_PRUNE_DRY_RUN, NULL), 0);
	cr_assert_eq(dry.blobs, 3, "the blobs of the image it would drop count too");
	cr_assert_eq(count_entries("images/blobs/sha256"), 3);
	cr_assert_eq(sb_image_prune(&rep, root, 0, NULL), 0);
	cr_assert_eq(rep.blobs, 3);
	cr_assert_eq(count_entries("images/blobs/sha256"), 0);
	cr_assert_eq(count_entries("images/rootfs"), 0);
	free(stale);
	free(partial);
}

Test(image_store, prune_keeps_untagged_image_in_use)
{
	struct sb_image_import_result res;
	struct sb_image_prune_report rep;
	struct sb_image_removal rm;
	struct sb_image_info info;

	import_ok(&res, "busybox", NULL);
	write_record("keep", res.digest);
	/* drop the reference by hand, as a moved tag would */
	cr_assert_eq(tu_sh("sed -i 's|\"localhost/busybox:latest\"|\"localhost/other:x\"|' %s/images/refs.json",
			   sb_root_path(root)),
		     0);
	cr_assert_eq(sb_image_remove(&rm, root, "other:x", 0, NULL), SB_ERR_BUSY);
	cr_assert_eq(tu_sh("sed -i 's|\"localhost/other:x\": \"sha256:[0-9a-f]*\"||' %s/images/refs.json",
			   sb_root_path(root)),
		     0);
	cr_assert_eq(sb_image_prune(&rep, root, 0, NULL), 0);
	cr_assert_eq(rep.images, 0, "a sandbox uses it");
	cr_assert_eq(rep.blobs, 0);
	cr_assert_eq(sb_image_resolve(&info, root, res.digest, NULL), 0);
	cr_assert_str_eq(info.ref, "");
	sb_image_info_clear(&info);
}

/* Running out of memory at any of jansson's allocations in prune (each fails
 * in turn) never costs an image a sandbox uses, nor its blobs. */
Test(image_store, prune_short_of_memory_keeps_what_is_in_use)
{
	struct sb_image_import_result res;
	struct sb_image_prune_report rep;
	struct sb_image_info info;
	char blobs[3][SB_DIGEST_STR_LEN], orphan[SB_DIGEST_STR_LEN];
	long n;

	import_ok(&res, "busybox", NULL);
	fixture_digest(blobs[0], "BUSYBOX_MANIFEST");
	fixture_digest(blobs[1], "BUSYBOX_CONFIG");
	fixture_digest(blobs[2], "BUSYBOX_LAYER");
	write_record("user", res.digest);
	/* untagged: only the sandbox keeps it */
	cr_assert_eq(tu_sh("sed -i 's|\"localhost/busybox:latest\": \"sha256:[0-9a-f]*\"||' %s/images/refs.json",
			   sb_root_path(root)),
		     0);
	for (n = 1;; n++) {
		cr_assert_eq(sb_blob_put(orphan, root, "orphan", 6, NULL), 0);
		tu_json_fail_nth(n);
		int rc = sb_image_prune(&rep, root, 0, NULL);
		int hit = tu_json_fail_hit();
		tu_json_fail_nth(0);
		cr_assert(rc == 0 || hit, "prune fails only for want of memory");
		cr_assert_eq(sb_image_resolve(&info, root, res.digest, NULL), 0, "allocation %ld failing dropped the image", n);
		cr_assert_eq(access(info.rootfs, F_OK), 0);
		sb_image_info_clear(&info);
		for (int i = 0; i < 3; i++)
			cr_assert(sb_blob_exists(root, blobs[i]), "allocation %ld failing removed blob %d", n, i);
		if (!hit)
			break;
	}
	cr_assert_gt(n, 20);
	cr_assert_not(sb_blob_exists(root, orphan), "a prune that went through removed the orphan");
}

Test(image_store, failed_install_leaves_nothing_and_refs_unchanged)
{
	struct sb_image_import_result res;
	struct sb_image_info info;
	struct sb_error err;
	char broken[SB_DIGEST_STR_LEN], *before, *after, *rootfs;

	import_ok(&res, "busybox", NULL);
	before = refs_json();
	fixture_digest(broken, "BROKEN_MANIFEST");
	cr_assert_lt(import(&res, "broken-layer", "broken:1", &err), 0);
	cr_assert(strstr(err.msg, "layer 2/2"), "%s", err.msg);
	after = refs_json();
	cr_assert_str_eq(after, before, "refs.json is untouched");
	rootfs = sb_strdupf("%s/images/rootfs/%s", sb_root_path(root), sb_digest_hex(broken));
	cr_assert_neq(access(rootfs, F_OK), 0, "no rootfs for the broken image");
	cr_assert_eq(count_entries("images/rootfs"), 1, "only busybox's tree, no temp dir left");
	cr_assert_eq(sb_image_resolve(&info, root, "broken:1", NULL), SB_ERR_NOTFOUND);
	free(before);
	free(after);
	free(rootfs);
}

static void die_while_unpacking(void *user, const struct sb_progress_event *ev)
{
	(void)user;
	if (ev->phase == SB_PROGRESS_UNPACK)
		raise(SIGKILL);
}

/* Imports a fixture in a child process with its own root handle; returns the
 * wait status. */
static pid_t import_in_child(const char *name, const struct sb_progress *progress)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sb_image_import_opts opts = { .progress = progress };
		struct sb_image_import_result res;
		struct sb_error err;
		struct sb_root *r;
		char *path = fixture(name);
		if (sb_root_open(&r, sb_root_path(root), &err) < 0 || sb_image_import(&res, r, path, &opts, &err) < 0) {
			fprintf(stderr, "import %s: %s\n", name, err.msg);
			_exit(1);
		}
		_exit(0);
	}
	return pid;
}

Test(image_store, killed_install_leaves_no_image_that_looks_complete)
{
	struct sb_progress killer = { die_while_unpacking, NULL };
	struct sb_image_import_result res;
	struct sb_image_info info;
	char layered[SB_DIGEST_STR_LEN], *before, *after, *rootfs;
	int status;

	import_ok(&res, "busybox", NULL);
	before = refs_json();
	fixture_digest(layered, "LAYERED_MANIFEST");
	cr_assert_eq(waitpid(import_in_child("layered", &killer), &status, 0) > 0, 1);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the import was killed while unpacking");
	rootfs = sb_strdupf("%s/images/rootfs/%s", sb_root_path(root), sb_digest_hex(layered));
	cr_assert_neq(access(rootfs, F_OK), 0, "no rootfs under the image's name");
	cr_assert_eq(sb_image_resolve(&info, root, "layered", NULL), SB_ERR_NOTFOUND);
	after = refs_json();
	cr_assert_str_eq(after, before);
	cr_assert_eq(count_entries("images/rootfs"), 2, "busybox and the dead install's temp dir");
	/* the next install cleans up and succeeds */
	import_ok(&res, "layered", NULL);
	cr_assert_eq(count_entries("images/rootfs"), 2, "busybox and layered, no temp dir");
	assert_layered_tree(rootfs);
	free(before);
	free(after);
	free(rootfs);
}

Test(image_store, concurrent_installs_of_one_image)
{
	struct sb_image_info info;
	pid_t a = import_in_child("layered", NULL), b = import_in_child("layered-plain", NULL);
	pid_t c = import_in_child("layered", NULL);
	int sa, sb, sc;

	cr_assert_eq(waitpid(a, &sa, 0), a);
	cr_assert_eq(waitpid(b, &sb, 0), b);
	cr_assert_eq(waitpid(c, &sc, 0), c);
	cr_assert(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
	cr_assert(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
	cr_assert(WIFEXITED(sc) && WEXITSTATUS(sc) == 0);
	cr_assert_eq(count_entries("images/rootfs"), 2, "one tree per image, no temp dir left");
	cr_assert_eq(sb_image_resolve(&info, root, "layered", NULL), 0);
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_resolve(&info, root, "layered-plain", NULL), 0, "neither refs.json update was lost");
	sb_image_info_clear(&info);
}

Test(image_store, leftover_temp_dir_is_swept_but_a_live_one_kept)
{
	struct sb_image_import_result res;
	char *dead = sb_strdupf("%s/images/rootfs/.tmp-%064d-dead01", sb_root_path(root), 1);
	char *live = sb_strdupf("%s/images/rootfs/.tmp-%064d-live01", sb_root_path(root), 2);
	int fd;

	cr_assert_eq(sb_fs_mkdirs(dead, 0700, NULL), 0);
	cr_assert_eq(sb_fs_mkdirs(live, 0700, NULL), 0);
	cr_assert_eq(tu_sh("touch %s/half-written", dead), 0);
	fd = open(live, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0, "held as an install in progress holds it");
	import_ok(&res, "busybox", NULL);
	cr_assert_neq(access(dead, F_OK), 0, "a dead install's temp dir is removed by the next install");
	cr_assert_eq(access(live, F_OK), 0, "a live one is not");
	close(fd);
	free(dead);
	free(live);
}

Test(image_store, second_install_is_the_fast_path)
{
	struct sb_image_import_result res;
	struct sb_image_info info;
	struct stat before, after;

	import_ok(&res, "busybox", NULL);
	cr_assert_eq(sb_image_resolve(&info, root, res.digest, NULL), 0);
	cr_assert_eq(stat(info.rootfs, &before), 0);
	/* the same image again, from another format and under another name */
	import_ok(&res, "busybox.oci.tar", "again:1");
	cr_assert_eq(sb_image_install(root, "again:2", res.digest, NULL, NULL), 0);
	cr_assert_eq(stat(info.rootfs, &after), 0);
	cr_assert_eq(after.st_ino, before.st_ino, "the rootfs was not unpacked again");
	cr_assert_eq(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
	cr_assert_eq(count_entries("images/rootfs"), 1);
	sb_image_info_clear(&info);
	cr_assert_eq(sb_image_resolve(&info, root, "again:2", NULL), 0);
	sb_image_info_clear(&info);
}

/* New trees go to a lightly used ext4 block group (see mark_topdir). */
Test(image_store, trees_parent_is_private_and_a_top_directory)
{
	struct sb_image_import_result res;
	char *parent = sb_root_file(root, "images/rootfs");
	struct stat st;
	int fd, flags;

	import_ok(&res, "busybox", NULL);
	cr_assert_eq(stat(parent, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700);
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		close(fd);
		free(parent);
		cr_skip_test("no inode flags on this filesystem");
	}
	cr_assert(flags & FS_TOPDIR_FL, "%s has flags %#x", parent, flags);
	close(fd);
	free(parent);
}

Test(image_store, install_refuses_other_platform_and_missing_blobs)
{
	struct sb_image_import_result res;
	struct sb_error err;
	char arm[SB_DIGEST_STR_LEN], layer[SB_DIGEST_STR_LEN], *path;

	import_ok(&res, "multiarch", NULL);
	/* import takes the host's manifest only: put the arm64 one in by hand */
	cr_assert_eq(tu_sh("cp -n %s/multiarch/blobs/sha256/* %s/images/blobs/sha256/", images, sb_root_path(root)), 0);
	fixture_digest(arm, "MULTIARCH_ARM64_MANIFEST");
	cr_assert_eq(sb_image_install(root, NULL, arm, NULL, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "linux/arm64"), "%s", err.msg);
	fixture_digest(layer, "BUSYBOX_LAYER");
	path = sb_blob_path(root, layer);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(sb_image_install(root, "x:1", res.digest, NULL, &err), 0, "installed images need no blobs");
	free(path);
}

Test(image_store, bootstrap_busybox_is_runnable)
{
	struct sb_bootstrap_opts opts = { .kind = SB_BOOTSTRAP_BUSYBOX };
	struct sb_bootstrap_result res, again;
	struct sb_image_info info;
	struct sb_error err;
	struct stat st;
	char *sh, *out;

	cr_assert_eq(sb_image_bootstrap(&res, root, &opts, &err), 0, "%s", err.msg);
	cr_assert_eq(res.built, SB_BOOTSTRAP_BUSYBOX);
	cr_assert_str_eq(res.image.ref, "localhost/sandbench/base:latest");
	cr_assert_eq(sb_image_resolve(&info, root, SB_IMAGE_BASE_NAME, &err), 0, "%s", err.msg);
	sh = sb_path_join(info.rootfs, "bin/sh");
	cr_assert_eq(lstat(sh, &st), 0, "/bin/sh exists");
	out = tu_sh_out("chroot %s /bin/sh -c 'echo $((6 * 7)); ls /usr/bin/awk'", info.rootfs);
	cr_assert_str_eq(out, "42\n/usr/bin/awk", "the image's shell runs");
	cr_assert_eq(sb_image_bootstrap(&again, root, &opts, &err), 0, "%s", err.msg);
	cr_assert_str_eq(again.image.digest, res.image.digest, "the busybox image is reproducible");
	free(out);
	free(sh);
	sb_image_info_clear(&info);
}

Test(image_store, bootstrap_falls_back_to_busybox_without_a_mirror)
{
	/* port 9 (discard) on loopback: nothing listens there */
	struct sb_bootstrap_opts opts = { .kind = SB_BOOTSTRAP_AUTO, .mirror = "http://127.0.0.1:9/debian" };
	struct sb_bootstrap_result res;
	struct sb_error err;

	cr_assert_eq(sb_image_bootstrap(&res, root, &opts, &err), 0, "%s", err.msg);
	cr_assert_eq(res.built, SB_BOOTSTRAP_BUSYBOX);
	cr_assert(strstr(res.fallback_reason, "127.0.0.1:9"), "the reason names the mirror: %s", res.fallback_reason);
	cr_assert_str_eq(res.image.ref, "localhost/sandbench/base:latest");
}

/* Network and a minute: only when asked (SB_TEST_MMDEBSTRAP=1). */
Test(image_store, bootstrap_debian_with_mmdebstrap, .timeout = 1200)
{
	struct sb_bootstrap_opts opts = { .kind = SB_BOOTSTRAP_DEBIAN };
	struct sb_bootstrap_result res;
	struct sb_image_info info;
	struct sb_error err;
	char *out;

	if (!getenv("SB_TEST_MMDEBSTRAP")) {
		teardown(); /* a skipped test does not get its .fini */
		cr_skip_test("set SB_TEST_MMDEBSTRAP=1 to build the Debian image from the mirror");
	}
	cr_assert_eq(sb_image_bootstrap(&res, root, &opts, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_image_resolve(&info, root, SB_IMAGE_BASE_NAME, &err), 0, "%s", err.msg);
	out = tu_sh_out("chroot %s python3 -c 'print(6 * 7)'; ls %s/dev | wc -l; test -e %s/etc/resolv.conf || echo no-resolv",
			info.rootfs, info.rootfs, info.rootfs);
	cr_assert_str_eq(out, "42\n0\nno-resolv");
	cr_assert_eq(info.n_layers, 1);
	cr_assert_str_eq(info.layers[0].media_type, "application/vnd.oci.image.layer.v1.tar+zstd");
	free(out);
	sb_image_info_clear(&info);
}

Test(image_store, cli_import_ls_inspect_rm)
{
	char *r = sb_strdupf("%s", sb_root_path(root)), *path = fixture("busybox");
	struct tu_run run;

	sb_root_close(root); /* the CLI opens the root itself */
	root = NULL;
	run = tu_sandbench(r, NULL, "image", "import", path, "--name", "cli:1", "--json", NULL);
	cr_assert_eq(run.status, 0, "%s", run.err);
	cr_assert(strstr(run.out, "\"reference\": \"localhost/cli:1\""), "%s", run.out);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "ls", NULL);
	cr_assert_eq(run.status, 0);
	cr_assert(strstr(run.out, "localhost/cli:1"), "%s", run.out);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "inspect", "cli:1", "--json", NULL);
	cr_assert_eq(run.status, 0);
	cr_assert(strstr(run.out, "\"platform\": \"linux/amd64\""), "%s", run.out);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "inspect", "nothing:here", NULL);
	cr_assert_eq(run.status, 3, "not found has its own exit status");
	cr_assert(strstr(run.err, "nothing:here"), "%s", run.err);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "rm", "--help", NULL);
	cr_assert_eq(run.status, 0);
	cr_assert(strstr(run.out, "--force"), "subcommand help: %s", run.out);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "rm", "cli:1", NULL);
	cr_assert_eq(run.status, 0, "%s", run.err);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "prune", "--json", NULL);
	cr_assert_eq(run.status, 0);
	cr_assert(strstr(run.out, "\"blobs\": 3"), "%s", run.out);
	tu_run_free(&run);
	cr_assert_eq(sb_root_open(&root, r, NULL), 0);
	free(r);
	free(path);
}
