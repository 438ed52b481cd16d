#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "escape.h"
#include "sandbox/files.h"
#include "testutil.h"

void esc_setup(struct esc *e, const struct sbf *f)
{
	memset(e, 0, sizeof(*e));
	e->f = f;
	e->victim = tu_tempdir("escape-victim");
	cr_assert_not_null(e->victim);
	cr_assert_eq(tu_sh("printf 'HOST SECRET\\n' > %s/secret && mkdir %s/sub && printf inner > %s/sub/inner",
			   e->victim, e->victim, e->victim), 0);
	snprintf(e->sfx, sizeof(e->sfx), "%05x", (unsigned)(getpid() ^ (unsigned)random()) & 0xfffff);
}

void esc_teardown(struct esc *e)
{
	if (e->victim)
		tu_remove(e->victim);
	free(e->victim);
	while (e->n_dirs) {
		tu_remove(e->dirs[--e->n_dirs]);
		free(e->dirs[e->n_dirs]);
	}
	memset(e, 0, sizeof(*e));
}

char *esc_expand(const struct esc *e, const char *tmpl)
{
	static const char *const keys[] = { "@V@", "@R@", "@S@" };
	const char *vals[] = { e->victim, e->f->dir, e->sfx };
	char *out = strdup(tmpl);

	for (size_t k = 0; out && k < 3; k++) {
		char *at;
		while (out && (at = strstr(out, keys[k]))) {
			char *next = sb_strdupf("%.*s%s%s", (int)(at - out), out, vals[k], at + 3);
			free(out);
			out = next;
		}
	}
	cr_assert_not_null(out);
	return out;
}

char *esc_share(struct esc *e, const char *tag)
{
	char *dir = tu_tempdir(tag);

	cr_assert(dir && e->n_dirs < sizeof(e->dirs) / sizeof(e->dirs[0]));
	return e->dirs[e->n_dirs++] = dir;
}

char *esc_victim_sum(const struct esc *e)
{
	char *sum = tu_sh_out("cd %s && find . -printf '%%p %%y %%m %%s %%n %%u %%g %%T@ %%C@\\n' | sort && "
			      "find . -type f -exec cat {} + | sha256sum", e->victim);

	cr_assert(sum && sum[0]);
	return sum;
}

void esc_assert_victim(const struct esc *e, const char *before, const char *what)
{
	char *after = esc_victim_sum(e);

	cr_assert_str_eq(after, before, "%s changed the host folder %s:\n%s\nwas\n%s", what, e->victim, after, before);
	free(after);
}

void esc_all_fail(const struct esc *e, const char *name, const char *const *tries)
{
	char *script = strdup(""), *out;
	size_t n = 0;

	for (; tries[n]; n++) {
		char *t = esc_expand(e, tries[n]);
		char *next = sb_strdupf("%s(%s) </dev/null >/dev/null 2>&1 && echo 'SUCCEEDED: %zu'\n", script, t, n);
		free(t);
		free(script);
		script = next;
		cr_assert_not_null(script);
	}
	char *all = sb_strdupf("%secho done %zu", script, n);
	out = sbf_sh(e->f, NULL, name, all, NULL);
	char want[48];
	snprintf(want, sizeof(want), "done %zu", n);
	cr_assert(strstr(out, want), "the attempts did not all run in %s: %s", name, out);
	for (size_t i = 0; i < n; i++) {
		char tag[48];
		snprintf(tag, sizeof(tag), "SUCCEEDED: %zu\n", i);
		cr_expect_null(strstr(out, tag), "in %s this attempt succeeded: %s", name, tries[i]);
	}
	cr_assert_null(strstr(out, "SUCCEEDED"), "attempts succeeded in %s: %s", name, out);
	free(out);
	free(all);
	free(script);
}

void esc_probe(const struct esc *e, const char *name, const char *path)
{
	char *src = tu_srcpath("tests/escape-probe.c");
	char *bin = sb_strdupf("%s/sandboxes/%s/workspace/escape-probe", e->f->dir, name);

	cr_assert_eq(tu_sh("${CC:-cc} -static -O1 -o %s %s", bin, src), 0, "cannot build the static probe");
	char *cmd = sb_strdupf("/workspace/escape-probe %s", path);
	int status;
	char *out = sbf_sh(e->f, NULL, name, cmd, &status);
	cr_assert_eq(status, 0, "the probe's attempts on %s: %s", path, out);
	cr_assert(strstr(out, "refused "), "%s", out);
	free(out);
	free(cmd);
	unlink(bin);
	free(bin);
	free(src);
}

void esc_view_copy(const struct esc *e, const char *name, const char *path, const char *host_dir)
{
	static unsigned n;
	char *dst = sb_strdupf("%s/view-%u", host_dir, n++);
	struct sb_copy_opts o = { 0 };
	struct sb_copy_result res = { 0 };
	int rc = sb_sandbox_copy_out(&res, e->f->root, name, path, dst, &o, NULL);

	if (rc == SB_ERR_INVALID) {
		sb_copy_result_clear(&res);
		memset(&res, 0, sizeof(res));
		o.flags |= SB_COPY_RECURSIVE;
		sb_sandbox_copy_out(&res, e->f->root, name, path, dst, &o, NULL);
	}
	sb_copy_result_clear(&res);
	free(dst);
}
