/* The key table: defaults, names, parsing, overrides, conflicts, and the
 * shipped data/keys.conf. */
#include "config.h"

#include <criterion/criterion.h>
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "keys.h"
#include "testutil.h"

Test(keys, defaults_have_no_conflicts)
{
	struct ui_keymap map, again;
	char warn[1024] = "";

	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'q'), UI_ACT_QUIT);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, '/'), UI_ACT_FILTER);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, '\n'), UI_ACT_SHELL);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, UI_KEY_FN + KEY_ENTER), UI_ACT_SHELL);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_SHELL, 7), UI_ACT_PREFIX);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_SHELL, 'q'), UI_ACT_NONE);
	/* binding every action to its own defaults again moves nothing */
	again = map;
	for (int a = 1; a < UI_ACT_COUNT; a++) {
		const struct ui_action_info *info = ui_action_info(a);
		char line[128];
		cr_assert_not_null(info, "action %d has no table entry", a);
		snprintf(line, sizeof(line), "%s = %s\n", info->name, info->defaults);
		cr_assert_eq(ui_keymap_parse(&again, line, warn, sizeof(warn)), 0, "%s", warn);
	}
	cr_assert_eq(memcmp(&again, &map, sizeof(map)), 0);
}

Test(keys, names_round_trip)
{
	static const char *const names[] = { "a", "G", "C-g", "Enter", "S-PgUp", "F5", "Del", "?", "/", "ä", "S-Tab" };
	char buf[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int k = ui_key_parse(names[i]);
		cr_assert_gt(k, 0, "%s", names[i]);
		ui_key_name(k, buf, sizeof(buf));
		cr_assert_str_eq(buf, names[i]);
	}
	cr_assert_eq(ui_key_parse("C-g"), 7);
	cr_assert_eq(ui_key_parse("F13"), -1);
	cr_assert_eq(ui_key_parse("Nonsense"), -1);
}

Test(keys, override_replaces_the_default_keys)
{
	struct ui_keymap map;
	char warn[1024] = "", desc[64];

	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_parse(&map, "# mine\n\nquit = Q C-q\nprefix = C-a\n", warn, sizeof(warn)), 0, "%s", warn);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'q'), UI_ACT_NONE);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'Q'), UI_ACT_QUIT);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 17), UI_ACT_QUIT);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_SHELL, 1), UI_ACT_PREFIX);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_SHELL, 7), UI_ACT_NONE);
	ui_keymap_describe(&map, UI_ACT_QUIT, desc, sizeof(desc));
	cr_assert_str_eq(desc, "Q, C-q");
}

Test(keys, conflicts_and_errors_are_reported_with_line_numbers)
{
	struct ui_keymap map;
	char warn[1024] = "";

	ui_keymap_defaults(&map);
	int n = ui_keymap_parse(&map, "stop = s\n\nbogus = x\nhelp = NoSuchKey\nno equals sign\n", warn,
				sizeof(warn));
	cr_assert_eq(n, 4, "%s", warn);
	cr_assert(strstr(warn, "keys.conf:1: key s moves from 'shell' to 'stop'"), "%s", warn);
	cr_assert(strstr(warn, "keys.conf:3: unknown action 'bogus'"), "%s", warn);
	cr_assert(strstr(warn, "keys.conf:4: unknown key 'NoSuchKey'"), "%s", warn);
	cr_assert(strstr(warn, "keys.conf:5:"), "%s", warn);
	/* the user's binding wins; the other action keeps its remaining keys */
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 's'), UI_ACT_STOP);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, '\n'), UI_ACT_SHELL);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'x'), UI_ACT_NONE);
	/* the same key in another context is no conflict */
	cr_assert_eq(ui_keymap_parse(&map, "scroll-up = q\n", warn, sizeof(warn)), 0);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'q'), UI_ACT_QUIT);
}

Test(keys, shipped_keys_conf_matches_the_defaults)
{
	struct ui_keymap defaults, shipped;
	char *path = tu_srcpath("data/keys.conf"), *text, warn[1024] = "";
	size_t len;

	cr_assert_eq(sb_fs_read_file(&text, &len, path, 1 << 16, NULL), 0);
	ui_keymap_defaults(&defaults);
	memset(&shipped, 0, sizeof(shipped));
	cr_assert_eq(ui_keymap_parse(&shipped, text, warn, sizeof(warn)), 0, "%s", warn);
	cr_assert_eq(memcmp(&shipped, &defaults, sizeof(defaults)), 0, "data/keys.conf differs from the table in ui/keys.c");
	free(text);
	free(path);
}

Test(keys, user_file_overrides)
{
	char *dir = tu_tempdir("keys"), *conf;
	struct ui_keymap map;
	char warn[256] = "";

	conf = sb_strdupf("%s/sandbench", dir);
	cr_assert_eq(sb_fs_mkdirs(conf, 0755, NULL), 0);
	free(conf);
	conf = sb_strdupf("%s/sandbench/keys.conf", dir);
	cr_assert_eq(sb_fs_write_atomic(conf, "help = h\n", 9, 0644, NULL), 0);
	setenv("XDG_CONFIG_HOME", dir, 1);
	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_load_user(&map, warn, sizeof(warn)), 0);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'h'), UI_ACT_HELP);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, '?'), UI_ACT_NONE);
	unsetenv("XDG_CONFIG_HOME");
	free(conf);
	tu_remove(dir);
	free(dir);
}

/* ---- custom commands: `command = KEY "sandbench ..."` ---- */

Test(keys, custom_command_lines)
{
	struct ui_keymap map;
	char warn[1024] = "";

	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_parse(&map, "command = Y \"sandbench exec $NAME -- df -h /\"\n"
					   "command = :\n"
					   "command = F9 \"sandbench exec ${NAME} -- echo '$NAME' \\\"$OWNER\\\"\"\n",
				     warn, sizeof(warn)), 0, "%s", warn);
	cr_assert_eq(map.n_custom, 2);
	cr_assert_not_null(ui_keymap_custom(&map, 'Y'));
	cr_assert_str_eq(ui_keymap_custom(&map, 'Y')->line, "sandbench exec $NAME -- df -h /");
	cr_assert_not_null(ui_keymap_custom(&map, UI_KEY_FN + KEY_F(9)));
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, ':'), UI_ACT_COMMAND, "command = : still binds the command line");
	cr_assert_null(ui_keymap_custom(&map, 'Z'));
}

Test(keys, custom_command_takes_its_key_from_an_action)
{
	struct ui_keymap map;
	char warn[1024] = "";

	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_parse(&map, "command = x \"sandbench exec $NAME -- true\"\n", warn, sizeof(warn)), 1);
	cr_assert(strstr(warn, "keys.conf:1: key x moves from 'stop' to a custom command"), "%s", warn);
	cr_assert_eq(ui_keymap_lookup(&map, UI_CTX_PANES, 'x'), UI_ACT_NONE);
	cr_assert_not_null(ui_keymap_custom(&map, 'x'));
}

Test(keys, custom_command_bad_lines_name_the_line)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "command = Y sandbench exec $NAME -- true", "keys.conf:1: the command must be in double quotes after the key" },
		{ "command = NoSuchKey \"sandbench exec $NAME -- true\"", "keys.conf:1: unknown key 'NoSuchKey'" },
		{ "command = Y \"sandbench exec $NAMES -- true\"", "keys.conf:1: unknown variable $NAMES" },
		{ "command = Y \"sandbench exec $NAME -- sh -c 'echo\"", "keys.conf:1: unterminated ' quote" },
		{ "command = Y \"rm -rf $WORKSPACE\"", "keys.conf:1: the command must start with 'sandbench'" },
		{ "command = Y \"sandbench\"", "keys.conf:1: the command must start with 'sandbench' and have a subcommand" },
		{ "command = Y \"\"", "keys.conf:1: the command must start with 'sandbench'" },
		{ "command = \"sandbench ls\"", "keys.conf:1: unknown key" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ui_keymap map;
		char warn[1024] = "";
		ui_keymap_defaults(&map);
		cr_assert_eq(ui_keymap_parse(&map, bad[i].line, warn, sizeof(warn)), 1, "%s: %s", bad[i].line, warn);
		cr_assert(strstr(warn, bad[i].why), "%s: wanted '%s', got '%s'", bad[i].line, bad[i].why, warn);
		cr_assert_eq(map.n_custom, 0, "%s", bad[i].line);
	}
	/* the bad line is the third: its number is named, the good ones bind */
	struct ui_keymap map;
	char warn[1024] = "";
	ui_keymap_defaults(&map);
	cr_assert_eq(ui_keymap_parse(&map, "# custom\ncommand = Y \"sandbench ls\"\ncommand = Z \"sandbench exec $X\"\n",
				     warn, sizeof(warn)), 1);
	cr_assert(strstr(warn, "keys.conf:3: unknown variable $X"), "%s", warn);
	cr_assert_eq(map.n_custom, 1);
}

static char **expand(const char *line, const struct ui_custom_vars *v)
{
	char why[256] = "", **argv = NULL;

	cr_assert_eq(ui_custom_expand(&argv, line, v, why, sizeof(why)), 0, "%s: %s", line, why);
	return argv;
}

Test(keys, custom_command_values_stay_inside_their_word)
{
	/* hostile values: quotes, spaces, $(...), ;, a newline, a glob */
	struct ui_custom_vars v = { "box-1", "/var/lib/sb/sandboxes/box-1/workspace", "sb-0123",
				    "a b'; touch /tmp/x; echo \"$(id)\n*" };
	char **argv = expand("sandbench exec $NAME -- echo [$OWNER] '$OWNER' \"<$NAME>\" \\$NAME x${ID}y $", &v);
	const char *want[] = { "sandbench", "exec", "box-1", "--", "echo", "[a b'; touch /tmp/x; echo \"$(id)\n*]",
			       "$OWNER", "<box-1>", "$NAME", "xsb-0123y", "$", NULL, NULL };
	size_t n = 0;

	while (argv[n])
		n++;
	cr_assert_eq(n, 11, "words: %zu", n);
	for (size_t i = 0; i < 11; i++)
		cr_assert_str_eq(argv[i], want[i], "word %zu", i);
	ui_custom_argv_free(argv);
	/* a value that is empty is an empty word, not a missing one */
	struct ui_custom_vars empty = { "box", NULL, NULL, NULL };
	argv = expand("sandbench exec $NAME -- printf %s $OWNER", &empty);
	cr_assert_str_eq(argv[5], "%s");
	cr_assert_str_eq(argv[6], "");
	ui_custom_argv_free(argv);
}
