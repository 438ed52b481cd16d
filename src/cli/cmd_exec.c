#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

#define MAX_ENV 128
#define MAX_SECRETS 32

/* sandbench's own failures exit 125 so that they differ from the command's. */
static int exec_fail(const struct sb_error *err)
{
	sb_cli_fail(err);
	return SB_EXIT_EXEC_FAILED;
}

/* --secret-env NAME=VALUE, or NAME alone for the value of $NAME (then it is
 * on no command line at all). The value is copied and the argument blanked,
 * so that it stays in this process's command line for a moment only. */
static int add_secret(struct sb_secret *out, char **held, char *arg)
{
	struct sb_error err;
	char *eq = strchr(arg, '=');

	if (!eq) {
		const char *v = getenv(arg);
		if (!*arg || !v)
			return sb_cli_usage_error(NULL, &sb_cmd_exec, _("secret '%s' has no '=VALUE' and is not in the environment"),
						  arg);
		*held = strdup(v);
		*out = (struct sb_secret){ .name = arg, .value = *held };
	} else {
		if (sb_secret_parse(out, arg, &err) < 0)
			return sb_cli_usage_error(NULL, &sb_cmd_exec, "%s", err.msg);
		*held = strdup(out->value);
		memset(eq + 1, 'x', strlen(eq + 1));
		out->value = *held;
	}
	if (!*held)
		return sb_cli_usage_error(NULL, &sb_cmd_exec, _("out of memory"));
	/* the library's rule (a value too short to redact), as a usage error */
	struct sb_redact *probe;
	if (sb_redact_new(&probe, out, 1, &err) < 0)
		return sb_cli_usage_error(NULL, &sb_cmd_exec, "%s", err.msg);
	sb_redact_free(probe);
	return 0;
}

static int parse_source(enum sb_timeline_source *out, const char *s)
{
	int v = sb_timeline_source_parse(s);

	if (v != SB_TIMELINE_AGENT && v != SB_TIMELINE_HUMAN)
		return sb_cli_usage_error(NULL, &sb_cmd_exec, _("invalid --as '%s' (agent or human)"), s);
	*out = v;
	return 0;
}

static int exec_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "cwd", required_argument, NULL, 'C' },
		{ "user", required_argument, NULL, 'u' },
		{ "env", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },
		{ "secret-env", required_argument, NULL, 's' },
		{ "as", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_exec_opts opts = { .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2 };
	struct sb_exec_result res;
	struct sb_root *root;
	struct sb_error err;
	char *env[MAX_ENV + 1] = { NULL }, *end, *held[MAX_SECRETS] = { NULL };
	struct sb_secret secrets[MAX_SECRETS];
	int opt, rc = 0, json = 0, n_env = 0;
	size_t n_secrets = 0;

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
			case 'u':
				opts.user = optarg;
				break;
			case 'e':
				if (n_env == MAX_ENV)
					rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("too many --env"));
				else
					env[n_env++] = optarg;
				break;
			case 't': {
				double s = strtod(optarg, &end);
				/* written so that NaN fails too */
				if (*end || end == optarg || !(s > 0 && s <= 86400))
					rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("invalid timeout '%s' (seconds)"), optarg);
				else
					opts.timeout_ms = (int)(s * 1000);
				break;
			}
			case 'j':
				json = 1;
				break;
			case 's':
				if (n_secrets == MAX_SECRETS)
					rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("too many --secret-env"));
				else if ((rc = add_secret(&secrets[n_secrets], &held[n_secrets], optarg)) == 0)
					n_secrets++;
				break;
			case 'a':
				rc = parse_source(&opts.source, optarg);
				break;
			default:
				rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("invalid option"));
			}
			if (rc)
				goto out;
		}
		if (name || optind >= argc || !strcmp(argv[optind - 1], "--"))
			break;
		name = argv[optind++];
	}
	if (!name && optind < argc)
		name = argv[optind++];
	if (!name) {
		rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("expected a sandbox name"));
		goto out;
	}
	if (optind >= argc) {
		rc = sb_cli_usage_error(NULL, &sb_cmd_exec, _("expected a command after the name"));
		goto out;
	}
	opts.argv = argv + optind;
	opts.env = n_env ? env : NULL;
	opts.secrets = secrets;
	opts.n_secrets = n_secrets;
	if (json) {
		opts.stdout_fd = opts.stderr_fd = -1;
		opts.stdin_fd = -1;
	}
	if (sb_cli_root(&root, cli) != 0) {
		rc = SB_EXIT_EXEC_FAILED;
		goto out;
	}
	if (sb_sandbox_exec(&res, root, name, &opts, &err) < 0) {
		rc = exec_fail(&err);
		goto out;
	}
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
out:
	/* a refused secret's copy is held too (past n_secrets) */
	for (size_t i = 0; i <= n_secrets && i < MAX_SECRETS; i++)
		if (held[i]) {
			explicit_bzero(held[i], strlen(held[i]));
			free(held[i]);
		}
	return rc;
}

const struct sb_cli_command sb_cmd_exec = {
	.name = "exec",
	.synopsis = "NAME [--cwd D] [--user U] [--env K=V]... [--secret-env K[=V]]... [--as agent|human] [--timeout S] [--json] -- CMD [ARG]...",
	.summary = N_("run a command in a sandbox; its exit status is passed through"),
	.help = N_("  --cwd D        working directory inside (default: the image's WorkingDir, else\n"
		   "                 /workspace)\n"
		   "  --user U       run as U: NAME, UID, NAME:GROUP or UID:GID of the sandbox's own\n"
		   "                 /etc/passwd and /etc/group (default: the image's User, else root)\n"
		   "  --env K=V      environment variable over the image's Env (repeatable)\n"
		   "  --secret-env K=V  environment variable kept out of the timeline and every file:\n"
		   "                 recorded by name, its value shown as [secret K] (repeatable;\n"
		   "                 K alone takes the value of $K; at least 3 bytes)\n"
		   "  --as WHO       who runs it, for the timeline: agent (default) or human\n"
		   "  --timeout S    kill the command after S seconds\n"
		   "  --json         print {exit_code, stdout, stderr, duration_ms} as JSON\n"
		   "Exit status: the command's, or 125 when sandbench could not run it.\n"),
	.run = exec_run,
};
