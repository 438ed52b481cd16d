/* Helpers of the escape suites (test-escape*.c): a host folder the guest aims
 * at (the victim), attempts run inside a sandbox that must all fail, and the
 * host's view compared before and after. */
#ifndef SB_ESCAPE_H
#define SB_ESCAPE_H

#include <stddef.h>

#include "sbfixture.h"

struct esc {
	const struct sbf *f;
	char *victim;           /* holds secret ("HOST SECRET") and sub/inner */
	char sfx[8];            /* per-test random suffix */
	char *dirs[16];         /* scratch folders, removed at teardown */
	size_t n_dirs;
};

void esc_setup(struct esc *e, const struct sbf *f);
void esc_teardown(struct esc *e);
/* tmpl with @V@ (the victim), @R@ (the state root) and @S@ (the suffix) filled in (malloc'd). */
char *esc_expand(const struct esc *e, const char *tmpl);
/* A scratch host folder (removed at teardown). */
char *esc_share(struct esc *e, const char *tag);
/* Every name, type, mode, size, link count, owner and time under the victim,
 * and the sum of its files' contents (malloc'd). */
char *esc_victim_sum(const struct esc *e);
/* The victim is as before (what names the step). */
void esc_assert_victim(const struct esc *e, const char *before, const char *what);
/* Runs each attempt of the NULL-terminated list (templates for esc_expand) in
 * its own subshell in sandbox name, all in one exec; fails the test naming
 * every attempt that succeeded. */
void esc_all_fail(const struct esc *e, const char *name, const char *const *tries);
/* The O_PATH attempts on path inside sandbox name, by the static probe
 * (tests/escape-probe.c, built here): each must be refused. */
void esc_probe(const struct esc *e, const char *name, const char *path);
/* What the workbench's diff view does to copy an entry out: a file, else the
 * tree, with its default options, into a new folder below host_dir. */
void esc_view_copy(const struct esc *e, const char *name, const char *path, const char *host_dir);

/* Creates a permanent busybox sandbox; the extra create arguments end in NULL. */
#define ESC_MAKE(e, name, ...)                                                                              \
	sbf_ok(tu_sandbench((e)->f->dir, NULL, "create", name, "--image", SBF_IMAGE, "--permanent", __VA_ARGS__), \
	       "create " name)

#endif
