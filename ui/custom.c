/* Custom commands of the key table: `command = KEY "sandbench exec $NAME -- ..."`.
 * The line is split into words the way sh would (single quotes, double
 * quotes, backslash) and each $NAME, $WORKSPACE, $ID or $OWNER becomes the
 * sandbox's value inside its word: never split again, never parsed again,
 * never handed to a shell. The words are the argv of sandbench itself
 * (exec'd directly), so a sandbox name or owner cannot inject anything. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "keys.h"

#define WORDS_MAX 64
#define WORD_MAX 4096

static const char *const var_names[] = { "NAME", "WORKSPACE", "ID", "OWNER" };

static int fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *var_value(const struct ui_custom_vars *v, size_t i)
{
	const char *vals[] = { v->name, v->workspace, v->id, v->owner };

	return vals[i] ? vals[i] : "";
}

/* $VAR or ${VAR} at *p (just after '$'): appends its value; 0 when p is no
 * variable at all (a '$' stays literal), -1 when it names an unknown one. */
static int expand_var(char *word, size_t *len, const char **p, const struct ui_custom_vars *v, char *why, size_t size)
{
	const char *s = *p;
	int brace = *s == '{';
	size_t n = 0;

	s += brace;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	if (n == 0 || (brace && s[n] != '}'))
		return 0;
	for (size_t i = 0; i < sizeof(var_names) / sizeof(var_names[0]); i++) {
		if (strlen(var_names[i]) != n || strncmp(var_names[i], s, n))
			continue;
		const char *val = var_value(v, i);
		size_t vlen = strlen(val);
		if (*len + vlen >= WORD_MAX)
			return fail(why, size, _("a word is longer than %d bytes"), WORD_MAX);
		memcpy(word + *len, val, vlen + 1); /* with its NUL: room checked above */
		*len += vlen;
		*p = s + n + brace;
		return 1;
	}
	return fail(why, size, _("unknown variable $%.*s (known: $NAME $WORKSPACE $ID $OWNER)"), (int)n, s);
}

static int push(char ***argv, size_t *n, char *word, size_t len, char *why, size_t size)
{
	char *w = strndup(word, len), **grown;

	if (!w || *n + 2 > WORDS_MAX || !(grown = realloc(*argv, (*n + 2) * sizeof(char *)))) {
		free(w);
		return fail(why, size, _("too many words or out of memory"));
	}
	*argv = grown;
	grown[(*n)++] = w;
	grown[*n] = NULL;
	return 0;
}

/* One word starting at *p; *p ends after it. */
static int one_word(char *word, size_t *len, const char **p, const struct ui_custom_vars *v, char *why, size_t size)
{
	char quote = 0;
	const char *s = *p;

	for (*len = 0; *s && (quote || !isspace((unsigned char)*s));) {
		if (*len + 2 >= WORD_MAX)
			return fail(why, size, _("a word is longer than %d bytes"), WORD_MAX);
		if (quote != '\'' && *s == '\\' && s[1]) {
			word[(*len)++] = s[1];
			s += 2;
			continue;
		}
		if (!quote && (*s == '\'' || *s == '"')) {
			quote = *s++;
			continue;
		}
		if (quote && *s == quote) {
			quote = 0;
			s++;
			continue;
		}
		if (quote != '\'' && *s == '$') {
			const char *after = s + 1;
			int r = expand_var(word, len, &after, v, why, size);
			if (r < 0)
				return -1;
			if (r > 0) {
				s = after;
				continue;
			}
		}
		word[(*len)++] = *s++;
	}
	if (quote)
		return fail(why, size, _("unterminated %c quote"), quote);
	*p = s;
	return 0;
}

int ui_custom_expand(char ***out, const char *tmpl, const struct ui_custom_vars *v, char *why, size_t size)
{
	char *word = malloc(WORD_MAX), **argv = NULL;
	size_t n = 0, len;
	const char *p = tmpl;
	int rc = 0;

	*out = NULL;
	if (!word)
		return fail(why, size, _("out of memory"));
	while (rc == 0 && *(p += strspn(p, " \t"))) {
		if ((rc = one_word(word, &len, &p, v, why, size)) == 0)
			rc = push(&argv, &n, word, len, why, size);
	}
	free(word);
	if (rc == 0 && (n < 2 || strcmp(argv[0], "sandbench")))
		rc = fail(why, size, _("the command must start with 'sandbench' and have a subcommand"));
	if (rc < 0) {
		ui_custom_argv_free(argv);
		return -1;
	}
	*out = argv;
	return 0;
}

void ui_custom_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int ui_custom_parse(struct ui_custom_cmd *out, const char *value, char *why, size_t size)
{
	const char *p = value + strspn(value, " \t"), *q, *end;
	struct ui_custom_vars probe = { "n", "/w", "i", "o" };
	char key[32], **argv;

	q = p + strcspn(p, " \t");
	if (q == p || (size_t)(q - p) >= sizeof(key))
		return fail(why, size, _("expected 'command = KEY \"sandbench ...\"'"));
	snprintf(key, sizeof(key), "%.*s", (int)(q - p), p);
	if ((out->key = ui_key_parse(key)) <= 0)
		return fail(why, size, _("unknown key '%s'"), key);
	q += strspn(q, " \t");
	end = q + strlen(q);
	while (end > q && isspace((unsigned char)end[-1]))
		end--;
	if (*q != '"' || end - q < 2 || end[-1] != '"')
		return fail(why, size, _("the command must be in double quotes after the key"));
	if ((size_t)(end - q - 2) >= sizeof(out->line))
		return fail(why, size, _("the command is longer than %zu bytes"), sizeof(out->line) - 1);
	snprintf(out->line, sizeof(out->line), "%.*s", (int)(end - q - 2), q + 1);
	if (ui_custom_expand(&argv, out->line, &probe, why, size) < 0)
		return -1;
	ui_custom_argv_free(argv);
	return 0;
}
