/* The session subcommands (agent sessions), one table in cmd_session.c. */
#ifndef SB_CMD_SESSION_H
#define SB_CMD_SESSION_H

#include "cli.h"
#include "session/session.h"

extern const struct sb_cli_command sb_cmd_session_start;
extern const struct sb_cli_command sb_cmd_session_send;
extern const struct sb_cli_command sb_cmd_session_read;
extern const struct sb_cli_command sb_cmd_session_ls;
extern const struct sb_cli_command sb_cmd_session_kill;
extern const struct sb_cli_command sb_cmd_session_attach;

/* Seconds (a decimal) to milliseconds: 0 and *ms, or -1. */
int sb_cli_seconds_ms(int *ms, const char *text);
/* The screen a terminal of rows x cols shows after data (libvterm): text
 * lines, trailing blanks cut. malloc'd. */
char *sb_cli_session_screen(const char *data, size_t len, unsigned short rows, unsigned short cols);
/* send refused while a human has control: its own exit status. */
#define SB_EXIT_CONTROLLED 11

#endif
