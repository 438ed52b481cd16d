/* Fuzz target: the bytes are a Dockerfile for image build. The steps of one
 * it accepts are within bounds: lines ascending within the file, one FROM
 * with only ARGs before it, arguments present and trimmed; an exec form
 * gives a non-empty argv. */
#include "config.h"

#include <ctype.h>

#include "fuzz.h"
#include "image/dockerfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_dockerfile df;
	int lines = 1, froms = 0, prev = 0;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (sb_dockerfile_parse(&df, (const char *)data, size, NULL) < 0) {
		FUZZ_CHECK(!df.steps && df.n_steps == 0);
		return 0;
	}
	FUZZ_CHECK(df.n_steps > 0 && df.steps[df.n_steps - 1].kind != SB_DF_ARG);
	for (size_t i = 0; i < df.n_steps; i++) {
		const struct sb_df_step *s = &df.steps[i];
		size_t len = strlen(s->args);
		FUZZ_CHECK(s->line > prev && s->line <= lines);
		FUZZ_CHECK(len > 0 && len <= size && !isspace((unsigned char)s->args[0]) &&
			   !isspace((unsigned char)s->args[len - 1]));
		FUZZ_CHECK(s->word && (s->network == 0 || s->network == 1));
		FUZZ_CHECK(froms > 0 || s->kind == SB_DF_FROM || s->kind == SB_DF_ARG);
		froms += s->kind == SB_DF_FROM;
		prev = s->line;
		char **argv;
		int rc = sb_df_exec_form(&argv, s->args, NULL);
		FUZZ_CHECK(rc == 0 || rc == 1);
		FUZZ_CHECK(rc == 1 ? !argv : argv && argv[0]);
		sb_df_argv_free(argv);
	}
	FUZZ_CHECK(froms == 1);
	sb_dockerfile_clear(&df);
	return 0;
}
