#include "config.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "base/units.h"

static int reap_once(struct sb_root *root, unsigned flags, int json)
{
	struct sb_reap_item *items;
	struct sb_error err;
	size_t n;
	int status = SB_EXIT_OK, rc;

	if (sb_sandbox_reap(&items, &n, root, flags, &err) < 0)
		return sb_cli_fail(&err);
	json_t *arr = json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		const struct sb_reap_item *it = &items[i];
		if (it->rc < 0)
			status = sb_cli_exit_code(it->rc);
		if (json) {
			arr = sb_json_append(arr, json_pack("{s:s, s:s, s:I, s:b, s:s?}", "name", it->name, "action",
							    sb_expiry_action_name(it->action), "idle_seconds",
							    (json_int_t)it->idle_seconds, "ok", it->rc == 0,
							    "error", it->rc < 0 ? it->message : NULL));
		} else if (it->rc < 0) {
			fprintf(stderr, "sandbench: %s: %s\n", it->name, it->message);
		} else {
			printf(flags & SB_REAP_DRY_RUN ? _("would %s %s (idle %llds)\n") : _("%s %s (idle %llds)\n"),
			       sb_expiry_action_name(it->action), it->name, (long long)it->idle_seconds);
		}
	}
	if (json && (rc = sb_cli_print_json(arr)) != SB_EXIT_OK)
		status = rc;
	(void)fflush(stdout);
	free(items);
	/* the timer and --watch top the warm pool up; its failures go to its log */
	if (!(flags & SB_REAP_DRY_RUN))
		sb_pool_refill(NULL, root, 0, NULL);
	return status;
}

static int reap_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_root *root;
	unsigned flags = 0;
	long long interval = 0;
	int opt, rc, json = 0;

	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'n':
			flags |= SB_REAP_DRY_RUN;
			break;
		case 'w':
			interval = optarg ? sb_units_parse_duration(optarg) : 60;
			if (interval <= 0)
				return sb_cli_usage_error(NULL, &sb_cmd_reap, _("invalid interval '%s'"), optarg);
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_reap, _("invalid option"));
		}
	}
	if (optind < argc)
		return sb_cli_usage_error(NULL, &sb_cmd_reap, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	rc = reap_once(root, flags, json);
	/* --watch: for hosts without systemd; runs until killed */
	while (interval > 0) { /* NOLINT(bugprone-infinite-loop): until killed */
		poll(NULL, 0, (int)(interval * 1000));
		rc = reap_once(root, flags, json);
	}
	return rc;
}

const struct sb_cli_command sb_cmd_reap = {
	.name = "reap",
	.synopsis = "[--dry-run] [--watch[=INTERVAL]] [--json]",
	.summary = N_("expire idle temporary sandboxes (remove or stop them, by their expiry action)"),
	.help = N_("  --dry-run            only say what would be done\n"
		   "  --watch[=INTERVAL]   repeat every INTERVAL (default 60s) until killed\n"
		   "  --json               print what was done as JSON\n"),
	.run = reap_run,
};
