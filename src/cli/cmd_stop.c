#include "config.h"

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int stop_by_user(struct sb_root *root, const char *name, struct sb_error *err)
{
	return sb_sandbox_stop(root, name, NULL, err);
}

static int stop_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_run_on_sandbox(cli, &sb_cmd_stop, argc, argv, stop_by_user);
}

const struct sb_cli_command sb_cmd_stop = {
	.name = "stop",
	.synopsis = "NAME",
	.summary = N_("checkpoint a sandbox to disk (memory and processes kept) and stop it"),
	.run = stop_run,
};
