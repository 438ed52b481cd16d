#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "i18n.h"
#include "sandbox.h"

static int touch_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = { { NULL, 0, NULL, 0 } };
	struct sb_root *root;
	struct sb_error err;
	int opt, rc;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
		return sb_cli_usage_error(NULL, &sb_cmd_touch, _("invalid option"));
	if (optind + 1 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_touch, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_touch(root, argv[optind], &err) < 0)
		return sb_cli_fail(&err);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_touch = {
	.name = "touch",
	.synopsis = "NAME",
	.summary = N_("mark a sandbox as active now (resets its idle countdown)"),
	.run = touch_run,
};
