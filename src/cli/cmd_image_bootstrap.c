#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "sandbox/build.h"
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

/* "Step 2/5: ENV ..." on stderr, as image build prints it */
static void show_step(void *user, const struct sb_build_event *ev)
{
	(void)user;
	fprintf(stderr, _("Step %zu/%zu: %s %s%s\n"), ev->step, ev->n_steps, ev->word, ev->args,
		ev->cached ? _(" (cached)") : "");
}

static int bootstrap_print(const struct sb_bootstrap_result *base, const struct sb_build_result *image,
			   const char *recipe, int json)
{
	if (json)
		return sb_cli_print_json(json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "kind", kind_names[base->built],
						   "reference", image ? image->ref : base->image.ref, "digest",
						   image ? image->digest : base->image.digest, "base",
						   image ? base->image.ref : NULL, "base_digest",
						   image ? base->image.digest : NULL, "recipe", recipe, "fallback_reason",
						   base->fallback_reason[0] ? base->fallback_reason : NULL));
	if (base->fallback_reason[0])
		fprintf(stderr, _("sandbench: cannot build the Debian image (%s): built the busybox image instead\n"),
			base->fallback_reason);
	printf(_("built the %s image %s (%s)\n"), _(kind_descriptions[base->built]), base->image.ref, base->image.digest);
	if (image)
		printf(_("built the default image %s (%s) from %s\n"), image->ref, image->digest, recipe);
	return SB_EXIT_OK;
}

static int bootstrap_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "busybox", no_argument, NULL, 'b' },
		{ "debian", no_argument, NULL, 'd' },
		{ "mirror", required_argument, NULL, 'm' },
		{ "name", required_argument, NULL, 'n' },
		{ "file", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_default_image_opts opts = { .base = { .kind = SB_BOOTSTRAP_AUTO }, .log_fd = 2, .progress = show_step };
	struct sb_default_image_result res;
	struct sb_cli_progress progress;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, quiet = 0, rc;

	optind = 0; /* 0, not 1: resets glibc getopt, so options may follow operands */
	while ((opt = getopt_long(argc, argv, "n:f:q", options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			opts.base.kind = SB_BOOTSTRAP_BUSYBOX;
			break;
		case 'd':
			opts.base.kind = SB_BOOTSTRAP_DEBIAN;
			break;
		case 'm':
			opts.base.mirror = optarg;
			break;
		case 'n':
			opts.base.name = optarg;
			break;
		case 'f':
			opts.recipe = optarg;
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
	if (opts.base.name && opts.recipe)
		return sb_cli_usage_error("image", &sb_cmd_image_bootstrap,
					  _("--name makes a base image only: it does not go with --file"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (!quiet && !json && opts.base.kind != SB_BOOTSTRAP_BUSYBOX)
		fprintf(stderr, _("building the default image (Debian needs the mirror and takes a minute)...\n"));
	sb_cli_progress_init(&progress, quiet || json);
	opts.base.progress = &progress.base;
	if (quiet || json)
		opts.progress = NULL;
	/* --name: that base image alone; else the base, then the default on it */
	if (opts.base.name)
		rc = sb_image_bootstrap(&res.base, root, &opts.base, &err);
	else
		rc = sb_build_default_image(&res, root, &opts, &err);
	sb_cli_progress_end(&progress);
	if (rc < 0)
		return sb_cli_fail(&err);
	rc = bootstrap_print(&res.base, opts.base.name ? NULL : &res.image, opts.base.name ? NULL : res.recipe, json);
	if (!opts.base.name)
		sb_default_image_result_clear(&res);
	return rc;
}

const struct sb_cli_command sb_cmd_image_bootstrap = {
	.name = "bootstrap",
	.synopsis = "[--busybox|--debian] [--mirror URL] [-f RECIPE | --name REF] [--quiet] [--json]",
	.summary = N_("build the default image without a registry (a Debian + python3 or busybox base, and its recipe)"),
	.help = N_("  --busybox     a base of the host's /bin/busybox\n"
		   "  --debian      a base of Debian bookworm + python3 with mmdebstrap (no fallback)\n"
		   "  --mirror URL  Debian mirror (default http://deb.debian.org/debian)\n"
		   "  -f, --file F  the default image's recipe, a Dockerfile built on the base\n"
		   "                (default: the shipped default.Dockerfile)\n"
		   "  --name REF    make only a base image, named REF\n"
		   "  --quiet       no progress on the terminal\n"
		   "  --json        print the result as JSON\n"
		   "The base is localhost/sandbench/base:latest, the default image\n"
		   "localhost/sandbench/default:latest.\n"),
	.run = bootstrap_run,
};
