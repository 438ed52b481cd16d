/* The default image: the bootstrap base, then a readable recipe built on it
 * like any Dockerfile (sandbox/build.h). */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/i18n.h"
#include "sandbox/build.h"

#define RECIPE "default.Dockerfile"

/* The installed recipe, else the source tree's: `./setup && ./sandbench`
 * runs a build that was never installed. */
static const char *shipped_recipe(void)
{
	static const char *const where[] = { SB_DATADIR "/" RECIPE, SB_SRCDIR "/data/" RECIPE };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], R_OK) == 0)
			return where[i];
	return NULL;
}

int sb_build_default_image(struct sb_default_image_result *out, struct sb_root *root,
			   const struct sb_default_image_opts *o, struct sb_error *err)
{
	struct sb_bootstrap_opts base = o->base;
	const char *recipe = o->recipe ? o->recipe : shipped_recipe();
	char context[sizeof(out->recipe)];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!recipe)
		return sb_error_set(err, SB_ERR_PREREQ, _("the default image's recipe %s is not installed in %s"),
				    RECIPE, SB_DATADIR);
	if (access(recipe, R_OK) < 0)
		return sb_error_errno(err, SB_ERR_NOTFOUND, errno, _("cannot read the recipe '%s'"), recipe);
	snprintf(out->recipe, sizeof(out->recipe), "%s", recipe);
	snprintf(context, sizeof(context), "%s", recipe);
	base.name = SB_IMAGE_BASE_NAME;
	if ((rc = sb_image_bootstrap(&out->base, root, &base, err)) < 0)
		return rc;
	struct sb_build_opts bo = { .context = dirname(context), .dockerfile = recipe, .ref = SB_IMAGE_DEFAULT_NAME,
				    .log_fd = o->log_fd, .progress = o->progress, .user = o->user };
	if ((rc = sb_build(&out->image, root, &bo, err)) < 0)
		sb_error_wrap(err, _("the default image from %s"), recipe);
	return rc;
}

void sb_default_image_result_clear(struct sb_default_image_result *r)
{
	if (r)
		sb_build_result_clear(&r->image);
}
