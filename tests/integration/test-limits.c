/* Resource limits with real runsc: a process that asks for more memory than
 * its sandbox has fails inside (RLIMIT_AS, docs/security.md "Memory") while
 * the sandbox, its other processes and its sessions carry on (and services
 * carry the limit too); what runsc
 * says when a call fails stays in the log. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "limits");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(limits, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* What session id of sandbox name printed after input was sent, until its
 * prompt was back (up to 20 s; malloc'd). */
static char *session_say(const char *name, const char *id, const char *input)
{
	struct tu_run r = SB("session", "send", name, id, "--", input);
	char off[32];

	cr_assert_eq(r.status, 0, "session send: %s", r.err);
	snprintf(off, sizeof(off), "%lld", atoll(r.out));
	tu_run_free(&r);
	r = SB("session", "read", name, id, "--since", off, "--max-wait", "20", "--format", "clean");
	cr_assert_eq(r.status, 0, "session read: %s", r.err);
	char *out = strdup(r.out);
	tu_run_free(&r);
	return out;
}

static void assert_running(const char *name, const char *when)
{
	struct tu_run r = SB("inspect", name);

	cr_assert(r.status == 0 && strstr(r.out, "running"), "%s: %s%s", when, r.out, r.err);
	tu_run_free(&r);
}

Test(limits, a_greedy_process_fails_inside_and_the_sandbox_lives_on)
{
	sbf_bash_image(&f);
	sbf_ok(SB("create", "mem", "--image", SBF_BASH_IMAGE, "--permanent", "--memory", "256m"), "create");
	sbf_ok(SB("session", "start", "mem", "s1"), "session start");
	char *said = session_say("mem", "s1", "echo up-$((20+1))");
	cr_assert(strstr(said, "up-21"), "the session runs: %s", said);
	free(said);
	/* every process carries the address-space limit: twice the memory */
	struct tu_run r = SB("exec", "mem", "--", "sh", "-c", "ulimit -v");
	cr_assert(r.status == 0 && strstr(r.out, "524288"), "RLIMIT_AS of an exec: %s%s", r.out, r.err);
	tu_run_free(&r);
	/* bash starts under it, and one that asks for 1 GiB is refused inside */
	r = SB("exec", "mem", "--", "bash", "-c", "echo bash-ok");
	cr_assert(r.status == 0 && strstr(r.out, "bash-ok"), "bash under the limit: %s%s", r.out, r.err);
	tu_run_free(&r);
	r = SB("exec", "mem", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1G", "count=1");
	cr_assert(r.status != 0 && r.status != 125, "1 GiB in a 256 MiB sandbox: status %d, %s", r.status, r.err);
	cr_assert(!strstr(r.err, "urpc") && !strstr(r.err, "runsc"), "raw runsc text reached the user: %s", r.err);
	tu_run_free(&r);
	assert_running("mem", "after the greedy exec");
	r = SB("exec", "mem", "--", "echo", "still-here");
	cr_assert(r.status == 0 && strstr(r.out, "still-here"), "another exec: %s%s", r.out, r.err);
	tu_run_free(&r);
	/* the same from the session: its shell survives the failed allocation */
	said = session_say("mem", "s1", "dd if=/dev/zero of=/dev/null bs=1G count=1; echo rc-$?-end");
	cr_assert(strstr(said, "rc-1-end"), "dd in the session: %s", said);
	free(said);
	said = session_say("mem", "s1", "echo alive-$((40+2))");
	cr_assert(strstr(said, "alive-42"), "the session survived: %s", said);
	free(said);
	assert_running("mem", "after the session's greedy command");
	sbf_ok(SB("session", "kill", "mem", "s1"), "session kill");
}

static int file_there(void *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

Test(limits, the_default_memory_gives_twice_its_address_space)
{
	/* the service's processes too */
	sbf_ok(SB("create", "free", "--image", SBF_IMAGE, "--permanent", "--service",
		  "ulimit -v > /workspace/svc-as.tmp && mv /workspace/svc-as.tmp /workspace/svc-as; exec sleep 100000"),
	       "create");
	char *svc = sb_strdupf("%s/sandboxes/free/workspace/svc-as", f.dir), *text = NULL;
	cr_assert(tu_wait_for(file_there, svc, 30000), "the service never wrote its limit");
	cr_assert_eq(sb_fs_read_file(&text, NULL, svc, 64, NULL), 0);
	cr_assert(strstr(text, "2097152"), "RLIMIT_AS of the service: %s", text);
	free(text);
	free(svc);
	struct tu_run r = SB("exec", "free", "--", "sh", "-c", "ulimit -v");
	/* the default --memory is 1g */
	cr_assert(r.status == 0 && strstr(r.out, "2097152"), "RLIMIT_AS without --memory: %s%s", r.out, r.err);
	tu_run_free(&r);
}
