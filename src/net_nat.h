/* Outbound NAT and filtering for sandbox bridges: one nftables table,
 * "inet sandbench", shared by every state root on the host. Bridges and
 * sandbox addresses are elements of two sets; the rules never change, so a
 * sandbox is added or removed by one set element. Sandboxes reach the outside
 * through masquerading; nothing reaches them unasked, and they cannot open
 * connections to the host itself. Callers hold the host network lock. */
#ifndef SB_NET_NAT_H
#define SB_NET_NAT_H

#include <stdint.h>

#include "error.h"

#define SB_NAT_TABLE "sandbench"

/* Creates or refreshes the table (atomically, keeping set elements), adds
 * bridge to it and turns on net.ipv4.ip_forward. */
int sb_nat_ensure(const char *bridge, struct sb_error *err);
/* Adds or removes one sandbox address (host byte order); removing a missing one is fine. */
int sb_nat_add(uint32_t addr, struct sb_error *err);
int sb_nat_remove(uint32_t addr, struct sb_error *err);
/* Removes bridge from the table; deletes the table when no bridge is left. */
int sb_nat_remove_bridge(const char *bridge, struct sb_error *err);

#endif
