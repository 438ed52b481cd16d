/* Shared by the sandbox commands: JSON and text forms of a sandbox. */
#ifndef SB_CLI_SANDBOX_H
#define SB_CLI_SANDBOX_H

#include <jansson.h>

#include "sandbox.h"

/* The --json form of a sandbox (ls, inspect, create). */
json_t *sb_cli_sandbox_json(const struct sb_sandbox_info *info);
/* "on"/"off" */
const char *sb_cli_onoff(int on);

#endif
