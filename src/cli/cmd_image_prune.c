#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "image/store.h"
#include "base/units.h"

static int prune_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_image_prune_report rep;
	struct sb_root *root;
	struct sb_error err;
	char freed[32];
	int json = 0, rc;

	if ((rc = sb_cli_parse_json(&json, "image", &sb_cmd_image_prune, argc, argv, NULL)) != 0)
		return rc;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_prune(&rep, root, &err) < 0)
		return sb_cli_fail(&err);
	if (json)
		return sb_cli_print_json(json_pack("{s:I, s:I, s:I, s:I, s:I}", "images", (json_int_t)rep.images,
						   "blobs", (json_int_t)rep.blobs, "rootfs", (json_int_t)rep.rootfs,
						   "partial", (json_int_t)rep.partial, "bytes", (json_int_t)rep.bytes));
	sb_units_format_size(freed, sizeof(freed), rep.bytes, SB_UNITS_TEXT);
	printf(_("removed %zu unused image(s), %zu blob(s), %zu unpacked tree(s), %zu partial download(s): "
		 "%s freed\n"),
	       rep.images, rep.blobs, rep.rootfs, rep.partial, freed);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_image_prune = {
	.name = "prune",
	.synopsis = "[--json]",
	.summary = N_("remove unused images, blobs, unpacked trees and partial downloads"),
	.help = N_("  --json     print what was removed as JSON\n"),
	.run = prune_run,
};
