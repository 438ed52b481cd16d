/* DNS messages (net/dns.h): parsing what the guest and the upstream send,
 * building what the resolver sends. Every read is checked against the
 * message's length before it is made. */
#include "config.h"

#include <string.h>

#include "net/dns.h"

#define HEADER 12
#define CLASS_IN 1
#define MAX_RRS 32   /* answer records looked at */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

/* The name at *off into text (canonical; "" when it is a name but not one we
 * accept) and *off past it. Pointers only when allowed, only backwards, at
 * most SB_DNS_MAX_JUMPS. -1 when malformed. */
static int read_name(char text[SB_DNS_NAME_MAX + 1], const uint8_t *msg, size_t len, size_t *off, int pointers)
{
	char raw[256];
	size_t pos = *off, n = 0, end = 0;
	int jumps = 0;

	for (;;) {
		if (pos >= len)
			return -1;
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (!pointers || pos + 1 >= len || ++jumps > SB_DNS_MAX_JUMPS)
				return -1;
			size_t to = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			if (!end)
				end = pos + 2;
			if (to >= pos)
				return -1;   /* forwards or onto itself: a loop waiting to happen */
			pos = to;
			continue;
		}
		if (l & 0xc0)
			return -1;   /* the reserved label types */
		if (l == 0)
			break;
		if (pos + 1 + l > len || n + l + 1 >= sizeof(raw))
			return -1;
		if (n)
			raw[n++] = '.';
		memcpy(raw + n, msg + pos + 1, l);
		n += l;
		pos += 1 + (size_t)l;
	}
	*off = end ? end : pos + 1;
	if (n == 0 || sb_dns_name_canon(text, raw, n) < 0)
		text[0] = '\0';
	return 0;
}

int sb_dns_parse_query(struct sb_dns_query *out, const uint8_t *msg, size_t len)
{
	size_t off = HEADER;

	memset(out, 0, sizeof(*out));
	if (len < HEADER || len > SB_DNS_MSG_MAX)
		return -1;
	uint16_t flags = get16(msg + 2);
	if ((flags & 0x8000) || ((flags >> 11) & 0xf) != 0 || get16(msg + 4) != 1)
		return -1;
	if (read_name(out->name, msg, len, &off, 0) < 0 || !out->name[0] || off + 4 > len ||
	    get16(msg + off + 2) != CLASS_IN)
		return -1;
	out->id = get16(msg);
	out->rd = (flags & 0x0100) != 0;
	out->qtype = get16(msg + off);
	return 0;
}

struct rr {
	char owner[SB_DNS_NAME_MAX + 1];
	uint16_t type;
	uint32_t ttl;
	size_t rdata, rdlen;
};

/* The answer section's records (at most MAX_RRS); -1 when malformed. */
static int read_rrs(struct rr *rrs, size_t *n, const uint8_t *msg, size_t len, size_t off, unsigned count)
{
	*n = 0;
	for (unsigned i = 0; i < count && i < MAX_RRS; i++) {
		struct rr *r = &rrs[*n];
		if (read_name(r->owner, msg, len, &off, 1) < 0 || off + 10 > len)
			return -1;
		r->type = get16(msg + off);
		r->ttl = get32(msg + off + 4) & 0x7fffffff;
		r->rdlen = get16(msg + off + 8);
		r->rdata = off + 10;
		if (r->rdata + r->rdlen > len)
			return -1;
		off = r->rdata + r->rdlen;
		if (get16(msg + r->rdata - 8) == CLASS_IN && r->owner[0])
			(*n)++;
	}
	return 0;
}

/* Follows the CNAME chain from the question's name to its end. */
static int follow_cnames(char cur[SB_DNS_NAME_MAX + 1], uint32_t *ttl, const struct rr *rrs, size_t n,
			 const uint8_t *msg)
{
	for (int hop = 0; hop < SB_DNS_MAX_CNAMES; hop++) {
		size_t i;
		for (i = 0; i < n; i++)
			if (rrs[i].type == SB_DNS_TYPE_CNAME && strcmp(rrs[i].owner, cur) == 0)
				break;
		if (i == n)
			return 0;
		size_t off = rrs[i].rdata;
		char next[SB_DNS_NAME_MAX + 1];
		if (read_name(next, msg, rrs[i].rdata + rrs[i].rdlen, &off, 1) < 0 || !next[0])
			return -1;
		if (rrs[i].ttl < *ttl)
			*ttl = rrs[i].ttl;
		memcpy(cur, next, sizeof(next));
	}
	return -1;   /* longer than we follow */
}

int sb_dns_parse_answer(struct sb_dns_answer *out, const struct sb_dns_query *q, const uint8_t *msg, size_t len)
{
	struct rr rrs[MAX_RRS];
	char qname[SB_DNS_NAME_MAX + 1], cur[SB_DNS_NAME_MAX + 1];
	size_t off = HEADER, n;

	memset(out, 0, sizeof(*out));
	if (len < HEADER || len > SB_DNS_UP_MAX || get16(msg) != q->id)
		return -1;
	uint16_t flags = get16(msg + 2);
	if (!(flags & 0x8000) || get16(msg + 4) != 1)
		return -1;
	out->rcode = flags & 0xf;
	if (read_name(qname, msg, len, &off, 1) < 0 || strcmp(qname, q->name) != 0 || off + 4 > len ||
	    get16(msg + off) != q->qtype || get16(msg + off + 2) != CLASS_IN)
		return -1;
	if (read_rrs(rrs, &n, msg, len, off + 4, get16(msg + 6)) < 0)
		return -1;
	out->ttl = 0x7fffffff;
	memcpy(cur, q->name, sizeof(cur));
	if (follow_cnames(cur, &out->ttl, rrs, n, msg) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (rrs[i].type != SB_DNS_TYPE_A || rrs[i].rdlen != 4 || strcmp(rrs[i].owner, cur) != 0 ||
		    out->n_addrs == SB_DNS_MAX_ADDRS)
			continue;
		out->addrs[out->n_addrs++] = get32(msg + rrs[i].rdata);
		if (rrs[i].ttl < out->ttl)
			out->ttl = rrs[i].ttl;
	}
	if (!out->n_addrs)
		out->ttl = 0;
	return 0;
}

/* The question (name, type, class IN) at p; its end. */
static uint8_t *put_question(uint8_t *p, const struct sb_dns_query *q)
{
	const char *s = q->name;

	while (*s) {
		size_t l = strcspn(s, ".");
		*p++ = (uint8_t)l;
		memcpy(p, s, l);
		p += l;
		s += l + (s[l] == '.');
	}
	*p++ = 0;
	p = put16(p, q->qtype);
	return put16(p, CLASS_IN);
}

size_t sb_dns_build_query(uint8_t *buf, const struct sb_dns_query *q, uint16_t id)
{
	uint8_t *p = buf;

	memset(buf, 0, HEADER);
	put16(p, id);
	put16(p + 2, 0x0100);   /* recursion desired */
	put16(p + 4, 1);
	return (size_t)(put_question(p + HEADER, q) - buf);
}

size_t sb_dns_build_answer(uint8_t *buf, const struct sb_dns_query *q, int rcode, const struct sb_dns_answer *a)
{
	uint8_t *p = buf;
	size_t n = 0;

	memset(buf, 0, HEADER);
	put16(p, q->id);
	put16(p + 2, 0x8000 | 0x0080 | (q->rd ? 0x0100 : 0) | (unsigned)(rcode & 0xf));
	put16(p + 4, 1);
	p = put_question(p + HEADER, q);
	for (; a && n < a->n_addrs && (size_t)(p - buf) + 16 <= SB_DNS_MSG_MAX; n++) {
		p = put16(p, 0xc000 | HEADER);   /* the question's name */
		p = put16(p, SB_DNS_TYPE_A);
		p = put16(p, CLASS_IN);
		p = put16(p, a->ttl >> 16);
		p = put16(p, a->ttl & 0xffff);
		p = put16(p, 4);
		p = put16(p, a->addrs[n] >> 16);
		p = put16(p, a->addrs[n] & 0xffff);
	}
	put16(buf + 6, (unsigned)n);
	return (size_t)(p - buf);
}
