/* The workbench's filter query (ui/query.c) on plain rows: each form of term,
 * their combination, and bad queries refused with a reason. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "query.h"

struct row {
	const char *name, *state, *kind, *owner, *label, *net, *image;
	long long idle;
	long long disk;              /* bytes; -1: not measured yet (no value) */
};

static size_t values(const void *p, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct row *r = p;
	const char *texts[] = { r->name, r->state, r->owner, r->label };
	size_t n = 0;

	if (!field) {
		for (size_t i = 0; i < 4 && n < max; i++)
			if (texts[i])
				snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", texts[i]);
		return n;
	}
	const char *v = !strcmp(field, "name") ? r->name : !strcmp(field, "state") ? r->state
		      : !strcmp(field, "kind") ? r->kind : !strcmp(field, "owner") ? r->owner
		      : !strcmp(field, "label") ? r->label : !strcmp(field, "net") ? r->net
		      : !strcmp(field, "image") ? r->image : NULL;
	if (!strcmp(field, "idle"))
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%lld", r->idle);
	else if (!strcmp(field, "disk") && r->disk >= 0)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%lld", r->disk);
	else if (v)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", v);
	return n;
}

static const char *const names[] = { "name", "state", "kind", "owner", "label", "net", "image", "idle", "disk", NULL };
static const char *const durations[] = { "idle", NULL };
static const char *const sizes[] = { "disk", NULL };
static const struct ui_query_fields fields = { names, durations, values, sizes };

static const struct row rows[] = {
	{ "job-1", "running", "temporary", "plugin:search", "team=x", "on", "python:3.12", 30, 200LL << 20 },
	{ "job-2", "stopped", "temporary", "mcp", "team=y", "off", "busybox:latest", 3 * 3600, 12LL << 10 },
	{ "web", "running", "permanent", NULL, NULL, "off", "python:3.11", 10 * 3600, -1 },
};

/* "job-1,web": the names of the rows the query keeps. */
static void kept(const char *query, const char *expect)
{
	struct ui_query *q = NULL;
	char msg[256] = "", got[256] = "";

	cr_assert_eq(ui_query_parse(&q, query, &fields, msg, sizeof(msg)), 0, "'%s': %s", query, msg);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (ui_query_match(q, &rows[i]))
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", got[0] ? "," : "", rows[i].name);
	ui_query_free(q);
	cr_assert_str_eq(got, expect, "query '%s'", query);
}

static void refused(const char *query, const char *why)
{
	struct ui_query *q = (struct ui_query *)&rows;   /* must stay untouched */
	char msg[256] = "";

	cr_assert_eq(ui_query_parse(&q, query, &fields, msg, sizeof(msg)), -1, "'%s' parsed", query);
	cr_assert(q == (struct ui_query *)&rows, "'%s': the output changed on failure", query);
	cr_assert(strstr(msg, why), "'%s': message '%s' lacks '%s'", query, msg, why);
}

Test(query, empty_keeps_everything)
{
	kept("", "job-1,job-2,web");
	kept("   ", "job-1,job-2,web");
}

Test(query, plain_text_in_any_text_any_case)
{
	kept("JOB", "job-1,job-2");
	kept("plugin", "job-1");
	kept("team=y", "job-2");
	kept("stopped", "job-2");
}

Test(query, regex)
{
	kept("/^job-[0-9]$/", "job-1,job-2");
	kept("/^W/", "web");
}

Test(query, invert)
{
	kept("!job", "web");
	kept("!state:running", "job-2");
	kept("!/^job/", "web");
}

Test(query, fields_with_globs)
{
	kept("state:stopped", "job-2");
	kept("kind:temporary", "job-1,job-2");
	kept("owner:plugin:*", "job-1");
	kept("label:team=x", "job-1");
	kept("net:on", "job-1");
	kept("image:python*", "job-1,web");
	kept("owner:*", "job-1,job-2");   /* a row without an owner has no value to match */
}

Test(query, durations_compare)
{
	kept("idle>2h", "job-2,web");
	kept("idle<1m", "job-1");
	kept("idle>5h", "web");
}

/* a row whose size is not known yet has no value: neither above nor below */
Test(query, sizes_compare)
{
	kept("disk>100M", "job-1");
	kept("disk<1m", "job-2");
	kept("disk>4096", "job-1,job-2");
	kept("!disk>100M", "job-2,web");
	kept("disk>1G", "");
}

Test(query, terms_combine_with_and)
{
	kept("kind:temporary idle>2h", "job-2");
	kept("image:python* !kind:permanent", "job-1");
	kept("state:running net:off", "web");
}

Test(query, bad_queries_are_refused_with_a_reason)
{
	refused("colour:red", "unknown field 'colour'");
	refused("colour:red", "fields: name state");
	refused("/unterminated", "between two slashes");
	refused("/(/", "bad regular expression");
	refused("!", "needs a term");
	refused("state:", "needs a value");
	refused("idle>soon", "not a duration");
	refused("name>2h", "compares only durations");
	refused("disk>huge", "not a size");
	refused("disk<2h", "not a size");
	refused("idle>100M", "not a duration");
	refused("job state:running bogus:1", "unknown field 'bogus'");
}
