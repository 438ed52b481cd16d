/* A sandbox's egress policy (net/egress.h) through the sandbox API: allow-lists
 * from the command line and the configuration's profiles, a change on a
 * running sandbox, and the denials the kernel recorded, moved into the
 * timeline. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"
#include "net/network.h"

/* The rules of profile name ("NAME RULE..." lines) into out. */
static int add_profile(struct sb_egress *out, const struct sb_settings *set, const char *name, struct sb_error *err)
{
	size_t len = strlen(name);

	for (const char *l = set->allow_profiles; *l; l = strchr(l, '\n') + 1) {
		if (strncmp(l, name, len) != 0 || l[len] != ' ')
			continue;
		char line[sizeof(set->allow_profiles)], *save = NULL;
		snprintf(line, sizeof(line), "%.*s", (int)(strchr(l, '\n') - (l + len + 1)), l + len + 1);
		for (char *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			struct sb_egress_rule r;
			int rc = sb_egress_rule_parse(&r, w, err);
			if (rc < 0) {
				sb_error_wrap(err, _("allow profile '@%s' in the configuration"), name);
				return rc;
			}
			if (sb_egress_add_rule(out, &r) < 0)
				return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		}
		return 0;
	}
	return sb_error_set(err, SB_ERR_NOTFOUND, _("no allow profile named '@%s' in the configuration"), name);
}

/* A sandbox:NAME rule needs NAME in this root, with network on. */
static int check_peers(struct sb_root *root, const struct sb_egress *e, struct sb_error *err)
{
	char text[SB_EGRESS_RULE_MAX];

	for (size_t i = 0; i < e->n_rules; i++) {
		const struct sb_egress_rule *r = &e->rules[i];
		struct sb_record rec;
		if (!r->sandbox[0])
			continue;
		sb_egress_rule_format(text, r);
		if (sb_record_load(&rec, root, r->sandbox, NULL) < 0)
			return sb_error_set(err, SB_ERR_NOTFOUND, _("allow rule '%s': no sandbox named '%s' in this state root"),
					    text, r->sandbox);
		int network = rec.network;
		sb_record_clear(&rec);
		if (!network)
			return sb_error_set(err, SB_ERR_STATE, _("allow rule '%s': sandbox '%s' has network off"), text,
					    r->sandbox);
	}
	return 0;
}

int sb_sandbox_egress_parse(struct sb_egress *out, struct sb_root *root, const char *const *allow, size_t n,
			    struct sb_error *err)
{
	struct sb_settings set;
	int rc = 0, loaded = 0;

	memset(out, 0, sizeof(*out));
	out->mode = n ? SB_EGRESS_ALLOW : SB_EGRESS_DEFAULT;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct sb_egress_rule r;
		if (allow[i][0] == '@') {
			if (!loaded && (rc = sb_settings_load(&set, root, err)) == 0)
				loaded = 1;
			if (rc == 0)
				rc = add_profile(out, &set, allow[i] + 1, err);
		} else if ((rc = sb_egress_rule_parse(&r, allow[i], err)) == 0 && sb_egress_add_rule(out, &r) < 0) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		}
	}
	if (rc == 0)
		rc = check_peers(root, out, err);
	if (rc < 0)
		sb_egress_clear(out);
	return rc;
}

char *sb_sandbox_egress_text(struct sb_root *root, const struct sb_record *rec)
{
	struct sb_settings set;

	if (rec->egress.mode != SB_EGRESS_DEFAULT)
		return sb_egress_describe(&rec->egress);
	int priv = sb_settings_load(&set, root, NULL) == 0 && set.network_private;
	return strdup(priv ? _("default (internet and private ranges; no link-local, metadata or host addresses)")
			   : _("default (internet; no link-local, metadata, host or private addresses)"));
}

/* "egress allow 10.0.0.0/8:443" as a timeline entry of kind network. */
static void note_policy(struct sb_box *b)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_NETWORK, sb_timeline_actor());
	char *text = sb_egress_describe(&b->rec.egress);
	struct sb_error why;

	e.text = text;
	e.detail = _("egress policy changed");
	if (!text || sb_timeline_add(b->root, b->rec.name, &b->settings, 1, &e, NULL, &why) < 0)
		sb_log("no timeline entry for the egress policy of sandbox '%s'", b->rec.name);
	free(text);
}

int sb_sandbox_set_egress(struct sb_root *root, const char *name, const struct sb_egress *egress,
			  struct sb_error *err)
{
	struct sb_egress copy, old;
	struct sb_box b;
	int rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err);

	if (rc == 0 && !b.rec.network)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' has network off; an egress policy needs network on"),
				  name);
	if (rc == 0 && sb_egress_copy(&copy, egress) < 0)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (rc < 0) {
		sb_box_close(&b);
		return rc;
	}
	old = b.rec.egress;
	b.rec.egress = copy;
	/* the record first: a failure to change the running rules leaves the
	 * old record and the old rules */
	if ((rc = sb_record_save(root, &b.rec, err)) == 0) {
		struct sb_network_config cfg = sb_box_netcfg(&b.settings);
		cfg.egress = &b.rec.egress;
		if ((rc = sb_network_egress_update(root, &cfg, name, err)) < 0) {
			sb_egress_clear(&b.rec.egress);
			b.rec.egress = old;
			memset(&old, 0, sizeof(old));
			sb_record_save(root, &b.rec, NULL);
		}
	}
	if (rc == 0)
		note_policy(&b);
	sb_egress_clear(&old);
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_egress_collect(size_t *count, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_egress_denial *d;
	struct sb_settings set;
	size_t n;
	int rc = sb_settings_load(&set, root, err);

	if (count)
		*count = 0;
	if (rc < 0 || (rc = sb_network_denials(&d, &n, root, name, err)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_NETWORK, SB_TIMELINE_SANDBENCH);
		char text[SB_DNS_NAME_MAX + 16], detail[64];
		if (!strcmp(d[i].proto, "dns")) {
			snprintf(text, sizeof(text), "denied dns %s", d[i].name);
			snprintf(detail, sizeof(detail), _("%llu queries refused by the filtering resolver"), d[i].packets);
		} else {
			snprintf(text, sizeof(text), "denied %s %s:%d", d[i].proto, d[i].address, d[i].port);
			snprintf(detail, sizeof(detail), _("%llu packets dropped"), d[i].packets);
		}
		e.time_ms = d[i].last_ms;
		e.text = text;
		e.detail = detail;
		rc = sb_timeline_add(root, name, &set, 0, &e, NULL, err);
	}
	free(d);
	if (count && rc == 0)
		*count = n;
	return rc;
}
