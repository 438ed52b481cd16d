#include "config.h"

#include "cli_sandbox.h"
#include "record.h"

const char *sb_cli_onoff(int on)
{
	return on ? "on" : "off";
}

json_t *sb_cli_sandbox_json(const struct sb_sandbox_info *info)
{
	json_t *doc = sb_record_to_json(&info->rec);

	json_object_set_new(doc, "last_activity", json_integer(info->last_activity));
	json_object_set_new(doc, "idle_seconds", json_integer(info->idle_seconds));
	json_object_set_new(doc, "expires_in", info->expires_in < 0 ? json_null() : json_integer(info->expires_in));
	json_object_set_new(doc, "checkpoint", json_boolean(info->has_checkpoint));
	json_object_set_new(doc, "workspace", json_string(info->workspace));
	if (info->address[0])
		json_object_set_new(doc, "address", json_string(info->address));
	return doc;
}
