#include "config.h"

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int pause_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_run_on_sandbox(cli, &sb_cmd_pause, argc, argv, sb_sandbox_pause);
}

const struct sb_cli_command sb_cmd_pause = {
	.name = "pause",
	.synopsis = "NAME",
	.summary = N_("freeze a running sandbox: processes stop, memory stays in RAM (no checkpoint)"),
	.run = pause_run,
};
