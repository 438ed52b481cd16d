#include "config.h"

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int restore_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_run_on_sandbox(cli, &sb_cmd_restore, argc, argv, sb_sandbox_restore);
}

const struct sb_cli_command sb_cmd_restore = {
	.name = "restore",
	.synopsis = "NAME",
	.summary = N_("wake a stopped sandbox from its checkpoint (or cold-start its kept disk)"),
	.run = restore_run,
};
