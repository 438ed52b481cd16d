/* Key bindings: one table of actions with their default keys; data/keys.conf
 * documents them and a user file (~/.config/sandbench/keys.conf) overrides. */
#ifndef UI_KEYS_H
#define UI_KEYS_H

#include <stddef.h>

#include "base/error.h"

enum ui_action {
	UI_ACT_NONE = 0,
	UI_ACT_QUIT, UI_ACT_HELP, UI_ACT_NEXT_PANE, UI_ACT_PREV_PANE,
	UI_ACT_PANE_SANDBOXES, UI_ACT_PANE_IMAGES, UI_ACT_PANE_MOUNTS,
	UI_ACT_UP, UI_ACT_DOWN, UI_ACT_PAGE_UP, UI_ACT_PAGE_DOWN, UI_ACT_TOP, UI_ACT_BOTTOM,
	UI_ACT_CREATE, UI_ACT_SHELL, UI_ACT_STOP, UI_ACT_RESTORE, UI_ACT_REMOVE,
	UI_ACT_EXPIRE, UI_ACT_EXTEND, UI_ACT_TOUCH, UI_ACT_REFRESH, UI_ACT_INSPECT,
	UI_ACT_FILTER, UI_ACT_SORT, UI_ACT_SORT_REVERSE, UI_ACT_PULL, UI_ACT_PRUNE,
	UI_ACT_SHELLS, UI_ACT_NEXT_SHELL,
	UI_ACT_PANE_SESSIONS, UI_ACT_PANE_TIMELINE, UI_ACT_FOLLOW, UI_ACT_DIFF, UI_ACT_COPY_OUT,
	UI_ACT_MARK, UI_ACT_MARK_RANGE, UI_ACT_MARK_ALL, UI_ACT_CLEAR_MARKS, UI_ACT_COMMAND, UI_ACT_CMDLOG,
	UI_ACT_GC, UI_ACT_CLEANUP, UI_ACT_EXPOSURE,
	UI_ACT_PAUSE, UI_ACT_PROCESSES,
	/* in a shell: the prefix key, then one of these */
	UI_ACT_PREFIX, UI_ACT_SCROLL_UP, UI_ACT_SCROLL_DOWN,
	/* watching a session read-only, and controlling it */
	UI_ACT_TAKE_OVER, UI_ACT_LEAVE, UI_ACT_HAND_BACK,
	UI_ACT_COUNT
};

/* Where a binding applies: the panes, a focused shell (prefix key and
 * scrollback; everything else goes to the shell), a session watched
 * read-only, and a session the human controls (everything but its bindings
 * goes to the session). */
enum ui_key_context { UI_CTX_PANES, UI_CTX_SHELL, UI_CTX_WATCH, UI_CTX_CONTROL };

/* A key is a Unicode codepoint, or an ncurses KEY_* code + UI_KEY_FN. */
#define UI_KEY_FN 0x200000
/* C-Space arrives as NUL, which ends a key list: it gets a code of its own. */
#define UI_KEY_C_SPACE (UI_KEY_FN + 0x1fff)

struct ui_action_info {
	enum ui_action action;
	const char *name;            /* in keys.conf */
	enum ui_key_context context;
	const char *defaults;        /* default keys, space separated */
	const char *help;            /* N_() */
	int changes;                 /* refused by --readonly */
};

#define UI_KEYS_MAX 4

/* A custom command: `command = KEY "sandbench exec $NAME -- ..."` (custom.c). */
#define UI_CUSTOM_MAX 16
struct ui_custom_cmd {
	int key;
	char line[512];              /* the text between the quotes */
};

struct ui_keymap {
	int keys[UI_ACT_COUNT][UI_KEYS_MAX];   /* 0-terminated when shorter */
	struct ui_custom_cmd custom[UI_CUSTOM_MAX];
	size_t n_custom;
};

const struct ui_action_info *ui_action_info(enum ui_action a);
/* The action for key in a context, UI_ACT_NONE if unbound. */
enum ui_action ui_keymap_lookup(const struct ui_keymap *map, enum ui_key_context ctx, int key);
/* The defaults from the action table. */
void ui_keymap_defaults(struct ui_keymap *map);
/* Applies "action = key key ..." lines from text over map. Problems (unknown
 * action or key name, a key bound twice in one context) are reported one per
 * line into warn (may be NULL) and the line is skipped; returns their count. */
int ui_keymap_parse(struct ui_keymap *map, const char *text, char *warn, size_t warn_size);
/* Loads the user's file ($XDG_CONFIG_HOME or ~/.config/sandbench/keys.conf) if any. */
int ui_keymap_load_user(struct ui_keymap *map, char *warn, size_t warn_size);

/* "C-a", "S-PgUp", "Enter", "x"; 0 / -1 on an unknown name. */
int ui_key_parse(const char *name);
void ui_key_name(int key, char *buf, size_t size);
/* UTF-8 of a text key into out (4 bytes); returns the length, 0 for a non-text key. */
int ui_key_utf8(int key, char *out);
/* custom.c: the values a custom command's $NAME, $WORKSPACE, $ID, $OWNER
 * stand for (NULL: empty). */
struct ui_custom_vars {
	const char *name, *workspace, *id, *owner;
};
/* Parses the value of a `command = KEY "..."` line into out; -1 with the
 * reason in why when the key, the quoting, a variable or the first word
 * ("sandbench") is wrong. */
int ui_custom_parse(struct ui_custom_cmd *out, const char *value, char *why, size_t size);
/* The argv of a custom command with the variables put in (each value stays
 * inside its word: nothing is split or parsed again); -1 with why. Free with
 * ui_custom_argv_free. */
int ui_custom_expand(char ***argv, const char *line, const struct ui_custom_vars *v, char *why, size_t size);
void ui_custom_argv_free(char **argv);
/* The custom command bound to key, NULL if none. */
const struct ui_custom_cmd *ui_keymap_custom(const struct ui_keymap *map, int key);

/* The keys of an action as "k, K" for hints and help. */
void ui_keymap_describe(const struct ui_keymap *map, enum ui_action a, char *buf, size_t size);

#endif
