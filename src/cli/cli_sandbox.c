#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_sandbox.h"
#include "base/digest.h"
#include "base/i18n.h"
#include "sandbox/record.h"

const char *sb_cli_onoff(int on)
{
	return on ? "on" : "off";
}

int sb_cli_egress_allow(struct sb_cli_egress *e, const char *item)
{
	if (e->n == SB_CLI_ALLOW_MAX)
		return -1;
	e->allow[e->n++] = item;
	return 0;
}

int sb_cli_egress_build(struct sb_egress *out, struct sb_root *root, const struct sb_cli_egress *e,
			struct sb_error *err)
{
	int rc = sb_sandbox_egress_parse(out, root, e->allow, e->n, err);

	if (rc == 0 && e->deny_all)
		out->mode = SB_EGRESS_DENY_ALL;
	return rc;
}

int sb_cli_run_on_sandbox(struct sb_cli *cli, const struct sb_cli_command *cmd, int argc, char **argv,
			  int (*op)(struct sb_root *root, const char *name, struct sb_error *err))
{
	static const struct option options[] = { { NULL, 0, NULL, 0 } };
	struct sb_root *root;
	struct sb_error err;
	int rc;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	if (getopt_long(argc, argv, "", options, NULL) != -1)
		return sb_cli_usage_error(NULL, cmd, _("invalid option"));
	if (optind + 1 != argc)
		return sb_cli_usage_error(NULL, cmd, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (op(root, argv[optind], &err) < 0)
		return sb_cli_fail(&err);
	return SB_EXIT_OK;
}

void sb_cli_short_image(char *buf, size_t size, const char *ref, const char *digest)
{
	static const char *const implied[] = { "docker.io/library/", "docker.io/" };
	const char *hex = sb_digest_valid(digest) ? sb_digest_hex(digest) : "";
	const char *r = ref ? ref : "";

	for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++) {
		size_t n = strlen(implied[i]);
		if (!strncmp(r, implied[i], n)) {
			r += n;
			break;
		}
	}
	/* a pinned reference already ends in its digest */
	size_t len = strcspn(r, "@");
	snprintf(buf, size, "%.*s%s%.12s", (int)len, r, *r && *hex ? "@" : "", hex);
}
