#include "config.h"

#include <getopt.h>

#include "cli.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int rm_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_root *root;
	struct sb_error err;
	unsigned flags = 0;
	int opt, rc, status = SB_EXIT_OK;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "f", options, NULL)) != -1) {
		if (opt != 'f')
			return sb_cli_usage_error(NULL, &sb_cmd_rm, _("invalid option"));
		flags |= SB_REMOVE_FORCE;
	}
	if (optind >= argc)
		return sb_cli_usage_error(NULL, &sb_cmd_rm, _("expected at least one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	for (int i = optind; i < argc; i++)
		if (sb_sandbox_remove(root, argv[i], flags, &err) < 0)
			status = sb_cli_fail(&err);
	return status;
}

const struct sb_cli_command sb_cmd_rm = {
	.name = "rm",
	.synopsis = "[--force] NAME...",
	.summary = N_("remove sandboxes with everything they have, workspace included"),
	.help = N_("  -f, --force    also remove broken or half-created sandboxes\n"),
	.run = rm_run,
};
