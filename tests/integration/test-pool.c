/* The warm pool with real runsc: create claims a booted member that matches
 * the request (the member's container carries on under the new name, with
 * its new hostname and /etc/hosts, an empty workspace and a timeline that
 * starts with its create), the claimer's background refill boots a
 * replacement, a request that matches no profile boots cold, members are
 * never listed, reaped or cleaned as the user's, gc removes members no
 * profile wants, a member with network on hands its network to the
 * claimer, bad input is refused and a refill that fails says so in
 * ROOT/pool/refill.log and loses nothing. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "net/network.h"
#include "nettest.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names net_names;   /* network tests only */
static struct nt_host host;

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
	nt_host_stop(&host);
	if (net_names.sfx[0])
		tu_sh("ip link del %s 2>/dev/null; true", net_names.bridge);
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

/* The pool and what gc finds go; then nothing of the test's is left (a
 * member's container is the pool's). */
static void remove_pool(const char *when)
{
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	sbf_ok(SB("gc"), "gc");
	sbf_assert_reconciled(&f, when);
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

/* The record's image configuration (Env, WorkingDir, User) as JSON text. */
static char *image_config_of(const char *name)
{
	struct sb_record rec;
	cr_assert_eq(sb_record_load(&rec, f.root, name, NULL), 0, "no record of '%s'", name);
	char *text = rec.image_config ? json_dumps(rec.image_config, JSON_SORT_KEYS | JSON_COMPACT) : strdup("none");
	sb_record_clear(&rec);
	return text;
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
	char *cfg = image_config_of(m);
	cr_assert(strstr(cfg, "\"Env\""), "the member has no image configuration: %s", cfg);
	sbf_ok(SB("create", "alpha", "--image", SBF_IMAGE, "--owner", "agent-7"), "create alpha");
	assert_claimed("alpha", m, mid);
	/* the claim takes the image's configuration from the member, as create reads it */
	char *claimed = image_config_of("alpha");
	cr_assert_str_eq(claimed, cfg, "the claimed record's image configuration");
	free(claimed);
	free(cfg);
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
	remove_pool("after the claims");
}

/* The claim of member mid named its sandbox by an exec (the log line
 * "runsc exec MID: HOW"), not by the namer. */
static void assert_named_by_exec(const char *mid, const char *how, const char *when)
{
	char *log = sbf_take_log(&f), *line = sb_strdupf("runsc exec %s: %s", mid, how);

	cr_assert(strstr(log, line) && !strstr(log, "named by its namer"), "%s: %s", when, log);
	free(line);
	free(log);
}

/* 1 when the member's namer is gone (its FIFO has no reader: ENXIO). */
static int namer_gone(void *arg)
{
	char *path = sb_strdupf("%s/sandboxes/%s/namer.in", f.dir, (const char *)arg);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	int gone = fd < 0 && errno == ENXIO;
	if (fd >= 0)
		close(fd);
	free(path);
	return gone;
}

/* The claim names the sandbox through the member's namer, started at boot:
 * no process starts at the claim. Without a namer (it is gone, or the
 * member's runsc could not start one without waiting) the claim names it by
 * an exec, which starts no runsc where this build's protocol was measured
 * (as every non-terminal exec) and takes the CLI on another build. Every
 * claim is whole. */
Test(pool, the_claim_names_through_the_namer_else_an_exec)
{
	char *log_env = sb_strdupf("SANDBENCH_LOG=%s/log", f.dir);
	const char *env[] = { log_env, NULL };
	struct stat st;

	cr_assert_eq(tu_sh("cp \"$(command -v runsc)\" %s/runsc-other", f.dir), 0);
	char *other = sb_strdupf("SANDBENCH_RUNSC=%s/runsc-other", f.dir);
	const char *other_env[] = { other, log_env, NULL };
	set_pool("1");
	char *m = member(), *mid = record_id(m), *fifo = sb_strdupf("%s/sandboxes/%s/namer.in", f.dir, m);
	cr_assert(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "member %s has no namer", m);
	sbf_ok(tu_sandbench(f.dir, env, "create", "quick", "--image", SBF_IMAGE, "--owner", "agent-7", NULL), "create");
	assert_claimed("quick", m, mid);
	char *log = sbf_take_log(&f), *exec = sb_strdupf("runsc exec %s", mid);
	cr_assert(strstr(log, "pool: 'quick' named by its namer") && !strstr(log, exec), "the claim: %s", log);
	free(log);
	free(exec);
	char *out = sbf_sh(&f, NULL, "quick", "ps -o args | grep -c '[s]andbench-namer'; ls -A /workspace | wc -l", NULL);
	cr_assert_str_eq(out, "0\n0\n", "the namer or its program is left in the claimed sandbox: %s", out);
	free(out);
	out = tu_sh_out("ls -A %s/sandboxes/quick | grep -c namer", f.dir);
	cr_assert_str_eq(out, "0", "namer files are left in the claimed sandbox's folder: %s", out);
	free(out);
	free(fifo);
	free(m);
	free(mid);

	/* the namer is gone (a line without a name ends it): an exec names the sandbox */
	wait_ready(1, "after the first claim");
	m = member();
	mid = record_id(m);
	fifo = sb_strdupf("%s/sandboxes/%s/namer.in", f.dir, m);
	cr_assert_eq(tu_sh("printf '\\n' > %s", fifo), 0);
	cr_assert(tu_wait_for(namer_gone, m, WAIT_MS), "the namer of %s did not end", m);
	sbf_ok(tu_sandbench(f.dir, env, "create", "direct", "--image", SBF_IMAGE, "--owner", "agent-7", NULL), "create");
	assert_claimed("direct", m, mid);
	assert_named_by_exec(mid, "direct", "the claim without a namer");
	free(fifo);
	free(m);
	free(mid);

	/* members booted by another runsc build have no namer (it cannot start
	 * one without waiting), and its claim takes the CLI */
	wait_ready(1, "after the second claim");
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	sbf_ok(tu_sandbench(f.dir, other_env, "pool", "set", SBF_IMAGE, "--size", "1", NULL), "pool set");
	sbf_ok(tu_sandbench(f.dir, other_env, "pool", "refill", NULL), "pool refill");
	m = member();
	mid = record_id(m);
	fifo = sb_strdupf("%s/sandboxes/%s/namer.in", f.dir, m);
	cr_assert(lstat(fifo, &st) < 0, "member %s of another runsc build has a namer", m);
	free(fifo);
	sbf_ok(tu_sandbench(f.dir, other_env, "create", "slow", "--image", SBF_IMAGE, "--owner", "agent-7", NULL), "create");
	assert_claimed("slow", m, mid);
	assert_named_by_exec(mid, "through the CLI: not a runsc build whose protocol was measured",
			     "the other build's claim");
	free(m);
	free(mid);
	wait_ready(1, "end");
	sbf_ok(SB("rm", "quick"), "rm");
	sbf_ok(SB("rm", "direct"), "rm");
	sbf_ok(SB("rm", "slow"), "rm");
	remove_pool("after the claims");
	free(other);
	free(log_env);
}

/* An image whose workspace has a file of the namer's name: the member has no
 * namer (the file is the image's and stays), and its claim names it by an
 * exec. */
Test(pool, an_image_file_of_the_namers_name_stays_and_the_claim_still_names)
{
	char *log_env = sb_strdupf("SANDBENCH_LOG=%s/log", f.dir);
	const char *env[] = { log_env, NULL };
	struct stat st;

	sbf_ok(SB("create", "src", "--image", SBF_IMAGE), "create src");
	free(sbf_sh(&f, NULL, "src", "echo mine > /workspace/.sandbench-namer", NULL));
	sbf_ok(SB("commit", "src", "seeded:1", "--include-workspace"), "commit");
	sbf_ok(SB("rm", "src"), "rm src");
	/* the refill that boots the member may be the one pool set starts */
	sbf_ok(tu_sandbench(f.dir, env, "pool", "set", "seeded:1", "--size", "1", NULL), "pool set");
	sbf_ok(tu_sandbench(f.dir, env, "pool", "refill", NULL), "pool refill");
	wait_ready(1, "pool set");
	char *m = member(), *mid = record_id(m), *fifo = sb_strdupf("%s/sandboxes/%s/namer.in", f.dir, m);
	cr_assert(lstat(fifo, &st) < 0, "member %s has a namer", m);
	char *log = sbf_take_log(&f);
	cr_assert(strstr(log, "the image's workspace has a '.sandbench-namer': no namer"), "%s", log);
	free(log);
	sbf_ok(tu_sandbench(f.dir, env, "create", "seeded", "--image", "seeded:1", NULL), "create");
	char *out = sbf_sh(&f, NULL, "seeded", "hostname; cat /workspace/.sandbench-namer", NULL);
	cr_assert_str_eq(out, "seeded\nmine\n", "the claimed sandbox: %s", out);
	free(out);
	char *id = record_id("seeded");
	cr_assert_str_eq(id, mid, "'seeded' was not claimed");
	assert_named_by_exec(mid, "direct", "the claim");
	free(id);
	free(fifo);
	free(m);
	free(mid);
	wait_ready(1, "end");
	sbf_ok(SB("rm", "seeded"), "rm");
	remove_pool("after the claim");
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

/* 1 when every profile has all its members and no refill runs. */
static int profiles_full(void *arg)
{
	(void)arg;
	json_t *doc = sbf_run_json(SB("pool", "ls", "--json"), "pool ls"), *p;
	size_t i;
	int full = refill_done(NULL);
	json_array_foreach(json_object_get(doc, "profiles"), i, p)
		full &= json_integer_value(json_object_get(p, "ready")) == json_integer_value(json_object_get(p, "size"));
	json_decref(doc);
	return full;
}

static int netns_of(const char *tag, const char *name)
{
	char ns[SB_NETNS_NAME_MAX];
	snprintf(ns, sizeof(ns), "sb-%s-%s", tag, name);
	return nt_netns_exists(ns);
}

static void assert_reaches_host(const char *name, const char *when)
{
	char *get = nt_http_get_cmd(&host), *out = sbf_sh(&f, NULL, name, get, NULL);
	cr_assert(strstr(out, NT_MARKER), "%s: '%s' does not reach the test host: %s", when, name, out);
	free(out);
	free(get);
}

/* Network on: the member's namespace, lease and resolv.conf become the
 * claimer's (veth, NAT and policy belong to the address and stay); it
 * reaches a test host, and so does a second claim after stop and restore
 * (the first keeps a TCP connection, which this runsc cannot checkpoint);
 * gc sees no orphan in any of it and rm leaves nothing. The image's profile
 * with network off is another, claimed by a create with network off. */
Test(pool, network_on_member_hands_its_network_to_the_claimer)
{
	char tag[7], addr[16];
	nt_names_init(&net_names);
	nt_config_write(&net_names, f.dir);
	nt_host_start(&host, &net_names, f.dir);
	cr_assert_eq(sb_network_tag(tag, f.root, NULL), 0);
	sbf_ok(SB("pool", "set", SBF_IMAGE, "--size", "2", "--network", "on"), "pool set on");
	sbf_ok(SB("pool", "set", SBF_IMAGE, "--size", "1", "--network", "off"), "pool set off");
	sbf_ok(SB("pool", "refill"), "pool refill");
	cr_assert(tu_wait_for(profiles_full, NULL, WAIT_MS), "the pool never filled");
	char *on = member(), *on_id = record_id(on);
	cr_assert(netns_of(tag, on), "member %s has no namespace", on);
	sbf_ok(SB("create", "offline", "--image", SBF_IMAGE, "--network", "off", "--owner", "agent-7"), "create offline");
	sbf_ok(SB("create", "online", "--image", SBF_IMAGE, "--network", "on", "--owner", "agent-7"), "create online");
	assert_claimed("online", on, on_id);
	char *off_id = record_id("offline");
	cr_assert_str_neq(off_id, on_id);
	cr_assert(netns_of(tag, "online") && !netns_of(tag, on), "the namespace kept the member's name");
	cr_assert_eq(sb_network_address(addr, f.root, on, NULL), SB_ERR_NOTFOUND, "the member's lease is left");
	cr_assert_eq(sb_network_address(addr, f.root, "online", NULL), 0, "the claimer has no lease");
	char *out = sbf_sh(&f, NULL, "online", "ip addr show eth0; cat /etc/resolv.conf", NULL);
	cr_assert(strstr(out, addr) && strstr(out, "generated by sandbench"), "address %s or resolv.conf: %s", addr, out);
	free(out);
	assert_reaches_host("online", "claimed");
	/* the claims' refill boots new members; none of this is an orphan */
	cr_assert(tu_wait_for(profiles_full, NULL, WAIT_MS), "the pool never filled again");
	struct tu_run r = SB("gc", "--dry-run");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strstr(r.out, "network object"), "gc takes a network for an orphan: %s", r.out);
	tu_run_free(&r);
	/* the next boot sets the network up under the new name */
	sbf_ok(SB("create", "second", "--image", SBF_IMAGE, "--network", "on"), "create second");
	sbf_ok(SB("stop", "second"), "stop");
	sbf_ok(SB("restore", "second"), "restore");
	assert_reaches_host("second", "restored");
	sbf_ok(SB("rm", "online"), "rm online");
	sbf_ok(SB("rm", "second"), "rm second");
	cr_assert(!netns_of(tag, "online") && sb_network_address(addr, f.root, "online", NULL) == SB_ERR_NOTFOUND,
		  "rm left the claimer's namespace or lease");
	sbf_ok(SB("rm", "offline"), "rm offline");
	cr_assert(tu_wait_for(refill_done, NULL, WAIT_MS), "the claims' refills never ended");
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	cr_assert_eq(tu_sh("! ls /run/netns | grep -q '^sb-%s-'", tag), 0, "a namespace of this root is left");
	sbf_ok(SB("gc"), "gc");
	nt_host_stop(&host); /* its server serves files of the root's directory */
	sbf_assert_reconciled(&f, "after the network claim");
	free(on);
	free(on_id);
	free(off_id);
}

/* A network configuration of the test's own (private ranges allowed) and a
 * pool of one ready member with network on; tag gets the root's tag. */
static void network_pool(char tag[7])
{
	nt_names_init(&net_names);
	nt_config_write(&net_names, f.dir);
	cr_assert_eq(sb_network_tag(tag, f.root, NULL), 0);
	sbf_ok(SB("pool", "set", SBF_IMAGE, "--size", "1", "--network", "on"), "pool set");
	sbf_ok(SB("pool", "refill"), "pool refill");
	wait_ready(1, "pool set");
}

/* create NAME with network on claims the pool's ready member; the claim's
 * refill is waited for. */
static void create_claims(const char *name)
{
	char *m = member(), *mid = record_id(m);
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--network", "on"), "create");
	char *id = record_id(name);
	cr_assert_str_eq(id, mid, "'%s' did not claim the ready member %s", name, m);
	free(id);
	free(mid);
	free(m);
	cr_assert(tu_wait_for(refill_done, NULL, WAIT_MS), "the claim's refill never ended");
}

/* A member whose network was built under other network settings (here:
 * private ranges were allowed, now they are blocked) is handed to nobody:
 * create boots one as configured, and the next refill replaces the member
 * by one of the settings now. */
Test(pool, member_of_other_network_settings_is_not_claimed)
{
	char tag[7];
	network_pool(tag);
	char *m = member(), *mid = record_id(m);
	nt_config_write_blocking(&net_names, f.dir);
	cr_assert_eq(ready_of(), 0, "a member of other network settings is counted as ready");
	sbf_ok(SB("create", "moved", "--image", SBF_IMAGE, "--network", "on"), "create moved");
	char *id = record_id("moved");
	cr_assert_str_neq(id, mid, "a member of other network settings was claimed");
	cr_assert(exists(m), "the member went before a refill");
	sbf_ok(SB("pool", "refill"), "pool refill");
	wait_ready(1, "after the settings changed");
	cr_assert(!exists(m) && !netns_of(tag, m), "the refill left the member of other settings or its namespace");
	create_claims("claimed");
	sbf_ok(SB("rm", "moved"), "rm moved");
	sbf_ok(SB("rm", "claimed"), "rm claimed");
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	free(m);
	free(mid);
	free(id);
}

/* A claim whose network cannot take the new name (a directory sits at its
 * namespace's path) fails with a clear error and loses nothing: the member
 * and all of its network go; the new sandbox, which cannot be cleaned up
 * either while the directory is there, is kept as broken with both causes;
 * once the path is free, rm --force leaves nothing and a create claims the
 * refill's next member. */
Test(pool, network_claim_that_fails_leaves_nothing)
{
	char tag[7], addr[16], *block;
	network_pool(tag);
	char *m = member();
	block = sb_strdupf("/run/netns/sb-%s-blocked", tag);
	cr_assert_eq(mkdir(block, 0700), 0);
	struct tu_run r = SB("create", "blocked", "--image", SBF_IMAGE, "--network", "on");
	int status = r.status;
	tu_run_free(&r);
	json_t *doc = sbf_run_json(SB("inspect", "blocked", "--json"), "inspect");
	const char *reason = json_string_value(json_object_get(doc, "reason"));
	rmdir(block);
	cr_assert_neq(status, 0, "a create succeeded with its namespace's path taken");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "state")), "broken");
	cr_assert(reason && strstr(reason, "cannot give the network") && strstr(reason, block), "reason: %s",
		  reason ? reason : "(none)");
	json_decref(doc);
	cr_assert(!exists(m) && !netns_of(tag, m), "the member of the failed claim or its namespace is left");
	cr_assert_eq(sb_network_address(addr, f.root, m, NULL), SB_ERR_NOTFOUND, "the member's lease is left");
	sbf_ok(SB("rm", "--force", "blocked"), "rm --force blocked once the path is free");
	cr_assert(!netns_of(tag, "blocked") && sb_network_address(addr, f.root, "blocked", NULL) == SB_ERR_NOTFOUND,
		  "rm left the failed sandbox's namespace or lease");
	cr_assert(tu_wait_for(refill_done, NULL, WAIT_MS), "the claim's refill never ended");
	r = SB("gc", "--dry-run");
	cr_assert(!strstr(r.out, "network object"), "the failed claim left network objects: %s", r.out);
	tu_run_free(&r);
	wait_ready(1, "after the failed claim");
	create_claims("blocked");
	sbf_ok(SB("rm", "blocked"), "rm blocked");
	sbf_ok(SB("pool", "rm", "--all"), "pool rm");
	free(block);
	free(m);
}
