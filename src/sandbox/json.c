#include "config.h"

#include "base/jsonfile.h"
#include "sandbox/build.h"
#include "sandbox/commit.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"

/* The JSON forms of sandboxes, forks, commits, builds, diffs and copies: the CLI's --json and the MCP
 * server's results are the same documents. */

json_t *sb_sandbox_info_json(const struct sb_sandbox_info *info)
{
	json_t *doc = sb_record_to_json(&info->rec);

	doc = sb_json_set(doc, "last_activity", json_integer(info->last_activity));
	doc = sb_json_set(doc, "idle_seconds", json_integer(info->idle_seconds));
	doc = sb_json_set(doc, "expires_in", info->expires_in < 0 ? json_null() : json_integer(info->expires_in));
	doc = sb_json_set(doc, "checkpoint", json_boolean(info->has_checkpoint));
	doc = sb_json_set(doc, "workspace", json_string(info->workspace));
	if (info->disk_size)
		doc = sb_json_set(doc, "disk_usage", json_pack("{s:I, s:I}", "used", (json_int_t)info->disk_used, "size",
							    (json_int_t)info->disk_size));
	if (info->address[0])
		doc = sb_json_set(doc, "address", json_string(info->address));
	if (info->rec.service.command) {
		json_t *st = sb_service_status_json(info);
		json_t *h = json_object_get(st, "health");
		doc = sb_json_set(doc, "health", h ? json_incref(h) : json_null());
		doc = sb_json_set(doc, "service_status", st);
	}
	return doc;
}

static json_t *entry_json(const struct sb_diff_entry *e)
{
	char kind[2] = { (char)e->kind, '\0' }, type[2] = { e->type, '\0' };

	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:b}", "kind", kind, "path", e->path, "type", type, "size",
			 (json_int_t)e->size, "mtime", (json_int_t)e->mtime, "opaque", e->opaque);
}

json_t *sb_diff_json(const struct sb_diff *d)
{
	json_t *doc = json_pack("{s:b, s:b}", "running", d->running, "has_exchange", d->exchange);

	for (int a = 0; a < SB_DIFF_AREAS; a++) {
		json_t *list = json_array();
		for (size_t i = 0; i < d->count; i++)
			if (d->entries[i].area == (enum sb_diff_area)a)
				list = sb_json_append(list, entry_json(&d->entries[i]));
		doc = sb_json_set(doc, sb_diff_area_name(a),
				  json_pack("{s:o, s:I, s:I}", "changes", list, "more", (json_int_t)d->more[a], "bytes",
					    (json_int_t)d->bytes[a]));
	}
	return doc;
}

json_t *sb_copy_result_json(const struct sb_copy_result *r)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s?, s:b}", "src", r->src, "dst", r->dst, "route",
			 r->route == SB_COPY_GUEST ? "guest" : "host", "bytes", (json_int_t)r->bytes, "files",
			 (json_int_t)r->files, "dirs", (json_int_t)r->dirs, "links", (json_int_t)r->links, "skipped",
			 (json_int_t)r->skipped, "skipped_first", r->skipped_first, "memory_discarded", r->memory_discarded);
}

json_t *sb_fork_report_json(const struct sb_fork_report *r)
{
	return json_pack("{s:b, s:b, s:b, s:s, s:I}", "memory", r->memory, "source_checkpointed", r->source_checkpointed,
			 "source_restored", r->source_restored, "source_error", r->source_error, "skipped",
			 (json_int_t)r->skipped);
}

json_t *sb_commit_result_json(const struct sb_commit_result *r)
{
	return json_pack("{s:s, s:s?, s:s, s:{s:s, s:s, s:s, s:I, s:I}, s:I, s:I, s:I, s:s?, s:b}", "digest",
			 r->digest, "reference", r->ref, "parent", r->parent, "layer", "digest", r->layer.digest,
			 "diff_id", r->layer.diff_id, "mediaType", r->layer.media_type ? r->layer.media_type : "",
			 "size", (json_int_t)r->layer.size, "tar_size", (json_int_t)r->layer.tar_size, "entries",
			 (json_int_t)r->entries, "whiteouts", (json_int_t)r->whiteouts, "skipped",
			 (json_int_t)r->skipped, "skipped_first", r->skipped_first, "paused", r->paused);
}

json_t *sb_build_result_json(const struct sb_build_result *r)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I}", "reference", r->ref, "digest", r->digest, "steps",
			 (json_int_t)r->steps, "cached", (json_int_t)r->cached, "sandboxes", (json_int_t)r->sandboxes);
}
