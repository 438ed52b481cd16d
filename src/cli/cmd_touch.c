#include "config.h"

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int touch_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_run_on_sandbox(cli, &sb_cmd_touch, argc, argv, sb_sandbox_touch);
}

const struct sb_cli_command sb_cmd_touch = {
	.name = "touch",
	.synopsis = "NAME",
	.summary = N_("mark a sandbox as active now (resets its idle countdown)"),
	.run = touch_run,
};
