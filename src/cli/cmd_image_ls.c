#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "i18n.h"
#include "image_store.h"

static void print_table(const struct sb_image_info *list, size_t n)
{
	char size[32];

	printf("%-40s %-12s %-10s %-16s %s\n", _("REFERENCE"), _("DIGEST"), _("SIZE"), _("PLATFORM"), _("USED BY"));
	for (size_t i = 0; i < n; i++) {
		const struct sb_image_info *im = &list[i];
		sb_cli_format_size(size, sizeof(size), im->size);
		printf("%-40s %-12.12s %-10s %-16s ", im->ref[0] ? im->ref : _("<none>"), sb_digest_hex(im->digest),
		       size, im->platform ? im->platform : "-");
		for (size_t u = 0; u < im->n_used_by; u++)
			printf("%s%s", u ? "," : "", im->used_by[u]);
		printf("%s\n", im->n_used_by ? "" : "-");
	}
}

static int ls_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_image_info *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int opt, json = 0, rc;

	optind = 0; /* 0, not 1: resets glibc getopt, so options may follow operands */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else
			return sb_cli_usage_error("image", &sb_cmd_image_ls, _("invalid option"));
	}
	if (optind < argc)
		return sb_cli_usage_error("image", &sb_cmd_image_ls, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, sb_cli_image_json(&list[i]));
		sb_cli_print_json(arr);
	} else {
		print_table(list, n);
	}
	sb_image_list_free(list, n);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_image_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list installed images with their pinned digests and users"),
	.help = N_("  --json     print the images as JSON\n"),
	.run = ls_run,
};
