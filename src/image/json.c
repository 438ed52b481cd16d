#include "config.h"

#include "base/jsonfile.h"
#include "image/store.h"

/* An image as JSON, the same for the CLI's ls, inspect and results and for the MCP server. */
json_t *sb_image_info_json(const struct sb_image_info *info)
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
	json_t *doc = json_pack("{s:s?, s:s, s:o, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:I, s:I, s:s, s:o, s:o}",
				"reference", info->ref[0] ? info->ref : NULL, "digest", info->digest, "references", refs,
				"rootfs", info->rootfs, "platform", info->platform, "created", info->created, "installed",
				info->installed, "source", info->source, "parent", info->parent[0] ? info->parent : NULL,
				"size", (json_int_t)info->size, "content_size", (json_int_t)info->content_size, "config",
				info->config_digest, "layers", layers, "used_by", used);
	json_t *exec = info->exec_config ? json_loads(info->exec_config, 0, NULL) : NULL;

	return exec ? sb_json_set(doc, "exec_config", exec) : doc;
}
