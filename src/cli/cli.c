#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "base/i18n.h"

static const struct {
	int code;
	int status;
} exit_codes[] = {
	{ SB_ERR_INVALID, SB_EXIT_USAGE },
	{ SB_ERR_NOTFOUND, SB_EXIT_NOTFOUND },
	{ SB_ERR_EXISTS, SB_EXIT_CONFLICT },
	{ SB_ERR_BUSY, SB_EXIT_CONFLICT },
	{ SB_ERR_STATE, SB_EXIT_CONFLICT },
	{ SB_ERR_PREREQ, SB_EXIT_PREREQ },
	{ SB_ERR_AUTH, SB_EXIT_AUTH },
	{ SB_ERR_DIGEST, SB_EXIT_BADCONTENT },
	{ SB_ERR_FORMAT, SB_EXIT_BADCONTENT },
	{ SB_ERR_UNSAFE, SB_EXIT_BADCONTENT },
	{ SB_ERR_LIMIT, SB_EXIT_BADCONTENT },
	{ SB_ERR_NETWORK, SB_EXIT_NETWORK },
	{ SB_ERR_TIMEOUT, SB_EXIT_TIMEOUT },
	{ SB_ERR_NOSPACE, SB_EXIT_NOSPACE },
};

int sb_cli_exit_code(int code)
{
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++)
		if (exit_codes[i].code == code)
			return exit_codes[i].status;
	return code == 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
}

int sb_cli_fail(const struct sb_error *err)
{
	fprintf(stderr, "sandbench: %s\n", err->msg[0] ? err->msg : _("unknown error"));
	return sb_cli_exit_code(err->code);
}

void sb_cli_usage(FILE *f, const char *group, const struct sb_cli_command *cmd)
{
	fprintf(f, _("Usage: sandbench %s%s%s %s\n"), group ? group : "", group ? " " : "", cmd->name,
		cmd->synopsis ? cmd->synopsis : "");
	fprintf(f, "%s\n", _(cmd->summary));
	if (cmd->help)
		fprintf(f, "\n%s", _(cmd->help));
}

int sb_cli_usage_error(const char *group, const struct sb_cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("sandbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, _(" (see 'sandbench %s%s%s --help')\n"), group ? group : "", group ? " " : "", cmd->name);
	return SB_EXIT_USAGE;
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	}
	return 0;
}

static void list_commands(FILE *f, const char *group, const struct sb_cli_command *const *table)
{
	fprintf(f, _("Usage: sandbench [--root DIR] [-v] %s%sCOMMAND [ARGS]\n\nCommands:\n"),
		group ? group : "", group ? " " : "");
	for (size_t i = 0; table[i]; i++)
		fprintf(f, "  %-10s %s\n", table[i]->name, _(table[i]->summary));
	fprintf(f, _("\nRun 'sandbench %s%sCOMMAND --help' for a command's options.\n"),
		group ? group : "", group ? " " : "");
}

int sb_cli_dispatch(struct sb_cli *cli, const char *group, const struct sb_cli_command *const *table,
		    int argc, char **argv)
{
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") || !strcmp(argv[0], "help")) {
		list_commands(argc < 1 ? stderr : stdout, group, table);
		return argc < 1 ? SB_EXIT_USAGE : SB_EXIT_OK;
	}
	for (size_t i = 0; table[i]; i++) {
		if (strcmp(argv[0], table[i]->name) != 0)
			continue;
		if (!table[i]->group && wants_help(argc, argv)) {
			sb_cli_usage(stdout, group, table[i]);
			return SB_EXIT_OK;
		}
		return table[i]->run(cli, argc, argv);
	}
	fprintf(stderr, _("sandbench: unknown command '%s%s%s' (see 'sandbench %s%s--help')\n"),
		group ? group : "", group ? " " : "", argv[0], group ? group : "", group ? " " : "");
	return SB_EXIT_USAGE;
}

int sb_cli_root(struct sb_root **out, struct sb_cli *cli)
{
	struct sb_error err;

	if (!cli->root && sb_root_open(&cli->root, cli->root_path, &err) < 0)
		return sb_cli_fail(&err);
	*out = cli->root;
	return 0;
}

int sb_cli_parse_json(int *json, const char *group, const struct sb_cli_command *cmd, int argc, char **argv,
		      const char *operand_error)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	int opt;

	*json = 0;
	/* 0, not 1: resets glibc getopt, so options may follow operands */
	optind = 0;
	opterr = 0; /* one error line, ours */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'j')
			return sb_cli_usage_error(group, cmd, _("invalid option '%s'"), argv[optind - 1]);
		*json = 1;
	}
	if (!operand_error && optind < argc)
		return sb_cli_usage_error(group, cmd, _("unexpected argument '%s'"), argv[optind]);
	if (operand_error && optind + 1 != argc)
		return sb_cli_usage_error(group, cmd, "%s", operand_error);
	return 0;
}

int sb_cli_print_json(json_t *doc)
{
	struct sb_error err;

	if (!doc) {
		sb_error_set(&err, SB_ERR_NOMEM, _("cannot build the JSON output: out of memory, or text that is not UTF-8"));
		return sb_cli_fail(&err);
	}
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(doc);
	return SB_EXIT_OK;
}

