/* libarchive, loaded on first use (see dynlib.h): only pulls, imports and
 * image builds need it. archive_dl.c defines the archive_* functions
 * sandbench calls and forwards them. */
#ifndef SB_ARCHIVE_DL_H
#define SB_ARCHIVE_DL_H

#include "base/error.h"

/* Loads libarchive now; SB_ERR_PREREQ naming the package when it is missing. */
int sb_archive_load(struct sb_error *err);

#endif
