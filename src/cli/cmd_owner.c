#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/cleanup.h"

static int owner_ls(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_owner *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int json, rc;

	if ((rc = sb_cli_parse_json(&json, "owner", &sb_cmd_owner_ls, argc, argv, NULL)) != 0 ||
	    (rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_owner_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	json_t *arr = json ? json_array() : NULL;
	if (!json && n)
		printf("%-24s %9s  %-20s %s\n", _("OWNER"), _("SANDBOXES"), _("LAST SEEN"), _("STATE"));
	for (size_t i = 0; i < n; i++) {
		const struct sb_owner *o = &list[i];
		char seen[32] = "-";
		time_t t = (time_t)o->last_seen;
		struct tm tm;
		if (o->last_seen && gmtime_r(&t, &tm))
			(void)strftime(seen, sizeof(seen), "%Y-%m-%dT%H:%M:%SZ", &tm); /* 27 bytes at most */
		if (json)
			arr = sb_json_append(arr, json_pack("{s:s, s:I, s:I, s:I, s:b}", "name", o->name, "sandboxes",
							    (json_int_t)o->sandboxes, "last_seen", (json_int_t)o->last_seen,
							    "removed", (json_int_t)o->removed, "gone", o->gone));
		else
			printf("%-24s %9zu  %-20s %s\n", o->name, o->sandboxes, seen,
			       o->gone ? (o->removed >= o->last_seen && o->removed ? _("gone (removed)") : _("gone (idle)"))
				       : _("active"));
	}
	sb_owner_list_free(list);
	return json ? sb_cli_print_json(arr) : SB_EXIT_OK;
}

static int owner_rm(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_root *root;
	struct sb_error err;
	int rc;

	if (argc < 2)
		return sb_cli_usage_error("owner", &sb_cmd_owner_rm, "%s", _("expected an owner"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	for (int i = 1; i < argc; i++)
		if (sb_owner_remove(root, argv[i], &err) < 0)
			return sb_cli_fail(&err);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_owner_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list the owners of sandboxes, when each was last seen and whether it is gone"),
	.run = owner_ls,
};

const struct sb_cli_command sb_cmd_owner_rm = {
	.name = "rm",
	.synopsis = "OWNER...",
	.summary = N_("mark owners as gone: their sandboxes show up in the cleanup plan"),
	.run = owner_rm,
};

static int owner_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct sb_cli_command *const table[] = { &sb_cmd_owner_ls, &sb_cmd_owner_rm, NULL };

	return sb_cli_dispatch(cli, "owner", table, argc - 1, argv + 1);
}

const struct sb_cli_command sb_cmd_owner = {
	.name = "owner",
	.synopsis = "ls|rm ...",
	.summary = N_("owners of sandboxes: who is gone"),
	.run = owner_run,
	.group = 1,
};
