/* The Dockerfile subset image build reads: its instructions, one table of
 * them (dockerfile.c), parsed into steps with their line numbers; nothing is
 * executed here. */
#ifndef SB_IMAGE_DOCKERFILE_H
#define SB_IMAGE_DOCKERFILE_H

#include <stddef.h>

#include "base/error.h"

/* A Dockerfile bigger than this is refused. */
#define SB_DOCKERFILE_MAX (1024 * 1024)

enum sb_df_kind {
	SB_DF_FROM,
	SB_DF_RUN,
	SB_DF_COPY,                      /* COPY and ADD (local files only) */
	SB_DF_ARG,
	SB_DF_CHANGE,                    /* config only: ENV, WORKDIR, USER, CMD, ENTRYPOINT, LABEL, EXPOSE */
};

struct sb_df_step {
	enum sb_df_kind kind;
	const char *word;                /* the instruction as the table spells it ("RUN") */
	char *args;                      /* the rest, continuations joined, trimmed */
	int line;                        /* where the instruction starts (1-based) */
	int network;                     /* a "# sandbench: network=on" comment came before it */
};

struct sb_dockerfile {
	struct sb_df_step *steps;
	size_t n_steps;
};

/* Parses text (len bytes). Comments and blank lines are skipped, a line
 * ending in '\' goes on on the next one. SB_ERR_INVALID naming the line for
 * an unsupported instruction, an instruction without arguments, no FROM
 * first (ARG may precede it) or a second FROM (one stage only). */
int sb_dockerfile_parse(struct sb_dockerfile *out, const char *text, size_t len, struct sb_error *err);
void sb_dockerfile_clear(struct sb_dockerfile *df);

/* The exec form '["prog", "arg"]' as a NULL-terminated argv (free with
 * sb_df_argv_free); 1 when args is not a JSON array of strings (the shell form). */
int sb_df_exec_form(char ***argv, const char *args, struct sb_error *err);
void sb_df_argv_free(char **argv);

#endif
