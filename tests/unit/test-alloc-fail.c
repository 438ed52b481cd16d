/* Allocation failures (issue 14, in the manner of jansson's chaos tests):
 * each library call below runs with its 1st, 2nd, ... allocation failing
 * until it makes no more (tests/allocfail.h). Every run must succeed whole
 * or return a negative code with its message; it must not crash, and under
 * the sanitizer build it must not leak (LSan at exit). A result that lacks a
 * part it was asked for (a record with a mount fewer, a spec without its
 * memory limit) fails the test. The totals go to stderr. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "allocfail.h"
#include "backend/runsc/internal.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/jsonfile.h"
#include "base/redact.h"
#include "base/root.h"
#include "image/dockerfile.h"
#include "image/import.h"
#include "image/store.h"
#include "keys.h"
#include "query.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "mcp/internal.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "sandbox/settings.h"
#include "sandbox/timeline.h"
#include "session/internal.h"
#include "testutil.h"

static char *dir;
static struct sb_root *root;
static long calls, runs;

static void setup(void)
{
	/* on tmpfs: thousands of runs, each with its fsyncs */
	dir = strdup("/dev/shm/sbtest-allocfail-XXXXXX");
	cr_assert(dir && mkdtemp(dir));
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	/* only ROOT/config counts: the installed file is not the input */
	setenv("SANDBENCH_DEFAULTS", "/nonexistent/sandbench.conf", 1);
}

static void teardown(void)
{
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
	fprintf(stderr, "alloc-fail: %ld calls, %ld runs with a failed allocation in this suite\n", calls, runs);
}

TestSuite(alloc_fail, .init = setup, .fini = teardown, .timeout = 120);

/* Runs call over each of its allocations; it must make at least min. */
static void every(const char *what, af_call call, void *arg, long min)
{
	long n = af_every_allocation(what, call, arg);
	fprintf(stderr, "alloc-fail: %s: %ld allocations, each failed in turn\n", what, n);

	cr_assert_geq(n, min, "%s made %ld allocations: the counter does not see them", what, n);
	calls++;
	runs += n;
}

static void root_write(const char *rel, const char *text)
{
	char *path = sb_root_file(root, rel);
	cr_assert_eq(sb_fs_write_atomic(path, text, strlen(text), 0600, NULL), 0);
	free(path);
}

static void root_mkdir(const char *rel)
{
	char *path = sb_root_file(root, rel);
	cr_assert_eq(sb_fs_mkdirs(path, 0700, NULL), 0);
	free(path);
}

static int nomem(struct sb_error *err, const char *what)
{
	return sb_error_set(err, SB_ERR_NOMEM, "%s: out of memory", what);
}

/* ---- base ---- */

static int call_buf(void *arg, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	(void)arg;
	for (int i = 0; i < 64; i++)
		if (sb_buf_add(&b, "0123456789abcdef", 16) < 0) {
			sb_buf_clear(&b);
			return nomem(err, "buf");
		}
	cr_assert_eq(b.len, 64 * 16);
	sb_buf_drop(&b, 16);
	size_t len;
	char *s = sb_buf_steal(&b, &len);
	cr_assert(len == 63 * 16 && !strncmp(s, "0123", 4));
	free(s);
	return 0;
}

static int call_strings(void *arg, struct sb_error *err)
{
	(void)arg;
	char *p = sb_path_join("/a/b/", "c"), *f = sb_strdupf("%s-%d", "x", 7);
	int ok = p && f;
	if (ok)
		cr_assert(!strcmp(p, "/a/b/c") && !strcmp(f, "x-7"));
	free(p);
	free(f);
	return ok ? 0 : nomem(err, "strings");
}

static int call_json_file(void *arg, struct sb_error *err)
{
	const char *path = arg;
	json_t *doc = json_pack("{s:s, s:[i,i], s:{s:b}}", "a", "b", "list", 1, 2, "o", "k", 1);
	if (!doc)
		return nomem(err, "json_pack");
	int rc = sb_json_save(path, doc, err);
	json_t *back = NULL;
	if (rc == 0)
		rc = sb_json_load(&back, path, 1 << 20, err);
	if (rc == 0)
		cr_assert(json_equal(doc, back), "a JSON file lost a part (allocation %ld)", af_current());
	json_decref(back);
	json_decref(doc);
	return rc;
}

Test(alloc_fail, base)
{
	char *path = sb_root_file(root, "doc.json");
	every("sb_buf", call_buf, NULL, 2);
	every("sb_path_join/sb_strdupf", call_strings, NULL, 2);
	every("sb_json_save/load", call_json_file, path, 4);
	free(path);
}

/* ---- images ---- */

static int call_ref(void *arg, struct sb_error *err)
{
	struct sb_image_ref ref;
	int rc = sb_image_ref_parse(&ref, arg, err);
	if (rc < 0)
		return rc;
	char *s = sb_image_ref_format(&ref);
	sb_image_ref_clear(&ref);
	if (!s)
		return nomem(err, "ref format");
	cr_assert_str_eq(s, "localhost:5000/team/tool:1.2@sha256:"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	free(s);
	char *local;
	if ((rc = sb_image_ref_local(&local, "tools", err)) < 0)
		return rc;
	cr_assert_str_eq(local, "localhost/tools:latest");
	free(local);
	return 0;
}

static const char manifest[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
	"\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"size\":10,"
	"\"digest\":\"sha256:1111111111111111111111111111111111111111111111111111111111111111\"},"
	"\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"size\":20,"
	"\"digest\":\"sha256:2222222222222222222222222222222222222222222222222222222222222222\"},"
	"{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"size\":30,"
	"\"digest\":\"sha256:3333333333333333333333333333333333333333333333333333333333333333\"}]}";

static const char image_index[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"manifests\":["
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"size\":1,"
	"\"digest\":\"sha256:4444444444444444444444444444444444444444444444444444444444444444\","
	"\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\",\"variant\":\"v8\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"size\":1,"
	"\"digest\":\"sha256:5555555555555555555555555555555555555555555555555555555555555555\","
	"\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}";

static const char image_config[] =
	"{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"2024-01-01T00:00:00Z\","
	"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":["
	"\"sha256:6666666666666666666666666666666666666666666666666666666666666666\","
	"\"sha256:7777777777777777777777777777777777777777777777777777777777777777\"]}}";

static int call_manifest(void *arg, struct sb_error *err)
{
	struct sb_image_manifest m, ix;
	struct sb_image_config c;
	const struct sb_descriptor *d;
	(void)arg;
	int rc = sb_image_manifest_parse(&m, manifest, sizeof(manifest) - 1, "m", err);
	if (rc < 0)
		return rc;
	cr_assert(!m.is_index && m.n_layers == 2 && m.layers[1].size == 30 && m.config.media_type);
	sb_image_manifest_clear(&m);
	if ((rc = sb_image_manifest_parse(&ix, image_index, sizeof(image_index) - 1, "ix", err)) < 0)
		return rc;
	cr_assert(ix.is_index && ix.n_manifests == 2 && ix.manifests[0].variant);
	rc = sb_image_index_select(&d, &ix, "linux", "arm64", err);
	cr_assert(rc < 0 || d == &ix.manifests[0]);
	sb_image_manifest_clear(&ix);
	if (rc < 0)
		return rc;
	if ((rc = sb_image_config_parse(&c, image_config, sizeof(image_config) - 1, "c", err)) < 0)
		return rc;
	cr_assert(c.n_diff_ids == 2 && c.created && !strcmp(c.arch, "amd64"));
	sb_image_config_clear(&c);
	return 0;
}

static const char dockerfile[] = "ARG V=1\nFROM busybox:latest\n# sandbench: network=on\nRUN echo a \\\n  && echo b\n"
				 "COPY . /src\nENV A=1 B=2\nWORKDIR /src\nCMD [\"sh\", \"-c\", \"echo hi\"]\n";

static int call_dockerfile(void *arg, struct sb_error *err)
{
	struct sb_dockerfile df;
	char **argv;
	(void)arg;
	int rc = sb_dockerfile_parse(&df, dockerfile, sizeof(dockerfile) - 1, err);
	if (rc < 0)
		return rc;
	cr_assert_eq(df.n_steps, 7, "a Dockerfile lost a step (allocation %ld)", af_current());
	cr_assert(strstr(df.steps[2].args, "echo a") && strstr(df.steps[2].args, "&& echo b"));
	rc = sb_df_exec_form(&argv, df.steps[6].args, err);
	sb_dockerfile_clear(&df);
	if (rc < 0)
		return rc;
	cr_assert(rc == 0 && argv[0] && argv[1] && argv[2] && !strcmp(argv[2], "echo hi") && !argv[3]);
	sb_df_argv_free(argv);
	return 0;
}

static const char *arg_tar;

/* The image store on a temp root: an import of a small rootfs tar, then
 * resolve, list, remove and prune. A failed import leaves no reference to a
 * half image; each run starts from an empty store. */
static int call_import(void *arg, struct sb_error *err)
{
	const char *tar = arg;
	struct sb_image_import_opts opts = { .name = "tiny:1" };
	struct sb_image_import_result res;
	struct sb_image_info info = { 0 };
	int rc = sb_image_import(&res, root, tar, &opts, err);

	af_hold(1);
	int found = sb_image_resolve(&info, root, "tiny:1", NULL);
	cr_assert(rc == 0 ? found == 0 : found == SB_ERR_NOTFOUND, "import returned %d (%s), resolve %d (allocation %ld)",
		  rc, rc ? err->msg : "", found, af_current());
	if (rc == 0) {
		char *path = sb_path_join(info.rootfs, "etc/hello"), *text = NULL;
		cr_assert_eq(sb_fs_read_file(&text, NULL, path, 4096, NULL), 0, "the image lost a file");
		cr_assert_str_eq(text, "hello\n");
		free(text);
		free(path);
		struct sb_image_removal rm = { 0 };
		cr_assert_eq(sb_image_remove(&rm, root, "tiny:1", 0, NULL), 0);
		sb_image_removal_clear(&rm);
	}
	sb_image_info_clear(&info);
	struct sb_image_prune_report pr = { 0 };
	cr_assert_eq(sb_image_prune(&pr, root, 0, NULL), 0);
	return rc;
}

/* resolve, list, inspect and remove of an installed image */
static int call_store(void *arg, struct sb_error *err)
{
	struct sb_image_info info = { 0 }, *list = NULL;
	struct sb_image_removal rm = { 0 };
	size_t n = 0;
	(void)arg;
	int rc = sb_image_inspect(&info, root, "tiny:1", err);
	if (rc == 0)
		cr_assert(info.rootfs && info.platform && info.installed && info.source && info.exec_config,
			  "an inspect lost a part (allocation %ld): %d%d%d%d%d", af_current(), !info.rootfs, !info.platform,
			  !info.installed, !info.source, !info.exec_config);
	sb_image_info_clear(&info);
	if (rc < 0 || (rc = sb_image_list(&list, &n, root, err)) < 0)
		return rc;
	cr_assert(n == 2, "a list of %zu images, not 2 (allocation %ld)", n, af_current());
	sb_image_list_free(list, n);
	rc = sb_image_remove(&rm, root, "tiny:2", 0, err);
	sb_image_removal_clear(&rm);
	af_hold(1);
	/* the removal happened whole or not at all */
	int gone = sb_image_resolve(&info, root, "tiny:2", NULL) == SB_ERR_NOTFOUND;
	sb_image_info_clear(&info);
	cr_assert(gone == (rc == 0), "remove returned %d, the reference is %s", rc, gone ? "gone" : "there");
	if (gone) {
		struct sb_image_import_opts opts = { .name = "tiny:2" };
		struct sb_image_import_result res;
		cr_assert_eq(sb_image_import(&res, root, arg_tar, &opts, NULL), 0);
	}
	return rc;
}

Test(alloc_fail, image_store)
{
	char *src = sb_path_join(dir, "src"), *tar = sb_path_join(dir, "tiny.tar");
	struct sb_image_import_opts opts = { .name = "tiny:1" };
	struct sb_image_import_result res;
	struct sb_error err;

	cr_assert_eq(tu_sh("mkdir -p %s/etc %s/bin && echo hello > %s/etc/hello && echo x > %s/bin/x && "
			   "tar -C %s -cf %s etc bin", src, src, src, src, src, tar), 0);
	every("image import", call_import, tar, 20);
	arg_tar = tar;
	cr_assert_eq(sb_image_import(&res, root, tar, &opts, &err), 0, "%s", err.msg);
	opts.name = "tiny:2";
	cr_assert_eq(sb_image_import(&res, root, tar, &opts, &err), 0, "%s", err.msg);
	every("image inspect, list, remove", call_store, NULL, 10);
	free(src);
	free(tar);
}

Test(alloc_fail, images)
{
	every("image reference", call_ref, "localhost:5000/team/tool:1.2@sha256:"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 4);
	every("manifest, index and config", call_manifest, NULL, 10);
	every("Dockerfile", call_dockerfile, NULL, 7);
}

/* ---- records, settings, timeline ---- */

static struct sb_sandbox_mount rec_mounts[] = { { "/srv/a", "/a", SB_MOUNT_RO, 1, 2, 0 },
						 { "/srv/b", "/b", SB_MOUNT_RW, 3, 4, 1 } };
static struct sb_sandbox_label rec_labels[] = { { "team", "x" }, { "mcp-instance", "i1" } };
static struct sb_egress_rule rec_rules[] = { { 0x0a000000, 8, 443 }, { 0xc0000201, 32, 0 } };
static struct sb_publish rec_publish[] = { { "127.0.0.1", 8080, 80 } };

static void full_record(struct sb_record *rec)
{
	*rec = (struct sb_record){
		.name = "box", .id = "sb-0123456789abcdef", .created = 1700000000, .image_ref = "docker.io/library/busybox:latest",
		.kind = SB_KIND_PERMANENT, .expiry_action = SB_EXPIRY_STOP, .network = 1, .exchange = 1,
		.mounts = rec_mounts, .n_mounts = 2, .memory = 512ULL << 20, .cpus = 1.5, .owner = "mcp",
		.labels = rec_labels, .n_labels = 2, .state = SB_STATE_STOPPED, .reason = "stopped",
		.backend = "runsc", .runtime_build = "", .publish = rec_publish, .n_publish = 1,
		.service = { .command = "python3 -m http.server 80", .health = "true", .interval = 5,
			     .restart = SB_RESTART_ALWAYS },
	};
	rec->egress = (struct sb_egress){ .mode = SB_EGRESS_ALLOW, .rules = rec_rules, .n_rules = 2 };
	strcpy(rec->image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
}

static int call_record(void *arg, struct sb_error *err)
{
	const json_t *want = arg;
	struct sb_record rec, back;
	full_record(&rec);
	int rc = sb_record_save(root, &rec, err);
	if (rc < 0)
		return rc;
	if ((rc = sb_record_load(&back, root, "box", err)) < 0)
		return rc;
	json_t *got = sb_record_to_json(&back);
	sb_record_clear(&back);
	if (!got)
		return nomem(err, "record to JSON");
	/* the whole record, or an error: never one with a mount, limit or rule fewer */
	cr_assert(json_equal(got, want), "a record lost a part (allocation %ld)", af_current());
	json_decref(got);
	return 0;
}

static const char settings[] = "kind = permanent\nidle_timeout = 10m\nexpiry_action = pause,stop=2h\nnetwork = on\n"
			       "network_bridge = sbx0\nnetwork_subnet = 10.9.0.0/24\nmemory = 2g\ncpus = 2\n"
			       "allow_profile = web 10.0.0.0/8:443 192.0.2.1\nallow_profile = dns 1.1.1.1:53\n"
			       "timeline_size = 2m\ntimeline_output = 4k\n";

static int call_settings(void *arg, struct sb_error *err)
{
	const struct sb_settings *want = arg;
	struct sb_settings s;
	int rc = sb_settings_load(&s, root, err);
	if (rc < 0)
		return rc;
	cr_assert(s.kind == want->kind && s.idle_timeout == want->idle_timeout && s.network == want->network &&
		  s.expiry_action == want->expiry_action && s.expiry_stop_after == want->expiry_stop_after &&
		  s.memory == want->memory && s.cpus == want->cpus && s.timeline_size == want->timeline_size &&
		  s.timeline_output == want->timeline_output && !strcmp(s.network_bridge, want->network_bridge) &&
		  !strcmp(s.network_subnet, want->network_subnet) && !strcmp(s.allow_profiles, want->allow_profiles),
		  "settings lost a part (allocation %ld)", af_current());
	return 0;
}

static int call_egress(void *arg, struct sb_error *err)
{
	const char *const allow[] = { "@web", "@dns", "203.0.113.0/24:8443" };
	struct sb_egress e, copy;
	(void)arg;
	int rc = sb_sandbox_egress_parse(&e, root, allow, 3, err);
	if (rc < 0)
		return rc;
	cr_assert(e.mode == SB_EGRESS_ALLOW && e.n_rules == 4, "an allow-list lost a rule: %zu", e.n_rules);
	rc = sb_egress_copy(&copy, &e);
	char *desc = sb_egress_describe(&e);
	sb_egress_clear(&e);
	if (rc == 0) {
		cr_assert(copy.n_rules == 4);
		sb_egress_clear(&copy);
	}
	if (rc < 0 || !desc) {
		free(desc);
		return nomem(err, "egress");
	}
	cr_assert(strstr(desc, "203.0.113.0/24:8443") && strstr(desc, "1.1.1.1:53"));
	free(desc);
	return 0;
}

static int call_timeline(void *arg, struct sb_error *err)
{
	const char *const secrets[] = { "TOKEN", NULL };
	struct sb_secret sec = { "TOKEN", "hunter22" };
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, SB_TIMELINE_AGENT);
	struct sb_redact *r;
	struct sb_timeline *t;
	size_t *before = arg;

	e.text = "echo hunter22";
	e.cwd = "/workspace";
	e.out = "hunter22\n";
	e.out_len = 9;
	e.err = "";
	e.exit_code = 0;
	e.secrets = secrets;
	int rc = sb_redact_new(&r, &sec, 1, err);
	if (rc < 0)
		return rc;
	rc = sb_timeline_append(root, "box", &e, r, err);
	sb_redact_free(r);
	af_hold(1);
	cr_assert_eq(sb_timeline_read(&t, root, "box", NULL, NULL), 0);
	/* an append either wrote the whole entry or nothing */
	cr_assert_eq(t->count, *before + (rc == 0), "timeline: %zu entries after an append to %zu (rc %d)", t->count,
		     *before, rc);
	if (rc < 0) {
		sb_timeline_free(t);
		return rc;
	}
	const struct sb_timeline_entry *last = &t->entries[t->count - 1];
	cr_assert(last->text && !strcmp(last->text, "echo [secret TOKEN]") && last->n_secrets == 1 &&
		  last->out_len == 15, "a timeline entry lost a part (allocation %ld)", af_current());
	*before = t->count;
	sb_timeline_free(t);
	return 0;
}

static int call_timeline_read(void *arg, struct sb_error *err)
{
	const size_t *entries = arg;
	struct sb_timeline *t;
	int rc = sb_timeline_read(&t, root, "box", NULL, err);
	if (rc < 0)
		return rc;
	/* every entry, each whole: none dropped for want of memory */
	cr_assert_eq(t->count, *entries, "the timeline lost an entry (allocation %ld)", af_current());
	for (size_t i = 0; i < t->count; i++)
		cr_assert(t->entries[i].text && t->entries[i].cwd && t->entries[i].out_len == 15,
			  "a timeline entry lost a part (allocation %ld)", af_current());
	sb_timeline_free(t);
	return 0;
}

Test(alloc_fail, records_settings_timeline)
{
	struct sb_record rec;
	struct sb_settings want;
	struct sb_error err;
	size_t entries = 0;

	root_mkdir("sandboxes/box");
	root_write("sandboxes/box/lock", "");
	full_record(&rec);
	json_t *doc = sb_record_to_json(&rec);
	cr_assert_not_null(doc);
	every("record save and load", call_record, doc, 20);
	json_decref(doc);

	root_write("config", settings);
	cr_assert_eq(sb_settings_load(&want, root, &err), 0, "%s", err.msg);
	cr_assert(want.kind == SB_KIND_PERMANENT && want.allow_profiles[0]);
	every("settings", call_settings, &want, 1);
	every("egress policy", call_egress, NULL, 3);
	every("timeline append", call_timeline, &entries, 10);
	every("timeline read", call_timeline_read, &entries, 3);
}

/* ---- redaction, mounts, session frames and events ---- */

static int call_redact(void *arg, struct sb_error *err)
{
	struct sb_secret secs[] = { { "A", "alpha-secret" }, { "B", "beta-secret" } };
	struct sb_redact *r;
	struct sb_buf out = { 0 };
	(void)arg;
	int rc = sb_redact_new(&r, secs, 2, err);
	if (rc < 0)
		return rc;
	char *text = sb_redact_text(r, "x alpha-secret y beta-secret", 28, NULL);
	if (text)
		cr_assert_str_eq(text, "x [secret A] y [secret B]");
	if (!text || sb_redact_feed(r, &out, "1 alpha-sec", 11) < 0 || sb_redact_feed(r, &out, "ret 2", 5) < 0 ||
	    sb_redact_flush(r, &out) < 0) {
		free(text);
		sb_buf_clear(&out);
		sb_redact_free(r);
		return nomem(err, "redact");
	}
	cr_assert(out.len == 14 && !memcmp(out.data, "1 [secret A] 2", 14), "the redacted stream: '%.*s'", (int)out.len,
		  out.data);
	free(text);
	sb_buf_clear(&out);
	sb_redact_free(r);
	return 0;
}

static int call_mount_parse(void *arg, struct sb_error *err)
{
	char text[] = "/srv/with:colon:/data:rw", mtext[] = "/srv/x:rw";
	struct sb_sandbox_mount m;
	struct sb_mcp_mount mm;
	(void)arg;
	int rc = sb_sandbox_mount_parse(&m, text, err);
	if (rc < 0)
		return rc;
	cr_assert(!strcmp(m.host, "/srv/with:colon") && !strcmp(m.path, "/data") && m.mode == SB_MOUNT_RW);
	if ((rc = sb_mcp_mount_parse(&mm, mtext, err)) < 0)
		return rc;
	return 0;
}

static int call_frames(void *arg, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	struct sess_frame f;
	size_t off = 0;
	int rc = 0;
	(void)arg;
	for (int i = 0; i < 8 && rc == 0; i++)
		rc = sess_frame_put(&b, MSG_OUTPUT, "0123456789abcdef", 16, "payload", 7);
	if (rc < 0) {
		sb_buf_clear(&b);
		return nomem(err, "frames");
	}
	int n = 0;
	while ((rc = sess_frame_take(&f, &b, &off, err)) == 1)
		cr_assert(f.type == MSG_OUTPUT && f.len == 23 && ++n <= 8);
	sb_buf_clear(&b);
	cr_assert(rc == 0 && n == 8, "frames: %d taken, rc %d", n, rc);
	return 0;
}

static int call_events(void *arg, struct sb_error *err)
{
	struct sb_session_event e = { .type = SB_EVENT_PROMPT, .offset = 42, .time_ms = 1700000000000,
				      .exit_code = 3, .text = "ls -l" }, back, copy;
	(void)arg;
	json_t *j = sess_event_json(&e);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return nomem(err, "event to JSON");
	int rc = sess_event_parse(&back, text, strlen(text));
	free(text);
	if (rc < 0)
		return nomem(err, "event parse");
	cr_assert(back.offset == 42 && back.exit_code == 3 && !strcmp(back.text, "ls -l"));
	rc = sess_event_copy(&copy, &back);
	sb_session_event_clear(&back);
	if (rc < 0)
		return nomem(err, "event copy");
	cr_assert_str_eq(copy.text, "ls -l");
	sb_session_event_clear(&copy);
	return 0;
}

Test(alloc_fail, redact_mounts_sessions)
{
	every("redaction", call_redact, NULL, 3);
	every("mount options", call_mount_parse, NULL, 0);
	every("session frames", call_frames, NULL, 1);
	every("session events", call_events, NULL, 4);
}

/* ---- the runsc spec: the promise, never fewer limits or mounts ---- */

/* A full record (full_record) and every path of a spec: what each spec call builds from. */
static struct sb_spec_params spec_params(struct sb_record *rec)
{
	static const char *const staged[] = { "/box/mounts/0", "/box/mounts/1" };

	full_record(rec);
	return (struct sb_spec_params){ .rec = rec, .rootfs = "/rootfs", .workspace = "/ws", .exchange = "/ex",
					.netns_path = "/run/netns/sb-x", .hosts = "/h", .resolv = "/r",
					.mount_sources = staged };
}

static int call_spec(void *arg, struct sb_error *err)
{
	const json_t *want = arg;
	struct sb_record rec;
	json_t *got;

	struct sb_spec_params p = spec_params(&rec);
	int rc = sb_spec_build(&got, &p, err);
	if (rc < 0)
		return rc;
	cr_assert(json_equal(got, want), "a spec lost a part (allocation %ld)", af_current());
	json_decref(got);
	return 0;
}

/* an exec's process: the RLIMIT_AS from the memory limit is never left out */
static int call_exec_process(void *arg, struct sb_error *err)
{
	const json_t *want = arg;
	struct sb_record rec;
	char *args[] = { "sh", "-c", "true", NULL }, *env[] = { "A=1", NULL };

	full_record(&rec);
	json_t *got = sb_spec_limit_process(sb_spec_exec_process(args, env, NULL, "/w", NULL), &rec);
	if (!got)
		return nomem(err, "exec process");
	cr_assert(json_equal(got, want), "an exec's process lost a part (allocation %ld)", af_current());
	json_decref(got);
	return 0;
}

static char *bundle_dir, *bundle_config;

static int call_spec_write(void *arg, struct sb_error *err)
{
	const json_t *want = arg;
	struct sb_record rec;
	json_t *got;

	struct sb_spec_params p = spec_params(&rec);
	int rc = sb_spec_write(bundle_dir, &p, err);
	/* the file is the whole spec or the one before it: never a part */
	af_hold(1);
	struct sb_error lerr;
	if (sb_json_load(&got, bundle_config, 1 << 20, &lerr) < 0) {
		char *t = NULL;
		sb_fs_read_file(&t, NULL, bundle_config, 1 << 20, NULL);
		cr_assert_fail("allocation %ld: %s\n%s", af_current(), lerr.msg, t);
	}
	cr_assert(json_equal(got, want), "config.json lost a part (allocation %ld)", af_current());
	json_decref(got);
	return rc;
}

Test(alloc_fail, runsc_spec)
{
	struct sb_record rec;
	struct sb_error err;
	json_t *want;

	struct sb_spec_params p = spec_params(&rec);
	cr_assert_eq(sb_spec_build(&want, &p, &err), 0, "%s", err.msg);
	json_t *res = json_object_get(json_object_get(want, "linux"), "resources");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "memory"), "limit")), 512LL << 20);
	cr_assert_eq(json_array_size(json_object_get(want, "mounts")), 6 + 2 + 2 + 2, "base, ws, ex, hosts, host");
	every("runsc spec", call_spec, want, 100);
	char *args[] = { "sh", "-c", "true", NULL }, *env[] = { "A=1", NULL };
	json_t *proc = sb_spec_limit_process(sb_spec_exec_process(args, env, NULL, "/w", NULL), &rec);
	char *text = json_dumps(proc, JSON_COMPACT);
	cr_assert(text && strstr(text, "\"RLIMIT_AS\""), "no RLIMIT_AS: %s", text);
	free(text);
	every("exec process with its limit", call_exec_process, proc, 10);
	json_decref(proc);
	root_mkdir("bundle");
	bundle_dir = sb_root_file(root, "bundle");
	bundle_config = sb_path_join(bundle_dir, "config.json");
	cr_assert_eq(sb_spec_write(bundle_dir, &p, &err), 0, "%s", err.msg);
	every("runsc spec written", call_spec_write, want, 100);
	free(bundle_dir);
	free(bundle_config);
	json_decref(want);
}

/* ---- MCP: the JSON-RPC dispatcher in process ---- */

static json_t *sent;
static int dropped;

/* The transports take NULL as "no memory left for the answer": stdio and
 * HTTP then write nothing (counted here, not treated as a response). */
static void emit(struct mcp_session *s, void *origin, json_t *msg)
{
	(void)s, (void)origin;
	if (!msg)
		dropped++;
	else
		cr_assert_eq(json_array_append_new(sent, msg), 0);
}

struct mcp_case {
	struct sb_mcp_server *srv;
	const char *request;
	const char *want;     /* the member the response carries: "result" or "error" */
};

static int call_mcp(void *arg, struct sb_error *err)
{
	const struct mcp_case *c = arg;
	struct mcp_session s = { .srv = c->srv, .emit = emit, .notify = 1 };
	af_hold(1);
	json_t *all = sent = json_array();
	af_hold(0);
	dropped = 0;
	int rc = mcp_handle_text(&s, NULL, c->request, strlen(c->request));
	af_hold(1);
	mcp_resource_unsubscribe(&s, NULL);
	/* one answer: the result, an error reply for the same id, or none for
	 * want of memory */
	cr_assert(rc == 1 && json_array_size(all) + (size_t)dropped == 1, "mcp: %d responses for %s", rc, c->request);
	if (dropped) {
		json_decref(all);
		return sb_error_set(err, SB_ERR_NOMEM, "mcp: no memory for the answer");
	}
	const json_t *m = json_array_get(all, 0);
	cr_assert(json_integer_value(json_object_get(m, "id")) == 7, "mcp: a response without the id");
	int ok = json_object_get(m, c->want) != NULL;
	if (!ok) {
		cr_assert_not_null(json_object_get(m, "error"));
		sb_error_set(err, SB_ERR_NOMEM, "mcp: an error response");
	} else if (!strcmp(c->want, "result") && strstr(c->request, "tools/list")) {
		const json_t *tools = json_object_get(json_object_get(m, "result"), "tools");
		cr_assert(json_array_size(tools) == json_object_size(c->srv->schemas), "tools/list lost a tool (allocation %ld)", af_current());
	}
	json_decref(all);
	return ok ? 0 : err->code;
}

Test(alloc_fail, mcp)
{
	static const struct sb_mcp_opts opts = { .owner = "alloc" };
	struct mcp_case c = { 0 };
	struct sb_error err;

	cr_assert_eq(sb_mcp_server_new(&c.srv, root, &opts, &err), 0, "%s", err.msg);
	c.request = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}";
	c.want = "result";
	every("mcp tools/list", call_mcp, &c, 20);
	c.request = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"no/such\"}";
	c.want = "error";
	every("mcp unknown method", call_mcp, &c, 3);
	c.request = "{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":{}}";
	every("mcp invalid request", call_mcp, &c, 3);
	sb_mcp_server_free(c.srv);
}

/* ---- the workbench's parsers: keys, custom commands, the filter query ---- */

static const char keys_conf[] = "quit = q F10\nhelp = ? F1\n"
				"command = C-e \"sandbench exec $NAME -- ls $WORKSPACE\"\n";

static int call_keys(void *arg, struct sb_error *err)
{
	const struct ui_keymap *want = arg;
	static struct ui_keymap map_s;    /* big: not on the stack */
	struct ui_keymap *map = &map_s;
	char warn[256] = "";
	ui_keymap_defaults(map);
	int n = ui_keymap_parse(map, keys_conf, warn, sizeof(warn));
	/* a keymap is the whole map or an out-of-memory warning for its line */
	int whole = n == 0 && !memcmp(map->keys, want->keys, sizeof(map->keys)) && map->n_custom == want->n_custom;
	if (whole)
		return 0;
	cr_assert(n > 0 && warn[0], "a keymap lost a key without a warning (allocation %ld)", af_current());
	return sb_error_set(err, SB_ERR_NOMEM, "keys: %s", warn);
}

static int call_custom(void *arg, struct sb_error *err)
{
	struct ui_custom_vars v = { .name = "box", .workspace = "/srv/my files", .id = "sb-1", .owner = "" };
	char **argv, why[256] = "";
	(void)arg;
	if (ui_custom_expand(&argv, "sandbench exec $NAME -- ls ${WORKSPACE}", &v, why, sizeof(why)) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, "custom command: %s", why);
	size_t n = 0;
	while (argv[n])
		n++;
	cr_assert(n == 6 && !strcmp(argv[2], "box") && !strcmp(argv[5], "/srv/my files"), "%zu words: %s|%s|%s|%s|%s|%s", n,
		  argv[0], argv[1], argv[2], argv[3], argv[4], argv[5]);
	ui_custom_argv_free(argv);
	return 0;
}

static size_t row_values(const void *p, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	(void)field;
	snprintf(vals[0], UI_QUERY_VALUE_MAX, "%s", (const char *)p);
	return max ? 1 : 0;
}

static int call_query(void *arg, struct sb_error *err)
{
	static const char *const names[] = { "name", NULL };
	static const struct ui_query_fields fields = { names, NULL, row_values };
	struct ui_query *q = NULL;
	char msg[256] = "";
	(void)arg;
	if (ui_query_parse(&q, "name:job-* !web /^j.b/", &fields, msg, sizeof(msg)) < 0) {
		cr_assert_null(q);
		return sb_error_set(err, SB_ERR_NOMEM, "query: %s", msg);
	}
	/* a query that matched less than it was asked would hide or show the wrong rows */
	cr_assert(ui_query_match(q, "job-1") && !ui_query_match(q, "web") && !ui_query_match(q, "other"));
	ui_query_free(q);
	return 0;
}

Test(alloc_fail, workbench_parsers)
{
	static struct ui_keymap want;
	char warn[256] = "";

	ui_keymap_defaults(&want);
	cr_assert_eq(ui_keymap_parse(&want, keys_conf, warn, sizeof(warn)), 0, "%s", warn);
	every("keymap", call_keys, &want, 1);
	every("custom command", call_custom, NULL, 2);
	every("filter query", call_query, NULL, 4);
}
