#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/i18n.h"
#include "internal.h"

/* How a rule path relates to the checked path for the rule to apply. */
enum {
	AT = 1 << 0,     /* the path itself */
	BELOW = 1 << 1,  /* anything under it */
	ABOVE = 1 << 2,  /* any folder containing it (it would be visible through the mount) */
};

struct path_rule {
	const char *path;
	unsigned how;
	const char *what;
};

static const struct path_rule host_rules[] = {
	{ "/", AT, N_("the host's root folder") },
	{ "/proc", AT | BELOW, N_("kernel interfaces") },
	{ "/sys", AT | BELOW, N_("kernel interfaces") },
	{ "/dev", AT | BELOW, N_("host devices") },
	{ "/boot", AT | BELOW, N_("the host's kernel and boot loader") },
	{ "/etc", AT | BELOW, N_("host configuration and secrets") },
	{ "/root", AT, N_("the administrator's home folder") },
	{ "/run/docker.sock", AT | ABOVE, N_("a container runtime socket") },
	{ "/var/run/docker.sock", AT | ABOVE, N_("a container runtime socket") },
	{ "/run/docker", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/run/containerd", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/var/run/containerd", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/run/crio", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/run/podman", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/run/runc", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/var/lib/docker", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/var/lib/containerd", AT | BELOW | ABOVE, N_("container runtime state") },
	{ "/var/lib/containers", AT | BELOW | ABOVE, N_("container runtime state") },
};

/* Names refused as any component of a host path and as a direct child of it. */
static const struct {
	const char *name;
	const char *what;
} sensitive_names[] = {
	{ ".ssh", N_("SSH keys") },
	{ ".gnupg", N_("GnuPG keys") },
	{ ".aws", N_("cloud credentials") },
	{ ".azure", N_("cloud credentials") },
	{ ".kube", N_("Kubernetes credentials") },
	{ ".docker", N_("container registry credentials") },
	{ ".password-store", N_("a password store") },
	{ "docker.sock", N_("a container runtime socket") },
	{ "containerd.sock", N_("a container runtime socket") },
	{ "podman.sock", N_("a container runtime socket") },
};

/* Sandbox paths that sandbench or runsc own. */
static const struct path_rule sandbox_rules[] = {
	{ "/", AT, N_("the sandbox's root") },
	{ "/proc", AT | BELOW, N_("kernel interfaces") },
	{ "/sys", AT | BELOW, N_("kernel interfaces") },
	{ "/dev", AT | BELOW, N_("devices") },
	{ "/workspace", AT | BELOW, N_("the sandbox's workspace") },
	{ "/exchange", AT | BELOW, N_("the exchange folder") },
	{ "/tmp", AT, N_("the sandbox's temporary folder") },
};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* 1 when a is b, -1 when a is below b, 2 when a is above b, 0 otherwise. */
static int relation(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (strcmp(a, b) == 0)
		return 1;
	if (la > lb && strncmp(a, b, lb) == 0 && (a[lb] == '/' || lb == 1))
		return -1;
	if (lb > la && strncmp(a, b, la) == 0 && (b[la] == '/' || la == 1))
		return 2;
	return 0;
}

static int rule_applies(const char *path, const char *rule_path, unsigned how)
{
	switch (relation(path, rule_path)) {
	case 1:
		return (how & AT) != 0;
	case -1:
		return (how & BELOW) != 0;
	case 2:
		return (how & ABOVE) != 0;
	default:
		return 0;
	}
}

static const char *match_rules(const char *path, const struct path_rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rule_applies(path, rules[i].path, rules[i].how))
			return rules[i].what;
	return NULL;
}

/* dirfd: the folder at host, or -1 to open it by its path. */
static const char *match_names(const char *host, int dirfd)
{
	int dfd = dirfd >= 0 ? dirfd : open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < N_ELEMS(sensitive_names); i++) {
		const char *name = sensitive_names[i].name;
		size_t len = strlen(name);
		struct stat st;
		for (const char *p = strstr(host, name); p; p = strstr(p + 1, name))
			if (p[-1] == '/' && (p[len] == '/' || p[len] == '\0'))
				goto found;
		if (dfd >= 0 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			goto found;
		continue;
found:
		if (dfd >= 0 && dfd != dirfd)
			close(dfd);
		return sensitive_names[i].what;
	}
	if (dfd >= 0 && dfd != dirfd)
		close(dfd);
	return NULL;
}

static int check_host(const char *host, int dirfd, const struct sb_mount_policy *policy, struct sb_error *err)
{
	const char *what;

	if (policy && policy->allow_sensitive)
		return 0;
	if (policy && policy->state_root) {
		char root[PATH_MAX];
		const char *r = realpath(policy->state_root, root) ? root : policy->state_root;
		if (relation(host, r) != 0)
			return sb_error_set(err, SB_ERR_UNSAFE,
					    _("host path '%s' overlaps sandbench's state root '%s'"), host, r);
	}
	what = match_rules(host, host_rules, N_ELEMS(host_rules));
	if (!what)
		what = match_names(host, dirfd);
	if (what)
		return sb_error_set(err, SB_ERR_UNSAFE,
				    _("host path '%s' exposes %s; refused unless sensitive mounts are allowed"),
				    host, _(what));
	return 0;
}

/* Lexical normalisation of an absolute sandbox path: no "//", ".", "..". */
static int normalise(char **out, const char *path, struct sb_error *err)
{
	size_t len = strlen(path);
	char *buf, *res;
	size_t n = 0;

	*out = NULL;
	if (path[0] != '/')
		return sb_error_set(err, SB_ERR_INVALID, _("sandbox path '%s' is not absolute"), path);
	if (len >= PATH_MAX)
		return sb_error_set(err, SB_ERR_INVALID, _("sandbox path is too long"));
	buf = strdup(path);
	res = malloc(len + 2);
	if (!buf || !res) {
		free(buf);
		free(res);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			if (n == 0) {
				free(buf);
				free(res);
				return sb_error_set(err, SB_ERR_INVALID, _("sandbox path '%s' leaves the root"), path);
			}
			while (n > 0 && res[--n] != '/')
				;
			continue;
		}
		res[n++] = '/';
		memcpy(res + n, c, strlen(c));
		n += strlen(c);
	}
	if (n == 0)
		res[n++] = '/';
	res[n] = '\0';
	free(buf);
	*out = res;
	return 0;
}

static int check_sandbox_path(const char *path, struct sb_error *err)
{
	const char *what = match_rules(path, sandbox_rules, N_ELEMS(sandbox_rules));

	if (what)
		return sb_error_set(err, SB_ERR_UNSAFE, _("sandbox path '%s' is reserved for %s"), path, _(what));
	return 0;
}

static int resolve_host(char **out, const char *host, struct sb_error *err)
{
	char real[PATH_MAX];

	*out = NULL;
	if (!realpath(host, real))
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot resolve host path '%s'"), host);
	*out = strdup(real);
	return *out ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

int sb_mount_resolve(struct sb_mount *out, const char *host, const char *path, int rw,
		     const struct sb_mount_policy *policy, struct sb_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->rw = rw != 0;
	if (!host[0])
		return sb_error_set(err, SB_ERR_INVALID, _("a host mount needs a host path"));
	rc = normalise(&out->path, path, err);
	if (rc == 0)
		rc = check_sandbox_path(out->path, err);
	if (rc == 0)
		rc = resolve_host(&out->host, host, err);
	if (rc == 0)
		rc = check_host(out->host, -1, policy, err);
	if (rc < 0)
		sb_mount_clear(out);
	return rc;
}

int sb_sandbox_mount_parse(struct sb_sandbox_mount *out, char *text, struct sb_error *err)
{
	size_t len = strlen(text);
	enum sb_mount_mode mode = SB_MOUNT_RO;
	char *colon;

	if (len > 3 && (strcmp(text + len - 3, ":rw") == 0 || strcmp(text + len - 3, ":ro") == 0)) {
		mode = text[len - 1] == 'w' ? SB_MOUNT_RW : SB_MOUNT_RO;
		len -= 3;
	}
	/* colon[1] is still inside text: at worst the mode's ':' or the NUL */
	colon = memrchr(text, ':', len);
	if (!colon || colon == text || colon[1] != '/')
		return sb_error_set(err, SB_ERR_INVALID, _("mount '%s' is not HOST:PATH[:ro|rw]"), text);
	text[len] = '\0';
	*colon = '\0';
	*out = (struct sb_sandbox_mount){ text, colon + 1, mode };
	return 0;
}

int sb_mount_parse(struct sb_mount *out, const char *spec, const struct sb_mount_policy *policy,
		   struct sb_error *err)
{
	struct sb_sandbox_mount m;
	char *copy = strdup(spec);
	int rc;

	memset(out, 0, sizeof(*out));
	if (!copy)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = sb_sandbox_mount_parse(&m, copy, err);
	if (rc == 0)
		rc = sb_mount_resolve(out, m.host, m.path, m.mode == SB_MOUNT_RW, policy, err);
	free(copy);
	return rc;
}

int sb_mount_check_host(const char *host, int dirfd, const struct sb_mount_policy *policy, struct sb_error *err)
{
	return check_host(host, dirfd, policy, err);
}

int sb_mount_check_overlaps(const struct sb_mount *mounts, size_t n, struct sb_error *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (relation(mounts[i].path, mounts[j].path) != 0)
				return sb_error_set(err, SB_ERR_INVALID, _("mounts at '%s' and '%s' overlap"),
						    mounts[i].path, mounts[j].path);
	return 0;
}

void sb_mount_clear(struct sb_mount *m)
{
	if (!m)
		return;
	free(m->host);
	free(m->path);
	memset(m, 0, sizeof(*m));
}
