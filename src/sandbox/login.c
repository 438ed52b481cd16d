/* The program an interactive shell runs: root's login shell as the sandbox's
 * own /etc/passwd names it. The passwd and the shells are the sandbox's files,
 * which code inside may have replaced with anything: they are looked up inside
 * its root only (base/inroot.h), never through the host's view of them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/inroot.h"
#include "sandbox/sandbox.h"

#define PASSWD_MAX (1 << 20)
#define SHELL_MAX 255

static const char *const fallbacks[] = { "/bin/bash", "/bin/sh" };

/* Root's shell field from passwd text (root:x:0:0:root:/root:/bin/bash) into
 * out; 0 when there is none worth trying. */
static int root_shell(char out[SHELL_MAX + 1], const char *text)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t len = strcspn(line, "\n"), fields = 0;
		const char *shell = line;
		if (strncmp(line, "root:", 5) != 0)
			continue;
		for (size_t i = 0; i < len; i++)
			if (line[i] == ':' && ++fields == 6)
				shell = line + i + 1;
		len -= (size_t)(shell - line);
		if (fields != 6 || shell[0] != '/' || len > SHELL_MAX)
			return 0;
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)shell[i] <= ' ' || shell[i] == 0x7f)
				return 0;
		memcpy(out, shell, len);
		out[len] = '\0';
		return !strstr(out, "nologin") && !strstr(out, "/false");
	}
	return 0;
}

/* 1 when path is a program inside rootfs (symlinks followed inside it). */
static int is_program(const char *rootfs, const char *path)
{
	struct stat st;

	return sb_inroot_stat(&st, rootfs, path, NULL) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/* Why the passwd's shell was not taken (malloc'd). */
static char *passwd_note(int rc, const struct sb_error *e, const char *shell)
{
	if (rc < 0)
		return strdup(e->msg);
	if (shell[0])
		return sb_strdupf(_("root's login shell %s is not a program in the sandbox"), shell);
	return strdup(_("/etc/passwd names no login shell for root"));
}

static int pick(char **out, char **why, const char *rootfs, const char *name, struct sb_error *err)
{
	char shell[SHELL_MAX + 1] = "", *text = NULL;
	struct sb_error e;
	int rc = sb_inroot_read(&text, NULL, rootfs, "/etc/passwd", PASSWD_MAX, &e);
	int named = rc == 0 && root_shell(shell, text);
	const char *chosen = named && is_program(rootfs, shell) ? shell : NULL;

	if (!named)
		shell[0] = '\0';
	free(text);
	for (size_t i = 0; !chosen && i < sizeof(fallbacks) / sizeof(fallbacks[0]); i++)
		if (is_program(rootfs, fallbacks[i]))
			chosen = fallbacks[i];
	if (!chosen)
		return sb_error_set(err, SB_ERR_NOTFOUND,
				    _("%s has no shell: neither a login shell for root in its /etc/passwd nor /bin/bash nor /bin/sh"),
				    name);
	if (!(*out = strdup(chosen)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (why && chosen != shell && !(*why = passwd_note(rc, &e, shell))) {
		free(*out);
		*out = NULL;
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int sb_sandbox_login_shell(char **out, char **why, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_record rec;
	char *rel, *rootfs;
	int rc;

	*out = NULL;
	if (why)
		*why = NULL;
	if ((rc = sb_sandbox_name_check(name, err)) < 0 || (rc = sb_record_load(&rec, root, name, err)) < 0)
		return rc;
	if (!sb_sandbox_state_live(rec.state))
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(rec.state));
	sb_record_clear(&rec);
	if (rc < 0)
		return rc;
	/* the overlay mount of a running sandbox: what its processes see as / */
	rel = sb_strdupf("sandboxes/%s/rootfs", name);
	rootfs = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	rc = rootfs ? pick(out, why, rootfs, name, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(rootfs);
	return rc;
}
