#include "config.h"

#include <errno.h>

#include "base/hooks.h"

struct sb_hooks sb_hooks;

int sb_fault_point(enum sb_fault_kind kind, const char *what)
{
	int e = sb_hooks.fault ? sb_hooks.fault(kind, what) : 0;

	if (!e)
		return 0;
	errno = e;
	return -1;
}
