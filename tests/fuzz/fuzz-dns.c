/* Fuzz target: DNS messages as the filtering resolver gets them (net/dns.h):
 * the bytes as a guest's query, and as the upstream's answer to a fixed
 * query (its id and name patched in, so that the records are reached).
 * Whatever parses keeps the limits: a canonical name, at most
 * SB_DNS_MAX_ADDRS addresses; the answer built from it parses back. */
#include "config.h"

#include "fuzz.h"
#include "net/dns.h"

static void check_query(const uint8_t *data, size_t size)
{
	struct sb_dns_query q;
	struct sb_dns_answer a = { .addrs = { 0x0a000001 }, .n_addrs = 1, .ttl = 60 };
	uint8_t out[SB_DNS_MSG_MAX];
	char canon[SB_DNS_NAME_MAX + 1];

	if (sb_dns_parse_query(&q, data, size) < 0)
		return;
	FUZZ_CHECK(q.name[0] && strlen(q.name) <= SB_DNS_NAME_MAX);
	FUZZ_CHECK(sb_dns_name_canon(canon, q.name, strlen(q.name)) == 0 && strcmp(canon, q.name) == 0);
	size_t len = sb_dns_build_answer(out, &q, SB_DNS_NOERROR, &a);
	FUZZ_CHECK(len <= SB_DNS_MSG_MAX);
	struct sb_dns_answer back;
	FUZZ_CHECK(sb_dns_parse_answer(&back, &q, out, len) == 0);
	FUZZ_CHECK(back.n_addrs == (len > SB_DNS_MSG_MAX - 16 && back.n_addrs == 0 ? 0 : 1));
	len = sb_dns_build_query(out, &q, 7);
	struct sb_dns_query again;
	FUZZ_CHECK(sb_dns_parse_query(&again, out, len) == 0 && strcmp(again.name, q.name) == 0);
}

static void check_answer(const uint8_t *data, size_t size)
{
	static const uint8_t question[] = { 4, 'g', 'o', 'o', 'd', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };
	struct sb_dns_query q = { .id = 0x1234, .qtype = SB_DNS_TYPE_A, .name = "good.test" };
	uint8_t msg[SB_DNS_UP_MAX];
	struct sb_dns_answer a;

	if (size > sizeof(msg) - 12 - sizeof(question))
		size = sizeof(msg) - 12 - sizeof(question);
	/* header: our id, a response with one question; the rest from the input */
	memset(msg, 0, 12);
	msg[0] = 0x12, msg[1] = 0x34, msg[2] = 0x81, msg[3] = 0x80, msg[5] = 1;
	msg[7] = size ? data[0] : 0;
	memcpy(msg + 12, question, sizeof(question));
	if (size > 1)
		memcpy(msg + 12 + sizeof(question), data + 1, size - 1);
	size_t len = 12 + sizeof(question) + (size > 1 ? size - 1 : 0);
	if (sb_dns_parse_answer(&a, &q, msg, len) == 0)
		FUZZ_CHECK(a.n_addrs <= SB_DNS_MAX_ADDRS && (a.n_addrs || a.ttl == 0));
	/* and the bytes as a whole answer */
	sb_dns_parse_answer(&a, &q, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_query(data, size);
	check_answer(data, size);
	return 0;
}
