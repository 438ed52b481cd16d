#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "image/bootstrap.h"
#include "progress.h"

static const char *const kind_names[] = {
	[SB_BOOTSTRAP_AUTO] = "auto",
	[SB_BOOTSTRAP_DEBIAN] = "debian",
	[SB_BOOTSTRAP_BUSYBOX] = "busybox",
};

static const char *const kind_descriptions[] = {
	[SB_BOOTSTRAP_AUTO] = "",
	[SB_BOOTSTRAP_DEBIAN] = N_("Debian bookworm + python3"),
	[SB_BOOTSTRAP_BUSYBOX] = N_("busybox"),
};

static int bootstrap_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "busybox", no_argument, NULL, 'b' },
		{ "debian", no_argument, NULL, 'd' },
		{ "mirror", required_argument, NULL, 'm' },
		{ "name", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_bootstrap_opts opts = { .kind = SB_BOOTSTRAP_AUTO };
	struct sb_bootstrap_result res;
	struct sb_cli_progress progress;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, quiet = 0, rc;

	optind = 0; /* 0, not 1: resets glibc getopt, so options may follow operands */
	while ((opt = getopt_long(argc, argv, "n:q", options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			opts.kind = SB_BOOTSTRAP_BUSYBOX;
			break;
		case 'd':
			opts.kind = SB_BOOTSTRAP_DEBIAN;
			break;
		case 'm':
			opts.mirror = optarg;
			break;
		case 'n':
			opts.name = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error("image", &sb_cmd_image_bootstrap, _("invalid option"));
		}
	}
	if (optind < argc)
		return sb_cli_usage_error("image", &sb_cmd_image_bootstrap, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (!quiet && !json && opts.kind != SB_BOOTSTRAP_BUSYBOX)
		fprintf(stderr, _("building the default image (Debian needs the mirror and takes a minute)...\n"));
	sb_cli_progress_init(&progress, quiet || json);
	opts.progress = &progress.base;
	rc = sb_image_bootstrap(&res, root, &opts, &err);
	sb_cli_progress_end(&progress);
	if (rc < 0)
		return sb_cli_fail(&err);
	if (json)
		return sb_cli_print_json(json_pack("{s:s, s:s, s:s, s:s?}", "kind", kind_names[res.built], "reference",
						   res.image.ref, "digest", res.image.digest, "fallback_reason",
						   res.fallback_reason[0] ? res.fallback_reason : NULL));
	if (res.fallback_reason[0])
		fprintf(stderr, _("sandbench: cannot build the Debian image (%s): built the busybox image instead\n"),
			res.fallback_reason);
	printf(_("built the %s image %s (%s)\n"), _(kind_descriptions[res.built]), res.image.ref, res.image.digest);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_image_bootstrap = {
	.name = "bootstrap",
	.synopsis = "[--busybox|--debian] [--mirror URL] [--name REF] [--quiet] [--json]",
	.summary = N_("build the default image without a registry (Debian + python3, or busybox)"),
	.help = N_("  --busybox     build the busybox image from the host's /bin/busybox\n"
		   "  --debian      build Debian bookworm + python3 with mmdebstrap (no fallback)\n"
		   "  --mirror URL  Debian mirror (default http://deb.debian.org/debian)\n"
		   "  --name REF    reference to give it (default localhost/sandbench/default:latest)\n"
		   "  --quiet       no progress on the terminal\n"
		   "  --json        print the result as JSON\n"),
	.run = bootstrap_run,
};
