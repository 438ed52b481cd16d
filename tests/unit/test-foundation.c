/* The library's foundation: errors, files, digests, blobs, the state root,
 * helper processes, and the command-line contract. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/archive_dl.h"
#include "base/buf.h"
#include "image/blob_store.h"
#include "base/crypto_dl.h"
#include "base/digest.h"
#include "base/internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/host.h"
#include "base/jsonfile.h"
#include "base/proc.h"
#include "base/root.h"
#include "base/utf8.h"
#include "testutil.h"

static char *dir;

static void setup(void)
{
	dir = tu_tempdir("found");
	cr_assert_not_null(dir);
}

static void teardown(void)
{
	tu_remove(dir);
	free(dir);
}

TestSuite(foundation, .init = setup, .fini = teardown);

Test(foundation, error_set_and_wrap)
{
	struct sb_error err;

	cr_assert_eq(sb_error_set(&err, SB_ERR_NOTFOUND, "no sandbox '%s'", "x"), SB_ERR_NOTFOUND);
	sb_error_wrap(&err, "cannot stop");
	cr_assert_str_eq(err.msg, "cannot stop: no sandbox 'x'");
	cr_assert_str_eq(sb_error_name(SB_ERR_NOTFOUND), "not-found");
	cr_assert_eq(sb_error_errno(&err, SB_ERR_IO, ENOSPC, "write"), SB_ERR_NOSPACE);
	cr_assert_str_eq(sb_error_name(12345), "unknown");
}

/* Dropping from the front keeps the rest and its terminator; dropping nothing
 * from an empty buffer is fine (no data to move: UBSan refuses memmove(NULL)). */
Test(foundation, buf_drop)
{
	struct sb_buf b = { 0 };

	sb_buf_drop(&b, 0);
	cr_assert_null(b.data);
	cr_assert_eq(sb_buf_add(&b, "line 1\nrest", 11), 0);
	sb_buf_drop(&b, 7);
	cr_assert_eq(b.len, 4);
	cr_assert_str_eq(b.data, "rest");
	sb_buf_drop(&b, 4);
	cr_assert_eq(b.len, 0);
	cr_assert_str_eq(b.data, "");
	sb_buf_clear(&b);
}

Test(foundation, atomic_write_replaces_whole_file)
{
	char *path = sb_path_join(dir, "f.json"), *text;
	size_t len;

	cr_assert_eq(sb_fs_write_atomic(path, "first", 5, 0600, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(path, "second!", 7, 0600, NULL), 0);
	cr_assert_eq(sb_fs_read_file(&text, &len, path, 100, NULL), 0);
	cr_assert_str_eq(text, "second!");
	cr_assert_eq(len, 7);
	free(text);
	/* unsynced: still a whole replacement through a temp file */
	cr_assert_eq(sb_fs_replace(path, "third", 5, 0600, 0, NULL), 0);
	cr_assert_eq(sb_fs_read_file(&text, &len, path, 100, NULL), 0);
	cr_assert_str_eq(text, "third");
	free(text);
	/* no temp file is left next to it */
	cr_assert_eq(tu_sh("test $(ls -A %s | wc -l) -eq 1", dir), 0);
	free(path);
}

Test(foundation, read_file_limit)
{
	struct sb_error err;
	char *path = sb_path_join(dir, "big"), *text;

	cr_assert_eq(sb_fs_write_atomic(path, "0123456789", 10, 0600, NULL), 0);
	cr_assert_eq(sb_fs_read_file(&text, NULL, path, 10, NULL), 0);
	free(text);
	cr_assert_eq(sb_fs_read_file(&text, NULL, path, 9, &err), SB_ERR_LIMIT);
	cr_assert_null(text);
	free(path);
}

/* A short answer of another process: up to its writer's end, cut at the
 * buffer, or -1 at the deadline while a writer stays. */
Test(foundation, read_to_end_of_a_pipe)
{
	char buf[8];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "ok\n", 3), 3);
	close(p[1]);
	cr_assert_eq(sb_fs_read_to_end(p[0], buf, sizeof(buf), 5000), 3);
	cr_assert_str_eq(buf, "ok\n");
	close(p[0]);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "0123456789", 10), 10);
	cr_assert_eq(sb_fs_read_to_end(p[0], buf, sizeof(buf), 5000), 7, "the buffer's size less its NUL");
	cr_assert_str_eq(buf, "0123456");
	long long t0 = sb_clock_monotonic_ms();
	cr_assert_eq(sb_fs_read_to_end(p[0], buf, sizeof(buf), 50), -1, "a writer that stays: the deadline");
	cr_assert_geq(sb_clock_monotonic_ms() - t0, 50);
	close(p[0]);
	close(p[1]);
}

Test(foundation, json_roundtrip_and_malformed)
{
	struct sb_error err;
	char *path = sb_path_join(dir, "doc.json");
	json_t *doc = json_pack("{s:s, s:i}", "name", "alpha", "n", 3), *back;

	cr_assert_eq(sb_json_save(path, doc, NULL), 0);
	cr_assert_eq(sb_json_load(&back, path, 4096, NULL), 0);
	cr_assert(json_equal(doc, back));
	json_decref(back);
	json_decref(doc);
	cr_assert_eq(sb_fs_write_atomic(path, "{\"a\":", 5, 0600, NULL), 0);
	cr_assert_eq(sb_json_load(&back, path, 4096, &err), SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, "not valid JSON"));
	free(path);
}

Test(foundation, remove_tree_does_not_follow_symlinks)
{
	char *outside = sb_path_join(dir, "outside"), *tree = sb_path_join(dir, "tree");

	cr_assert_eq(tu_sh("mkdir -p %s/a/b %s && echo keep > %s/precious && ln -s %s %s/a/link && "
			   "chmod 0 %s/a/b", tree, outside, outside, outside, tree, tree), 0);
	cr_assert_eq(sb_fs_remove_tree(tree, NULL), 0);
	cr_assert_neq(access(tree, F_OK), 0);
	cr_assert_eq(tu_sh("test \"$(cat %s/precious)\" = keep", outside), 0);
	cr_assert_eq(sb_fs_remove_tree(tree, NULL), 0, "a missing tree is not an error");
	free(outside);
	free(tree);
}

Test(foundation, sha256_known_value)
{
	char d[SB_DIGEST_STR_LEN];

	cr_assert_eq(sb_sha256_buffer(d, "abc", 3, NULL), 0);
	cr_assert_str_eq(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cr_assert(sb_digest_valid(d));
	cr_assert_not(sb_digest_valid("sha256:BA7816"));
	cr_assert_not(sb_digest_valid("md5:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
}

Test(foundation, root_layout_and_env)
{
	struct sb_root *root;
	char *sub = sb_path_join(dir, "state");

	setenv("SANDBENCH_ROOT", sub, 1);
	cr_assert_eq(sb_root_open(&root, NULL, NULL), 0);
	unsetenv("SANDBENCH_ROOT");
	cr_assert_str_eq(sb_root_path(root), sub);
	cr_assert_eq(tu_sh("test -d %s/images/blobs/sha256 -a -d %s/sandboxes -a -d %s/exchange", sub, sub, sub), 0);
	char *rec = sb_root_record_file(root, "box"), *want = sb_strdupf("%s/sandboxes/box/sandbox.json", sub);
	cr_assert_str_eq(rec, want);
	free(rec);
	free(want);
	sb_root_close(root);
	sb_root_close(NULL);
	free(sub);
}

Test(foundation, lock_excludes_other_processes)
{
	struct sb_root *root;

	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	cr_assert_eq(sb_root_lock(root, SB_LOCK_EXCLUSIVE, NULL), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char *path = sb_path_join(dir, "lock");
		int fd = open(path, O_RDWR);
		free(path); /* memcheck counts the child's leaks too */
		_exit(flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert_eq(WEXITSTATUS(status), 1, "another process must not get the lock");
	sb_root_unlock(root);
	sb_root_close(root);
}

Test(foundation, blob_store_verifies_and_resumes)
{
	struct sb_root *root;
	struct sb_blob_writer *w;
	struct sb_error err;
	char d[SB_DIGEST_STR_LEN], want[SB_DIGEST_STR_LEN], *back;
	size_t len;

	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	cr_assert_eq(sb_sha256_buffer(want, "hello world", 11, NULL), 0);
	/* an interrupted download keeps its bytes for the next writer */
	cr_assert_eq(sb_blob_writer_open(&w, root, want, NULL), 0);
	cr_assert_eq(sb_blob_writer_write(w, "hello ", 6, NULL), 0);
	sb_blob_writer_free(w);
	cr_assert_not(sb_blob_exists(root, want));
	cr_assert_eq(sb_blob_writer_open(&w, root, want, NULL), 0);
	cr_assert_eq(sb_blob_writer_offset(w), 6);
	cr_assert_eq(sb_blob_writer_write(w, "world", 5, NULL), 0);
	cr_assert_eq(sb_blob_writer_commit(d, w, NULL), 0);
	sb_blob_writer_free(w);
	cr_assert_str_eq(d, want);
	cr_assert_eq(sb_blob_get(&back, &len, root, want, 100, NULL), 0);
	cr_assert_eq(len, 11);
	free(back);
	/* wrong content is refused and not kept */
	cr_assert_eq(sb_sha256_buffer(want, "expected", 8, NULL), 0);
	cr_assert_eq(sb_blob_writer_open(&w, root, want, NULL), 0);
	cr_assert_eq(sb_blob_writer_write(w, "tampered", 8, NULL), 0);
	cr_assert_eq(sb_blob_writer_commit(d, w, &err), SB_ERR_DIGEST);
	sb_blob_writer_free(w);
	cr_assert(strstr(err.msg, "does not match"));
	cr_assert_not(sb_blob_exists(root, want));
	cr_assert_eq(tu_sh("test -z \"$(ls -A %s/images/blobs/partial)\"", dir), 0);
	sb_root_close(root);
}

Test(foundation, blob_get_detects_corruption)
{
	struct sb_root *root;
	struct sb_error err;
	char d[SB_DIGEST_STR_LEN], *back;

	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	cr_assert_eq(sb_blob_put(d, root, "{}", 2, NULL), 0);
	char *path = sb_blob_path(root, d);
	cr_assert_eq(tu_sh("printf '[]' > %s", path), 0);
	cr_assert_eq(sb_blob_get(&back, NULL, root, d, 100, &err), SB_ERR_DIGEST);
	free(path);
	sb_root_close(root);
}

Test(foundation, proc_captures_and_times_out)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	struct sb_error err;
	char line[64];

	char *ok[] = { "/bin/sh", "-c", "echo out; echo first >&2; echo last >&2; exit 3", NULL };
	cr_assert_eq(sb_proc_run(&res, ok, &opts, NULL), 0);
	cr_assert_eq(res.status, 3);
	cr_assert_str_eq(res.out, "out\n");
	cr_assert_str_eq(sb_proc_last_line(&res, line, sizeof(line)), "last");
	sb_proc_result_clear(&res);

	char *slow[] = { "/bin/sh", "-c", "exec cat", NULL };
	int p[2];
	cr_assert_eq(pipe(p), 0);
	opts.stdin_fd = p[0];  /* cat blocks on a pipe nobody writes */
	opts.timeout_ms = 200;
	cr_assert_eq(sb_proc_run(&res, slow, &opts, &err), SB_ERR_TIMEOUT);
	cr_assert(res.timed_out);
	sb_proc_result_clear(&res);
	close(p[0]);
	close(p[1]);
}

/* hold_tail_ms: stderr's latest write goes on once quiet (the child waits
 * to see it in the tee's file), the one at the child's exit is the caller's. */
Test(foundation, proc_tee_holds_the_last_stderr_write_for_the_caller)
{
	char path[] = "/tmp/sb-hold-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	char *cmd = sb_strdupf("printf 'first\\n' >&2; until grep -q first %s; do :; done; printf 'last\\n' >&2; exit 3",
			       path);
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;

	opts.timeout_ms = 20000;
	opts.stderr_fd = fd;
	opts.tee = 1;
	opts.hold_tail_ms = 50;
	cr_assert_eq(sb_proc_run(&res, argv, &opts, NULL), 0);
	cr_assert_eq(res.status, 3, "the first write was never passed on (status %d)", res.status);
	cr_assert(res.held && res.held_len == 5 && !memcmp(res.held, "last\n", 5), "held: %.*s", (int)res.held_len,
		  res.held ? res.held : "");
	cr_assert_str_eq(res.errout, "first\nlast\n");
	char *text = NULL;
	cr_assert_eq(sb_fs_read_file(&text, NULL, path, 4096, NULL), 0);
	cr_assert_str_eq(text, "first\n", "only the quiet write went on");
	free(text);
	sb_proc_result_clear(&res);
	free(cmd);
	close(fd);
	unlink(path);
}

/* More kept children than the table once held (64): the orphan reaper takes
 * none of them from their owner, and still reaps a child nobody keeps. */
Test(foundation, proc_reaper_never_takes_a_kept_child)
{
	enum { N = 150 };
	pid_t pids[N], stray;
	siginfo_t si;
	int status;

	cr_assert_eq(sb_proc_subreaper_enable(NULL), 0);
	for (int i = 0; i < N; i++) {
		if ((pids[i] = fork()) == 0)
			_exit(i % 100);
		cr_assert_gt(pids[i], 0);
		sb_proc_keep(pids[i], 1);
	}
	if ((stray = fork()) == 0)
		_exit(0);
	/* every child has exited (WNOWAIT: still there to be reaped) */
	for (int i = 0; i < N; i++)
		cr_assert_eq(waitid(P_PID, (id_t)pids[i], &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(waitid(P_PID, (id_t)stray, &si, WEXITED | WNOWAIT), 0);
	sb_proc_reap_orphans();
	for (int i = 0; i < N; i++) {
		cr_assert_eq(waitpid(pids[i], &status, 0), pids[i], "kept child %d was taken: %s", i, strerror(errno));
		cr_assert_eq(WEXITSTATUS(status), i % 100);
		sb_proc_keep(pids[i], 0);
	}
	cr_assert_eq(waitpid(stray, &status, WNOHANG), -1, "the stray child was not reaped");
	cr_assert_eq(errno, ECHILD);
}

/* The library as installed has no test seams: the environment variables the
 * test build reads (tests/hooks.c, not linked here) move neither the clock nor
 * the host's boot id. */
Test(foundation, product_ignores_injected_time_and_boot)
{
	char real[SB_HOST_BOOT_ID_LEN], seen[SB_HOST_BOOT_ID_LEN];

	cr_assert_eq(sb_host_boot_id(real, NULL), 0);
	setenv("SANDBENCH_NOW", "1234567", 1);
	setenv("SANDBENCH_BOOT_ID", "11111111-1111-4111-8111-111111111111", 1);
	cr_assert_gt(sb_clock_now(), 1000000000LL, "the wall clock moved");
	cr_assert_eq(sb_host_boot_id(seen, NULL), 0);
	cr_assert_str_eq(seen, real);
	unsetenv("SANDBENCH_NOW");
	unsetenv("SANDBENCH_BOOT_ID");
}

static int mark_child(void *arg)
{
	return setenv("SB_PRE_EXEC", (const char *)arg, 1);
}

Test(foundation, proc_output_grows_to_its_cap_and_spawn_paths_agree)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;

	/* 200 KiB of output arrive in many reads; the cap keeps the first 100 000 bytes */
	char *big[] = { "/bin/sh", "-c", "head -c 204800 /dev/zero | tr '\\0' x", NULL };
	opts.capture_max = 100000;
	cr_assert_eq(sb_proc_run(&res, big, &opts, NULL), 0);
	cr_assert_eq(res.out_len, 100000);
	cr_assert_eq(strspn(res.out, "x"), 100000);
	cr_assert_eq(res.errout[0], '\0');
	sb_proc_result_clear(&res);

	/* a missing program is status 127 with and without a pre-exec hook (fork path) */
	char *missing[] = { "sb-no-such-program", NULL };
	opts.capture_max = 0;
	cr_assert_eq(sb_proc_run(&res, missing, &opts, NULL), 0);
	cr_assert_eq(res.status, 127);
	cr_assert_str_eq(res.out, "");
	sb_proc_result_clear(&res);
	opts.pre_exec = mark_child;
	opts.pre_exec_arg = "hooked";
	cr_assert_eq(sb_proc_run(&res, missing, &opts, NULL), 0);
	cr_assert_eq(res.status, 127);
	sb_proc_result_clear(&res);

	/* the hook runs in the child only */
	char *show[] = { "/bin/sh", "-c", "printf %s \"$SB_PRE_EXEC\"", NULL };
	cr_assert_eq(sb_proc_run(&res, show, &opts, NULL), 0);
	cr_assert_str_eq(res.out, "hooked");
	cr_assert_null(getenv("SB_PRE_EXEC"));
	sb_proc_result_clear(&res);
}

Test(foundation, lazy_library_missing_names_its_package)
{
	static void *slot;
	static const struct sb_dynlib_symbol symbols[] = { { "sb_none", &slot } };
	struct sb_dynlib missing = { "libsb-missing.so.0", "sb-missing-pkg", symbols, 1, 0, "" };
	struct sb_dynlib wrong = { "libz.so.1", "zlib1g", symbols, 1, 0, "" };
	struct sb_error err;

	cr_assert_eq(sb_dynlib_load(&missing, &err), SB_ERR_PREREQ);
	cr_assert(strstr(err.msg, "libsb-missing.so.0") && strstr(err.msg, "apt-get install sb-missing-pkg"), "%s", err.msg);
	/* the outcome is kept: no second dlopen */
	cr_assert_eq(sb_dynlib_load(&missing, NULL), SB_ERR_PREREQ);
	/* a library without a symbol sandbench needs is refused as well */
	cr_assert_eq(sb_dynlib_load(&wrong, &err), SB_ERR_PREREQ);
	cr_assert(strstr(err.msg, "sb_none"), "%s", err.msg);
	/* and the wrapped libraries load */
	cr_assert_eq(sb_archive_load(&err), 0, "%s", err.msg);
	cr_assert_eq(sb_crypto_load(&err), 0, "%s", err.msg);
}

/* The program itself needs none of them to start: an exec or an ls pays for
 * neither their loading nor their relocations. */
Test(foundation, lazy_libraries_are_not_linked_into_sandbench)
{
	char *bin = tu_buildpath("sandbench");
	char *needed = tu_sh_out("readelf -d '%s' | grep NEEDED", bin);

	cr_assert(needed && strstr(needed, "libjansson"), "readelf lists the linked libraries: %s", needed);
	cr_assert_null(strstr(needed, "libarchive"), "%s", needed);
	cr_assert_null(strstr(needed, "libcrypto"), "%s", needed);
	cr_assert_null(strstr(needed, "libcurl"), "%s", needed);
	free(needed);
	free(bin);
}

Test(foundation, cli_contract)
{
	struct tu_run r = tu_sandbench(dir, NULL, "--version", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "sandbench "));
	tu_run_free(&r);

	r = tu_sandbench(dir, NULL, "frobnicate", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "unknown command 'frobnicate'"));
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "errors are one line");
	tu_run_free(&r);

	/* mount syntax is checked before anything is opened */
	r = tu_sandbench(dir, NULL, "create", "x", "--image", "i", "--mount", "/h:relative", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "invalid mount '/h:relative' (HOST:PATH[:ro|rw])"), "%s", r.err);
	tu_run_free(&r);

	r = tu_sandbench(dir, NULL, "doctor", "--help", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "Usage: sandbench doctor"));
	tu_run_free(&r);
}

/* `sandbench doctor --json` where mount_setattr is ENOSYS (a seccomp filter
 * in a child, as on a kernel before 5.12): its stdout, malloc'd. */
static char *doctor_without_mount_setattr(int *status)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount_setattr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(99);
		struct tu_run r = tu_sandbench(dir, NULL, "doctor", "--json", NULL);
		if (r.out && write(fds[1], r.out, strlen(r.out)) < 0)
			_exit(98);
		_exit(r.status);
	}
	close(fds[1]);
	char *out = calloc(1, 1);
	size_t len = 0;
	char buf[4096];
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
		cr_assert_not_null(out = realloc(out, len + (size_t)n + 1));
		memcpy(out + len, buf, (size_t)n);
		out[len += (size_t)n] = '\0';
	}
	close(fds[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return out;
}

Test(foundation, doctor_fails_closed_on_a_kernel_without_mount_setattr)
{
	int status;
	char *out = doctor_without_mount_setattr(&status);

	cr_assert_eq(status, 5, "a missing system call is a missing prerequisite (exit 5): %s", out);
	json_t *doc = json_loads(out, 0, NULL), *c;
	size_t i;
	int saw = 0;
	cr_assert_not_null(doc, "%s", out);
	json_array_foreach(json_object_get(doc, "checks"), i, c) {
		if (strcmp(json_string_value(json_object_get(c, "check")), "kernel") != 0)
			continue;
		cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "fail");
		cr_assert(strstr(json_string_value(json_object_get(c, "detail")), "mount_setattr"), "%s", out);
		saw = 1;
	}
	cr_assert(saw, "the report has a kernel check: %s", out);
	json_decref(doc);
	free(out);
}

/* The status and fix of one check in `sandbench doctor --json` run with env. */
static json_t *doctor_check(const char *const *env, const char *check)
{
	struct tu_run r = tu_sandbench(dir, env, "doctor", "--json", NULL);
	json_t *doc = json_loads(r.out ? r.out : "", 0, NULL), *c, *found = NULL;
	size_t i;

	cr_assert_not_null(doc, "doctor --json: %s", r.err);
	json_array_foreach(json_object_get(doc, "checks"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "check")), check))
			found = json_incref(c);
	json_decref(doc);
	tu_run_free(&r);
	cr_assert_not_null(found, "no check '%s'", check);
	return found;
}

/* create --disk needs mkfs.ext4: its absence is a warning naming the package */
Test(foundation, doctor_warns_when_disk_caps_cannot_be_made)
{
	json_t *c = doctor_check(NULL, "disk-caps");
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "ok");
	json_decref(c);
	const char *env[] = { "PATH=/nonexistent", NULL };
	c = doctor_check(env, "disk-caps");
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "warn");
	cr_assert(strstr(json_string_value(json_object_get(c, "fix")), "e2fsprogs"));
	json_decref(c);
}

Test(foundation, doctor_fails_closed_without_runsc)
{
	const char *env[] = { "SANDBENCH_RUNSC=/nonexistent/runsc", NULL };
	struct tu_run r = tu_sandbench(dir, env, "doctor", "--json", NULL);

	cr_assert_eq(r.status, 5, "missing prerequisites exit 5: %s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc);
	cr_assert(json_is_false(json_object_get(doc, "ok")));
	json_t *c;
	size_t i;
	int saw = 0, libraries = 0;
	json_array_foreach(json_object_get(doc, "checks"), i, c) {
		const char *name = json_string_value(json_object_get(c, "check"));
		if (!strcmp(name, "runsc")) {
			cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "fail");
			cr_assert(strstr(json_string_value(json_object_get(c, "fix")), "apt-get install runsc"));
			saw = 1;
		}
		/* the libraries pulls load on first use are checked by the full report */
		if (!strcmp(name, "libraries")) {
			cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "ok");
			libraries = 1;
		}
	}
	cr_assert(saw);
	cr_assert(libraries);
	json_decref(doc);
	tu_run_free(&r);
}

Test(foundation, utf8_validity_and_boundaries)
{
	static const struct {
		const char *s;
		int valid;
	} cases[] = {
		{ "plain", 1 }, { "gr\xc3\xbc\xc3\x9f", 1 }, { "\xe2\x82\xac", 1 }, { "\xf0\x9f\x98\x80", 1 },
		{ "\xff", 0 }, { "\xc0\xaf", 0 } /* overlong '/' */, { "\xed\xa0\x80", 0 } /* surrogate */,
		{ "\xf4\x90\x80\x80", 0 } /* past U+10FFFF */, { "\xc3", 0 } /* cut */, { "a\x80", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(sb_utf8_valid(cases[i].s, strlen(cases[i].s)), cases[i].valid, "case %zu", i);
	/* "a" + a 4-byte character: every cut inside it is moved back before it */
	static const char text[] = "a\xf0\x9f\x98\x80";
	cr_assert_eq(sb_utf8_boundary(text, 1), 1);
	for (size_t cut = 2; cut < 5; cut++)
		cr_assert_eq(sb_utf8_boundary(text, cut), 1, "cut at %zu", cut);
	cr_assert_eq(sb_utf8_boundary(text, 5), 5);
	cr_assert_eq(sb_utf8_boundary("ab\xff", 3), 3, "an invalid byte is not held back");
	cr_assert_eq(sb_utf8_boundary("", 0), 0);
}
