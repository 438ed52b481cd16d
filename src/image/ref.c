#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/ref.h"

#define MAX_REF_LEN 512
#define MAX_TAG_LEN 128

/* A registry is named when the first component looks like a host: it has a dot
 * or a port, or is "localhost" (the rule Docker uses). */
static int is_registry(const char *s, size_t n)
{
	return memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && !strncmp(s, "localhost", 9));
}

static int valid_tag(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > MAX_TAG_LEN || t[0] == '.' || t[0] == '-')
		return 0;
	return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* Path components: lowercase alphanumerics separated by '.', '_', '__' or '-'s. */
static int valid_repository(const char *r)
{
	const char *alnum = "abcdefghijklmnopqrstuvwxyz0123456789";

	if (!*r)
		return 0;
	for (const char *c = r; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || !strchr(alnum, c[0]) || !strchr(alnum, c[n - 1]))
			return 0;
		if (strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789._-") < n)
			return 0;
		c += n + (c[n] == '/');
		if (c[-1] == '/' && !*c)
			return 0;
	}
	return 1;
}

static int valid_host(const char *h)
{
	return *h && strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == strlen(h);
}

/* The length of sb_image_ref_format's text. */
static size_t full_length(const struct sb_image_ref *ref)
{
	return strlen(ref->registry) + 1 + strlen(ref->repository) + (ref->tag ? 1 + strlen(ref->tag) : 0) +
	       (ref->digest ? 1 + strlen(ref->digest) : 0);
}

int sb_image_ref_parse(struct sb_image_ref *ref, const char *s, struct sb_error *err)
{
	char *copy, *name, *at, *slash, *colon;
	int rc = 0;

	memset(ref, 0, sizeof(*ref));
	if (!s || !*s || strlen(s) > MAX_REF_LEN)
		return sb_error_set(err, SB_ERR_INVALID, _("invalid image reference '%s'"), s ? s : "");
	copy = strdup(s);
	if (!copy)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	name = copy;
	at = strchr(name, '@');
	if (at) {
		*at = '\0';
		if (!sb_digest_valid(at + 1)) {
			rc = sb_error_set(err, SB_ERR_INVALID, _("invalid image reference '%s': '%s' is not a sha256 digest"),
					  s, at + 1);
			goto out;
		}
		ref->digest = strdup(at + 1);
	}
	slash = strchr(name, '/');
	if (slash && is_registry(name, (size_t)(slash - name))) {
		*slash = '\0';
		ref->registry = strdup(name);
		name = slash + 1;
	} else {
		ref->registry = strdup(SB_IMAGE_DEFAULT_REGISTRY);
	}
	/* a tag colon comes after the last slash (a registry port was split off above) */
	slash = strrchr(name, '/');
	colon = strrchr(slash ? slash : name, ':');
	if (colon) {
		*colon = '\0';
		if (!valid_tag(colon + 1)) {
			rc = sb_error_set(err, SB_ERR_INVALID, _("invalid image reference '%s': bad tag '%s'"), s, colon + 1);
			goto out;
		}
		ref->tag = strdup(colon + 1);
	} else if (!ref->digest) {
		ref->tag = strdup(SB_IMAGE_DEFAULT_TAG);
	}
	/* a digest or tag lost to a failed copy would unpin the reference */
	if (!ref->registry || (at && !ref->digest) || (!ref->tag && (colon || !ref->digest))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if (!strcmp(ref->registry, SB_IMAGE_DEFAULT_REGISTRY) && !strchr(name, '/'))
		ref->repository = sb_strdupf("library/%s", name);
	else
		ref->repository = strdup(name);
	if (!ref->repository) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if (!valid_host(ref->registry) || !valid_repository(ref->repository))
		rc = sb_error_set(err, SB_ERR_INVALID,
				  _("invalid image reference '%s': names are lowercase letters, digits and . _ - separated by /"), s);
	/* what is stored and compared is the full form, which must parse again */
	else if (full_length(ref) > MAX_REF_LEN)
		rc = sb_error_set(err, SB_ERR_INVALID,
				  _("invalid image reference '%s': longer than %d characters with its registry and tag"), s,
				  MAX_REF_LEN);
out:
	free(copy);
	if (rc < 0)
		sb_image_ref_clear(ref);
	return rc;
}

char *sb_image_ref_format(const struct sb_image_ref *ref)
{
	return sb_strdupf("%s/%s%s%s%s%s", ref->registry, ref->repository, ref->tag ? ":" : "",
			  ref->tag ? ref->tag : "", ref->digest ? "@" : "", ref->digest ? ref->digest : "");
}

void sb_image_ref_clear(struct sb_image_ref *ref)
{
	if (!ref)
		return;
	free(ref->registry);
	free(ref->repository);
	free(ref->tag);
	free(ref->digest);
	memset(ref, 0, sizeof(*ref));
}

int sb_image_ref_local(char **out, const char *s, struct sb_error *err)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	struct sb_image_ref ref;
	int rc;

	*out = NULL;
	if (s && strchr(s, '@'))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid image reference '%s': a new image has no digest yet"), s);
	char *full = s && !(slash && is_registry(s, (size_t)(slash - s))) ? sb_strdupf("localhost/%s", s)
									 : s ? strdup(s) : NULL;
	if (s && !full)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_image_ref_parse(&ref, full ? full : s, err)) == 0) {
		if (!(*out = sb_image_ref_format(&ref)))
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		sb_image_ref_clear(&ref);
	}
	free(full);
	return rc;
}
