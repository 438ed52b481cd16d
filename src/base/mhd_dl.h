/* libmicrohttpd, loaded on first use (see dynlib.h): only the MCP server's
 * HTTP transport needs it. mhd_dl.c defines the few MHD_* functions sandbench
 * calls and forwards them. */
#ifndef SB_MHD_DL_H
#define SB_MHD_DL_H

#include "base/error.h"

/* Loads libmicrohttpd now; SB_ERR_PREREQ naming the package when it is missing. */
int sb_mhd_load(struct sb_error *err);

#endif
