/* The warm pool with real runsc: create claims a booted member that matches
 * the request (the member's container carries on under the new name, with
 * its new hostname and /etc/hosts, an empty workspace and a timeline that
 * starts with its create), the claimer's background refill boots a
 * replacement, a request that matches no profile boots cold, members are
 * never listed, reaped or cleaned as the user's, gc removes members no
 * profile wants, bad input is refused and a refill that fails says so in
 * ROOT/pool/refill.log and loses nothing. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)
#define WAIT_MS 120000

static void setup(void)
{
	sbf_setup(&f, "pool");
}

/* 1 when no refill holds the pool's lock and the last one started has ended. */
static int refill_done(void *arg)
{
	(void)arg;
	char *path = tu_sh_out("cat '%s/pool/refill.pid' 2>/dev/null", f.dir);
	long pid = path && *path ? strtol(path, NULL, 10) : 0;
	free(path);
	return !sb_pool_refilling(f.root) && (pid <= 0 || kill((pid_t)pid, 0) < 0);
}

static void teardown(void)
{
	/* the detached refill ends by itself: wait for it, then remove what it made */
	if (f.root) {
		tu_wait_for(refill_done, NULL, WAIT_MS);
		sb_pool_remove(NULL, f.root, NULL, NULL);
	}
	sbf_teardown(&f);
}

TestSuite(pool, .init = setup, .fini = teardown, .timeout = 300);

/* The first profile of `pool ls --json` (NULL: none); caller decrefs. */
static json_t *profile(void)
{
	json_t *doc = sbf_run_json(SB("pool", "ls", "--json"), "pool ls");
	json_t *p = json_incref(json_array_get(json_object_get(doc, "profiles"), 0));
	json_decref(doc);
	return p;
}

static int ready_of(void)
{
	json_t *p = profile();
	int n = p ? (int)json_integer_value(json_object_get(p, "ready")) : -1;
	json_decref(p);
	return n;
}

static int pool_full(void *arg)
{
	return ready_of() == *(int *)arg && refill_done(NULL);
}

static void wait_ready(int n, const char *when)
{
	cr_assert(tu_wait_for(pool_full, &n, WAIT_MS), "%s: the pool never had %d ready members", when, n);
}

/* The internal name of the pool's first member. */
static char *member(void)
{
	json_t *p = profile();
	const char *m = json_string_value(json_array_get(json_object_get(p, "members"), 0));
	char *copy = m ? strdup(m) : NULL;
	json_decref(p);
	cr_assert_not_null(copy, "the pool has no member");
	return copy;
}

static char *record_id(const char *name)
{
	struct sb_record rec;
	cr_assert_eq(sb_record_load(&rec, f.root, name, NULL), 0, "no record of '%s'", name);
	char *id = strdup(rec.id);
	sb_record_clear(&rec);
	return id;
}

static int exists(const char *name)
{
	char *path = sb_strdupf("%s/sandboxes/%s", f.dir, name);
	struct stat st;
	int rc = stat(path, &st) == 0;
	free(path);
	return rc;
}

static void set_pool(const char *size)
{
	sbf_ok(SB("pool", "set", SBF_IMAGE, "--size", size), "pool set");
	sbf_ok(SB("pool", "refill"), "pool refill");
	wait_ready(atoi(size), "pool set");
}

/* A claimed sandbox is the member's container under the new name, and looks
 * like a fresh create everywhere. */
static void assert_claimed(const char *name, const char *member_name, const char *member_id)
{
	char *id = record_id(name);
	cr_assert_str_eq(id, member_id, "'%s' was not made from pool member %s", name, member_name);
	free(id);
	cr_assert(!exists(member_name), "member %s is still in the pool", member_name);
	char *out = sbf_sh(&f, NULL, name, "hostname; grep -c \"$(hostname)\" /etc/hosts; ls -A /workspace | wc -l", NULL);
	char want[128];
	snprintf(want, sizeof(want), "%s\n1\n0\n", name);
	cr_assert_str_eq(out, want, "identity or workspace of '%s': %s", name, out);
	free(out);
	json_t *doc = sbf_run_json(SB("inspect", name, "--json"), "inspect");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "name")), name);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "state")), "running");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "temporary");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "reason")), "created");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "owner")), "agent-7");
	json_decref(doc);
	/* one JSON line per entry: the first is the create, as after a cold one */
	struct tu_run r = SB("timeline", name, "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loadb(r.out, strcspn(r.out, "\n"), 0, NULL);
	cr_assert(doc && !strcmp(json_string_value(json_object_get(doc, "text")), "running") &&
			  !strcmp(json_string_value(json_object_get(doc, "detail")), "created"),
		  "the timeline of '%s' does not start with its create: %s", name, r.out);
	json_decref(doc);
	tu_run_free(&r);
}

Test(pool, claim_is_a_fresh_sandbox)
{
	set_pool("1");
	char *m = member(), *mid = record_id(m);
	/* members are nobody's sandboxes */
	struct tu_run r = SB("ls", "--json");
	cr_assert_eq(r.status, 0);
	cr_assert(!strstr(r.out, SB_POOL_PREFIX), "ls shows a pool member: %s", r.out);
	tu_run_free(&r);
	sbf_ok(SB("reap", "--dry-run"), "reap");
	sbf_ok(SB("create", "alpha", "--image", SBF_IMAGE, "--owner", "agent-7"), "create alpha");
	assert_claimed("alpha", m, mid);
	free(sbf_sh(&f, NULL, "alpha", "echo secret > /workspace/left; echo x > /root/left", NULL));
	/* the claimer's background refill boots a replacement */
	wait_ready(1, "after the claim");
	char *m2 = member(), *mid2 = record_id(m2);
	cr_assert_str_neq(m2, m);
	sbf_ok(SB("rm", "alpha"), "rm alpha");
	sbf_ok(SB("create", "beta", "--image", SBF_IMAGE, "--owner", "agent-7"), "create beta");
	assert_claimed("beta", m2, mid2);
	char *out = sbf_sh(&f, NULL, "beta", "cat /workspace/left /root/left 2>&1 | grep -c secret; true", NULL);
	cr_assert_str_eq(out, "0\n", "beta sees a file of alpha's claim");
	free(out);
	/* stop and restore keep the new identity */
	sbf_ok(SB("stop", "beta"), "stop");
	sbf_ok(SB("restore", "beta"), "restore");
	out = sbf_sh(&f, NULL, "beta", "hostname", NULL);
	cr_assert_str_eq(out, "beta\n");
	free(out);
	free(m);
	free(mid);
	free(m2);
	free(mid2);
	wait_ready(1, "end");
	sbf_ok(SB("rm", "beta"), "rm beta");
	/* the member's container is the pool's; without the pool nothing is left */
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	sbf_ok(SB("gc"), "gc");
	sbf_assert_reconciled(&f, "after the claims");
}

/* The claim sets the hostname by an exec that starts no runsc where this
 * build's protocol was measured (as every non-terminal exec); another
 * build's claim takes the CLI, and both claims are whole. */
Test(pool, the_claims_exec_starts_no_runsc_where_measured)
{
	char *log_env = sb_strdupf("SANDBENCH_LOG=%s/log", f.dir);
	const char *env[] = { log_env, NULL };

	cr_assert_eq(tu_sh("cp \"$(command -v runsc)\" %s/runsc-other", f.dir), 0);
	char *other = sb_strdupf("SANDBENCH_RUNSC=%s/runsc-other", f.dir);
	const char *other_env[] = { other, log_env, NULL };
	set_pool("1");
	char *m = member(), *mid = record_id(m);
	sbf_ok(tu_sandbench(f.dir, env, "create", "quick", "--image", SBF_IMAGE, "--owner", "agent-7", NULL), "create");
	assert_claimed("quick", m, mid);
	char *log = sbf_take_log(&f), *direct = sb_strdupf("runsc exec %s: direct", mid);
	char *cli = sb_strdupf("runsc exec %s: through the CLI", mid);
	cr_assert(strstr(log, direct) && !strstr(log, cli), "the claim's exec: %s", log);
	free(log);
	free(direct);
	free(cli);
	free(m);
	free(mid);
	wait_ready(1, "after the first claim");
	m = member();
	mid = record_id(m);
	/* the member runs on the measured build; the claimer is another one */
	sbf_ok(tu_sandbench(f.dir, other_env, "create", "slow", "--image", SBF_IMAGE, "--owner", "agent-7", NULL), "create");
	assert_claimed("slow", m, mid);
	log = sbf_take_log(&f);
	cli = sb_strdupf("runsc exec %s: through the CLI: not a runsc build whose protocol was measured", mid);
	direct = sb_strdupf("runsc exec %s: direct", mid);
	cr_assert(strstr(log, cli) && !strstr(log, direct), "the other build's claim: %s", log);
	free(direct);
	free(log);
	free(cli);
	free(m);
	free(mid);
	wait_ready(1, "end");
	sbf_ok(SB("rm", "quick"), "rm");
	sbf_ok(SB("rm", "slow"), "rm");
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	sbf_ok(SB("gc"), "gc");
	sbf_assert_reconciled(&f, "after both claims");
	free(other);
	free(log_env);
}

Test(pool, no_match_boots_cold)
{
	set_pool("1");
	char *m = member(), *mid = record_id(m);
	/* other limits, a permanent sandbox, a host mount: none is the profile */
	sbf_ok(SB("create", "big", "--image", SBF_IMAGE, "--memory", "768m"), "create big");
	sbf_ok(SB("create", "kept", "--image", SBF_IMAGE, "--permanent"), "create kept");
	char *dir = tu_tempdir("pool-mount"), *spec = sb_strdupf("%s:/data", dir);
	sbf_ok(SB("create", "mounted", "--image", SBF_IMAGE, "--mount", spec), "create mounted");
	const char *names[] = { "big", "kept", "mounted" };
	for (size_t i = 0; i < 3; i++) {
		char *id = record_id(names[i]);
		cr_assert_str_neq(id, mid, "'%s' claimed the member", names[i]);
		free(id);
	}
	cr_assert(exists(m), "the member was taken by a request that does not match");
	char *out = sbf_sh(&f, NULL, "big", "hostname", NULL);
	cr_assert_str_eq(out, "big\n");
	free(out);
	/* an empty pool: create boots as without one */
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	cr_assert(!exists(m), "pool rm left its member");
	sbf_ok(SB("create", "cold", "--image", SBF_IMAGE), "create cold");
	out = sbf_sh(&f, NULL, "cold", "hostname", NULL);
	cr_assert_str_eq(out, "cold\n");
	free(out);
	for (size_t i = 0; i < 3; i++)
		sbf_ok(SB("rm", names[i]), "rm");
	sbf_ok(SB("rm", "cold"), "rm");
	tu_remove(dir);
	free(dir);
	free(spec);
	free(m);
	free(mid);
}

Test(pool, bad_input)
{
	static const struct {
		const char *args[8];
		int status;
		const char *says;
	} cases[] = {
		{ { "pool", "set", "nosuch:image", "--size", "1" }, 3, "nosuch" },
		{ { "pool", "set", SBF_IMAGE, "--size", "0" }, 2, "invalid pool size" },
		{ { "pool", "set", SBF_IMAGE, "--size", "-1" }, 2, "invalid pool size" },
		{ { "pool", "set", SBF_IMAGE, "--size", "100000" }, 2, "invalid pool size" },
		{ { "pool", "set", SBF_IMAGE, "--size", "2", "--network", "maybe" }, 2, "invalid network" },
		{ { "pool", "set", SBF_IMAGE, "--size", "2", "--network", "on" }, 2, "not supported" },
		{ { "pool", "set", SBF_IMAGE }, 2, "--size" },
		{ { "pool", "rm", SBF_IMAGE }, 3, "no warm pool" },
		{ { "create", SB_POOL_PREFIX "mine", "--image", SBF_IMAGE }, 2, "reserved" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;
		struct tu_run r = tu_sandbench(f.dir, NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
		cr_assert_eq(r.status, cases[i].status, "case %zu: status %d: %s", i, r.status, r.err);
		cr_assert(strstr(r.err, cases[i].says) && !strchr(strchr(r.err, '\n') + 1, '\n'),
			  "case %zu: not one line naming the cause: %s", i, r.err);
		tu_run_free(&r);
		json_t *p = profile();
		cr_assert_null(p, "case %zu left a profile", i);
	}
	struct stat st;
	char *sbx = sb_strdupf("%s/sandboxes/" SB_POOL_PREFIX "mine", f.dir);
	cr_assert(stat(sbx, &st) < 0, "a refused create left its directory");
	free(sbx);
}

Test(pool, failed_refill_is_logged_and_loses_nothing)
{
	set_pool("1");
	char *m = member();
	sbf_ok(SB("create", "keep", "--image", SBF_IMAGE, "--memory", "768m"), "create keep");
	/* the image's rootfs goes away behind sandbench's back: boots fail */
	json_t *p = profile();
	const char *digest = json_string_value(json_object_get(p, "digest"));
	cr_assert_eq(tu_sh("mv '%s/images/rootfs/%s' '%s/hidden'", f.dir, strchr(digest, ':') + 1, f.dir), 0);
	sbf_ok(SB("pool", "set", SBF_IMAGE, "--size", "2"), "pool set 2");
	struct tu_run r = SB("pool", "refill");
	cr_assert_neq(r.status, 0, "a refill without the image's rootfs succeeded");
	cr_assert(strstr(r.err, "refill.log"), "%s", r.err);
	tu_run_free(&r);
	char *log = tu_sh_out("cat '%s/pool/refill.log'", f.dir);
	cr_assert(log && strstr(log, "refill of '" SBF_IMAGE "' failed"), "refill.log: %s", log ? log : "(none)");
	free(log);
	/* nothing lost: the profile, the ready member, the user's sandbox */
	json_t *now = profile();
	cr_assert_eq(json_integer_value(json_object_get(now, "size")), 2);
	json_decref(now);
	cr_assert(exists(m), "a failed refill removed the ready member");
	char *out = sbf_sh(&f, NULL, "keep", "echo alive", NULL);
	cr_assert_str_eq(out, "alive\n");
	free(out);
	/* back: the next refill fills the pool */
	cr_assert_eq(tu_sh("mv '%s/hidden' '%s/images/rootfs/%s'", f.dir, f.dir, strchr(digest, ':') + 1), 0);
	sbf_ok(SB("pool", "refill"), "pool refill");
	wait_ready(2, "after the image came back");
	json_decref(p);
	free(m);
	sbf_ok(SB("rm", "keep"), "rm keep");
}

Test(pool, gc_removes_members_no_profile_wants)
{
	set_pool("1");
	char *m = member();
	/* the profile goes away without its members (a crash between the two) */
	char *path = sb_strdupf("%s/pool/profiles.json", f.dir);
	cr_assert_eq(sb_fs_write_atomic(path, "{\"pool\":1,\"profiles\":[]}", 24, 0600, NULL), 0);
	free(path);
	cr_assert(exists(m));
	sbf_ok(SB("gc"), "gc");
	cr_assert(!exists(m), "gc left a member no profile wants");
	sbf_assert_reconciled(&f, "after gc");
	free(m);
}
