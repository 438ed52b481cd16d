/* Fuzz target: the bytes are what a session socket delivers, taken frame by
 * frame as client and holder do, each payload decoded as its reader does
 * (events and status as JSON, offsets, error codes). Every frame taken lies
 * inside the buffer and is written back byte for byte by sess_frame_put; an
 * event, normalised once, is a fixed point. */
#include "config.h"

#include "fuzz.h"
#include "session/internal.h"

static void decode(const struct sess_frame *f)
{
	switch (f->type) {
	case MSG_OK:
	case MSG_SUBSCRIBE:
		(void)sess_get64(f->p);
		break;
	case MSG_OUTPUT:
		FUZZ_CHECK(f->len >= 16);
		(void)(sess_get64(f->p) + sess_get64(f->p + 8));
		break;
	case MSG_ERROR: {
		/* the client turns the holder's code into its error */
		int code = (int)((uint32_t)f->p[0] | (uint32_t)f->p[1] << 8 | (uint32_t)f->p[2] << 16 | (uint32_t)f->p[3] << 24);
		struct sb_error err;
		sb_error_set(&err, code < 0 ? code : SB_ERR_IO, "%.*s", (int)(f->len - 4), f->p + 4);
		FUZZ_CHECK(sb_error_name(err.code) != NULL);
		break;
	}
	case MSG_EVENT: {
		struct sb_session_event e, e2;
		if (sess_event_parse(&e, (const char *)f->p, f->len) == 0) {
			json_t *j = sess_event_json(&e);
			char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
			FUZZ_CHECK(text && sess_event_parse(&e2, text, strlen(text)) == 0);
			json_t *j2 = sess_event_json(&e2);
			FUZZ_CHECK(j2 && json_equal(j, j2));
			json_decref(j2);
			json_decref(j);
			free(text);
			sb_session_event_clear(&e2);
			sb_session_event_clear(&e);
		}
		break;
	}
	case MSG_STATE: {
		json_t *doc = json_loadb((const char *)f->p, f->len, 0, NULL);
		struct sess_status st;
		unsigned long long offset, first;
		char controller[16];
		int watchers;
		sess_status_from_json(&st, &offset, &first, controller, &watchers, doc);
		FUZZ_CHECK(memchr(controller, '\0', sizeof(controller)) && memchr(st.reason, '\0', sizeof(st.reason)));
		json_decref(doc);
		break;
	}
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_buf in = { 0 }, out = { 0 };
	struct sess_frame f;
	size_t off = 0, was;
	int rc;

	/* a reader's buffer is NUL-terminated past its length (sess_fill) */
	FUZZ_CHECK(sb_buf_add(&in, data, size) == 0);
	if (!in.data)
		return 0;
	while ((was = off, rc = sess_frame_take(&f, &in, &off, NULL)) == 1) {
		FUZZ_CHECK(off > was && off <= in.len);
		FUZZ_CHECK(f.p == (const unsigned char *)in.data + was + 5 && f.p + f.len == (const unsigned char *)in.data + off);
		FUZZ_CHECK(f.len <= SESS_FRAME_MAX + 64);
		out.len = 0;
		FUZZ_CHECK(sess_frame_put(&out, f.type, f.p, f.len, NULL, 0) == 0);
		FUZZ_CHECK(out.len == off - was && !memcmp(out.data, in.data + was, out.len));
		decode(&f);
	}
	FUZZ_CHECK(rc == 0 || rc == SB_ERR_FORMAT);
	FUZZ_CHECK(rc != 0 || off == in.len || in.len - off < 4 + 1 + SESS_FRAME_MAX + 64);
	sb_buf_clear(&in);
	sb_buf_clear(&out);
	return 0;
}
