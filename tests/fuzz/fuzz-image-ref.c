#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_image_ref ref, again;
	char *s = malloc(size + 1), *canonical;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (sb_image_ref_parse(&ref, s, NULL) == 0) {
		/* the canonical form of a valid reference is valid and canonical again */
		canonical = sb_image_ref_format(&ref);
		if (sb_image_ref_parse(&again, canonical, NULL) != 0)
			abort();
		char *twice = sb_image_ref_format(&again);
		if (strcmp(twice, canonical) != 0)
			abort();
		free(twice);
		free(canonical);
		sb_image_ref_clear(&again);
	}
	sb_image_ref_clear(&ref);
	free(s);
	return 0;
}
