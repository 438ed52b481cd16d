/* sandbench image build with real runsc: a Dockerfile with FROM, RUN (a file
 * made, one removed), COPY of a context with a .dockerignore, ENV, WORKDIR,
 * USER, CMD and LABEL; what a sandbox made from the result sees and what
 * the config says; the step cache (a hit makes no sandbox and gives the same
 * digest, a changed file misses); refusals that name the line and leave
 * nothing behind. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *ctx;

static void setup(void)
{
	sbf_setup(&f, "build");
	ctx = tu_tempdir("build-ctx");
}

static void teardown(void)
{
	tu_remove(ctx);
	free(ctx);
	sbf_teardown(&f);
}

TestSuite(build, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void write_file(const char *rel, const char *text)
{
	char *path = NULL;

	cr_assert(asprintf(&path, "%s/%s", ctx, rel) > 0);
	FILE *fp = fopen(path, "w");
	cr_assert(fp, "cannot write %s", path);
	fputs(text, fp);
	fclose(fp);
	free(path);
}

static const char *const dockerfile =
	"# a comment\n"
	"FROM " SBF_IMAGE "\n"
	"ARG GREETING=hello\n"
	"RUN echo made > /made && rm /bin/vi && \\\n"
	"    echo \"$GREETING\" > /greeting\n"
	"ENV APP_HOME=/app MODE=test\n"
	"WORKDIR /app\n"
	"COPY src/ ./\n"
	"RUN [\"/bin/sh\", \"-c\", \"ls /app > /listing\"]\n"
	"USER nobody\n"
	"LABEL org.example.kind=test\n"
	"CMD [\"/bin/sh\", \"-c\", \"cat /made\"]\n";

static void make_context(void)
{
	cr_assert_eq(tu_sh("mkdir -p %s/src/sub %s/src/cache && echo one > %s/src/one && echo two > %s/src/sub/two && "
			   "echo junk > %s/src/cache/junk && echo secret > %s/src/notes.log",
			   ctx, ctx, ctx, ctx, ctx, ctx), 0);
	write_file(".dockerignore", "# not in the image\nsrc/cache\n*.log\nsrc/*.log\n");
	write_file("Dockerfile", dockerfile);
}

static struct tu_run build(const char *ref)
{
	return SB("image", "build", "-t", ref, "--json", ctx);
}

static json_t *build_ok(const char *ref)
{
	struct tu_run r = build(ref);

	cr_assert_eq(r.status, 0, "build %s: %s", ref, r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert(doc, "build gave no JSON: %s", r.out);
	tu_run_free(&r);
	return doc;
}

static long long num(json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(doc, key));
}

static void refused(const char *ref, const char *want);

static char *sandboxes(void)
{
	return tu_sh_out("ls -A %s/sandboxes 2>/dev/null | tr '\\n' ' '", f.dir);
}

Test(build, dockerfile_to_image)
{
	make_context();
	json_t *res = build_ok("app:1");
	cr_assert_str_eq(json_string_value(json_object_get(res, "reference")), "localhost/app:1");
	cr_assert_eq(num(res, "sandboxes"), 2, "one sandbox per RUN");
	cr_assert_eq(num(res, "cached"), 0);

	struct tu_run r = SB("image", "inspect", "app:1", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *img = json_loads(r.out, 0, NULL), *cfg = json_object_get(img, "exec_config");
	tu_run_free(&r);
	cr_assert_str_eq(json_string_value(json_object_get(cfg, "WorkingDir")), "/app");
	cr_assert_str_eq(json_string_value(json_object_get(cfg, "User")), "nobody");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cfg, "Labels"), "org.example.kind")), "test");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(cfg, "Cmd"), 2)), "cat /made");
	char *env = json_dumps(json_object_get(cfg, "Env"), 0);
	cr_assert(strstr(env, "\"APP_HOME=/app\"") && strstr(env, "\"MODE=test\""), "Env: %s", env);
	free(env);
	json_decref(img);

	int st;
	char *s0 = sandboxes();
	cr_assert_str_eq(s0, "", "no build sandbox is left behind: %s", s0);
	free(s0);
	sbf_ok(SB("create", "c", "--image", "app:1"), "create from the result");
	char *out = sbf_sh(&f, NULL, "c",
			   "cat /made /greeting /app/one /app/sub/two /listing; test -e /bin/vi && echo vi; "
			   "ls /app/cache /app/notes.log 2>&1 | grep -c 'No such'",
			   &st);
	cr_assert_eq(st, 0, "exec: %s", out);
	cr_assert_str_eq(out, "made\nhello\none\ntwo\none\nsub\n2\n", "the tree: %s", out);
	free(out);
	json_decref(res);

	/* the config's Env, WorkingDir and User reach exec, as in docker; the
	 * command line wins */
	out = sbf_sh(&f, NULL, "c", "id -u; id -g; pwd; echo $MODE $APP_HOME $HOME", NULL);
	cr_assert_str_eq(out, "65534\n65534\n/app\ntest /app /\n", "exec of an image with ENV, WORKDIR, USER: %s", out);
	free(out);
	struct tu_run e = SB("exec", "c", "--user", "0", "--cwd", "/", "--env", "MODE=mine", "--", "/bin/sh", "-c",
			     "id -u; pwd; echo $MODE $APP_HOME $HOME");
	cr_assert_eq(e.status, 0, "%s", e.err);
	cr_assert_str_eq(e.out, "0\n/\nmine /app /root\n", "explicit options win: %s", e.out);
	tu_run_free(&e);
	/* sessions (and so shells: the same process is built) too */
	sbf_ok(SB("session", "start", "c", "s1"), "session start");
	e = SB("session", "send", "c", "s1", "--", "echo \"U=$(id -u) D=$(pwd) M=$MODE\"");
	cr_assert_eq(e.status, 0, "%s", e.err);
	char off[32];
	snprintf(off, sizeof(off), "%lld", atoll(e.out));
	tu_run_free(&e);
	e = SB("session", "read", "c", "s1", "--since", off, "--max-wait", "20", "--format", "clean");
	cr_assert_eq(e.status, 0, "%s", e.err);
	cr_assert(strstr(e.out, "U=65534 D=/app M=test"), "a session of the image: %s", e.out);
	tu_run_free(&e);
	sbf_ok(SB("session", "kill", "c", "s1"), "session kill");
	e = SB("exec", "c", "--user", "daemon", "--", "true");
	cr_assert_neq(e.status, 0, "a user of the host's passwd, not the sandbox's, was taken");
	cr_assert(strstr(e.err, "user 'daemon' is not in the image's /etc/passwd"), "%s", e.err);
	tu_run_free(&e);
}

/* RUN runs as the USER in force, looked up in the image's own passwd and
 * group; a user the image does not know is refused with its line. */
Test(build, user_applies_to_run)
{
	write_file("Dockerfile", "FROM " SBF_IMAGE "\n"
		   "RUN mkdir /out && chmod 777 /out\n"
		   "USER nobody\n"
		   "RUN id -u > /out/uid && id -g > /out/gid && touch /out/by-nobody\n"
		   "USER 1234:nogroup\n"
		   "RUN id -u > /out/uid2 && id -g >> /out/uid2\n"
		   "USER root\n"
		   "RUN stat -c '%u %g' /out/by-nobody > /out/owner\n");
	json_t *res = build_ok("users:1");
	json_decref(res);
	sbf_ok(SB("create", "u", "--image", "users:1"), "create");
	char *out = sbf_sh(&f, NULL, "u", "cat /out/uid /out/gid /out/uid2 /out/owner; id -u", NULL);
	cr_assert_str_eq(out, "65534\n65534\n1234\n65534\n65534 65534\n0\n", "RUN as USER: %s", out);
	free(out);
	sbf_ok(SB("rm", "--force", "u"), "rm");

	/* the host knows daemon; the image does not */
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nUSER daemon\nRUN true\n");
	refused("users:2", "line 3: RUN true: USER of line 2: user 'daemon' is not in the image's /etc/passwd");
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nUSER nobody:staff\nRUN true\n");
	refused("users:3", "line 3: RUN true: USER of line 2: group 'staff' is not in the image's /etc/group");
}

Test(build, cache_hit_and_miss)
{
	make_context();
	json_t *first = build_ok("app:1");
	struct tu_run r = SB("image", "build", "-t", "app:2", ctx);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "Step 3/10: RUN echo made") && strstr(r.err, "(cached)"), "progress: %s", r.err);
	tu_run_free(&r);
	json_t *again = build_ok("app:3");
	cr_assert_eq(num(again, "sandboxes"), 0, "a rebuild makes no sandbox");
	cr_assert_str_eq(json_string_value(json_object_get(again, "digest")),
			 json_string_value(json_object_get(first, "digest")), "the same image");

	write_file("src/one", "changed\n");
	json_t *miss = build_ok("app:4");
	cr_assert_eq(num(miss, "sandboxes"), 1, "the RUN after the changed COPY runs again");
	cr_assert_str_neq(json_string_value(json_object_get(miss, "digest")),
			  json_string_value(json_object_get(first, "digest")));
	sbf_ok(SB("create", "c", "--image", "app:4"), "create");
	char *out = sbf_sh(&f, NULL, "c", "cat /app/one", NULL);
	cr_assert_str_eq(out, "changed\n");
	free(out);

	json_t *nocache = NULL;
	r = SB("image", "build", "--no-cache", "-t", "app:5", "--json", ctx);
	cr_assert_eq(r.status, 0, "%s", r.err);
	nocache = json_loads(r.out, 0, NULL);
	tu_run_free(&r);
	cr_assert_eq(num(nocache, "sandboxes"), 2, "--no-cache runs every RUN");
	json_decref(first);
	json_decref(again);
	json_decref(miss);
	json_decref(nocache);
}

static const char *digest_of(json_t *res)
{
	return json_string_value(json_object_get(res, "digest"));
}

/* COPY's cache key is the content: names, modes, owners and data of what
 * is copied (.dockerignore applied), not the times. */
Test(build, copy_cache_keys_on_content)
{
	make_context();
	json_t *first = build_ok("content:1");

	/* touched, not changed: every step cached, the same image */
	cr_assert_eq(tu_sh("touch -d '2001-02-03 04:05' %s/src/one %s/src/sub/two %s/src/sub %s/src", ctx, ctx, ctx, ctx), 0);
	json_t *touched = build_ok("content:2");
	cr_assert_eq(num(touched, "sandboxes"), 0, "a touched file misses the cache");
	cr_assert_str_eq(digest_of(touched), digest_of(first));
	/* an ignored file is no part of the copy */
	cr_assert_eq(tu_sh("echo other > %s/src/cache/junk && echo more > %s/src/new.log", ctx, ctx), 0);
	json_t *ignored = build_ok("content:3");
	cr_assert_eq(num(ignored, "sandboxes"), 0, "a change .dockerignore leaves out misses the cache");
	cr_assert_str_eq(digest_of(ignored), digest_of(first));

	/* one byte changed (same size, same time): a miss */
	cr_assert_eq(tu_sh("touch -r %s/src/one %s/ref && printf 'onE\n' > %s/src/one && touch -r %s/ref %s/src/one",
			   ctx, ctx, ctx, ctx, ctx), 0);
	json_t *changed = build_ok("content:4");
	cr_assert_eq(num(changed, "sandboxes"), 1, "a changed byte hits the cache");
	cr_assert_str_neq(digest_of(changed), digest_of(first));
	/* a mode changed: a miss too */
	cr_assert_eq(tu_sh("chmod 0600 %s/src/sub/two", ctx), 0);
	json_t *mode = build_ok("content:5");
	cr_assert_eq(num(mode, "sandboxes"), 1, "a changed mode hits the cache");
	json_decref(first);
	json_decref(touched);
	json_decref(ignored);
	json_decref(changed);
	json_decref(mode);
}

/* The step cache is a user of the unnamed intermediate images: a prune
 * keeps them and the rebuild hits; --build-cache drops it on purpose. */
Test(build, cache_survives_prune)
{
	make_context();
	json_t *first = build_ok("pruned:1");
	struct tu_run r = SB("image", "prune", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *rep = json_loads(r.out, 0, NULL);
	tu_run_free(&r);
	cr_assert_eq(num(rep, "images"), 0, "a prune removed the cache's images");
	json_decref(rep);
	json_t *again = build_ok("pruned:2");
	cr_assert_eq(num(again, "sandboxes"), 0, "the rebuild after a prune ran cold");
	cr_assert_str_eq(digest_of(again), digest_of(first));

	r = SB("image", "prune", "--build-cache", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	rep = json_loads(r.out, 0, NULL);
	tu_run_free(&r);
	cr_assert_gt(num(rep, "build_cache"), 0, "no cache entry dropped");
	cr_assert_gt(num(rep, "images"), 0, "the intermediate images stayed");
	json_decref(rep);
	r = SB("image", "prune", "--build-cache", "extra");
	cr_assert_eq(r.status, 2, "an operand is a usage error: %s", r.err);
	tu_run_free(&r);
	json_t *cold = build_ok("pruned:3");
	cr_assert_eq(num(cold, "sandboxes"), 2, "the cache was not dropped");
	cr_assert_eq(num(cold, "cached"), 0);
	json_decref(first);
	json_decref(again);
	json_decref(cold);
}

/* A build that must fail: the message holds want, no image named ref. */
static void refused(const char *ref, const char *want)
{
	struct tu_run r = build(ref);

	cr_assert_neq(r.status, 0, "the build of %s succeeded", ref);
	cr_assert(strstr(r.err, want), "expected '%s' in: %s", want, r.err);
	tu_run_free(&r);
	r = SB("image", "inspect", ref);
	cr_assert_neq(r.status, 0, "%s was named", ref);
	tu_run_free(&r);
	char *s = sandboxes();
	cr_assert_str_eq(s, "", "a build sandbox was left behind: %s", s);
	free(s);
}

Test(build, refusals)
{
	cr_assert_eq(tu_sh("mkdir -p %s/d && echo x > %s/d/x && ln -s /etc/passwd %s/out", ctx, ctx, ctx), 0);
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nRUN true\n\nHEALTHCHECK CMD true\n");
	refused("bad:1", "line 4: the instruction 'HEALTHCHECK' is not supported");
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nCOPY ../etc/passwd /x\n");
	refused("bad:2", "leads out of the build context");
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nCOPY out /x\n");
	refused("bad:3", "leads out of the build context");
	write_file("Dockerfile", "FROM localhost/nothing-here:1\nRUN true\n");
	refused("bad:4", "line 1: FROM localhost/nothing-here:1");
	/* not in the store: pulled, from a registry that is not there */
	write_file("Dockerfile", "FROM 127.0.0.1:1/none:1\nRUN true\n");
	refused("bad:6", "line 1: FROM 127.0.0.1:1/none:1");
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nCOPY missing /x\n");
	refused("bad:7", "line 2: COPY");
	write_file("Dockerfile", "FROM " SBF_IMAGE "\nCOPY d /d\nRUN echo failing >&2; exit 3\n");
	refused("bad:5", "line 3: RUN echo failing >&2; exit 3: the command exited with status 3");
}

/* The default image is its recipe built on the bootstrap base: the shipped
 * default.Dockerfile (a sandbox of it has its ENV and WORKDIR), or a recipe
 * of the user's (-f); a broken recipe names its line and leaves the default
 * as it was. */
Test(build, default_image_from_its_recipe)
{
	struct tu_run r = SB("image", "bootstrap", "--busybox", "--quiet", "--json");

	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert(doc, "%s", r.out);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "reference")), "localhost/sandbench/default:latest");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "base")), "localhost/sandbench/base:latest");
	cr_assert(strstr(json_string_value(json_object_get(doc, "recipe")), "default.Dockerfile"), "%s", r.out);
	tu_run_free(&r);
	sbf_ok(SB("create", "dflt", "--image", "sandbench/default", "--network", "off"), "create");
	r = SB("exec", "dflt", "--", "sh", "-c", "echo $LANG; pwd");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "C.UTF-8\n/workspace\n", "the shipped recipe's ENV and WORKDIR");
	tu_run_free(&r);
	sbf_ok(SB("rm", "dflt"), "rm");

	write_file("mine.Dockerfile", "FROM localhost/sandbench/base\nENV MARK=mine\n");
	char *mine = NULL;
	cr_assert(asprintf(&mine, "%s/mine.Dockerfile", ctx) > 0);
	sbf_ok(SB("image", "bootstrap", "--busybox", "--quiet", "-f", mine), "bootstrap -f");
	sbf_ok(SB("create", "mine", "--image", "sandbench/default", "--network", "off"), "create");
	r = SB("exec", "mine", "--", "sh", "-c", "echo $MARK");
	cr_assert_str_eq(r.out, "mine\n", "the user's recipe: %s", r.err);
	tu_run_free(&r);
	sbf_ok(SB("rm", "mine"), "rm");
	r = SB("image", "inspect", "sandbench/default", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *before = strdup(r.out);
	tu_run_free(&r);

	write_file("mine.Dockerfile", "FROM localhost/sandbench/base\nHEALTHCHECK CMD true\n");
	r = SB("image", "bootstrap", "--busybox", "--quiet", "-f", mine);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "line 2: the instruction 'HEALTHCHECK' is not supported"), "%s", r.err);
	tu_run_free(&r);
	r = SB("image", "inspect", "sandbench/default", "--json");
	cr_assert_str_eq(r.out, before, "a broken recipe changed the default image");
	tu_run_free(&r);
	r = SB("image", "bootstrap", "--name", "x:1", "-f", mine);
	cr_assert_eq(r.status, 2, "--name with -f: %s", r.err);
	tu_run_free(&r);
	free(before);
	free(mine);
	json_decref(doc);
}
