#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "internal.h"
#include "base/i18n.h"

int sb_mcp_mount_parse(struct sb_mcp_mount *out, char *text, struct sb_error *err)
{
	char *colon = strrchr(text, ':');
	int mode = SB_MOUNT_RO;

	if (colon && (mode = sb_mount_mode_parse(colon + 1)) >= 0)
		*colon = '\0';
	else
		mode = SB_MOUNT_RO;
	if (text[0] != '/')
		return sb_error_set(err, SB_ERR_INVALID, _("the allowed mount '%s' is not an absolute host path"), text);
	*out = (struct sb_mcp_mount){ .host = text, .mode = (enum sb_mount_mode)mode };
	return 0;
}

/* 16 random bytes in hex: the instance label, the HTTP token's and session ids' form */
int mcp_random_hex(char *out, size_t bytes, struct sb_error *err)
{
	unsigned char r[32];

	if (bytes > sizeof(r) || getrandom(r, bytes, 0) != (ssize_t)bytes)
		return sb_error_set(err, SB_ERR_IO, _("cannot get random bytes"));
	for (size_t i = 0; i < bytes; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static int copy_mounts(struct sb_mcp_server *srv, const struct sb_mcp_opts *opts, struct sb_error *err)
{
	char real[PATH_MAX];

	if (!opts->n_mounts)
		return 0;
	if (!(srv->mounts = calloc(opts->n_mounts, sizeof(*srv->mounts))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < opts->n_mounts; i++) {
		/* resolved once, now: a client's path must name the same folder */
		if (!realpath(opts->mounts[i].host, real))
			return sb_error_errno(err, SB_ERR_NOTFOUND, errno, _("the allowed mount '%s'"), opts->mounts[i].host);
		if (!(srv->mounts[i].host = strdup(real)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		srv->mounts[i].mode = opts->mounts[i].mode;
		srv->n_mounts++;
	}
	return 0;
}

int sb_mcp_server_new(struct sb_mcp_server **out, struct sb_root *root, const struct sb_mcp_opts *opts,
		      struct sb_error *err)
{
	struct sb_mcp_server *srv = calloc(1, sizeof(*srv));
	int rc;

	*out = NULL;
	if (!srv)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	srv->root = root;
	srv->spare.pidfd = srv->spawner_fd = -1;
	srv->spawn_null[0] = srv->spawn_null[1] = -1;
	snprintf(srv->owner, sizeof(srv->owner), "%s", opts->owner ? opts->owner : "mcp");
	srv->readonly = opts->readonly;
	srv->allow_remove_any = opts->allow_remove_any;
	if ((rc = mcp_random_hex(srv->instance, 16, err)) < 0 || (rc = copy_mounts(srv, opts, err)) < 0 ||
	    (rc = mcp_tools_add_extra(srv, opts->extra_tools, opts->n_extra_tools, err)) < 0 ||
	    (rc = mcp_tools_load_schemas(srv, err)) < 0) {
		sb_mcp_server_free(srv);
		return rc;
	}
	*out = srv;
	return 0;
}

const char *sb_mcp_server_instance(const struct sb_mcp_server *srv)
{
	return srv->instance;
}

void sb_mcp_server_free(struct sb_mcp_server *srv)
{
	if (!srv)
		return;
	mcp_spare_end(srv);
	mcp_spawner_stop(srv);
	for (size_t i = 0; i < srv->n_mounts; i++)
		free((char *)srv->mounts[i].host);
	free(srv->mounts);
	free(srv->extra);
	json_decref(srv->schemas);
	free(srv);
}
