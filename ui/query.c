/* The filter query: parsed once when it changes, matched per row on every
 * rebuild (see query.h). */
#include "config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/i18n.h"
#include "base/units.h"
#include "query.h"

#define VALUES_MAX 32

enum term_kind { TERM_TEXT, TERM_REGEX, TERM_GLOB, TERM_ABOVE, TERM_BELOW };

struct term {
	enum term_kind kind;
	int invert;
	char *field;                 /* TERM_GLOB, TERM_ABOVE, TERM_BELOW */
	char *arg;                   /* the text or the glob */
	long long limit;             /* TERM_ABOVE, TERM_BELOW: seconds or bytes */
	regex_t re;                  /* TERM_REGEX */
};

struct ui_query {
	const struct ui_query_fields *fields;
	struct term *terms;
	size_t n;
};

static int listed(const char *const *names, const char *name, size_t len)
{
	for (size_t i = 0; names && names[i]; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], name, len))
			return 1;
	return 0;
}

static void known_fields(char *buf, size_t size, const struct ui_query_fields *f)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; f->names[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", f->names[i]);
}

/* "field:glob", "field>dur", "field<size"...: 1 and t filled when tok is one, 0
 * when it is plain text, -1 (msg) when it names a field wrongly. */
static int parse_field(struct term *t, const char *tok, const struct ui_query_fields *f, char *msg, size_t size)
{
	size_t len = strcspn(tok, ":<>");
	char known[256];

	if (!tok[len] || len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalpha((unsigned char)tok[i]))
			return 0;   /* "a-b:c" is text */
	known_fields(known, sizeof(known), f);
	if (!listed(f->names, tok, len)) {
		snprintf(msg, size, _("unknown field '%.*s' (fields: %s)"), (int)len, tok, known);
		return -1;
	}
	if (!tok[len + 1]) {
		snprintf(msg, size, _("'%s' needs a value after it"), tok);
		return -1;
	}
	t->field = strndup(tok, len);
	t->arg = strdup(tok + len + 1);
	if (!t->field || !t->arg) {
		snprintf(msg, size, "%s", _("out of memory"));
		return -1;
	}
	if (tok[len] == ':') {
		t->kind = TERM_GLOB;
		return 1;
	}
	t->kind = tok[len] == '>' ? TERM_ABOVE : TERM_BELOW;
	if (listed(f->sizes, tok, len)) {
		if ((t->limit = sb_units_parse_size(tok + len + 1)) < 0) {
			snprintf(msg, size, _("'%s' is not a size (e.g. 512K, 100M, 2G)"), tok + len + 1);
			return -1;
		}
		return 1;
	}
	if (!listed(f->durations, tok, len)) {
		snprintf(msg, size, _("'%.*s' is not a duration or a size: '%c' compares only durations and sizes"),
			 (int)len, tok, tok[len]);
		return -1;
	}
	if ((t->limit = sb_units_parse_duration(tok + len + 1)) < 0) {
		snprintf(msg, size, _("'%s' is not a duration (e.g. 90s, 10m, 2h, 1d)"), tok + len + 1);
		return -1;
	}
	return 1;
}

static int parse_term(struct term *t, const char *tok, const struct ui_query_fields *f, char *msg, size_t size)
{
	int rc = 0;

	if (tok[0] == '!') {
		t->invert = 1;
		tok++;
		if (!*tok) {
			snprintf(msg, size, "%s", _("'!' needs a term after it (e.g. !state:running)"));
			return -1;
		}
	}
	if (tok[0] == '/') {
		size_t len = strlen(tok);
		if (len < 3 || tok[len - 1] != '/') {
			snprintf(msg, size, _("'%s': a regular expression goes between two slashes (/re/)"), tok);
			return -1;
		}
		t->arg = strndup(tok + 1, len - 2);
		t->kind = TERM_REGEX;
		if (!t->arg || (rc = regcomp(&t->re, t->arg, REG_EXTENDED | REG_ICASE | REG_NOSUB)) != 0) {
			char why[128] = "";
			if (t->arg)
				regerror(rc, &t->re, why, sizeof(why));
			snprintf(msg, size, _("bad regular expression /%s/: %s"), t->arg ? t->arg : "", why);
			free(t->arg);
			t->arg = NULL;
			t->kind = TERM_TEXT;
			return -1;
		}
		return 0;
	}
	if ((rc = parse_field(t, tok, f, msg, size)) != 0)
		return rc < 0 ? -1 : 0;
	t->kind = TERM_TEXT;
	if (!(t->arg = strdup(tok))) {
		snprintf(msg, size, "%s", _("out of memory"));
		return -1;
	}
	return 0;
}

static void term_clear(struct term *t)
{
	if (t->kind == TERM_REGEX && t->arg)
		regfree(&t->re);
	free(t->field);
	free(t->arg);
}

void ui_query_free(struct ui_query *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		term_clear(&q->terms[i]);
	free(q->terms);
	free(q);
}

int ui_query_parse(struct ui_query **out, const char *text, const struct ui_query_fields *fields, char *msg,
		   size_t msg_size)
{
	struct ui_query *q = calloc(1, sizeof(*q));
	char *copy = strdup(text), *save = NULL;

	if (!q || !copy) {
		snprintf(msg, msg_size, "%s", _("out of memory"));
		free(q);
		free(copy);
		return -1;
	}
	q->fields = fields;
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		struct term *terms = realloc(q->terms, sizeof(*terms) * (q->n + 1));
		if (!terms) {
			snprintf(msg, msg_size, "%s", _("out of memory"));
			goto fail;
		}
		q->terms = terms;
		memset(&terms[q->n], 0, sizeof(terms[0]));
		if (parse_term(&terms[q->n], tok, fields, msg, msg_size) < 0) {
			term_clear(&terms[q->n]);
			goto fail;
		}
		q->n++;
	}
	free(copy);
	*out = q;
	return 0;
fail:
	free(copy);
	ui_query_free(q);
	return -1;
}

static int term_match(const struct term *t, const struct ui_query_fields *f, const void *row)
{
	/* on the stack (16 KiB): a failed allocation would hide or show a row */
	char vals[VALUES_MAX][UI_QUERY_VALUE_MAX];
	size_t n = f->values(row, t->kind == TERM_TEXT || t->kind == TERM_REGEX ? NULL : t->field, vals, VALUES_MAX);
	int hit = 0;

	for (size_t i = 0; i < n && !hit; i++) {
		switch (t->kind) {
		case TERM_TEXT:
			hit = strcasestr(vals[i], t->arg) != NULL;
			break;
		case TERM_REGEX:
			hit = regexec(&t->re, vals[i], 0, NULL, 0) == 0;
			break;
		case TERM_GLOB:
			hit = fnmatch(t->arg, vals[i], FNM_CASEFOLD) == 0;
			break;
		case TERM_ABOVE:
			hit = strtoll(vals[i], NULL, 10) > t->limit;
			break;
		case TERM_BELOW:
			hit = strtoll(vals[i], NULL, 10) < t->limit;
			break;
		}
	}
	return hit != t->invert;
}

int ui_query_match(const struct ui_query *q, const void *row)
{
	for (size_t i = 0; q && i < q->n; i++)
		if (!term_match(&q->terms[i], q->fields, row))
			return 0;
	return 1;
}
