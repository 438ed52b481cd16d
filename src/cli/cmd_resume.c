#include "config.h"

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int resume_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_run_on_sandbox(cli, &sb_cmd_resume, argc, argv, sb_sandbox_resume);
}

const struct sb_cli_command sb_cmd_resume = {
	.name = "resume",
	.synopsis = "NAME",
	.summary = N_("let a paused sandbox carry on (commands that need it running do so by themselves)"),
	.run = resume_run,
};
