/* gc against real runsc: a create killed half-way, a record deleted by hand,
 * a container that vanished under a running record, dry runs and sandboxes in use. */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/gc.h"
#include "sandbox/record.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "gc");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(gc, .init = setup, .fini = teardown, .timeout = 180);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void create(const char *name, const char *kind)
{
	struct tu_run r = SB("create", name, "--image", SBF_IMAGE, kind);
	cr_assert_eq(r.status, 0, "create %s: %s", name, r.err);
	tu_run_free(&r);
}

static char *box_path(const char *name, const char *rel)
{
	return sb_strdupf("%s/sandboxes/%s/%s", f.dir, name, rel);
}

static void record_of(struct sb_record *rec, const char *name)
{
	cr_assert_eq(sb_record_load(rec, f.root, name, NULL), 0);
}

/* gc through the CLI; returns its JSON findings. */
static json_t *gc(int dry_run)
{
	struct tu_run r = dry_run ? SB("gc", "--dry-run", "--json") : SB("gc", "--json");
	cr_assert_eq(r.status, 0, "gc: %s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert(json_is_array(doc), "gc --json printed: %s", r.out);
	tu_run_free(&r);
	return doc;
}

static int has_finding(json_t *doc, const char *kind, const char *name)
{
	size_t i;
	json_t *it;

	json_array_foreach(doc, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "kind")), kind) &&
		    !strcmp(json_string_value(json_object_get(it, "name")), name))
			return 1;
	return 0;
}

static void assert_gone(const char *name, const char *id)
{
	char *dir = box_path(name, "");
	cr_assert_neq(access(dir, F_OK), 0, "%s is gone", dir);
	cr_assert_not(sbf_mounted_below(dir), "nothing mounted below %s", dir);
	cr_assert_not(sbf_runsc_has(&f, id), "runsc no longer lists %s", id);
	cr_assert_not(sbf_cgroup_exists(id), "no cgroup left for %s", id);
	free(dir);
}

/* A runsc wrapper that blocks "start" on a FIFO nobody writes, after saying
 * where it is: the test then kills sandbench in the middle of create. */
static char *blocking_runsc(void)
{
	char *wrapper = sb_strdupf("%s/blocking-runsc", f.dir);
	char *script = sb_strdupf("#!/bin/sh\n"
				  "for a; do case \"$a\" in start) echo $$ > '%s/at-start'; read x < '%s/never';; esac; done\n"
				  "exec runsc \"$@\"\n", f.dir, f.dir);
	char *fifo = sb_strdupf("%s/never", f.dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(sb_fs_write_atomic(wrapper, script, strlen(script), 0755, NULL), 0);
	free(script);
	free(fifo);
	return wrapper;
}

static int at_start(void *arg)
{
	char *text = NULL;
	int ok = sb_fs_read_file(&text, NULL, arg, 64, NULL) == 0 && atoi(text) > 0;
	free(text);
	return ok;
}

Test(gc, create_killed_half_way_leaves_nothing_after_gc)
{
	char *wrapper = blocking_runsc(), *marker = sb_strdupf("%s/at-start", f.dir);
	char *bin = tu_buildpath("sandbench");
	struct sb_record rec;
	pid_t pid = fork();

	if (pid == 0) {
		setenv("SANDBENCH_RUNSC", wrapper, 1);
		execl(bin, bin, "--root", f.dir, "create", "half", "--image", SBF_IMAGE, "--temporary", (char *)NULL);
		_exit(127);
	}
	cr_assert(tu_wait_for(at_start, marker, 60000), "create reached runsc start");
	char *text;
	cr_assert_eq(sb_fs_read_file(&text, NULL, marker, 64, NULL), 0);
	kill(pid, SIGKILL);
	kill(atoi(text), SIGKILL);
	free(text);
	waitpid(pid, NULL, 0);

	record_of(&rec, "half");
	cr_assert_eq(rec.state, SB_STATE_CREATED, "killed while starting: the record says created");
	cr_assert(sbf_runsc_has(&f, rec.id), "runsc made the container before the kill");
	json_t *doc = gc(0);
	cr_assert(has_finding(doc, "sandbox", "half"));
	json_decref(doc);
	assert_gone("half", rec.id);
	sb_record_clear(&rec);
	free(wrapper);
	free(marker);
	free(bin);
}

Test(gc, record_deleted_by_hand_takes_its_container_and_disk_along)
{
	struct sb_record rec;
	char *json;

	create("lost", "--temporary");
	record_of(&rec, "lost");
	json = box_path("lost", "sandbox.json");
	cr_assert_eq(unlink(json), 0);
	json_t *doc = gc(0);
	cr_assert(has_finding(doc, "container", rec.id), "the container nobody accounts for is named");
	cr_assert(has_finding(doc, "sandbox", "lost"));
	json_decref(doc);
	assert_gone("lost", rec.id);
	sb_record_clear(&rec);
	free(json);
}

Test(gc, dry_run_changes_nothing)
{
	struct sb_record rec;
	char *json, *dir;

	create("dry", "--temporary");
	record_of(&rec, "dry");
	json = box_path("dry", "sandbox.json");
	dir = box_path("dry", "");
	cr_assert_eq(unlink(json), 0);
	json_t *doc = gc(1);
	cr_assert(has_finding(doc, "container", rec.id));
	json_decref(doc);
	cr_assert_eq(access(dir, F_OK), 0, "the directory is still there");
	cr_assert(sbf_runsc_has(&f, rec.id), "the container is still there");
	doc = gc(0);
	json_decref(doc);
	assert_gone("dry", rec.id);
	sb_record_clear(&rec);
	free(json);
	free(dir);
}

Test(gc, vanished_container_stops_a_permanent_sandbox_that_restore_cold_starts)
{
	struct sb_record rec;
	char *file = box_path("keep", "workspace/notes.txt");

	create("keep", "--permanent");
	record_of(&rec, "keep");
	cr_assert_eq(tu_sh("echo precious > %s", file), 0);
	cr_assert_eq(tu_sh("runsc --root=%s/runsc kill %s KILL; runsc --root=%s/runsc delete -force %s",
			   f.dir, rec.id, f.dir, rec.id), 0);
	sb_record_clear(&rec);
	json_t *doc = gc(0);
	cr_assert(has_finding(doc, "sandbox", "keep"));
	json_decref(doc);
	record_of(&rec, "keep");
	cr_assert_eq(rec.state, SB_STATE_STOPPED, "a sandbox whose runtime is gone is stopped, not broken");
	cr_assert(strstr(rec.reason, "died") && strstr(rec.reason, "restore"), "the reason says why: %s", rec.reason);
	cr_assert_eq(tu_sh("grep -q precious %s", file), 0, "the workspace survives gc");
	/* a second gc finds nothing more to do for it */
	doc = gc(0);
	cr_assert_not(has_finding(doc, "sandbox", "keep"));
	json_decref(doc);
	sb_record_clear(&rec);
	/* and no verb is stranded: restore cold-starts it from its disk */
	struct tu_run r = tu_sandbench(f.dir, NULL, "restore", "keep", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, NULL, "exec", "keep", "--", "cat", "/workspace/notes.txt", NULL);
	cr_assert_str_eq(r.out, "precious\n", "%s", r.err);
	tu_run_free(&r);
	free(file);
}

Test(gc, sandbox_in_use_is_left_alone)
{
	char *lock = box_path("busy", "lock"), *json = box_path("busy", "sandbox.json");

	create("busy", "--temporary");
	cr_assert_eq(unlink(json), 0);
	int fd = open(lock, O_RDWR);
	cr_assert_eq(flock(fd, LOCK_SH), 0, "as an exec in it would");
	json_t *doc = gc(0);
	close(fd);
	size_t i;
	json_t *it;
	int skipped = 0;
	json_array_foreach(doc, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "name")), "busy"))
			skipped = strstr(json_string_value(json_object_get(it, "action")), "in use") != NULL;
	cr_assert(skipped, "gc says the sandbox was skipped as in use");
	json_decref(doc);
	char *dir = box_path("busy", "");
	cr_assert_eq(access(dir, F_OK), 0);
	free(dir);
	free(lock);
	free(json);
}
