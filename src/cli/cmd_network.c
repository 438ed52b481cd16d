#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

/* Shows the policy (and collects the denials into the timeline first). */
static int show(struct sb_root *root, const char *name, int json)
{
	struct sb_sandbox_info info;
	struct sb_error err;
	size_t denied = 0;

	sb_sandbox_egress_collect(&denied, root, name, NULL);
	if (sb_sandbox_inspect(&info, root, name, &err) < 0)
		return sb_cli_fail(&err);
	int status = SB_EXIT_OK;
	if (json) {
		json_t *doc = sb_sandbox_info_json(&info);
		status = sb_cli_print_json(json_pack("{s:s, s:b, s:O, s:I}", "name", info.rec.name, "network",
						     info.rec.network, "egress", json_object_get(doc, "egress"),
						     "denied_new", (json_int_t)denied));
		json_decref(doc);
	} else if (!info.rec.network) {
		printf("%-10s %s\n", _("network:"), sb_cli_onoff(0));
	} else {
		char *text = sb_sandbox_egress_text(root, &info.rec);
		printf("%-10s %s\n%-10s %s\n", _("network:"), sb_cli_onoff(1), _("egress:"), text ? text : "?");
		free(text);
	}
	sb_sandbox_info_clear(&info);
	return status;
}

static int network_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "allow", required_argument, NULL, 'A' },
		{ "deny-all", no_argument, NULL, 'D' },
		{ "reset", no_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_cli_egress ce = { .n = 0 };
	struct sb_egress egress;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, reset = 0, json = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'A':
			if (sb_cli_egress_allow(&ce, optarg) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_network, _("too many --allow rules"));
			break;
		case 'D':
			ce.deny_all = 1;
			break;
		case 'R':
			reset = 1;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_network, _("invalid option"));
		}
	}
	if (optind != argc - 1)
		return sb_cli_usage_error(NULL, &sb_cmd_network, _("expected one sandbox name"));
	if ((ce.n > 0) + ce.deny_all + reset > 1)
		return sb_cli_usage_error(NULL, &sb_cmd_network, _("--allow, --deny-all and --reset exclude each other"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (!ce.n && !ce.deny_all && !reset)
		return show(root, argv[optind], json);
	if (sb_cli_egress_build(&egress, root, &ce, &err) < 0)
		return sb_cli_fail(&err);
	rc = sb_sandbox_set_egress(root, argv[optind], &egress, &err);
	sb_egress_clear(&egress);
	if (rc < 0)
		return sb_cli_fail(&err);
	return show(root, argv[optind], json);
}

const struct sb_cli_command sb_cmd_network = {
	.name = "network",
	.synopsis = "NAME [--allow ADDR[/PREFIX][:PORT]|@PROFILE]... | --deny-all | --reset] [--json]",
	.summary = N_("show or change what a network-on sandbox may reach, at once"),
	.help = N_("  --allow RULE   reach only these (repeatable): ADDR[/PREFIX][:PORT], HOST[:PORT],\n"
		   "                 sandbox:NAME[:PORT] (a sandbox of this root) or the rules of @PROFILE\n"
		   "  --deny-all     no egress at all\n"
		   "  --reset        the default: the internet, no link-local, metadata, host or private addresses\n"
		   "  --json         print the policy as JSON\n"),
	.run = network_run,
};
