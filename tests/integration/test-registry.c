/* Pulling from registries: Debian's docker-registry on 127.0.0.1 (anonymous,
 * htpasswd, token auth with a real JWT issuer, TLS) and a misbehaving registry
 * (tests/fixtures/bad-registry.py) for corrupt content and dropped connections. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "registry/registry.h"
#include "base/root.h"
#include "regfixture.h"
#include "testutil.h"

TestSuite(registry, .init = rf_setup, .fini = rf_teardown, .timeout = 120);

static int fetch(char digest[SB_DIGEST_STR_LEN], const char *ref, const struct sb_registry_opts *opts,
		 struct sb_error *err)
{
	static const struct sb_registry_opts insecure = { .insecure = 1 };

	return sb_registry_fetch(digest, NULL, rf.root, ref, opts ? opts : &insecure, err);
}

Test(registry, anonymous_pull_stores_manifest_config_and_layers)
{
	char digest[SB_DIGEST_STR_LEN], *canonical = NULL;
	char *want = rf_image_digest("BUSYBOX_MANIFEST"), *config = rf_image_digest("BUSYBOX_CONFIG");
	char *layer = rf_image_digest("BUSYBOX_LAYER");
	struct sb_registry_opts opts = { .insecure = 1 };
	struct sb_error err;

	rf_start_registry(NULL);
	rf_push("busybox", "sb/busybox:latest", NULL);
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	cr_assert_eq(sb_registry_fetch(digest, &canonical, rf.root, ref, &opts, &err), 0, "%s", err.msg);
	cr_assert_str_eq(digest, want);
	char *expect_name = sb_strdupf("%s:latest", ref);
	cr_assert_str_eq(canonical, expect_name);
	cr_assert(sb_blob_exists(rf.root, want));
	cr_assert(sb_blob_exists(rf.root, config));
	cr_assert(sb_blob_exists(rf.root, layer));
	free(expect_name);
	free(canonical);
	free(ref);
	free(want);
	free(config);
	free(layer);
}

Test(registry, second_pull_of_same_image_fetches_no_blob)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;
	char *log = sb_path_join(rf.regdir, "log");

	rf_start_registry(NULL);
	rf_push("layered", "sb/layered:latest", NULL);
	char *ref = rf_ref_at(rf.port, "sb/layered");
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	int blobs = rf_count_lines(log, "\"GET /v2/sb/layered/blobs/");
	cr_assert_eq(blobs, 3, "first pull fetched %d blobs, want config + 2 layers", blobs);
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(rf_count_lines(log, "\"GET /v2/sb/layered/blobs/"), blobs, "second pull fetched blobs again");
	/* pinned and present: not even the manifest is asked for */
	int manifests = rf_count_lines(log, "\"GET /v2/sb/layered/manifests/");
	char *pinned = sb_strdupf("%s@%s", ref, digest);
	cr_assert_eq(fetch(digest, pinned, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(rf_count_lines(log, "\"GET /v2/sb/layered/manifests/"), manifests);
	free(pinned);
	free(ref);
	free(log);
}

Test(registry, pinned_digest_pulls_exactly_that)
{
	char digest[SB_DIGEST_STR_LEN];
	char *want = rf_image_digest("BUSYBOX_MANIFEST"), *other = rf_image_digest("LAYERED_MANIFEST");
	struct sb_error err;

	rf_start_registry(NULL);
	rf_push("busybox", "sb/busybox:latest", NULL);
	char *ref = sb_strdupf("127.0.0.1:%d/sb/busybox:latest@%s", rf.port, want);
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(digest, want);
	/* a digest the registry does not have */
	char *missing = sb_strdupf("127.0.0.1:%d/sb/busybox@%s", rf.port, other);
	cr_assert_eq(fetch(digest, missing, NULL, &err), SB_ERR_NOTFOUND);
	free(missing);
	free(ref);
	free(want);
	free(other);
}

Test(registry, pinned_digest_served_other_content_is_refused)
{
	char digest[SB_DIGEST_STR_LEN];
	char *pinned = rf_image_digest("LAYERED_MANIFEST");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "ignore-digest");
	char *ref = sb_strdupf("127.0.0.1:%d/img@%s", p, pinned);

	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_DIGEST, "%s", err.msg);
	cr_assert(strstr(err.msg, pinned), "%s", err.msg);
	cr_assert_not(sb_blob_exists(rf.root, pinned));
	free(ref);
	free(pinned);
}

Test(registry, multiarch_index_resolves_to_amd64)
{
	char digest[SB_DIGEST_STR_LEN];
	char *amd64 = rf_image_digest("BUSYBOX_MANIFEST"), *index = rf_image_digest("MULTIARCH_INDEX");
	char *arm64 = rf_image_digest("MULTIARCH_ARM64_MANIFEST");
	struct sb_error err;

	rf_start_registry(NULL);
	rf_push("multiarch", "sb/multi:latest", "--all");
	char *ref = rf_ref_at(rf.port, "sb/multi");
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(digest, amd64);
	cr_assert(sb_blob_exists(rf.root, index));
	cr_assert_not(sb_blob_exists(rf.root, arm64));
	/* pinned to the index: verified, then resolved the same way */
	char *pinned = sb_strdupf("%s@%s", ref, index);
	cr_assert_eq(fetch(digest, pinned, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(digest, amd64);
	free(pinned);
	free(ref);
	free(amd64);
	free(index);
	free(arm64);
}

Test(registry, docker_schema2_manifest)
{
	char digest[SB_DIGEST_STR_LEN];
	char *want = rf_image_digest("BUSYBOX_DOCKER_MANIFEST");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox-docker", "none");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(digest, want);
	free(ref);
	free(want);
}

Test(registry, unknown_tag_is_not_found_naming_the_ref)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;

	rf_start_registry(NULL);
	rf_push("busybox", "sb/busybox:latest", NULL);
	char *ref = sb_strdupf("127.0.0.1:%d/sb/busybox:nope", rf.port);
	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, ref), "%s", err.msg);
	free(ref);
}

Test(registry, basic_auth)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_registry_opts opts = { .insecure = 1 };
	struct sb_error err;

	rf_start_htpasswd_registry();
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	/* anonymous: refused, saying how to give credentials */
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_AUTH);
	cr_assert(strstr(err.msg, "--creds"), "%s", err.msg);
	opts.creds_file = rf_write_secret("wrong", "alice:wrong\n", 0600);
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_AUTH, "%s", err.msg);
	cr_assert(strstr(err.msg, "alice"), "%s", err.msg);
	free((char *)opts.creds_file);
	opts.creds_file = rf_write_secret("right", "alice:s3cret:x\n", 0600);
	cr_assert_eq(fetch(digest, ref, &opts, &err), 0, "%s", err.msg);
	free((char *)opts.creds_file);
	free(ref);
}

Test(registry, creds_file_readable_by_others_is_refused)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_registry_opts opts = { .insecure = 1 };
	struct sb_error err;

	rf_start_htpasswd_registry();
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	opts.creds_file = rf_write_secret("creds", "alice:s3cret:x\n", 0644);
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_AUTH);
	cr_assert(strstr(err.msg, "0644"), "%s", err.msg);
	char *log = sb_path_join(rf.regdir, "log");
	cr_assert_eq(rf_count_lines(log, "\"sandbench/"), 0, "a request was made");
	free(log);
	free((char *)opts.creds_file);
	free(ref);
}

Test(registry, credentials_json_in_root)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;

	rf_start_htpasswd_registry();
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	char *json = sb_strdupf("{\"127.0.0.1:%d\": {\"username\": \"alice\", \"password\": \"s3cret:x\"}}", rf.port);
	char *path = sb_path_join(sb_root_path(rf.root), "credentials.json");
	cr_assert_eq(sb_fs_write_atomic(path, json, strlen(json), 0644, NULL), 0);
	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_AUTH, "a 0644 credentials.json was used");
	cr_assert_eq(chmod(path, 0600), 0);
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	free(path);
	free(json);
	free(ref);
}

Test(registry, token_auth_with_credentials)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_registry_opts opts = { .insecure = 1 };
	struct sb_error err;
	char *log = sb_path_join(rf.dir, "token.log");

	rf_start_token_registry("bob:hunter2");
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_AUTH, "anonymous pull was let in");
	opts.creds_file = rf_write_secret("wrong", "bob:nope", 0600);
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_AUTH, "%s", err.msg);
	free((char *)opts.creds_file);
	int before = rf_count_lines(log, "scope=repository%3Asb%2Fbusybox%3Apull");
	opts.creds_file = rf_write_secret("right", "bob:hunter2", 0400);
	cr_assert_eq(fetch(digest, ref, &opts, &err), 0, "%s", err.msg);
	/* one token for the whole pull: /v2/, manifest and blobs */
	cr_assert_eq(rf_count_lines(log, "scope=repository%3Asb%2Fbusybox%3Apull"), before + 1);
	cr_assert(sb_blob_exists(rf.root, digest));
	free((char *)opts.creds_file);
	free(ref);
	free(log);
}

Test(registry, token_auth_anonymous)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;

	rf_start_token_registry("bob:hunter2 --anonymous");
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	free(ref);
}

Test(registry, https_with_ca_file)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_registry_opts opts = { 0 };
	struct sb_error err;

	cr_assert_eq(tu_sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s/tls.key -out %s/tls.crt -days 2 "
			   "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null",
			   rf.dir, rf.dir),
		     0);
	char *opt = sb_strdupf("tls=%s/tls.crt,%s/tls.key", rf.dir, rf.dir);
	rf_start_registry(opt);
	rf_push("busybox", "sb/busybox:latest", NULL);
	char *ref = rf_ref_at(rf.port, "sb/busybox");
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_NETWORK, "an untrusted certificate was accepted");
	cr_assert(strstr(err.msg, "certificate"), "%s", err.msg);
	opts.ca_file = sb_strdupf("%s/tls.crt", rf.dir);
	cr_assert_eq(fetch(digest, ref, &opts, &err), 0, "%s", err.msg);
	/* plain HTTP to a TLS rf.port fails rather than silently trying something else */
	opts.insecure = 1;
	cr_assert_eq(fetch(digest, ref, &opts, &err), SB_ERR_NETWORK);
	free((char *)opts.ca_file);
	free(ref);
	free(opt);
}

Test(registry, corrupt_blob_is_refused_and_not_kept)
{
	char digest[SB_DIGEST_STR_LEN];
	char *layer = rf_image_digest("BUSYBOX_LAYER");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "corrupt-blob");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_DIGEST, "%s", err.msg);
	cr_assert(strstr(err.msg, layer), "%s", err.msg);
	cr_assert_not(sb_blob_exists(rf.root, layer));
	cr_assert_eq(tu_sh("test -z \"$(ls -A %s/images/blobs/partial)\"", sb_root_path(rf.root)), 0);
	free(ref);
	free(layer);
}

Test(registry, manifest_that_is_not_json)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "bad-manifest");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_FORMAT, "%s", err.msg);
	free(ref);
}

Test(registry, manifest_digest_header_mismatch)
{
	char digest[SB_DIGEST_STR_LEN];
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "bad-digest-header");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_DIGEST, "%s", err.msg);
	cr_assert(strstr(err.msg, "Docker-Content-Digest"), "%s", err.msg);
	free(ref);
}

Test(registry, dropped_connection_resumes_with_range)
{
	char digest[SB_DIGEST_STR_LEN];
	char *layer = rf_image_digest("BUSYBOX_LAYER"), *requests = sb_path_join(rf.dir, "requests");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "drop-once,redirect");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert(sb_blob_exists(rf.root, layer));
	/* the second request for the layer asked only for the missing half */
	char *pattern = sb_strdupf("GET /storage/%s bytes=[1-9]", layer);
	cr_assert_eq(tu_sh("grep -q '%s' %s", pattern, requests), 0, "no range request");
	free(pattern);
	free(requests);
	free(ref);
	free(layer);
}

Test(registry, dropped_connection_restarts_when_range_is_ignored)
{
	char digest[SB_DIGEST_STR_LEN];
	char *layer = rf_image_digest("BUSYBOX_LAYER");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "drop-once,ignore-range");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert(sb_blob_exists(rf.root, layer));
	free(ref);
	free(layer);
}

Test(registry, server_error_on_a_blob_is_retried)
{
	char digest[SB_DIGEST_STR_LEN];
	char *layer = rf_image_digest("BUSYBOX_LAYER"), *requests = sb_path_join(rf.dir, "requests");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "busy-once");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), 0, "%s", err.msg);
	cr_assert(sb_blob_exists(rf.root, layer));
	char *pattern = sb_strdupf("GET /v2/img/blobs/%s", layer);
	cr_assert_eq(rf_count_lines(requests, pattern), 2);
	free(pattern);
	free(requests);
	free(ref);
	free(layer);
}

Test(registry, connection_dropped_every_time_fails_cleanly)
{
	char digest[SB_DIGEST_STR_LEN];
	char *layer = rf_image_digest("BUSYBOX_LAYER"), *requests = sb_path_join(rf.dir, "requests");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "drop-always");
	char *ref = rf_ref_at(p, "img");

	cr_assert_eq(fetch(digest, ref, NULL, &err), SB_ERR_NETWORK, "%s", err.msg);
	cr_assert(strstr(err.msg, layer), "%s", err.msg);
	cr_assert_not(sb_blob_exists(rf.root, layer));
	char *pattern = sb_strdupf("GET /v2/img/blobs/%s", layer);
	cr_assert_eq(rf_count_lines(requests, pattern), 4, "retries are not bounded");
	free(pattern);
	free(requests);
	free(ref);
	free(layer);
}

/* ---- the command line: sandbench image pull */

static char *rootfs_of(const char *digest)
{
	return sb_strdupf("%s/images/rootfs/%s", sb_root_path(rf.root), sb_digest_hex(digest));
}

Test(registry, cli_pull_unpacks_the_image)
{
	char *want = rf_image_digest("LAYERED_MANIFEST");

	rf_start_registry(NULL);
	rf_push("layered", "sb/layered:latest", NULL);
	char *ref = rf_ref_at(rf.port, "sb/layered");
	struct tu_run r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--json", ref, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *json = sb_strdupf("\"digest\": \"%s\"", want);
	cr_assert(strstr(r.out, json), "%s", r.out);
	free(json);
	char *rootfs = rootfs_of(want);
	cr_assert_eq(tu_sh("test -x %s/bin/busybox && grep -qx changed %s/etc/motd", rootfs, rootfs), 0);
	free(rootfs);
	tu_run_free(&r);
	/* again: nothing downloaded but the manifest */
	char *log = sb_path_join(rf.regdir, "log");
	int blobs = rf_count_lines(log, "\"GET /v2/sb/layered/blobs/");
	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--quiet", ref, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, want), "%s", r.out);
	cr_assert_eq(rf_count_lines(log, "\"GET /v2/sb/layered/blobs/"), blobs);
	tu_run_free(&r);
	free(log);
	free(ref);
	free(want);
}

Test(registry, cli_multiarch_pull_installs_amd64)
{
	char *amd64 = rf_image_digest("BUSYBOX_MANIFEST");

	rf_start_registry(NULL);
	rf_push("multiarch", "sb/multi:latest", "--all");
	char *ref = rf_ref_at(rf.port, "sb/multi");
	struct tu_run r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "-q", ref, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, amd64), "%s", r.out);
	char *rootfs = rootfs_of(amd64);
	cr_assert_eq(tu_sh("test -x %s/bin/busybox", rootfs), 0);
	free(rootfs);
	tu_run_free(&r);
	free(ref);
	free(amd64);
}

Test(registry, concurrent_fetches_download_each_blob_once)
{
	char digest[SB_DIGEST_STR_LEN], *layer = rf_image_digest("BUSYBOX_LAYER");
	char *requests = sb_path_join(rf.dir, "requests");
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "slow"), status;
	char *ref = rf_ref_at(p, "img");

	/* both start before the (slow) layer arrives; each has its own rf.root handle */
	pid_t child = fork();
	cr_assert_neq(child, -1);
	if (child == 0) {
		struct sb_root *mine;
		struct sb_registry_opts opts = { .insecure = 1 };
		_exit(sb_root_open(&mine, sb_root_path(rf.root), NULL) == 0 &&
				      sb_registry_fetch(digest, NULL, mine, ref, &opts, NULL) == 0
			      ? 0
			      : 1);
	}
	int rc = fetch(digest, ref, NULL, &err);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert_eq(rc, 0, "%s", err.msg);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other fetch failed");
	char *pattern = sb_strdupf("GET /v2/img/blobs/%s", layer);
	cr_assert_eq(rf_count_lines(requests, pattern), 1, "the layer was downloaded twice");
	cr_assert(sb_blob_exists(rf.root, layer));
	cr_assert_eq(tu_sh("test -z \"$(ls -A %s/images/blobs/partial)\"", sb_root_path(rf.root)), 0);
	free(pattern);
	free(ref);
	free(requests);
	free(layer);
}

Test(registry, cli_exit_codes)
{
	rf_start_htpasswd_registry();
	char *ref = rf_ref_at(rf.port, "sb/busybox"), *unknown = sb_strdupf("%s:nope", ref);
	char *wrong = rf_write_secret("wrong", "alice:wrong\n", 0600);
	char *open_creds = rf_write_secret("open", "alice:s3cret:x\n", 0644);
	char *right = rf_write_secret("right", "alice:s3cret:x\n", 0600);
	struct tu_run r;

	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--creds", wrong, ref, NULL);
	cr_assert_eq(r.status, 6, "wrong credentials: %d %s", r.status, r.err);
	tu_run_free(&r);
	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--creds", open_creds, ref, NULL);
	cr_assert_eq(r.status, 6, "0644 credentials: %d %s", r.status, r.err);
	tu_run_free(&r);
	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--creds", right, unknown, NULL);
	cr_assert_eq(r.status, 3, "unknown tag: %d %s", r.status, r.err);
	cr_assert(strstr(r.err, unknown), "%s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--creds", right, ref, NULL);
	cr_assert_eq(r.status, 8, "HTTPS to an HTTP registry: %d %s", r.status, r.err);
	tu_run_free(&r);
	r = tu_sandbench(sb_root_path(rf.root), NULL, "image", "pull", "--insecure", "--creds", right, ref, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "pulled 127.0.0.1:"), "%s", r.out);
	tu_run_free(&r);
	free(right);
	free(open_creds);
	free(wrong);
	free(unknown);
	free(ref);
}

struct seen {
	int resolve, download, verify, done_bytes_match;
	unsigned long long layer_total;
};

static void on_progress(void *user, const struct sb_progress_event *ev)
{
	struct seen *s = user;

	s->resolve += ev->phase == SB_PROGRESS_RESOLVE;
	s->verify += ev->phase == SB_PROGRESS_VERIFY;
	if (ev->phase == SB_PROGRESS_DOWNLOAD) {
		s->download++;
		if (ev->layer == 1 && ev->layers == 1 && ev->done == ev->total)
			s->done_bytes_match++, s->layer_total = ev->total;
	}
}

Test(registry, progress_reports_resolve_download_and_verify)
{
	char digest[SB_DIGEST_STR_LEN], *layer = rf_image_digest("BUSYBOX_LAYER");
	struct seen seen = { 0 };
	struct sb_progress progress = { on_progress, &seen };
	struct sb_registry_opts opts = { .insecure = 1, .progress = &progress };
	struct sb_error err;
	int p = rf_start_bad_registry("busybox", "none");
	char *ref = rf_ref_at(p, "img"), *path = sb_blob_path(rf.root, layer);
	struct stat st;

	cr_assert_eq(fetch(digest, ref, &opts, &err), 0, "%s", err.msg);
	cr_assert_eq(seen.resolve, 1);
	cr_assert_geq(seen.download, 2);
	cr_assert_eq(seen.verify, 2, "config and layer verified: %d", seen.verify);
	cr_assert_eq(seen.done_bytes_match, 1);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(seen.layer_total, (unsigned long long)st.st_size);
	free(path);
	free(ref);
	free(layer);
}
