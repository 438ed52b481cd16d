/* Fuzz target: the bytes are a sandbox's timeline.jsonl, read by the real
 * reader (lines parsed one by one, bad ones skipped). Entries come in file
 * order within what was read; each is found again at its position; written
 * back as lines and read again, they give the same JSON. */
#include "config.h"

#include "base/buf.h"
#include "fuzz.h"
#include "sandbox/timeline.h"

static void make_dir(const char *rel)
{
	char *dir = sb_root_file(fuzz_root(), rel);
	FUZZ_CHECK(dir && sb_fs_mkdirs(dir, 0700, NULL) == 0);
	free(dir);
}

static json_t *entries_json(const struct sb_timeline *t)
{
	json_t *all = json_array();

	for (size_t i = 0; all && i < t->count; i++)
		FUZZ_CHECK(json_array_append_new(all, sb_timeline_entry_to_json(&t->entries[i])) == 0);
	FUZZ_CHECK(all);
	return all;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int made;
	struct sb_timeline *t, *again, *one;
	struct sb_buf lines = { 0 };

	if (!made) {
		make_dir("sandboxes/fuzz");
		make_dir("sandboxes/again");
		made = 1;
	}
	fuzz_root_write("sandboxes/fuzz/timeline.jsonl", data, size);
	FUZZ_CHECK(sb_timeline_read(&t, fuzz_root(), "fuzz", NULL, NULL) == 0);
	json_t *first = entries_json(t);
	for (size_t i = 0; i < t->count; i++) {
		const struct sb_timeline_entry *e = &t->entries[i];
		FUZZ_CHECK(i == 0 || e->pos > t->entries[i - 1].pos);
		FUZZ_CHECK(e->pos < t->next && e->time_ms >= 0 && e->exit_code >= -1 && e->exit_code <= 255);
		if (i < 4) {
			FUZZ_CHECK(sb_timeline_read_at(&one, fuzz_root(), "fuzz", e->pos, NULL) == 0 && one->count == 1);
			json_t *j = sb_timeline_entry_to_json(&one->entries[0]);
			FUZZ_CHECK(j && json_equal(j, json_array_get(first, i)));
			json_decref(j);
			sb_timeline_free(one);
		}
		char *text = json_dumps(json_array_get(first, i), JSON_COMPACT);
		FUZZ_CHECK(text && sb_buf_add(&lines, text, strlen(text)) == 0 && sb_buf_add(&lines, "\n", 1) == 0);
		free(text);
	}
	fuzz_root_write("sandboxes/again/timeline.jsonl", (const uint8_t *)(lines.data ? lines.data : ""), lines.len);
	FUZZ_CHECK(sb_timeline_read(&again, fuzz_root(), "again", NULL, NULL) == 0);
	json_t *second = entries_json(again);
	FUZZ_CHECK(again->skipped == 0 && json_equal(first, second));
	json_decref(first);
	json_decref(second);
	sb_timeline_free(again);
	sb_timeline_free(t);
	sb_buf_clear(&lines);
	return 0;
}
