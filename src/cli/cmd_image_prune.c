#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "image/store.h"
#include "base/units.h"

static int prune_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "build-cache", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_image_prune_report rep;
	struct sb_root *root;
	struct sb_error err;
	char freed[32];
	unsigned flags = 0;
	int json = 0, opt, rc;

	optind = 0; /* 0, not 1: resets glibc getopt */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'c')
			flags |= SB_IMAGE_PRUNE_BUILD_CACHE;
		else if (opt == 'j')
			json = 1;
		else
			return sb_cli_usage_error("image", &sb_cmd_image_prune, _("invalid option"));
	}
	if (optind != argc)
		return sb_cli_usage_error("image", &sb_cmd_image_prune, _("expected no operand"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_prune(&rep, root, flags, &err) < 0)
		return sb_cli_fail(&err);
	if (json)
		return sb_cli_print_json(json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "images", (json_int_t)rep.images,
						   "blobs", (json_int_t)rep.blobs, "rootfs", (json_int_t)rep.rootfs,
						   "partial", (json_int_t)rep.partial, "build_cache",
						   (json_int_t)rep.cache_entries, "bytes", (json_int_t)rep.bytes));
	sb_units_format_size(freed, sizeof(freed), rep.bytes, SB_UNITS_TEXT);
	if (flags & SB_IMAGE_PRUNE_BUILD_CACHE)
		printf(_("dropped %zu build cache entries\n"), rep.cache_entries);
	printf(_("removed %zu unused image(s), %zu blob(s), %zu unpacked tree(s), %zu partial download(s): "
		 "%s freed\n"),
	       rep.images, rep.blobs, rep.rootfs, rep.partial, freed);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_image_prune = {
	.name = "prune",
	.synopsis = "[--build-cache] [--json]",
	.summary = N_("remove unused images, blobs, unpacked trees and partial downloads"),
	.help = N_("  --build-cache  drop image build's step cache too: the intermediate images\n"
		   "                 it keeps (which a plain prune spares) go, the next build runs\n"
		   "                 every step\n"
		   "  --json         print what was removed as JSON\n"),
	.run = prune_run,
};
