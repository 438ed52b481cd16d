/* libcurl is loaded on first use, not at program start: linking it costs every
 * sandbench process ~5 ms of start-up (its dependencies and their
 * constructors), while only pulls need it. curl_dl.c defines the few curl_*
 * functions sandbench calls and forwards them to the library. */
#ifndef SB_CURL_DL_H
#define SB_CURL_DL_H

#include "error.h"

/* Loads libcurl now; SB_ERR_PREREQ naming the package when it is missing. */
int sb_curl_load(struct sb_error *err);

#endif
