/* sandbench fork with real runsc: a running source's process (a counter
 * loop writing to its disk) carries on in the fork and in the source, each
 * on its own disk; a source stopped with a checkpoint stays stopped and
 * wakes up later as before; one without (its host restarted) gives a fork
 * cold-started from its disk; exec deadlines and session ends work in the
 * fork; the disk copy keeps whiteouts, hard links, set-id bits and symlinks
 * (never followed); refusals leave nothing behind. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "fork");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(fork, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* A loop that counts in /data/count (its disk) every 50 ms, from a pid file.
 * Each count is renamed into place: a reader (or the checkpoint's disk copy)
 * that came between an `echo >`'s truncate and its write would see 0. */
#define COUNTER "mkdir -p /data; (i=0; while :; do i=$((i+1)); echo $i > /data/count.new; " \
		"mv /data/count.new /data/count; sleep 0.05; done) >/dev/null 2>&1 & echo $! > /data/pid"

static const char *str(json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));
	return s ? s : "";
}

static long count_of(const char *name)
{
	int status;
	char *out = sbf_sh(&f, NULL, name, "cat /data/count 2>/dev/null || echo 0", &status);
	long n = status == 0 ? atol(out) : -1;
	free(out);
	return n;
}

struct passes {
	const char *name;
	long past;
};

static int counted_past(void *arg)
{
	struct passes *p = arg;
	return count_of(p->name) > p->past;
}

/* The counter of name goes beyond past (within 20 s). */
static void assert_counts_past(const char *name, long past)
{
	struct passes p = { name, past };
	cr_assert(tu_wait_for(counted_past, &p, 20000), "the counter of '%s' stopped at %ld", name, count_of(name));
}

static void start_counter(const char *name)
{
	free(sbf_sh(&f, NULL, name, COUNTER, NULL));
	assert_counts_past(name, 3);
}

static char *sandboxes_listing(void)
{
	return tu_sh_out("ls %s/sandboxes | sort | tr '\\n' ' '", f.dir);
}

Test(fork, running_source_counts_on_in_both)
{
	sbf_ok(SB("create", "src", "--image", SBF_IMAGE), "create");
	start_counter("src");
	sbf_ok(SB("session", "start", "src", "s1"), "session start");
	char *pid = sbf_sh(&f, NULL, "src", "cat /data/pid", NULL);

	json_t *doc = sbf_run_json(SB("fork", "src", "fk", "--json"), "fork");
	json_t *rep = json_object_get(doc, "fork");
	cr_assert(json_is_true(json_object_get(rep, "memory")), "%s", json_dumps(doc, 0));
	cr_assert(json_is_true(json_object_get(rep, "source_checkpointed")));
	cr_assert(json_is_true(json_object_get(rep, "source_restored")));
	cr_assert_str_eq(str(doc, "state"), "running");
	cr_assert_str_eq(str(json_object_get(doc, "parent"), "name"), "src");
	json_decref(doc);

	/* the parent is in the record: inspect and ls show it */
	json_t *src = sbf_run_json(SB("inspect", "src", "--json"), "inspect src");
	cr_assert_str_eq(str(src, "state"), "running", "the source does not run on: %s", str(src, "reason"));
	json_t *fk = sbf_run_json(SB("inspect", "fk", "--json"), "inspect fk");
	cr_assert_str_eq(str(json_object_get(fk, "parent"), "id"), str(src, "id"));
	cr_assert_str_neq(str(fk, "id"), str(src, "id"));
	cr_assert(strstr(str(fk, "reason"), "carried on"), "%s", str(fk, "reason"));
	json_decref(src);
	json_decref(fk);
	struct tu_run r = SB("ls", "--json");
	cr_assert(strstr(r.out, "\"parent\"") && strstr(r.out, "\"fk\""), "%s", r.out);
	tu_run_free(&r);

	/* the very process carries on in both (no cold start: nothing would count) */
	char *fpid = sbf_sh(&f, NULL, "fk", "cat /data/pid", NULL);
	cr_assert_str_eq(fpid, pid);
	long at_fork = count_of("fk");
	cr_assert_gt(at_fork, 3);
	assert_counts_past("fk", at_fork + 5);
	assert_counts_past("src", count_of("src") + 5);
	/* each on its own disk */
	free(sbf_sh(&f, NULL, "fk", "echo fork-only > /data/mark", NULL));
	char *out = sbf_sh(&f, NULL, "src", "cat /data/mark 2>&1 || true", NULL);
	cr_assert(!strstr(out, "fork-only"), "%s", out);
	free(out);

	/* the source's session ended at the checkpoint */
	r = SB("session", "ls", "src", "--json");
	cr_assert(strstr(r.out, "\"exited\""), "%s", r.out);
	tu_run_free(&r);

	/* exec deadlines: the command inside the fork is killed too */
	r = SB("exec", "--timeout", "1", "fk", "--", "sleep", "30");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	out = sbf_sh(&f, NULL, "fk", "ps | grep -c '[s]leep 30' || true", NULL);
	cr_assert_str_eq(out, "0\n");
	free(out);
	/* and a session of the fork ends when killed */
	sbf_ok(SB("session", "start", "fk", "s2"), "session start in the fork");
	out = sbf_sh(&f, NULL, "fk", "ps | grep -c '[s]h -i' || true", NULL);
	cr_assert_str_eq(out, "1\n", "no session shell in the fork");
	free(out);
	sbf_ok(SB("session", "kill", "fk", "s2"), "session kill in the fork");
	out = sbf_sh(&f, NULL, "fk", "ps | grep -c '[s]h -i' || true", NULL);
	cr_assert_str_eq(out, "0\n", "the session's shell outlived its kill");
	free(out);

	/* cleanup by id: the fork's container and cgroups go with it */
	fk = sbf_run_json(SB("inspect", "fk", "--json"), "inspect fk");
	char *id = strdup(str(fk, "id"));
	json_decref(fk);
	sbf_ok(SB("rm", "fk"), "rm fk");
	cr_assert(!sbf_runsc_has(&f, id));
	cr_assert(!sbf_cgroup_exists(id));
	assert_counts_past("src", count_of("src") + 3);
	free(id);
	free(pid);
	free(fpid);
}

Test(fork, stopped_source_with_checkpoint_stays_stopped)
{
	sbf_ok(SB("create", "st", "--image", SBF_IMAGE), "create");
	start_counter("st");
	sbf_ok(SB("stop", "st"), "stop");

	json_t *doc = sbf_run_json(SB("fork", "st", "fk1", "--json", "--permanent"), "fork");
	cr_assert(json_is_true(json_object_get(json_object_get(doc, "fork"), "memory")));
	cr_assert(json_is_false(json_object_get(json_object_get(doc, "fork"), "source_checkpointed")));
	cr_assert_str_eq(str(doc, "kind"), "permanent");
	json_decref(doc);
	assert_counts_past("fk1", count_of("fk1") + 5);

	/* the source is as it was: stopped, its checkpoint kept for its own restore */
	json_t *st = sbf_run_json(SB("inspect", "st", "--json"), "inspect");
	cr_assert_str_eq(str(st, "state"), "stopped");
	cr_assert(json_is_true(json_object_get(st, "checkpoint")));
	json_decref(st);
	sbf_ok(SB("restore", "st"), "restore");
	st = sbf_run_json(SB("inspect", "st", "--json"), "inspect");
	cr_assert(strstr(str(st, "reason"), "restored from checkpoint"), "%s", str(st, "reason"));
	json_decref(st);
	assert_counts_past("st", count_of("st") + 5);
}

static const char *const boot_a[] = { "SANDBENCH_BOOT_ID=11111111-1111-4111-8111-111111111111", NULL };
static const char *const boot_b[] = { "SANDBENCH_BOOT_ID=22222222-2222-4222-8222-222222222222", NULL };

Test(fork, stopped_source_without_checkpoint_gives_a_fresh_boot_of_its_disk)
{
	sbf_ok(tu_sandbench(f.dir, boot_a, "create", "dk", "--image", SBF_IMAGE, "--permanent", NULL), "create");
	free(sbf_sh(&f, boot_a, "dk", "echo disk > /root-file; echo ws > /workspace/w; " COUNTER, NULL));

	/* the host "restarted": the source is stopped with its disk and no checkpoint */
	json_t *doc = sbf_run_json(tu_sandbench(f.dir, boot_b, "fork", "dk", "dk2", "--json", NULL), "fork");
	cr_assert(json_is_false(json_object_get(json_object_get(doc, "fork"), "memory")));
	cr_assert(strstr(str(doc, "reason"), "cold start"), "%s", str(doc, "reason"));
	json_decref(doc);
	char *out = sbf_sh(&f, boot_b, "dk2", "cat /root-file /workspace/w; ps | grep -c '[e]cho \\$i' || true", NULL);
	cr_assert_str_eq(out, "disk\nws\n0\n");
	free(out);
	json_t *dk = sbf_run_json(tu_sandbench(f.dir, boot_b, "inspect", "dk", "--json", NULL), "inspect");
	cr_assert_str_eq(str(dk, "state"), "stopped");
	json_decref(dk);
}

Test(fork, disk_copy_keeps_the_tree_and_follows_nothing)
{
	sbf_ok(SB("create", "tr", "--image", SBF_IMAGE), "create");
	free(sbf_sh(&f, NULL, "tr",
		    "rm /bin/vi; rm -rf /sbin; mkdir -p /sbin /x; echo new > /sbin/only; echo hi > /x/f; "
		    "ln /x/f /x/g; chmod 4755 /x/f; ln -s / /x/root; ln -s /etc/shadow /x/shadow",
		    NULL));
	sbf_ok(SB("fork", "tr", "tr2"), "fork");
	char *want = sbf_sh(&f, NULL, "tr", "ls -la /bin/vi 2>&1; ls -ln /x /sbin; stat -c '%h %a' /x/f /x/g", NULL);
	char *got = sbf_sh(&f, NULL, "tr2", "ls -la /bin/vi 2>&1; ls -ln /x /sbin; stat -c '%h %a' /x/f /x/g", NULL);
	cr_assert_str_eq(got, want);
	cr_assert(strstr(got, "No such file") && strstr(got, "2 4755\n2 4755"), "%s", got);
	free(want);
	free(got);
	/* the replaced directory stays opaque: the image's entries stay hidden */
	char *sbin = sbf_sh(&f, NULL, "tr2", "ls /sbin", NULL);
	cr_assert_str_eq(sbin, "only\n");
	free(sbin);
	char *got_ino = sbf_sh(&f, NULL, "tr2", "stat -c %i /x/f /x/g | uniq | wc -l", NULL);
	cr_assert_str_eq(got_ino, "1\n", "the hard link pair was split");
	free(got_ino);

	/* on the host the copy holds the links themselves, nothing they name */
	char *up = sb_strdupf("%s/sandboxes/tr2/upper/x", f.dir);
	struct stat st;
	char *p = sb_path_join(up, "root");
	cr_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	free(p);
	p = sb_path_join(up, "shadow");
	cr_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	free(p);
	free(up);
	char *size = tu_sh_out("du -sm %s/sandboxes/tr2/upper | cut -f1", f.dir);
	cr_assert_lt(atol(size), 50, "the copy followed a link: %s MB", size);
	free(size);
}

Test(fork, refusals_leave_nothing_behind)
{
	sbf_ok(SB("create", "rf", "--image", SBF_IMAGE), "create");
	sbf_ok(SB("create", "taken", "--image", SBF_IMAGE), "create");
	free(sbf_sh(&f, NULL, "taken", "echo mine > /mine", NULL));
	char *before = sandboxes_listing();
	json_t *rf = sbf_run_json(SB("inspect", "rf", "--json"), "inspect");
	char *reason = strdup(str(rf, "reason"));
	json_decref(rf);

	static const struct {
		const char *src, *dst, *opt;
		int status;
	} cases[] = {
		{ "rf", "bad/name", NULL, 2 },      /* an invalid name */
		{ "rf", "taken", NULL, 4 },         /* NEW already exists */
		{ "rf", "rf", NULL, 4 },            /* itself */
		{ "nosuch", "new1", NULL, 3 },      /* unknown source */
		{ "rf", "new2", "--temporary", 2 }, /* both kinds (with --permanent) */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tu_run r = cases[i].opt ? SB("fork", cases[i].src, cases[i].dst, cases[i].opt, "--permanent")
					       : SB("fork", cases[i].src, cases[i].dst);
		cr_assert_eq(r.status, cases[i].status, "fork %s %s: exit %d: %s", cases[i].src, cases[i].dst, r.status, r.err);
		cr_assert(r.err[0], "no message for fork %s %s", cases[i].src, cases[i].dst);
		tu_run_free(&r);
		char *after = sandboxes_listing();
		cr_assert_str_eq(after, before, "fork %s %s left something", cases[i].src, cases[i].dst);
		free(after);
	}
	/* the source was not checkpointed for any of them, the taken one is untouched */
	rf = sbf_run_json(SB("inspect", "rf", "--json"), "inspect");
	cr_assert_str_eq(str(rf, "reason"), reason);
	json_decref(rf);
	char *out = sbf_sh(&f, NULL, "taken", "cat /mine", NULL);
	cr_assert_str_eq(out, "mine\n");
	free(out);
	free(reason);
	free(before);
}

/* ---- network on ---- */

static struct nt_names names;
static struct nt_host host;

static void net_setup(void)
{
	sbf_setup(&f, "forknet");
	nt_names_init(&names);
	nt_config_write(&names, f.dir);
}

static void net_teardown(void)
{
	sbf_teardown(&f);
	nt_host_stop(&host);
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
}

TestSuite(forknet, .init = net_setup, .fini = net_teardown, .timeout = 240);

Test(forknet, the_fork_has_a_network_of_its_own)
{
	char src[16], dst[16];
	snprintf(src, sizeof(src), "ns%s", names.sfx);
	snprintf(dst, sizeof(dst), "nf%s", names.sfx);
	nt_host_start(&host, &names, f.dir);
	sbf_ok(SB("create", src, "--image", SBF_IMAGE, "--network", "on"), "create");
	start_counter(src);
	json_t *doc = sbf_run_json(SB("fork", src, dst, "--json"), "fork");
	cr_assert(json_is_true(json_object_get(doc, "network")));
	json_decref(doc);
	json_t *a = sbf_run_json(SB("inspect", src, "--json"), "inspect");
	json_t *b = sbf_run_json(SB("inspect", dst, "--json"), "inspect");
	cr_assert(str(a, "address")[0] && str(b, "address")[0]);
	cr_assert_str_neq(str(a, "address"), str(b, "address"));
	json_decref(a);
	json_decref(b);
	assert_counts_past(dst, count_of(dst) + 3);
	/* both reach the test host */
	char *get = nt_http_get_cmd(&host);
	char *out = sbf_sh(&f, NULL, src, get, NULL);
	cr_assert(strstr(out, NT_MARKER), "the source lost its network: %s", out);
	free(out);
	out = sbf_sh(&f, NULL, dst, get, NULL);
	cr_assert(strstr(out, NT_MARKER), "no answer from the test host in the fork: %s", out);
	free(out);
	free(get);
}
