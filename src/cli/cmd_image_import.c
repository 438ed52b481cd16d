#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "image/import.h"
#include "progress.h"

static int import_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_image_import_opts opts = { 0 };
	struct sb_image_import_result res;
	struct sb_cli_progress progress;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, quiet = 0, rc;

	optind = 0; /* 0, not 1: resets glibc getopt, so options may follow operands */
	while ((opt = getopt_long(argc, argv, "n:q", options, NULL)) != -1) {
		if (opt == 'n')
			opts.name = optarg;
		else if (opt == 'q')
			quiet = 1;
		else if (opt == 'j')
			json = 1;
		else
			return sb_cli_usage_error("image", &sb_cmd_image_import, _("invalid option"));
	}
	if (optind != argc - 1)
		return sb_cli_usage_error("image", &sb_cmd_image_import, _("expected one PATH"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	sb_cli_progress_init(&progress, quiet || json);
	opts.progress = &progress.base;
	rc = sb_image_import(&res, root, argv[optind], &opts, &err);
	sb_cli_progress_end(&progress);
	if (rc < 0)
		return sb_cli_fail(&err);
	if (json)
		return sb_cli_print_json(json_pack("{s:s?, s:s, s:s}", "reference", res.ref[0] ? res.ref : NULL,
						   "digest", res.digest, "format", res.format));
	if (res.ref[0])
		printf(_("imported %s (%s)\n"), res.ref, res.digest);
	else
		printf(_("imported %s (no name: use --name to give it one)\n"), res.digest);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_image_import = {
	.name = "import",
	.synopsis = "PATH [--name REF] [--quiet] [--json]",
	.summary = N_("import an OCI layout or archive, a docker save tar, or a rootfs tar"),
	.help = N_("  --name REF   the image's reference (required for a plain rootfs tar;\n"
		   "               chooses the image when PATH holds several); without a\n"
		   "               registry it is put under localhost/, like the input's own name\n"
		   "  --quiet      no progress on the terminal\n"
		   "  --json       print the result as JSON\n"),
	.run = import_run,
};
