#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/digest.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"
#include "net/network.h"

#define HOST_LOCK "/run/sandbench-network.lock"
#define NETNS_DIR "/run/netns"
#define SYS_NET "/sys/class/net"
#define RESOLV_DIR "network/resolv"
#define DNS_DIR "network/dns"
#define TAG_FILE "network/tag"      /* the root's path and its tag */
/* The filtering resolver's port on the bridge's address: one per lease (two
 * roots have two bridges, so two addresses), below the ephemeral range. */
#define DNS_PORT_BASE 20000
#define DNS_PORT_SPAN 12000
#define IFNAME "eth0"

/* Everything setup and teardown need, derived from root, config and name. */
struct net_ctx {
	struct sb_root *root;
	const char *name;
	char tag[7];
	char bridge[16];
	struct sb_subnet subnet;
	const char *const *resolv_sources;
	const struct sb_egress *egress;
	int allow_private;
	const char *dns_upstream;
	char alias[32];          /* the bridge's ifalias: marks it as this root's */
	int lock_fd;
	int foreign;             /* gc: a lease lies outside the subnet (it was changed) */
};

/* The tag from ROOT/network/tag: "PATH\nTAG\n", when PATH is the root's. */
static int tag_kept(char out[7], const char *file, const char *path)
{
	char *text = NULL;
	size_t n = strlen(path), len;
	int ok = sb_fs_read_file(&text, &len, file, n + 16, NULL) == 0 && len == n + 8 && !strncmp(text, path, n) &&
		 text[n] == '\n' && strspn(text + n + 1, "0123456789abcdef") == 6 && text[n + 7] == '\n';

	if (ok) {
		memcpy(out, text + n + 1, 6);
		out[6] = '\0';
	}
	free(text);
	return ok;
}

/* The tag is a digest, and a process's first digest loads libcrypto and
 * OpenSSL's configuration (1 to 1.5 ms, most of a network operation as
 * quick as a pool claim): it is kept beside the path it was made from, so
 * that a root that moved gets its own again. Not kept (a read-only root):
 * made each time. */
int sb_network_tag(char out[7], const struct sb_root *root, struct sb_error *err)
{
	char digest[SB_DIGEST_STR_LEN];
	const char *path = sb_root_path(root);
	char *file = sb_root_file(root, TAG_FILE);
	int rc = 0;

	if (!file)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (!tag_kept(out, file, path) && (rc = sb_sha256_buffer(digest, path, strlen(path), err)) == 0) {
		memcpy(out, sb_digest_hex(digest), 6);
		out[6] = '\0';
		char *dir = sb_root_file(root, "network"), *text = sb_strdupf("%s\n%s\n", path, out);
		if (dir && text && sb_fs_mkdirs(dir, 0700, NULL) == 0)
			(void)sb_fs_write_atomic(file, text, strlen(text), 0600, NULL);
		free(dir);
		free(text);
	}
	free(file);
	return rc;
}

static int valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return 0;
	return 1;
}

static int ctx_init(struct net_ctx *c, struct sb_root *root, const struct sb_network_config *cfg, const char *name,
		    struct sb_error *err)
{
	const char *bridge = cfg && cfg->bridge ? cfg->bridge : SB_NETWORK_DEFAULT_BRIDGE;
	const char *subnet = cfg && cfg->subnet ? cfg->subnet : SB_NETWORK_DEFAULT_SUBNET;
	int rc;

	memset(c, 0, sizeof(*c));
	c->root = root;
	c->name = name;
	c->lock_fd = -1;
	c->resolv_sources = cfg && cfg->resolv_sources ? cfg->resolv_sources : sb_resolv_default_sources;
	c->egress = cfg ? cfg->egress : NULL;
	c->allow_private = cfg ? cfg->allow_private : 0;
	c->dns_upstream = cfg ? cfg->dns_upstream : NULL;
	if (name && (rc = sb_name_check(name, _("sandbox name"), err)) < 0)
		return rc;
	if (!valid_ifname(bridge))
		return sb_error_set(err, SB_ERR_INVALID,
				    _("bridge name '%s' must be 1 to 15 letters, digits, '_', '-' or '.'"), bridge);
	if ((rc = sb_subnet_parse(&c->subnet, subnet, err)) < 0)
		return rc;
	snprintf(c->bridge, sizeof(c->bridge), "%s", bridge);
	if ((rc = sb_network_tag(c->tag, root, err)) < 0)
		return rc;
	snprintf(c->alias, sizeof(c->alias), "sandbench:%s", c->tag);
	return 0;
}

static int host_lock(struct net_ctx *c, struct sb_error *err)
{
	c->lock_fd = open(HOST_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->lock_fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open %s"), HOST_LOCK);
	while (flock(c->lock_fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(c->lock_fd);
			c->lock_fd = -1;
			return sb_error_errno(err, SB_ERR_IO, e, _("cannot lock %s"), HOST_LOCK);
		}
	}
	return 0;
}

static void host_unlock(struct net_ctx *c)
{
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	c->lock_fd = -1;
}

static int link_exists(const char *ifname)
{
	char path[300];

	snprintf(path, sizeof(path), SYS_NET "/%s", ifname);
	return access(path, F_OK) == 0;
}

static void fill_info(struct sb_netinfo *out, const struct net_ctx *c, uint32_t addr)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->netns, sizeof(out->netns), "sb-%s-%s", c->tag, c->name);
	snprintf(out->netns_path, sizeof(out->netns_path), NETNS_DIR "/%s", out->netns);
	snprintf(out->veth, sizeof(out->veth), "sb%sv%x", c->tag, (unsigned)(addr - c->subnet.net));
	snprintf(out->bridge, sizeof(out->bridge), "%s", c->bridge);
	sb_ipv4_format(out->address, addr);
	out->prefix = c->subnet.prefix;
	sb_ipv4_format(out->gateway, sb_subnet_gateway(&c->subnet));
	out->dns_port = DNS_PORT_BASE + (int)((addr - c->subnet.net) % DNS_PORT_SPAN);
}

static char *root_path(const struct net_ctx *c, const char *dir_name, const char *ext)
{
	char *dir = sb_root_file(c->root, dir_name);
	char *path = dir ? sb_strdupf("%s/%s.%s", dir, c->name, ext) : NULL;

	free(dir);
	return path;
}

static char *resolv_path(const struct net_ctx *c)
{
	return root_path(c, RESOLV_DIR, "conf");
}

/* The host-side paths of out (malloc'd); -1 when out of memory. */
static int fill_paths(struct sb_netinfo *out, const struct net_ctx *c)
{
	out->resolv_conf = resolv_path(c);
	out->dns_policy = root_path(c, DNS_DIR, "policy");
	out->dns_denied = root_path(c, DNS_DIR, "denied");
	return out->resolv_conf && out->dns_policy && out->dns_denied ? 0 : -1;
}

/* Runs "ip ARGS..." (NULL-terminated). */
static int ip(struct sb_error *err, const char *first, ...)
{
	const char *argv[24];
	int n = 0;
	va_list ap;

	argv[n++] = "ip";
	va_start(ap, first);
	for (const char *a = first; a && n < 23; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return sb_net_cmd(NULL, argv, NULL, err);
}

/* 1 when the bridge carries this root's alias, 0 when absent, BUSY when it is someone else's. */
static int bridge_owned(const struct net_ctx *c, struct sb_error *err)
{
	char path[96], *alias = NULL;

	if (!link_exists(c->bridge))
		return 0;
	snprintf(path, sizeof(path), SYS_NET "/%s/ifalias", c->bridge);
	sb_fs_read_file(&alias, NULL, path, 4096, NULL);
	int mine = alias && strncmp(alias, c->alias, strlen(c->alias)) == 0 &&
		   (alias[strlen(c->alias)] == '\n' || alias[strlen(c->alias)] == '\0');
	free(alias);
	if (!mine)
		return sb_error_set(err, SB_ERR_BUSY,
				    _("network interface '%s' exists and does not belong to this state root; "
				      "choose another bridge and subnet in the configuration"), c->bridge);
	return 1;
}

/* Runs the lines of script through one "ip [-n netns] -batch -" (names in it
 * are checked: no blanks, no newlines). */
static int ip_batch(struct sb_error *err, const char *netns, const char *script)
{
	const char *host[] = { "ip", "-batch", "-", NULL };
	const char *inside[] = { "ip", "-n", netns, "-batch", "-", NULL };

	return sb_net_cmd(NULL, netns ? inside : host, script, err);
}

/* A bridge whose address was never set takes its lowest port's, and another
 * when that port goes (all zeros with none). Sandboxes keep the address that
 * proxy ARP gave them for their peers (the bridge's), so after a removal their
 * packets to a peer went to a MAC nobody has until their neighbour entry
 * aged out: about two minutes (docs/egress.md). Pinned once, to the address
 * it has now (running sandboxes' entries stay right) or, when all zeros, to
 * one from its name. */
static int pin_bridge_address(const char *bridge, struct sb_error *err)
{
	char path[96], mac[18], *type = NULL, *cur = NULL;
	int rc;

	snprintf(path, sizeof(path), SYS_NET "/%s/addr_assign_type", bridge);
	if ((rc = sb_fs_read_file(&type, NULL, path, 64, err)) == 0 && atoi(type) != 3 /* NET_ADDR_SET */) {
		snprintf(path, sizeof(path), SYS_NET "/%s/address", bridge);
		if ((rc = sb_fs_read_file(&cur, NULL, path, 64, err)) == 0) {
			uint32_t h = 2166136261u;   /* FNV-1a */
			for (const char *p = bridge; *p; p++)
				h = (h ^ (unsigned char)*p) * 16777619u;
			if (strlen(cur) >= 17 && strncmp(cur, "00:00:00:00:00:00", 17) != 0)
				snprintf(mac, sizeof(mac), "%.17s", cur);
			else   /* locally administered, unicast */
				snprintf(mac, sizeof(mac), "02:5b:%02x:%02x:%02x:%02x", h >> 24, (h >> 16) & 255u,
					 (h >> 8) & 255u, h & 255u);
			rc = ip(err, "link", "set", "dev", bridge, "address", mac, (char *)NULL);
		}
	}
	free(type);
	free(cur);
	return rc;
}

static int ensure_bridge(const struct net_ctx *c, struct sb_error *err)
{
	char gw[16], net[16], subnet[24], script[512];
	int rc = bridge_owned(c, err), n = 0;

	if (rc < 0)
		return rc;
	snprintf(subnet, sizeof(subnet), "%s/%d", sb_ipv4_format(net, c->subnet.net), c->subnet.prefix);
	if (rc == 0) {
		/* another interface in the subnet would make routing ambiguous */
		const char *show[] = { "ip", "-o", "-4", "addr", "show", "to", subnet, NULL };
		char *out;
		if ((rc = sb_net_cmd(&out, show, NULL, err)) < 0)
			return rc;
		int used = out[0] != '\0';
		free(out);
		if (used)
			return sb_error_set(err, SB_ERR_BUSY,
					    _("subnet %s is already used by a host interface; choose another subnet"), subnet);
		n = snprintf(script, sizeof(script), "link add %s type bridge\nlink set dev %s alias %s\n", c->bridge,
			     c->bridge, c->alias);
	}
	snprintf(script + n, sizeof(script) - (size_t)n, "addr replace %s/%d dev %s\nlink set dev %s up\n",
		 sb_ipv4_format(gw, sb_subnet_gateway(&c->subnet)), c->subnet.prefix, c->bridge, c->bridge);
	if ((rc = ip_batch(err, NULL, script)) < 0 || (rc = pin_bridge_address(c->bridge, err)) < 0)
		return rc;
	/* the ports are isolated, so a sandbox's ARP for another one reaches
	 * only the host: answering it with the bridge's own address routes
	 * sandbox-to-sandbox traffic through the host, where nftables decides
	 * (docs/egress.md) */
	snprintf(script, sizeof(script), "/proc/sys/net/ipv4/conf/%s/proxy_arp_pvlan", c->bridge);
	return sb_net_sysctl_on(script, err);
}

/* Namespace, veth, address, route: whatever is missing (runsc takes the
 * address and routes away when it starts a sandbox in the namespace). */
static int ensure_netns(const struct sb_netinfo *n, struct sb_error *err)
{
	char script[512];
	int rc = 0;

	if (access(n->netns_path, F_OK) != 0 && (rc = ip(err, "netns", "add", n->netns, (char *)NULL)) < 0)
		return rc;
	if (!link_exists(n->veth)) {
		/* isolated ports: sandboxes on one bridge cannot reach each other */
		snprintf(script, sizeof(script),
			 "link add %s type veth peer name " IFNAME " netns %s\n"
			 "link set dev %s master %s up\n"
			 "link set dev %s type bridge_slave isolated on\n",
			 n->veth, n->netns, n->veth, n->bridge, n->veth);
		if ((rc = ip_batch(err, NULL, script)) < 0)
			return rc;
	}
	snprintf(script, sizeof(script),
		 "link set dev lo up\n"
		 "link set dev " IFNAME " up\n"
		 "addr replace %s/%d dev " IFNAME "\n"
		 "route replace default via %s dev " IFNAME "\n",
		 n->address, n->prefix, n->gateway);
	return ip_batch(err, n->netns, script);
}

/* The nameservers (host order) named in a resolv.conf text. */
static size_t parse_nameservers(uint32_t *out, size_t max, char *text)
{
	char *save = NULL;
	size_t n = 0;

	for (char *line = strtok_r(text, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char value[64];
		struct in_addr in;
		if (sscanf(line, "nameserver %63s", value) == 1 && inet_pton(AF_INET, value, &in) == 1)
			out[n++] = ntohl(in.s_addr);
	}
	return n;
}

static int mkdir_in_root(const struct net_ctx *c, const char *name, struct sb_error *err)
{
	char *dir = sb_root_file(c->root, name);
	int rc = dir ? sb_fs_mkdirs(dir, 0755, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));

	free(dir);
	return rc;
}

/* The filtering resolver's policy file: the sandbox's sets, the upstream
 * nameservers and the allowed names (net/resolver.c reads it per query). */
static int write_dns_policy(const struct sb_netinfo *n, const struct net_ctx *c, uint32_t addr, const uint32_t *ns,
			    size_t n_ns, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	char line[SB_EGRESS_RULE_MAX + 64], dotted[16];
	int ok = 1;

	snprintf(line, sizeof(line), "sets oa_%s_%08x op_%s_%08x\n", c->tag, (unsigned)addr, c->tag, (unsigned)addr);
	ok = sb_buf_add(&b, line, strlen(line)) == 0;
	if (c->dns_upstream) {
		snprintf(line, sizeof(line), "upstream %s\n", c->dns_upstream);
		ok = ok && sb_buf_add(&b, line, strlen(line)) == 0;
	}
	for (size_t i = 0; ok && !c->dns_upstream && i < n_ns; i++) {
		snprintf(line, sizeof(line), "upstream %s\n", sb_ipv4_format(dotted, ns[i]));
		ok = sb_buf_add(&b, line, strlen(line)) == 0;
	}
	for (size_t i = 0; ok && i < c->egress->n_rules; i++) {
		if (!c->egress->rules[i].name[0])
			continue;
		snprintf(line, sizeof(line), "name %s %d\n", c->egress->rules[i].name, c->egress->rules[i].port);
		ok = sb_buf_add(&b, line, strlen(line)) == 0;
	}
	int rc = ok ? sb_fs_write_atomic(n->dns_policy, b.data, b.len, 0644, err)
		    : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	sb_buf_clear(&b);
	return rc;
}

/* The policy's nftables objects, with each sandbox:NAME rule at the address
 * NAME has leased now (none: the rule reaches nothing), and the NAT table's
 * pairs of this sandbox to those addresses. */
static int apply_resolved(const struct net_ctx *c, uint32_t addr, const struct sb_egress *e, const uint32_t *ns,
			  size_t n_ns, const struct sb_egress_dns *dns, struct sb_error *err)
{
	struct sb_egress copy;
	uint32_t *peers = NULL;
	size_t n_peers = 0;
	int rc = 0;

	if (sb_egress_copy(&copy, e) < 0 || !(peers = calloc(e->n_rules + 1, sizeof(*peers)))) {
		sb_egress_clear(&copy);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	for (size_t i = 0; i < copy.n_rules; i++) {
		struct sb_egress_rule *r = &copy.rules[i];
		uint32_t a;
		if (!r->sandbox[0] || copy.mode != SB_EGRESS_ALLOW || sb_lease_find(&a, c->root, r->sandbox, NULL) < 0)
			continue;
		r->net = a;
		r->prefix = 32;
		peers[n_peers++] = a;
	}
	/* the chain first: a pair without its chain's rule is dropped there */
	if ((rc = sb_egress_nft_apply(c->tag, addr, &copy, c->allow_private, ns, n_ns, dns, err)) == 0)
		rc = sb_nat_peers_set(addr, peers, n_peers, err);
	free(peers);
	sb_egress_clear(&copy);
	return rc;
}

/* resolv.conf, the resolver's policy and the nftables objects of the
 * sandbox's policy. resolv.conf is rewritten in place (the running sandbox
 * has it bound): the host's nameservers, or the gateway when the policy
 * names hosts, whose queries then go to the filtering resolver. */
static int apply_egress(struct sb_netinfo *n, const struct net_ctx *c, uint32_t addr, struct sb_error *err)
{
	static const struct sb_egress fallback = { .mode = SB_EGRESS_DEFAULT };
	const struct sb_egress *e = c->egress ? c->egress : &fallback;
	int names = sb_egress_has_names(e), rc;
	uint32_t ns[8], gw = sb_subnet_gateway(&c->subnet);
	size_t n_ns = 0;
	char *text = NULL, *copy = NULL;

	if ((rc = mkdir_in_root(c, RESOLV_DIR, err)) < 0 || (rc = mkdir_in_root(c, DNS_DIR, err)) < 0 ||
	    (rc = sb_resolv_conf_build(&text, &n->nameservers, c->resolv_sources, err)) < 0)
		return rc;
	if (!(copy = strdup(text)))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else
		n_ns = parse_nameservers(ns, sizeof(ns) / sizeof(ns[0]), copy);
	free(copy);
	if (rc == 0 && names) {
		free(text);
		text = sb_strdupf("# generated by sandbench: names go to the filtering resolver of the "
				  "sandbox's allow-list\nnameserver %s\n", n->gateway);
		n->nameservers = 1;
		rc = text ? write_dns_policy(n, c, addr, ns, n_ns, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (rc == 0)
		rc = sb_fs_write_changed(n->resolv_conf, text, strlen(text), 0644, err);
	free(text);
	if (rc == 0 && !names && unlink(n->dns_policy) < 0 && errno != ENOENT)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot remove '%s'"), n->dns_policy);
	struct sb_egress_dns dns = { gw, n->dns_port, names };
	return rc < 0 ? rc : apply_resolved(c, addr, e, ns, n_ns, &dns, err);
}

/* Removes what exists of one sandbox's objects; the first error is kept. */
static int remove_sandbox_objects(const struct net_ctx *c, struct sb_error *err)
{
	struct sb_netinfo n;
	uint32_t addr;
	int rc = 0, r;
	int leased = sb_lease_find(&addr, c->root, c->name, NULL) == 0;

	fill_info(&n, c, leased ? addr : c->subnet.net);
	if (leased) {
		if (link_exists(n.veth) && (r = ip(err, "link", "del", "dev", n.veth, (char *)NULL)) < 0 && rc == 0)
			rc = r;
		if ((r = sb_nat_remove(addr, rc == 0 ? err : NULL)) < 0 && rc == 0)
			rc = r;
		if ((r = sb_nat_peers_remove(addr, rc == 0 ? err : NULL)) < 0 && rc == 0)
			rc = r;
		struct sb_egress_dns dns = { sb_subnet_gateway(&c->subnet), n.dns_port, 0 };
		if ((r = sb_egress_nft_remove(c->tag, addr, &dns, rc == 0 ? err : NULL)) < 0 && rc == 0)
			rc = r;
	}
	if (access(n.netns_path, F_OK) == 0 && (r = ip(rc == 0 ? err : NULL, "netns", "del", n.netns, (char *)NULL)) < 0 &&
	    rc == 0)
		rc = r;
	if (fill_paths(&n, c) < 0 && rc == 0)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	const char *files[] = { n.resolv_conf, n.dns_policy, n.dns_denied };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i] && unlink(files[i]) < 0 && errno != ENOENT && rc == 0)
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot remove '%s'"), files[i]);
	sb_netinfo_clear(&n);
	if (rc == 0)
		rc = sb_lease_release(c->root, c->name, err);
	return rc;
}

/* The bridge goes with the root's last lease. */
static int remove_bridge_if_unused(const struct net_ctx *c, struct sb_error *err)
{
	struct sb_lease *leases;
	size_t count;
	int rc = sb_lease_list(&leases, &count, c->root, err);

	free(leases);
	if (rc < 0 || count > 0)
		return rc;
	if (bridge_owned(c, NULL) == 1 && (rc = ip(err, "link", "del", "dev", c->bridge, (char *)NULL)) < 0)
		return rc;
	if ((rc = sb_egress_nft_remove_bridge(c->bridge, err)) < 0)
		return rc;
	return sb_nat_remove_bridge(c->bridge, err);
}

int sb_network_setup(struct sb_netinfo *out, struct sb_root *root, const struct sb_network_config *cfg,
		     const char *name, struct sb_error *err)
{
	struct net_ctx c;
	uint32_t addr;
	int rc = ctx_init(&c, root, cfg, name, err);

	memset(out, 0, sizeof(*out));
	if (rc < 0 || (rc = host_lock(&c, err)) < 0)
		return rc;
	int fresh = sb_lease_find(&addr, root, name, NULL) == SB_ERR_NOTFOUND;
	/* before anything changes: the bridge would get the new subnet's gateway */
	if ((!fresh || (rc = sb_lease_check_subnet(root, &c.subnet, err)) == 0) && (rc = ensure_bridge(&c, err)) == 0 &&
	    (rc = sb_nat_ensure(c.bridge, err)) == 0 &&
	    (rc = sb_egress_nft_ensure(c.bridge, err)) == 0 &&
	    (rc = sb_lease_take(&addr, root, &c.subnet, name, err)) == 0) {
		fill_info(out, &c, addr);
		/* a new lease may reuse a removed sandbox's address: the host's
		 * neighbour entry would still give the old MAC, and a sandbox that
		 * only answers (a service reached by its peers) never corrects it */
		if (fresh)
			ip(NULL, "neigh", "flush", "to", out->address, "dev", c.bridge, (char *)NULL);
		if (fill_paths(out, &c) < 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		else if ((rc = ensure_netns(out, err)) == 0 && (rc = apply_egress(out, &c, addr, err)) == 0)
			rc = sb_nat_add(addr, err);
	}
	if (rc < 0) {
		sb_error_wrap(err, _("cannot set up the network of sandbox '%s'"), name);
		if (fresh) {
			remove_sandbox_objects(&c, NULL);
			remove_bridge_if_unused(&c, NULL);
		}
		sb_netinfo_clear(out);
	}
	host_unlock(&c);
	return rc;
}

int sb_network_info(struct sb_netinfo *out, struct sb_root *root, const struct sb_network_config *cfg,
		    const char *name, struct sb_error *err)
{
	struct net_ctx c;
	uint32_t addr;
	int rc = ctx_init(&c, root, cfg, name, err);

	memset(out, 0, sizeof(*out));
	if (rc < 0 || (rc = sb_lease_find(&addr, root, name, err)) < 0)
		return rc;
	fill_info(out, &c, addr);
	if (fill_paths(out, &c) < 0) {
		sb_netinfo_clear(out);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int sb_network_teardown(struct sb_root *root, const struct sb_network_config *cfg, const char *name,
			struct sb_error *err)
{
	struct net_ctx c;
	int rc = ctx_init(&c, root, cfg, name, err);

	if (rc < 0 || (rc = host_lock(&c, err)) < 0)
		return rc;
	rc = remove_sandbox_objects(&c, err);
	if (rc == 0)
		rc = remove_bridge_if_unused(&c, err);
	host_unlock(&c);
	if (rc < 0)
		sb_error_wrap(err, _("cannot remove the network of sandbox '%s'"), name);
	return rc;
}

/* The namespace of a running sandbox under a second name, then the first
 * name goes: runsc holds the namespace, not its name. A namespace at to that
 * no lease accounts for (the caller checked) is an orphan and goes first. */
static int netns_move(const char *from, const char *to, struct sb_error *err)
{
	if (umount2(to, MNT_DETACH) == 0 || errno == EINVAL)
		unlink(to);
	int fd = open(to, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), to);
	close(fd);
	if (mount(from, to, NULL, MS_BIND, NULL) < 0) {
		int e = errno;
		unlink(to);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot bind '%s' to '%s'"), from, to);
	}
	/* one left behind is a name without a lease: gc removes it */
	if (umount2(from, MNT_DETACH) == 0)
		unlink(from);
	return 0;
}

/* Moves the objects named after from (lease, namespace, files) to to; what
 * is keyed by the address (veth, NAT, egress chains) stays. */
static int rename_objects(const struct net_ctx *a, const struct net_ctx *b, struct sb_netinfo *na,
			  struct sb_netinfo *nb, uint32_t addr, struct sb_error *err)
{
	int rc;

	fill_info(na, a, addr);
	fill_info(nb, b, addr);
	if (fill_paths(na, a) < 0 || fill_paths(nb, b) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_lease_rename(a->root, a->name, b->name, err)) < 0)
		return rc;
	if ((rc = netns_move(na->netns_path, nb->netns_path, err)) < 0) {
		sb_lease_rename(a->root, b->name, a->name, NULL);
		return rc;
	}
	const char *const files[][2] = { { na->resolv_conf, nb->resolv_conf }, { na->dns_policy, nb->dns_policy },
					 { na->dns_denied, nb->dns_denied } };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (rename(files[i][0], files[i][1]) < 0 && errno != ENOENT)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot rename '%s'"), files[i][0]);
	return 0;
}

int sb_network_rename(struct sb_root *root, const struct sb_network_config *cfg, const char *from, const char *to,
		      struct sb_error *err)
{
	struct sb_netinfo na, nb;
	struct net_ctx a, b;
	uint32_t addr;
	int rc = ctx_init(&a, root, cfg, from, err);

	memset(&na, 0, sizeof(na));
	memset(&nb, 0, sizeof(nb));
	if (rc < 0 || (rc = ctx_init(&b, root, cfg, to, err)) < 0 || (rc = host_lock(&a, err)) < 0)
		return rc;
	if ((rc = sb_lease_find(&addr, root, from, err)) == 0)
		rc = rename_objects(&a, &b, &na, &nb, addr, err);
	host_unlock(&a);
	sb_netinfo_clear(&na);
	sb_netinfo_clear(&nb);
	if (rc < 0)
		sb_error_wrap(err, _("cannot give the network of sandbox '%s' to '%s'"), from, to);
	return rc;
}

int sb_network_egress_update(struct sb_root *root, const struct sb_network_config *cfg, const char *name,
			     struct sb_error *err)
{
	struct sb_netinfo n;
	struct net_ctx c;
	uint32_t addr;
	int rc = ctx_init(&c, root, cfg, name, err);

	if (rc < 0 || (rc = host_lock(&c, err)) < 0)
		return rc;
	if (sb_lease_find(&addr, root, name, NULL) == 0) {
		fill_info(&n, &c, addr);
		if (fill_paths(&n, &c) < 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		/* the shared tables first: the resolver's input rule, the peers set
		 * and its rules, as this version has them */
		else if (access(n.netns_path, F_OK) == 0 && (rc = sb_nat_ensure(c.bridge, err)) == 0 &&
			 (rc = sb_egress_nft_ensure(c.bridge, err)) == 0)
			rc = apply_egress(&n, &c, addr, err);
		sb_netinfo_clear(&n);
	}
	host_unlock(&c);
	if (rc < 0)
		sb_error_wrap(err, _("cannot change the egress policy of sandbox '%s'"), name);
	return rc;
}

/* The names the resolver refused ("MS NAME" lines of path), one denial per
 * name with its count and last time; -1 when out of memory. */
static int add_dns_denials(struct sb_egress_denial **out, size_t *count, const char *path)
{
	char *text = NULL, *save = NULL;

	if (sb_fs_read_file(&text, NULL, path, 1 << 20, NULL) < 0)
		return 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[SB_DNS_NAME_MAX + 1];
		long long ms;
		size_t i;
		if (sscanf(l, "%lld %253s", &ms, name) != 2 || sb_dns_name_canon(name, name, strlen(name)) < 0)
			continue;
		for (i = 0; i < *count; i++)
			if (!strcmp((*out)[i].proto, "dns") && !strcmp((*out)[i].name, name))
				break;
		if (i == *count) {
			struct sb_egress_denial *grown = realloc(*out, (*count + 1) * sizeof(**out));
			if (!grown) {
				free(text);
				return -1;
			}
			*out = grown;
			memset(&grown[i], 0, sizeof(grown[i]));
			strcpy(grown[i].proto, "dns");
			strcpy(grown[i].name, name);
			(*count)++;
		}
		(*out)[i].packets++;
		if (ms > (*out)[i].last_ms)
			(*out)[i].last_ms = ms;
	}
	free(text);
	return 0;
}

int sb_network_denials(struct sb_egress_denial **out, size_t *count, struct sb_root *root, const char *name,
		       struct sb_error *err)
{
	char tag[7];
	uint32_t addr;
	int rc = sb_network_tag(tag, root, err);

	*out = NULL;
	*count = 0;
	if (rc < 0)
		return rc;
	if (sb_lease_find(&addr, root, name, NULL) < 0)
		return 0;
	if ((rc = sb_egress_nft_denials(out, count, tag, addr, err)) < 0)
		return rc;
	struct net_ctx c = { .root = root, .name = name };
	char *path = root_path(&c, DNS_DIR, "denied"), *taken = path ? sb_strdupf("%s.read", path) : NULL;
	/* renamed first: the resolver appends to a new file meanwhile, and nothing is read twice */
	if (taken && rename(path, taken) == 0) {
		rc = add_dns_denials(out, count, taken);
		unlink(taken);
	} else if (!taken) {
		rc = -1;
	}
	free(path);
	free(taken);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*count = 0;
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int sb_network_address(char *out, struct sb_root *root, const char *name, struct sb_error *err)
{
	uint32_t addr;
	int rc = sb_lease_find(&addr, root, name, err);

	out[0] = '\0';
	if (rc == 0)
		sb_ipv4_format(out, addr);
	return rc;
}

void sb_netinfo_clear(struct sb_netinfo *info)
{
	if (!info)
		return;
	free(info->resolv_conf);
	free(info->dns_policy);
	free(info->dns_denied);
	memset(info, 0, sizeof(*info));
}

static int add_orphan(struct sb_net_orphan **list, size_t *n, enum sb_net_orphan_kind kind, const char *name)
{
	struct sb_net_orphan *grown = realloc(*list, (*n + 1) * sizeof(**list));

	if (!grown)
		return -1;
	*list = grown;
	grown[*n].kind = kind;
	snprintf(grown[*n].name, sizeof(grown[*n].name), "%s", name);
	(*n)++;
	return 0;
}

static int leased_name(const struct sb_lease *l, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i].name, name) == 0)
			return 1;
	return 0;
}

static int leased_addr(const struct sb_lease *l, size_t n, uint32_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].addr == addr)
			return 1;
	return 0;
}

/* Scans dir for entries starting with prefix; keep(entry + strlen(prefix)) says which are accounted for. */
static int scan_dir(struct sb_net_orphan **list, size_t *n, const char *dir, const char *prefix,
		    enum sb_net_orphan_kind kind, const struct net_ctx *c, const struct sb_lease *l, size_t nl)
{
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return 0; /* no /run/netns yet: nothing of ours */
	while ((de = readdir(d))) {
		const char *rest = de->d_name + plen;
		int kept;
		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		if (kind == SB_NET_ORPHAN_NETNS) {
			kept = rest[0] == '-' && leased_name(l, nl, rest + 1);
		} else {
			char *end;
			unsigned long idx = strtoul(rest, &end, 16);
			kept = *rest && !*end && leased_addr(l, nl, c->subnet.net + (uint32_t)idx);
			/* a veth is numbered within the subnet its sandbox was given an
			 * address of: while a lease lies outside this one, which veth is
			 * whose cannot be told, and none is taken for an orphan */
			kept = kept || c->foreign;
		}
		if (!kept && add_orphan(list, n, kind, de->d_name) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/* Egress chains of this root whose address has no lease. */
static int scan_egress(struct sb_net_orphan **list, size_t *n, const struct net_ctx *c, const struct sb_lease *l,
		       size_t nl, struct sb_error *err)
{
	uint32_t *addrs;
	size_t na;
	int rc = sb_egress_nft_chains(&addrs, &na, c->tag, err);
	char name[32];

	for (size_t i = 0; rc == 0 && i < na; i++) {
		snprintf(name, sizeof(name), "eg_%s_%08x", c->tag, (unsigned)addrs[i]);
		if (!leased_addr(l, nl, addrs[i]) && add_orphan(list, n, SB_NET_ORPHAN_EGRESS, name) < 0)
			rc = -1;
	}
	free(addrs);
	return rc;
}

int sb_network_orphans(struct sb_net_orphan **out, size_t *count, struct sb_root *root,
		       const struct sb_network_config *cfg, struct sb_error *err)
{
	struct sb_net_orphan *list = NULL;
	struct sb_lease *leases;
	struct net_ctx c;
	char prefix[16];
	size_t n = 0, nl;
	int rc = ctx_init(&c, root, cfg, NULL, err), oom = 0;

	*out = NULL;
	*count = 0;
	if (rc < 0 || (rc = sb_lease_list(&leases, &nl, root, err)) < 0)
		return rc;
	for (size_t i = 0; i < nl; i++)
		c.foreign |= !sb_subnet_contains(&c.subnet, leases[i].addr);
	for (size_t i = 0; i < nl && !oom; i++) {
		char *rec = sb_root_record_file(root, leases[i].name);
		oom = !rec || (access(rec, F_OK) != 0 && add_orphan(&list, &n, SB_NET_ORPHAN_LEASE, leases[i].name) < 0);
		free(rec);
	}
	snprintf(prefix, sizeof(prefix), "sb-%s", c.tag);
	oom = oom || scan_dir(&list, &n, NETNS_DIR, prefix, SB_NET_ORPHAN_NETNS, &c, leases, nl) < 0;
	snprintf(prefix, sizeof(prefix), "sb%sv", c.tag);
	oom = oom || scan_dir(&list, &n, SYS_NET, prefix, SB_NET_ORPHAN_VETH, &c, leases, nl) < 0;
	oom = oom || scan_egress(&list, &n, &c, leases, nl, err) < 0;
	if (!oom && nl == 0 && bridge_owned(&c, NULL) == 1)
		oom = add_orphan(&list, &n, SB_NET_ORPHAN_BRIDGE, c.bridge) < 0;
	free(leases);
	if (oom) {
		free(list);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	*out = list;
	*count = n;
	return 0;
}

int sb_network_orphan_remove(struct sb_root *root, const struct sb_network_config *cfg,
			     const struct sb_net_orphan *orphan, struct sb_error *err)
{
	struct net_ctx c;
	char prefix[16];
	int rc = ctx_init(&c, root, cfg, orphan->kind == SB_NET_ORPHAN_LEASE ? orphan->name : NULL, err);

	if (rc < 0)
		return rc;
	/* never anything that is not named as this root's */
	snprintf(prefix, sizeof(prefix), orphan->kind == SB_NET_ORPHAN_VETH ? "sb%sv" :
					 orphan->kind == SB_NET_ORPHAN_EGRESS ? "eg_%s_" : "sb-%s", c.tag);
	if ((orphan->kind == SB_NET_ORPHAN_NETNS || orphan->kind == SB_NET_ORPHAN_VETH ||
	     orphan->kind == SB_NET_ORPHAN_EGRESS) &&
	    strncmp(orphan->name, prefix, strlen(prefix)) != 0)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a network object of this state root"), orphan->name);
	if ((rc = host_lock(&c, err)) < 0)
		return rc;
	switch (orphan->kind) {
	case SB_NET_ORPHAN_LEASE:
		rc = remove_sandbox_objects(&c, err);
		break;
	case SB_NET_ORPHAN_NETNS:
		rc = ip(err, "netns", "del", orphan->name, (char *)NULL);
		break;
	case SB_NET_ORPHAN_VETH:
		rc = link_exists(orphan->name) ? ip(err, "link", "del", "dev", orphan->name, (char *)NULL) : 0;
		break;
	case SB_NET_ORPHAN_EGRESS: {
		struct sb_netinfo n;
		uint32_t addr = (uint32_t)strtoul(orphan->name + strlen(prefix), NULL, 16);
		fill_info(&n, &c, addr);
		struct sb_egress_dns dns = { sb_subnet_gateway(&c.subnet), n.dns_port, 0 };
		/* the pairs of a sandbox-to-sandbox rule go with it */
		if ((rc = sb_egress_nft_remove(c.tag, addr, &dns, err)) == 0)
			rc = sb_nat_peers_remove(addr, err);
		break;
	}
	case SB_NET_ORPHAN_BRIDGE:
		break;
	}
	if (rc == 0)
		rc = remove_bridge_if_unused(&c, err);
	host_unlock(&c);
	return rc;
}

const char *sb_net_orphan_kind_name(enum sb_net_orphan_kind kind)
{
	static const char *const names[] = {
		[SB_NET_ORPHAN_LEASE] = "lease",
		[SB_NET_ORPHAN_NETNS] = "netns",
		[SB_NET_ORPHAN_VETH] = "veth",
		[SB_NET_ORPHAN_BRIDGE] = "bridge",
		[SB_NET_ORPHAN_EGRESS] = "egress",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}
