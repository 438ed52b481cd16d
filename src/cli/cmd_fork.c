#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/sandbox.h"

/* What happened to the source and what the fork carries, on stderr: stdout
 * holds the fork's name alone, for scripts. */
static void print_report(const struct sb_fork_report *r, const char *source)
{
	if (r->source_checkpointed && r->source_restored)
		fprintf(stderr, _("Sandbox '%s' was checkpointed and restored for the fork: it runs on, its sessions ended.\n"),
			source);
	else if (r->source_checkpointed)
		fprintf(stderr, _("Sandbox '%s' was checkpointed for the fork but could not be restored: %s\n"), source,
			r->source_error);
	fputs(r->memory ? _("The fork carries on the source's memory and processes.\n")
			: _("The fork started afresh from a copy of the source's disk.\n"), stderr);
	if (r->skipped)
		fprintf(stderr, _("Left out %llu sockets or device nodes of the source's disk.\n"), r->skipped);
}

static json_t *report_json(json_t *doc, const struct sb_fork_report *r)
{
	return sb_json_set(doc, "fork", sb_fork_report_json(r));
}

static int fork_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "temporary", no_argument, NULL, 't' },
		{ "permanent", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	enum sb_sandbox_kind kind = SB_KIND_DEFAULT;
	struct sb_sandbox_info info;
	struct sb_fork_report rep;
	struct sb_root *root;
	struct sb_error err;
	int opt, json = 0, rc;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 't':
		case 'p':
			if (kind != SB_KIND_DEFAULT)
				return sb_cli_usage_error(NULL, &sb_cmd_fork, _("--temporary and --permanent exclude each other"));
			kind = opt == 't' ? SB_KIND_TEMPORARY : SB_KIND_PERMANENT;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_fork, _("invalid option"));
		}
	}
	if (optind + 2 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_fork, _("expected the source sandbox and the new sandbox's name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_fork(&info, &rep, root, argv[optind], argv[optind + 1], kind, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		rc = sb_cli_print_json(report_json(sb_sandbox_info_json(&info), &rep));
	} else {
		printf("%s\n", info.rec.name);
		print_report(&rep, argv[optind]);
	}
	sb_sandbox_info_clear(&info);
	return rc;
}

const struct sb_cli_command sb_cmd_fork = {
	.name = "fork",
	.synopsis = "NAME NEW [--temporary|--permanent] [--json]",
	.summary = N_("a new sandbox from a copy of another's disk, memory and processes"),
	.help = N_("  --temporary          the fork is temporary (default: the source's kind)\n"
		   "  --permanent          the fork is permanent\n"
		   "  --json               print the fork as JSON (with what the fork did, under \"fork\")\n"
		   "The disk (overlay upper and workspace) is copied. A running source is\n"
		   "checkpointed, which ends its sessions, and restored right after; the fork\n"
		   "restores the same checkpoint and carries on its processes. A stopped source\n"
		   "with a checkpoint stays stopped; one without starts the fork afresh.\n"
		   "Network, mounts, limits, owner and labels follow the source.\n"),
	.run = fork_run,
};
