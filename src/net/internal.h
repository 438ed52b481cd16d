/* Internal to src/net/: only its own files include this header. */
#ifndef SB_NET_INTERNAL_H
#define SB_NET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/name.h"
#include "net/egress.h"
#include "net/network.h"
#include "base/root.h"


/* Sandbox addresses: the configured IPv4 subnet and one lease file per
 * address under ROOT/network/leases/<address>, holding the sandbox name.
 * A lease is claimed with link(2), so two claims of one address cannot both
 * succeed even without the root lock. */
struct sb_subnet {
	uint32_t net;    /* host byte order, host bits zero */
	int prefix;      /* 16..29 */
};

struct sb_lease {
	uint32_t addr;                           /* host byte order */
	char name[SB_NAME_MAX + 1];
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
/* SB_ERR_STATE, naming one, while a lease lies outside subnet (it was
 * changed under it): a new address could then get the veth name of that
 * lease's sandbox, numbered within the old subnet (network.c). 0: none. */
int sb_lease_check_subnet(struct sb_root *root, const struct sb_subnet *subnet, struct sb_error *err);
/* Drops the lease of name; no lease is not an error. */
int sb_lease_release(struct sb_root *root, const char *name, struct sb_error *err);
/* Moves the lease of from to the name to (SB_ERR_EXISTS when to has one). */
int sb_lease_rename(struct sb_root *root, const char *from, const char *to, struct sb_error *err);
/* Every lease (for gc); *out is malloc'd. */
int sb_lease_list(struct sb_lease **out, size_t *count, struct sb_root *root, struct sb_error *err);

/* Outbound NAT and filtering for sandbox bridges: one nftables table,
 * "inet sandbench", shared by every state root on the host. Bridges and
 * sandbox addresses are elements of two sets; the rules never change, so a
 * sandbox is added or removed by one set element. Sandboxes reach the outside
 * through masquerading; nothing reaches them unasked, and they cannot open
 * connections to the host itself. Callers hold the host network lock. */
#define SB_NAT_TABLE "sandbench"

/* Creates or refreshes the table (atomically, keeping set elements), adds
 * bridge to it and turns on net.ipv4.ip_forward. */
int sb_nat_ensure(const char *bridge, struct sb_error *err);
/* Adds or removes one sandbox address (host byte order); removing a missing one is fine. */
int sb_nat_add(uint32_t addr, struct sb_error *err);
int sb_nat_remove(uint32_t addr, struct sb_error *err);
/* Sandbox-to-sandbox pairs (the set "peers"): set replaces src's pairs by
 * src . dsts[i]; remove drops every pair addr is part of. */
/* Writes 1 to the sysctl file path unless it holds 1 already. */
int sb_net_sysctl_on(const char *path, struct sb_error *err);
int sb_nat_peers_set(uint32_t src, const uint32_t *dsts, size_t n, struct sb_error *err);
int sb_nat_peers_remove(uint32_t addr, struct sb_error *err);
/* Removes bridge from the table; deletes the table when no bridge is left. */
int sb_nat_remove_bridge(const char *bridge, struct sb_error *err);

/* Egress policies (net/egress.h, egress_nft.c): a table of their own. ensure
 * creates or refreshes it and adds bridge; remove_bridge takes bridge out and
 * deletes the table when no bridge is left. Callers hold the host network lock.
 * The egress objects of the sandbox at addr:
 * apply creates or replaces them in one transaction; nameservers (host
 * order) stay reachable on port 53 under the default policy. remove deletes
 * what exists of them. denials reads and clears the recorded denials. chains
 * lists the addresses that have a chain of this tag (for gc). Callers hold
 * the host network lock for apply and remove. */
#define SB_EGRESS_TABLE "sandbench_egress"
int sb_egress_nft_ensure(const char *bridge, struct sb_error *err);
int sb_egress_nft_remove_bridge(const char *bridge, struct sb_error *err);
/* The filtering resolver of a sandbox: its DNS packets go to port of the
 * gateway when on (its policy names hosts). */
struct sb_egress_dns {
	uint32_t gateway;
	int port;
	int on;
};
int sb_egress_nft_apply(const char *tag, uint32_t addr, const struct sb_egress *e, int allow_private,
			const uint32_t *nameservers, size_t n_ns, const struct sb_egress_dns *dns, struct sb_error *err);
int sb_egress_nft_remove(const char *tag, uint32_t addr, const struct sb_egress_dns *dns, struct sb_error *err);
int sb_egress_nft_denials(struct sb_egress_denial **out, size_t *count, const char *tag, uint32_t addr,
			  struct sb_error *err);
int sb_egress_nft_chains(uint32_t **out, size_t *count, const char *tag, struct sb_error *err);

/* runsc's own network stack (--network=sandbox) on kernels where this runsc
 * mistakes every network namespace for the root one (it tests for
 * /proc/sys/net/core/rmem_default, which newer kernels have in every netns;
 * gVisor issue 10704) and refuses with "cannot run with network enabled in
 * root network namespace". The workaround runs the runsc CLI in a private
 * mount namespace with a small tmpfs over /proc/sys carrying only the values
 * runsc reads. It is used only where a probe showed it is needed. */
/* The resolv.conf bound into sandboxes with network on. */
/* Where the host's resolvers are read from, in order: the first file with a
 * nameserver a sandbox can reach wins. systemd-resolved's upstream list comes
 * second because /etc/resolv.conf then names only its loopback stub. */
extern const char *const sb_resolv_default_sources[];

/* Builds the text from the first of sources (NULL-terminated) that names a
 * usable nameserver: IPv4 and not loopback (a loopback resolver of the host is
 * not reachable from a sandbox, which has its own loopback). Its search and
 * options lines are kept. *nameservers is how many were kept; 0 means none
 * was usable, and the text says so in a comment (name lookups will fail while
 * addresses still work). */
int sb_resolv_conf_build(char **out, int *nameservers, const char *const *sources, struct sb_error *err);

#endif
