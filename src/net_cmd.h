/* Running the host's networking tools (ip, nft) for the network module:
 * argv only, never a shell, with a deadline. */
#ifndef SB_NET_CMD_H
#define SB_NET_CMD_H

#include "error.h"

/* Runs argv; input (may be NULL) is given on stdin. A non-zero exit is
 * SB_ERR_IO naming the command and its last stderr line. out (may be NULL)
 * receives stdout, malloc'd. */
int sb_net_cmd(char **out, const char *const *argv, const char *input, struct sb_error *err);

#endif
