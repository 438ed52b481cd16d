#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "sandbox/commit.h"

static void print_result(const struct sb_commit_result *r)
{
	char size[32];

	sb_units_format_size(size, sizeof(size), r->layer.size, SB_UNITS_TEXT);
	printf("%s%s%s\n", r->ref ? r->ref : "", r->ref ? " " : "", r->digest);
	printf(_("layer %s: %s, %llu entries (%llu whiteouts) on top of %s\n"), r->layer.digest, size, r->entries,
	       r->whiteouts, r->parent);
	if (r->skipped)
		printf(_("left out %llu device nodes or sockets (the first: %s)\n"), r->skipped,
		       r->skipped_first ? r->skipped_first : "?");
}

struct commit_args {
	struct sb_commit_opts opts;
	char **changes;
	int json;
};

static int parse(struct commit_args *a, int argc, char **argv)
{
	static const struct option options[] = {
		{ "message", required_argument, NULL, 'm' },   { "change", required_argument, NULL, 'c' },
		{ "include-workspace", no_argument, NULL, 'w' }, { "compression", required_argument, NULL, 'z' },
		{ "max-size", required_argument, NULL, 's' },  { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, c;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "m:c:", options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			a->opts.message = optarg;
			break;
		case 'c': {
			char **nc = realloc(a->changes, (a->opts.n_changes + 1) * sizeof(*nc));
			if (!nc)
				return sb_cli_usage_error(NULL, &sb_cmd_commit, _("out of memory"));
			a->changes = nc;
			a->changes[a->opts.n_changes++] = optarg;
			break;
		}
		case 'w':
			a->opts.flags |= SB_COMMIT_WORKSPACE;
			break;
		case 'z':
			if ((c = sb_layer_compression_parse(optarg)) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_commit, _("unknown compression '%s' (gzip, zstd)"), optarg);
			a->opts.compression = (enum sb_layer_compression)c;
			break;
		case 's': {
			long long m = sb_units_parse_size(optarg);
			if (m <= 0)
				return sb_cli_usage_error(NULL, &sb_cmd_commit, _("invalid size '%s'"), optarg);
			a->opts.max_bytes = (unsigned long long)m;
			break;
		}
		case 'j':
			a->json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_commit, _("invalid option '%s'"), argv[optind - 1]);
		}
	}
	a->opts.changes = a->changes;
	if (optind + 2 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_commit, _("expected a sandbox name and an image reference"));
	return 0;
}

static int commit_run(struct sb_cli *cli, int argc, char **argv)
{
	struct commit_args a = { .opts = { .compression = SB_LAYER_GZIP } };
	struct sb_commit_result res;
	struct sb_root *root;
	struct sb_error err;
	int rc = parse(&a, argc, argv);

	if (rc == 0 && (rc = sb_cli_root(&root, cli)) == 0) {
		if (sb_sandbox_commit(&res, root, argv[optind], argv[optind + 1], &a.opts, &err) < 0)
			rc = sb_cli_fail(&err);
		else if (a.json)
			rc = sb_cli_print_json(sb_commit_result_json(&res));
		else
			print_result(&res);
		sb_commit_result_clear(&res);
	}
	free(a.changes);
	return rc;
}

const struct sb_cli_command sb_cmd_commit = {
	.name = "commit",
	.synopsis = "NAME REF [--message M] [--change 'INSTR VALUE']... [--include-workspace] [--compression gzip|zstd] [--max-size SIZE] [--json]",
	.summary = N_("a sandbox's disk as a new image on top of its own (paused while it is read)"),
	.help = N_("  --message M          the history entry's comment\n"
		   "  --change 'ENV K=V'   also 'WORKDIR /d', 'CMD sh-line' or 'CMD [\"exec\",\"form\"]',\n"
		   "                       'USER u[:g]', 'LABEL K=V'; repeatable\n"
		   "  --include-workspace  /workspace goes into the image too (sandboxes made from it\n"
		   "                       start their workspace with it)\n"
		   "  --compression C      gzip (default) or zstd\n"
		   "  --max-size SIZE      refuse to read more file data than SIZE (default 16g)\n"
		   "  --json               print the result as JSON\n"
		   "REF without a registry is named under localhost/ (tools -> localhost/tools:latest).\n"
		   "A running sandbox is paused while its disk is read, then carries on.\n"),
	.run = commit_run,
};
