/* libcurl, loaded on first use (see dynlib.h): only pulls need it. curl_dl.c
 * defines the few curl_* functions sandbench calls and forwards them. */
#ifndef SB_CURL_DL_H
#define SB_CURL_DL_H

#include "base/error.h"

/* Loads libcurl now; SB_ERR_PREREQ naming the package when it is missing. */
int sb_curl_load(struct sb_error *err);

#endif
