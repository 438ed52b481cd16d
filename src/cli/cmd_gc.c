#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sandbox/gc.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "session/session.h"

static int gc_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_gc_item *items;
	struct sb_root *root;
	struct sb_error err;
	unsigned flags = 0;
	size_t n;
	int opt, rc, json = 0, status = SB_EXIT_OK;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'n')
			flags |= SB_GC_DRY_RUN;
		else if (opt == 'j')
			json = 1;
		else
			return sb_cli_usage_error(NULL, &sb_cmd_gc, _("invalid option"));
	}
	if (optind < argc)
		return sb_cli_usage_error(NULL, &sb_cmd_gc, _("unexpected argument '%s'"), argv[optind]);
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_gc(&items, &n, root, flags, &err) < 0)
		return sb_cli_fail(&err);
	/* then the sockets and status of session holders that died */
	char **stale = NULL;
	size_t n_stale = 0;
	sb_session_gc(&stale, &n_stale, root, (flags & SB_GC_DRY_RUN) != 0, NULL);
	struct sb_gc_item *all = n_stale ? realloc(items, (n + n_stale) * sizeof(*items)) : items;
	for (size_t i = 0; all && i < n_stale; i++, n++) {
		all[n] = (struct sb_gc_item){ .kind = "session", .action = N_("cleaned the session of a dead holder") };
		snprintf(all[n].name, sizeof(all[n].name), "%s", stale[i]);
	}
	items = all ? all : items;
	sb_session_names_free(stale, n_stale);
	json_t *arr = json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		const struct sb_gc_item *it = &items[i];
		if (it->rc < 0) /* NOLINT(clang-analyzer-core.NullDereference): sb_gc gives items for n > 0 */
			status = sb_cli_exit_code(it->rc);
		if (json)
			arr = sb_json_append(arr, json_pack("{s:s, s:s, s:s, s:b, s:s?}", "kind", it->kind, "name", it->name,
							    "action", it->action, "ok", it->rc == 0, "detail",
							    it->message[0] ? it->message : NULL));
		else if (it->rc < 0)
			fprintf(stderr, "sandbench: %s %s: %s\n", it->kind, it->name, it->message);
		else
			printf("%s%-9s %-24s %s%s%s\n", flags & SB_GC_DRY_RUN ? _("(dry run) ") : "", it->kind, it->name,
			       _(it->action), it->message[0] ? ": " : "", it->message);
	}
	if (json && (rc = sb_cli_print_json(arr)) != SB_EXIT_OK)
		status = rc;
	else if (!json && n == 0)
		printf("%s\n", _("nothing to reconcile"));
	free(items);
	return status;
}

const struct sb_cli_command sb_cmd_gc = {
	.name = "gc",
	.synopsis = "[--dry-run] [--json]",
	.summary = N_("reconcile records with runsc containers, mounts, cgroups and network objects"),
	.help = N_("  --dry-run  say what would be done, change nothing\n"
		   "  --json     print the findings as JSON\n"
		   "A permanent sandbox that still has a record is never removed: it is marked broken.\n"),
	.run = gc_run,
};
