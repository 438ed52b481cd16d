#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "sandbox/doctor.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

static const char *const status_names[] = {
	[SB_CHECK_OK] = "ok",
	[SB_CHECK_WARN] = "warn",
	[SB_CHECK_FAIL] = "fail",
};

static int doctor_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_doctor_report report;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, quick = 0, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if (opt == 'q')
			quick = 1;
		else
			return sb_cli_usage_error(NULL, &sb_cmd_doctor, _("invalid option"));
	}
	if (optind < argc)
		return sb_cli_usage_error(NULL, &sb_cmd_doctor, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_doctor_run(&report, root, quick ? 0 : SB_DOCTOR_FULL, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		json_t *arr = json_array();
		for (int i = 0; i < report.count; i++) {
			const struct sb_check *c = &report.checks[i];
			arr = sb_json_append(arr, json_pack("{s:s, s:s, s:s, s:s?}", "check", c->name, "status",
							    status_names[c->status], "detail", c->detail,
							    "fix", c->fix ? _(c->fix) : NULL));
		}
		if ((rc = sb_cli_print_json(json_pack("{s:b, s:o}", "ok", report.failures == 0, "checks", arr))) != SB_EXIT_OK)
			return rc;
	} else {
		for (int i = 0; i < report.count; i++) {
			const struct sb_check *c = &report.checks[i];
			printf("%-5s %-10s %s\n", status_names[c->status], c->name, c->detail);
			if (c->fix)
				printf("      %-10s %s %s\n", "", _("fix:"), _(c->fix));
		}
		if (report.failures)
			fprintf(stderr, _("sandbench: %d prerequisite(s) missing: sandboxes cannot run until they are fixed\n"),
				report.failures);
	}
	return report.failures ? SB_EXIT_PREREQ : SB_EXIT_OK;
}

const struct sb_cli_command sb_cmd_doctor = {
	.name = "doctor",
	.synopsis = "[--json] [--quick]",
	.summary = N_("check the runtime prerequisites and say how to fix missing ones"),
	.help = N_("  --json     print the checks as JSON\n"
		   "  --quick    skip booting a test sandbox\n"),
	.run = doctor_run,
};
