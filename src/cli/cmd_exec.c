#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

#define MAX_ENV 128

/* sandbench's own failures exit 125 so that they differ from the command's. */
static int exec_fail(const struct sb_error *err)
{
	sb_cli_fail(err);
	return SB_EXIT_EXEC_FAILED;
}

static int exec_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "cwd", required_argument, NULL, 'C' },
		{ "env", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_exec_opts opts = { .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2 };
	struct sb_exec_result res;
	struct sb_root *root;
	struct sb_error err;
	char *env[MAX_ENV + 1] = { NULL }, *end;
	int opt, rc, json = 0, n_env = 0;

	/* 0: full re-initialisation; '+': options stop at the first other word.
	 * Options go before or after the name; the command follows "--" (or is the
	 * first word after the name that is no option). */
	optind = 0;
	const char *name = NULL;
	for (;;) {
		while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
			switch (opt) {
			case 'C':
				opts.cwd = optarg;
				break;
			case 'e':
				if (n_env == MAX_ENV)
					return sb_cli_usage_error(NULL, &sb_cmd_exec, _("too many --env"));
				env[n_env++] = optarg;
				break;
			case 't': {
				double s = strtod(optarg, &end);
				if (*end || s <= 0 || s > 86400)
					return sb_cli_usage_error(NULL, &sb_cmd_exec, _("invalid timeout '%s' (seconds)"), optarg);
				opts.timeout_ms = (int)(s * 1000);
				break;
			}
			case 'j':
				json = 1;
				break;
			default:
				return sb_cli_usage_error(NULL, &sb_cmd_exec, _("invalid option"));
			}
		}
		if (name || optind >= argc || !strcmp(argv[optind - 1], "--"))
			break;
		name = argv[optind++];
	}
	if (!name && optind < argc)
		name = argv[optind++];
	if (!name)
		return sb_cli_usage_error(NULL, &sb_cmd_exec, _("expected a sandbox name"));
	if (optind >= argc)
		return sb_cli_usage_error(NULL, &sb_cmd_exec, _("expected a command after the name"));
	opts.argv = argv + optind;
	opts.env = n_env ? env : NULL;
	if (json) {
		opts.stdout_fd = opts.stderr_fd = -1;
		opts.stdin_fd = -1;
	}
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return SB_EXIT_EXEC_FAILED;
	if (sb_sandbox_exec(&res, root, name, &opts, &err) < 0)
		return exec_fail(&err);
	rc = res.exit_code;
	if (json) {
		if (sb_cli_print_json(json_pack("{s:i, s:s%, s:s%, s:I, s:b}", "exit_code", res.exit_code, "stdout",
						res.out, res.out_len, "stderr", res.errout, res.err_len, "duration_ms",
						(json_int_t)res.duration_ms, "timed_out", res.timed_out)) != SB_EXIT_OK)
			rc = SB_EXIT_EXEC_FAILED;
	} else if (res.timed_out) {
		fprintf(stderr, _("sandbench: the command in '%s' did not finish within %.0f s and was killed\n"), name,
			opts.timeout_ms / 1000.0);
	}
	sb_exec_result_clear(&res);
	return rc;
}

const struct sb_cli_command sb_cmd_exec = {
	.name = "exec",
	.synopsis = "NAME [--cwd D] [--env K=V]... [--timeout S] [--json] -- CMD [ARG]...",
	.summary = N_("run a command in a sandbox; its exit status is passed through"),
	.help = N_("  --cwd D        working directory inside (default /workspace)\n"
		   "  --env K=V      environment variable (repeatable)\n"
		   "  --timeout S    kill the command after S seconds\n"
		   "  --json         print {exit_code, stdout, stderr, duration_ms} as JSON\n"
		   "Exit status: the command's, or 125 when sandbench could not run it.\n"),
	.run = exec_run,
};
