/* Image reference parsing: Docker habits and the rejects. */
#include "config.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "image/ref.h"

struct ref_case {
	const char *in, *canonical;
};

static const struct ref_case good[] = {
	{ "busybox", "docker.io/library/busybox:latest" },
	{ "python:3.12", "docker.io/library/python:3.12" },
	{ "user/app:v1", "docker.io/user/app:v1" },
	{ "localhost/app", "localhost/app:latest" },
	{ "127.0.0.1:5000/a/b:tag-1.2", "127.0.0.1:5000/a/b:tag-1.2" },
	{ "ghcr.io/org/tool@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	  "ghcr.io/org/tool@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "x:1@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	  "docker.io/library/x:1@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "sandbench/default:latest", "docker.io/sandbench/default:latest" },
};

Test(image_ref, normalises_docker_habits)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct sb_image_ref ref;
		struct sb_error err;
		cr_assert_eq(sb_image_ref_parse(&ref, good[i].in, &err), 0, "%s: %s", good[i].in, err.msg);
		char *s = sb_image_ref_format(&ref);
		cr_assert_str_eq(s, good[i].canonical);
		free(s);
		sb_image_ref_clear(&ref);
	}
}

Test(image_ref, splits_registry_port_from_tag)
{
	struct sb_image_ref ref;

	cr_assert_eq(sb_image_ref_parse(&ref, "localhost:5000/app", NULL), 0);
	cr_assert_str_eq(ref.registry, "localhost:5000");
	cr_assert_str_eq(ref.repository, "app");
	cr_assert_str_eq(ref.tag, "latest");
	cr_assert_null(ref.digest);
	sb_image_ref_clear(&ref);
}

Test(image_ref, rejects_bad_references)
{
	static const char *const bad[] = {
		"", "UPPER/case", "a//b", "app:", "app:-x", "app@sha256:1234", "a/b/", "/abs", "app:t@md5:00",
		"bad host!/x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sb_image_ref ref;
		struct sb_error err;
		cr_assert_eq(sb_image_ref_parse(&ref, bad[i], &err), SB_ERR_INVALID, "accepted '%s'", bad[i]);
		cr_assert(strstr(err.msg, "invalid image reference"));
		cr_assert_null(ref.repository);
	}
}

/* A reference whose full form (registry, library/, tag) would not parse
 * again is refused, though its short form fits (found by fuzz-image-ref). */
Test(image_ref, full_form_must_fit)
{
	char s[600];
	struct sb_image_ref ref;
	struct sb_error err;

	memset(s, 'a', 500);
	s[500] = '\0';
	cr_assert_eq(sb_image_ref_parse(&ref, s, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "longer than 512"), "%s", err.msg);
	s[480] = '\0';
	cr_assert_eq(sb_image_ref_parse(&ref, s, &err), 0, "%s", err.msg);
	sb_image_ref_clear(&ref);
}

/* Images made here are named under localhost/, never under Docker Hub. */
Test(image_ref, local_names)
{
	static const char *const cases[][2] = {
		{ "tools", "localhost/tools:latest" },
		{ "tools:1", "localhost/tools:1" },
		{ "team/tools", "localhost/team/tools:latest" },
		{ "localhost/tools:2", "localhost/tools:2" },
		{ "registry.example:5000/team/tools:1", "registry.example:5000/team/tools:1" },
		{ "docker.io/me/tools", "docker.io/me/tools:latest" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;
		cr_assert_eq(sb_image_ref_local(&out, cases[i][0], NULL), 0, "refused '%s'", cases[i][0]);
		cr_assert_str_eq(out, cases[i][1]);
		free(out);
	}
	static const char *const bad[] = { "Tools", "x@sha256:0000000000000000000000000000000000000000000000000000000000000000",
					   "", "a//b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = (char *)"untouched";
		struct sb_error err;
		cr_assert_eq(sb_image_ref_local(&out, bad[i], &err), SB_ERR_INVALID, "accepted '%s'", bad[i]);
		cr_assert_null(out);
	}
}
