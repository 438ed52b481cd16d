/* Key bindings as a table (see keys.h). */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "keys.h"

/* The names are the keys.conf words; N_() because the status line hints show
 * them translated (help and keys.conf keep the English word). */
static const struct ui_action_info actions[] = {
	{ UI_ACT_QUIT, N_("quit"), UI_CTX_PANES, "q F10", N_("quit (attached shells are closed)"), 0 },
	{ UI_ACT_HELP, N_("help"), UI_CTX_PANES, "? F1", N_("this help"), 0 },
	{ UI_ACT_NEXT_PANE, N_("next-pane"), UI_CTX_PANES, "Tab", N_("next pane"), 0 },
	{ UI_ACT_PREV_PANE, N_("prev-pane"), UI_CTX_PANES, "S-Tab", N_("previous pane"), 0 },
	{ UI_ACT_PANE_SANDBOXES, N_("sandboxes"), UI_CTX_PANES, "1", N_("show sandboxes"), 0 },
	{ UI_ACT_PANE_IMAGES, N_("images"), UI_CTX_PANES, "2", N_("show images"), 0 },
	{ UI_ACT_PANE_MOUNTS, N_("mounts"), UI_CTX_PANES, "3", N_("show mounts"), 0 },
	{ UI_ACT_UP, N_("up"), UI_CTX_PANES, "Up k", N_("move up"), 0 },
	{ UI_ACT_DOWN, N_("down"), UI_CTX_PANES, "Down j", N_("move down"), 0 },
	{ UI_ACT_PAGE_UP, N_("page-up"), UI_CTX_PANES, "PgUp C-b", N_("page up"), 0 },
	{ UI_ACT_PAGE_DOWN, N_("page-down"), UI_CTX_PANES, "PgDn C-f", N_("page down"), 0 },
	{ UI_ACT_TOP, N_("top"), UI_CTX_PANES, "Home g", N_("first row"), 0 },
	{ UI_ACT_BOTTOM, N_("bottom"), UI_CTX_PANES, "End G", N_("last row"), 0 },
	{ UI_ACT_CREATE, N_("create"), UI_CTX_PANES, "c F7", N_("create a sandbox"), 1 },
	{ UI_ACT_SHELL, N_("shell"), UI_CTX_PANES, "Enter s", N_("attach a shell to the running sandbox"), 1 },
	{ UI_ACT_STOP, N_("stop"), UI_CTX_PANES, "x", N_("stop to disk (closes its shells)"), 1 },
	{ UI_ACT_RESTORE, N_("restore"), UI_CTX_PANES, "r", N_("restore a stopped sandbox"), 1 },
	{ UI_ACT_REMOVE, N_("remove"), UI_CTX_PANES, "d Del F8", N_("remove (asks first)"), 1 },
	{ UI_ACT_EXPIRE, N_("expire"), UI_CTX_PANES, "E", N_("expire now (its expiry action)"), 1 },
	{ UI_ACT_EXTEND, N_("extend"), UI_CTX_PANES, "+", N_("extend the idle time"), 1 },
	{ UI_ACT_TOUCH, N_("touch"), UI_CTX_PANES, "t", N_("touch: count as activity now"), 1 },
	{ UI_ACT_REFRESH, N_("refresh"), UI_CTX_PANES, "C-r F5", N_("refresh now"), 0 },
	{ UI_ACT_INSPECT, N_("inspect"), UI_CTX_PANES, "i", N_("inspect the record as JSON"), 0 },
	{ UI_ACT_FILTER, N_("filter"), UI_CTX_PANES, "/", N_("filter by name, owner, label, state"), 0 },
	{ UI_ACT_SORT, N_("sort"), UI_CTX_PANES, "o F6", N_("sort by the next column"), 0 },
	{ UI_ACT_SORT_REVERSE, N_("sort-reverse"), UI_CTX_PANES, "O", N_("reverse the sort order"), 0 },
	{ UI_ACT_PULL, N_("pull"), UI_CTX_PANES, "p", N_("pull an image"), 1 },
	{ UI_ACT_PRUNE, N_("prune"), UI_CTX_PANES, "P", N_("prune unused images"), 1 },
	{ UI_ACT_SHELLS, N_("shells"), UI_CTX_PANES, "w", N_("list attached shells"), 0 },
	{ UI_ACT_NEXT_SHELL, N_("next-shell"), UI_CTX_PANES, "]", N_("focus the next attached shell"), 0 },
	{ UI_ACT_PANE_SESSIONS, N_("sessions"), UI_CTX_PANES, "4", N_("show the sessions of the selected sandbox"), 0 },
	{ UI_ACT_PANE_TIMELINE, N_("timeline"), UI_CTX_PANES, "5", N_("show the timeline of the selected sandbox"), 0 },
	{ UI_ACT_FOLLOW, N_("follow"), UI_CTX_PANES, "F", N_("timeline: follow new entries (on/off)"), 0 },
	{ UI_ACT_DIFF, N_("diff"), UI_CTX_PANES, "D", N_("what the sandbox changed against its image"), 0 },
	{ UI_ACT_COPY_OUT, N_("copy-out"), UI_CTX_PANES, "C", N_("copy a file out of the sandbox (asks for the host path)"), 0 },
	{ UI_ACT_MARK, N_("mark"), UI_CTX_PANES, "Space", N_("mark/unmark; actions then apply to all marked"), 0 },
	{ UI_ACT_MARK_RANGE, N_("mark-range"), UI_CTX_PANES, "C-Space", N_("mark from the last mark to the cursor"), 0 },
	{ UI_ACT_MARK_ALL, N_("mark-all"), UI_CTX_PANES, "*", N_("mark every sandbox the filter shows"), 0 },
	{ UI_ACT_CLEAR_MARKS, N_("clear-marks"), UI_CTX_PANES, "u", N_("clear all marks"), 0 },
	{ UI_ACT_COMMAND, N_("command"), UI_CTX_PANES, ":", N_("command line (:help lists the commands)"), 0 },
	{ UI_ACT_CMDLOG, N_("commands"), UI_CTX_PANES, "L", N_("commands behind the actions (y copies)"), 0 },
	{ UI_ACT_GC, N_("gc"), UI_CTX_PANES, "X", N_("gc: shows what it would do, then asks"), 1 },
	{ UI_ACT_CLEANUP, N_("cleanup"), UI_CTX_PANES, "Z", N_("cleanup planner: everything stale, mark, d cleans up"), 0 },
	{ UI_ACT_EXPOSURE, N_("exposure"), UI_CTX_PANES, "e", N_("exposure: network, ports, host folders; w per owner"), 0 },
	{ UI_ACT_PAUSE, N_("pause"), UI_CTX_PANES, "z", N_("pause a running sandbox (frozen in RAM) or resume a paused one"), 1 },
	{ UI_ACT_PROCESSES, N_("processes"), UI_CTX_PANES, "T", N_("processes of the running sandbox (t, K: signal one)"), 0 },
	{ UI_ACT_PREFIX, N_("prefix"), UI_CTX_SHELL, "C-g", N_("in a shell: back to the panes"), 0 },
	{ UI_ACT_SCROLL_UP, N_("scroll-up"), UI_CTX_SHELL, "S-PgUp", N_("in a shell: scroll back"), 0 },
	{ UI_ACT_SCROLL_DOWN, N_("scroll-down"), UI_CTX_SHELL, "S-PgDn", N_("in a shell: scroll forward"), 0 },
	{ UI_ACT_TAKE_OVER, N_("take-over"), UI_CTX_WATCH, "t C-t", N_("take control: your keys go to the session, the agent's are refused"), 1 },
	{ UI_ACT_LEAVE, N_("leave"), UI_CTX_WATCH, "q Esc C-g", N_("stop watching, back to the panes"), 0 },
	{ UI_ACT_HAND_BACK, N_("hand-back"), UI_CTX_CONTROL, "C-t", N_("hand control back to the agent (watching again)"), 0 },
};

static const struct {
	const char *name;
	int key;
} named_keys[] = {
	{ "Enter", '\n' }, { "Tab", '\t' }, { "Esc", 27 }, { "Space", ' ' }, { "C-Space", UI_KEY_C_SPACE },
	{ "S-Tab", UI_KEY_FN + KEY_BTAB }, { "Up", UI_KEY_FN + KEY_UP }, { "Down", UI_KEY_FN + KEY_DOWN },
	{ "Left", UI_KEY_FN + KEY_LEFT }, { "Right", UI_KEY_FN + KEY_RIGHT },
	{ "PgUp", UI_KEY_FN + KEY_PPAGE }, { "PgDn", UI_KEY_FN + KEY_NPAGE },
	{ "S-PgUp", UI_KEY_FN + KEY_SPREVIOUS }, { "S-PgDn", UI_KEY_FN + KEY_SNEXT },
	{ "Home", UI_KEY_FN + KEY_HOME }, { "End", UI_KEY_FN + KEY_END },
	{ "Del", UI_KEY_FN + KEY_DC }, { "Ins", UI_KEY_FN + KEY_IC },
	{ "Backspace", UI_KEY_FN + KEY_BACKSPACE },
};

const struct ui_action_info *ui_action_info(enum ui_action a)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (actions[i].action == a)
			return &actions[i];
	return NULL;
}

static const struct ui_action_info *action_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(actions[i].name, name))
			return &actions[i];
	return NULL;
}

static int utf8_decode(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	int c, n;

	if (len == 1 && u[0] < 0x80)
		return u[0];
	if ((u[0] & 0xe0) == 0xc0)
		c = u[0] & 0x1f, n = 2;
	else if ((u[0] & 0xf0) == 0xe0)
		c = u[0] & 0x0f, n = 3;
	else if ((u[0] & 0xf8) == 0xf0)
		c = u[0] & 0x07, n = 4;
	else
		return -1;
	if ((size_t)n != len)
		return -1;
	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (u[i] & 0x3f);
	}
	/* past Unicode: such a key could be bound but never named or typed */
	return c <= 0x10ffff ? c : -1;
}

int ui_key_parse(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(named_keys) / sizeof(named_keys[0]); i++)
		if (!strcmp(named_keys[i].name, name))
			return named_keys[i].key;
	if (len == 3 && name[0] == 'C' && name[1] == '-' && isalpha((unsigned char)name[2]))
		return tolower((unsigned char)name[2]) & 0x1f;
	if (name[0] == 'F' && len >= 2 && len <= 3 && isdigit((unsigned char)name[1])) {
		int n = atoi(name + 1);
		if (n >= 1 && n <= 12 && (len == 2 || isdigit((unsigned char)name[2])))
			return UI_KEY_FN + KEY_F(n);
	}
	if (len >= 1 && len <= 4)
		return utf8_decode(name, len);
	return -1;
}

void ui_key_name(int key, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(named_keys) / sizeof(named_keys[0]); i++) {
		if (named_keys[i].key == key) {
			snprintf(buf, size, "%s", named_keys[i].name);
			return;
		}
	}
	if (key >= UI_KEY_FN + KEY_F(1) && key <= UI_KEY_FN + KEY_F(12))
		snprintf(buf, size, "F%d", key - UI_KEY_FN - KEY_F0);
	else if (key > 0 && key < 27)
		snprintf(buf, size, "C-%c", 'a' + key - 1);
	else {
		char u[5];
		int n = ui_key_utf8(key, u);
		snprintf(buf, size, "%.*s", n ? n : 1, n ? u : "?");
	}
}

int ui_key_utf8(int key, char *out)
{
	if (key < 0 || key >= 0x110000)
		return 0;
	if (key < 0x80) {
		out[0] = (char)key;
		return 1;
	}
	if (key < 0x800) {
		out[0] = (char)(0xc0 | (key >> 6));
		out[1] = (char)(0x80 | (key & 0x3f));
		return 2;
	}
	if (key < 0x10000) {
		out[0] = (char)(0xe0 | (key >> 12));
		out[1] = (char)(0x80 | ((key >> 6) & 0x3f));
		out[2] = (char)(0x80 | (key & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (key >> 18));
	out[1] = (char)(0x80 | ((key >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((key >> 6) & 0x3f));
	out[3] = (char)(0x80 | (key & 0x3f));
	return 4;
}

enum ui_action ui_keymap_lookup(const struct ui_keymap *map, enum ui_key_context ctx, int key)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (actions[i].context != ctx)
			continue;
		for (int k = 0; k < UI_KEYS_MAX && map->keys[actions[i].action][k]; k++)
			if (map->keys[actions[i].action][k] == key)
				return actions[i].action;
	}
	/* KEY_ENTER from the keypad means Enter */
	if (key == UI_KEY_FN + KEY_ENTER)
		return ui_keymap_lookup(map, ctx, '\n');
	return UI_ACT_NONE;
}

static void warnf(char *warn, size_t size, int *count, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void warnf(char *warn, size_t size, int *count, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	(*count)++;
	if (!warn || size == 0)
		return;
	len = strlen(warn);
	if (len + 2 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(warn + len, size - len, fmt, ap);
	va_end(ap);
	len = strlen(warn);
	if (len + 1 < size) {
		warn[len] = '\n';
		warn[len + 1] = '\0';
	}
}

static void unbind(struct ui_keymap *map, enum ui_action a, int key)
{
	int *keys = map->keys[a], n = 0;

	for (int k = 0; k < UI_KEYS_MAX; k++)
		if (keys[k] && keys[k] != key)
			keys[n++] = keys[k];
	while (n < UI_KEYS_MAX)
		keys[n++] = 0;
}

/* Binds one line's keys; a key that another action of the same context holds
 * moves to this one, and the move is reported. */
static void bind_line(struct ui_keymap *map, const struct ui_action_info *info, char *keys, int lineno,
		      char *warn, size_t warn_size, int *count)
{
	int parsed[UI_KEYS_MAX] = { 0 }, n = 0;
	char *save = NULL;

	for (char *tok = strtok_r(keys, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		int key = ui_key_parse(tok);
		if (key <= 0) {
			warnf(warn, warn_size, count, _("keys.conf:%d: unknown key '%s'"), lineno, tok);
			return;
		}
		if (n == UI_KEYS_MAX) {
			warnf(warn, warn_size, count, _("keys.conf:%d: at most %d keys per action"), lineno, UI_KEYS_MAX);
			return;
		}
		parsed[n++] = key;
	}
	for (int i = 0; i < n; i++) {
		enum ui_action other = ui_keymap_lookup(map, info->context, parsed[i]);
		if (other != UI_ACT_NONE && other != info->action) {
			char name[32];
			ui_key_name(parsed[i], name, sizeof(name));
			warnf(warn, warn_size, count, _("keys.conf:%d: key %s moves from '%s' to '%s'"), lineno, name,
			      ui_action_info(other)->name, info->name);
			unbind(map, other, parsed[i]);
		}
	}
	memcpy(map->keys[info->action], parsed, sizeof(parsed));
}

/* `command = KEY "sandbench ..."`: a custom command (the value has quotes;
 * `command = :` binds the command line). Its key leaves the pane action that had it. */
static void bind_custom(struct ui_keymap *map, const char *value, int lineno, char *warn, size_t warn_size,
			int *count)
{
	struct ui_custom_cmd c;
	char why[256], name[32];

	if (ui_custom_parse(&c, value, why, sizeof(why)) < 0) {
		warnf(warn, warn_size, count, _("keys.conf:%d: %s"), lineno, why);
		return;
	}
	if (map->n_custom == UI_CUSTOM_MAX) {
		warnf(warn, warn_size, count, _("keys.conf:%d: at most %d custom commands"), lineno, UI_CUSTOM_MAX);
		return;
	}
	enum ui_action other = ui_keymap_lookup(map, UI_CTX_PANES, c.key);
	if (other != UI_ACT_NONE) {
		ui_key_name(c.key, name, sizeof(name));
		warnf(warn, warn_size, count, _("keys.conf:%d: key %s moves from '%s' to a custom command"), lineno, name,
		      ui_action_info(other)->name);
		unbind(map, other, c.key);
	}
	map->custom[map->n_custom++] = c;
}

const struct ui_custom_cmd *ui_keymap_custom(const struct ui_keymap *map, int key)
{
	for (size_t i = map->n_custom; i-- > 0;)
		if (map->custom[i].key == key)
			return &map->custom[i];
	return NULL;
}

int ui_keymap_parse(struct ui_keymap *map, const char *text, char *warn, size_t warn_size)
{
	int count = 0, lineno = 0;

	/* comments are whole lines starting with '#' ('#' alone may be a key) */
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, len), *name, *eq, *end;

		p += len + (nl ? 1 : 0);
		lineno++;
		if (!line) {
			/* said, so that a binding is never lost unseen */
			warnf(warn, warn_size, &count, _("keys.conf:%d: out of memory"), lineno);
			continue;
		}
		name = line + strspn(line, " \t");
		if (!*name || *name == '#') {
			free(line);
			continue;
		}
		if (!(eq = strchr(name, '='))) {
			warnf(warn, warn_size, &count, _("keys.conf:%d: expected 'action = keys'"), lineno);
			free(line);
			continue;
		}
		*eq = '\0';
		for (end = eq; end > name && isspace((unsigned char)end[-1]); end--)
			end[-1] = '\0';
		const struct ui_action_info *info = action_by_name(name);
		if (info && info->action == UI_ACT_COMMAND && (strchr(eq + 1, '"') || strstr(eq + 1, "sandbench")))
			bind_custom(map, eq + 1, lineno, warn, warn_size, &count);
		else if (info)
			bind_line(map, info, eq + 1, lineno, warn, warn_size, &count);
		else
			warnf(warn, warn_size, &count, _("keys.conf:%d: unknown action '%s'"), lineno, name);
		free(line);
	}
	return count;
}

void ui_keymap_defaults(struct ui_keymap *map)
{
	memset(map, 0, sizeof(*map));
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		/* on the stack: a failed allocation would leave an action unbound */
		char keys[256], *save = NULL;
		int n = 0;

		snprintf(keys, sizeof(keys), "%s", actions[i].defaults);
		for (char *tok = strtok_r(keys, " ", &save); tok && n < UI_KEYS_MAX; tok = strtok_r(NULL, " ", &save))
			map->keys[actions[i].action][n++] = ui_key_parse(tok);
	}
}

int ui_keymap_load_user(struct ui_keymap *map, char *warn, size_t warn_size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *path, *text = NULL;
	size_t len;
	int n;

	if (xdg && *xdg)
		path = sb_strdupf("%s/sandbench/keys.conf", xdg);
	else if (home && *home)
		path = sb_strdupf("%s/.config/sandbench/keys.conf", home);
	else
		return 0;
	if (!path || sb_fs_read_file(&text, &len, path, 1 << 16, NULL) < 0) {
		free(path);
		return 0;   /* no user file: the defaults stand */
	}
	n = ui_keymap_parse(map, text, warn, warn_size);
	free(text);
	free(path);
	return n;
}

void ui_keymap_describe(const struct ui_keymap *map, enum ui_action a, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < UI_KEYS_MAX && map->keys[a][k] && len + 1 < size; k++) {
		char name[32];
		ui_key_name(map->keys[a][k], name, sizeof(name));
		len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "", name);
	}
}
