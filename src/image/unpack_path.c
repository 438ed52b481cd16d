#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/i18n.h"
#include "internal.h"

int sb_unpack_clean_name(char *out, const char *name, const char *what, struct sb_error *err)
{
	size_t n = 0;

	if (name[0] == '/')
		return sb_error_set(err, SB_ERR_UNSAFE, _("%s '%s' is an absolute path"), what, name);
	for (const char *p = name; *p;) {
		const char *q = strchrnul(p, '/');
		size_t len = (size_t)(q - p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return sb_error_set(err, SB_ERR_UNSAFE, _("%s '%s' contains '..'"), what, name);
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (n + (n > 0) + len >= PATH_MAX)
				return sb_error_set(err, SB_ERR_UNSAFE, _("%s '%.64s...' is too long"), what, name);
			if (n > 0)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p = *q ? q + 1 : q;
	}
	out[n] = '\0';
	return 0;
}

/* The component before out[n] is dropped: "a/b" -> "a", "a" -> "". */
static size_t pop(const char *out, size_t n)
{
	while (n > 0 && out[n - 1] != '/')
		n--;
	return n > 0 ? n - 1 : 0;
}

int sb_unpack_resolve(char *out, int root_fd, const char *path, struct sb_error *err)
{
	/* the components still to walk; a symlink's target is put in front of
	 * the rest, alternating between the two buffers */
	char todo[2][PATH_MAX], target[PATH_MAX];
	int cur = 0, hops = 0;
	size_t n = 0;

	if (strlen(path) >= PATH_MAX)
		return sb_error_set(err, SB_ERR_UNSAFE, _("path '%.64s...' is too long"), path);
	strcpy(todo[cur], path);
	for (const char *p = todo[cur]; *p;) {
		const char *q = strchrnul(p, '/');
		size_t len = (size_t)(q - p);
		const char *rest = *q ? q + 1 : q;

		if (len == 0 || (len == 1 && p[0] == '.')) {
			p = rest;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			n = pop(out, n);
			p = rest;
			continue;
		}
		size_t before = n;
		if (n + (n > 0) + len >= PATH_MAX)
			return sb_error_set(err, SB_ERR_UNSAFE, _("path '%.64s...' is too long inside the root"), path);
		if (n > 0)
			out[n++] = '/';
		memcpy(out + n, p, len);
		n += len;
		out[n] = '\0';

		struct stat st;
		if (fstatat(root_fd, out, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				return sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s' in the root"), out);
			p = rest; /* missing: created later as written */
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			p = rest;
			continue;
		}
		if (++hops > SB_UNPACK_MAX_HOPS)
			return sb_error_set(err, SB_ERR_UNSAFE, _("too many levels of symbolic links in '%s'"), path);
		ssize_t tl = readlinkat(root_fd, out, target, sizeof(target));
		if (tl < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read link '%s' in the root"), out);
		size_t rl = strlen(rest);
		if ((size_t)tl + 1 + rl >= PATH_MAX)
			return sb_error_set(err, SB_ERR_UNSAFE, _("path '%.64s...' is too long inside the root"), path);
		n = target[0] == '/' ? 0 : before;
		int next = !cur;
		memcpy(todo[next], target, (size_t)tl);
		todo[next][tl] = '/';
		memcpy(todo[next] + tl + 1, rest, rl + 1);
		cur = next;
		p = todo[cur];
	}
	out[n] = '\0';
	return 0;
}
