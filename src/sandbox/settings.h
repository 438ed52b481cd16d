/* Settings: data/sandbench.conf (installed defaults) overridden by ROOT/config.
 * Format: "key = value" lines, '#' comments. Unknown keys are an error naming
 * the file and line, so that typos do not silently change behaviour. */
#ifndef SB_SETTINGS_H
#define SB_SETTINGS_H

#include "base/error.h"
#include "sandbox/record.h"
#include "base/root.h"

struct sb_settings {
	enum sb_sandbox_kind kind;               /* default kind */
	long long idle_timeout;                  /* seconds */
	enum sb_expiry_action expiry_action;
	long long expiry_stop_after;             /* pause,stop=D: D in seconds; 0: none */
	int network;                             /* 0 off, 1 on */
	char network_bridge[16];                 /* host bridge of network-on sandboxes ("": the default) */
	char network_subnet[24];                 /* their IPv4 subnet ("": the default) */
	int network_private;                     /* the default egress policy lets private ranges through */
	/* "NAME RULE..." lines of the allow_profile settings (--allow @NAME), '\n'-separated */
	char allow_profiles[2048];
	char dns_upstream[16];                   /* the filtering resolver's nameserver ("": the host's) */
	unsigned long long memory;               /* bytes, 0: no limit */
	double cpus;                             /* 0: no limit */
	int runsc_timeout_ms;                     /* deadline of runsc lifecycle calls */
	size_t timeline_size;                    /* bytes of timeline.jsonl before it is rotated */
	size_t timeline_output;                  /* bytes of an exec's stdout and of its stderr kept in its entry */
	long long owner_gone_after;              /* seconds without activity after which an owner is gone */
};

/* Built-in defaults, then the installed file (if present), then ROOT/config. */
int sb_settings_load(struct sb_settings *out, struct sb_root *root, struct sb_error *err);
#endif
