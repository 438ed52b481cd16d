/* The `image` command group: one subcommand per file cmd_image_NAME.c. */
#ifndef SB_CMD_IMAGE_H
#define SB_CMD_IMAGE_H

#include <jansson.h>

#include "cli.h"
#include "image/store.h"
#include "registry/registry.h"

extern const struct sb_cli_command sb_cmd_image_bootstrap;
extern const struct sb_cli_command sb_cmd_image_import;
extern const struct sb_cli_command sb_cmd_image_inspect;
extern const struct sb_cli_command sb_cmd_image_ls;
extern const struct sb_cli_command sb_cmd_image_prune;
extern const struct sb_cli_command sb_cmd_image_pull;
extern const struct sb_cli_command sb_cmd_image_build;
extern const struct sb_cli_command sb_cmd_image_push;
extern const struct sb_cli_command sb_cmd_image_rm;

/* The getopt_long entries pull and push share (--creds, --insecure,
 * --ca-file, --quiet/-q, --json), for an option table. */
#define SB_CLI_REGISTRY_OPTIONS                                                                  \
	{ "creds", required_argument, NULL, 'c' }, { "insecure", no_argument, NULL, 'i' },       \
		{ "ca-file", required_argument, NULL, 'a' }, { "quiet", no_argument, NULL, 'q' }, \
		{ "json", no_argument, NULL, 'j' }
/* Applies one of them (optarg for its value); 0 when opt is not one. */
int sb_cli_registry_option(int opt, struct sb_registry_opts *opts, int *quiet, int *json);

#endif
