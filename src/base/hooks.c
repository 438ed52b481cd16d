#include "config.h"

#include "base/hooks.h"

struct sb_hooks sb_hooks;
