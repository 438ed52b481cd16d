/* The nftables objects of egress policies (net/egress.h), in a table of their
 * own, "inet sandbench_egress", shared by every state root like the NAT
 * table: its forward chain runs before the NAT table's and sends each packet
 * from a sandbox bridge through the "egress" verdict map, keyed by the
 * sandbox's address, to that sandbox's chain, which accepts (the NAT table
 * then decides as before) or drops. Per sandbox: its chain and its set of
 * denied tuples. A table of its own leaves the NAT table's rules as they were,
 * so a sandbench without egress policies sharing the host keeps working. */
#include "config.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"

#define T "inet " SB_EGRESS_TABLE
#define DENIED_TIMEOUT_S 86400   /* a denial not collected within a day is forgotten */
#define DENIED_MAX 4096

/* What the default policy keeps a sandbox from: link-local (cloud metadata
 * lives at 169.254.169.254) always, the private ranges unless allowed. */
static const char link_local[] = "169.254.0.0/16";
static const char private_ranges[] = "10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10";

static void names(char chain[32], char set[32], const char *tag, uint32_t addr)
{
	snprintf(chain, 32, "eg_%s_%08x", tag, (unsigned)addr);
	snprintf(set, 32, "dn_%s_%08x", tag, (unsigned)addr);
}

/* The sets the filtering resolver fills (net/resolver.c): addresses of names
 * allowed on every port, address . port of names allowed on one. */
#define RESOLVED_SETS(tag, addr) "oa_%s_%08x { type ipv4_addr; flags timeout; }\nadd set " T \
	" op_%s_%08x { type ipv4_addr . inet_service; flags timeout; }\n", tag, (unsigned)(addr), tag, (unsigned)(addr)

static int add(struct sb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(struct sb_buf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= sizeof(line) || sb_buf_add(b, line, (size_t)n) < 0 ? -1 : 0;
}

/* Flushing and refilling the forward chain in one transaction keeps it exactly
 * this whoever ran it before, and leaves the sets' and map's elements alone. */
static const char table_script[] =
	"add table " T "\n"
	"add set " T " bridges { type ifname; }\n"
	"add map " T " egress { type ipv4_addr : verdict; }\n"
	"add chain " T " forward { type filter hook forward priority filter - 1; policy accept; }\n"
	"flush chain " T " forward\n"
	/* answers of sandbox-to-sandbox connections (their first packet was
	 * accepted by the client's chain, which sees every later one) */
	"add rule " T " forward iifname @bridges oifname @bridges ct direction reply ct state established,related accept\n"
	"add rule " T " forward iifname @bridges ip saddr vmap @egress\n"
	/* the host routes sandbox-to-sandbox traffic back out of the bridge it
	 * came in on, and would tell the client to go direct (which the isolated
	 * ports forbid) */
	"add chain " T " output { type filter hook output priority filter; policy accept; }\n"
	"flush chain " T " output\n"
	"add rule " T " output oifname @bridges icmp type redirect drop\n"
	/* a sandbox with names in its allow-list asks the gateway, and every
	 * query of it (to any address: no way around the filter) goes to its
	 * keeper's resolver port (sandbox : gateway . port) */
	"add map " T " dns { type ipv4_addr : ipv4_addr . inet_service; }\n"
	"add chain " T " prerouting { type nat hook prerouting priority dstnat - 1; policy accept; }\n"
	"flush chain " T " prerouting\n"
	"add rule " T " prerouting iifname @bridges meta l4proto { tcp, udp } th dport 53 "
	"dnat ip addr . port to ip saddr map @dns\n";

static int run_script(struct sb_buf *b, int ok, struct sb_error *err)
{
	static const char *const nft[] = { "nft", "-f", "-", NULL };
	int rc;

	if (!ok) {
		sb_buf_clear(b);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	rc = sb_net_cmd(NULL, nft, b->data, err);
	sb_buf_clear(b);
	if (rc < 0)
		sb_error_wrap(err, _("cannot update nftables table '%s'"), SB_EGRESS_TABLE);
	return rc;
}

int sb_egress_nft_ensure(const char *bridge, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	int ok = sb_buf_add(&b, table_script, strlen(table_script)) == 0 &&
		 add(&b, "add element " T " bridges { \"%s\" }\n", bridge) == 0;

	return run_script(&b, ok, err);
}

int sb_egress_nft_remove_bridge(const char *bridge, struct sb_error *err)
{
	static const char *const list_bridges[] = { "nft", "list", "set", "inet", SB_EGRESS_TABLE, "bridges", NULL };
	struct sb_buf b = { 0 };
	char *out;
	int rc;

	if (sb_net_cmd(&out, list_bridges, NULL, NULL) < 0)
		return 0;
	free(out);
	int ok = add(&b, "add element " T " bridges { \"%s\" }\ndelete element " T " bridges { \"%s\" }\n", bridge,
		     bridge) == 0;
	if ((rc = run_script(&b, ok, err)) < 0 || (rc = sb_net_cmd(&out, list_bridges, NULL, err)) < 0)
		return rc;
	int empty = strstr(out, "elements") == NULL;
	free(out);
	/* the last bridge takes the table, with every sandbox's chain and set, along */
	ok = empty && add(&b, "delete table " T "\n") == 0;
	return empty ? run_script(&b, ok, err) : 0;
}

/* One accept rule of the allow-list. */
static int add_allow(struct sb_buf *b, const char *chain, const struct sb_egress_rule *r)
{
	char rule[SB_EGRESS_RULE_MAX], *colon;

	if (r->sandbox[0] && !r->net)
		return 0;   /* a sandbox without an address now: nothing to reach */
	if (r->sandbox[0])
		sb_ipv4_format(rule, r->net);
	else
		sb_egress_rule_format(rule, r);
	if ((colon = strchr(rule, ':')))
		*colon = '\0';
	if (r->port)
		return add(b, "add rule " T " %s ip daddr %s meta l4proto { tcp, udp } th dport %d accept\n", chain, rule,
			   r->port);
	return add(b, "add rule " T " %s ip daddr %s accept\n", chain, rule);
}

/* The resolver's DNAT element of addr: to gateway:port when on, else none. */
static int dns_element(struct sb_buf *b, uint32_t addr, const struct sb_egress_dns *dns, int on)
{
	char a[16], g[16];

	sb_ipv4_format(a, addr);
	sb_ipv4_format(g, dns->gateway);
	/* "add" first makes the "delete" of a missing element succeed (with the
	 * value it has when present: an add of another value would fail) */
	int ok = add(b, "add element " T " dns { %s : %s . %d }\n", a, g, dns->port) == 0 &&
		 add(b, "delete element " T " dns { %s }\n", a) == 0;
	return ok && on ? add(b, "add element " T " dns { %s : %s . %d }\n", a, g, dns->port) : ok ? 0 : -1;
}

int sb_egress_nft_apply(const char *tag, uint32_t addr, const struct sb_egress *e, int allow_private,
			const uint32_t *nameservers, size_t n_ns, const struct sb_egress_dns *dns, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	char chain[32], set[32], dotted[16];
	int ok;

	names(chain, set, tag, addr);
	/* the resolved sets start empty: what was allowed before may not be now */
	ok = add(&b, "add set " T " " RESOLVED_SETS(tag, addr)) == 0 &&
	     add(&b, "flush set " T " oa_%s_%08x\nflush set " T " op_%s_%08x\n", tag, (unsigned)addr, tag,
		 (unsigned)addr) == 0 &&
	     dns_element(&b, addr, dns, dns->on) == 0;
	/* flushing and refilling in one transaction: the policy changes at once,
	 * for open connections too (every packet goes through the chain) */
	ok = ok && add(&b, "add chain " T " %s\nadd chain " T " %s_deny\n", chain, chain) == 0 &&
	     add(&b, "add set " T " %s { type ipv4_addr . inet_proto . inet_service; flags dynamic, timeout; "
		     "timeout %ds; size %d; counter; }\n", set, DENIED_TIMEOUT_S, DENIED_MAX) == 0 &&
	     add(&b, "flush chain " T " %s\nflush chain " T " %s_deny\n", chain, chain) == 0;
	if (e->mode == SB_EGRESS_DEFAULT) {
		for (size_t i = 0; ok && i < n_ns; i++)
			ok = add(&b, "add rule " T " %s ip daddr %s meta l4proto { tcp, udp } th dport 53 accept\n", chain,
				 sb_ipv4_format(dotted, nameservers[i])) == 0;
		ok = ok && add(&b, "add rule " T " %s ip daddr { %s%s%s } goto %s_deny\n", chain, link_local,
			       allow_private ? "" : ", ", allow_private ? "" : private_ranges, chain) == 0;
		ok = ok && add(&b, "add rule " T " %s accept\n", chain) == 0;
	}
	for (size_t i = 0; ok && e->mode == SB_EGRESS_ALLOW && i < e->n_rules; i++)
		ok = e->rules[i].name[0] || add_allow(&b, chain, &e->rules[i]) == 0;
	if (ok && dns->on)
		ok = add(&b, "add rule " T " %s ip daddr @oa_%s_%08x accept\n", chain, tag, (unsigned)addr) == 0 &&
		     add(&b, "add rule " T " %s meta l4proto { tcp, udp } ip daddr . th dport @op_%s_%08x accept\n", chain,
			 tag, (unsigned)addr) == 0;
	/* what is not accepted above is recorded and dropped */
	ok = ok && add(&b, "add rule " T " %s_deny meta l4proto { tcp, udp } update @%s { ip daddr . meta l4proto . th dport }\n",
		 chain, set) == 0 &&
	     add(&b, "add rule " T " %s_deny drop\n", chain) == 0 &&
	     add(&b, "add rule " T " %s goto %s_deny\n", chain, chain) == 0 &&
	     add(&b, "add element " T " egress { %s : jump %s }\n", sb_ipv4_format(dotted, addr), chain) == 0;
	return run_script(&b, ok, err);
}

int sb_egress_nft_remove(const char *tag, uint32_t addr, const struct sb_egress_dns *dns, struct sb_error *err)
{
	static const char *const list_table[] = { "nft", "list", "table", "inet", SB_EGRESS_TABLE, NULL };
	struct sb_buf b = { 0 };
	char chain[32], set[32], dotted[16];

	/* no table: nothing to remove (and no table to create for it) */
	if (sb_net_cmd(NULL, list_table, NULL, NULL) < 0)
		return 0;
	names(chain, set, tag, addr);
	sb_ipv4_format(dotted, addr);
	/* "add" first makes "delete" of a missing object succeed; the map
	 * element goes first, since it refers to the chain */
	int ok = add(&b, "add map " T " egress { type ipv4_addr : verdict; }\n") == 0 &&
		 add(&b, "add chain " T " %s\nadd chain " T " %s_deny\n", chain, chain) == 0 &&
		 add(&b, "add element " T " egress { %s : jump %s }\n", dotted, chain) == 0 &&
		 add(&b, "delete element " T " egress { %s }\n", dotted) == 0 &&
		 add(&b, "flush chain " T " %s\ndelete chain " T " %s\n", chain, chain) == 0 &&
		 add(&b, "add set " T " %s { type ipv4_addr . inet_proto . inet_service; flags dynamic, timeout; "
			 "timeout %ds; size %d; counter; }\n", set, DENIED_TIMEOUT_S, DENIED_MAX) == 0 &&
		 add(&b, "flush chain " T " %s_deny\ndelete chain " T " %s_deny\ndelete set " T " %s\n", chain, chain,
		     set) == 0 &&
		 add(&b, "add map " T " dns { type ipv4_addr : ipv4_addr . inet_service; }\n") == 0 &&
		 dns_element(&b, addr, dns, 0) == 0 &&
		 add(&b, "add set " T " " RESOLVED_SETS(tag, addr)) == 0 &&
		 add(&b, "delete set " T " oa_%s_%08x\ndelete set " T " op_%s_%08x\n", tag, (unsigned)addr, tag,
		     (unsigned)addr) == 0;
	return run_script(&b, ok, err);
}

/* One element of the denied set in nft's JSON; 0 when it is one. */
static int parse_denial(struct sb_egress_denial *d, json_t *elem, long long now_ms)
{
	json_t *val = json_object_get(elem, "val"), *concat = json_object_get(val, "concat");
	json_int_t timeout = 0, expires = 0, packets = 0, port;
	json_t *proto;
	const char *address;

	if (json_unpack(concat, "[s, o, I]", &address, &proto, &port) < 0 || strlen(address) >= sizeof(d->address))
		return -1;
	json_unpack(elem, "{s?I, s?I, s?{s?I}}", "timeout", &timeout, "expires", &expires, "counter", "packets", &packets);
	memset(d, 0, sizeof(*d));
	strcpy(d->address, address);
	if (json_is_string(proto))
		snprintf(d->proto, sizeof(d->proto), "%s", json_string_value(proto));
	else
		snprintf(d->proto, sizeof(d->proto), "%lld", (long long)json_integer_value(proto));
	d->port = (int)port;
	d->packets = (unsigned long long)packets;
	/* the timeout is re-armed at each attempt: what has run off is the age */
	d->last_ms = now_ms - (timeout > expires ? (long long)(timeout - expires) * 1000 : 0);
	return 0;
}

static int parse_denials(struct sb_egress_denial **out, size_t *n, const char *json, long long now_ms)
{
	json_t *doc = json_loads(json, 0, NULL), *items = json_object_get(doc, "nftables"), *item;
	size_t i;
	int rc = 0;

	json_array_foreach(items, i, item) {
		json_t *elems = json_object_get(json_object_get(item, "set"), "elem"), *e;
		size_t j;
		json_array_foreach(elems, j, e) {
			struct sb_egress_denial d;
			if (parse_denial(&d, json_object_get(e, "elem") ? json_object_get(e, "elem") : e, now_ms) < 0)
				continue;
			struct sb_egress_denial *grown = realloc(*out, (*n + 1) * sizeof(**out));
			if (!grown) {
				rc = -1;
				break;
			}
			*out = grown;
			grown[(*n)++] = d;
		}
	}
	json_decref(doc);
	return rc;
}

int sb_egress_nft_denials(struct sb_egress_denial **out, size_t *count, const char *tag, uint32_t addr,
			  struct sb_error *err)
{
	char chain[32], set[32], *json;
	struct sb_buf b = { 0 };
	int ok = 1;

	*out = NULL;
	*count = 0;
	names(chain, set, tag, addr);
	const char *const list[] = { "nft", "-j", "list", "set", "inet", SB_EGRESS_TABLE, set, NULL };
	/* no set (network never set up since the policy came): nothing recorded */
	if (sb_net_cmd(&json, list, NULL, NULL) < 0)
		return 0;
	int rc = parse_denials(out, count, json, sb_clock_now_ms());
	free(json);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*count = 0;
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	/* what was read is cleared, so that the next read sees only new attempts */
	for (size_t i = 0; ok && i < *count; i++)
		ok = add(&b, "delete element " T " %s { %s . %s . %d }\n", set, (*out)[i].address, (*out)[i].proto,
			 (*out)[i].port) == 0;
	return *count ? run_script(&b, ok, err) : 0;
}

int sb_egress_nft_chains(uint32_t **out, size_t *count, const char *tag, struct sb_error *err)
{
	static const char *const list[] = { "nft", "-j", "list", "chains", "inet", NULL };
	char prefix[16], *json;
	json_t *doc, *item;
	size_t i, plen;

	*out = NULL;
	*count = 0;
	if (sb_net_cmd(&json, list, NULL, NULL) < 0)
		return 0;
	doc = json_loads(json, 0, NULL);
	free(json);
	plen = (size_t)snprintf(prefix, sizeof(prefix), "eg_%s_", tag);
	json_array_foreach(json_object_get(doc, "nftables"), i, item) {
		const char *table = NULL, *name = NULL;
		char *end;
		if (json_unpack(json_object_get(item, "chain"), "{s:s, s:s}", "table", &table, "name", &name) < 0 ||
		    strcmp(table, SB_EGRESS_TABLE) != 0 || strncmp(name, prefix, plen) != 0)
			continue;
		unsigned long a = strtoul(name + plen, &end, 16);
		if (end != name + plen + 8 || *end)
			continue;   /* the _deny chain goes with its chain */
		uint32_t *grown = realloc(*out, (*count + 1) * sizeof(**out));
		if (!grown) {
			json_decref(doc);
			free(*out);
			*out = NULL;
			*count = 0;
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		}
		*out = grown;
		grown[(*count)++] = (uint32_t)a;
	}
	json_decref(doc);
	return 0;
}
