/* Fuzz target: the bytes are what a sandbox's control socket answers, read
 * by sb_urpc_decode (src/backend/runsc/urpc.c: a parser that allocates
 * nothing, because a forked child reads replies too). jansson is the oracle:
 * a reply it reads (the three members with their types, nested no deeper
 * than the parser goes) is read the same, and what the parser takes jansson
 * takes too, but for what the parser does not check: the text of strings
 * (UTF-8, \u escapes), the size of a real, the keys inside the result;
 * jansson passes over NUL bytes, which the parser refuses.
 * The stream reader's end of the frame is where a reply ends. */
#include "config.h"

#include <jansson.h>

#include "backend/runsc/internal.h"
#include "fuzz.h"

/* levels of objects and arrays a result may have: the reply is one more
 * (URPC_MAX_DEPTH) */
#define RESULT_DEPTH 15

/* Levels of objects and arrays in v, counted no further than RESULT_DEPTH + 1
 * (all the oracle asks): each child is measured once, and a deep chain costs
 * no more than its cap. */
static size_t depth(const json_t *v)
{
	size_t d = 0, i;
	const char *k;
	json_t *c;

	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, c) {
			size_t cd = depth(c);
			d = cd > d ? cd : d;
			if (d > RESULT_DEPTH)
				break;
		}
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, c) {
			size_t cd = depth(c);
			d = cd > d ? cd : d;
			if (d > RESULT_DEPTH)
				break;
		}
	} else {
		return 0;
	}
	return d + 1;
}

/* A refusal of jansson's for what the parser leaves unchecked. */
static int unchecked(const json_error_t *e)
{
	static const char *const texts[] = { "unable to decode byte", "invalid Unicode", "real number overflow",
					     "duplicate object key", "NUL byte in object key" };

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (strstr(e->text, texts[i]))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct sb_urpc_reply r;
	json_error_t e;
	json_t *doc = json_loadb(text, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &e);
	json_t *success = json_object_get(doc, "success"), *msg = json_object_get(doc, "err");
	json_t *result = json_object_get(doc, "result");
	int rc = sb_urpc_decode(&r, text, size);
	int reply = json_is_object(doc) && json_object_size(doc) == 3 && json_is_boolean(success) &&
		    json_is_string(msg) && result && !(json_is_true(success) && json_string_length(msg) > 0);

	/* jansson passes over a NUL byte between tokens, which JSON has not */
	if (reply && depth(result) <= RESULT_DEPTH && !memchr(text, '\0', size)) {
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(r.success == json_is_true(success));
		FUZZ_CHECK(r.has_result == json_is_integer(result));
		FUZZ_CHECK(!r.has_result || r.result == json_integer_value(result));
		/* the text, cut, where no \u escape made it differ */
		size_t len = json_string_length(msg), keep = len < sizeof(r.err) - 1 ? len : sizeof(r.err) - 1;
		if (!memmem(text, size, "\\u", 2))
			FUZZ_CHECK(strlen(r.err) == keep && !memcmp(r.err, json_string_value(msg), keep));
	}
	if (rc == 0) {
		FUZZ_CHECK(reply || (!doc && unchecked(&e)));
		/* a whole reply is one frame, and the stream reader ends it there */
		size_t end;
		FUZZ_CHECK(sb_urpc_frame_end(&end, text, size) == 1);
		while (end < size && strchr(" \t\r\n", text[end]) && text[end])
			end++;
		FUZZ_CHECK(end == size);
	} else {
		FUZZ_CHECK(rc == SB_ERR_FORMAT && !r.success && !r.has_result && !r.err[0]);
	}
	json_decref(doc);
	return 0;
}
