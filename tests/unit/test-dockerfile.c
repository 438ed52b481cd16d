/* The Dockerfile parser: steps, lines, continuations, comments, the
 * network comment, the exec form, and the refusals by line. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "image/dockerfile.h"

static int parse(struct sb_dockerfile *df, const char *text, struct sb_error *err)
{
	return sb_dockerfile_parse(df, text, strlen(text), err);
}

Test(dockerfile, steps_lines_and_continuations)
{
	struct sb_dockerfile df;
	struct sb_error err;
	const char *text = "# syntax comment\n"
			   "ARG BASE=busybox\n"
			   "from $BASE\n"
			   "\n"
			   "# sandbench: network=on\n"
			   "RUN echo a && \\\n"
			   "  # a comment inside\n"
			   "  echo b\n"
			   "COPY [\"a\", \"/b\"]\n"
			   "  env K=V\n";

	cr_assert_eq(parse(&df, text, &err), 0, "%s", err.msg);
	cr_assert_eq(df.n_steps, 5);
	cr_assert_eq(df.steps[0].kind, SB_DF_ARG);
	cr_assert_eq(df.steps[1].kind, SB_DF_FROM);
	cr_assert_str_eq(df.steps[1].word, "FROM");
	cr_assert_eq(df.steps[1].line, 3);
	cr_assert_eq(df.steps[2].kind, SB_DF_RUN);
	cr_assert_eq(df.steps[2].line, 6);
	cr_assert_eq(df.steps[2].network, 1);
	cr_assert_str_eq(df.steps[2].args, "echo a &&    echo b");
	cr_assert_eq(df.steps[3].network, 0, "the comment marks one step");
	cr_assert_eq(df.steps[3].kind, SB_DF_COPY);
	cr_assert_eq(df.steps[4].kind, SB_DF_CHANGE);
	cr_assert_str_eq(df.steps[4].args, "K=V");

	char **argv;
	cr_assert_eq(sb_df_exec_form(&argv, df.steps[3].args, &err), 0);
	cr_assert_str_eq(argv[0], "a");
	cr_assert_str_eq(argv[1], "/b");
	cr_assert_null(argv[2]);
	sb_df_argv_free(argv);
	cr_assert_eq(sb_df_exec_form(&argv, "echo [x]", &err), 1, "the shell form");
	cr_assert_eq(sb_df_exec_form(&argv, "[\"a\", 1]", &err), 1, "not strings: the shell form");
	sb_dockerfile_clear(&df);
}

static void refused(const char *text, const char *want)
{
	struct sb_dockerfile df;
	struct sb_error err;

	cr_assert_eq(parse(&df, text, &err), SB_ERR_INVALID, "accepted: %s", text);
	cr_assert(strstr(err.msg, want), "expected '%s' in '%s'", want, err.msg);
	cr_assert_eq(df.n_steps, 0);
}

Test(dockerfile, refusals)
{
	refused("FROM a\nRUN x\nONBUILD RUN y\n", "line 3: the instruction 'ONBUILD' is not supported");
	refused("FROM a\nRUN x \\\n  y\nHEALTHCHECK \\\n NONE\n", "line 4:");
	refused("RUN x\n", "line 1: RUN before FROM");
	refused("FROM a\nFROM b\n", "line 2: a second FROM");
	refused("FROM a\nRUN\n", "line 2: RUN needs arguments");
	refused("# only a comment\n", "no FROM");
	refused("ARG X=1\n", "no FROM");
}

/* The biggest Dockerfile accepted, all steps: each step used to scan all
 * before it for the FROM and to grow the array by one (seconds of CPU for
 * this one, minutes under ASan: a build stalled). */
Test(dockerfile, biggest_file_of_steps)
{
	struct sb_dockerfile df;
	size_t len = 0, args = (SB_DOCKERFILE_MAX - 16) / 6;
	char *text = malloc(SB_DOCKERFILE_MAX);

	cr_assert_not_null(text);
	for (size_t i = 0; i < args; i++, len += 6)
		memcpy(text + len, "ARG a\n", 6);
	memcpy(text + len, "FROM a\nRUN x\n", 13);
	len += 13;
	cr_assert_eq(sb_dockerfile_parse(&df, text, len, NULL), 0);
	cr_assert_eq(df.n_steps, args + 2);
	cr_assert_eq(df.steps[args].kind, SB_DF_FROM);
	cr_assert_eq(df.steps[args + 1].kind, SB_DF_RUN);
	sb_dockerfile_clear(&df);
	free(text);
}
