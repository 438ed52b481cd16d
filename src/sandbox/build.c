/* image build: the steps of a Dockerfile, each on the image the one before
 * made. Config-only steps are gathered and applied with the next layer (or
 * at the end), so a run of ENV, LABEL, ... makes no image of its own to
 * unpack; the cache key of a step names what was gathered before it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "build_internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/build_cache.h"
#include "image/commit.h"
#include "image/dockerfile.h"
#include "image/ref.h"
#include "image/store.h"
#include "registry/registry.h"
#include "sandbox/build.h"
#include "sandbox/commit.h"
#include "sandbox/sandbox.h"

#define VALUE_MAX 8192

struct strv {
	char **v;                        /* NULL-terminated */
	size_t n;
};

struct build {
	struct sb_root *root;
	const struct sb_build_opts *o;
	struct sb_build_result *res;
	struct sb_dockerfile df;
	int context;
	char **ignore;
	size_t n_ignore;
	char image[SB_DIGEST_STR_LEN];   /* what the last layer step made (FROM's at first) */
	struct strv pending;             /* config changes since then: "ENV K=V", ... */
	struct strv args;                /* ARG values in force: "K=V" */
	struct strv env;                 /* the config's Env as it stands */
	char *workdir;                   /* NULL: / */
	char *user;                      /* USER in force (NULL: root) */
	int user_line;                   /* its line (0: the base image's) */
	const struct sb_df_step *step;
	size_t index;
};

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int strv_add(struct strv *s, const char *v, struct sb_error *err)
{
	char **nv = realloc(s->v, (s->n + 2) * sizeof(*nv));

	if (!nv)
		return nomem(err);
	s->v = nv;
	if (!(nv[s->n] = strdup(v)))
		return nomem(err);
	nv[++s->n] = NULL;
	return 0;
}

/* Sets K=V, replacing a K already there. */
static int strv_set(struct strv *s, const char *kv, struct sb_error *err)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i], kv, klen) && s->v[i][klen] == '=') {
			char *nv = strdup(kv);
			if (!nv)
				return nomem(err);
			free(s->v[i]);
			s->v[i] = nv;
			return 0;
		}
	return strv_add(s, kv, err);
}

static const char *strv_get(const struct strv *s, const char *key, size_t klen)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i], key, klen) && s->v[i][klen] == '=')
			return s->v[i] + klen + 1;
	return NULL;
}

static void strv_clear(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int step_error(struct build *b, struct sb_error *err, int code, const char *why)
{
	return sb_error_set(err, code, _("line %d (%s): %s"), b->step->line, b->step->word, why);
}

/* $NAME and ${NAME} from the ARG and ENV values (ENV wins, as in docker). */
static int expand(char **out, const struct build *b, const char *s, struct sb_error *err)
{
	char buf[VALUE_MAX];
	size_t o = 0;

	while (*s && o < sizeof(buf) - 1) {
		if (*s != '$' || !(s[1] == '{' || s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z') || (s[1] >= 'a' && s[1] <= 'z'))) {
			buf[o++] = *s++;
			continue;
		}
		int brace = s[1] == '{';
		const char *name = s + 1 + brace;
		size_t len = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (brace && name[len] != '}')
			return sb_error_set(err, SB_ERR_INVALID, _("line %d: '${' without a closing '}'"), b->step->line);
		const char *v = strv_get(&b->env, name, len);
		v = v ? v : strv_get(&b->args, name, len);
		for (; v && *v && o < sizeof(buf) - 1; v++)
			buf[o++] = *v;
		s = name + len + brace;
	}
	if (*s)
		return sb_error_set(err, SB_ERR_LIMIT, _("line %d: the instruction is longer than %d bytes"), b->step->line,
				    VALUE_MAX);
	buf[o] = '\0';
	return (*out = strdup(buf)) ? 0 : nomem(err);
}

/* Words split at blanks, double quotes kept together and removed. */
static int words(struct strv *out, const char *s, struct sb_error *err)
{
	char w[VALUE_MAX];
	int rc = 0;

	while (rc == 0 && *(s += strspn(s, " \t"))) {
		size_t o = 0;
		int quoted = 0;
		for (; *s && (quoted || !strchr(" \t", *s)) && o < sizeof(w) - 1; s++)
			if (*s == '"')
				quoted = !quoted;
			else
				w[o++] = *s;
		w[o] = '\0';
		rc = strv_add(out, w, err);
	}
	return rc;
}

static void progress(struct build *b, int cached)
{
	struct sb_build_event ev = { b->index + 1, b->df.n_steps, b->step->line, b->step->word, b->step->args, cached };

	if (cached)
		b->res->cached++;
	if (b->o->progress)
		b->o->progress(b->o->user, &ev);
}

/* What the step makes depends on: the image below, the gathered changes,
 * the instruction, extra (copied content) and the build args. */
static char *cache_key(struct build *b, const char *what, const char *extra)
{
	size_t len = strlen(b->image) + strlen(what) + (extra ? strlen(extra) : 0) + 16;
	for (size_t i = 0; i < b->pending.n; i++)
		len += strlen(b->pending.v[i]) + 1;
	for (size_t i = 0; i < b->args.n; i++)
		len += strlen(b->args.v[i]) + 1;
	char *key = malloc(len);
	if (!key)
		return NULL;
	int o = snprintf(key, len, "%s\n", b->image);
	for (size_t i = 0; i < b->pending.n; i++)
		o += snprintf(key + o, len - (size_t)o, "%s\n", b->pending.v[i]);
	o += snprintf(key + o, len - (size_t)o, "%s\n%s\n", what, extra ? extra : "");
	for (size_t i = 0; i < b->args.n; i++)
		o += snprintf(key + o, len - (size_t)o, "%s\n", b->args.v[i]);
	return key;
}

/* 1 and the image when the cache has key (and --no-cache is not given). */
static int cache_get(char digest[SB_DIGEST_STR_LEN], struct build *b, const char *key)
{
	return !b->o->no_cache && sb_image_cache_get(digest, b->root, key);
}

static void cache_put(struct build *b, const char *key, const char *digest)
{
	sb_image_cache_put(b->root, key, digest);
}

/* The step's result becomes the image the next one builds on. */
static void advance(struct build *b, const char *digest)
{
	snprintf(b->image, sizeof(b->image), "%s", digest);
	strv_clear(&b->pending);
}

/* ---- FROM ---- */

static int load_env(struct build *b, const struct sb_image_info *info, struct sb_error *err)
{
	json_t *cfg = info->exec_config ? json_loads(info->exec_config, 0, NULL) : NULL, *v;
	size_t i;
	int rc = 0;

	json_array_foreach (json_object_get(cfg, "Env"), i, v)
		if (rc == 0 && json_is_string(v))
			rc = strv_set(&b->env, json_string_value(v), err);
	const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
	if (rc == 0 && wd && *wd && !(b->workdir = strdup(wd)))
		rc = nomem(err);
	const char *user = json_string_value(json_object_get(cfg, "User"));
	if (rc == 0 && user && *user && !(b->user = strdup(user)))
		rc = nomem(err);
	json_decref(cfg);
	return rc;
}

static int step_from(struct build *b, const char *args, struct sb_error *err)
{
	struct sb_image_info info;
	char digest[SB_DIGEST_STR_LEN];
	int rc = sb_image_inspect(&info, b->root, args, err);

	if (rc == SB_ERR_NOTFOUND && !sb_digest_valid(args) && strncmp(args, "localhost/", 10)) {
		struct sb_registry_opts ro = { 0 };
		if ((rc = sb_registry_pull(digest, NULL, b->root, args, &ro, err)) == 0)
			rc = sb_image_inspect(&info, b->root, digest, err);
	}
	if (rc < 0) {
		sb_error_wrap(err, _("line %d: FROM %s"), b->step->line, args);
		return rc;
	}
	advance(b, info.digest);
	rc = load_env(b, &info, err);
	sb_image_info_clear(&info);
	progress(b, 0);
	return rc;
}

/* ---- ARG and the config-only steps ---- */

static int step_arg(struct build *b, const char *args, struct sb_error *err)
{
	size_t klen = strcspn(args, "=");
	const char *given = NULL;
	char *kv;

	for (size_t i = 0; i < b->o->n_build_args; i++)
		if (!strncmp(b->o->build_args[i], args, klen) && b->o->build_args[i][klen] == '=')
			given = b->o->build_args[i];
	kv = given ? strdup(given) : args[klen] ? strdup(args) : sb_strdupf("%s=", args);
	int rc = kv ? strv_set(&b->args, kv, err) : nomem(err);
	free(kv);
	progress(b, 0);
	return rc;
}

/* "ENV K=V K2=V2" or "ENV K V": one change each. */
static int pairs(struct build *b, const char *word, const char *args, struct sb_error *err)
{
	struct strv w = { 0 };
	int rc = 0;

	if (!strchr(args, '=') || strcspn(args, " \t") < strcspn(args, "=")) {
		size_t klen = strcspn(args, " \t");
		char *c = sb_strdupf("%s %.*s=%s", word, (int)klen, args, args + klen + strspn(args + klen, " \t"));
		rc = c ? strv_add(&b->pending, c, err) : nomem(err);
		if (rc == 0 && !strcmp(word, "ENV"))
			rc = strv_set(&b->env, c + 4, err);
		free(c);
		return rc;
	}
	rc = words(&w, args, err);
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		char *c = sb_strdupf("%s %s", word, w.v[i]);
		rc = c ? strv_add(&b->pending, c, err) : nomem(err);
		if (rc == 0 && !strcmp(word, "ENV"))
			rc = strv_set(&b->env, w.v[i], err);
		free(c);
	}
	strv_clear(&w);
	return rc;
}

static int step_change(struct build *b, const char *args, struct sb_error *err)
{
	const char *word = b->step->word;
	int rc;

	if (!strcmp(word, "ENV") || !strcmp(word, "LABEL"))
		rc = pairs(b, word, args, err);
	else {
		char *wd = NULL;
		if (!strcmp(word, "WORKDIR") && args[0] != '/')
			args = wd = sb_strdupf("%s/%s", b->workdir ? b->workdir : "", args);
		char *c = args ? sb_strdupf("%s %s", word, args) : NULL;
		rc = c ? sb_image_changes_check(&c, 1, err) : nomem(err);
		if (rc == 0)
			rc = strv_add(&b->pending, c, err);
		if (rc == 0 && !strcmp(word, "WORKDIR")) {
			free(b->workdir);
			rc = (b->workdir = strdup(args)) ? 0 : nomem(err);
		}
		if (rc == 0 && !strcmp(word, "USER")) {
			free(b->user);
			b->user_line = b->step->line;
			rc = (b->user = strdup(args)) ? 0 : nomem(err);
		}
		free(c);
		free(wd);
	}
	if (rc < 0)
		sb_error_wrap(err, _("line %d"), b->step->line);
	else
		progress(b, 0);
	return rc;
}

/* ---- COPY, ADD ---- */

static int copy_args(struct strv *w, struct build *b, const char *args, struct sb_error *err)
{
	char **argv = NULL;
	int rc = sb_df_exec_form(&argv, args, err);

	for (size_t i = 0; rc == 0 && argv[i]; i++)
		rc = strv_add(w, argv[i], err);
	sb_df_argv_free(argv);
	if (rc == 1)
		rc = words(w, args, err);
	if (rc == 0 && w->n < 2)
		return step_error(b, err, SB_ERR_INVALID, _("expected one or more sources and a destination"));
	for (size_t i = 0; rc == 0 && i < w->n; i++) {
		if (!strncmp(w->v[i], "--", 2))
			return step_error(b, err, SB_ERR_INVALID, _("options such as --from or --chown are not supported"));
		if (i + 1 < w->n && strstr(w->v[i], "://"))
			return step_error(b, err, SB_ERR_INVALID, _("only local files of the context can be copied"));
		if (i + 1 < w->n && strpbrk(w->v[i], "*?["))
			return step_error(b, err, SB_ERR_INVALID, _("wildcards in sources are not supported"));
	}
	return rc;
}

static int step_copy(struct build *b, const char *args, struct sb_error *err)
{
	struct sb_image_info info = { 0 };
	struct sb_image_new_layer layer;
	struct strv w = { 0 };
	char content[SB_DIGEST_STR_LEN], digest[SB_DIGEST_STR_LEN], *dest = NULL, *key = NULL;
	int rc = copy_args(&w, b, args, err);

	if (rc == 0) {
		const char *d = w.v[w.n - 1];
		dest = d[0] == '/' ? strdup(d) : sb_strdupf("%s/%s", b->workdir && strcmp(b->workdir, "/") ? b->workdir : "", d);
		rc = dest ? sb_image_resolve(&info, b->root, b->image, err) : nomem(err);
	}
	struct sb_build_copy c = { b->context, info.rootfs, b->ignore, b->n_ignore, w.v, w.n - 1, dest };
	if (rc == 0 && (rc = sb_build_copy_digest(content, &c, err)) == 0 &&
	    !(key = cache_key(b, b->step->word, content)))
		rc = nomem(err);
	if (rc == 0 && cache_get(digest, b, key)) {
		advance(b, digest);
		progress(b, 1);
	} else if (rc == 0 && (rc = sb_root_lock(b->root, SB_LOCK_SHARED, err)) == 0) {
		char *by = sb_strdupf("%s %s", b->step->word, args);
		rc = by ? sb_build_copy_layer(&layer, b->root, &c, err) : nomem(err);
		if (rc == 0) {
			struct sb_image_commit_opts io = { .parent = b->image, .created_by = by, .source = "build",
							   .changes = b->pending.v, .n_changes = b->pending.n };
			rc = sb_image_commit(digest, b->root, &layer, &io, err);
		} else {
			sb_root_unlock(b->root);
		}
		free(by);
		if (rc == 0) {
			cache_put(b, key, digest);
			advance(b, digest);
			progress(b, 0);
		}
	}
	if (rc < 0 && err && !strstr(err->msg, _("line ")))
		sb_error_wrap(err, _("line %d: %s"), b->step->line, b->step->word);
	sb_image_info_clear(&info);
	strv_clear(&w);
	free(dest);
	free(key);
	return rc;
}

/* ---- RUN ---- */

/* The USER in force names someone of the image's own /etc/passwd and
 * /etc/group (read inside its tree): refused before a sandbox is made. */
static int check_user(struct build *b, const char *args, struct sb_error *err)
{
	struct sb_image_info info;
	struct sb_user u;
	int rc;

	if (!b->user)
		return 0;
	if ((rc = sb_image_resolve(&info, b->root, b->image, err)) < 0)
		return rc;
	if ((rc = sb_user_resolve(&u, info.rootfs, b->user, err)) < 0) {
		if (b->user_line)
			sb_error_wrap(err, _("line %d: RUN %s: USER of line %d"), b->step->line, args, b->user_line);
		else
			sb_error_wrap(err, _("line %d: RUN %s: the base image's User"), b->step->line, args);
	}
	sb_image_info_clear(&info);
	return rc;
}

/* Runs argv in a new sandbox of the current image and commits its disk. */
static int run_in_sandbox(char digest[SB_DIGEST_STR_LEN], struct build *b, char *const *argv, const char *args,
			  struct sb_error *err)
{
	char name[64];
	struct sb_sandbox_spec spec = { .name = name, .image = b->image, .kind = SB_KIND_TEMPORARY,
					.network = b->o->network || b->step->network, .no_exchange = 1 };
	struct sb_exec_result r = { 0 };
	struct strv env = { 0 };
	int rc = 0;

	snprintf(name, sizeof(name), "build-%ld-%zu", (long)getpid(), b->index + 1);
	if ((rc = check_user(b, args, err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < b->args.n; i++)
		rc = strv_set(&env, b->args.v[i], err);
	for (size_t i = 0; rc == 0 && i < b->env.n; i++)
		rc = strv_set(&env, b->env.v[i], err);
	if (rc < 0 || (rc = sb_sandbox_create(NULL, b->root, &spec, err)) < 0) {
		strv_clear(&env);
		return rc;
	}
	b->res->sandboxes++;
	if (b->workdir && strcmp(b->workdir, "/")) {
		char *mk[] = { "mkdir", "-p", "--", b->workdir, NULL };
		struct sb_exec_opts mo = { .argv = mk, .user = "0", .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
					   .unrecorded = 1 };
		rc = sb_sandbox_exec(&r, b->root, name, &mo, err);
		sb_exec_result_clear(&r);
	}
	struct sb_exec_opts eo = { .argv = argv, .cwd = b->workdir ? b->workdir : "/", .env = env.v,
				   .user = b->user ? b->user : "0", .stdin_fd = -1,
				   .stdout_fd = b->o->log_fd, .stderr_fd = b->o->log_fd,
				   .source = SB_TIMELINE_SANDBENCH };
	if (rc == 0 && (rc = sb_sandbox_exec(&r, b->root, name, &eo, err)) == 0 && r.exit_code != 0) {
		b->res->exit_code = r.exit_code;
		rc = sb_error_set(err, SB_ERR_STATE, _("line %d: RUN %s: the command exited with status %d"), b->step->line,
				  args, r.exit_code);
	}
	sb_exec_result_clear(&r);
	strv_clear(&env);
	if (rc == 0) {
		char *by = sb_strdupf("RUN %s", args);
		struct sb_commit_opts co = { .flags = SB_COMMIT_WORKSPACE, .changes = b->pending.v,
					     .n_changes = b->pending.n, .created_by = by, .source = "build" };
		struct sb_commit_result cr;
		rc = by ? sb_sandbox_commit(&cr, b->root, name, NULL, &co, err) : nomem(err);
		if (rc == 0)
			snprintf(digest, SB_DIGEST_STR_LEN, "%s", cr.digest);
		sb_commit_result_clear(by ? &cr : NULL);
		free(by);
	}
	struct sb_error rerr;
	int rrc = sb_sandbox_remove(b->root, name, SB_REMOVE_FORCE, &rerr);
	if (rc == 0 && rrc < 0) {
		if (err)
			*err = rerr;
		rc = rrc;
	}
	return rc;
}

static int step_run(struct build *b, const char *args, struct sb_error *err)
{
	char **argv = NULL, digest[SB_DIGEST_STR_LEN];
	char *what = sb_strdupf("RUN%s %s", b->o->network || b->step->network ? " network" : "", args);
	char *key = what ? cache_key(b, what, NULL) : NULL;
	int rc = key ? sb_df_exec_form(&argv, args, err) : nomem(err);
	char *sh[] = { "/bin/sh", "-c", (char *)args, NULL };

	if (rc >= 0 && cache_get(digest, b, key)) {
		advance(b, digest);
		progress(b, 1);
		rc = 0;
	} else if (rc >= 0) {
		progress(b, 0);
		if ((rc = run_in_sandbox(digest, b, rc == 1 ? sh : argv, args, err)) == 0) {
			cache_put(b, key, digest);
			advance(b, digest);
		}
	}
	sb_df_argv_free(argv);
	free(what);
	free(key);
	return rc;
}

static const struct step_kind {
	enum sb_df_kind kind;
	int (*run)(struct build *b, const char *args, struct sb_error *err);
	int expand;                      /* $VARS are replaced before (RUN gets them as its environment) */
} step_kinds[] = {
	{ SB_DF_FROM, step_from, 1 }, { SB_DF_RUN, step_run, 0 },       { SB_DF_COPY, step_copy, 1 },
	{ SB_DF_ARG, step_arg, 0 },   { SB_DF_CHANGE, step_change, 1 },
};

static int run_step(struct build *b, struct sb_error *err)
{
	for (size_t i = 0; i < sizeof(step_kinds) / sizeof(step_kinds[0]); i++) {
		if (step_kinds[i].kind != b->step->kind)
			continue;
		char *args = NULL;
		int rc = step_kinds[i].expand ? expand(&args, b, b->step->args, err) : 0;
		if (rc == 0)
			rc = step_kinds[i].run(b, args ? args : b->step->args, err);
		free(args);
		return rc;
	}
	return step_error(b, err, SB_ERR_INVALID, _("not supported"));
}

/* The gathered changes of the last steps as an image of their own (cached
 * too: a new config would carry a new time), then the name. */
static int finish(struct build *b, struct sb_error *err)
{
	char digest[SB_DIGEST_STR_LEN];
	char *key = cache_key(b, "END", NULL);
	int rc = key ? 0 : nomem(err);

	if (rc == 0 && b->pending.n && !cache_get(digest, b, key)) {
		struct sb_image_commit_opts io = { .parent = b->image, .created_by = "build", .source = "build",
						   .changes = b->pending.v, .n_changes = b->pending.n };
		if ((rc = sb_image_commit(digest, b->root, NULL, &io, err)) == 0)
			cache_put(b, key, digest);
	}
	if (rc == 0 && b->pending.n)
		advance(b, digest);
	free(key);
	if (rc == 0)
		rc = sb_image_install_child(b->root, b->res->ref, b->image, "build", NULL, NULL, err);
	if (rc == 0)
		snprintf(b->res->digest, sizeof(b->res->digest), "%s", b->image);
	return rc;
}

static int load(struct build *b, struct sb_error *err)
{
	const struct sb_build_opts *o = b->o;
	char *path = o->dockerfile ? strdup(o->dockerfile) : sb_path_join(o->context, "Dockerfile"), *text = NULL;
	size_t len;
	int rc = path ? sb_fs_read_file(&text, &len, path, SB_DOCKERFILE_MAX, err) : nomem(err);

	if (rc == 0 && (rc = sb_dockerfile_parse(&b->df, text, len, err)) < 0)
		sb_error_wrap(err, "%s", path);
	free(text);
	free(path);
	for (size_t i = 0; rc == 0 && i < o->n_build_args; i++)
		if (!strchr(o->build_args[i], '=') || o->build_args[i][0] == '=')
			rc = sb_error_set(err, SB_ERR_INVALID, _("--build-arg '%s': expected NAME=VALUE"), o->build_args[i]);
	if (rc == 0 && (b->context = open(o->context, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = sb_error_errno(err, SB_ERR_NOTFOUND, errno, _("cannot open the build context '%s'"), o->context);
	if (rc == 0)
		rc = sb_build_ignore_load(&b->ignore, &b->n_ignore, o->context, err);
	return rc;
}

int sb_build(struct sb_build_result *out, struct sb_root *root, const struct sb_build_opts *o, struct sb_error *err)
{
	struct build b = { .root = root, .o = o, .res = out, .context = -1 };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_image_ref_local(&out->ref, o->ref, err)) == 0)
		rc = load(&b, err);
	for (b.index = 0; rc == 0 && b.index < b.df.n_steps; b.index++) {
		b.step = &b.df.steps[b.index];
		out->steps++;
		rc = run_step(&b, err);
	}
	if (rc == 0)
		rc = finish(&b, err);
	sb_dockerfile_clear(&b.df);
	if (b.context >= 0)
		close(b.context);
	for (size_t i = 0; i < b.n_ignore; i++)
		free(b.ignore[i]);
	free(b.ignore);
	strv_clear(&b.pending);
	strv_clear(&b.args);
	strv_clear(&b.env);
	free(b.workdir);
	free(b.user);
	return rc;
}

void sb_build_result_clear(struct sb_build_result *r)
{
	if (!r)
		return;
	free(r->ref);
	memset(r, 0, sizeof(*r));
}
