#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "sandbox/cleanup.h"

/* Only the items named by the operands (all without operands). */
static int chosen(const struct sb_cleanup_item *it, int argc, char **argv)
{
	if (argc <= 0)
		return 1;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], it->name))
			return 1;
	return 0;
}

static void print_item(const struct sb_cleanup_item *it)
{
	char size[32], keeps[96] = "";

	sb_units_format_size(size, sizeof(size), it->bytes, SB_UNITS_TEXT);
	if (it->keeps & SB_KEEP_WORKSPACE)
		strcat(keeps, _(" workspace"));
	if (it->keeps & SB_KEEP_EXCHANGE)
		strcat(keeps, _(" exchange"));
	if (it->keeps & SB_KEEP_HOST_FOLDERS)
		strcat(keeps, _(" host-folders"));
	printf("%-13s %-24s %9s  %-11s %s%s%s\n", sb_cleanup_reason_name(it->reason), it->name, size, it->action,
	       it->detail, keeps[0] ? _("; keeps") : "", keeps);
	if (it->applied)
		printf("  -> %s%s%s\n", it->rc == 0 ? _("done") : _("failed"), it->message[0] ? ": " : "", it->message);
}

static int cleanup_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "apply", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "within", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_cleanup_plan *plan;
	struct sb_root *root;
	struct sb_error err;
	long long horizon = 0;
	int opt, rc, json = 0, apply = 0, status = SB_EXIT_OK;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'a')
			apply = 1;
		else if (opt == 'j')
			json = 1;
		else if (opt == 'w' && (horizon = sb_units_parse_duration(optarg)) > 0)
			;
		else if (opt == 'w')
			return sb_cli_usage_error(NULL, &sb_cmd_cleanup, _("invalid duration '%s'"), optarg);
		else
			return sb_cli_usage_error(NULL, &sb_cmd_cleanup, _("invalid option '%s'"), argv[optind - 1]);
	}
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_cleanup_plan(&plan, root, horizon, &err) < 0)
		return sb_cli_fail(&err);
	json_t *arr = json ? json_array() : NULL;
	size_t shown = 0;
	for (size_t i = 0; i < plan->count; i++) {
		struct sb_cleanup_item *it = &plan->items[i];
		if (!chosen(it, argc - optind, argv + optind))
			continue;
		shown++;
		if (apply && sb_cleanup_apply(it, root) < 0)
			status = sb_cli_exit_code(it->rc);
		if (json)
			arr = sb_json_append(arr, sb_cleanup_item_json(it));
		else
			print_item(it);
	}
	if (json && (rc = sb_cli_print_json(arr)) != SB_EXIT_OK)
		status = rc;
	else if (!json && shown == 0)
		printf("%s\n", _("nothing to clean up"));
	sb_cleanup_plan_free(plan);
	return status;
}

const struct sb_cli_command sb_cmd_cleanup = {
	.name = "cleanup",
	.synopsis = "[--within DURATION] [--apply] [--json] [NAME...]",
	.summary = N_("list everything stale (what it frees, what it keeps); --apply cleans it up"),
	.help = N_("  --within D  also list temporary sandboxes expiring within D (e.g. 10m)\n"
		   "  --apply     remove (or expire) what is listed, each with its own result\n"
		   "  --json      print the plan (and results) as JSON\n"
		   "NAME...      only the items of these names (sandboxes, images)\n"),
	.run = cleanup_run,
};
