/* UTF-8, as the JSON that records and the wire carry requires it. */
#ifndef SB_UTF8_H
#define SB_UTF8_H

#include <stddef.h>

/* 1 when s[0, len) is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
int sb_utf8_valid(const char *s, size_t len);
/* The length of the longest prefix of s[0, len) that does not end inside a
 * character: a stream cut there never splits one. Bytes that cannot start or
 * continue a character count as one each. */
size_t sb_utf8_boundary(const char *s, size_t len);

#endif
