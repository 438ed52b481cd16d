/* gzip layers are inflated in a thread of their own while the extraction
 * reads the plain tar from a socket: inflating is the larger half of the work
 * and runs on another core beside the file writes. */
#ifndef SB_GUNZIP_H
#define SB_GUNZIP_H

#include "error.h"

struct sb_gunzip;

/* Starts inflating gz_fd (read from its current offset; the caller keeps it
 * open until sb_gunzip_finish); *tar_fd receives the plain stream, to be read
 * to its end or closed by the caller. */
int sb_gunzip_start(struct sb_gunzip **out, int *tar_fd, int gz_fd, const char *what, struct sb_error *err);
/* Compressed bytes consumed so far (for progress). */
unsigned long long sb_gunzip_consumed(struct sb_gunzip *g);
/* Waits for the thread (closing *tar_fd first makes it stop early) and frees g;
 * SB_ERR_FORMAT when the gzip stream was corrupt or truncated. NULL is fine. */
int sb_gunzip_finish(struct sb_gunzip *g, struct sb_error *err);

#endif
