/* Shared by the sandbox commands: JSON and text forms of a sandbox. */
#ifndef SB_CLI_SANDBOX_H
#define SB_CLI_SANDBOX_H

#include <jansson.h>

#include "cli.h"
#include "sandbox/sandbox.h"

/* "on"/"off" */
const char *sb_cli_onoff(int on);
/* "localhost/sandbench/default:latest@d0549d9360e7": the reference without the default
 * registry, then the first 12 hex digits of the pinned digest. */
void sb_cli_short_image(char *buf, size_t size, const char *ref, const char *digest);
/* --allow and --deny-all as create, run and network take them. */
#define SB_CLI_ALLOW_MAX 256
struct sb_cli_egress {
	const char *allow[SB_CLI_ALLOW_MAX];
	size_t n;
	int deny_all;
};
/* Takes one --allow item; -1 when there are too many. */
int sb_cli_egress_allow(struct sb_cli_egress *e, const char *item);
/* The policy they give (checked: a bad rule is SB_ERR_INVALID naming it). */
int sb_cli_egress_build(struct sb_egress *out, struct sb_root *root, const struct sb_cli_egress *e,
			struct sb_error *err);
/* Runs a command that takes exactly one sandbox name and no options (stop,
 * restore, touch): parses, opens the root, applies op, reports. */
int sb_cli_run_on_sandbox(struct sb_cli *cli, const struct sb_cli_command *cmd, int argc, char **argv,
			  int (*op)(struct sb_root *root, const char *name, struct sb_error *err));

#endif
