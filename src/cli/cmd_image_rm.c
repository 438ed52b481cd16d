#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "image/store.h"

static void warn_broken(const char *what, const struct sb_image_removal *r)
{
	fprintf(stderr, _("sandbench: warning: image '%s' was in use; these sandboxes cannot start or be restored "
			  "any more (remove them):"),
		what);
	for (size_t i = 0; i < r->n_broken; i++)
		fprintf(stderr, " %s", r->broken[i]);
	fputc('\n', stderr);
}

static int rm_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_image_removal res;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, force = 0, rc, status = SB_EXIT_OK;

	optind = 0; /* 0, not 1: resets glibc getopt, so options may follow operands */
	while ((opt = getopt_long(argc, argv, "f", options, NULL)) != -1) {
		if (opt == 'f')
			force = 1;
		else if (opt == 'j')
			json = 1;
		else
			return sb_cli_usage_error("image", &sb_cmd_image_rm, _("invalid option"));
	}
	if (optind != argc - 1)
		return sb_cli_usage_error("image", &sb_cmd_image_rm, _("expected one image reference or digest"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_remove(&res, root, argv[optind], force, &err) < 0)
		return sb_cli_fail(&err);
	if (res.n_broken)
		warn_broken(argv[optind], &res);
	if (json) {
		json_t *broken = json_array();
		for (size_t i = 0; i < res.n_broken; i++)
			broken = sb_json_append(broken, json_string(res.broken[i]));
		status = sb_cli_print_json(json_pack("{s:s, s:b, s:o}", "digest", res.digest, "removed_image",
						     res.removed_image, "broken_sandboxes", broken));
	} else if (res.removed_image) {
		printf(_("removed image %s\n"), res.digest);
	} else {
		printf(_("removed reference %s (image %s is still referenced)\n"), argv[optind], res.digest);
	}
	sb_image_removal_clear(&res);
	return status;
}

const struct sb_cli_command sb_cmd_image_rm = {
	.name = "rm",
	.synopsis = "REF|DIGEST [--force] [--json]",
	.summary = N_("remove an image reference; the image goes with its last one"),
	.help = N_("  --force    remove the image even while sandboxes use it (they break)\n"
		   "  --json     print the result as JSON\n"),
	.run = rm_run,
};
