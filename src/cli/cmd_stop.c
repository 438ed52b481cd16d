#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"
#include "session/session.h"

/* Stop ends the sandbox's sessions first (a live pty would spoil the
 * checkpoint); it says which. Their logs stay. */
static int stop_by_user(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_session_info *list = NULL;
	size_t n = 0;

	sb_session_list(&list, &n, root, name, NULL);
	int rc = sb_sandbox_stop(root, name, NULL, err);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (list[i].state == SB_SESSION_RUNNING)
			fprintf(stderr, _("sandbench: ended session '%s' of sandbox '%s'\n"), list[i].id, name);
	sb_session_list_free(list, n);
	return rc;
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
