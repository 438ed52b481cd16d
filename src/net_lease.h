/* Sandbox addresses: the configured IPv4 subnet and one lease file per
 * address under ROOT/network/leases/<address>, holding the sandbox name.
 * A lease is claimed with link(2), so two claims of one address cannot both
 * succeed even without the root lock. */
#ifndef SB_NET_LEASE_H
#define SB_NET_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"
#include "root.h"

struct sb_subnet {
	uint32_t net;    /* host byte order, host bits zero */
	int prefix;      /* 16..29 */
};

struct sb_lease {
	uint32_t addr;                           /* host byte order */
	char name[SB_SANDBOX_NAME_MAX + 1];
};

/* "10.213.0.0/24"; the gateway (the bridge) is the first host address. */
int sb_subnet_parse(struct sb_subnet *out, const char *text, struct sb_error *err);
uint32_t sb_subnet_gateway(const struct sb_subnet *s);
int sb_subnet_contains(const struct sb_subnet *s, uint32_t addr);
/* Dotted quad of a host-order address into buf (>= 16 bytes). */
const char *sb_ipv4_format(char *buf, uint32_t addr);

/* The address leased to name, or SB_ERR_NOTFOUND. */
int sb_lease_find(uint32_t *addr, struct sb_root *root, const char *name, struct sb_error *err);
/* The existing lease of name, else the lowest free address of the subnet
 * (SB_ERR_LIMIT when the subnet is full). */
int sb_lease_take(uint32_t *addr, struct sb_root *root, const struct sb_subnet *subnet, const char *name,
		  struct sb_error *err);
/* Drops the lease of name; no lease is not an error. */
int sb_lease_release(struct sb_root *root, const char *name, struct sb_error *err);
/* Every lease (for gc); *out is malloc'd. */
int sb_lease_list(struct sb_lease **out, size_t *count, struct sb_root *root, struct sb_error *err);

#endif
