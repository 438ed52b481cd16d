#include "config.h"

#include <getopt.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"

static const struct sb_cli_command *const image_commands[] = {
	&sb_cmd_image_bootstrap,
	&sb_cmd_image_build,
	&sb_cmd_image_import,
	&sb_cmd_image_inspect,
	&sb_cmd_image_ls,
	&sb_cmd_image_prune,
	&sb_cmd_image_pull,
	&sb_cmd_image_push,
	&sb_cmd_image_rm,
	NULL,
};

int sb_cli_registry_option(int opt, struct sb_registry_opts *opts, int *quiet, int *json)
{
	switch (opt) {
	case 'c':
		opts->creds_file = optarg;
		return 1;
	case 'i':
		opts->insecure = 1;
		return 1;
	case 'a':
		opts->ca_file = optarg;
		return 1;
	case 'q':
		*quiet = 1;
		return 1;
	case 'j':
		*json = 1;
		return 1;
	default:
		return 0;
	}
}

static int image_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_dispatch(cli, "image", image_commands, argc - 1, argv + 1);
}

const struct sb_cli_command sb_cmd_image = {
	.name = "image",
	.synopsis = "COMMAND [ARGS]",
	.summary = N_("manage images: build, pull, push, import, bootstrap, ls, inspect, rm, prune"),
	.run = image_run,
	.group = 1,
};
