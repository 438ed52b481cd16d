/* Seams for tests. The shipped program leaves them NULL: only test programs
 * and tests/sandbench-test (the CLI linked with tests/hooks.c) set them, so no
 * environment variable moves a user's clock or host identity, or injects a
 * fault. */
#ifndef SB_HOOKS_H
#define SB_HOOKS_H

/* What a fault point is about to do: run a program (runsc, ip, nft, the
 * keeper, a mount), write state (a file, a directory), or a step that can
 * only be interrupted (a removal). */
enum sb_fault_kind { SB_FAULT_RUN, SB_FAULT_WRITE, SB_FAULT_STEP };

struct sb_hooks {
	/* unix seconds in place of the wall clock; 0: the wall clock */
	long long (*now)(void);
	/* the host's boot id in place of the kernel's; NULL: the kernel's */
	const char *(*boot_id)(void);
	/* called at every fault point: 0 to go on, or the errno the point fails
	 * with (a test build may also end the process there) */
	int (*fault)(enum sb_fault_kind kind, const char *what);
	/* a backend's capabilities (enum sb_backend_cap) as sandbench sees them:
	 * a test takes some away to try the paths of a lesser backend */
	unsigned (*backend_caps)(unsigned caps);
};

extern struct sb_hooks sb_hooks;

/* A fault point: 0, or -1 with errno set to the injected error. */
int sb_fault_point(enum sb_fault_kind kind, const char *what);

#endif
