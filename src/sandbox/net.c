/* A sandbox's network, between the lifecycle (box.h) and network.h: set up
 * (or repaired) before every boot, removed with the sandbox. */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "internal.h"
#include "net/network.h"

struct sb_network_config sb_box_netcfg(const struct sb_settings *s)
{
	return (struct sb_network_config){
		.bridge = s->network_bridge[0] ? s->network_bridge : NULL,
		.subnet = s->network_subnet[0] ? s->network_subnet : NULL,
		.allow_private = s->network_private,
		.dns_upstream = s->dns_upstream[0] ? s->dns_upstream : NULL,
	};
}

static int names_sandbox(const struct sb_egress *e, const char *name)
{
	for (size_t i = 0; e->mode == SB_EGRESS_ALLOW && i < e->n_rules; i++)
		if (!strcmp(e->rules[i].sandbox, name))
			return 1;
	return 0;
}

/* b got a new address (created, or re-created under an old name): the
 * policies of the root's sandboxes that name it are applied again, so their
 * sandbox:NAME rules reach it there. Best effort: one that fails keeps the
 * old address until its next boot or policy change. */
static void reapply_peers(struct sb_box *b)
{
	char *dir = sb_root_file(b->root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		struct sb_record rec;
		if (de->d_name[0] == '.' || !strcmp(de->d_name, b->rec.name) ||
		    sb_record_load(&rec, b->root, de->d_name, NULL) < 0)
			continue;
		if (rec.network && names_sandbox(&rec.egress, b->rec.name)) {
			struct sb_network_config cfg = sb_box_netcfg(&b->settings);
			cfg.egress = &rec.egress;
			struct sb_error why;
			if (sb_network_egress_update(b->root, &cfg, rec.name, &why) < 0)
				sb_log("the policy of sandbox '%s' (naming '%s') was not applied again: %s", rec.name,
				       b->rec.name, why.msg);
		}
		sb_record_clear(&rec);
	}
	if (d)
		closedir(d);
	free(dir);
}

int sb_box_network_up(struct sb_box *b, struct sb_error *err)
{
	struct sb_network_config cfg = sb_box_netcfg(&b->settings);
	char before[16] = "", after[16] = "";

	if (!b->rec.network)
		return 0;
	cfg.egress = &b->rec.egress;
	sb_netinfo_clear(&b->net);
	sb_network_address(before, b->root, b->rec.name, NULL);
	int rc = sb_network_setup(&b->net, b->root, &cfg, b->rec.name, err);
	/* a lease lasts from create to rm, so this is rare */
	if (rc == 0 && sb_network_address(after, b->root, b->rec.name, NULL) == 0 && strcmp(before, after) != 0)
		reapply_peers(b);
	return rc;
}

int sb_box_network_claim(struct sb_box *b, const char *from, struct sb_error *err)
{
	struct sb_network_config cfg = sb_box_netcfg(&b->settings);

	if (!b->rec.network)
		return 0;
	int rc = sb_network_rename(b->root, &cfg, from, b->rec.name, err);
	if (rc == 0)
		reapply_peers(b);
	else
		sb_network_teardown(b->root, &cfg, from, NULL);
	return rc;
}

int sb_box_network_down(struct sb_box *b, const char *name, struct sb_error *err)
{
	struct sb_network_config cfg = sb_box_netcfg(&b->settings);

	/* without a record (rm --force of a broken one) whatever is leased goes */
	if (b->rec.name[0] && !b->rec.network)
		return 0;
	return sb_network_teardown(b->root, &cfg, b->rec.name[0] ? b->rec.name : name, err);
}
