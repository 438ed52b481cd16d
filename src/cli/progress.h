/* Progress line on the terminal for long operations (image import, pull):
 * phase, layer i/n, bytes and rate, redrawn in place on stderr. Silent with
 * --quiet or when stderr is not a terminal. */
#ifndef SB_CLI_PROGRESS_H
#define SB_CLI_PROGRESS_H

#include <time.h>

/* the library's struct sb_progress (a plain "progress.h" would find this file) */
#include "base/progress.h"

struct sb_cli_progress {
	struct sb_progress base;   /* hand &p->base to the library */
	int enabled;
	int drawn;                 /* a line is on screen */
	char item[96];             /* item the rate refers to */
	int phase;
	struct timespec item_start, last_draw;
};

void sb_cli_progress_init(struct sb_cli_progress *p, int quiet);
/* Clears the line; call before printing the result. */
void sb_cli_progress_end(struct sb_cli_progress *p);

#endif
