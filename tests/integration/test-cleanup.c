/* The cleanup plan, owners and exposure against real runsc: what is stale
 * and why, applying part of a plan (exactly those items go, and the bytes it
 * said are the bytes that left the disk), owner ls/rm and their bad input. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/cleanup.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names net;   /* network tests only: a bridge and subnet of their own */

static void setup(void)
{
	sbf_setup(&f, "cleanup");
}

static void teardown(void)
{
	sbf_teardown(&f);
	if (net.sfx[0])
		tu_sh("ip link del %s 2>/dev/null; true", net.bridge);
}

TestSuite(cleanup, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void ok(struct tu_run r, const char *what)
{
	sbf_ok(r, what);
}

static char *box_path(const char *name, const char *rel)
{
	return sb_strdupf("%s/sandboxes/%s/%s", f.dir, name, rel);
}

/* Its last activity as long ago as ago seconds. */
static void age(const char *name, long long ago)
{
	char *act = box_path(name, "activity");
	struct timespec ts[2] = { { time(NULL) - ago, 0 }, { time(NULL) - ago, 0 } };
	cr_assert_eq(utimensat(AT_FDCWD, act, ts, 0), 0, "age %s", act);
	free(act);
}

static json_t *run_json(struct tu_run r, const char *what)
{
	json_t *doc = sbf_run_json(r, what);

	cr_assert(json_is_array(doc), "%s printed: %s", what, json_dumps(doc, 0));
	return doc;
}

static json_t *item(json_t *plan, const char *name)
{
	size_t i;
	json_t *it;

	json_array_foreach(plan, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "name")), name))
			return it;
	return NULL;
}

/* An image's item: its name is the canonical reference, which ends in ref. */
static json_t *image_item(json_t *plan, const char *ref)
{
	size_t i, n = strlen(ref);
	json_t *it;

	json_array_foreach(plan, i, it) {
		const char *name = json_string_value(json_object_get(it, "name"));
		if (!strcmp(json_string_value(json_object_get(it, "kind")), "image") && strlen(name) >= n &&
		    !strcmp(name + strlen(name) - n, ref))
			return it;
	}
	return NULL;
}

static const char *reason(json_t *plan, const char *name)
{
	json_t *it = item(plan, name);
	return it ? json_string_value(json_object_get(it, "reason")) : "(not listed)";
}

/* What du says the folder takes (blocks, each inode once, this file system only). */
static unsigned long long du(const char *name)
{
	char *dir = box_path(name, "");
	char *out = tu_sh_out("du -sx -B1 '%s' | cut -f1", dir);
	unsigned long long n = strtoull(out, NULL, 10);
	free(out);
	free(dir);
	return n;
}

Test(cleanup, plan_lists_what_is_stale_and_applies_exactly_the_marked)
{
	ok(SB("create", "exp", "--image", SBF_IMAGE, "--temporary=1h"), "create exp");
	ok(SB("create", "brk", "--image", SBF_IMAGE, "--permanent"), "create brk");
	ok(SB("create", "nock", "--image", SBF_IMAGE, "--permanent", "--no-exchange"), "create nock");
	ok(SB("create", "fine", "--image", SBF_IMAGE, "--permanent"), "create fine");
	sbf_bash_image(&f);
	age("exp", 2 * 3600);
	ok(SB("stop", "brk"), "stop brk");
	ok(SB("stop", "nock"), "stop nock");
	/* a record that cannot be read: broken */
	char *rec = box_path("brk", "sandbox.json");
	cr_assert_eq(tu_sh("echo garbage > '%s'", rec), 0);
	free(rec);
	/* stopped without its memory; a file and a link out of the sandbox in its workspace */
	char *ckpt = box_path("nock", "checkpoint"), *ws = box_path("nock", "workspace");
	cr_assert_eq(tu_sh("rm -rf '%s' && head -c 1048576 /dev/urandom > '%s/data' && ln -s /usr '%s/usr'", ckpt, ws, ws), 0);
	free(ckpt);
	free(ws);

	json_t *plan = run_json(SB("cleanup", "--json"), "cleanup --json");
	cr_assert_str_eq(reason(plan, "exp"), "expired");
	cr_assert_str_eq(reason(plan, "brk"), "broken");
	cr_assert_str_eq(reason(plan, "nock"), "no-checkpoint");
	cr_assert_not_null(image_item(plan, SBF_BASH_IMAGE), "the unused image is listed");
	cr_assert_str_eq(json_string_value(json_object_get(image_item(plan, SBF_BASH_IMAGE), "reason")), "unused-image");
	cr_assert_null(item(plan, "fine"), "a running permanent sandbox is not stale");
	cr_assert_null(image_item(plan, SBF_IMAGE), "an image sandboxes use is not stale");
	cr_assert_str_eq(json_string_value(json_object_get(item(plan, "brk"), "action")), "rm --force");
	json_t *keeps = json_object_get(item(plan, "exp"), "keeps");
	cr_assert_str_eq(json_string_value(json_array_get(keeps, 0)), "exchange", "exp keeps the exchange folder");
	cr_assert_eq(json_array_size(json_object_get(item(plan, "nock"), "keeps")), 0, "nock has no exchange");
	unsigned long long want = du("brk") + du("nock");
	unsigned long long said = json_integer_value(json_object_get(item(plan, "brk"), "bytes")) +
				  json_integer_value(json_object_get(item(plan, "nock"), "bytes"));
	json_decref(plan);
	cr_assert_eq(said, want, "the plan frees %llu bytes, du measured %llu", said, want);
	cr_assert_lt(said, 64ULL << 20, "the link to /usr was not followed");
	cr_assert_geq(said, 1ULL << 20, "the workspace's file counts");

	json_t *done = run_json(SB("cleanup", "--apply", "--json", "brk", "nock"), "cleanup --apply brk nock");
	cr_assert_eq(json_array_size(done), 2);
	cr_assert(json_is_true(json_object_get(item(done, "brk"), "ok")), "brk: %s",
		  json_string_value(json_object_get(item(done, "brk"), "message")));
	cr_assert(json_is_true(json_object_get(item(done, "nock"), "ok")));
	json_decref(done);
	char *d1 = box_path("brk", ""), *d2 = box_path("nock", ""), *d3 = box_path("exp", ""), *d4 = box_path("fine", "");
	cr_assert_neq(access(d1, F_OK), 0, "brk is gone");
	cr_assert_neq(access(d2, F_OK), 0, "nock is gone");
	cr_assert_eq(access(d3, F_OK), 0, "exp was not marked: it stays");
	cr_assert_eq(access(d4, F_OK), 0, "fine stays");
	free(d1);
	free(d2);
	free(d3);
	free(d4);
	plan = run_json(SB("cleanup", "--json"), "cleanup --json after");
	cr_assert_str_eq(reason(plan, "exp"), "expired");
	cr_assert_not_null(image_item(plan, SBF_BASH_IMAGE), "the image was not marked: it stays");
	json_decref(plan);
	sbf_assert_reconciled(&f, "after the cleanup");
}

Test(cleanup, a_touched_sandbox_is_no_longer_stale_and_stays)
{
	struct sb_cleanup_plan *plan;
	struct sb_error err;

	ok(SB("create", "idle", "--image", SBF_IMAGE, "--temporary=1h"), "create idle");
	age("idle", 2 * 3600);
	cr_assert_eq(sb_cleanup_plan(&plan, f.root, 0, &err), 0, "%s", err.msg);
	struct sb_cleanup_item *it = NULL;
	for (size_t i = 0; i < plan->count; i++)
		if (!strcmp(plan->items[i].name, "idle"))
			it = &plan->items[i];
	cr_assert_not_null(it);
	cr_assert_gt(it->bytes, 0);
	ok(SB("touch", "idle"), "touch");
	cr_assert_eq(sb_cleanup_apply(it, f.root), SB_ERR_STATE, "applied: %s", it->message);
	cr_assert(it->applied && strstr(it->message, "no longer stale"), "%s", it->message);
	sb_cleanup_plan_free(plan);
	char *dir = box_path("idle", "");
	cr_assert_eq(access(dir, F_OK), 0, "it stays");
	free(dir);
}

Test(cleanup, horizon_lists_temporaries_expiring_soon)
{
	ok(SB("create", "soon", "--image", SBF_IMAGE, "--temporary=1h"), "create soon");
	age("soon", 3600 - 300);
	json_t *plan = run_json(SB("cleanup", "--json"), "cleanup");
	cr_assert_null(item(plan, "soon"), "without --within it is not listed");
	json_decref(plan);
	plan = run_json(SB("cleanup", "--json", "--within", "10m"), "cleanup --within 10m");
	cr_assert_str_eq(reason(plan, "soon"), "expiring");
	json_decref(plan);
	struct tu_run r = SB("cleanup", "--within", "soon");
	cr_assert_eq(r.status, 2, "a bad duration is a usage error");
	cr_assert(strstr(r.err, "invalid duration 'soon'"), "%s", r.err);
	tu_run_free(&r);
}

static char *owners_file(void)
{
	char *p = sb_strdupf("%s/owners.json", f.dir);
	char *text = NULL;
	sb_fs_read_file(&text, NULL, p, 1 << 20, NULL);
	free(p);
	return text ? text : strdup("");
}

static json_t *owner_of(json_t *list, const char *name)
{
	return item(list, name);
}

Test(cleanup, owners_are_seen_removed_and_gone)
{
	ok(SB("create", "a1", "--image", SBF_IMAGE, "--permanent", "--owner", "team:a"), "create a1");
	ok(SB("create", "b1", "--image", SBF_IMAGE, "--permanent", "--owner", "team:b"), "create b1");
	ok(SB("create", "c1", "--image", SBF_IMAGE, "--permanent", "--owner", "team:c"), "create c1");
	age("c1", 2 * 3600);
	json_t *ls = run_json(SB("owner", "ls", "--json"), "owner ls");
	cr_assert_eq(json_array_size(ls), 3);
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:c"), "gone")), "2h idle is not 7d");
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:a"), "gone")));
	cr_assert_eq(json_integer_value(json_object_get(owner_of(ls, "team:a"), "sandboxes")), 1);
	json_decref(ls);

	ok(SB("owner", "rm", "team:a"), "owner rm team:a");
	ls = run_json(SB("owner", "ls", "--json"), "owner ls after rm");
	cr_assert(json_is_true(json_object_get(owner_of(ls, "team:a"), "gone")));
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:b"), "gone")));
	json_decref(ls);
	json_t *plan = run_json(SB("cleanup", "--json"), "cleanup");
	cr_assert_str_eq(reason(plan, "a1"), "owner-gone");
	cr_assert_null(item(plan, "b1"));
	json_decref(plan);

	/* gone after owner_gone_after without activity */
	char *cfg = sb_strdupf("%s/config", f.dir);
	cr_assert_eq(tu_sh("echo 'owner_gone_after = 1h' > '%s'", cfg), 0);
	free(cfg);
	ls = run_json(SB("owner", "ls", "--json"), "owner ls with owner_gone_after 1h");
	cr_assert(json_is_true(json_object_get(owner_of(ls, "team:c"), "gone")), "idle past owner_gone_after");
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:b"), "gone")), "b1 was active just now");
	json_decref(ls);
	plan = run_json(SB("cleanup", "--json"), "cleanup");
	cr_assert_str_eq(reason(plan, "c1"), "owner-gone");
	json_decref(plan);
	/* a value that is no duration is refused */
	cfg = sb_strdupf("%s/config", f.dir);
	cr_assert_eq(tu_sh("echo 'owner_gone_after = soon' > '%s'", cfg), 0);
	struct tu_run r = SB("owner", "ls");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "invalid value 'soon' for 'owner_gone_after'"), "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(tu_sh("rm '%s'", cfg), 0);
	free(cfg);

	/* activity after the rm brings an owner back (a second later at least:
	 * the removal and the activity are both counted in seconds) */
	char later[64];
	snprintf(later, sizeof(later), "SANDBENCH_NOW=%lld", (long long)time(NULL) + 2);
	const char *env[] = { later, NULL };
	ok(tu_sandbench(f.dir, env, "touch", "a1", NULL), "touch a1");
	ls = run_json(SB("owner", "ls", "--json"), "owner ls after touch");
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:a"), "gone")));
	json_decref(ls);
}

Test(cleanup, owner_rm_refuses_bad_input_and_changes_nothing)
{
	static const struct {
		const char *arg;
		int status;
		const char *says;
	} bad[] = {
		{ "nobody", 3, "unknown owner 'nobody'" },
		{ "", 2, "must not be empty" },
		{ "a\tb", 2, "control characters" },
		{ "\xff\xfe", 2, "UTF-8" },
	};

	ok(SB("create", "a1", "--image", SBF_IMAGE, "--permanent", "--owner", "team:a"), "create a1");
	json_decref(run_json(SB("owner", "ls", "--json"), "owner ls"));
	char *before = owners_file();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run r = SB("owner", "rm", bad[i].arg);
		cr_assert_eq(r.status, bad[i].status, "owner rm '%s': %d %s", bad[i].arg, r.status, r.err);
		cr_assert(strstr(r.err, bad[i].says), "owner rm '%s' says: %s", bad[i].arg, r.err);
		cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
		tu_run_free(&r);
	}
	char *long_name = malloc(300);
	memset(long_name, 'x', 299);
	long_name[299] = '\0';
	struct tu_run r = SB("owner", "rm", long_name);
	cr_assert_eq(r.status, 2, "a name too long: %s", r.err);
	tu_run_free(&r);
	free(long_name);
	r = SB("owner", "rm");
	cr_assert_eq(r.status, 2, "no owner: %s", r.err);
	tu_run_free(&r);
	char *after = owners_file();
	cr_assert_str_eq(before, after, "bad input left the owners file as it was");
	free(before);
	free(after);
	json_t *ls = run_json(SB("owner", "ls", "--json"), "owner ls");
	cr_assert(json_is_false(json_object_get(owner_of(ls, "team:a"), "gone")));
	json_decref(ls);
	/* a state file that is not an object is refused, not overwritten */
	char *path = sb_strdupf("%s/owners.json", f.dir);
	cr_assert_eq(tu_sh("echo '[1]' > '%s'", path), 0);
	r = SB("owner", "rm", "team:a");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "is not a JSON object"), "%s", r.err);
	tu_run_free(&r);
	char *kept = owners_file();
	cr_assert_str_eq(kept, "[1]\n", "the file is as it was");
	free(kept);
	free(path);
}

static const struct sb_exposure *exposure_of(const struct sb_exposure *x, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(x[i].name, name))
			return &x[i];
	return NULL;
}

Test(cleanup, exposure_flags_rw_mounts_and_network)
{
	struct sb_exposure *x;
	struct sb_error err;
	size_t n;
	char *host = tu_tempdir("cleanup-host");
	char *mnt = sb_strdupf("%s:/data:rw", host);

	/* not the default bridge, which a root beside this one may hold */
	nt_names_init(&net);
	nt_config_write_blocking(&net, f.dir);
	ok(SB("create", "wide", "--image", SBF_IMAGE, "--permanent", "--network", "on", "--mount", mnt), "create wide");
	ok(SB("create", "narrow", "--image", SBF_IMAGE, "--permanent"), "create narrow");
	cr_assert_eq(sb_exposure_list(&x, &n, f.root, &err), 0, "%s", err.msg);
	const struct sb_exposure *w = exposure_of(x, n, "wide"), *q = exposure_of(x, n, "narrow");
	cr_assert(w && q);
	cr_assert(w->warn & SB_EXPOSE_RW_MOUNT);
	cr_assert(w->warn & SB_EXPOSE_NETWORK);
	cr_assert(w->warn & SB_EXPOSE_OPEN_EGRESS);
	cr_assert_eq(w->n_rw, 1);
	cr_assert(strstr(w->rw_mounts, ":/data"), "%s", w->rw_mounts);
	cr_assert_eq(q->warn, 0, "the defaults widen nothing");
	cr_assert(q->exchange);
	sb_exposure_list_free(x, n);
	ok(SB("rm", "wide"), "rm wide");
	tu_remove(host);
	free(host);
	free(mnt);
}
