/* sandbench pool set|ls|rm|refill: the warm pool (docs/pool.md). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "sandbox/pool.h"

static int pool_set(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "size", required_argument, NULL, 's' },
		{ "network", required_argument, NULL, 'n' },
		{ "memory", required_argument, NULL, 'M' },
		{ "cpus", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	long long size = -1, memory = 0;
	double cpus = 0;
	int opt, network = -1, rc;
	char *end;
	struct sb_root *root;
	struct sb_error err;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			size = strtoll(optarg, &end, 10);
			if (*end || end == optarg || size < 1 || size > SB_POOL_SIZE_MAX)
				return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("invalid pool size '%s' (1 to %d)"),
							  optarg, SB_POOL_SIZE_MAX);
			break;
		case 'n':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("invalid network '%s' (on or off)"), optarg);
			network = !strcmp(optarg, "on");
			break;
		case 'M':
			if ((memory = sb_units_parse_size(optarg)) <= 0)
				return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("invalid memory size '%s' (e.g. 512m, 2g)"),
							  optarg);
			break;
		case 'c':
			cpus = strtod(optarg, &end);
			if (*end || end == optarg || !(cpus > 0 && cpus <= 1024)) /* NaN too */
				return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("invalid CPU count '%s'"), optarg);
			break;
		default:
			return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("invalid option"));
		}
	}
	if (optind + 1 != argc)
		return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("give one image"));
	if (size < 0)
		return sb_cli_usage_error("pool", &sb_cmd_pool_set, _("--size is required"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_pool_set(root, argv[optind], (int)size, network, (unsigned long long)memory, cpus, &err) < 0)
		return sb_cli_fail(&err);
	/* the members boot behind the command's back */
	sb_pool_refill_detached(root);
	return SB_EXIT_OK;
}

static int pool_ls(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_pool_profile *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int json, rc;

	if ((rc = sb_cli_parse_json(&json, "pool", &sb_cmd_pool_ls, argc, argv, NULL)) != 0 ||
	    (rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_pool_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	int refilling = sb_pool_refilling(root);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			arr = sb_json_append(arr, sb_pool_profile_json(&list[i]));
		rc = sb_cli_print_json(arr ? json_pack("{s:o, s:b}", "profiles", arr, "refilling", refilling) : NULL);
	} else {
		for (size_t i = 0; i < n; i++) {
			char mem[32];
			sb_units_format_size(mem, sizeof(mem), list[i].memory, SB_UNITS_TEXT);
			/* TRANSLATORS: image, ready, size, network, memory, cpus */
			printf(_("%s  %d/%d ready  network %s  memory %s  cpus %g\n"), list[i].image, list[i].ready,
			       list[i].size, list[i].network ? "on" : "off", list[i].memory ? mem : "-", list[i].cpus);
		}
		if (refilling)
			printf(_("refilling\n"));
	}
	sb_pool_list_free(list, n);
	return rc;
}

static int pool_rm(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_root *root;
	struct sb_error err;
	size_t removed;
	int opt, all = 0, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'a')
			return sb_cli_usage_error("pool", &sb_cmd_pool_rm, _("invalid option"));
		all = 1;
	}
	if (all ? optind != argc : optind + 1 != argc)
		return sb_cli_usage_error("pool", &sb_cmd_pool_rm, _("give one image, or --all"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_pool_remove(&removed, root, all ? NULL : argv[optind], &err) < 0)
		return sb_cli_fail(&err);
	printf(_("removed %zu pooled sandboxes\n"), removed);
	return SB_EXIT_OK;
}

static int pool_refill(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_root *root;
	struct sb_error err;
	size_t failed;
	int json, rc;

	if ((rc = sb_cli_parse_json(&json, "pool", &sb_cmd_pool_refill, argc, argv, NULL)) != 0 ||
	    (rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_pool_refill(&failed, root, 1, &err) < 0)
		return sb_cli_fail(&err);
	if (failed) {
		fprintf(stderr, _("sandbench: %zu pool members could not be booted (see ROOT/pool/refill.log)\n"), failed);
		return SB_EXIT_FAILURE;
	}
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_pool_set = {
	.name = "set",
	.synopsis = "IMAGE --size N [--network off|on] [--memory M] [--cpus C]",
	.summary = N_("keep N booted sandboxes of this profile for create to claim"),
	.help = N_("  --size N             how many to keep booted (1 to 64)\n"
		   "  --network off|on     the members' network\n"
		   "  --memory M           their memory limit (e.g. 512m, 2g)\n"
		   "  --cpus C             their CPU limit in cores\n"),
	.run = pool_set,
};

const struct sb_cli_command sb_cmd_pool_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list the pool's profiles and their ready members"),
	.run = pool_ls,
};

const struct sb_cli_command sb_cmd_pool_rm = {
	.name = "rm",
	.synopsis = "IMAGE|--all",
	.summary = N_("remove a profile (or all) and its booted members"),
	.run = pool_rm,
};

const struct sb_cli_command sb_cmd_pool_refill = {
	.name = "refill",
	.synopsis = "",
	.summary = N_("boot what the pool lacks now, and wait for it"),
	.run = pool_refill,
};

static int pool_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct sb_cli_command *const table[] = { &sb_cmd_pool_set, &sb_cmd_pool_ls, &sb_cmd_pool_rm,
							       &sb_cmd_pool_refill, NULL };

	return sb_cli_dispatch(cli, "pool", table, argc - 1, argv + 1);
}

const struct sb_cli_command sb_cmd_pool = {
	.name = "pool",
	.synopsis = "set|ls|rm|refill ...",
	.summary = N_("the warm pool: booted sandboxes that create claims"),
	.run = pool_run,
	.group = 1,
};
