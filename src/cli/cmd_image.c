#include "config.h"

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

static const struct sb_cli_command *const image_commands[] = {
	&sb_cmd_image_bootstrap,
	&sb_cmd_image_import,
	&sb_cmd_image_inspect,
	&sb_cmd_image_ls,
	&sb_cmd_image_prune,
	&sb_cmd_image_pull,
	&sb_cmd_image_rm,
	NULL,
};

json_t *sb_cli_image_json(const struct sb_image_info *info)
{
	json_t *layers = json_array(), *refs = json_array(), *used = json_array();

	for (size_t i = 0; i < info->n_layers; i++)
		layers = sb_json_append(layers, json_pack("{s:s, s:s?, s:I}", "digest", info->layers[i].digest,
							  "mediaType", info->layers[i].media_type, "size",
							  (json_int_t)info->layers[i].size));
	for (size_t i = 0; i < info->n_refs; i++)
		refs = sb_json_append(refs, json_string(info->refs[i]));
	for (size_t i = 0; i < info->n_used_by; i++)
		used = sb_json_append(used, json_string(info->used_by[i]));
	return json_pack("{s:s?, s:s, s:o, s:s, s:s?, s:s?, s:s?, s:s?, s:I, s:I, s:s, s:o, s:o}", "reference",
			 info->ref[0] ? info->ref : NULL, "digest", info->digest, "references", refs, "rootfs",
			 info->rootfs, "platform", info->platform, "created", info->created, "installed",
			 info->installed, "source", info->source, "size", (json_int_t)info->size, "content_size",
			 (json_int_t)info->content_size, "config", info->config_digest, "layers", layers, "used_by",
			 used);
}

static int image_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_dispatch(cli, "image", image_commands, argc - 1, argv + 1);
}

const struct sb_cli_command sb_cmd_image = {
	.name = "image",
	.synopsis = "COMMAND [ARGS]",
	.summary = N_("manage images: pull, import, bootstrap, ls, inspect, rm, prune"),
	.run = image_run,
	.group = 1,
};
