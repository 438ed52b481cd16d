/* Pushing images of the store: to Debian's docker-registry on 127.0.0.1
 * (round trip into a second state root, read by skopeo and buildah, existence
 * checks, chunked uploads, cross-repository mounts, token auth, the CLI, a
 * committed sandbox's image with real runsc) and
 * to a misbehaving registry (tests/fixtures/bad-registry.py) whose faults
 * must give clear errors and leave the local image as it was. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/root.h"
#include "image/blob_store.h"
#include "image/import.h"
#include "image/store.h"
#include "registry/registry.h"
#include "regfixture.h"
#include "sbfixture.h"
#include "testutil.h"

TestSuite(push, .init = rf_setup, .fini = rf_teardown, .timeout = 180);

static const struct sb_registry_opts insecure = { .insecure = 1 };

/* Imports a test image into rf.root as name; returns its digest (malloc'd). */
static char *import_image(const char *image, const char *name)
{
	struct sb_image_import_opts opts = { .name = name };
	struct sb_image_import_result res;
	struct sb_error err;
	char *path = rf_layout(image);

	cr_assert_eq(sb_image_import(&res, rf.root, path, &opts, &err), 0, "%s", err.msg);
	free(path);
	return strdup(res.digest);
}

static int push(struct sb_registry_push_result *res, const char *image, const char *dest,
		const struct sb_registry_opts *opts, struct sb_error *err)
{
	return sb_registry_push(res, rf.root, image, dest, opts ? opts : &insecure, err);
}

/* The tree listing of a directory (tests/fixtures/unpack-tree.sh list). */
static char *tree(const char *path)
{
	char *script = tu_srcpath("tests/fixtures/unpack-tree.sh"), *out = tu_sh_out("sh %s list %s", script, path);

	cr_assert(out && strlen(out) > 100, "no tree at %s", path);
	free(script);
	return out;
}

static char *rootfs_tree(struct sb_root *root, const char *digest)
{
	struct sb_image_info info;
	char *t;

	cr_assert_eq(sb_image_resolve(&info, root, digest, NULL), 0);
	t = tree(info.rootfs);
	sb_image_info_clear(&info);
	return t;
}

static int log_lines(const char *pattern)
{
	char *log = sb_path_join(rf.regdir, "log");
	int n = rf_count_lines(log, pattern);

	free(log);
	return n;
}

struct log_want {
	const char *pattern;
	int n;
};

static int log_has(void *arg)
{
	const struct log_want *w = arg;
	return log_lines(w->pattern) >= w->n;
}

/* The count of pattern's lines once there are n or the deadline passed: the
 * registry logs a request after its answer, so the last may come after the
 * client has moved on. */
static int log_lines_reach(const char *pattern, int n)
{
	struct log_want w = { pattern, n };

	tu_wait_for(log_has, &w, 10000);
	return log_lines(pattern);
}

Test(push, round_trip_into_a_second_root_gives_the_same_image)
{
	char *digest = import_image("layered", "layered:1");
	struct sb_registry_push_result res;
	struct sb_root *second;
	struct sb_error err;
	char pulled[SB_DIGEST_STR_LEN];

	rf_start_registry(NULL);
	char *dest = sb_strdupf("127.0.0.1:%d/sb/layered:1", rf.port);
	cr_assert_eq(push(&res, "layered:1", dest, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(res.digest, digest);
	cr_assert_str_eq(res.reference, dest);
	cr_assert_eq(res.uploaded, 3, "config and two layers: %u", res.uploaded);
	cr_assert_eq(res.existing + res.mounted, 0);
	sb_registry_push_result_clear(&res);
	char *second_dir = sb_path_join(rf.dir, "second");
	cr_assert_eq(sb_root_open(&second, second_dir, NULL), 0);
	cr_assert_eq(sb_registry_pull(pulled, NULL, second, dest, &insecure, &err), 0, "%s", err.msg);
	cr_assert_str_eq(pulled, digest, "the pull gives the pushed digest");
	char *a = rootfs_tree(rf.root, digest), *b = rootfs_tree(second, pulled);
	cr_assert_str_eq(a, b, "the pulled tree differs");
	free(a);
	free(b);
	sb_root_close(second);
	free(second_dir);
	free(dest);
	free(digest);
}

/* buildah with its own storage in the test's directory (vfs: no mounts). */
static char *buildah(const char *args)
{
	return tu_sh_out("buildah --root %s/bs --runroot %s/brun --storage-driver vfs %s 2>>%s/buildah.err", rf.dir,
			 rf.dir, args, rf.dir);
}

Test(push, skopeo_and_buildah_read_the_pushed_image)
{
	char *digest = import_image("layered", "layered:1");
	struct sb_registry_push_result res;
	struct sb_error err;

	rf_start_registry(NULL);
	char *dest = sb_strdupf("127.0.0.1:%d/sb/peer:v1", rf.port);
	cr_assert_eq(push(&res, "layered:1", dest, NULL, &err), 0, "%s", err.msg);
	sb_registry_push_result_clear(&res);
	char *got = tu_sh_out("skopeo inspect --tls-verify=false --format '{{.Digest}} {{.Architecture}}' docker://%s", dest);
	char *want = sb_strdupf("%s amd64", digest);
	cr_assert_str_eq(got, want, "skopeo inspect of the manifest");
	free(got);
	free(want);
	got = tu_sh_out("skopeo inspect --tls-verify=false --config docker://%s | python3 -c "
			"'import json, sys; c = json.load(sys.stdin); print(c[\"os\"], len(c[\"rootfs\"][\"diff_ids\"]))'",
			dest);
	cr_assert_str_eq(got, "linux 2", "skopeo inspect --config");
	free(got);
	/* buildah pulls it and gives the tree sandbench unpacks */
	cr_assert_eq(tu_sh("echo '{\"default\":[{\"type\":\"insecureAcceptAnything\"}]}' > %s/policy.json", rf.dir), 0);
	char *from = sb_strdupf("from --quiet --tls-verify=false --isolation chroot --signature-policy %s/policy.json "
				"--name sbpush docker://%s",
				rf.dir, dest);
	char *container = buildah(from);
	cr_assert_str_eq(container, "sbpush", "buildah from failed");
	char *mnt = buildah("mount sbpush");
	cr_assert(mnt && mnt[0] == '/', "buildah mount failed");
	char *theirs = tree(mnt), *ours = rootfs_tree(rf.root, digest);
	cr_assert_str_eq(theirs, ours, "buildah's tree differs from sandbench's unpack");
	free(buildah("umount sbpush"));
	free(buildah("rm sbpush"));
	free(theirs);
	free(ours);
	free(mnt);
	free(container);
	free(from);
	free(dest);
	free(digest);
}

Test(push, second_push_finds_every_blob_and_uploads_none)
{
	char *digest = import_image("layered", "layered:1");
	struct sb_registry_push_result res;
	struct sb_error err;

	rf_start_registry(NULL);
	char *dest = sb_strdupf("127.0.0.1:%d/sb/again", rf.port);
	cr_assert_eq(push(&res, "layered:1", dest, NULL, &err), 0, "%s", err.msg);
	sb_registry_push_result_clear(&res);
	/* the first push's lines all logged before the second starts */
	int posts = log_lines_reach("\"POST /v2/sb/again/blobs/uploads/", 3);
	int puts = log_lines_reach("\"PUT /v2/sb/again/blobs/", 3);
	cr_assert_eq(posts, 3);
	cr_assert_eq(puts, 3);
	cr_assert_eq(push(&res, "layered:1", dest, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(res.existing, 3);
	cr_assert_eq(res.uploaded, 0);
	cr_assert_eq(res.bytes, 0);
	char *tagged = sb_strdupf("%s:latest", dest);
	cr_assert_str_eq(res.reference, tagged, "a destination without a tag gets latest");
	free(tagged);
	sb_registry_push_result_clear(&res);
	cr_assert_eq(log_lines("\"POST /v2/sb/again/blobs/uploads/"), posts, "a blob was uploaded again");
	cr_assert_eq(log_lines("\"PUT /v2/sb/again/blobs/"), puts);
	cr_assert_eq(log_lines_reach("\"HEAD /v2/sb/again/blobs/sha256:[0-9a-f]* HTTP/1.1\" 200", 3), 3);
	free(dest);
	free(digest);
}

Test(push, big_blobs_go_up_in_chunks)
{
	char *digest = import_image("layered", "layered:1");
	struct sb_registry_opts opts = { .insecure = 1, .chunk_size = 64 << 10 };
	struct sb_registry_push_result res;
	struct sb_root *second;
	struct sb_error err;
	char pulled[SB_DIGEST_STR_LEN];

	rf_start_registry(NULL);
	char *dest = sb_strdupf("127.0.0.1:%d/sb/chunked:1", rf.port);
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), 0, "%s", err.msg);
	sb_registry_push_result_clear(&res);
	/* the busybox layer is about 1 MB: many chunks, then one PUT per blob */
	cr_assert_gt(log_lines("\"PATCH /v2/sb/chunked/blobs/uploads/"), 10);
	cr_assert_eq(log_lines_reach("\"PUT /v2/sb/chunked/blobs/uploads/.*\" 201", 3), 3);
	char *second_dir = sb_path_join(rf.dir, "second");
	cr_assert_eq(sb_root_open(&second, second_dir, NULL), 0);
	cr_assert_eq(sb_registry_pull(pulled, NULL, second, dest, &insecure, &err), 0, "%s", err.msg);
	cr_assert_str_eq(pulled, digest);
	sb_root_close(second);
	free(second_dir);
	free(dest);
	free(digest);
}

Test(push, an_image_pulled_from_the_registry_is_mounted_into_another_repository)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_registry_push_result res;
	struct sb_error err;

	rf_start_registry(NULL);
	rf_push("layered", "sb/src:latest", NULL);
	char *src = rf_ref_at(rf.port, "sb/src"), *dest = rf_ref_at(rf.port, "sb/dst:copy");
	cr_assert_eq(sb_registry_pull(digest, NULL, rf.root, src, &insecure, &err), 0, "%s", err.msg);
	cr_assert_eq(push(&res, src, dest, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(res.mounted, 3, "mounted %u, uploaded %u", res.mounted, res.uploaded);
	cr_assert_eq(res.uploaded, 0);
	sb_registry_push_result_clear(&res);
	cr_assert_eq(log_lines_reach("\"POST /v2/sb/dst/blobs/uploads/?mount=sha256:[0-9a-f]*&from=sb/src HTTP/1.1\" 201", 3),
		     3);
	cr_assert_eq(log_lines("\"PUT /v2/sb/dst/blobs/"), 0);
	char *got = tu_sh_out("skopeo inspect --tls-verify=false --format '{{.Digest}}' docker://%s", dest);
	cr_assert_str_eq(got, digest);
	free(got);
	free(dest);
	free(src);
}

Test(push, token_auth_needs_push_rights)
{
	struct sb_registry_opts opts = { .insecure = 1 };
	struct sb_registry_push_result res;
	struct sb_error err;
	char *digest = import_image("layered", "layered:1"), *log = sb_path_join(rf.dir, "token.log");

	rf_start_token_registry("bob:hunter2 --anonymous");
	char *dest = rf_ref_at(rf.port, "sb/tok:1");
	/* anonymous tokens carry pull only: the upload is refused */
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), SB_ERR_AUTH, "%s", err.msg);
	cr_assert(strstr(err.msg, "--creds"), "%s", err.msg);
	opts.creds_file = rf_write_secret("right", "bob:hunter2", 0600);
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), 0, "%s", err.msg);
	cr_assert_str_eq(res.digest, digest);
	sb_registry_push_result_clear(&res);
	cr_assert_gt(rf_count_lines(log, "scope=repository%3Asb%2Ftok%3Apull%2Cpush"), 0, "no push token was asked for");
	free((char *)opts.creds_file);
	free(dest);
	free(log);
	free(digest);
}

Test(push, destination_rules)
{
	struct sb_registry_push_result res;
	struct sb_error err;
	char *digest = import_image("busybox", "tools:1");

	/* a localhost/ name has no registry to go to */
	cr_assert_eq(push(&res, "tools:1", NULL, NULL, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "localhost/tools:1") && strstr(err.msg, "REGISTRY/NAME"), "%s", err.msg);
	char *pinned = sb_strdupf("127.0.0.1:1/x@%s", digest);
	cr_assert_eq(push(&res, "tools:1", pinned, NULL, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "digest"), "%s", err.msg);
	cr_assert_eq(push(&res, "nothing:here", "127.0.0.1:1/x", NULL, &err), SB_ERR_NOTFOUND);
	cr_assert_eq(push(&res, "tools:1", "Bad Name", NULL, &err), SB_ERR_INVALID);
	free(pinned);
	free(digest);
}

struct seen {
	int resolve, done, complete[3];
	unsigned long long layer_total;
};

static void on_progress(void *user, const struct sb_progress_event *ev)
{
	struct seen *s = user;

	s->resolve += ev->phase == SB_PROGRESS_RESOLVE;
	s->done += ev->phase == SB_PROGRESS_DONE;
	if (ev->phase == SB_PROGRESS_UPLOAD && ev->layer >= 0 && ev->layer < 3 && ev->done == ev->total)
		s->complete[ev->layer]++;
}

Test(push, progress_reports_each_blob_up_to_its_size)
{
	char *digest = import_image("layered", "layered:1");
	struct seen seen = { 0 };
	struct sb_progress progress = { on_progress, &seen };
	struct sb_registry_opts opts = { .insecure = 1, .progress = &progress, .chunk_size = 256 << 10 };
	struct sb_registry_push_result res;
	struct sb_error err;

	rf_start_registry(NULL);
	char *dest = rf_ref_at(rf.port, "sb/progress:1");
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), 0, "%s", err.msg);
	sb_registry_push_result_clear(&res);
	cr_assert_eq(seen.resolve, 1);
	cr_assert_eq(seen.done, 1);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(seen.complete[i], 1, "blob %d reported complete %d times", i, seen.complete[i]);
	/* again: every blob is there, and says so */
	memset(&seen, 0, sizeof(seen));
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), 0, "%s", err.msg);
	sb_registry_push_result_clear(&res);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(seen.complete[i], 1);
	free(dest);
	free(digest);
}

/* A sandbox root beside the registry fixture (the suite's .init and .fini
 * run around these). */
static struct sbf f;

static void sandbox_setup(void)
{
	sbf_setup(&f, "pushc");
}

static void sandbox_teardown(void)
{
	sbf_teardown(&f);
}

/* What a sandbox made goes up under a name of its own and comes back whole. */
Test(push, a_committed_sandbox_goes_up_and_comes_back, .init = sandbox_setup, .fini = sandbox_teardown,
     .timeout = 300)
{
	char pulled[SB_DIGEST_STR_LEN];
	struct sb_image_info info;
	struct sb_error err;

	rf_start_registry(NULL);
	sbf_ok(tu_sandbench(f.dir, NULL, "create", "maker", "--image", SBF_IMAGE, "--permanent", NULL), "create");
	free(sbf_sh(&f, NULL, "maker", "echo made here > /etc/made-here && rm /bin/vi", NULL));
	sbf_ok(tu_sandbench(f.dir, NULL, "commit", "maker", "tools:1", NULL), "commit");
	cr_assert_eq(sb_image_resolve(&info, f.root, "tools:1", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.ref, "localhost/tools:1", "a commit is named under localhost/");
	char *dest = rf_ref_at(rf.port, "sb/tools:1");
	struct tu_run r = tu_sandbench(f.dir, NULL, "image", "push", "--insecure", "--quiet", "tools:1", dest, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, info.digest), "%s", r.out);
	tu_run_free(&r);
	cr_assert_eq(sb_registry_pull(pulled, NULL, rf.root, dest, &insecure, &err), 0, "%s", err.msg);
	cr_assert_str_eq(pulled, info.digest);
	char *ours = tree(info.rootfs), *back = rootfs_tree(rf.root, pulled);
	cr_assert_str_eq(back, ours, "the pulled tree differs from the committed one");
	struct sb_image_info got;
	cr_assert_eq(sb_image_resolve(&got, rf.root, pulled, &err), 0, "%s", err.msg);
	cr_assert_eq(tu_sh("grep -qx 'made here' %s/etc/made-here && ! test -e %s/bin/vi", got.rootfs, got.rootfs), 0);
	sb_image_info_clear(&got);
	free(ours);
	free(back);
	free(dest);
	sb_image_info_clear(&info);
}

/* ---- a misbehaving registry: clear errors, nothing lost locally */

struct fault_case {
	const char *faults;
	int rc;
	const char *says;   /* in the message */
};

static void assert_image_intact(const char *digest)
{
	struct sb_image_info info;
	struct sb_error err;

	cr_assert_eq(sb_image_resolve(&info, rf.root, "layered:1", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.digest, digest);
	cr_assert(sb_blob_exists(rf.root, info.digest) && sb_blob_exists(rf.root, info.config_digest));
	for (size_t i = 0; i < info.n_layers; i++)
		cr_assert(sb_blob_exists(rf.root, info.layers[i].digest));
	sb_image_info_clear(&info);
}

Test(push, faults_of_the_registry_are_clear_errors)
{
	static const struct fault_case cases[] = {
		{ "put-500", SB_ERR_NETWORK, "HTTP 500" },
		{ "no-location", SB_ERR_NETWORK, "without a Location" },
		{ "bad-location", SB_ERR_NETWORK, "ftp://elsewhere.invalid/upload" },
		{ "bad-range", SB_ERR_NETWORK, "holds bytes 0-0" },
		{ "wrong-digest", SB_ERR_DIGEST, "stored blob" },
		{ "manifest-digest", SB_ERR_DIGEST, "stored the manifest" },
	};
	struct sb_registry_opts opts = { .insecure = 1, .chunk_size = 256 << 10 };
	char *digest = import_image("layered", "layered:1"), *pid = sb_path_join(rf.dir, "server.pid");
	struct sb_registry_push_result res;
	struct sb_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int p = rf_start_bad_registry("busybox", cases[i].faults);
		char *dest = rf_ref_at(p, "up:1");
		cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), cases[i].rc, "%s: %s", cases[i].faults, err.msg);
		cr_assert(strstr(err.msg, cases[i].says), "%s: %s", cases[i].faults, err.msg);
		assert_image_intact(digest);
		cr_assert_eq(tu_sh("kill $(cat %s) && rm %s %s/port", pid, pid, rf.dir), 0);
		free(dest);
	}
	free(pid);
	free(digest);
}

/* Pushes layered:1 in 256 KiB chunks to bad-registry.py with faults, with
 * credentials when creds; it must succeed. Returns the registry's request log
 * (its path, malloc'd). */
static char *push_through(const char *faults, const char *creds)
{
	struct sb_registry_opts opts = { .insecure = 1, .chunk_size = 256 << 10 };
	char *digest = import_image("layered", "layered:1");
	struct sb_registry_push_result res;
	struct sb_error err;
	char *dest = rf_ref_at(rf_start_bad_registry("busybox", faults), "up:1");

	opts.creds_file = creds ? rf_write_secret("creds", creds, 0600) : NULL;
	cr_assert_eq(push(&res, "layered:1", dest, &opts, &err), 0, "%s: %s", faults, err.msg);
	cr_assert_str_eq(res.digest, digest);
	cr_assert_eq(res.uploaded, 3);
	sb_registry_push_result_clear(&res);
	free((char *)opts.creds_file);
	free(dest);
	free(digest);
	return sb_path_join(rf.dir, "requests");
}

Test(push, a_server_error_or_a_dropped_chunk_is_retried)
{
	char *requests = push_through("put-500-once,drop-patch-once", NULL);

	/* three uploads and the one started again after the 500; the dropped
	 * chunk was sent again: by curl on a new connection when the dropped one
	 * was a kept-alive one (it rewinds the body), else by a new upload */
	int posts = rf_count_lines(requests, "^POST /v2/up/blobs/uploads/");
	cr_assert(posts == 4 || posts == 5, "%d uploads started", posts);
	cr_assert_geq(rf_count_lines(requests, "^PATCH /v2/up/blobs/uploads/"), 5, "four chunks and the dropped one");
	free(requests);
}

Test(push, credentials_go_only_to_the_registry_itself)
{
	char *requests = push_through("basic-auth,foreign-location", "alice:s3cret");

	cr_assert_gt(rf_count_lines(requests, "^POST .* host=127.0.0.1 auth=yes"), 0);
	/* the uploads went on at the other origin, and without our password */
	cr_assert_gt(rf_count_lines(requests, "^PATCH .* host=localhost auth=no"), 0);
	cr_assert_eq(rf_count_lines(requests, "^PUT /v2/up/blobs/.* host=localhost auth=no"), 3);
	cr_assert_eq(rf_count_lines(requests, "host=localhost auth=yes"), 0, "credentials went to another origin");
	free(requests);
}

/* ---- the command line: sandbench image push */

Test(push, cli_push_and_exit_codes)
{
	char *digest = import_image("layered", "layered:1");
	const char *r = sb_root_path(rf.root);
	struct tu_run run;

	rf_start_registry(NULL);
	char *dest = rf_ref_at(rf.port, "sb/cli:2");
	run = tu_sandbench(r, NULL, "image", "push", "--insecure", "--json", "layered:1", dest, NULL);
	cr_assert_eq(run.status, 0, "%s", run.err);
	char *want = sb_strdupf("\"digest\": \"%s\"", digest);
	cr_assert(strstr(run.out, want) && strstr(run.out, "\"uploaded\": 3"), "%s", run.out);
	free(want);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "push", "--insecure", "--chunk-size", "100k", "layered:1", dest, NULL);
	cr_assert_eq(run.status, 0, "%s", run.err);
	cr_assert(strstr(run.out, "pushed 127.0.0.1:") && strstr(run.out, "3 already there"), "%s", run.out);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "push", "layered:1", NULL);
	cr_assert_eq(run.status, 2, "a localhost/ name without DEST: %d %s", run.status, run.err);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "push", "--chunk-size", "lots", "layered:1", dest, NULL);
	cr_assert_eq(run.status, 2, "%s", run.err);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "push", "layered:1", dest, NULL);
	cr_assert_eq(run.status, 8, "HTTPS to an HTTP registry: %d %s", run.status, run.err);
	tu_run_free(&run);
	run = tu_sandbench(r, NULL, "image", "push", "--insecure", "nothing:here", dest, NULL);
	cr_assert_eq(run.status, 3, "%d %s", run.status, run.err);
	tu_run_free(&run);
	free(dest);
	free(digest);
}
