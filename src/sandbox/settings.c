#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "sandbox/settings.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/units.h"

/* Each key parses its value into the struct; -1 when the value is malformed. */
typedef int (*setter_fn)(struct sb_settings *c, const char *v);

static int set_kind(struct sb_settings *c, const char *v)
{
	int k = sb_sandbox_kind_parse(v);
	return k > SB_KIND_DEFAULT ? (c->kind = k, 0) : -1;
}

static int set_idle(struct sb_settings *c, const char *v)
{
	long long s = sb_units_parse_duration(v);
	return s > 0 ? (c->idle_timeout = s, 0) : -1;
}

static int set_expiry(struct sb_settings *c, const char *v)
{
	return sb_expiry_parse(&c->expiry_action, &c->expiry_stop_after, v, NULL) == 0 ? 0 : -1;
}

static int set_network(struct sb_settings *c, const char *v)
{
	if (!strcmp(v, "on"))
		c->network = 1;
	else if (!strcmp(v, "off"))
		c->network = 0;
	else
		return -1;
	return 0;
}

/* Checked for what they mean by the network module on use; here only their size. */
static int set_bridge(struct sb_settings *c, const char *v)
{
	return strlen(v) < sizeof(c->network_bridge) ? (strcpy(c->network_bridge, v), 0) : -1;
}

static int set_subnet(struct sb_settings *c, const char *v)
{
	return strlen(v) < sizeof(c->network_subnet) ? (strcpy(c->network_subnet, v), 0) : -1;
}

static int set_private(struct sb_settings *c, const char *v)
{
	c->network_private = !strcmp(v, "allow") ? 1 : !strcmp(v, "block") ? 0 : -1;
	return c->network_private < 0 ? -1 : 0;
}

/* Repeatable: each line adds a profile; its rules are checked on use. */
static int set_allow_profile(struct sb_settings *c, const char *v)
{
	size_t have = strlen(c->allow_profiles), n = strlen(v);

	if (!strchr(v, ' ') || have + n + 2 > sizeof(c->allow_profiles))
		return -1;
	memcpy(c->allow_profiles + have, v, n);
	memcpy(c->allow_profiles + have + n, "\n", 2);
	return 0;
}

static int set_dns_upstream(struct sb_settings *c, const char *v)
{
	struct in_addr in;
	return strlen(v) < sizeof(c->dns_upstream) && inet_pton(AF_INET, v, &in) == 1 ? (strcpy(c->dns_upstream, v), 0)
										     : -1;
}

static int set_memory(struct sb_settings *c, const char *v)
{
	long long b = sb_units_parse_size(v);
	return b >= 0 ? (c->memory = (unsigned long long)b, 0) : -1;
}

static int set_cpus(struct sb_settings *c, const char *v)
{
	char *end;
	double d = strtod(v, &end);
	return *end == '\0' && d >= 0 && d <= 1024 ? (c->cpus = d, 0) : -1;
}

static int set_runsc_timeout(struct sb_settings *c, const char *v)
{
	long long s = sb_units_parse_duration(v);
	return s > 0 && s <= 3600 ? (c->runsc_timeout_ms = (int)(s * 1000), 0) : -1;
}

/* Bounded so that a timeline stays cheap to read and a line to parse. */
static int set_timeline_size(struct sb_settings *c, const char *v)
{
	long long b = sb_units_parse_size(v);
	return b >= 4096 && b <= 64LL << 20 ? (c->timeline_size = (size_t)b, 0) : -1;
}

static int set_timeline_output(struct sb_settings *c, const char *v)
{
	long long b = sb_units_parse_size(v);
	return b >= 0 && b <= 64 << 10 ? (c->timeline_output = (size_t)b, 0) : -1;
}

static int set_owner_gone(struct sb_settings *c, const char *v)
{
	long long s = sb_units_parse_duration(v);
	return s > 0 ? (c->owner_gone_after = s, 0) : -1;
}

static const struct {
	const char *key;
	setter_fn set;
} keys[] = {
	{ "kind", set_kind },
	{ "idle_timeout", set_idle },
	{ "expiry_action", set_expiry },
	{ "network", set_network },
	{ "network_bridge", set_bridge },
	{ "network_subnet", set_subnet },
	{ "network_private", set_private },
	{ "allow_profile", set_allow_profile },
	{ "dns_upstream", set_dns_upstream },
	{ "memory", set_memory },
	{ "cpus", set_cpus },
	{ "runsc_timeout", set_runsc_timeout },
	{ "timeline_size", set_timeline_size },
	{ "timeline_output", set_timeline_output },
	{ "owner_gone_after", set_owner_gone },
};

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int apply_file(struct sb_settings *c, const char *path, struct sb_error *err)
{
	char *text, *save = NULL;
	int line = 0, rc = sb_fs_read_file(&text, NULL, path, 1 << 16, err);

	if (rc == SB_ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		char *hash = strchr(l, '#');
		if (hash)
			*hash = '\0';
		char *s = trim(l);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: expected 'key = value'"), path);
			break;
		}
		*eq = '\0';
		const char *key = trim(s), *val = trim(eq + 1);
		size_t i;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[i].key, key); i++)
			;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: unknown setting '%s'"), path, key);
			break;
		}
		if (keys[i].set(c, val) < 0) {
			rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: invalid value '%s' for '%s'"), path, val, key);
			break;
		}
	}
	free(text);
	return rc;
}

int sb_settings_load(struct sb_settings *out, struct sb_root *root, struct sb_error *err)
{
	const char *env = getenv("SANDBENCH_DEFAULTS");
	char *local;
	int rc;

	*out = (struct sb_settings){
		.kind = SB_KIND_TEMPORARY,
		.idle_timeout = 30 * 60,
		.expiry_action = SB_EXPIRY_RM,
		.network = 0,
		.memory = 1ULL << 30,
		.cpus = 0,
		.runsc_timeout_ms = 60000,
		.timeline_size = 1 << 20,
		.timeline_output = 8 << 10,
		.owner_gone_after = 7 * 86400,
	};
	rc = apply_file(out, env && *env ? env : SB_DATADIR "/sandbench.conf", err);
	if (rc < 0)
		return rc;
	local = sb_root_file(root, "config");
	if (!local)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = apply_file(out, local, err);
	free(local);
	return rc;
}
