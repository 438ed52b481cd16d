#include "config.h"

#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/log.h"
#include "sandbox/sandbox.h"

/* Every top-level command; groups (image) dispatch again from their own file. */
static const struct sb_cli_command *const commands[] = {
	&sb_cmd_ls,
	&sb_cmd_inspect,
	&sb_cmd_create,
	&sb_cmd_exec,
	&sb_cmd_shell,
	&sb_cmd_session,
	&sb_cmd_commit,
	&sb_cmd_fork,
	&sb_cmd_cp,
	&sb_cmd_diff,
	&sb_cmd_run,
	&sb_cmd_stop,
	&sb_cmd_restore,
	&sb_cmd_pause,
	&sb_cmd_resume,
	&sb_cmd_rm,
	&sb_cmd_touch,
	&sb_cmd_timeline,
	&sb_cmd_logs,
	&sb_cmd_network,
	&sb_cmd_pool,
	&sb_cmd_reap,
	&sb_cmd_gc,
	&sb_cmd_cleanup,
	&sb_cmd_owner,
	&sb_cmd_doctor,
	&sb_cmd_image,
	&sb_cmd_mcp,
	&sb_cmd_tui,
	NULL,
};

static const struct option global_options[] = {
	{ "root", required_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void setup_locale(void)
{
	const char *dir = getenv("SANDBENCH_LOCALEDIR");

	setlocale(LC_ALL, "");
	bindtextdomain(PACKAGE, dir && *dir ? dir : LOCALEDIR);
	textdomain(PACKAGE);
}

int main(int argc, char **argv)
{
	struct sb_cli cli = { 0 };
	int opt, status;

	setup_locale();
	sb_log_from_env();
	/* runsc leaves orphans; reaping them promptly makes runsc delete fast */
	sb_sandbox_process_init(NULL);
	/* '+': stop at the first non-option, the command's own options follow it */
	while ((opt = getopt_long(argc, argv, "+r:vVh", global_options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			cli.root_path = optarg;
			break;
		case 'v':
			cli.verbose = 1;
			sb_log_set(stderr);
			break;
		case 'V':
			printf("sandbench %s\n", PACKAGE_VERSION);
			return SB_EXIT_OK;
		case 'h':
			return sb_cli_dispatch(&cli, NULL, commands, 1, (char *[]){ "--help", NULL });
		default:
			return SB_EXIT_USAGE;
		}
	}
	/* no command on a terminal: the workbench */
	if (optind == argc && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		status = sb_cli_dispatch(&cli, NULL, commands, 1, (char *[]){ "tui", NULL });
	else
		status = sb_cli_dispatch(&cli, NULL, commands, argc - optind, argv + optind);
	sb_root_close(cli.root);
	return status;
}
