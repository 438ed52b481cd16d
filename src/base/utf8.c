#include "config.h"

#include "base/utf8.h"

/* The length of the character at s (1 to 4), or 0 when s[0, len) does not
 * begin with a valid one; *partial is set when it is a valid but cut start. */
static size_t char_len(const unsigned char *s, size_t len, int *partial)
{
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	*partial = 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		lo = s[0] == 0xe0 ? 0xa0 : 0x80;      /* no overlong forms */
		hi = s[0] == 0xed ? 0x9f : 0xbf;      /* no surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		lo = s[0] == 0xf0 ? 0x90 : 0x80;
		hi = s[0] == 0xf4 ? 0x8f : 0xbf;      /* at most U+10FFFF */
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i == len) {
			*partial = 1;
			return 0;
		}
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return n;
}

int sb_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	int partial;

	for (size_t i = 0, n; i < len; i += n)
		if (!(n = char_len(p + i, len - i, &partial)))
			return 0;
	return 1;
}

size_t sb_utf8_boundary(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	int partial;
	/* only the last three bytes can begin a cut character */
	size_t i = len > 3 ? len - 3 : 0;

	while (i < len) {
		size_t n = char_len(p + i, len - i, &partial);
		if (partial)
			return i;
		i += n ? n : 1;
	}
	return len;
}
