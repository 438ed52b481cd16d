#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "base/units.h"
#include "progress.h"
#include "registry/registry.h"

static int print_result(const struct sb_registry_push_result *res, int json)
{
	char bytes[32];

	if (json)
		return sb_cli_print_json(sb_registry_push_result_json(res));
	sb_units_format_size(bytes, sizeof(bytes), res->bytes, SB_UNITS_TEXT);
	printf(_("pushed %s (%s): %u blobs uploaded (%s), %u already there, %u mounted\n"), res->reference, res->digest,
	       res->uploaded, bytes, res->existing, res->mounted);
	return SB_EXIT_OK;
}

static int push_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		SB_CLI_REGISTRY_OPTIONS,
		{ "chunk-size", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_registry_opts opts = { 0 };
	struct sb_registry_push_result res;
	struct sb_cli_progress progress;
	struct sb_root *root;
	struct sb_error err;
	int opt, quiet = 0, json = 0, rc, status;
	long long chunk;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "q", options, NULL)) != -1) {
		if (sb_cli_registry_option(opt, &opts, &quiet, &json))
			continue;
		if (opt != 'k')
			return sb_cli_usage_error("image", &sb_cmd_image_push, _("invalid option"));
		if ((chunk = sb_units_parse_size(optarg)) <= 0)
			return sb_cli_usage_error("image", &sb_cmd_image_push, _("--chunk-size wants a size such as 16m, not '%s'"),
						  optarg);
		opts.chunk_size = (unsigned long long)chunk;
	}
	if (optind == argc)
		return sb_cli_usage_error("image", &sb_cmd_image_push, _("an image reference is needed"));
	if (optind + 2 < argc)
		return sb_cli_usage_error("image", &sb_cmd_image_push, _("unexpected argument '%s'"), argv[optind + 2]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	sb_cli_progress_init(&progress, quiet || json);
	opts.progress = &progress.base;
	rc = sb_registry_push(&res, root, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL, &opts, &err);
	sb_cli_progress_end(&progress);
	if (rc < 0)
		return sb_cli_fail(&err);
	status = print_result(&res, json);
	sb_registry_push_result_clear(&res);
	return status;
}

const struct sb_cli_command sb_cmd_image_push = {
	.name = "push",
	.synopsis = "[--creds FILE] [--insecure] [--ca-file FILE] [--chunk-size SIZE] [--quiet] [--json] REF [DEST]",
	.summary = N_("upload an image of the store to a registry"),
	.help = N_("  REF              an installed image (reference or digest)\n"
		   "  DEST             registry/name[:tag] to push to; default: REF's own name\n"
		   "                   (a localhost/ name is on this machine only: give DEST)\n"
		   "  --creds FILE     registry credentials: a file holding user:password (mode 0600);\n"
		   "                   default: the registry's entry in ROOT/credentials.json\n"
		   "  --insecure       plain HTTP instead of HTTPS\n"
		   "  --ca-file FILE   also trust this CA certificate (PEM)\n"
		   "  --chunk-size SIZE  blobs larger than SIZE go up in chunks of SIZE (default 64m)\n"
		   "  --quiet, -q      no progress on the terminal\n"
		   "  --json           print the result (reference, digest, blobs) as JSON\n"),
	.run = push_run,
};
