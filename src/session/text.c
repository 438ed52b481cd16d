/* Output as text: valid UTF-8, the clean form a model reads (no escape
 * sequences, the last carriage-return segment of each line), and the
 * question a dialog ends with. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Length of the valid UTF-8 sequence at p (n bytes there), 0 when invalid,
 * -1 when it is the valid beginning of one that n cuts. */
static int utf8_len(const unsigned char *p, size_t n)
{
	int len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;

	if (len == 0 || (len == 2 && p[0] < 0xc2) || (len == 4 && p[0] > 0xf4))
		return 0;
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	}
	if ((len == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (len == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (len == 4 && p[0] == 0xf0 && p[1] < 0x90) || (len == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}

char *sb_session_text_utf8(const char *data, size_t len, size_t *out_len)
{
	struct sb_buf b = { 0 };

	for (size_t i = 0; i < len;) {
		int n = utf8_len((const unsigned char *)data + i, len - i);
		if (n <= 0) {
			if (sb_buf_add(&b, "\xef\xbf\xbd", 3) < 0)
				goto nomem;
			i++;
			continue;
		}
		if (sb_buf_add(&b, data + i, (size_t)n) < 0)
			goto nomem;
		i += (size_t)n;
	}
	return sb_buf_steal(&b, out_len);
nomem:
	sb_buf_clear(&b);
	return NULL;
}

/* Bytes of the escape sequence at p (p[0] is ESC): CSI to its final byte,
 * OSC/DCS/APC to BEL or ST, else two. */
static size_t escape_len(const char *p, size_t n)
{
	size_t i = 1;

	if (n < 2)
		return n;
	if (p[1] == '[') {
		for (i = 2; i < n && !((unsigned char)p[i] >= 0x40 && (unsigned char)p[i] <= 0x7e); i++)
			;
		return i < n ? i + 1 : n;
	}
	if (p[1] == ']' || p[1] == 'P' || p[1] == '_' || p[1] == '^') {
		for (i = 2; i < n; i++) {
			if (p[i] == '\a')
				return i + 1;
			if (p[i] == '\033' && i + 1 < n && p[i + 1] == '\\')
				return i + 2;
		}
		return n;
	}
	if ((p[1] == '(' || p[1] == ')' || p[1] == '#') && n > 2)
		return 3;
	return 2;
}

char *sb_session_text_clean(const char *data, size_t len, size_t *out_len)
{
	struct sb_buf b = { 0 };
	size_t line = 0;     /* where the current line starts in b */
	int cr = 0;          /* a \r was seen: the next character starts the line over */

	for (size_t i = 0; i < len;) {
		char c = data[i];
		if (c == '\033') {
			i += escape_len(data + i, len - i);
			continue;
		}
		i++;
		if (c == '\r') {
			cr = 1;
			continue;
		}
		if (c == '\n') {
			cr = 0;
			if (sb_buf_add(&b, "\n", 1) < 0)
				goto nomem;
			line = b.len;
			continue;
		}
		if (c == '\b') {
			if (b.len > line)
				b.len--;
			continue;
		}
		if ((unsigned char)c < 0x20 && c != '\t')
			continue;
		if (cr) {
			b.len = line;
			cr = 0;
		}
		if (sb_buf_add(&b, &c, 1) < 0)
			goto nomem;
	}
	char *raw = sb_buf_steal(&b, &len);
	char *text = raw ? sb_session_text_utf8(raw, len, out_len) : NULL;
	free(raw);
	return text;
nomem:
	sb_buf_clear(&b);
	return NULL;
}

int sb_session_text_dialog(const char *text, size_t len)
{
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	if (len == 0)
		return 0;
	size_t start = len;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	const char *l = text + start;
	size_t n = len - start;
	static const char *const asks[] = { "y/n", "yes/no" };
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		size_t k = strlen(asks[i]);
		for (size_t j = 0; j + k <= n; j++)
			if (strncasecmp(l + j, asks[i], k) == 0)
				return 1;
	}
	return l[n - 1] == ':' || l[n - 1] == '?';
}
