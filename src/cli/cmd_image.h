/* The `image` command group: one subcommand per file cmd_image_NAME.c. */
#ifndef SB_CMD_IMAGE_H
#define SB_CMD_IMAGE_H

#include <jansson.h>

#include "cli.h"
#include "image/store.h"

extern const struct sb_cli_command sb_cmd_image_bootstrap;
extern const struct sb_cli_command sb_cmd_image_import;
extern const struct sb_cli_command sb_cmd_image_inspect;
extern const struct sb_cli_command sb_cmd_image_ls;
extern const struct sb_cli_command sb_cmd_image_prune;
extern const struct sb_cli_command sb_cmd_image_pull;
extern const struct sb_cli_command sb_cmd_image_rm;

/* An image as JSON, the same for ls, inspect and results. */
json_t *sb_cli_image_json(const struct sb_image_info *info);

#endif
