/* The workbench end to end: the real sandbench on a pty, read back through
 * libvterm, against real sandboxes (runsc) in a scratch root. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "harness.h"
#include "tuitest.h"
#include "image/bootstrap.h"
#include "base/root.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "session/session.h"
#include "testutil.h"

char *root_dir;
struct tui *running;          /* ended by the teardown when a test failed half-way */
static char *registry_stop;   /* the command that stops a test's registry */
static char *gate_dir;        /* a runsc wrapper whose start waits at a FIFO, and the FIFO */
static char *host_dir;        /* host files a test points a sandbox's symlinks at */
char image[SB_DIGEST_STR_LEN];   /* the bootstrapped image, pinned */

static void setup(void)
{
	struct sb_root *root;
	/* named as the default image: the Images pane lists it so */
	struct sb_bootstrap_opts opts = { .kind = SB_BOOTSTRAP_BUSYBOX, .name = SB_IMAGE_DEFAULT_NAME };
	struct sb_bootstrap_result res;
	struct sb_error err;

	root_dir = tu_tempdir("tui");
	cr_assert_not_null(root_dir);
	cr_assert_eq(sb_root_open(&root, root_dir, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_image_bootstrap(&res, root, &opts, &err), 0, "%s", err.msg);
	snprintf(image, sizeof(image), "%s", res.image.digest);
	sb_root_close(root);
}


static int file_exists(void *path)
{
	return access(path, F_OK) == 0;
}

static int is_running(void *name)
{
	char *state = cli_state(name);
	int up = state && !strcmp(state, "running");

	free(state);
	return up;
}

/* The create held at the gate (sandbox "late") goes on, and is running when
 * this returns 1. The teardown calls it too, for a test that failed before it
 * opened the gate. */
static int open_gate(int timeout_ms)
{
	char *marker = sb_strdupf("%s/at-start", gate_dir), *gate = sb_strdupf("%s/gate", gate_dir);
	/* non-blocking: opening fails unless the wrapper waits at the gate */
	int fd = access(marker, F_OK) == 0 ? open(gate, O_WRONLY | O_NONBLOCK) : -1;
	int up = fd >= 0 && write(fd, "go\n", 3) == 3 && tu_wait_for(is_running, "late", timeout_ms);

	if (fd >= 0)
		close(fd);
	free(marker);
	free(gate);
	return up;
}

int tui_refill_ended(void *root)
{
	return !sb_pool_refilling(root);
}

static void teardown(void)
{
	struct sb_root *root;

	if (running)
		tui_finish(running, 0);
	if (registry_stop) {
		tu_sh("%s", registry_stop);
		free(registry_stop);
		registry_stop = NULL;
	}
	if (gate_dir) {
		open_gate(60000);
		tu_remove(gate_dir);
		free(gate_dir);
		gate_dir = NULL;
	}
	if (host_dir) {
		tu_remove(host_dir);
		free(host_dir);
		host_dir = NULL;
	}
	struct sb_sandbox_info *list;
	size_t n;

	if (sb_root_open(&root, root_dir, NULL) == 0) {
		/* a warm pool's detached refill ends by itself: then its members go */
		tu_wait_for(tui_refill_ended, root, WAIT);
		sb_pool_remove(NULL, root, NULL, NULL);
		if (sb_sandbox_list(&list, &n, root, NULL) == 0) {
			for (size_t i = 0; i < n; i++)
				sb_sandbox_remove(root, list[i].rec.name, SB_REMOVE_FORCE, NULL);
			sb_sandbox_list_free(list, n);
		}
		sb_root_close(root);
	}
	tu_remove(root_dir);
	free(root_dir);
}

TestSuite(tui, .init = setup, .fini = teardown, .timeout = 180);

void cli_ok(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, a, b, c, d, e, f, NULL);

	cr_assert_eq(r.status, 0, "sandbench %s %s: %s", a, b ? b : "", r.err);
	tu_run_free(&r);
}

int cli_status(const char *a, const char *b)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, a, b, NULL);
	int status = r.status;

	tu_run_free(&r);
	return status;
}

char *cli_state(const char *name)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, "inspect", name, "--json", NULL);
	char *state = NULL, *p = r.out ? strstr(r.out, "\"state\": \"") : NULL;

	if (p)
		state = strndup(p + 10, strcspn(p + 10, "\""));
	tu_run_free(&r);
	return state;
}

struct tui *open_tui(const char *extra, const char *const *env)
{
	const char *argv[] = { "--root", root_dir, extra, NULL };
	struct tui *t = tui_start(40, 120, argv, env);

	cr_assert_not_null(t);
	running = t;
	cr_assert_eq(tui_wait_text(t, "Sandboxes", WAIT), 0, "the workbench did not draw");
	return t;
}

void quit(struct tui *t)
{
	tui_send(t, "q");
	running = NULL;
	cr_assert_eq(tui_finish(t, WAIT), 0);
}

Test(tui, panes_list_real_sandboxes)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	cli_ok("create", "beta", "--image", image, "--permanent", "--owner=plugin:search");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "alpha", "temporary", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "beta", "permanent", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "beta", "plugin:search", WAIT), 0);
	{
		char short_digest[16];
		snprintf(short_digest, sizeof(short_digest), "@%.12s", image + 7);
		cr_assert_eq(tui_wait_row(t, "alpha", short_digest, WAIT), 0, "image with its short digest");
	}
	/* the mounts pane shows the exchange folder of both, read-write */
	tui_send(t, "3");
	cr_assert_eq(tui_wait_row(t, "/exchange", "rw", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "beta", "/exchange", WAIT), 0);
	/* the images pane: the image and who uses it */
	tui_send(t, "2");
	cr_assert_eq(tui_wait_row(t, "sandbench/default", "alpha, beta", WAIT), 0);
	/* help is generated from the key table and explains activity */
	tui_send(t, "?");
	cr_assert_eq(tui_wait_text(t, "In the panes", WAIT), 0);
	tui_send(t, "G");
	cr_assert_eq(tui_wait_text(t, "What counts as activity", WAIT), 0);
	tui_send(t, "\x1b");
	cr_assert_eq(tui_wait_gone(t, "What counts as activity", WAIT), 0);
	quit(t);
}

/* The MEM cell (the last but one: MEM, TASKS) of the first row starting with
 * prefix (the details pane also names the sandbox, but not at the start of a row). */
static void mem_cell(struct tui *t, const char *prefix, char *out, size_t size)
{
	const char *screen = tui_screen(t);

	out[0] = '\0';
	while (screen && strncmp(screen + strspn(screen, " "), prefix, strlen(prefix)) != 0)
		screen = strchr(screen, '\n') ? strchr(screen, '\n') + 1 : NULL;
	if (!screen)
		return;
	size_t len = strcspn(screen, "\n");
	for (int cell = 0; cell < 2; cell++) {
		while (len > 0 && screen[len - 1] == ' ')
			len--;
		size_t start = len;
		while (start > 0 && screen[start - 1] != ' ')
			start--;
		if (cell == 1)
			snprintf(out, size, "%.*s", (int)(len - start), screen + start);
		len = start;
	}
}

/* The list row of a sandbox shows memory in use against its limit: "14M/512M". */
static int shows_use(struct tui *t, const char *prefix, const char *limit)
{
	char cell[32], want[40];

	mem_cell(t, prefix, cell, sizeof(cell));
	snprintf(want, sizeof(want), "/%s", limit);
	return cell[0] >= '0' && cell[0] <= '9' && strstr(cell, want) && strchr("KM", cell[strcspn(cell, "/") - 1]);
}

Test(tui, memory_column_shows_use_of_running_sandboxes)
{
	cli_ok("create", "memtest", "--image", image, "--memory=512m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "^memtest ", "running", WAIT), 0);
	/* the limit until runsc has reported, then what is in use (well under it) */
	cr_assert_eq(tui_wait_cond(t, shows_use, "memtest ", "512M", WAIT), 0, "the MEM column shows no use");
	quit(t);
}

Test(tui, filter_and_sort)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	cli_ok("create", "beta", "--image", image, "--permanent", "--owner=plugin:search");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "beta", "running", WAIT), 0);
	cr_assert_eq(tui_wait_above(t, "alpha ", "beta ", WAIT), 0, "sorted by name");
	tui_send(t, "O");   /* reverse */
	cr_assert_eq(tui_wait_text(t, "NAME▼", WAIT), 0);
	cr_assert_eq(tui_wait_above(t, "beta ", "alpha ", WAIT), 0, "reversed");
	tui_send(t, "O");
	/* live filter on the owner */
	tui_send(t, "/plugin");
	cr_assert_eq(tui_wait_gone(t, "alpha ", WAIT), 0);
	cr_assert_neq(tui_find_row(t, "beta "), -1);
	tui_send(t, "\x1b");   /* Esc clears it */
	cr_assert_eq(tui_wait_text(t, "alpha ", WAIT), 0);
	/* sort by kind: permanent before temporary */
	tui_send(t, "oo");
	cr_assert_eq(tui_wait_text(t, "KIND▲", WAIT), 0);
	cr_assert_eq(tui_wait_above(t, "beta ", "alpha ", WAIT), 0, "permanent before temporary");
	quit(t);
}

/* What other processes change (the CLI in another terminal) shows up by
 * itself: the library counts every change, the workbench polls the counter. */
Test(tui, changes_by_other_processes_show_up)
{
	struct tui *t = open_tui(NULL, NULL);

	cli_ok("create", "ext", "--image", image, "--temporary=10m", NULL);
	cr_assert_eq(tui_wait_row(t, "^ext ", "running", WAIT), 0, "%s", tui_screen(t));
	cli_ok("stop", "ext", NULL, NULL, NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^ext ", "stopped", WAIT), 0, "%s", tui_screen(t));
	cli_ok("rm", "ext", NULL, NULL, NULL, NULL);
	cr_assert_eq(tui_wait_gone(t, "ext ", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "2");
	cr_assert_eq(tui_wait_text(t, "[2 Images (1)]", WAIT), 0);
	cli_ok("image", "bootstrap", "--busybox", "--quiet", "--name", "sbtest/other:1");
	cr_assert_eq(tui_wait_text(t, "[2 Images (2)]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "sbtest/other:1", WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

Test(tui, create_through_the_form)
{
	struct tui *t = open_tui(NULL, NULL);
	char *state;

	tui_send(t, "c");
	cr_assert_eq(tui_wait_text(t, "Create a sandbox", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "sandbench/default:latest", WAIT), 0, "the image comes from the Images list");
	tui_send(t, "gamma");
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_gone(t, "Create a sandbox", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "gamma", "running", 60000), 0);
	state = cli_state("gamma");
	cr_assert_str_eq(state ? state : "", "running");
	free(state);
	quit(t);
}

/* The form's host mounts are the CLI's syntax (one parser): a malformed one
 * is refused with its message in the form, a good one reaches the sandbox. */
Test(tui, create_form_mounts)
{
	char share[] = "/tmp/sbtui-share-XXXXXX", text[600];
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_not_null(mkdtemp(share));
	tui_send(t, "c");
	cr_assert_eq(tui_wait_text(t, "Create a sandbox", WAIT), 0);
	tui_send(t, "mnt");
	for (int i = 0; i < 6; i++)
		tui_send(t, "\t");
	tui_send(t, "nocolon\r");
	cr_assert_eq(tui_wait_text(t, "mount 'nocolon' is not HOST:PATH", WAIT), 0);
	for (int i = 0; i < 7; i++)
		tui_send(t, "\x7f");
	snprintf(text, sizeof(text), "%s:/data:ro\r", share);
	tui_send(t, text);
	cr_assert_eq(tui_wait_gone(t, "Create a sandbox", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "mnt", "running", 60000), 0);
	struct tu_run r = tu_sandbench(root_dir, NULL, "inspect", "mnt", "--json", NULL);
	cr_assert(r.out && strstr(r.out, "\"/data\""), "the mount reached the sandbox: %s", r.out);
	tu_run_free(&r);
	quit(t);
	cli_ok("rm", "mnt", NULL, NULL, NULL, NULL);
	rmdir(share);
}

Test(tui, quitting_says_which_operations_go_on)
{
	/* runsc start waits at a gate that opens after the workbench quit */
	gate_dir = tu_tempdir("tui-gate");
	char *wrapper = sb_strdupf("%s/runsc", gate_dir), *gate = sb_strdupf("%s/gate", gate_dir);
	char *marker = sb_strdupf("%s/at-start", gate_dir);
	char *script = sb_strdupf("#!/bin/sh\n"
				  "for a; do case \"$a\" in start) : > '%s'; read x < '%s';; esac; done\n"
				  "exec runsc \"$@\"\n", marker, gate);
	cr_assert_eq(mkfifo(gate, 0600), 0);
	cr_assert_eq(sb_fs_write_atomic(wrapper, script, strlen(script), 0755, NULL), 0);
	char *env_runsc = sb_strdupf("SANDBENCH_RUNSC=%s", wrapper);
	const char *env[] = { env_runsc, NULL };
	struct tui *t = open_tui(NULL, env);

	tui_send(t, "c");
	cr_assert_eq(tui_wait_text(t, "Create a sandbox", WAIT), 0);
	tui_send(t, "late\r");
	cr_assert(tu_wait_for(file_exists, marker, 60000), "the create reached runsc start");
	tui_send(t, "q");
	cr_assert_eq(tui_wait_text(t, "still running in the background: creating late", WAIT), 0, "%s",
		     tui_screen(t));
	running = NULL;
	cr_assert_eq(tui_finish(t, WAIT), 0);

	/* and it does go on: the sandbox comes up once runsc may start it */
	cr_assert(open_gate(60000), "the create finished after the workbench quit");
	free(wrapper), free(gate), free(marker), free(script), free(env_runsc);
}

Test(tui, attached_shell_runs_commands)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[1:alpha]", WAIT), 0);
	tui_send(t, "echo hel''lo-$((6*7))\r");
	cr_assert_eq(tui_wait_text(t, "hello-42", WAIT), 0);
	/* Shift-PgUp scrolls back into what went off the screen */
	tui_send(t, "seq 1 100\r");
	cr_assert_eq(tui_wait_line_start(t, "100", WAIT), 0);
	cr_assert_eq(tui_find_row(t, "\n45 "), -1);
	tui_send(t, "\x1b[5;2~\x1b[5;2~");
	cr_assert_eq(tui_wait_text(t, "lines back", WAIT), 0);
	cr_assert_eq(tui_wait_line_start(t, "45 ", WAIT), 0);
	tui_send(t, "\x1b[6;2~\x1b[6;2~");
	cr_assert_eq(tui_wait_gone(t, "lines back", WAIT), 0);
	tui_send(t, "clear\r");
	cr_assert_eq(tui_wait_gone(t, "hello-42", WAIT), 0);
	tui_send(t, "echo hel''lo-$((6*7))\r");
	cr_assert_eq(tui_wait_text(t, "hello-42", WAIT), 0);
	/* the prefix key gives the keyboard back to the panes; the shell stays */
	tui_send(t, "\x07");
	cr_assert_eq(tui_wait_row(t, "alpha*", "running", WAIT), 0);
	/* ] returns to it, with its screen intact */
	tui_send(t, "]");
	cr_assert_eq(tui_wait_text(t, "hello-42", WAIT), 0);
	tui_send(t, "exit\r");
	cr_assert_eq(tui_wait_text(t, "shell closed (exit status 0)", WAIT), 0);
	{
		char *state = cli_state("alpha");
		cr_assert_str_eq(state ? state : "", "running", "closing a shell never disturbs the sandbox");
		free(state);
	}
	quit(t);
}

static void exec_ok(const char *name, const char *script)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, "exec", name, "--", "sh", "-c", script, NULL);

	cr_assert_eq(r.status, 0, "exec in %s: %s", name, r.err);
	tu_run_free(&r);
}

/* A sandbox's files are its own: the workbench (root, on the host) reads its
 * /etc/passwd inside its root only. A passwd linked to /proc/self/fd/0 once
 * made the workbench read its own terminal and freeze; one linked to a host
 * file made it read that file. */
Test(tui, hostile_passwd_neither_freezes_nor_reaches_the_host)
{
	/* a host file naming a shell that announces itself, were it chosen */
	host_dir = tu_tempdir("tui-host");
	char *host_passwd = sb_path_join(host_dir, "passwd"), *spoof;
	const char *evil = "root:x:0:0:root:/root:/bin/evilsh\n";
	cr_assert_eq(sb_fs_write_atomic(host_passwd, evil, strlen(evil), 0644, NULL), 0);
	cr_assert_eq(tu_sh("grep -q evilsh '%s'", host_passwd), 0);

	cli_ok("create", "hostile", "--image", image, "--temporary=10m", NULL);
	cli_ok("create", "spoof", "--image", image, "--temporary=10m", NULL);
	exec_ok("hostile", "ln -sf /proc/self/fd/0 /etc/passwd");
	spoof = sb_strdupf("printf '#!/bin/sh\\necho EVIL-SHELL-RAN\\nexec /bin/sh \"$@\"\\n' > /bin/evilsh && "
			   "chmod 755 /bin/evilsh && ln -sf '%s' /etc/passwd", host_passwd);
	exec_ok("spoof", spoof);

	struct tui *t = open_tui(NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "^hostile ", "running", WAIT), 0);
	cr_assert_eq(tui_wait_above(t, "hostile ", "spoof ", WAIT), 0);
	/* the first row is selected: Enter attaches a shell, which says why it is /bin/sh */
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[1:hostile]", WAIT), 0, "no shell:\n%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "hostile: using /bin/sh: '/etc/passwd'", WAIT), 0, "%s", tui_screen(t));
	/* the shell runs (what it makes of its own passwd, a link to its terminal, is its business) */
	cr_assert_eq(tui_wait_text(t, "built-in shell", WAIT), 0, "%s", tui_screen(t));

	/* not frozen, and still refreshing: a sandbox the CLI creates now shows up */
	tui_send(t, "\x07");
	cr_assert_eq(tui_wait_row(t, "hostile*", "running", WAIT), 0);
	cli_ok("create", "zafter", "--image", image, "--temporary=10m", NULL);
	cr_assert_eq(tui_wait_row(t, "^zafter ", "running", WAIT), 0, "%s", tui_screen(t));

	/* spoof's passwd points at the host file: its shell must not be chosen */
	tui_send(t, "j");
	cr_assert_eq(tui_wait_row(t, "Name", "spoof", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[2:spoof]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "spoof: using /bin/sh: '/etc/passwd'", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "echo zero=$0-$((6*8))\r");
	cr_assert_eq(tui_wait_text(t, "zero=/bin/sh-48", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "EVIL-SHELL-RAN"), -1, "the host's file chose the shell:\n%s", tui_screen(t));
	tui_send(t, "\x07");
	quit(t);

	for (const char *const *n = (const char *const[]){ "hostile", "spoof", "zafter", NULL }; *n; n++)
		cli_ok("rm", *n, NULL, NULL, NULL, NULL);
	free(host_passwd);
	free(spoof);
}

Test(tui, stop_closes_attached_shells_first)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);
	char *state;

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[1:alpha]", WAIT), 0);
	tui_send(t, "\x07");   /* back to the panes, the shell stays attached */
	cr_assert_eq(tui_wait_row(t, "alpha*", "running", WAIT), 0);
	tui_send(t, "x");
	cr_assert_eq(tui_wait_text(t, "1 shell(s) are attached to alpha", WAIT), 0);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "closed 1 attached shell(s) before stopping", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "alpha", "stopped", 60000), 0);
	state = cli_state("alpha");
	cr_assert_str_eq(state ? state : "", "stopped");
	free(state);
	/* and back */
	tui_send(t, "r");
	cr_assert_eq(tui_wait_row(t, "alpha", "running", 60000), 0);
	quit(t);
}

Test(tui, pause_key_pauses_and_resumes)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);
	char *state;

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "z");
	/* the job's message, then the row (the event log's lines name both states) */
	cr_assert_eq(tui_wait_text(t, "paused alpha (frozen", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "alpha", "paused", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "State", "paused", WAIT), 0, "details: %s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "yes (in RAM, frozen", WAIT), 0, "details: %s", tui_screen(t));
	state = cli_state("alpha");
	cr_assert_str_eq(state ? state : "", "paused");
	free(state);
	tui_send(t, "z");
	cr_assert_eq(tui_wait_text(t, "resumed alpha", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "State", "running", WAIT), 0, "details: %s", tui_screen(t));
	state = cli_state("alpha");
	cr_assert_str_eq(state ? state : "", "running");
	free(state);
	quit(t);
}

Test(tui, expire_now_applies_the_expiry_action)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "E");   /* expiry action rm: it goes */
	cr_assert_eq(tui_wait_text(t, "alpha: removed", 60000), 0);
	cr_assert_eq(cli_status("inspect", "alpha"), 3);
	quit(t);
}

Test(tui, resize_reflows)
{
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_text(t, "Details", WAIT), 0);
	tui_resize(t, 24, 80);   /* too small for the details pane */
	cr_assert_eq(tui_wait_gone(t, "Details", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "Sandboxes", WAIT), 0);
	tui_resize(t, 10, 40);
	cr_assert_eq(tui_wait_text(t, "too small", WAIT), 0);
	tui_resize(t, 40, 120);
	cr_assert_eq(tui_wait_text(t, "Details", WAIT), 0);
	quit(t);
}

Test(tui, resize_reaches_an_attached_shell)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "[1:alpha]", WAIT), 0);
	/* the shell gets the rows between the title line and the event log */
	tui_send(t, "stty size\r");
	cr_assert_eq(tui_wait_line_start(t, "31 120", WAIT), 0);
	tui_resize(t, 30, 100);
	tui_send(t, "clear; stty size\r");
	cr_assert_eq(tui_wait_line_start(t, "22 100", WAIT), 0);
	tui_send(t, "\x07");
	quit(t);
}

Test(tui, inspect_touch_extend)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "i");
	cr_assert_eq(tui_wait_text(t, "alpha: sandbox.json", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "\"idle_timeout\": 600", WAIT), 0);
	tui_send(t, "\x1b");
	cr_assert_eq(tui_wait_gone(t, "sandbox.json", WAIT), 0);
	tui_send(t, "t");
	cr_assert_eq(tui_wait_text(t, "touched alpha", WAIT), 0);
	tui_send(t, "+");
	cr_assert_eq(tui_wait_text(t, "extended the idle timeout of alpha", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "Idle timeout", "1h10m", WAIT), 0);
	quit(t);
}

Test(tui, remove_asks_then_removes)
{
	cli_ok("create", "beta", "--image", image, "--permanent", NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "beta", "running", WAIT), 0);
	tui_send(t, "d");
	cr_assert_eq(tui_wait_text(t, "Remove sandbox 'beta'?", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "PERMANENT workspace", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "Kept:", WAIT), 0);
	cr_assert_eq(tui_wait_text(t, "the exchange folder", WAIT), 0);
	tui_send(t, "n");
	cr_assert_eq(tui_wait_gone(t, "Remove sandbox", WAIT), 0);
	cr_assert_eq(cli_status("inspect", "beta"), 0, "cancel keeps it");
	tui_send(t, "d");
	cr_assert_eq(tui_wait_text(t, "Remove sandbox 'beta'?", WAIT), 0);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "beta: removed", 60000), 0);
	cr_assert_eq(cli_status("inspect", "beta"), 3, "gone");
	quit(t);
}

Test(tui, readonly_refuses_changes)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	const char *argv_extra = "--readonly";
	const char *argv[] = { "--root", root_dir, "tui", argv_extra, NULL };
	struct tui *t = tui_start(40, 120, argv, NULL);
	running = t;
	char *state;

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "x");
	cr_assert_eq(tui_wait_text(t, "read-only: 'stop' is refused", WAIT), 0);
	tui_send(t, "c");
	cr_assert_eq(tui_wait_text(t, "read-only: 'create' is refused", WAIT), 0);
	cr_assert_eq(tui_find_row(t, "Create a sandbox"), -1);
	/* the command line and the marks obey it too */
	tui_send(t, ":rm alpha\r");
	cr_assert_eq(tui_wait_text(t, "read-only: 'remove' is refused", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, " x");
	cr_assert_eq(tui_wait_text(t, "read-only: 'stop' is refused", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "marked sandbox"), -1);
	state = cli_state("alpha");
	cr_assert_str_eq(state ? state : "", "running");
	free(state);
	quit(t);
}

Test(tui, german_strings)
{
	char *mo_dir = sb_strdupf("%s/locale/de/LC_MESSAGES", root_dir), *po = tu_srcpath("po/de.po");
	char *env_dir = sb_strdupf("SANDBENCH_LOCALEDIR=%s/locale", root_dir);

	cr_assert_eq(sb_fs_mkdirs(mo_dir, 0755, NULL), 0);
	cr_assert_eq(tu_sh("msgfmt -o '%s/sandbench.mo' '%s'", mo_dir, po), 0);
	const char *env[] = { env_dir, "LANGUAGE=de", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", NULL };
	const char *argv[] = { "--root", root_dir, NULL };
	struct tui *t = tui_start(40, 120, argv, env);
	running = t;
	cr_assert_eq(tui_wait_text(t, "Abbilder", WAIT), 0, "the Images pane in German");
	cr_assert_eq(tui_wait_text(t, "Ereignisse", WAIT), 0, "the event log in German");
	quit(t);
	free(mo_dir);
	free(po);
	free(env_dir);
}

Test(tui, monochrome_terminal)
{
	const char *env[] = { "TERM=xterm-mono", NULL };
	struct tui *t = open_tui(NULL, env);

	cr_assert_eq(tui_wait_text(t, "q quit", WAIT), 0);
	tui_send(t, "?");
	cr_assert_eq(tui_wait_text(t, "In the panes", WAIT), 0);
	tui_send(t, "q");
	cr_assert_eq(tui_wait_gone(t, "In the panes", WAIT), 0);
	quit(t);
}

Test(tui, pull_remove_and_prune_images)
{
	char *work = tu_tempdir("tuireg"), *images = sb_path_join(work, "images"), *regdir = sb_path_join(work, "registry");
	char *mk = tu_srcpath("tests/fixtures/make-images.sh"), *reg = tu_srcpath("tests/fixtures/registry.sh");
	char *port, ref[128], keys[160];

	cr_assert_eq(tu_sh("sh %s %s >/dev/null", mk, images), 0);
	port = tu_sh_out("%s start %s", reg, regdir);
	registry_stop = sb_strdupf("%s stop %s", reg, regdir);
	cr_assert(port && atoi(port) > 0, "docker-registry did not start");
	cr_assert_eq(tu_sh("%s push %s %s/busybox:latest tui/busybox:1", reg, regdir, images), 0);
	snprintf(ref, sizeof(ref), "127.0.0.1:%d/tui/busybox:1", atoi(port));

	struct tui *t = open_tui(NULL, NULL);
	tui_send(t, "2");
	cr_assert_eq(tui_wait_text(t, "[2 Images (1)]", WAIT), 0);
	snprintf(keys, sizeof(keys), "p%s\r", ref);
	tui_send(t, keys);
	cr_assert_eq(tui_wait_text(t, "[2 Images (2)]", 60000), 0, "pulled");
	cr_assert_eq(tui_wait_row(t, ref, "-", WAIT), 0, "listed, used by nobody");
	cr_assert_eq(tui_wait_text(t, "pulled 127.0.0.1:", WAIT), 0, "the event log says so");
	/* it sorts first: remove it (asks first) */
	tui_send(t, "g");
	tui_send(t, "d");
	cr_assert_eq(tui_wait_text(t, "Remove image 127.0.0.1:", WAIT), 0);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "[2 Images (1)]", WAIT), 0);
	/* prune asks first, with its dry run: the removed image's blobs */
	tui_send(t, "P");
	cr_assert_eq(tui_wait_text(t, "Prune unused images?", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "blob(s) no remaining image refers to", WAIT), 0);
	cr_assert_eq(tui_find_row(t, "  0 blob(s)"), -1, "%s", tui_screen(t));
	tui_send(t, "n");
	cr_assert_eq(tui_wait_gone(t, "Prune unused images?", WAIT), 0);
	tui_send(t, "P");
	cr_assert_eq(tui_wait_text(t, "Prune unused images?", WAIT), 0);
	tui_send(t, "y");
	cr_assert_eq(tui_wait_text(t, "prune:", WAIT), 0);
	tui_send(t, "L");
	cr_assert_eq(tui_wait_text(t, " image prune", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	quit(t);

	tu_sh("%s", registry_stop);
	free(registry_stop);
	registry_stop = NULL;
	tu_remove(work);
	free(work);
	free(images);
	free(regdir);
	free(mk);
	free(reg);
	free(port);
}

/* The README's first command: the workbench on an empty root builds the
 * default image (a base of Debian with python3 from the mirror, else busybox,
 * and the shipped recipe on it) and ends with a running sandbox "default"
 * that runs code with the recipe's environment. */
static char *first_dir;

static void first_teardown(void)
{
	struct sb_root *root;

	if (running)
		tui_finish(running, 0);
	running = NULL;
	if (first_dir && sb_root_open(&root, first_dir, NULL) == 0) {
		sb_sandbox_remove(root, "default", SB_REMOVE_FORCE, NULL);
		sb_root_close(root);
	}
	tu_remove(first_dir);
	free(first_dir);
}

TestSuite(first_start, .fini = first_teardown, .timeout = 900);

Test(first_start, empty_root_ends_with_the_default_sandbox_running)
{
	first_dir = tu_tempdir("first-start");
	cr_assert_not_null(first_dir);
	const char *argv[] = { "--root", first_dir, NULL };
	struct tui *t = tui_start(40, 120, argv, NULL);

	cr_assert_not_null(t);
	running = t;
	/* mmdebstrap from the mirror takes a minute or two */
	cr_assert_eq(tui_wait_row(t, "default ", "running", 600000), 0, "no running default sandbox:\n%s",
		     tui_screen(t));
	struct tu_run r = tu_sandbench(first_dir, NULL, "exec", "default", "--", "sh", "-c",
				       "if command -v python3 >/dev/null; then python3 -c 'print(6*7)'; else echo 42; fi",
				       NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "42\n");
	tu_run_free(&r);
	r = tu_sandbench(first_dir, NULL, "exec", "default", "--", "sh", "-c", "echo $LANG", NULL);
	cr_assert_str_eq(r.out, "C.UTF-8\n", "the recipe's ENV: %s", r.err);
	tu_run_free(&r);
	quit(t);
}

/* ---- sessions, the timeline and the diff view (issue 9) ---- */

static struct tu_run agent_send(const char *name, const char *id, const char *text)
{
	return tu_sandbench(root_dir, NULL, "session", "send", name, id, "--", text, NULL);
}

static void agent_send_ok(const char *name, const char *id, const char *text)
{
	struct tu_run r = agent_send(name, id, text);

	cr_assert_eq(r.status, 0, "session send %s: %s", text, r.err);
	tu_run_free(&r);
}

/* The workbench watches a session another process drives, takes it over,
 * types; the agent is refused meanwhile and types again once handed back. */
Test(tui, session_mirrored_taken_over_and_handed_back)
{
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	cli_ok("session", "start", "alpha", NULL, NULL, NULL);
	agent_send_ok("alpha", "0", "echo before-$((3*3))");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	cr_assert_eq(tui_wait_row(t, "Sessions", "1, 1 running", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "4");
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (1)]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "^0 ", "agent", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "watching session 0 of alpha (read-only)", WAIT), 0, "%s", tui_screen(t));
	/* the log's backlog: the earlier line inline after its prompt (no echo), and its output */
	cr_assert_eq(tui_wait_text(t, "/workspace# echo before-$((3*3))", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_line_start(t, "before-9", WAIT), 0, "%s", tui_screen(t));
	{
		/* a watcher, and watching is not input */
		struct tu_run r = tu_sandbench(root_dir, NULL, "session", "ls", "alpha", "--json", NULL);
		cr_assert(r.out && strstr(r.out, "\"watchers\": 1"), "%s", r.out);
		tu_run_free(&r);
	}
	/* live: what the agent sends now appears */
	agent_send_ok("alpha", "0", "echo mirror-$((6*7))");
	cr_assert_eq(tui_wait_text(t, "/workspace# echo mirror-$((6*7))", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_line_start(t, "mirror-42", WAIT), 0, "%s", tui_screen(t));
	/* watching, keys do not reach the session */
	tui_send(t, "x");
	cr_assert_eq(tui_find_row(t, "YOU CONTROL"), -1);

	tui_send(t, "t");
	cr_assert_eq(tui_wait_text(t, "YOU CONTROL session 0 of alpha", WAIT), 0, "%s", tui_screen(t));
	{
		struct tu_run r = agent_send("alpha", "0", "echo refused-line");
		cr_assert_eq(r.status, 11, "the agent's send under human control: %d %s", r.status, r.err);
		cr_assert(r.err && strstr(r.err, "controlled by a human"), "%s", r.err);
		tu_run_free(&r);
	}
	tui_send(t, "echo typed-$((5*5))");
	cr_assert_eq(tui_wait_text(t, "typing: echo typed-$((5*5))", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_line_start(t, "typed-25", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_find_row(t, "refused-line"), -1, "the refused line reached the shell");
	{
		/* the human's line is in the timeline as the human's */
		struct tu_run r = tu_sandbench(root_dir, NULL, "timeline", "alpha", "--json", NULL);
		const char *at = r.out ? strstr(r.out, "echo typed-$((5*5))") : NULL;
		cr_assert(at, "%s", r.out);
		const char *line = at;
		while (line > r.out && line[-1] != '\n')
			line--;
		cr_assert(strstr(line, "\"source\":\"human\"") && strstr(line, "\"source\":\"human\"") < strchr(at, '\n') + 1,
			  "%.*s", (int)strcspn(line, "\n"), line);
		tu_run_free(&r);
	}

	tui_send(t, "\x14");   /* C-t hands back */
	cr_assert_eq(tui_wait_text(t, "watching session 0 of alpha", WAIT), 0, "%s", tui_screen(t));
	agent_send_ok("alpha", "0", "echo back-$((4*4))");
	cr_assert_eq(tui_wait_line_start(t, "back-16", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	cr_assert_eq(tui_wait_gone(t, "watching session 0 of alpha", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "[4 Sessions (1)]", WAIT), 0);
	quit(t);
	cli_ok("rm", "alpha", NULL, NULL, NULL, NULL);
}

/* At the host path prompt for what (NAME:/path): answers host_dir/file, waits
 * for the copy and compares the file with text. */
static void copy_out_to(struct tui *t, const char *what, const char *file, const char *text)
{
	char *dst = sb_path_join(host_dir, file), *got = NULL, *prompt = sb_strdupf("copy %s to the host path:", what);
	char *done = sb_strdupf("copied %s", what), keys[600];
	size_t len = 0;

	cr_assert_eq(tui_wait_text(t, prompt, WAIT), 0, "%s", tui_screen(t));
	snprintf(keys, sizeof(keys), "\x15%s\r", dst);   /* C-u: the path offered goes */
	tui_send(t, keys);
	cr_assert_eq(tui_wait_text(t, done, 60000), 0, "%s", tui_screen(t));
	cr_assert_eq(sb_fs_read_file(&got, &len, dst, 4096, NULL), 0, "no copy at %s", dst);
	cr_assert(len == strlen(text) && !memcmp(got, text, len), "the copy is not the file: %.*s", (int)len, got);
	free(got);
	free(dst);
	free(prompt);
	free(done);
}

/* The timeline pane shows (and follows) what another process runs; the diff
 * view lists what changed, each area apart; a file is copied out of both. */
Test(tui, timeline_follows_and_diff_lists_changes)
{
	host_dir = tu_tempdir("tui-copy");
	cli_ok("create", "beta", "--image", image, "--temporary=10m", NULL);
	exec_ok("beta", "echo tl-$((3*11)); echo made > /0-made; echo ws > /workspace/ws-file");
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "beta", "running", WAIT), 0);
	tui_send(t, "5");
	cr_assert_eq(tui_wait_row(t, "tl-$((3*11))", "exec", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "tl-$((3*11))", "agent", WAIT), 0, "%s", tui_screen(t));
	/* Enter opens the (newest) entry with its output */
	tui_send(t, "G\r");
	cr_assert_eq(tui_wait_text(t, "---- stdout ----", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "tl-33", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x1b");
	cr_assert_eq(tui_wait_gone(t, "---- stdout ----", WAIT), 0);
	/* following: an exec run now shows up by itself, selected */
	tui_send(t, "F");
	cr_assert_eq(tui_wait_text(t, "[following]", WAIT), 0, "%s", tui_screen(t));
	exec_ok("beta", "echo second-$((2*21))");
	cr_assert_eq(tui_wait_row(t, "second-$((2*21))", "exec", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "second-42", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x1b");
	/* search */
	tui_send(t, "/tl-$\r");
	cr_assert_eq(tui_wait_text(t, "[search]", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_gone(t, "second-$((2*21))", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "/\x15\r");   /* an empty search shows everything again */
	cr_assert_eq(tui_wait_text(t, "second-$((2*21))", WAIT), 0, "%s", tui_screen(t));

	/* the diff: the root's change under its heading, the workspace's apart */
	tui_send(t, "D");
	cr_assert_eq(tui_wait_text(t, "beta: what changed", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "/0-made", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, "Root file system, against the image", "/0-made", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, "/0-made", "/workspace (every file", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_above(t, "/workspace (every file", "/workspace/ws-file", WAIT), 0, "%s", tui_screen(t));
	/* copy the selected (first) file out */
	tui_send(t, "C");
	copy_out_to(t, "beta:/0-made", "made-copy", "made\n");
	cr_assert_eq(tui_wait_text(t, "beta: what changed", WAIT), 0, "back in the diff view: %s", tui_screen(t));
	tui_send(t, "\x1b");
	cr_assert_eq(tui_wait_gone(t, "beta: what changed", WAIT), 0);
	/* and from the timeline: the path inside asked for first */
	tui_send(t, "C");
	cr_assert_eq(tui_wait_text(t, "copy out of beta, the path inside:", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\x15/workspace/ws-file\r");
	copy_out_to(t, "beta:/workspace/ws-file", "ws-copy", "ws\n");
	/* the copies are in the timeline too, as the workbench's */
	cr_assert_eq(tui_wait_row(t, "cp out: beta:/workspace/ws-file", "workbench", WAIT), 0, "%s", tui_screen(t));
	quit(t);
	cli_ok("rm", "beta", NULL, NULL, NULL, NULL);
}

/* Bad input and other states: control held by another human, a session that
 * ends while watched, an exited session opened, copy-out paths that cannot
 * be used. Each gets its message; nothing is half done. */
Test(tui, session_refusals_end_and_bad_copy_paths)
{
	struct sb_root *root;
	struct sb_session *other;
	struct sb_error err;

	host_dir = tu_tempdir("tui-copy");
	cli_ok("create", "alpha", "--image", image, "--temporary=10m", NULL);
	cli_ok("session", "start", "alpha", NULL, NULL, NULL);
	exec_ok("alpha", "echo f > /workspace/f");
	cr_assert_eq(sb_root_open(&root, root_dir, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_connect(&other, root, "alpha", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_take(other, SB_SOURCE_HUMAN, &err), 0, "%s", err.msg);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "alpha", "running", WAIT), 0);
	tui_send(t, "4");
	cr_assert_eq(tui_wait_row(t, "^0 ", "human", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "a human has control", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "t");
	cr_assert_eq(tui_wait_text(t, "session '0' of sandbox 'alpha' is controlled by a human", WAIT), 0, "%s",
		     tui_screen(t));
	cr_assert_eq(tui_find_row(t, "YOU CONTROL"), -1);
	/* handed back by the other: the banner follows, and the take works */
	cr_assert_eq(sb_session_release(other, &err), 0, "%s", err.msg);
	cr_assert_eq(tui_wait_text(t, "the agent has control", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "t");
	cr_assert_eq(tui_wait_text(t, "YOU CONTROL session 0 of alpha", WAIT), 0, "%s", tui_screen(t));
	cr_assert_neq(sb_session_take(other, SB_SOURCE_HUMAN, &err), 0, "two controllers");
	/* the session ends under control: its shell exits */
	tui_send(t, "exit\r");
	cr_assert_eq(tui_wait_text(t, "session 0 of alpha: ended", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "q");
	cr_assert_eq(tui_wait_row(t, "^0 ", "exited", WAIT), 0, "%s", tui_screen(t));
	tui_send(t, "\r");
	cr_assert_eq(tui_wait_text(t, "session 0 of alpha has exited", WAIT), 0, "%s", tui_screen(t));
	sb_session_close(other);
	sb_root_close(root);

	/* copy-out: a relative path inside, then a host folder that is not there */
	tui_send(t, "C\x15relative\r");
	cr_assert_eq(tui_wait_text(t, "'relative' is not an absolute path inside the sandbox", WAIT), 0, "%s",
		     tui_screen(t));
	char *missing = sb_strdupf("%s/no/such/dir/f", host_dir), keys[600];
	snprintf(keys, sizeof(keys), "C\x15/workspace/f\r\x15%s\r", missing);
	tui_send(t, keys);
	cr_assert_eq(tui_wait_text(t, "does not exist", 60000), 0, "%s", tui_screen(t));
	cr_assert_eq(tu_sh("test ! -e '%s/no'", host_dir), 0, "the failed copy left something");
	free(missing);
	quit(t);
	cli_ok("rm", "alpha", NULL, NULL, NULL, NULL);
}
