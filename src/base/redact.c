/* Secret redaction as a stream. Output is scanned once: bytes that cannot
 * start a secret (a 256-entry table of first bytes) are copied in runs; at a
 * possible start every secret is compared. A tail that is a proper prefix of
 * a secret is held back, so a value split across two reads is still found. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/redact.h"

struct secret {
	char *value, *mark;
	size_t len, mark_len;
};

struct sb_redact {
	struct secret *v;
	size_t n;
	unsigned char first[256];
	struct sb_buf held;
};

int sb_redact_new(struct sb_redact **out, const struct sb_secret *secrets, size_t n, struct sb_error *err)
{
	struct sb_redact *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || (n && !(r->v = calloc(n, sizeof(*r->v))))) {
		free(r);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	for (size_t i = 0; i < n; i++) {
		const struct sb_secret *s = &secrets[i];
		if (!s->name || !s->name[0] || !s->value || strlen(s->value) < SB_REDACT_MIN_VALUE) {
			sb_redact_free(r);
			return sb_error_set(err, SB_ERR_INVALID,
					    _("secret '%s': the value must be at least %d bytes long"),
					    s->name ? s->name : "", SB_REDACT_MIN_VALUE);
		}
		struct secret *e = &r->v[r->n++];
		e->value = strdup(s->value);
		e->mark = sb_strdupf("[secret %s]", s->name);
		if (!e->value || !e->mark) {
			sb_redact_free(r);
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		}
		e->len = strlen(e->value);
		e->mark_len = strlen(e->mark);
		r->first[(unsigned char)e->value[0]] = 1;
	}
	*out = r;
	return 0;
}

void sb_redact_free(struct sb_redact *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].value);
		free(r->v[i].mark);
	}
	free(r->v);
	sb_buf_clear(&r->held);
	free(r);
}

/* Copies p[0, len) to out with secrets replaced; returns how many bytes it
 * consumed (less than len when the rest may begin a secret and !final), or
 * -ENOMEM. The longest secret that matches wins. */
static long scan(const struct sb_redact *r, struct sb_buf *out, const char *p, size_t len, int final)
{
	size_t run = 0, i = 0;

	while (i < len) {
		if (!r->first[(unsigned char)p[i]]) {
			i++;
			continue;
		}
		const struct secret *hit = NULL;
		int partial = 0;
		for (size_t k = 0; k < r->n; k++) {
			const struct secret *s = &r->v[k];
			if (len - i >= s->len) {
				if (memcmp(p + i, s->value, s->len) == 0 && (!hit || s->len > hit->len))
					hit = s;
			} else if (memcmp(p + i, s->value, len - i) == 0) {
				partial = 1;
			}
		}
		if (!hit && !(partial && !final)) {
			i++;
			continue;
		}
		if (sb_buf_add(out, p + run, i - run) < 0)
			return -ENOMEM;
		/* a longer secret may still match here: the next bytes decide */
		if (partial && !final)
			return (long)i;
		if (sb_buf_add(out, hit->mark, hit->mark_len) < 0)
			return -ENOMEM;
		i += hit->len;
		run = i;
	}
	return sb_buf_add(out, p + run, len - run) < 0 ? -ENOMEM : (long)len;
}

static int feed(struct sb_redact *r, struct sb_buf *out, const char *p, size_t len, int final)
{
	long used = scan(r, out, p, len, final);

	if (used < 0)
		return -ENOMEM;
	sb_buf_clear(&r->held);
	return sb_buf_add(&r->held, p + used, len - (size_t)used);
}

int sb_redact_feed(struct sb_redact *r, struct sb_buf *out, const void *data, size_t len)
{
	if (!r->held.len)
		return feed(r, out, data, len, 0);
	struct sb_buf all = { 0 };
	int rc = sb_buf_add(&all, r->held.data, r->held.len);
	if (rc == 0 && (rc = sb_buf_add(&all, data, len)) == 0)
		rc = feed(r, out, all.data, all.len, 0);
	sb_buf_clear(&all);
	return rc;
}

int sb_redact_flush(struct sb_redact *r, struct sb_buf *out)
{
	if (!r->held.len)
		return 0;
	size_t len;
	char *p = sb_buf_steal(&r->held, &len);
	int rc = p ? feed(r, out, p, len, 1) : -ENOMEM;
	free(p);
	return rc;
}

char *sb_redact_text(const struct sb_redact *r, const void *data, size_t len, size_t *out_len)
{
	struct sb_buf out = { 0 };
	static const struct sb_redact none;

	if (scan(r ? r : &none, &out, data, len, 1) < 0) {
		sb_buf_clear(&out);
		return NULL;
	}
	return sb_buf_steal(&out, out_len);
}

int sb_secret_parse(struct sb_secret *out, char *s, struct sb_error *err)
{
	char *eq = strchr(s, '=');

	if (!eq || eq == s)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not of the form NAME=VALUE"), eq ? "=..." : s);
	*eq = '\0';
	out->name = s;
	out->value = eq + 1;
	return 0;
}
