#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
	sb_proc_interrupt(1);
}

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };

static int run_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "rm", no_argument, NULL, 'r' },
		{ "image", required_argument, NULL, 'i' },
		{ "network", required_argument, NULL, 'n' },
		{ "allow", required_argument, NULL, 'A' },
		{ "deny-all", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_sandbox_spec spec = { .kind = SB_KIND_TEMPORARY, .network = -1 };
	struct sb_exec_opts opts = { .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2 };
	struct sb_exec_result res = { 0 };
	struct sb_cli_egress ce = { .n = 0 };
	struct sb_egress egress;
	struct sb_root *root;
	struct sb_error err, e2;
	unsigned char rnd[4];
	char name[32];
	int opt, rc, remove = 0;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			remove = 1;
			break;
		case 'i':
			spec.image = optarg;
			break;
		case 'n':
			spec.network = !strcmp(optarg, "on") ? 1 : !strcmp(optarg, "off") ? 0 : -1;
			if (spec.network < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_run, _("--network takes on or off"));
			break;
		case 'A':
			if (sb_cli_egress_allow(&ce, optarg) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_run, _("too many --allow rules"));
			break;
		case 'D':
			ce.deny_all = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_run, _("invalid option"));
		}
	}
	if (!spec.image || optind >= argc)
		return sb_cli_usage_error(NULL, &sb_cmd_run, _("expected --image REF and a command"));
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return SB_EXIT_EXEC_FAILED;
	snprintf(name, sizeof(name), "run-%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
	spec.name = name;
	opts.argv = argv + optind;
	if (ce.n && ce.deny_all)
		return sb_cli_usage_error(NULL, &sb_cmd_run, _("--allow and --deny-all exclude each other"));
	if (sb_cli_root(&root, cli) != 0)
		return SB_EXIT_EXEC_FAILED;
	if (sb_cli_egress_build(&egress, root, &ce, &err) < 0)
		return (sb_cli_fail(&err), SB_EXIT_EXEC_FAILED);
	if (egress.mode != SB_EGRESS_DEFAULT && spec.network < 0)
		spec.network = 1;
	spec.egress = &egress;
	/* Ctrl-C ends the command, never the clean-up */
	struct sigaction sa = { .sa_handler = on_signal };
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaction(caught[i], &sa, NULL);
	int created = sb_sandbox_create(NULL, root, &spec, &err) == 0;
	if (!created || sb_sandbox_exec(&res, root, name, &opts, &err) < 0)
		rc = got_signal ? 128 + got_signal : (sb_cli_fail(&err), SB_EXIT_EXEC_FAILED);
	else
		rc = got_signal ? 128 + got_signal : res.exit_code;
	sb_exec_result_clear(&res);
	sb_egress_clear(&egress);
	sb_proc_interrupt(0);
	/* an interrupted create may have left a broken sandbox: it is ours to remove */
	if ((remove || !created) && sb_sandbox_remove(root, name, SB_REMOVE_FORCE, &e2) < 0 &&
	    e2.code != SB_ERR_NOTFOUND)
		sb_cli_fail(&e2);
	else if (!remove && created)
		fprintf(stderr, _("sandbench: sandbox '%s' kept (remove it with 'sandbench rm %s')\n"), name, name);
	sb_proc_interrupt(0);
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaction(caught[i], &sa, NULL);
	return rc;
}

const struct sb_cli_command sb_cmd_run = {
	.name = "run",
	.synopsis = "[--rm] --image REF [--network on|off] [--allow RULE]... [--deny-all] -- CMD [ARG]...",
	.summary = N_("run one command in a new temporary sandbox"),
	.help = N_("  --rm             remove the sandbox afterwards (also on Ctrl-C)\n"
		   "  --image REF      the image\n"
		   "  --network on|off network access (default off)\n"
		   "  --allow RULE     network on, reaching only ADDR[/PREFIX][:PORT], HOST[:PORT],\n"
		   "                   sandbox:NAME[:PORT] or @PROFILE (repeatable)\n"
		   "  --deny-all       network on without any egress\n"),
	.run = run_run,
};
