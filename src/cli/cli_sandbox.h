/* Shared by the sandbox commands: JSON and text forms of a sandbox. */
#ifndef SB_CLI_SANDBOX_H
#define SB_CLI_SANDBOX_H

#include <jansson.h>

#include "cli.h"
#include "sandbox/sandbox.h"

/* The --json form of a sandbox (ls, inspect, create). */
json_t *sb_cli_sandbox_json(const struct sb_sandbox_info *info);
/* "on"/"off" */
const char *sb_cli_onoff(int on);
/* "sandbench/default:latest@d0549d9360e7": the reference without the default
 * registry, then the first 12 hex digits of the pinned digest. */
void sb_cli_short_image(char *buf, size_t size, const char *ref, const char *digest);
/* Runs a command that takes exactly one sandbox name and no options (stop,
 * restore, touch): parses, opens the root, applies op, reports. */
int sb_cli_run_on_sandbox(struct sb_cli *cli, const struct sb_cli_command *cmd, int argc, char **argv,
			  int (*op)(struct sb_root *root, const char *name, struct sb_error *err));

#endif
