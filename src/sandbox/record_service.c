/* The record's service and published ports: JSON form, names, and the parsers
 * of --restart and --publish. Both fields are optional, so records written
 * before them read as having none (no schema change). */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "base/jsonfile.h"
#include "internal.h"

static const char *const restart_names[] = { "no", "on-failure", "always", NULL };

const char *sb_service_restart_name(enum sb_service_restart r)
{
	return (unsigned)r < sizeof(restart_names) / sizeof(*restart_names) - 1 ? restart_names[r] : "no";
}

int sb_service_restart_parse(const char *s)
{
	for (int i = 0; s && restart_names[i]; i++)
		if (!strcmp(s, restart_names[i]))
			return i;
	return -1;
}

json_t *sb_record_service_to_json(json_t *doc, const struct sb_record *r)
{
	const struct sb_service *s = &r->service;

	if (s->command) {
		json_t *svc = json_pack("{s:s, s:I, s:s}", "command", s->command, "interval", (json_int_t)s->interval,
					"restart", sb_service_restart_name(s->restart));
		/* no health check: no key (unpacking "s" refuses a null) */
		if (svc && s->health)
			svc = sb_json_set(svc, "health", json_string(s->health));
		doc = sb_json_set(doc, "service", svc);
	}
	if (!doc || !r->n_publish)
		return doc;
	json_t *list = json_array();
	for (size_t i = 0; i < r->n_publish; i++)
		list = sb_json_append(list, json_pack("{s:s, s:i, s:i}", "address", r->publish[i].address, "host_port",
						      r->publish[i].host_port, "port", r->publish[i].port));
	return sb_json_set(doc, "publish", list);
}

static int dup_opt(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? -1 : 0;
}

int sb_record_service_from_json(struct sb_record *out, const json_t *doc)
{
	const json_t *svc = json_object_get(doc, "service"), *pub = json_object_get(doc, "publish"), *v;
	size_t i;

	if (svc) {
		const char *cmd = NULL, *health = NULL, *restart = NULL;
		json_int_t interval = 0;
		if (json_unpack((json_t *)svc, "{s:s, s?s, s:I, s:s}", "command", &cmd, "health", &health, "interval",
				&interval, "restart", &restart) < 0 ||
		    sb_service_restart_parse(restart) < 0 || interval < 1)
			return -1;
		out->service.interval = interval;
		out->service.restart = sb_service_restart_parse(restart);
		if (dup_opt(&out->service.command, cmd) < 0 || dup_opt(&out->service.health, health) < 0)
			return -1;
	}
	if (!pub)
		return 0;
	if (!json_is_array(pub) || !(out->publish = calloc(json_array_size(pub) + 1, sizeof(*out->publish))))
		return -1;
	json_array_foreach(pub, i, v) {
		const char *addr = NULL;
		int hp = 0, port = 0;
		char text[64];
		if (json_unpack((json_t *)v, "{s:s, s:i, s:i}", "address", &addr, "host_port", &hp, "port", &port) < 0)
			return -1;
		snprintf(text, sizeof(text), "%s:%d:%d", addr, hp, port);
		if (sb_publish_parse(&out->publish[out->n_publish++], text, NULL) < 0)
			return -1;
	}
	return 0;
}

void sb_record_service_clear(struct sb_record *rec)
{
	free(rec->service.command);
	free(rec->service.health);
	free(rec->publish);
	rec->service.command = rec->service.health = NULL;
	rec->publish = NULL;
	rec->n_publish = 0;
}

static int port_parse(unsigned short *out, const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 1 || v > 65535 || *s == '+' || *s == '-')
		return -1;
	*out = (unsigned short)v;
	return 0;
}

int sb_publish_parse(struct sb_publish *out, const char *text, struct sb_error *err)
{
	char copy[64], *hp, *port;
	struct in_addr a;

	memset(out, 0, sizeof(*out));
	if (strlen(text) >= sizeof(copy))
		goto bad;
	strcpy(copy, text);
	port = strrchr(copy, ':');
	if (!port)
		goto bad;
	*port++ = '\0';
	hp = strrchr(copy, ':');
	if (hp) {
		*hp++ = '\0';
		if (inet_pton(AF_INET, copy, &a) != 1)
			return sb_error_set(err, SB_ERR_INVALID,
					    _("--publish '%s': '%s' is not an IPv4 address of this host"), text, copy);
		inet_ntop(AF_INET, &a, out->address, sizeof(out->address));
	} else {
		hp = copy;
		strcpy(out->address, "127.0.0.1");
	}
	if (port_parse(&out->host_port, hp) < 0 || port_parse(&out->port, port) < 0)
		goto bad;
	return 0;
bad:
	return sb_error_set(err, SB_ERR_INVALID,
			    _("--publish '%s': expected [ADDRESS:]HOSTPORT:PORT with ports from 1 to 65535"), text);
}

int sb_publish_loopback(const struct sb_publish *p)
{
	return !strncmp(p->address, "127.", 4);
}
