/* The Dockerfile subset of image build: lines (comments, continuations)
 * into steps through one table of the instructions it knows. */
#include "config.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/i18n.h"
#include "image/dockerfile.h"

#define NETWORK_ON_COMMENT "sandbench: network=on"

static const struct instruction {
	const char *word;
	enum sb_df_kind kind;
} instructions[] = {
	{ "FROM", SB_DF_FROM },         { "RUN", SB_DF_RUN },       { "COPY", SB_DF_COPY },
	{ "ADD", SB_DF_COPY },          { "ARG", SB_DF_ARG },       { "ENV", SB_DF_CHANGE },
	{ "WORKDIR", SB_DF_CHANGE },    { "USER", SB_DF_CHANGE },   { "CMD", SB_DF_CHANGE },
	{ "ENTRYPOINT", SB_DF_CHANGE }, { "LABEL", SB_DF_CHANGE },  { "EXPOSE", SB_DF_CHANGE },
};

#define N_INSTRUCTIONS (sizeof(instructions) / sizeof(instructions[0]))

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static const struct instruction *lookup(const char *word, size_t len)
{
	for (size_t i = 0; i < N_INSTRUCTIONS; i++)
		if (strlen(instructions[i].word) == len && !strncasecmp(instructions[i].word, word, len))
			return &instructions[i];
	return NULL;
}

/* One logical line being gathered. */
struct gather {
	char *buf;
	size_t len, cap;
	int line;                        /* where it started; 0: none yet */
	int network;
	int has_from;                    /* a FROM step was added (kept here: a scan of the steps
					  * for each one made a 1 MiB Dockerfile take seconds) */
	size_t steps_cap;                /* grown by doubling, for the same reason */
};

static int append(struct gather *g, const char *s, size_t n, struct sb_error *err)
{
	if (!g->buf || g->len + n + 2 > g->cap) {
		size_t cap = (g->len + n + 2) * 2;
		char *nb = realloc(g->buf, cap);
		if (!nb)
			return nomem(err);
		g->buf = nb;
		g->cap = cap;
	}
	if (n) /* s may be NULL then, and memcpy must not see it */
		memcpy(g->buf + g->len, s, n);
	g->len += n;
	g->buf[g->len] = '\0';
	return 0;
}

static int add_step(struct sb_dockerfile *df, struct gather *g, struct sb_error *err)
{
	char *s = g->buf, *end;
	size_t wlen;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	/* one class of blanks throughout (isspace): "FROM \rb" has the argument "b" */
	for (wlen = 0; s[wlen] && !isspace((unsigned char)s[wlen]); wlen++)
		;
	const struct instruction *in = lookup(s, wlen);
	if (!in)
		return sb_error_set(err, SB_ERR_INVALID,
				    _("line %d: the instruction '%.*s' is not supported (FROM, RUN, COPY, ADD, ARG, ENV, "
				      "WORKDIR, USER, CMD, ENTRYPOINT, LABEL, EXPOSE)"),
				    g->line, (int)wlen, s);
	const char *args = s + wlen;
	while (isspace((unsigned char)*args))
		args++;
	if (!*args)
		return sb_error_set(err, SB_ERR_INVALID, _("line %d: %s needs arguments"), g->line, in->word);
	if (in->kind == SB_DF_FROM && g->has_from)
		return sb_error_set(err, SB_ERR_INVALID, _("line %d: a second FROM: only one build stage is supported"),
				    g->line);
	if (in->kind != SB_DF_FROM && in->kind != SB_DF_ARG && !g->has_from)
		return sb_error_set(err, SB_ERR_INVALID, _("line %d: %s before FROM"), g->line, in->word);
	if (df->n_steps == g->steps_cap) {
		size_t cap = g->steps_cap ? 2 * g->steps_cap : 16;
		struct sb_df_step *grown = realloc(df->steps, cap * sizeof(*grown));
		if (!grown)
			return nomem(err);
		df->steps = grown;
		g->steps_cap = cap;
	}
	struct sb_df_step *ns = df->steps;
	if (!(ns[df->n_steps].args = strdup(args)))
		return nomem(err);
	ns[df->n_steps].kind = in->kind;
	ns[df->n_steps].word = in->word;
	ns[df->n_steps].line = g->line;
	ns[df->n_steps].network = g->network;
	df->n_steps++;
	g->has_from |= in->kind == SB_DF_FROM;
	g->len = 0;
	g->line = 0;
	g->network = 0;
	return 0;
}

/* A comment line: "# sandbench: network=on" marks the next instruction. */
static void comment(struct gather *g, const char *s, size_t n)
{
	s++, n--;
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == strlen(NETWORK_ON_COMMENT) && !strncmp(s, NETWORK_ON_COMMENT, n))
		g->network = 1;
}

static int parse_line(struct sb_dockerfile *df, struct gather *g, const char *s, size_t n, int lineno,
		      struct sb_error *err)
{
	size_t lead = 0;

	while (lead < n && isspace((unsigned char)s[lead]))
		lead++;
	if (lead < n && s[lead] == '#') {
		comment(g, s + lead, n - lead); /* inside a continuation too, as docker does */
		return 0;
	}
	if (lead == n && g->line == 0)
		return 0;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	int more = n > 0 && s[n - 1] == '\\';
	if (g->line == 0)
		g->line = lineno;
	int rc = append(g, s, more ? n - 1 : n, err);
	if (rc == 0 && more)
		rc = append(g, " ", 1, err);
	return rc < 0 || more ? rc : add_step(df, g, err);
}

int sb_dockerfile_parse(struct sb_dockerfile *out, const char *text, size_t len, struct sb_error *err)
{
	struct gather g = { 0 };
	int rc = 0, lineno = 0;

	memset(out, 0, sizeof(*out));
	if (len > SB_DOCKERFILE_MAX)
		return sb_error_set(err, SB_ERR_LIMIT, _("the Dockerfile is bigger than %d bytes"), SB_DOCKERFILE_MAX);
	if (memchr(text, '\0', len))
		return sb_error_set(err, SB_ERR_INVALID, _("the Dockerfile holds a NUL byte: it is not text"));
	for (size_t at = 0; rc == 0 && at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - text) - at : len - at;
		rc = parse_line(out, &g, text + at, n, ++lineno, err);
		at += n + 1;
	}
	if (rc == 0 && g.line)
		rc = add_step(out, &g, err);
	if (rc == 0 && (out->n_steps == 0 || out->steps[out->n_steps - 1].kind == SB_DF_ARG))
		rc = sb_error_set(err, SB_ERR_INVALID, _("the Dockerfile has no FROM"));
	free(g.buf);
	if (rc < 0)
		sb_dockerfile_clear(out);
	return rc;
}

void sb_dockerfile_clear(struct sb_dockerfile *df)
{
	if (!df)
		return;
	for (size_t i = 0; i < df->n_steps; i++)
		free(df->steps[i].args);
	free(df->steps);
	memset(df, 0, sizeof(*df));
}

int sb_df_exec_form(char ***argv, const char *args, struct sb_error *err)
{
	json_t *a = args[0] == '[' ? json_loads(args, 0, NULL) : NULL, *v;
	size_t i, n = json_array_size(a);
	int ok = json_is_array(a) && n > 0;

	*argv = NULL;
	json_array_foreach (a, i, v)
		ok = ok && json_is_string(v);
	if (!ok) {
		json_decref(a);
		return 1;
	}
	if (!(*argv = calloc(n + 1, sizeof(**argv)))) {
		json_decref(a);
		return nomem(err);
	}
	json_array_foreach (a, i, v)
		if (!((*argv)[i] = strdup(json_string_value(v)))) {
			json_decref(a);
			sb_df_argv_free(*argv);
			*argv = NULL;
			return nomem(err);
		}
	json_decref(a);
	return 0;
}

void sb_df_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}
