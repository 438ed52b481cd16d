/* The escape and isolation suite, host services and host-side readers: from
 * inside real sandboxes, a listener the test starts on the host's loopback
 * and on the host's bridge address, and another sandbox's server, are out of
 * reach with the network off, with --deny-all and with the default policy;
 * the limits create gave (memory, pids, the disk cap) cannot be raised or
 * passed from inside; and FIFOs and huge
 * sparse files where cp, diff, commit, sessions and the timeline look make
 * no host command block or read without end (each runs under a deadline).
 * The file attempts are in test-escape.c; docs/security.md has the table. */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "escape.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct esc e;
static struct nt_names names;
static pid_t listeners[2];
static int port;
static char *www;

static void setup(void)
{
	sbf_setup(&f, "escape-host");
	esc_setup(&e, &f);
	nt_names_init(&names);
	nt_config_write(&names, f.dir);
	port = 20000 + (int)(names.rnd % 20000);
	www = esc_share(&e, "escape-www");
	cr_assert_eq(tu_sh("echo " NT_MARKER " > %s/marker.txt", www), 0);
}

static void teardown(void)
{
	sbf_teardown(&f); /* the sandboxes, and with them their network */
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++)
		nt_httpd_stop(listeners[i]);
	memset(listeners, 0, sizeof(listeners));
	tu_sh("ip link del %s 2>/dev/null; true", names.bridge);
	esc_teardown(&e);
}

TestSuite(escape_host, .init = setup, .fini = teardown, .timeout = 420);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

/* 1 when sandbox name gets the marker from addr:port. */
static int reaches(const char *name, const char *addr, int p)
{
	char *cmd = sb_strdupf("printf 'GET /marker.txt HTTP/1.0\\r\\n\\r\\n' | nc -w 3 %s %d", addr, p);
	int status;
	char *out = sbf_sh(&f, NULL, name, cmd, &status);
	int got = strstr(out, NT_MARKER) != NULL;

	free(out);
	free(cmd);
	return got;
}

/* The first IPv4 address of the host's bridge (malloc'd). */
static char *bridge_address(void)
{
	char *a = tu_sh_out("ip -4 -o addr show dev %s | awk '{print $4}' | cut -d/ -f1 | head -n 1", names.bridge);

	cr_assert(a && a[0], "the bridge %s has no address", names.bridge);
	return a;
}

/* Sandbox a (network on) serving the marker on port 7000 at its address (malloc'd). */
static char *neighbour(void)
{
	ESC_MAKE(&e, "a", "--network", "on", NULL);
	free(sbf_sh(&f, NULL, "a", "mkdir -p /tmp/www && echo " NT_MARKER " > /tmp/www/marker.txt && httpd -p 7000 -h /tmp/www",
		    NULL));
	char *addr = sbf_sh(&f, NULL, "a", "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1", NULL);
	addr[strcspn(addr, "\n")] = '\0';
	cr_assert(addr[0] && reaches("a", addr, 7000), "a's server answers at its own address '%s'", addr);
	return addr;
}

Test(escape_host, host_listeners_and_neighbours_are_out_of_reach)
{
	char *peer = neighbour(), *bridge = bridge_address();

	/* the listeners answer the host: what follows fails for the policy, not for a dead server */
	listeners[0] = nt_httpd_start(NULL, "127.0.0.1", port, www);
	listeners[1] = nt_httpd_start(NULL, bridge, port, www);
	ESC_MAKE(&e, "off", NULL);
	ESC_MAKE(&e, "deny", "--deny-all", NULL);
	ESC_MAKE(&e, "dflt", "--network", "on", NULL);
	static const char *const boxes[] = { "off", "deny", "dflt" };
	for (size_t i = 0; i < sizeof(boxes) / sizeof(boxes[0]); i++) {
		cr_expect_not(reaches(boxes[i], "127.0.0.1", port), "%s reached the host's loopback listener", boxes[i]);
		cr_expect_not(reaches(boxes[i], bridge, port), "%s reached the listener at the host's bridge address %s",
			      boxes[i], bridge);
		cr_expect_not(reaches(boxes[i], peer, 7000), "%s reached sandbox a at %s", boxes[i], peer);
	}
	/* nothing else of the host either: its own addresses, any port the guest guesses */
	char *host_addrs = tu_sh_out("ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | tr '\\n' ' '");
	char *scan = sb_strdupf("for a in %s; do nc -w 1 $a %d </dev/null && echo REACHED $a; done; true", host_addrs, port);
	for (size_t i = 0; i < sizeof(boxes) / sizeof(boxes[0]); i++) {
		char *out = sbf_sh(&f, NULL, boxes[i], scan, NULL);
		cr_expect_null(strstr(out, "REACHED"), "%s: %s", boxes[i], out);
		free(out);
	}
	free(scan);
	free(host_addrs);
	free(peer);
	free(bridge);
}

/* A file of the sandbox's cgroup in controller ctrl (runsc makes /<id> in
 * each v1 hierarchy), trailing newline cut (malloc'd). */
static char *cgroup_value(const char *id, const char *ctrl, const char *file)
{
	return tu_sh_out("cat /sys/fs/cgroup/%s/%s/%s", ctrl, id, file);
}

Test(escape_host, limits_cannot_be_raised_from_inside)
{
	ESC_MAKE(&e, "lim", "--memory", "64m", NULL);
	struct tu_run r = SB("inspect", "lim", "--json");
	json_t *doc = json_loads(r.out ? r.out : "", 0, NULL);
	cr_assert(r.status == 0 && doc, "inspect: %s", r.err);
	char *id = strdup(json_string_value(json_object_get(doc, "id")));
	json_decref(doc);
	tu_run_free(&r);
	char *mem = cgroup_value(id, "memory", "memory.limit_in_bytes"), *pids = cgroup_value(id, "pids", "pids.max");
	cr_assert_str_eq(mem, "67108864", "the host cgroup holds the limit create gave");
	static const char *const tries[] = {
		"echo -1 > /sys/fs/cgroup/memory/memory.limit_in_bytes",
		"mkdir -p /tmp/cg && mount -t cgroup -o memory cg /tmp/cg",
		"mkdir -p /tmp/cg && mount -t cgroup -o pids cg /tmp/cg",
		"mkdir -p /tmp/cg2 && mount -t cgroup2 cg2 /tmp/cg2",
		"mount -o remount,rw /sys",
		"mount -t sysfs sys /tmp",
		"ulimit -H -n 2000000",
		"echo 1 > /proc/sys/vm/overcommit_memory",
		"echo 4194304 > /proc/sys/kernel/pid_max",
		"nice -n -10 true",
		NULL,
	};
	esc_all_fail(&e, "lim", tries);
	/* inside, the memory is the limit's */
	char *total = sbf_sh(&f, NULL, "lim", "awk '/MemTotal/ {print $2}' /proc/meminfo", NULL);
	cr_assert(strtol(total, NULL, 10) > 0 && strtol(total, NULL, 10) <= 65536, "MemTotal %s kB over 64 MiB", total);
	free(total);
	char *mem2 = cgroup_value(id, "memory", "memory.limit_in_bytes"), *pids2 = cgroup_value(id, "pids", "pids.max");
	cr_assert_str_eq(mem2, mem, "the memory limit moved");
	cr_assert_str_eq(pids2, pids, "the pids limit moved");
	/* and using more than the limit (memory no process's address-space
	 * limit counts: a tmpfs) ends the sandbox, which says so: one line
	 * naming the sessions that ended with it, none of runsc's own words */
	sbf_ok(SB("session", "start", "lim", "s1"), "session start");
	r = SB("exec", "lim", "--", "sh", "-c", "head -c 200000000 /dev/zero > /dev/shm/fill");
	cr_assert_neq(r.status, 0, "200 MB in a 64 MiB sandbox: %s", r.out);
	cr_assert(strstr(r.err, "used more memory than its limit") && strstr(r.err, "sessions ended: s1"), "%s", r.err);
	const char *nl = strchr(r.err, '\n');
	cr_assert(!strstr(r.err, "urpc") && !strstr(r.err, "runsc") && nl && !strchr(nl + 1, '\n'),
		  "not one line of sandbench's: %s", r.err);
	tu_run_free(&r);
	r = SB("inspect", "lim");
	cr_assert(r.status == 0 && strstr(r.out, "stopped") && strstr(r.out, "used more memory than its limit") &&
		  strstr(r.out, "s1") && !strstr(r.out, "crash"), "%s", r.out);
	tu_run_free(&r);
	free(mem);
	free(mem2);
	free(pids);
	free(pids2);
	free(id);
}

/* A capped disk (--disk) is a file system of its size: every way to write
 * more than that fails inside, and the host holds no more of it than its
 * size, whatever the guest tried. */
Test(escape_host, the_disk_limit_cannot_be_passed_from_inside)
{
	ESC_MAKE(&e, "dl", "--disk", "24m", NULL);
	static const char *const tries[] = {
		"dd if=/dev/zero of=/fill bs=1M count=40",
		"dd if=/dev/zero of=/workspace/fill bs=1M count=40",
		"dd if=/dev/zero of=/proc/self/root/workspace/fill2 bs=1M count=40",
		"truncate -s 8G /sparse && dd if=/dev/zero of=/sparse bs=1M seek=4096 count=40 conv=notrunc",
		"i=0; while [ $i -lt 100000 ]; do echo x > /workspace/f$i || exit 1; i=$((i + 1)); done",
		"mkdir -p /tmp/m && mount -t ext4 /dev/loop0 /tmp/m",
		"mount -o remount,size=8g /",
		"mount -o remount,size=8g /workspace",
		NULL,
	};
	esc_all_fail(&e, "dl", tries);
	char *img = sb_strdupf("%s/sandboxes/dl/disk.img", f.dir);
	struct stat st;
	cr_assert(img && lstat(img, &st) == 0);
	cr_assert_eq(st.st_size, 24LL << 20, "the image's length moved");
	cr_assert((long long)st.st_blocks * 512 <= 24LL << 20, "the host holds %lld bytes of a 24 MiB disk",
		  (long long)st.st_blocks * 512);
	char *rest = tu_sh_out("du -sxk --exclude=disk.img %s/sandboxes/dl | cut -f1", f.dir);
	cr_assert(atoll(rest) < 2048, "the rest of the sandbox's folder grew to %s KiB", rest);
	free(rest);
	free(img);
	/* full, the sandbox still answers */
	char *out = sbf_sh(&f, NULL, "dl", "echo alive", NULL);
	cr_assert(strstr(out, "alive"), "%s", out);
	free(out);
}

/* Runs sandbench with args under a deadline of 120 s; returns its status,
 * failing the test when the deadline killed it. */
static int within_deadline(const char *what, const char *args)
{
	char *bin = tu_buildpath("sandbench");
	int status = tu_sh("timeout -k 5 120 %s --root %s %s >/dev/null 2>&1", bin, f.dir, args);

	cr_expect(status != 124 && status != 137, "'%s' ran into its deadline", what);
	free(bin);
	return status;
}

Test(escape_host, fifos_and_sparse_files_block_nothing)
{
	ESC_MAKE(&e, "big", NULL);
	/* the guest makes sparse files of a terabyte itself; its FIFOs live in
	 * runsc's memory only, so the host-side ones (an image's, another
	 * runtime's) are made by the test, with the sandbox stopped */
	char *cmd = esc_expand(&e, "t=1099511627776; truncate -s $t /root/sparse /workspace/sparse /exchange/sparse-@S@ && "
				   "mkdir -p /root/d && truncate -s $t /root/d/sparse");
	free(sbf_sh(&f, NULL, "big", cmd, NULL));
	free(cmd);
	sbf_ok(SB("stop", "big"), "stop");
	cr_assert_eq(tu_sh("cd %1$s/sandboxes/big && mkfifo upper/root/fifo workspace/fifo %1$s/exchange/fifo-%2$s && "
			   "mkdir -p upper/etc && rm -f upper/etc/passwd && mkfifo upper/etc/passwd",
			   f.dir, e.sfx), 0);
	char *out = esc_share(&e, "escape-out");
	static const struct {
		const char *args;
		int ok;                   /* 1: must succeed, 0: must fail, -1: either */
	} cmds[] = {
		{ "diff big", 1 },
		{ "cp big:/root/fifo @O@/a", 0 },
		{ "cp big:/root/sparse @O@/b", 0 },
		{ "cp -r big:/root/d @O@/c", 0 },
		{ "cp big:/workspace/sparse @O@/d", 0 },
		{ "cp -r big:/workspace @O@/e", 0 },
		{ "cp big:/exchange/fifo-@S@ @O@/f", 0 },
		{ "cp big:/exchange/sparse-@S@ @O@/g", 0 },
		{ "commit big localhost/big", 0 },
		{ "restore big", 1 },
		{ "diff big", 1 },
		{ "cp big:/etc/passwd @O@/h", 0 },
		{ "session start big s1", -1 },
		{ "session read big s1", -1 },
		{ "timeline big", 1 },
		{ "cp -r big:/root @O@/i", 0 },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *tmpl = esc_expand(&e, cmds[i].args), *at = strstr(tmpl, "@O@");
		char *args = at ? sb_strdupf("%.*s%s%s", (int)(at - tmpl), tmpl, out, at + 3) : strdup(tmpl);
		int status = within_deadline(args, args);
		if (cmds[i].ok >= 0)
			cr_expect_eq(status == 0, cmds[i].ok, "'%s': status %d", args, status);
		free(args);
		free(tmpl);
	}
	/* commit refuses the sparse file before reading it, and names it and the cap */
	struct tu_run r = SB("commit", "big", "localhost/big");
	cr_expect(r.status == 7 && strstr(r.err, "sparse") && strstr(r.err, "--max-size"), "commit: %d %s", r.status, r.err);
	tu_run_free(&r);
	r = SB("commit", "big", "localhost/big", "--max-size", "lots");
	cr_expect(r.status == 2 && strstr(r.err, "invalid size"), "commit --max-size lots: %d %s", r.status, r.err);
	tu_run_free(&r);
	r = SB("image", "ls");
	cr_expect(r.status == 0 && !strstr(r.out, "localhost/big"), "a refused commit made an image: %s", r.out);
	tu_run_free(&r);
	/* nothing of a terabyte reached the host */
	char *used = tu_sh_out("du -sk %s | cut -f1", out);
	cr_expect(strtol(used, NULL, 10) < 1 << 20, "%s kB copied out", used);
	free(used);
}
