/* Fuzz target: the bytes are a user's keys.conf, applied over the defaults
 * (ui/keys.c is linked in on its own: it needs curses' KEY_* constants, not
 * the library). After any file, no key is bound twice in one context, every
 * bound key has a name that parses back to it, and the warnings fit. */
#include "config.h"

#include "fuzz.h"
#include "keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size), warn[512];
	struct ui_keymap map;

	ui_keymap_defaults(&map);
	warn[0] = '\0';
	int n = ui_keymap_parse(&map, text, warn, sizeof(warn));
	FUZZ_CHECK(n >= 0 && strlen(warn) < sizeof(warn));
	FUZZ_CHECK(n > 0 || !warn[0]);
	for (int a = UI_ACT_NONE + 1; a < UI_ACT_COUNT; a++) {
		const struct ui_action_info *info = ui_action_info(a);
		for (int k = 0; k < UI_KEYS_MAX && map.keys[a][k]; k++) {
			char name[32], desc[128];
			int key = map.keys[a][k];
			FUZZ_CHECK(key > 0);
			ui_key_name(key, name, sizeof(name));
			FUZZ_CHECK(ui_key_parse(name) == key);
			FUZZ_CHECK(ui_keymap_lookup(&map, info->context, key) == (enum ui_action)a);
			ui_keymap_describe(&map, a, desc, sizeof(desc));
		}
	}
	free(text);
	return 0;
}
