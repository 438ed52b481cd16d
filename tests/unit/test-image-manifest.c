/* Manifest, index and config parsing: strict, with OCI and Docker schema2 types. */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "image/manifest.h"

#define S(x) x, strlen(x)

static const char oci_manifest[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
	"\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:"
	"1111111111111111111111111111111111111111111111111111111111111111\",\"size\":12},"
	"\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+zstd\",\"digest\":\"sha256:"
	"2222222222222222222222222222222222222222222222222222222222222222\",\"size\":34}]}";

static const char docker_list[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.list.v2+json\","
	"\"manifests\":["
	"{\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"digest\":\"sha256:"
	"3333333333333333333333333333333333333333333333333333333333333333\",\"size\":5,"
	"\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:"
	"5555555555555555555555555555555555555555555555555555555555555555\",\"size\":5,"
	"\"platform\":{\"architecture\":\"unknown\",\"os\":\"unknown\"}},"
	"{\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"digest\":\"sha256:"
	"4444444444444444444444444444444444444444444444444444444444444444\",\"size\":6,"
	"\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}}]}";

Test(image_manifest, oci_manifest)
{
	struct sb_image_manifest m;
	struct sb_error err;

	cr_assert_eq(sb_image_manifest_parse(&m, S(oci_manifest), "m", &err), 0, "%s", err.msg);
	cr_assert_eq(m.is_index, 0);
	cr_assert_str_eq(m.config.digest, "sha256:1111111111111111111111111111111111111111111111111111111111111111");
	cr_assert_eq(m.config.size, 12);
	cr_assert_eq(m.n_layers, 1);
	cr_assert_str_eq(m.layers[0].media_type, SB_MEDIA_OCI_LAYER_ZSTD);
	cr_assert_eq(m.layers[0].size, 34);
	sb_image_manifest_clear(&m);
	sb_image_manifest_clear(NULL);
}

Test(image_manifest, index_selects_host_platform)
{
	struct sb_image_manifest m;
	const struct sb_descriptor *d;
	struct sb_error err;

	cr_assert_eq(sb_image_manifest_parse(&m, S(docker_list), "idx", &err), 0, "%s", err.msg);
	cr_assert_eq(m.is_index, 1);
	cr_assert_eq(m.n_manifests, 3);
	cr_assert_eq(sb_image_index_select(&d, &m, "linux", "amd64", &err), 0);
	cr_assert_str_eq(d->digest, "sha256:4444444444444444444444444444444444444444444444444444444444444444");
	cr_assert_eq(sb_image_index_select(&d, &m, "linux", "arm64", &err), 0);
	cr_assert_str_eq(d->variant, "v8");
	cr_assert_eq(sb_image_index_select(&d, &m, NULL, NULL, &err), 0);
	cr_assert_str_eq(d->arch, sb_image_host_arch());
	cr_assert_eq(sb_image_index_select(&d, &m, "linux", "s390x", &err), SB_ERR_NOTFOUND);
	cr_assert_null(d);
	cr_assert(strstr(err.msg, "linux/arm64/v8, linux/amd64"), "%s", err.msg);
	sb_image_manifest_clear(&m);
}

Test(image_manifest, rejects_bad_documents)
{
	static const struct {
		const char *doc, *needle;
	} cases[] = {
		{ "not json", "blob-x is not valid JSON" },
		{ "[1]", "not a JSON object" },
		{ "{\"schemaVersion\":1,\"name\":\"x\"}", "schema1" },
		{ "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v1+json\"}", "schema1" },
		{ "{\"schemaVersion\":2,\"mediaType\":\"text/html\"}", "unsupported media type 'text/html'" },
		{ "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
		  "\"digest\":\"sha512:00\",\"size\":1},\"layers\":[]}", "unsupported digest algorithm" },
		{ "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
		  "\"digest\":\"sha256:1111111111111111111111111111111111111111111111111111111111111111\",\"size\":-1},"
		  "\"layers\":[]}", "no valid size" },
		{ "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\","
		  "\"digest\":\"sha256:1111111111111111111111111111111111111111111111111111111111111111\",\"size\":1},"
		  "\"layers\":[]}", "not a container image" },
		{ "{\"schemaVersion\":2,\"manifests\":[],\"manifests\":[]}", "duplicate" },
		{ "{\"schemaVersion\":3,\"manifests\":[]}", "schemaVersion" },
	};
	struct sb_image_manifest m;
	struct sb_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(sb_image_manifest_parse(&m, S(cases[i].doc), "blob-x", &err), SB_ERR_FORMAT, "case %zu", i);
		cr_assert(strstr(err.msg, cases[i].needle), "case %zu: %s", i, err.msg);
		cr_assert_null(m.layers);
	}
}

Test(image_manifest, config)
{
	static const char doc[] = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"2024-01-01T00:00:00Z\","
				  "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:"
				  "6666666666666666666666666666666666666666666666666666666666666666\"]}}";
	struct sb_image_config c;
	struct sb_error err;

	cr_assert_eq(sb_image_config_parse(&c, S(doc), "cfg", &err), 0, "%s", err.msg);
	cr_assert_str_eq(c.arch, "amd64");
	cr_assert_str_eq(c.created, "2024-01-01T00:00:00Z");
	cr_assert_eq(c.n_diff_ids, 1);
	sb_image_config_clear(&c);
	cr_assert_eq(sb_image_config_parse(&c, S("{\"os\":\"linux\",\"architecture\":\"amd64\"}"), "cfg", &err),
		     SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, "rootfs"), "%s", err.msg);
}
