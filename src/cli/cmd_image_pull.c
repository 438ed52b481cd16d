#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "progress.h"
#include "registry/registry.h"

static int pull_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		SB_CLI_REGISTRY_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct sb_registry_opts opts = { 0 };
	struct sb_cli_progress progress;
	char digest[SB_DIGEST_STR_LEN], *canonical = NULL;
	struct sb_root *root;
	struct sb_error err;
	int opt, quiet = 0, json = 0, rc, status = SB_EXIT_OK;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "q", options, NULL)) != -1) {
		if (!sb_cli_registry_option(opt, &opts, &quiet, &json))
			return sb_cli_usage_error("image", &sb_cmd_image_pull, _("invalid option"));
	}
	if (optind == argc)
		return sb_cli_usage_error("image", &sb_cmd_image_pull, _("an image reference is needed"));
	if (optind + 1 < argc)
		return sb_cli_usage_error("image", &sb_cmd_image_pull, _("unexpected argument '%s'"), argv[optind + 1]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	sb_cli_progress_init(&progress, quiet || json);
	opts.progress = &progress.base;
	rc = sb_registry_pull(digest, &canonical, root, argv[optind], &opts, &err);
	sb_cli_progress_end(&progress);
	if (rc < 0)
		return sb_cli_fail(&err);
	if (json)
		status = sb_cli_print_json(json_pack("{s:s, s:s}", "reference", canonical, "digest", digest));
	else
		printf(_("pulled %s (%s)\n"), canonical, digest);
	free(canonical);
	return status;
}

const struct sb_cli_command sb_cmd_image_pull = {
	.name = "pull",
	.synopsis = "[--creds FILE] [--insecure] [--ca-file FILE] [--quiet] [--json] REF",
	.summary = N_("download an image from a registry, verify it and unpack it"),
	.help = N_("  --creds FILE     registry credentials: a file holding user:password (mode 0600);\n"
		   "                   default: the registry's entry in ROOT/credentials.json\n"
		   "  --insecure       plain HTTP instead of HTTPS\n"
		   "  --ca-file FILE   also trust this CA certificate (PEM)\n"
		   "  --quiet, -q      no progress on the terminal\n"
		   "  --json           print the result (reference, digest) as JSON\n"),
	.run = pull_run,
};
