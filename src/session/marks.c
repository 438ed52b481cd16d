/* Takes OSC 133 marks (ESC ] 133 ; BODY, ended by BEL or ESC \) out of the
 * program's output: the agent prompt hook reports each command's exit status
 * through them. A sequence split across reads is held back until it ends. */
#include "config.h"

#include <string.h>

#include "internal.h"

static const char intro[] = "\033]133;";
#define INTRO_LEN (sizeof(intro) - 1)

/* 1: pend is a whole mark (body given), 0: may still become one, -1: is none */
static int classify(const struct sess_marks *m, const char **body, size_t *blen)
{
	size_t k = m->n < INTRO_LEN ? m->n : INTRO_LEN;

	if (memcmp(m->pend, intro, k) != 0)
		return -1;
	if (m->n <= INTRO_LEN)
		return 0;
	char last = m->pend[m->n - 1];
	if (last == '\a' || (last == '\\' && m->pend[m->n - 2] == '\033')) {
		*body = m->pend + INTRO_LEN;
		*blen = m->n - INTRO_LEN - (last == '\a' ? 1 : 2);
		return 1;
	}
	if (last == '\033' || (last >= 0x20 && last < 0x7f))
		return m->n < sizeof(m->pend) ? 0 : -1;
	return -1;
}

void sess_marks_feed(struct sess_marks *m, const char *data, size_t len, const struct sess_marks_sink *sink)
{
	size_t plain = 0;   /* start of the plain run in data */

	for (size_t i = 0; i < len; i++) {
		if (m->n == 0 && data[i] != '\033')
			continue;
		if (m->n == 0) {
			if (i > plain)
				sink->out(sink->arg, data + plain, i - plain);
		}
		m->pend[m->n++] = data[i];
		plain = i + 1;
		const char *body;
		size_t blen;
		int c = classify(m, &body, &blen);
		if (c == 1) {
			char b[sizeof(m->pend)];
			memcpy(b, body, blen);
			b[blen] = '\0';
			m->n = 0;
			sink->mark(sink->arg, b);
		} else if (c < 0) {
			/* not a mark: the held bytes are output; an ESC at the end may begin one */
			int restart = m->pend[m->n - 1] == '\033' && m->n > 1;
			sink->out(sink->arg, m->pend, m->n - (size_t)restart);
			m->n = 0;
			if (restart)
				m->pend[m->n++] = '\033';
		}
	}
	if (m->n == 0 && len > plain)
		sink->out(sink->arg, data + plain, len - plain);
}

void sess_marks_flush(struct sess_marks *m, const struct sess_marks_sink *sink)
{
	if (m->n)
		sink->out(sink->arg, m->pend, m->n);
	m->n = 0;
}
