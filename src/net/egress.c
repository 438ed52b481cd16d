/* Egress policies as values: parsing, formatting and copying rules. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/i18n.h"
#include "net/egress.h"

static const char *const mode_names[] = {
	[SB_EGRESS_DEFAULT] = "default", [SB_EGRESS_ALLOW] = "allow", [SB_EGRESS_DENY_ALL] = "deny-all",
};

const char *sb_egress_mode_name(enum sb_egress_mode m)
{
	return (unsigned)m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m] : "unknown";
}

int sb_egress_mode_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(mode_names[i], s))
			return (int)i;
	return -1;
}

/* Decimal number in [lo, hi] filling all of s; -1 otherwise. */
static long number(const char *s, long lo, long hi)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)s[0]) || strlen(s) > 6)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return *end || errno || v < lo || v > hi ? -1 : v;
}

static int looks_like_name(const char *s)
{
	for (; *s; s++)
		if (isalpha((unsigned char)*s))
			return 1;
	return 0;
}

int sb_dns_name_canon(char out[SB_DNS_NAME_MAX + 1], const char *text, size_t len)
{
	size_t label = 0;

	if (len && text[len - 1] == '.')
		len--;   /* the root's dot */
	if (len == 0 || len > SB_DNS_NAME_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '.') {
			if (label == 0)
				return -1;
			label = 0;
		} else if ((isalnum(c) || c == '-' || c == '_') && c < 128 && ++label <= 63) {
			/* a letter, digit, '-' or '_' in a label of at most 63 */
		} else {
			return -1;
		}
		out[i] = (char)tolower(c);
	}
	out[len] = '\0';
	return label ? 0 : -1;
}

int sb_dns_name_under(const char *name, const char *rule)
{
	size_t n = strlen(name), r = strlen(rule);

	return n == r ? strcmp(name, rule) == 0 : n > r && name[n - r - 1] == '.' && strcmp(name + n - r, rule) == 0;
}

int sb_egress_has_names(const struct sb_egress *e)
{
	for (size_t i = 0; e && e->mode == SB_EGRESS_ALLOW && i < e->n_rules; i++)
		if (e->rules[i].name[0])
			return 1;
	return 0;
}

#define SANDBOX_PREFIX "sandbox:"

/* "sandbox:NAME[:PORT]" (text starts with the prefix). */
static int parse_sandbox(struct sb_egress_rule *out, const char *text, struct sb_error *err)
{
	const char *name = text + strlen(SANDBOX_PREFIX), *colon = strchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);
	long port = 0;
	struct sb_error why;

	if (colon && (port = number(colon + 1, 1, 65535)) < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': the port must be a number from 1 to 65535"), text);
	if (len == 0 || len > SB_NAME_MAX)
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s' is not sandbox:NAME[:PORT]"), text);
	memcpy(out->sandbox, name, len);
	out->sandbox[len] = '\0';
	if (sb_name_check(out->sandbox, _("sandbox name"), &why) < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': %s"), text, why.msg);
	out->port = (int)port;
	return 0;
}

int sb_egress_rule_parse(struct sb_egress_rule *out, const char *text, struct sb_error *err)
{
	char addr[SB_EGRESS_RULE_MAX];
	const char *colon = strchr(text, ':'), *slash;
	size_t alen = colon ? (size_t)(colon - text) : strlen(text);
	struct in_addr in;
	long prefix = 32, port = 0;

	memset(out, 0, sizeof(*out));
	if (!strncmp(text, SANDBOX_PREFIX, strlen(SANDBOX_PREFIX)))
		return parse_sandbox(out, text, err);
	if (colon && strchr(colon + 1, ':'))
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': IPv6 is not supported (sandboxes have IPv4 only)"),
				    text);
	if (colon && (port = number(colon + 1, 1, 65535)) < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': the port must be a number from 1 to 65535"), text);
	if (alen == 0 || alen >= sizeof(addr))
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s' is not ADDRESS[/PREFIX][:PORT]"), text);
	memcpy(addr, text, alen);
	addr[alen] = '\0';
	if ((slash = strchr(addr, '/'))) {
		if ((prefix = number(slash + 1, 0, 32)) < 0)
			return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': the prefix length must be 0 to 32"), text);
		addr[slash - addr] = '\0';
	}
	if (inet_pton(AF_INET, addr, &in) != 1) {
		if (looks_like_name(addr) && !slash) {
			if (sb_dns_name_canon(out->name, addr, strlen(addr)) < 0)
				return sb_error_set(err, SB_ERR_INVALID,
						    _("allow rule '%s': '%s' is not a host name (letters, digits, '-' and '_' in "
						      "dot-separated labels)"), text, addr);
			/* its canonical text with a port would read as sandbox:PORT */
			if (!strcmp(out->name, "sandbox"))
				return sb_error_set(err, SB_ERR_INVALID,
						    _("allow rule '%s': the host name 'sandbox' is taken by the "
						      "sandbox:NAME[:PORT] rules"), text);
			out->prefix = 32;
			out->port = (int)port;
			return 0;
		}
		if (looks_like_name(addr))
			return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': a name takes no prefix length"), text);
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s': '%s' is not an IPv4 address"), text, addr);
	}
	out->net = ntohl(in.s_addr);
	out->prefix = (int)prefix;
	out->port = (int)port;
	if (prefix < 32 && (out->net & ~(prefix ? 0xffffffffu << (32 - prefix) : 0)))
		return sb_error_set(err, SB_ERR_INVALID, _("allow rule '%s' has host bits set"), text);
	return 0;
}

const char *sb_egress_rule_format(char buf[SB_EGRESS_RULE_MAX], const struct sb_egress_rule *r)
{
	int n = r->sandbox[0] ? snprintf(buf, SB_EGRESS_RULE_MAX, SANDBOX_PREFIX "%s", r->sandbox)
		: r->name[0]  ? snprintf(buf, SB_EGRESS_RULE_MAX, "%s", r->name)
			      : snprintf(buf, SB_EGRESS_RULE_MAX, "%u.%u.%u.%u", r->net >> 24, (r->net >> 16) & 255,
				      (r->net >> 8) & 255, r->net & 255);

	if (r->prefix != 32 && !r->name[0] && !r->sandbox[0])
		n += snprintf(buf + n, SB_EGRESS_RULE_MAX - (size_t)n, "/%d", r->prefix);
	if (r->port)
		snprintf(buf + n, SB_EGRESS_RULE_MAX - (size_t)n, ":%d", r->port);
	return buf;
}

int sb_egress_add_rule(struct sb_egress *e, const struct sb_egress_rule *r)
{
	for (size_t i = 0; i < e->n_rules; i++)
		if (e->rules[i].net == r->net && e->rules[i].prefix == r->prefix && e->rules[i].port == r->port &&
		    strcmp(e->rules[i].name, r->name) == 0 && strcmp(e->rules[i].sandbox, r->sandbox) == 0)
			return 0;
	struct sb_egress_rule *grown = realloc(e->rules, (e->n_rules + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	e->rules = grown;
	e->rules[e->n_rules++] = *r;
	return 0;
}

int sb_egress_copy(struct sb_egress *dst, const struct sb_egress *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->mode = src->mode;
	for (size_t i = 0; i < src->n_rules; i++) {
		if (sb_egress_add_rule(dst, &src->rules[i]) < 0) {
			sb_egress_clear(dst);
			return -1;
		}
	}
	return 0;
}

void sb_egress_clear(struct sb_egress *e)
{
	if (!e)
		return;
	free(e->rules);
	memset(e, 0, sizeof(*e));
}

char *sb_egress_describe(const struct sb_egress *e)
{
	struct sb_buf b = { 0 };
	char rule[SB_EGRESS_RULE_MAX];
	const char *mode = sb_egress_mode_name(e->mode);
	int ok = sb_buf_add(&b, mode, strlen(mode)) == 0;

	for (size_t i = 0; ok && e->mode == SB_EGRESS_ALLOW && i < e->n_rules; i++) {
		sb_egress_rule_format(rule, &e->rules[i]);
		ok = sb_buf_add(&b, i ? ", " : " ", i ? 2 : 1) == 0 && sb_buf_add(&b, rule, strlen(rule)) == 0;
	}
	if (!ok) {
		sb_buf_clear(&b);
		return NULL;
	}
	return sb_buf_steal(&b, NULL);
}
