/* What a process started in a sandbox (exec, shell, session) gets from its
 * image's config, as docker gives it: the config's Env, WorkingDir and User
 * (kept in the record at create), each under what the caller asked for. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

/* Sets kv in env[0..*n): a variable of its name is replaced (the later one wins). */
static void env_put(char **env, size_t *n, char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < *n; i++)
		if (!strncmp(env[i], kv, klen) && env[i][klen] == '=') {
			env[i] = kv;
			return;
		}
	env[(*n)++] = kv;
}

static int env_has(char *const *env, const char *key)
{
	size_t klen = strlen(key);

	for (; env && *env; env++)
		if (!strncmp(*env, key, klen) && (*env)[klen] == '=')
			return 1;
	return 0;
}

static int make_env(struct sb_box_proc *p, json_t *image_env, char *const *env, struct sb_error *err)
{
	size_t n = 0, max = json_array_size(image_env) + 2;
	json_t *v;
	size_t i;

	for (size_t k = 0; env && env[k]; k++)
		max++;
	if (!(p->env = calloc(max, sizeof(*p->env))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	json_array_foreach (image_env, i, v)
		env_put(p->env, &n, (char *)json_string_value(v));
	/* the user's home, as a login would set it, unless the image or the caller says */
	if (p->has_user && !env_has(p->env, "HOME") && !env_has(env, "HOME")) {
		if (!(p->home = sb_strdupf("HOME=%s", p->home_dir)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		env_put(p->env, &n, p->home);
	}
	for (size_t k = 0; env && env[k]; k++)
		env_put(p->env, &n, env[k]);
	return 0;
}

int sb_box_proc_make(struct sb_box_proc *out, const struct sb_box *b, char *const *env, const char *cwd,
		     const char *user, struct sb_error *err)
{
	json_t *cfg = b->rec.image_config;
	const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->cwd = cwd ? cwd : wd && wd[0] == '/' ? wd : "/workspace";
	if (!user)
		user = json_string_value(json_object_get(cfg, "User"));
	if (user && *user) {
		struct sb_user u;
		/* the running sandbox's own users: one made inside after create counts */
		if ((rc = sb_user_resolve(&u, b->rootfs, user, err)) < 0) {
			sb_error_wrap(err, _("sandbox '%s'"), b->rec.name);
			return rc;
		}
		out->has_user = 1;
		out->user.uid = u.uid;
		out->user.gid = u.gid;
		snprintf(out->home_dir, sizeof(out->home_dir), "%s", u.home);
	}
	if (!cfg && !out->has_user) {
		out->env = NULL;
		out->caller_env = env;
		return 0;
	}
	if ((rc = make_env(out, json_object_get(cfg, "Env"), env, err)) < 0)
		sb_box_proc_clear(out);
	return rc;
}

char *const *sb_box_proc_env(const struct sb_box_proc *p)
{
	return p->env ? p->env : p->caller_env;
}

void sb_box_proc_clear(struct sb_box_proc *p)
{
	if (!p)
		return;
	free(p->env);
	free(p->home);
	memset(p, 0, sizeof(*p));
}
