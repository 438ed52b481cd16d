/* The registry suites' fixture: test images built once per run
 * (make-images.sh), a scratch state root, Debian's docker-registry on
 * 127.0.0.1 (tests/fixtures/registry.sh), the python3 fixture servers
 * (bad-registry.py, token-server.py), all stopped by rf_teardown. */
#include "config.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/digest.h"
#include "base/fs.h"
#include "regfixture.h"
#include "testutil.h"

/* Test images are built once per run (make-images.sh) and shared read-only. */
static char *images;

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	char *mk = tu_srcpath("tests/fixtures/make-images.sh");

	(void)set;
	images = tu_tempdir("regimg");
	if (images && tu_sh("sh %s %s >/dev/null", mk, images) == 0)
		setenv("SB_TEST_REGISTRY_IMAGES", images, 1);
	free(mk);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	tu_remove(images);
	free(images);
}

struct regf rf;

/* KEY from the images' digests file (BUSYBOX_MANIFEST, ...). */
char *rf_image_digest(const char *key)
{
	char *v = tu_sh_out(". %s/digests && echo $%s", getenv("SB_TEST_REGISTRY_IMAGES"), key);

	cr_assert(v && sb_digest_valid(v), "no digest %s", key);
	return v;
}

char *rf_layout(const char *name)
{
	return sb_path_join(getenv("SB_TEST_REGISTRY_IMAGES"), name);
}

void rf_setup(void)
{
	cr_assert_not_null(getenv("SB_TEST_REGISTRY_IMAGES"), "test images were not built");
	rf.dir = tu_tempdir("reg");
	cr_assert_not_null(rf.dir);
	rf.regdir = sb_path_join(rf.dir, "registry");
	rf.script = tu_srcpath("tests/fixtures/registry.sh");
	char *rootdir = sb_path_join(rf.dir, "root");
	cr_assert_eq(sb_root_open(&rf.root, rootdir, NULL), 0);
	free(rootdir);
}

/* Stops a server started by this test from the pid it left in path. */
static void kill_pidfile(const char *path)
{
	char *text = NULL;

	if (sb_fs_read_file(&text, NULL, path, 64, NULL) == 0 && atoi(text) > 0)
		kill(atoi(text), SIGTERM);
	free(text);
}

void rf_teardown(void)
{
	char *p;

	tu_sh("%s stop %s", rf.script, rf.regdir);
	p = sb_path_join(rf.dir, "server.pid");
	kill_pidfile(p);
	free(p);
	sb_root_close(rf.root);
	tu_remove(rf.dir);
	free(rf.dir);
	free(rf.regdir);
	free(rf.script);
}

void rf_start_registry(const char *options)
{
	char *out = tu_sh_out("%s start %s %s", rf.script, rf.regdir, options ? options : "");

	cr_assert(out && atoi(out) > 0, "docker-registry did not start");
	rf.port = atoi(out);
	free(out);
}

void rf_push(const char *image, const char *dest, const char *extra)
{
	char *src = rf_layout(image);

	cr_assert_eq(tu_sh("%s push %s %s:latest %s %s", rf.script, rf.regdir, src, dest, extra ? extra : ""), 0);
	free(src);
}

static int file_exists(void *path)
{
	return access(path, F_OK) == 0;
}

/* Starts a python3 fixture server in the background; returns its rf.port. */
int rf_start_server(const char *fixture, const char *args, const char *port_file)
{
	char *py = tu_srcpath(fixture), *pf = sb_path_join(rf.dir, port_file), *text = NULL;
	int p;

	cr_assert_eq(tu_sh("python3 %s %s </dev/null >%s/server.log 2>&1 & echo $! > %s/server.pid", py, args, rf.dir,
			   rf.dir),
		     0);
	cr_assert(tu_wait_for(file_exists, pf, 20000), "%s did not start", fixture);
	cr_assert_eq(sb_fs_read_file(&text, NULL, pf, 64, NULL), 0);
	p = atoi(text);
	free(text);
	free(pf);
	free(py);
	return p;
}

int rf_start_bad_registry(const char *image, const char *faults)
{
	char *src = rf_layout(image), *args = sb_strdupf("%s %s %s", src, rf.dir, faults);
	int p = rf_start_server("tests/fixtures/bad-registry.py", args, "port");

	free(args);
	free(src);
	return p;
}

char *rf_ref_at(int p, const char *name)
{
	return sb_strdupf("127.0.0.1:%d/%s", p, name);
}

int rf_count_lines(const char *file, const char *pattern)
{
	char *n = tu_sh_out("grep -c -- '%s' %s || true", pattern, file);
	int v = n ? atoi(n) : -1;

	free(n);
	return v;
}

/* Writes "user:password" (or any text) to a file of the given mode. */
char *rf_write_secret(const char *name, const char *text, mode_t mode)
{
	char *path = sb_path_join(rf.dir, name);

	cr_assert_eq(sb_fs_write_atomic(path, text, strlen(text), 0600, NULL), 0);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

void rf_start_htpasswd_registry(void)
{
	char *htpasswd = sb_path_join(rf.dir, "htpasswd");

	cr_assert_eq(tu_sh("htpasswd -Bbn alice 's3cret:x' > %s", htpasswd), 0);
	char *opt = sb_strdupf("htpasswd=%s", htpasswd);
	rf_start_registry(opt);
	rf_push("busybox", "sb/busybox:latest", "--dest-creds 'alice:s3cret:x'");
	free(opt);
	free(htpasswd);
}

/* A token server (real RS256 JWTs with x5c) and a registry trusting it. */
int rf_start_token_registry(const char *server_args)
{
	char *args = sb_strdupf("%s %s", rf.dir, server_args);
	int tport = rf_start_server("tests/fixtures/token-server.py", args, "token.port");
	char *opt = sb_strdupf("token=http://127.0.0.1:%d/token,sb-test-registry,sandbench-test-issuer,%s/token.crt",
			       tport, rf.dir);

	rf_start_registry(opt);
	rf_push("busybox", "sb/busybox:latest", "--dest-creds bob:hunter2");
	free(opt);
	free(args);
	return tport;
}
