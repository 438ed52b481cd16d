#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "image/store.h"
#include "base/jsonfile.h"
#include "base/units.h"

static void print_list(const char *label, char *const *items, size_t n)
{
	printf("%-13s", label);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? ", " : "", items[i]);
	printf("%s\n", n ? "" : "-");
}

/* The config's process defaults, a line each ("Env", "Cmd", ...) */
static void print_exec_config(const char *text)
{
	json_t *cfg = text ? json_loads(text, 0, NULL) : NULL, *v;
	const char *key;

	json_object_foreach (cfg, key, v) {
		char *s = json_is_string(v) ? NULL : sb_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		printf("%-13s%s\n", key, s ? s : json_string_value(v));
		free(s);
	}
	json_decref(cfg);
}

static void print_info(const struct sb_image_info *im)
{
	char size[32], content[32];

	sb_units_format_size(size, sizeof(size), im->size, SB_UNITS_TEXT);
	sb_units_format_size(content, sizeof(content), im->content_size, SB_UNITS_TEXT);
	printf("%-13s%s\n", _("reference:"), im->ref[0] ? im->ref : _("<none>"));
	printf("%-13s%s\n", _("digest:"), im->digest);
	print_list(_("references:"), im->refs, im->n_refs);
	printf("%-13s%s\n", _("platform:"), im->platform ? im->platform : "-");
	printf("%-13s%s\n", _("created:"), im->created ? im->created : "-");
	printf("%-13s%s\n", _("installed:"), im->installed ? im->installed : "-");
	printf("%-13s%s\n", _("source:"), im->source ? im->source : "-");
	printf("%-13s%s\n", _("parent:"), im->parent[0] ? im->parent : "-");
	printf("%-13s%s (%s %s)\n", _("size:"), size, content, _("of layer blobs"));
	printf("%-13s%s\n", _("config:"), im->config_digest);
	printf("%-13s%s\n", _("rootfs:"), im->rootfs);
	printf("%-13s%zu\n", _("layers:"), im->n_layers);
	for (size_t i = 0; i < im->n_layers; i++) {
		sb_units_format_size(size, sizeof(size), im->layers[i].size, SB_UNITS_TEXT);
		printf("  %s  %s  %s\n", im->layers[i].digest, size,
		       im->layers[i].media_type ? im->layers[i].media_type : "");
	}
	print_exec_config(im->exec_config);
	print_list(_("used by:"), im->used_by, im->n_used_by);
}

static int inspect_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_image_info info;
	struct sb_root *root;
	struct sb_error err;
	int json = 0, rc, status = SB_EXIT_OK;

	if ((rc = sb_cli_parse_json(&json, "image", &sb_cmd_image_inspect, argc, argv,
				     _("expected one image reference or digest"))) != 0)
		return rc;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_image_inspect(&info, root, argv[optind], &err) < 0)
		return sb_cli_fail(&err);
	if (json)
		status = sb_cli_print_json(sb_image_info_json(&info));
	else
		print_info(&info);
	sb_image_info_clear(&info);
	return status;
}

const struct sb_cli_command sb_cmd_image_inspect = {
	.name = "inspect",
	.synopsis = "REF|DIGEST [--json]",
	.summary = N_("show an image: digest, platform, size, layers, config, users"),
	.help = N_("  --json     print the image as JSON\n"),
	.run = inspect_run,
};
