/* Fuzz target: the bytes are --allow items, one a line, as create takes
 * them (ADDRESS[/PREFIX][:PORT] or @NAME of the configuration's profiles).
 * Every rule is in range, has no host bits, and its canonical text parses
 * back to the same rule; the policy's description names each rule. */
#include "config.h"

#include "fuzz.h"
#include "sandbox/sandbox.h"

#define MAX_ITEMS 64

static const char profiles[] = "allow_profile = web 10.0.0.0/8:443 192.0.2.1\n"
			       "allow_profile = dns 1.1.1.1:53 8.8.8.8:53\n"
			       "allow_profile = bad 10.0.0.1/8\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size), *save = NULL;
	const char *items[MAX_ITEMS];
	size_t n = 0;
	struct sb_egress e;
	static int made;

	if (!made) {
		setenv("SANDBENCH_DEFAULTS", "/nonexistent/sandbench.conf", 1);
		fuzz_root_write("config", (const uint8_t *)profiles, sizeof(profiles) - 1);
		made = 1;
	}
	for (char *l = strtok_r(text, "\n", &save); l && n < MAX_ITEMS; l = strtok_r(NULL, "\n", &save))
		items[n++] = l;
	if (sb_sandbox_egress_parse(&e, fuzz_root(), items, n, NULL) == 0) {
		char *desc = sb_egress_describe(&e);
		FUZZ_CHECK(desc);
		FUZZ_CHECK(e.mode == (n ? SB_EGRESS_ALLOW : SB_EGRESS_DEFAULT));
		for (size_t i = 0; i < e.n_rules; i++) {
			const struct sb_egress_rule *r = &e.rules[i];
			struct sb_egress_rule back;
			char buf[SB_EGRESS_RULE_MAX];
			FUZZ_CHECK(r->prefix >= 0 && r->prefix <= 32 && r->port >= 0 && r->port <= 65535);
			FUZZ_CHECK(r->prefix == 32 || !(r->net & ~(r->prefix ? 0xffffffffu << (32 - r->prefix) : 0)));
			FUZZ_CHECK(sb_egress_rule_parse(&back, sb_egress_rule_format(buf, r), NULL) == 0);
			FUZZ_CHECK(back.net == r->net && back.prefix == r->prefix && back.port == r->port);
			FUZZ_CHECK(strstr(desc, buf));
			for (size_t j = 0; j < i; j++)
				FUZZ_CHECK(memcmp(&e.rules[j], r, sizeof(*r)) != 0);
		}
		free(desc);
		sb_egress_clear(&e);
	}
	free(text);
	return 0;
}
