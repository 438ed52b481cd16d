/* Secret redaction (base/redact.h): whole texts and streams cut at every
 * possible place, overlapping and repeated values, values refused as too
 * short, and the byte buffer it writes into. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/redact.h"

static const struct sb_secret secrets[] = {
	{ "TOKEN", "s3cr3t-token" },
	{ "PASS", "hunter2" },
	{ "LONGER", "hunter2-and-more" },
};

static struct sb_redact *make(void)
{
	struct sb_redact *r;
	struct sb_error err;

	cr_assert_eq(sb_redact_new(&r, secrets, 3, &err), 0, "%s", err.msg);
	return r;
}

Test(redact, whole_text)
{
	struct sb_redact *r = make();
	size_t len;
	char *out = sb_redact_text(r, "a s3cr3t-token b hunter2 c hunter2-and-more d", 45, &len);

	cr_assert_str_eq(out, "a [secret TOKEN] b [secret PASS] c [secret LONGER] d");
	cr_assert_eq(len, strlen(out));
	free(out);
	out = sb_redact_text(NULL, "plain", 5, NULL);
	cr_assert_str_eq(out, "plain");
	free(out);
	sb_redact_free(r);
}

/* Every split of the text into two feeds gives the same result as one text. */
Test(redact, stream_cut_anywhere)
{
	static const char text[] = "x=s3cr3t-token;hunter2hunter2-and-more hunter s3cr3t";
	struct sb_redact *r = make();
	char *want = sb_redact_text(r, text, strlen(text), NULL);

	for (size_t cut = 0; cut <= strlen(text); cut++) {
		struct sb_buf out = { 0 };
		cr_assert_eq(sb_redact_feed(r, &out, text, cut), 0);
		cr_assert_eq(sb_redact_feed(r, &out, text + cut, strlen(text) - cut), 0);
		cr_assert_eq(sb_redact_flush(r, &out), 0);
		cr_assert_str_eq(out.data, want, "cut at %zu", cut);
		cr_assert(!strstr(out.data, "s3cr3t-token") && !strstr(out.data, "hunter2"), "cut at %zu", cut);
		sb_buf_clear(&out);
	}
	free(want);
	sb_redact_free(r);
}

/* A stream of single bytes holds back a prefix, never passes on a value. */
Test(redact, stream_byte_by_byte)
{
	static const char text[] = "login hunter2\n";
	struct sb_redact *r = make();
	struct sb_buf out = { 0 };

	for (size_t i = 0; i < strlen(text); i++) {
		cr_assert_eq(sb_redact_feed(r, &out, text + i, 1), 0);
		cr_assert(!out.data || !strstr(out.data, "hunter2"));
	}
	cr_assert_eq(sb_redact_flush(r, &out), 0);
	cr_assert_str_eq(out.data, "login [secret PASS]\n");
	sb_buf_clear(&out);
	sb_redact_free(r);
}

Test(redact, refuses_short_values_and_parses_the_option)
{
	struct sb_secret bad = { "N", "ab" }, s;
	struct sb_redact *r = (struct sb_redact *)1;
	struct sb_error err;
	char arg[] = "API_KEY=abc=def", noeq[] = "API_KEY", noname[] = "=value";

	cr_assert_eq(sb_redact_new(&r, &bad, 1, &err), SB_ERR_INVALID);
	cr_assert_null(r);
	cr_assert(strstr(err.msg, "'N'"), "%s", err.msg);
	cr_assert_eq(sb_redact_new(&r, &bad, 1, NULL), SB_ERR_INVALID);
	cr_assert_eq(sb_secret_parse(&s, arg, &err), 0);
	cr_assert_str_eq(s.name, "API_KEY");
	cr_assert_str_eq(s.value, "abc=def");
	cr_assert_eq(sb_secret_parse(&s, noeq, &err), SB_ERR_INVALID);
	cr_assert_eq(sb_secret_parse(&s, noname, &err), SB_ERR_INVALID);
	cr_assert(!strstr(err.msg, "value"), "the message never shows the value: %s", err.msg);
}

Test(buf, grows_and_stays_terminated)
{
	struct sb_buf b = { 0 };
	size_t len;

	for (int i = 0; i < 1000; i++)
		cr_assert_eq(sb_buf_add(&b, "abc", 3), 0);
	cr_assert_eq(b.len, 3000);
	cr_assert_eq(b.data[3000], '\0');
	cr_assert_eq(sb_buf_add(&b, NULL, 0), 0);
	char *p = sb_buf_steal(&b, &len);
	cr_assert_eq(len, 3000);
	cr_assert_null(b.data);
	free(p);
	p = sb_buf_steal(&b, &len);
	cr_assert_str_eq(p, "");
	cr_assert_eq(len, 0);
	free(p);
}
