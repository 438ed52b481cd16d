/* Seams for tests. The shipped program leaves them NULL: only test programs
 * and tests/sandbench-test (the CLI linked with tests/hooks.c) set them, so no
 * environment variable moves a user's clock or host identity. */
#ifndef SB_HOOKS_H
#define SB_HOOKS_H

struct sb_hooks {
	/* unix seconds in place of the wall clock; 0: the wall clock */
	long long (*now)(void);
	/* the host's boot id in place of the kernel's; NULL: the kernel's */
	const char *(*boot_id)(void);
};

extern struct sb_hooks sb_hooks;

#endif
