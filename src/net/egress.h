/* Egress policy of a network-on sandbox: what it may reach outside.
 *
 *   default   the internet, but not the machine's surroundings: link-local and
 *             metadata addresses (169.254.0.0/16) are dropped, and so are the
 *             private ranges (10/8, 172.16/12, 192.168/16, 100.64/10) unless the
 *             setting network_private allows them; the host's nameservers stay
 *             reachable on port 53. The host's own addresses are never
 *             reachable (the shared table's input chain).
 *   allow     only the allow-list (CIDR[:PORT] rules, TCP and UDP; NAME[:PORT]
 *             rules: the addresses the sandbox's filtering resolver answered
 *             for NAME or a name under it, for the record's TTL; net/dns.h).
 *   deny-all  nothing.
 * Sandboxes have IPv4 only: IPv6 from a sandbox bridge is always dropped.
 *
 * Each sandbox gets a chain and a set of denied tuples in the nftables table
 * "inet sandbench_egress" (net/internal.h), both named after the root's tag
 * and the sandbox's address. A dropped TCP or UDP packet updates the set (destination,
 * protocol, port; a per-element counter; the element's timeout gives the time
 * of the last attempt): the kernel records denials without any daemon, and
 * sandbench reads and clears the set on demand (sb_network_denials). */
#ifndef SB_EGRESS_H
#define SB_EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/name.h"

enum sb_egress_mode {
	SB_EGRESS_DEFAULT = 0,
	SB_EGRESS_ALLOW,
	SB_EGRESS_DENY_ALL,
};

#define SB_DNS_NAME_MAX 253   /* a name's text without the final dot */

struct sb_egress_rule {
	uint32_t net;        /* host byte order, host bits zero */
	int prefix;          /* 0..32 */
	int port;            /* 0: any port */
	char name[SB_DNS_NAME_MAX + 1];   /* a name rule (canonical), "" for an address rule */
	/* "sandbox:NAME[:PORT]": another sandbox of the same root, "" otherwise;
	 * net/prefix are then its leased address when the policy is applied
	 * (0/0 in the record: the address is looked up, never stored) */
	char sandbox[SB_NAME_MAX + 1];
};

struct sb_egress {
	enum sb_egress_mode mode;
	struct sb_egress_rule *rules;   /* allow mode: the allow-list (malloc'd) */
	size_t n_rules;
};

/* "ADDRESS[/PREFIX][:PORT]" (IPv4), "NAME[:PORT]" (a host name: letters,
 * digits, '-', '_' in dot-separated labels) or "sandbox:NAME[:PORT]" (a
 * sandbox of the same root; whether it exists is the caller's check). SB_ERR_INVALID with a message
 * that says what is wrong (a bad address, prefix, port or name, IPv6). */
int sb_egress_rule_parse(struct sb_egress_rule *out, const char *text, struct sb_error *err);
#define SB_EGRESS_RULE_MAX (SB_DNS_NAME_MAX + 8)
/* The canonical text of a rule ("10.0.0.0/8:443", "192.0.2.1"). */
const char *sb_egress_rule_format(char buf[SB_EGRESS_RULE_MAX], const struct sb_egress_rule *r);
/* Stable names: "default", "allow", "deny-all"; parse gives -1 when unknown. */
const char *sb_egress_mode_name(enum sb_egress_mode mode);
int sb_egress_mode_parse(const char *s);
/* text[0..len) as a canonical host name (lower case, no final dot) into out;
 * -1 when it is not one (an empty label, a label over 63 bytes, a byte
 * other than a letter, digit, '-' or '_', over 253 bytes). */
int sb_dns_name_canon(char out[SB_DNS_NAME_MAX + 1], const char *text, size_t len);
/* Whether name is rule or a name under it (both canonical). */
int sb_dns_name_under(const char *name, const char *rule);
/* Whether the policy allows names (and so needs the filtering resolver). */
int sb_egress_has_names(const struct sb_egress *e);
/* Adds a rule (a duplicate is kept once); -1 when out of memory. */
int sb_egress_add_rule(struct sb_egress *e, const struct sb_egress_rule *r);
/* Deep copy; -1 when out of memory (dst is then empty). */
int sb_egress_copy(struct sb_egress *dst, const struct sb_egress *src);
void sb_egress_clear(struct sb_egress *e);
/* "default", "deny-all" or "allow 10.0.0.0/8:443, 192.0.2.1": malloc'd, NULL when out of memory. */
char *sb_egress_describe(const struct sb_egress *e);

/* One recorded denial. */
struct sb_egress_denial {
	char address[16];
	char proto[8];       /* "tcp", "udp"; "dns" for a name the resolver refused */
	char name[SB_DNS_NAME_MAX + 1];   /* "dns": the name asked for */
	int port;
	long long last_ms;   /* unix ms of the last attempt */
	unsigned long long packets;
};

#endif
