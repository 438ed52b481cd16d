/* The workbench suite's fixture (tests/tui/test-tui.c), shared by the files
 * of the suite: a scratch root with a busybox image, and helpers that run the
 * CLI on it and the workbench on a pty. */
#ifndef TUI_TUITEST_H
#define TUI_TUITEST_H

#include "sandbox/sandbox.h"

#define WAIT 30000   /* deadline of one screen condition (runsc on 2 busy cores) */

struct tui;

extern char *root_dir;
extern struct tui *running;   /* ended by the teardown when a test failed half-way */
extern char image[SB_DIGEST_STR_LEN];

/* sandbench ARGS... on the root: asserts exit status 0 (unused trailing ones NULL). */
void cli_ok(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f);
int cli_status(const char *a, const char *b);
/* The state word of inspect --json (malloc'd), NULL if none. */
char *cli_state(const char *name);
/* The workbench at 40x120 on the root, once it has drawn. */
struct tui *open_tui(const char *extra, const char *const *env);
void quit(struct tui *t);
/* tu_wait_for condition: no warm-pool refill runs on the root (a struct sb_root *) */
int tui_refill_ended(void *root);

#endif
