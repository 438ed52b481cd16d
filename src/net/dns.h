/* DNS messages of the filtering resolver (net/resolver.c): the guest's
 * queries and the upstream's answers are untrusted bytes. Everything is
 * bounds-checked; a name is at most 253 bytes of letters, digits, '-' and
 * '_'; a compression pointer must point backwards and at most
 * SB_DNS_MAX_JUMPS are followed, so no message makes the parser loop. */
#ifndef SB_DNS_H
#define SB_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "net/egress.h"

#define SB_DNS_MSG_MAX 512     /* what a query or our answer may be (UDP without EDNS) */
#define SB_DNS_UP_MAX 4096     /* what an upstream answer may be */
#define SB_DNS_MAX_JUMPS 16
#define SB_DNS_MAX_ADDRS 16    /* addresses kept from one answer */
#define SB_DNS_MAX_CNAMES 8    /* CNAME hops followed */

enum { SB_DNS_TYPE_A = 1, SB_DNS_TYPE_CNAME = 5, SB_DNS_TYPE_AAAA = 28 };
enum { SB_DNS_NOERROR = 0, SB_DNS_FORMERR = 1, SB_DNS_SERVFAIL = 2, SB_DNS_NXDOMAIN = 3, SB_DNS_REFUSED = 5 };

struct sb_dns_query {
	uint16_t id;
	int rd;                           /* recursion desired */
	uint16_t qtype;
	char name[SB_DNS_NAME_MAX + 1];   /* canonical (net/egress.h) */
};

struct sb_dns_answer {
	uint32_t addrs[SB_DNS_MAX_ADDRS]; /* host order */
	size_t n_addrs;
	uint32_t ttl;                     /* the smallest TTL on the way (CNAMEs included) */
	int rcode;
};

/* A standard query (QR 0, opcode 0) with one question of class IN; -1
 * otherwise. Sections after the question (EDNS) are ignored. */
int sb_dns_parse_query(struct sb_dns_query *out, const uint8_t *msg, size_t len);
/* The upstream's answer to q: its id, QR 1, the question repeated, then the A
 * records of q's name or of the end of its CNAME chain; -1 when it is not an
 * answer to q or malformed. */
int sb_dns_parse_answer(struct sb_dns_answer *out, const struct sb_dns_query *q, const uint8_t *msg, size_t len);
/* The message asking for q's name and type with id into buf (>= SB_DNS_MSG_MAX); its length. */
size_t sb_dns_build_query(uint8_t *buf, const struct sb_dns_query *q, uint16_t id);
/* Our answer to q: rcode, and the A records in a (NULL: none) under q's
 * own name, as many as fit in SB_DNS_MSG_MAX; its length. */
size_t sb_dns_build_answer(uint8_t *buf, const struct sb_dns_query *q, int rcode, const struct sb_dns_answer *a);

#endif
