/* Change counters of a state root, so that a front end can tell "something
 * changed" without looking at the files behind a listing. ROOT/generation
 * holds one 64-bit counter per kind of state; the module that writes that
 * state bumps its counter after each change is on disk (a record written or
 * removed, activity touched, the image index saved), whatever process made it.
 * A reader compares the counters with those it saw at its last listing: one
 * pread, however many sandboxes there are. Where the kernel has inotify, the
 * reader also gets a descriptor that wakes a poll loop when a counter moves. */
#ifndef SB_GENERATION_H
#define SB_GENERATION_H

#include "base/error.h"
#include "base/root.h"

enum sb_generation_slot {
	SB_GEN_SANDBOXES,        /* sandbox records, their directories and activity (src/sandbox/) */
	SB_GEN_IMAGES,           /* the image index (src/image/) */
	SB_GEN_SLOTS
};

/* Counts one change of slot. Call it after the change is visible. */
int sb_generation_bump(struct sb_root *root, enum sb_generation_slot slot, struct sb_error *err);

struct sb_generation;
/* A reader's handle on the counters of root. */
int sb_generation_open(struct sb_generation **out, struct sb_root *root, struct sb_error *err);
void sb_generation_close(struct sb_generation *g);
/* Readable when a counter may have moved (inotify on ROOT/generation); -1
 * when there is none (then read the counters on a timer). */
int sb_generation_fd(const struct sb_generation *g);
/* The counters now (all 0 until the first change); drains the descriptor. */
int sb_generation_read(unsigned long long out[SB_GEN_SLOTS], struct sb_generation *g, struct sb_error *err);

#endif
