#include "config.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

/* How often --follow looks again: the log is a file in the guest, which the
 * host reads in-root; there is nothing to wait on that a guest write wakes. */
#define FOLLOW_POLL_MS 250

static int logs_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_root *root;
	struct sb_error err;
	long long since_ms = 0;
	unsigned long long pos = 0;
	int opt, rc, follow = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "f", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			follow = 1;
			break;
		case 's':
			if (sb_timeline_parse_since(&since_ms, optarg, sb_clock_now_ms(), &err) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_logs, "%s", err.msg);
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_logs, _("invalid option"));
		}
	}
	if (optind != argc - 1)
		return sb_cli_usage_error(NULL, &sb_cmd_logs, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	do {
		if (sb_sandbox_logs(&pos, STDOUT_FILENO, root, argv[optind], since_ms / 1000, &err) < 0)
			return sb_cli_fail(&err);
		(void)fflush(stdout); /* a reader that left ends the command by SIGPIPE */
	} while (follow && poll(NULL, 0, FOLLOW_POLL_MS) >= 0);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_logs = {
	.name = "logs",
	.synopsis = "NAME [--follow] [--since T]",
	.summary = N_("show the output of a sandbox's service"),
	.help = N_("  --follow, -f   keep printing what the service writes\n"
		   "  --since T      only what was written since T (90s, 10m, a time, unix seconds)\n"),
	.run = logs_run,
};
