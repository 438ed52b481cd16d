#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

int sb_json_load(json_t **out, const char *path, size_t max, struct sb_error *err)
{
	json_error_t jerr;
	size_t len;
	char *text;
	int rc;

	*out = NULL;
	rc = sb_fs_read_file(&text, &len, path, max, err);
	if (rc < 0)
		return rc;
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!*out)
		return sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not valid JSON (line %d: %s)"),
				    path, jerr.line, jerr.text);
	return 0;
}

int sb_json_save(const char *path, const json_t *doc, struct sb_error *err)
{
	return sb_json_save_sync(path, doc, 1, err);
}

int sb_json_save_sync(const char *path, const json_t *doc, int sync, struct sb_error *err)
{
	char *text = sb_json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc;

	if (!text)
		return sb_error_set(err, SB_ERR_NOMEM, _("cannot serialise '%s'"), path);
	size_t n = strlen(text);
	text[n] = '\n'; /* replaces the NUL: n+1 bytes are written */
	rc = sb_fs_replace(path, text, n + 1, 0644, sync, err);
	free(text);
	return rc;
}

struct dump_buf {
	struct sb_buf b;
	int failed;              /* sticky: jansson may go on after a refusal */
};

static int dump_part(const char *data, size_t len, void *arg)
{
	struct dump_buf *d = arg;

	if (d->failed || sb_buf_add(&d->b, data, len) < 0) {
		d->failed = 1;
		return -1;
	}
	return 0;
}

char *sb_json_dumps(const json_t *doc, size_t flags)
{
	struct dump_buf d = { { 0 }, 0 };

	if (json_dump_callback(doc, dump_part, &d, flags) < 0 || d.failed || !d.b.data) {
		sb_buf_clear(&d.b);
		return NULL;
	}
	return sb_buf_steal(&d.b, NULL);
}

json_t *sb_json_append(json_t *array, json_t *value)
{
	/* it releases value on every failure, a NULL array included */
	if (json_array_append_new(array, value) == 0)
		return array;
	json_decref(array);
	return NULL;
}

json_t *sb_json_set(json_t *object, const char *key, json_t *value)
{
	if (json_object_set_new(object, key, value) == 0)
		return object;
	json_decref(object);
	return NULL;
}
