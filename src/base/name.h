/* Names of what a state root holds by name (sandboxes): each becomes a path
 * component and part of host interface and namespace names, so the rule keeps
 * it one safe component of a bounded length. */
#ifndef SB_NAME_H
#define SB_NAME_H

#include "base/error.h"

#define SB_NAME_MAX 63

/* [A-Za-z0-9_.-], 1 to SB_NAME_MAX bytes, not starting with '.' or '-'.
 * SB_ERR_INVALID otherwise, with a message naming what the name is (what, e.g.
 * _("sandbox name")) and saying what is allowed. */
int sb_name_check(const char *name, const char *what, struct sb_error *err);

#endif
