#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "i18n.h"
#include "sandbox.h"

static void print_table(const struct sb_sandbox_info *list, size_t n)
{
	printf("%-20s %-8s %-9s %-6s %-8s %-4s %-24s %s\n", _("NAME"), _("STATE"), _("KIND"), _("IDLE"), _("EXPIRES"),
	       _("NET"), _("IMAGE"), _("OWNER"));
	for (size_t i = 0; i < n; i++) {
		const struct sb_sandbox_info *s = &list[i];
		char idle[32], expires[32], image[25];
		sb_cli_format_duration(idle, sizeof(idle), s->idle_seconds);
		if (s->expires_in < 0)
			snprintf(expires, sizeof(expires), "-");
		else
			sb_cli_format_duration(expires, sizeof(expires), s->expires_in);
		/* the reference when there is one, else the short digest */
		snprintf(image, sizeof(image), "%s", s->rec.image_ref[0] ? s->rec.image_ref : s->rec.image_digest);
		printf("%-20s %-8s %-9s %-6s %-8s %-4s %-24s %s\n", s->rec.name, sb_sandbox_state_name(s->rec.state),
		       sb_sandbox_kind_name(s->rec.kind), idle, expires, sb_cli_onoff(s->rec.network), image,
		       s->rec.owner ? s->rec.owner : "");
	}
}

static int ls_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_sandbox_info *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int opt, rc, json = 0;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'j')
			return sb_cli_usage_error(NULL, &sb_cmd_ls, _("invalid option"));
		json = 1;
	}
	if (optind < argc)
		return sb_cli_usage_error(NULL, &sb_cmd_ls, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, sb_cli_sandbox_json(&list[i]));
		sb_cli_print_json(arr);
	} else {
		print_table(list, n);
	}
	sb_sandbox_list_free(list, n);
	return SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list sandboxes with their state, idle time and time to expiry"),
	.help = N_("  --json    print the list as JSON\n"),
	.run = ls_run,
};
