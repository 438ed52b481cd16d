/* COPY and ADD of image build: files of the context as one layer. Every
 * source is resolved beneath the context (a symlink or ".." leading out is
 * refused), trees are walked without following anything (sb_xwalk), special
 * files are left out (sb_xmeter), .dockerignore's patterns apply, and every
 * entry becomes root's, as docker's COPY does. */
#include "config.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "build_internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/inroot.h"
#include "sandbox/files.h"

#define IGNORE_MAX (256 * 1024)

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && strchr(" \t\r/", s[n - 1]))
		s[--n] = '\0';
	memmove(s, s + strspn(s, " \t"), strlen(s + strspn(s, " \t")) + 1);
}

int sb_build_ignore_load(char ***patterns, size_t *n, const char *context, struct sb_error *err)
{
	char *text = NULL, *save = NULL;
	int rc = sb_inroot_read(&text, NULL, context, ".dockerignore", IGNORE_MAX, err);

	*patterns = NULL;
	*n = 0;
	if (rc == SB_ERR_NOTFOUND)
		return 0;
	for (char *l = rc == 0 ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		trim(l);
		char *p = l + (l[0] == '!');
		while (p[0] == '.' && p[1] == '/')
			memmove(p, p + 2, strlen(p + 2) + 1);
		if (!*l || *l == '#' || !*p)
			continue;
		char **np = realloc(*patterns, (*n + 1) * sizeof(*np));
		if (!np || !(np[*n] = strdup(l))) {
			*patterns = np ? np : *patterns;
			rc = nomem(err);
			break;
		}
		*patterns = np;
		(*n)++;
	}
	free(text);
	return rc;
}

/* path (relative to the context) or one of its parents matches pattern. */
static int matches(const char *pattern, const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	for (;;) {
		if (fnmatch(pattern, buf, FNM_PATHNAME) == 0)
			return 1;
		char *slash = strrchr(buf, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

/* The last pattern that matches decides; "!" ones keep the path. */
static int ignored(const struct sb_build_copy *c, const char *path)
{
	int out = 0;

	for (size_t i = 0; i < c->n_ignore; i++) {
		int neg = c->ignore[i][0] == '!';
		if (matches(c->ignore[i] + neg, path))
			out = !neg;
	}
	return out;
}

/* Renames the walk's entries to where they go in the image and filters them. */
struct place {
	struct sb_xsink sink;
	struct sb_xsink *next;
	const struct sb_build_copy *c;
	const char *src;                 /* relative to the context ("." for it) */
	const char *to;                  /* the tar path of the top ("app/x") */
};

static int place_begin(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err)
{
	struct place *p = (struct place *)s;
	char *ctx_path = sb_strdupf("%s%s%s", strcmp(p->src, ".") ? p->src : "", *e->path && strcmp(p->src, ".") ? "/" : "",
				    e->path);
	char *to = sb_strdupf("%s%s%s", p->to, *e->path ? "/" : "", e->path);
	int rc;

	if (!ctx_path || !to)
		rc = nomem(err);
	else if (*ctx_path && *e->path && ignored(p->c, ctx_path))
		rc = 1;
	else {
		struct sb_xentry x = *e;
		x.path = to;
		x.uid = x.gid = 0;
		rc = p->next->begin(p->next, &x, err);
	}
	free(ctx_path);
	free(to);
	return rc;
}

static int place_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	struct place *p = (struct place *)s;

	return p->next->data(p->next, buf, len, err);
}

static int place_end(struct sb_xsink *s, struct sb_error *err)
{
	struct place *p = (struct place *)s;

	return p->next->end(p->next, err);
}

/* Directories above target ("a/b/c": "a", "a/b") the image does not have,
 * as root's 0755 entries with a fixed time (the same tar every build). */
static int parents(struct sb_xsink *tar, const struct sb_build_copy *c, const char *target, struct sb_error *err)
{
	char *buf = strdup(target);
	int rc = buf ? 0 : nomem(err);

	for (char *slash = buf ? strchr(buf, '/') : NULL; rc == 0 && slash; slash = strchr(slash + 1, '/')) {
		struct stat st;
		struct sb_error ignore;
		*slash = '\0';
		if (sb_inroot_stat(&st, c->rootfs, buf, &ignore) < 0) {
			struct sb_xentry x = { .path = buf, .type = S_IFDIR, .perm = 0755 };
			rc = tar->begin(tar, &x, err);
			rc = rc < 0 ? rc : 0;
		}
		*slash = '/';
	}
	free(buf);
	return rc;
}

/* "./src/" as "src", "./" as ".": how .dockerignore names them. */
static char *clean_source(const char *src)
{
	while (src[0] == '.' && src[1] == '/')
		src += 2 + strspn(src + 2, "/");
	size_t n = strlen(src);
	while (n > 1 && src[n - 1] == '/')
		n--;
	return n ? strndup(src, n) : strdup(".");
}

static int copy_one(struct sb_xsink *tar, const struct sb_build_copy *c, const char *given, struct sb_error *err)
{
	struct sb_copy_result res = { 0 };
	struct sb_xmeter meter;
	struct sb_vnode n = { .fd = -1, .lower = -1, .area = -1 };
	char *src = clean_source(given);
	int rc = src ? sb_vnode_beneath(&n, c->context, src, given, err) : nomem(err);
	const char *base = !src ? "" : strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	size_t dl = strlen(c->dest);
	int into = c->n_srcs > 1 || c->dest[dl - 1] == '/';
	char *to = NULL;

	if (rc == 0 && !S_ISDIR(n.st.st_mode) && into)
		to = sb_strdupf("%.*s/%s", (int)(c->dest[dl - 1] == '/' ? dl - 1 : dl), c->dest, base);
	else if (rc == 0)
		to = sb_strdupf("%.*s", (int)(c->dest[dl - 1] == '/' && dl > 1 ? dl - 1 : dl), c->dest);
	if (rc == 0 && !to)
		rc = nomem(err);
	if (rc == 0 && !strcmp(to, "/"))
		to[0] = '\0';
	if (rc == 0 && to[0])
		rc = parents(tar, c, to + 1, err);
	if (rc == 0) {
		struct place p = { { place_begin, place_data, place_end }, tar, c, src, to[0] ? to + 1 : "." };
		sb_xmeter_init(&meter, &p.sink, &res, 0, src);
		rc = sb_xwalk(&meter.sink, &n, err);
	}
	sb_copy_result_clear(&res);
	sb_vnode_clear(&n);
	free(to);
	free(src);
	return rc;
}

static int copy_all(struct sb_xsink *sink, const struct sb_build_copy *c, struct sb_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < c->n_srcs; i++)
		rc = copy_one(sink, c, c->srcs[i], err);
	return rc;
}

static int write_tar(const struct sb_build_copy *c, int (*write)(void *arg, const void *buf, size_t len, struct sb_error *err),
		     void *arg, struct sb_error *err)
{
	struct sb_xtar_out *tar = NULL;
	int rc = sb_xtar_out_new_writer(&tar, write, arg, err);

	if (rc == 0)
		rc = copy_all(sb_xtar_out_sink(tar), c, err);
	if (rc == 0)
		rc = sb_xtar_out_close(tar, err);
	sb_xtar_out_free(tar);
	return rc;
}

/* The cache key's sink: what the layer holds, without the times (a file
 * touched but unchanged is the same copy): each entry's path, type, mode,
 * owner, size and link target, NUL-separated, then its data. */
struct key_sink {
	struct sb_xsink sink;
	struct sb_sha256 *h;
};

static int key_begin(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err)
{
	struct key_sink *k = (struct key_sink *)s;
	char head[96];
	int n = snprintf(head, sizeof(head), "%o %o %u %u %llu", (unsigned)e->type, (unsigned)e->perm, e->uid, e->gid,
			 e->size);

	(void)err;
	sb_sha256_update(k->h, head, (size_t)n + 1);
	sb_sha256_update(k->h, e->path, strlen(e->path) + 1);
	sb_sha256_update(k->h, e->link ? e->link : "", (e->link ? strlen(e->link) : 0) + 1);
	return 0;
}

static int key_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	(void)err;
	sb_sha256_update(((struct key_sink *)s)->h, buf, len);
	return 0;
}

static int key_end(struct sb_xsink *s, struct sb_error *err)
{
	(void)s;
	(void)err;
	return 0;
}

int sb_build_copy_digest(char digest[SB_DIGEST_STR_LEN], const struct sb_build_copy *c, struct sb_error *err)
{
	struct key_sink k = { { key_begin, key_data, key_end }, NULL };
	int rc = sb_sha256_new(&k.h, err);

	if (rc == 0 && (rc = copy_all(&k.sink, c, err)) == 0)
		sb_sha256_final(digest, k.h);
	sb_sha256_free(k.h);
	return rc;
}

static int layer_write(void *arg, const void *buf, size_t len, struct sb_error *err)
{
	return sb_layer_writer_write(arg, buf, len, err);
}

int sb_build_copy_layer(struct sb_image_new_layer *out, struct sb_root *root, const struct sb_build_copy *c,
			struct sb_error *err)
{
	struct sb_layer_writer *lw;
	int rc = sb_layer_writer_open(&lw, root, SB_LAYER_GZIP, err);

	if (rc == 0 && (rc = write_tar(c, layer_write, lw, err)) == 0)
		rc = sb_layer_writer_commit(out, lw, err);
	sb_layer_writer_free(lw);
	return rc;
}
