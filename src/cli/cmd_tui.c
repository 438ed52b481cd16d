#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "base/i18n.h"
#include "ui.h"

static int tui_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "readonly", no_argument, NULL, 'R' },
		{ "no-reap", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct ui_options opts = { .root_path = cli->root_path };
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'R')
			opts.readonly = 1;
		else if (opt == 'N')
			opts.no_reap = 1;
		else
			return sb_cli_usage_error(NULL, &sb_cmd_tui, _("invalid option"));
	}
	if (optind < argc)
		return sb_cli_usage_error(NULL, &sb_cmd_tui, _("unexpected argument '%s'"), argv[optind]);
	return ui_run(&opts);
}

const struct sb_cli_command sb_cmd_tui = {
	.name = "tui",
	.synopsis = "[--readonly] [--no-reap]",
	.summary = N_("open the workbench (also: sandbench with no command, on a terminal)"),
	.help = N_("  --readonly   look, never change: every action that would change something is refused\n"
		   "  --no-reap    do not run the reaper while open (review what expired in the cleanup planner)\n"),
	.run = tui_run,
};
