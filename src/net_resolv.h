/* The resolv.conf bound into sandboxes with network on. */
#ifndef SB_NET_RESOLV_H
#define SB_NET_RESOLV_H

#include "error.h"

/* Where the host's resolvers are read from, in order: the first file with a
 * nameserver a sandbox can reach wins. systemd-resolved's upstream list comes
 * second because /etc/resolv.conf then names only its loopback stub. */
extern const char *const sb_resolv_default_sources[];

/* Builds the text from the first of sources (NULL-terminated) that names a
 * usable nameserver: IPv4 and not loopback (a loopback resolver of the host is
 * not reachable from a sandbox, which has its own loopback). Its search and
 * options lines are kept. *nameservers is how many were kept; 0 means none
 * was usable, and the text says so in a comment (name lookups will fail while
 * addresses still work). */
int sb_resolv_conf_build(char **out, int *nameservers, const char *const *sources, struct sb_error *err);

#endif
