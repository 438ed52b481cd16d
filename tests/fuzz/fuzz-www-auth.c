/* Fuzz target: the bytes are a registry's WWW-Authenticate value, split into
 * scheme and auth-params as sb_registry_auth_answer does (no token is
 * fetched). What a Bearer challenge yields, written again quoted, parses to
 * the same realm, service and scope. */
#include "config.h"

#include <strings.h>

#include "base/buf.h"
#include "fuzz.h"
#include "registry/internal.h"

/* key="value" with '"' and '\' escaped */
static void put_param(struct sb_buf *b, const char *key, const char *value)
{
	if (!value)
		return;
	FUZZ_CHECK(sb_buf_add(b, ", ", 2) == 0 && sb_buf_add(b, key, strlen(key)) == 0 && sb_buf_add(b, "=\"", 2) == 0);
	for (const char *v = value; *v; v++) {
		if (*v == '"' || *v == '\\')
			FUZZ_CHECK(sb_buf_add(b, "\\", 1) == 0);
		FUZZ_CHECK(sb_buf_add(b, v, 1) == 0);
	}
	FUZZ_CHECK(sb_buf_add(b, "\"", 1) == 0);
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *header = fuzz_cstr(data, size);
	size_t scheme_len = strcspn(header, " \t");
	struct sb_registry_challenge ch = { 0 }, again = { 0 };

	if (scheme_len == 6 && !strncasecmp(header, "Bearer", 6) &&
	    sb_registry_challenge_parse(&ch, header + scheme_len) == 0) {
		size_t len = strlen(header);
		FUZZ_CHECK(!ch.realm || strlen(ch.realm) <= len);
		FUZZ_CHECK(!ch.service || strlen(ch.service) <= len);
		FUZZ_CHECK(!ch.scope || strlen(ch.scope) <= len);
		struct sb_buf b = { 0 };
		put_param(&b, "realm", ch.realm);
		put_param(&b, "service", ch.service);
		put_param(&b, "scope", ch.scope);
		FUZZ_CHECK(sb_buf_add(&b, "", 1) == 0);
		FUZZ_CHECK(sb_registry_challenge_parse(&again, b.data) == 0);
		FUZZ_CHECK(same(ch.realm, again.realm) && same(ch.service, again.service) && same(ch.scope, again.scope));
		sb_buf_clear(&b);
	}
	sb_registry_challenge_clear(&ch);
	sb_registry_challenge_clear(&again);
	free(header);
	return 0;
}
