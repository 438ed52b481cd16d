#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"

#define LEASE_DIR "network/leases"

int sb_subnet_parse(struct sb_subnet *out, const char *text, struct sb_error *err)
{
	char addr[32];
	const char *slash = strchr(text, '/');
	struct in_addr in;
	char *end;
	long prefix;

	if (!slash || (size_t)(slash - text) >= sizeof(addr))
		return sb_error_set(err, SB_ERR_INVALID, _("subnet '%s' is not ADDRESS/PREFIX"), text);
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	errno = 0;
	prefix = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, addr, &in) != 1 || *end || end == slash + 1 || errno)
		return sb_error_set(err, SB_ERR_INVALID, _("subnet '%s' is not ADDRESS/PREFIX"), text);
	/* 16..29: at least two sandboxes, and host numbers fit the 4 hex digits of veth names */
	if (prefix < 16 || prefix > 29)
		return sb_error_set(err, SB_ERR_INVALID, _("subnet '%s': the prefix length must be 16 to 29"), text);
	out->net = ntohl(in.s_addr);
	out->prefix = (int)prefix;
	if (out->net & ~(0xffffffffu << (32 - prefix)))
		return sb_error_set(err, SB_ERR_INVALID, _("subnet '%s' has host bits set"), text);
	return 0;
}

uint32_t sb_subnet_gateway(const struct sb_subnet *s)
{
	return s->net + 1;
}

static uint32_t subnet_size(const struct sb_subnet *s)
{
	return 1u << (32 - s->prefix);
}

int sb_subnet_contains(const struct sb_subnet *s, uint32_t addr)
{
	/* network, gateway and broadcast are never sandbox addresses */
	return addr > s->net + 1 && addr < s->net + subnet_size(s) - 1;
}

const char *sb_ipv4_format(char *buf, uint32_t addr)
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255, addr & 255);
	return buf;
}

/* Reads one lease file; 0 when it parsed. */
static int read_lease(struct sb_lease *out, int dfd, const char *fname)
{
	struct in_addr in;
	char buf[SB_NAME_MAX + 2];
	ssize_t n;
	int fd;

	if (inet_pton(AF_INET, fname, &in) != 1)
		return -1;
	fd = openat(dfd, fname, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!buf[0] || strlen(buf) > SB_NAME_MAX)
		return -1;
	out->addr = ntohl(in.s_addr);
	snprintf(out->name, sizeof(out->name), "%s", buf);
	return 0;
}

static int open_dir(DIR **out, char **path, struct sb_root *root, struct sb_error *err)
{
	int rc;

	*out = NULL;
	*path = sb_root_file(root, LEASE_DIR);
	if (!*path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_fs_mkdirs(*path, 0700, err)) < 0)
		return rc;
	*out = opendir(*path);
	if (!*out)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), *path);
	return 0;
}

int sb_lease_list(struct sb_lease **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	struct sb_lease *list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	char *path;
	DIR *d;
	int rc = open_dir(&d, &path, root, err);

	*out = NULL;
	*count = 0;
	free(path);
	if (rc < 0)
		return rc;
	while ((de = readdir(d))) {
		struct sb_lease l;
		if (read_lease(&l, dirfd(d), de->d_name) < 0)
			continue;
		if (n == cap) {
			struct sb_lease *grown = realloc(list, (cap = cap ? cap * 2 : 16) * sizeof(*list));
			if (!grown) {
				free(list);
				closedir(d);
				return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			}
			list = grown;
		}
		list[n++] = l;
	}
	closedir(d);
	*out = list;
	*count = n;
	return 0;
}

int sb_lease_find(uint32_t *addr, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_lease *list;
	size_t n;
	int rc = sb_lease_list(&list, &n, root, err);

	if (rc < 0)
		return rc;
	rc = sb_error_set(err, SB_ERR_NOTFOUND, _("sandbox '%s' has no network address"), name);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].name, name) == 0) {
			*addr = list[i].addr;
			rc = 0;
			break;
		}
	}
	free(list);
	return rc;
}

/* Writes a complete temp file holding name; *tmp is its path. */
static int write_temp(char **tmp, const char *dir, const char *name, struct sb_error *err)
{
	size_t len = strlen(name);
	int fd, rc = 0;

	*tmp = sb_strdupf("%s/.tmp-XXXXXX", dir);
	if (!*tmp)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot create a lease in '%s'"), dir);
		free(*tmp);
		*tmp = NULL;
		return rc;
	}
	if (write(fd, name, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write a lease in '%s'"), dir);
	close(fd);
	if (rc < 0) {
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return rc;
}

/* 1 and *out when a lease lies outside subnet, 0 when none does. */
static int find_foreign(struct sb_lease *out, struct sb_root *root, const struct sb_subnet *subnet,
			struct sb_error *err)
{
	struct sb_lease *list;
	size_t n;
	int rc = sb_lease_list(&list, &n, root, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (!sb_subnet_contains(subnet, list[i].addr)) {
			*out = list[i];
			rc = 1;
		}
	free(list);
	return rc;
}

int sb_lease_check_subnet(struct sb_root *root, const struct sb_subnet *subnet, struct sb_error *err)
{
	struct sb_lease other = { 0 };
	char dotted[16];
	int rc = find_foreign(&other, root, subnet, err);

	if (rc <= 0)
		return rc;
	return sb_error_set(err, SB_ERR_STATE,
			    _("sandbox '%s' has address %s outside the configured subnet (was network_subnet changed?): "
			      "remove it, or set the subnet back, before a sandbox gets a new address"),
			    other.name, sb_ipv4_format(dotted, other.addr));
}

int sb_lease_take(uint32_t *addr, struct sb_root *root, const struct sb_subnet *subnet, const char *name,
		  struct sb_error *err)
{
	char *dir = NULL, *tmp = NULL, dotted[16];
	uint32_t found;
	int rc = sb_lease_find(&found, root, name, err);

	if (rc == 0) {
		if (!sb_subnet_contains(subnet, found))
			return sb_error_set(err, SB_ERR_STATE,
					    _("sandbox '%s' has address %s outside the configured subnet"), name,
					    sb_ipv4_format(dotted, found));
		*addr = found;
		return 0;
	}
	if (rc != SB_ERR_NOTFOUND)
		return rc;
	if (!(dir = sb_root_file(root, LEASE_DIR)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = write_temp(&tmp, dir, name, err)) < 0) {
		free(dir);
		return rc;
	}
	rc = sb_error_set(err, SB_ERR_LIMIT, _("no free address left in the sandbox subnet"));
	for (uint32_t a = subnet->net + 2; sb_subnet_contains(subnet, a); a++) {
		char *path = sb_strdupf("%s/%s", dir, sb_ipv4_format(dotted, a));
		if (!path) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			break;
		}
		int r = link(tmp, path);
		int e = errno;
		free(path);
		if (r == 0) {
			*addr = a;
			rc = sb_fs_fsync_dir(dir, err);
			break;
		}
		if (e != EEXIST) {
			rc = sb_error_errno(err, SB_ERR_IO, e, _("cannot lease %s"), dotted);
			break;
		}
	}
	unlink(tmp);
	free(tmp);
	free(dir);
	return rc;
}

int sb_lease_rename(struct sb_root *root, const char *from, const char *to, struct sb_error *err)
{
	char dotted[16], *dir, *tmp = NULL, *path = NULL;
	uint32_t addr, other;
	int rc = sb_lease_find(&addr, root, from, err);

	if (rc < 0)
		return rc;
	if (sb_lease_find(&other, root, to, NULL) == 0)
		return sb_error_set(err, SB_ERR_EXISTS, _("sandbox '%s' has a network address already"), to);
	if (!(dir = sb_root_file(root, LEASE_DIR)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	/* the lease names one of the two at every moment: a whole file replaces it */
	if ((rc = write_temp(&tmp, dir, to, err)) == 0) {
		path = sb_strdupf("%s/%s", dir, sb_ipv4_format(dotted, addr));
		if (!path)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		else if (rename(tmp, path) < 0)
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot lease %s"), dotted);
		else
			rc = sb_fs_fsync_dir(dir, err);
		if (rc < 0)
			unlink(tmp);
	}
	free(path);
	free(tmp);
	free(dir);
	return rc;
}

int sb_lease_release(struct sb_root *root, const char *name, struct sb_error *err)
{
	char dotted[16], *dir, *path;
	uint32_t addr;
	int rc = sb_lease_find(&addr, root, name, err);

	if (rc == SB_ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	dir = sb_root_file(root, LEASE_DIR);
	path = dir ? sb_strdupf("%s/%s", dir, sb_ipv4_format(dotted, addr)) : NULL;
	if (!path)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if (unlink(path) < 0 && errno != ENOENT)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot release lease '%s'"), path);
	else
		rc = sb_fs_fsync_dir(dir, err);
	free(path);
	free(dir);
	return rc;
}
