/* runsc's own network stack (--network=sandbox) on kernels where this runsc
 * mistakes every network namespace for the root one (it tests for
 * /proc/sys/net/core/rmem_default, which newer kernels have in every netns;
 * gVisor issue 10704) and refuses with "cannot run with network enabled in
 * root network namespace". The workaround runs the runsc CLI in a private
 * mount namespace with a small tmpfs over /proc/sys carrying only the values
 * runsc reads. It is used only where a probe showed it is needed. */
#ifndef SB_NET_NETSTACK_H
#define SB_NET_NETSTACK_H

#include "error.h"
#include "root.h"

/* The refusal this runsc prints; recognised in probes. */
#define SB_NETSTACK_ROOTNS_ERROR "cannot run with network enabled in root network namespace"

/* pre_exec hook for struct sb_proc_opts; arg is the sandbox's netns path
 * (const char *). Refuses (non-zero) unless that path is a network namespace
 * other than the caller's own, because with /proc/sys hidden runsc could no
 * longer tell and would take over the host's interfaces. Only system calls:
 * it runs between fork and exec. */
int sb_netstack_pre_exec(void *arg);

/* *needed: whether runsc must run through sb_netstack_pre_exec for
 * --network=sandbox here. Answered from ROOT/network/netstack.json when it
 * was probed for this runsc binary and kernel; otherwise probes by starting a
 * throw-away sandbox without the workaround and, when runsc refuses with the
 * error above, with it (about 0.3 s, once). SB_ERR_PREREQ when neither works. */
int sb_netstack_needed(int *needed, struct sb_root *root, struct sb_error *err);

#endif
