#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "image/store.h"
#include "base/units.h"

static void print_table(const struct sb_image_info *list, size_t n)
{
	char size[32];

	printf("%-40s %-12s %-10s %-16s %-12s %s\n", _("REFERENCE"), _("DIGEST"), _("SIZE"), _("PLATFORM"), _("PARENT"),
	       _("USED BY"));
	for (size_t i = 0; i < n; i++) {
		const struct sb_image_info *im = &list[i];
		sb_units_format_size(size, sizeof(size), im->size, SB_UNITS_TEXT);
		printf("%-40s %-12.12s %-10s %-16s %-12.12s ", im->ref[0] ? im->ref : _("<none>"), sb_digest_hex(im->digest),
		       size, im->platform ? im->platform : "-", im->parent[0] ? sb_digest_hex(im->parent) : "-");
		for (size_t u = 0; u < im->n_used_by; u++)
			printf("%s%s", u ? "," : "", im->used_by[u]);
		printf("%s\n", im->n_used_by ? "" : "-");
	}
}

static int ls_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_image_info *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int json = 0, rc, status = SB_EXIT_OK;

	if ((rc = sb_cli_parse_json(&json, "image", &sb_cmd_image_ls, argc, argv, NULL)) != 0)
		return rc;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			arr = sb_json_append(arr, sb_image_info_json(&list[i]));
		status = sb_cli_print_json(arr);
	} else {
		print_table(list, n);
	}
	sb_image_list_free(list, n);
	return status;
}

const struct sb_cli_command sb_cmd_image_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list installed images with their pinned digests and users"),
	.help = N_("  --json     print the images as JSON\n"),
	.run = ls_run,
};
