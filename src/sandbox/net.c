/* A sandbox's network, between the lifecycle (box.h) and network.h: set up
 * (or repaired) before every boot, removed with the sandbox. */
#include "config.h"

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

int sb_box_network_up(struct sb_box *b, struct sb_error *err)
{
	struct sb_network_config cfg = sb_box_netcfg(&b->settings);

	if (!b->rec.network)
		return 0;
	cfg.egress = &b->rec.egress;
	sb_netinfo_clear(&b->net);
	return sb_network_setup(&b->net, b->root, &cfg, b->rec.name, err);
}

int sb_box_network_down(struct sb_box *b, const char *name, struct sb_error *err)
{
	struct sb_network_config cfg = sb_box_netcfg(&b->settings);

	/* without a record (rm --force of a broken one) whatever is leased goes */
	if (b->rec.name[0] && !b->rec.network)
		return 0;
	return sb_network_teardown(b->root, &cfg, b->rec.name[0] ? b->rec.name : name, err);
}
