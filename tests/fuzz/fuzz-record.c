/* Fuzz target: the bytes are ROOT/sandboxes/fuzz/sandbox.json, read by the
 * real loader. A record it accepts must survive a save and a load unchanged:
 * its JSON form, parsed again, gives the same JSON form. */
#include "config.h"

#include <jansson.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "sandbox/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_record rec, again;
	static int made;

	if (!made) {
		char *dir = sb_root_file(fuzz_root(), "sandboxes/fuzz");
		FUZZ_CHECK(dir && sb_fs_mkdirs(dir, 0700, NULL) == 0);
		free(dir);
		made = 1;
	}
	fuzz_root_write("sandboxes/fuzz/sandbox.json", data, size);
	if (sb_record_load(&rec, fuzz_root(), "fuzz", NULL) < 0)
		return 0;
	FUZZ_CHECK(rec.schema == SB_RECORD_SCHEMA);
	FUZZ_CHECK(rec.n_mounts == 0 || rec.mounts);
	FUZZ_CHECK(strlen(rec.name) < sizeof(rec.name) && strlen(rec.id) < sizeof(rec.id));
	json_t *doc = sb_record_to_json(&rec);
	if (doc) {
		char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
		FUZZ_CHECK(text);
		json_t *reread = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		FUZZ_CHECK(reread);
		FUZZ_CHECK(sb_record_from_json(&again, reread, NULL) == 0);
		json_t *doc2 = sb_record_to_json(&again);
		FUZZ_CHECK(doc2 && json_equal(doc, doc2));
		FUZZ_CHECK(again.n_mounts == rec.n_mounts && again.n_labels == rec.n_labels);
		json_decref(doc2);
		json_decref(reread);
		sb_record_clear(&again);
		free(text);
	}
	json_decref(doc);
	sb_record_clear(&rec);
	return 0;
}
