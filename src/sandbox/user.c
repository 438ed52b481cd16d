/* A USER value ("name", "uid", "name:group", "uid:gid") as numbers, looked up
 * in the tree's own /etc/passwd and /etc/group. Those files are the image's
 * or the sandbox's, which code inside may have replaced with anything: they
 * are read inside the tree only (base/inroot.h), never through the host's
 * view of it, and never through the host's own user database. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/i18n.h"
#include "base/inroot.h"

#define DB_MAX (1 << 20)
#define ID_MAX 4294967294ULL             /* (uid_t)-1 means "unchanged" to the kernel */

/* 1 and the number when s is all digits and fits an id. */
static int number(unsigned *out, const char *s, size_t len)
{
	unsigned long long v = 0;

	if (len == 0 || len > 10 || strspn(s, "0123456789") < len)
		return 0;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	if (v > ID_MAX)
		return 0;
	*out = (unsigned)v;
	return 1;
}

/* The line of db whose field key (0: name, 2: id) is want; fields[] points
 * into it (at most 7). NULL when there is none. */
static const char *find_line(const char *db, size_t key, const char *want, size_t wlen, const char *fields[7],
			     size_t flen[7])
{
	for (const char *line = db; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t n = 0;
		const char *p = line;
		for (size_t i = 0; i < 7; i++) {
			fields[i] = "";
			flen[i] = 0;
		}
		while (n < 7) {
			size_t f = strcspn(p, ":\n");
			fields[n] = p;
			flen[n++] = f;
			if (p[f] != ':')
				break;
			p += f + 1;
		}
		if (n > key && flen[key] == wlen && !memcmp(fields[key], want, wlen))
			return line;
	}
	return NULL;
}

static int read_db(char **out, const char *rootfs, const char *path, struct sb_error *err)
{
	int rc = sb_inroot_read(out, NULL, rootfs, path, DB_MAX, err);

	if (rc == SB_ERR_NOTFOUND) {
		*out = NULL;
		return 0;
	}
	return rc;
}

/* The user part: by number (passwd optional, then its gid and home) or by name. */
static int user_part(struct sb_user *out, const char *db, const char *u, size_t ulen, struct sb_error *err)
{
	const char *f[7];
	size_t fl[7];
	char idbuf[16];
	unsigned id;
	int by_id = number(&id, u, ulen);

	if (by_id) {
		snprintf(idbuf, sizeof(idbuf), "%u", id);
		out->uid = id;
	}
	const char *line = db ? find_line(db, by_id ? 2 : 0, by_id ? idbuf : u, by_id ? strlen(idbuf) : ulen, f, fl) : NULL;
	if (!line && !by_id)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("user '%.*s' is not in the image's /etc/passwd"), (int)ulen, u);
	if (!line)
		return 0;
	if (!number(&out->uid, f[2], fl[2]) || !number(&out->gid, f[3], fl[3]))
		return sb_error_set(err, SB_ERR_FORMAT, _("the /etc/passwd entry of user '%.*s' is malformed"), (int)ulen, u);
	if (fl[5] && f[5][0] == '/' && fl[5] < sizeof(out->home))
		snprintf(out->home, sizeof(out->home), "%.*s", (int)fl[5], f[5]);
	return 0;
}

static int group_part(struct sb_user *out, const char *db, const char *g, struct sb_error *err)
{
	const char *f[7];
	size_t fl[7];

	if (number(&out->gid, g, strlen(g)))
		return 0;
	if (!db || !find_line(db, 0, g, strlen(g), f, fl))
		return sb_error_set(err, SB_ERR_NOTFOUND, _("group '%s' is not in the image's /etc/group"), g);
	if (!number(&out->gid, f[2], fl[2]))
		return sb_error_set(err, SB_ERR_FORMAT, _("the /etc/group entry of group '%s' is malformed"), g);
	return 0;
}

int sb_user_resolve(struct sb_user *out, const char *rootfs, const char *spec, struct sb_error *err)
{
	const char *colon = strchr(spec, ':');
	size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
	char *passwd = NULL, *group = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	strcpy(out->home, "/");
	if (ulen == 0 || (colon && !colon[1]) || strchr(spec, '\n'))
		return sb_error_set(err, SB_ERR_INVALID, _("user '%s': expected NAME or UID, optionally :GROUP or :GID"), spec);
	if ((rc = read_db(&passwd, rootfs, "/etc/passwd", err)) == 0)
		rc = user_part(out, passwd, spec, ulen, err);
	if (rc == 0 && colon && (rc = read_db(&group, rootfs, "/etc/group", err)) == 0)
		rc = group_part(out, group, colon + 1, err);
	free(passwd);
	free(group);
	return rc;
}
