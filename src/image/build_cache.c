#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "image/build_cache.h"

#define CACHE_DIR "images/build-cache"

/* ROOT/images/build-cache/<sha256 of key> (malloc'd). */
static char *cache_file(struct sb_root *root, const char *key)
{
	struct sb_sha256 *h;
	char d[SB_DIGEST_STR_LEN];

	if (sb_sha256_new(&h, NULL) < 0)
		return NULL;
	sb_sha256_update(h, key, strlen(key));
	sb_sha256_final(d, h);
	sb_sha256_free(h);
	char *rel = sb_strdupf(CACHE_DIR "/%s", sb_digest_hex(d));
	char *path = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	return path;
}

/* The digest an entry holds; 0 when it holds none. */
static int read_entry(char digest[SB_DIGEST_STR_LEN], const char *path)
{
	char *text = NULL;
	size_t len;
	int ok = 0;

	if (sb_fs_read_file(&text, &len, path, SB_DIGEST_STR_LEN + 8, NULL) == 0) {
		text[strcspn(text, "\n")] = '\0';
		if ((ok = sb_digest_valid(text)))
			snprintf(digest, SB_DIGEST_STR_LEN, "%s", text);
	}
	free(text);
	return ok;
}

int sb_image_cache_get(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const char *key)
{
	char *path = cache_file(root, key), found[SB_DIGEST_STR_LEN];
	struct sb_image_info info;
	int hit = 0;

	if (path && read_entry(found, path) && sb_image_resolve(&info, root, found, NULL) == 0) {
		snprintf(digest, SB_DIGEST_STR_LEN, "%s", info.digest);
		sb_image_info_clear(&info);
		hit = 1;
	}
	free(path);
	return hit;
}

void sb_image_cache_put(struct sb_root *root, const char *key, const char *digest)
{
	char *path = cache_file(root, key), *dir = sb_root_file(root, CACHE_DIR);

	if (path && dir && sb_fs_mkdirs(dir, 0700, NULL) == 0)
		sb_fs_write_atomic(path, digest, strlen(digest), 0600, NULL);
	free(path);
	free(dir);
}

struct cache_sweep {
	json_t *users, *images;
	size_t *dropped;
	int all, dry_run;
};

static int sweep_entry(void *arg, const char *name, const char *path, struct sb_error *err)
{
	struct cache_sweep *c = arg;
	char digest[SB_DIGEST_STR_LEN];
	int held = read_entry(digest, path) && json_object_get(c->images, digest);

	if (!c->all && held) {
		json_t *u = json_object_get(c->users, digest);
		if (!u && json_object_set_new(c->users, digest, u = json_array()) < 0)
			u = NULL;
		if (!u || json_array_append_new(u, json_string("build cache")) < 0)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	} else if (c->dry_run) {
		*c->dropped += c->all;
	} else if (unlink(path) == 0) {
		/* dropped on purpose, or pointing at an image that is gone */
		sb_log("image: dropped build cache entry %s", name);
		*c->dropped += c->all;
	}
	return 0;
}

int sb_image_cache_sweep(json_t *users, size_t *dropped, struct sb_root *root, json_t *images, int all,
			 int dry_run, struct sb_error *err)
{
	struct cache_sweep c = { users, images, dropped, all, dry_run };

	return sb_image_dir_each(root, CACHE_DIR, sweep_entry, &c, err);
}
