#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"

#define T "inet " SB_NAT_TABLE

/* Flushing and refilling the chains in one transaction keeps the rules exactly
 * these whoever ran it before, and leaves the sets' elements alone. */
static const char table_script[] =
	"add table " T "\n"
	"add set " T " bridges { type ifname; }\n"
	"add set " T " sandboxes { type ipv4_addr; }\n"
	/* source . destination of sandbox-to-sandbox pairs that allow-lists name */
	"add set " T " peers { type ipv4_addr . ipv4_addr; }\n"
	"add chain " T " postrouting { type nat hook postrouting priority srcnat; policy accept; }\n"
	"add chain " T " forward { type filter hook forward priority filter; policy accept; }\n"
	"add chain " T " input { type filter hook input priority filter; policy accept; }\n"
	"flush chain " T " postrouting\n"
	"flush chain " T " forward\n"
	"flush chain " T " input\n"
	"add rule " T " postrouting iifname @bridges ip saddr @sandboxes oifname != @bridges masquerade\n"
	/* out: only from leased addresses (no spoofing), and never to another bridge */
	"add rule " T " forward iifname @bridges ip saddr @sandboxes oifname != @bridges accept\n"
	/* sandbox to sandbox: only the pairs in peers (the egress table checks
	 * ports), and their answers */
	"add rule " T " forward iifname @bridges oifname @bridges ip saddr @sandboxes ip saddr . ip daddr @peers accept\n"
	"add rule " T " forward iifname @bridges oifname @bridges ct direction reply ct state established,related "
	"ip daddr . ip saddr @peers accept\n"
	"add rule " T " forward iifname @bridges drop\n"
	/* in: answers only */
	"add rule " T " forward oifname @bridges ct state established,related accept\n"
	"add rule " T " forward oifname @bridges drop\n"
	/* the host's own services are not the sandboxes' business */
	"add rule " T " input iifname @bridges ct state established,related accept\n"
	/* but for the filtering resolver: only the egress table DNATs, only DNS to it */
	"add rule " T " input iifname @bridges ct status dnat meta l4proto { tcp, udp } th dport >= 20000 accept\n"
	"add rule " T " input iifname @bridges drop\n";

static const char *const nft_stdin[] = { "nft", "-f", "-", NULL };

static int nft_script(const char *script, struct sb_error *err)
{
	int rc = sb_net_cmd(NULL, nft_stdin, script, err);

	if (rc < 0)
		sb_error_wrap(err, _("cannot update nftables table '%s'"), SB_NAT_TABLE);
	return rc;
}

int sb_net_sysctl_on(const char *path, struct sb_error *err)
{
	char cur = '0';
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open %s"), path);
	if (read(fd, &cur, 1) == 1 && cur == '1') {
		close(fd);
		return 0;
	}
	int rc = pwrite(fd, "1\n", 2, 0) == 2 ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot enable %s"), path);
	close(fd);
	return rc;
}

int sb_nat_ensure(const char *bridge, struct sb_error *err)
{
	char *script = sb_strdupf("%sadd element " T " bridges { \"%s\" }\n", table_script, bridge);
	int rc;

	if (!script)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = nft_script(script, err);
	free(script);
	return rc < 0 ? rc : sb_net_sysctl_on("/proc/sys/net/ipv4/ip_forward", err);
}

static int element(const char *verb, uint32_t addr, struct sb_error *err)
{
	char dotted[16], *script;
	int rc;

	sb_ipv4_format(dotted, addr);
	/* "add" first makes "delete" of a missing element succeed */
	script = strcmp(verb, "delete") == 0
		 ? sb_strdupf("add element " T " sandboxes { %s }\ndelete element " T " sandboxes { %s }\n", dotted, dotted)
		 : sb_strdupf("add element " T " sandboxes { %s }\n", dotted);
	if (!script)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = nft_script(script, err);
	free(script);
	return rc;
}

int sb_nat_add(uint32_t addr, struct sb_error *err)
{
	return element("add", addr, err);
}

int sb_nat_remove(uint32_t addr, struct sb_error *err)
{
	static const char *const list_table[] = { "nft", "list", "table", "inet", SB_NAT_TABLE, NULL };

	/* no table: nothing to remove (and no table to create for it) */
	if (sb_net_cmd(NULL, list_table, NULL, NULL) < 0)
		return 0;
	return element("delete", addr, err);
}

int sb_nat_remove_bridge(const char *bridge, struct sb_error *err)
{
	static const char *const list_bridges[] = { "nft", "list", "set", "inet", SB_NAT_TABLE, "bridges", NULL };
	char *script, *out;
	int rc;

	if (sb_net_cmd(&out, list_bridges, NULL, NULL) < 0)
		return 0;
	free(out);
	script = sb_strdupf("add element " T " bridges { \"%s\" }\ndelete element " T " bridges { \"%s\" }\n",
			    bridge, bridge);
	if (!script)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = nft_script(script, err);
	free(script);
	if (rc < 0 || (rc = sb_net_cmd(&out, list_bridges, NULL, err)) < 0)
		return rc;
	int empty = strstr(out, "elements") == NULL;
	free(out);
	return empty ? nft_script("delete table " T "\n", err) : 0;
}

/* Deletes of the peers elements that involve addr (as source, or either side
 * when both) into b; -1 when out of memory. */
static int delete_peers(struct sb_buf *b, const char *json, uint32_t addr, int both)
{
	json_t *doc = json_loads(json, 0, NULL), *item;
	char dotted[16];
	size_t i;
	int ok = 1;

	sb_ipv4_format(dotted, addr);
	json_array_foreach(json_object_get(doc, "nftables"), i, item) {
		json_t *elems = json_object_get(json_object_get(item, "set"), "elem"), *e;
		size_t j;
		json_array_foreach(elems, j, e) {
			const char *src, *dst;
			if (json_unpack(json_object_get(e, "concat"), "[s, s]", &src, &dst) < 0 ||
			    (strcmp(src, dotted) != 0 && (!both || strcmp(dst, dotted) != 0)))
				continue;
			char *line = sb_strdupf("delete element " T " peers { %s . %s }\n", src, dst);
			ok = ok && line && sb_buf_add(b, line, strlen(line)) == 0;
			free(line);
		}
	}
	json_decref(doc);
	return ok ? 0 : -1;
}

/* Replaces the pairs of src by src . dsts[i] (both: also drops those to src). */
static int peers_update(uint32_t src, int both, const uint32_t *dsts, size_t n, struct sb_error *err)
{
	static const char *const list[] = { "nft", "-j", "list", "set", "inet", SB_NAT_TABLE, "peers", NULL };
	struct sb_buf b = { 0 };
	char *json = NULL, s[16], d[16];
	int ok;

	/* no set (no table, or an older version's): nothing to remove */
	if (sb_net_cmd(&json, list, NULL, NULL) < 0 && n == 0)
		return 0;
	ok = delete_peers(&b, json ? json : "{}", src, both) == 0;
	free(json);
	for (size_t i = 0; ok && i < n; i++) {
		char *line = sb_strdupf("add element " T " peers { %s . %s }\n", sb_ipv4_format(s, src),
					sb_ipv4_format(d, dsts[i]));
		ok = line && sb_buf_add(&b, line, strlen(line)) == 0;
		free(line);
	}
	ok = ok && sb_buf_add(&b, "", 1) == 0;   /* the terminating NUL */
	int rc = !ok ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory")) : b.len > 1 ? nft_script(b.data, err) : 0;
	sb_buf_clear(&b);
	return rc;
}

int sb_nat_peers_set(uint32_t src, const uint32_t *dsts, size_t n, struct sb_error *err)
{
	return peers_update(src, 0, dsts, n, err);
}

int sb_nat_peers_remove(uint32_t addr, struct sb_error *err)
{
	return peers_update(addr, 1, NULL, 0, err);
}
