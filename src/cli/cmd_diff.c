#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/units.h"
#include "sandbox/files.h"

static const char *const titles[SB_DIFF_AREAS] = {
	N_("Root file system, against the image:"),
	N_("Workspace (/workspace):"),
	N_("Exchange folder (/exchange, shared):"),
};

static void print_diff(const struct sb_diff *d, const char *name)
{
	char size[32];

	if (d->running)
		printf(_("sandbox '%s' is running: this is its disk as the host sees it now (a write still in flight may be missing)\n"),
		       name);
	for (int a = 0; a < SB_DIFF_AREAS; a++) {
		if (a == SB_DIFF_EXCHANGE && !d->exchange)
			continue;
		printf("%s\n", _(titles[a]));
		size_t shown = 0;
		for (size_t i = 0; i < d->count; i++) {
			const struct sb_diff_entry *e = &d->entries[i];
			if (e->area != (enum sb_diff_area)a)
				continue;
			shown++;
			sb_units_format_size(size, sizeof(size), e->size, SB_UNITS_COMPACT);
			printf("  %c %-5s %s%s%s\n", (char)e->kind, e->type == 'f' ? size : e->type == 'd' ? "dir" : e->type == 'l' ? "link" : "-",
			       e->path, e->type == 'd' && e->kind != SB_DIFF_DELETED ? "/" : "",
			       e->opaque ? _(" (deleted and made again)") : "");
		}
		if (!shown && !d->more[a])
			printf("  %s\n", _("(no changes)"));
		if (d->more[a])
			printf(_("  ... and %zu more\n"), d->more[a]);
	}
}

static int diff_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "max", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_diff_opts opts = { 0 };
	struct sb_diff *d;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, json = 0;
	char *end;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'j') {
			json = 1;
		} else if (opt == 'm') {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !v)
				return sb_cli_usage_error(NULL, &sb_cmd_diff, _("invalid number '%s'"), optarg);
			opts.max_entries = v;
		} else {
			return sb_cli_usage_error(NULL, &sb_cmd_diff, _("invalid option '%s'"), argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_diff, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_diff(&d, root, argv[optind], &opts, &err) < 0)
		return sb_cli_fail(&err);
	if (json)
		rc = sb_cli_print_json(sb_diff_json(d));
	else
		print_diff(d, argv[optind]);
	sb_diff_free(d);
	return rc;
}

const struct sb_cli_command sb_cmd_diff = {
	.name = "diff",
	.synopsis = "NAME [--max N] [--json]",
	.summary = N_("what a sandbox changed against its image; its workspace and exchange files apart"),
	.help = N_("  --max N   list at most N entries of each part (default 10000), then 'and N more'\n"
		   "  --json    print it as JSON\n"
		   "A added, C changed, D deleted. A directory in the image and the sandbox is listed when\n"
		   "it changed itself (mode, owner, deleted and made again); its files are listed anyway.\n"),
	.run = diff_run,
};
