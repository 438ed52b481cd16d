#include "config.h"

#include "fuzz.h"
#include "image/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_image_manifest m;
	struct sb_image_config c;

	if (sb_image_manifest_parse(&m, data, size, "fuzz", NULL) == 0) {
		const struct sb_descriptor *d;
		if (m.is_index)
			sb_image_index_select(&d, &m, "linux", "amd64", NULL);
		sb_image_manifest_clear(&m);
	}
	if (sb_image_config_parse(&c, data, size, "fuzz", NULL) == 0)
		sb_image_config_clear(&c);
	return 0;
}
