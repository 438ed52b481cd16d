/* Networking of sandboxes with network on: a named network namespace per
 * sandbox (/run/netns/sb-<tag>-<name>, <tag> derived from the state root so
 * that roots never touch each other's objects), a veth pair from it to a host
 * bridge owned by one state root, an address leased from the root's subnet,
 * outbound NAT (see net_nat.h) and a generated resolv.conf. runsc then runs
 * with its own network stack (--network=sandbox) in that namespace.
 *
 * Setup and teardown serialise on a host lock (/run/sandbench-network.lock):
 * several roots may share a host, and a root's creates run in parallel.
 * Addresses are claimed atomically (net_lease.h). */
#ifndef SB_NETWORK_H
#define SB_NETWORK_H

#include <stddef.h>

#include "base/error.h"
#include "base/name.h"
#include "base/proc.h"
#include "base/root.h"
#include "net/egress.h"

#define SB_NETWORK_DEFAULT_BRIDGE "sb0"
#define SB_NETWORK_DEFAULT_SUBNET "10.213.0.0/24"
/* "sb-" + 6 hex + "-" + name + NUL */
#define SB_NETNS_NAME_MAX (3 + 6 + 1 + SB_NAME_MAX + 1)

struct sb_network_config {
	const char *bridge;                  /* NULL: SB_NETWORK_DEFAULT_BRIDGE (at most 15 bytes) */
	const char *subnet;                  /* NULL: SB_NETWORK_DEFAULT_SUBNET (prefix 16..29) */
	const char *const *resolv_sources;   /* NULL: the host's (see net_resolv.h) */
	const struct sb_egress *egress;      /* the sandbox's policy; NULL: the default */
	int allow_private;                   /* the default policy lets private ranges through */
	const char *dns_upstream;            /* the filtering resolver asks this IPv4 nameserver; NULL: the host's */
};

struct sb_netinfo {
	char netns[SB_NETNS_NAME_MAX];
	char netns_path[SB_NETNS_NAME_MAX + 16];  /* the spec's network namespace path */
	char veth[16];                            /* host end, a port of the bridge */
	char bridge[16];
	char address[16];                         /* the sandbox's IPv4 address (eth0 inside) */
	int prefix;
	char gateway[16];                         /* the bridge's address, the default route */
	char *resolv_conf;                        /* generated file: bind it read-only at /etc/resolv.conf */
	int nameservers;                          /* nameservers in it (0: the host had no usable one) */
	/* The filtering resolver (net/resolver.c) for allow-lists with names:
	 * the bridge's UDP port the sandbox's queries to the gateway are DNATed
	 * to, the policy file it reads per query, the file of refused names. */
	int dns_port;
	char *dns_policy, *dns_denied;
};

/* Creates, or repairs, the sandbox's network: bridge, NAT, lease, namespace,
 * veth, address, route and resolv.conf. Idempotent: call it before every runsc
 * create, start and restore of the sandbox, because runsc removes the address
 * and routes from the namespace's interface when it takes them over, and a host
 * reboot empties /run/netns. A failure on first setup leaves nothing behind. */
int sb_network_setup(struct sb_netinfo *out, struct sb_root *root, const struct sb_network_config *cfg,
		     const char *name, struct sb_error *err);
/* What setup made for name, without touching anything; SB_ERR_NOTFOUND when
 * the sandbox has no network. */
int sb_network_info(struct sb_netinfo *out, struct sb_root *root, const struct sb_network_config *cfg,
		    const char *name, struct sb_error *err);
/* Removes namespace, veth, NAT element, resolv.conf and lease of name (what
 * exists of them), then the bridge when no sandbox of the root uses it. */
int sb_network_teardown(struct sb_root *root, const struct sb_network_config *cfg, const char *name,
			struct sb_error *err);
void sb_netinfo_clear(struct sb_netinfo *info);
/* Gives from's network, as it runs, to the name to (a claimed pool member):
 * lease, namespace and files change name; veth, NAT and policy belong to the
 * address and stay. On failure what moved is under either name; tearing
 * down both removes it. */
int sb_network_rename(struct sb_root *root, const struct sb_network_config *cfg, const char *from, const char *to,
		      struct sb_error *err);
/* Replaces the egress policy of name's network (cfg->egress) at once, without
 * touching anything else; nothing when name has no network set up now (the
 * next setup applies the policy). */
int sb_network_egress_update(struct sb_root *root, const struct sb_network_config *cfg, const char *name,
			     struct sb_error *err);
/* The connections name's policy dropped since the last call (read and
 * cleared; net/egress.h); *out is malloc'd (free()), none without a network. */
int sb_network_denials(struct sb_egress_denial **out, size_t *count, struct sb_root *root, const char *name,
		       struct sb_error *err);
/* The IPv4 address leased to name into out (>= 16 bytes); SB_ERR_NOTFOUND
 * when it has none. Needs no configuration: for listings. */
int sb_network_address(char *out, struct sb_root *root, const char *name, struct sb_error *err);
/* The 6 hex digits that name this root's host objects (sha256 of its path). */
int sb_network_tag(char out[7], const struct sb_root *root, struct sb_error *err);

/* The filtering resolver, in the sandbox's keeper: open binds n's DNS port,
 * UDP and TCP, on the bridge's address into fd (before the boot: a port in
 * use fails it); start serves both from a thread for the rest of the
 * process's life. */
int sb_resolver_open(int fd[2], const struct sb_netinfo *n, struct sb_error *err);
int sb_resolver_start(const int fd[2], const struct sb_netinfo *n);

/* Host objects of this root that no sandbox accounts for, for gc. */
enum sb_net_orphan_kind {
	SB_NET_ORPHAN_LEASE,     /* a lease (and what hangs off it) whose sandbox record is gone */
	SB_NET_ORPHAN_NETNS,     /* a namespace of this root without a lease */
	SB_NET_ORPHAN_VETH,      /* a host veth of this root without a lease */
	SB_NET_ORPHAN_BRIDGE,    /* the root's bridge with no lease left */
	SB_NET_ORPHAN_EGRESS,    /* an egress chain and set of this root without a lease */
};

struct sb_net_orphan {
	enum sb_net_orphan_kind kind;
	char name[256];                /* sandbox name (lease), namespace or interface name */
};

/* Lists the orphans; *out is malloc'd (free()). */
int sb_network_orphans(struct sb_net_orphan **out, size_t *count, struct sb_root *root,
		       const struct sb_network_config *cfg, struct sb_error *err);
int sb_network_orphan_remove(struct sb_root *root, const struct sb_network_config *cfg,
			     const struct sb_net_orphan *orphan, struct sb_error *err);
/* Stable name of an orphan kind ("lease", "netns", "veth", "bridge"). */
const char *sb_net_orphan_kind_name(enum sb_net_orphan_kind kind);

/* Runs a host networking tool (ip, nft): argv only, never a shell, with a
 * deadline; input (may be NULL) goes to stdin. A non-zero exit is SB_ERR_IO
 * naming the command and its last stderr line. out (may be NULL) receives
 * stdout, malloc'd. */
int sb_net_cmd(char **out, const char *const *argv, const char *input, struct sb_error *err);

#endif
