/* Fuzz target: the bytes are ROOT/config, read by the real loader (with no
 * installed defaults file). Settings it accepts are within their bounds. */
#include "config.h"

#include "fuzz.h"
#include "sandbox/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_settings s;

	/* only ROOT/config counts: the installed file is not the input */
	setenv("SANDBENCH_DEFAULTS", "/nonexistent/sandbench.conf", 1);
	fuzz_root_write("config", data, size);
	if (sb_settings_load(&s, fuzz_root(), NULL) < 0)
		return 0;
	FUZZ_CHECK(s.kind == SB_KIND_TEMPORARY || s.kind == SB_KIND_PERMANENT);
	FUZZ_CHECK(s.expiry_action == SB_EXPIRY_RM || s.expiry_action == SB_EXPIRY_STOP ||
		   s.expiry_action == SB_EXPIRY_PAUSE);
	FUZZ_CHECK(s.expiry_stop_after >= 0);
	FUZZ_CHECK(s.expiry_action == SB_EXPIRY_PAUSE || s.expiry_stop_after == 0);
	FUZZ_CHECK(s.idle_timeout > 0 && (s.network == 0 || s.network == 1));
	FUZZ_CHECK(s.network_private == 0 || s.network_private == 1);
	FUZZ_CHECK(memchr(s.network_bridge, '\0', sizeof(s.network_bridge)));
	FUZZ_CHECK(memchr(s.network_subnet, '\0', sizeof(s.network_subnet)));
	FUZZ_CHECK(memchr(s.allow_profiles, '\0', sizeof(s.allow_profiles)));
	size_t plen = strlen(s.allow_profiles);
	FUZZ_CHECK(plen == 0 || s.allow_profiles[plen - 1] == '\n');
	FUZZ_CHECK(s.cpus >= 0 && s.cpus <= 1024);
	FUZZ_CHECK(s.runsc_timeout_ms > 0 && s.runsc_timeout_ms <= 3600 * 1000);
	FUZZ_CHECK(s.timeline_size >= 4096 && s.timeline_size <= 64 << 20);
	FUZZ_CHECK(s.timeline_output <= 64 << 10);
	return 0;
}
