#include "config.h"

#include <math.h>
#include <string.h>

#include "internal.h"
#include "base/i18n.h"

/* Tool arguments: checked against the tool's own input schema (the one
 * tools/list shows, so the two never disagree), then read with defaults. */

static int type_matches(const char *type, const json_t *v)
{
	static const struct {
		const char *name;
		json_type t1, t2;
	} map[] = {
		{ "string", JSON_STRING, JSON_STRING },   { "integer", JSON_INTEGER, JSON_INTEGER },
		{ "number", JSON_INTEGER, JSON_REAL },    { "boolean", JSON_TRUE, JSON_FALSE },
		{ "array", JSON_ARRAY, JSON_ARRAY },      { "object", JSON_OBJECT, JSON_OBJECT },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(type, map[i].name))
			return json_typeof(v) == map[i].t1 || json_typeof(v) == map[i].t2;
	return 0;
}

static int check_value(const json_t *schema, const json_t *v, const char *key, struct sb_error *err);

static int check_object(const json_t *schema, const json_t *v, struct sb_error *err)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *req = json_object_get(schema, "required");
	const char *k;
	json_t *sub;
	size_t i;

	json_array_foreach (req, i, sub)
		if (!json_object_get(v, json_string_value(sub)))
			return sb_error_set(err, SB_ERR_INVALID, _("The argument '%s' is required."), json_string_value(sub));
	json_object_foreach ((json_t *)v, k, sub) {
		const json_t *ps = json_object_get(props, k);
		if (!ps) {
			if (json_is_false(json_object_get(schema, "additionalProperties")))
				return sb_error_set(err, SB_ERR_INVALID, _("The argument '%s' is not known."), k);
			continue;
		}
		if (check_value(ps, sub, k, err) < 0)
			return SB_ERR_INVALID;
	}
	return 0;
}

static int check_value(const json_t *schema, const json_t *v, const char *key, struct sb_error *err)
{
	const char *type = json_string_value(json_object_get(schema, "type"));
	const json_t *choices = json_object_get(schema, "enum"), *c;
	size_t i;

	if (type && !type_matches(type, v))
		return sb_error_set(err, SB_ERR_INVALID, _("The argument '%s' must be of type %s."), key, type);
	if (choices) {
		int found = 0;
		json_array_foreach (choices, i, c)
			found |= json_equal(c, (json_t *)v);
		if (!found)
			return sb_error_set(err, SB_ERR_INVALID, _("The argument '%s' has a value that is not allowed."), key);
	}
	if (json_is_number(v)) {
		const json_t *lo = json_object_get(schema, "minimum"), *hi = json_object_get(schema, "maximum");
		double d = json_number_value(v);
		if ((lo && d < json_number_value(lo)) || (hi && d > json_number_value(hi)) || !isfinite(d))
			return sb_error_set(err, SB_ERR_INVALID, _("The argument '%s' is out of range."), key);
	}
	if (json_is_array(v)) {
		const json_t *items = json_object_get(schema, "items");
		json_array_foreach (v, i, c)
			if (items && check_value(items, c, key, err) < 0)
				return SB_ERR_INVALID;
	}
	if (json_is_object(v))
		return check_object(schema, v, err);
	return 0;
}

int mcp_args_check(const json_t *schema, const json_t *args, struct sb_error *err)
{
	return check_value(schema, args, "arguments", err);
}

const char *mcp_arg_str(const json_t *args, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(args, key));

	return s ? s : dflt;
}

long long mcp_arg_int(const json_t *args, const char *key, long long dflt)
{
	const json_t *v = json_object_get(args, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

double mcp_arg_num(const json_t *args, const char *key, double dflt)
{
	const json_t *v = json_object_get(args, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

int mcp_arg_bool(const json_t *args, const char *key, int dflt)
{
	const json_t *v = json_object_get(args, key);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}
