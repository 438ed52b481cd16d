#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/i18n.h"
#include "base/units.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"

/* One side of a copy: "NAME:PATH" (NAME a valid sandbox name, so that a host
 * path with a colon can be written ./a:b), "-" (a tar stream), or a host path. */
struct side {
	char *name;                      /* the sandbox, or NULL */
	const char *path;
	int stream;
};

static int parse_side(struct side *s, char *arg)
{
	char *colon = strchr(arg, ':');

	memset(s, 0, sizeof(*s));
	s->path = arg;
	if (!strcmp(arg, "-")) {
		s->stream = 1;
		return 0;
	}
	if (!colon || colon == arg || memchr(arg, '/', (size_t)(colon - arg)))
		return 0;
	*colon = '\0';
	if (sb_sandbox_name_check(arg, NULL) < 0) {
		*colon = ':';
		return 0;
	}
	s->name = arg;
	s->path = colon + 1;
	return 0;
}

/* Runs the copy the two sides ask for. */
static int copy(struct sb_copy_result *res, struct sb_root *root, const struct side *src, const struct side *dst,
		const struct sb_copy_opts *opts, struct sb_error *err)
{
	if (src->name && dst->stream)
		return sb_sandbox_copy_out_tar(res, root, src->name, src->path, STDOUT_FILENO, opts, err);
	if (src->name)
		return sb_sandbox_copy_out(res, root, src->name, src->path, dst->path, opts, err);
	if (src->stream)
		return sb_sandbox_copy_in_tar(res, root, STDIN_FILENO, dst->name, dst->path, opts, err);
	return sb_sandbox_copy_in(res, root, src->path, dst->name, dst->path, opts, err);
}

static int cp_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "discard-memory", no_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_copy_opts opts = { 0 };
	struct sb_copy_result res;
	struct side src, dst;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, json = 0;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "rR", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
		case 'R':
			opts.flags |= SB_COPY_RECURSIVE;
			break;
		case 'm': {
			long long m = sb_units_parse_size(optarg);
			if (m <= 0)
				return sb_cli_usage_error(NULL, &sb_cmd_cp, _("invalid size '%s'"), optarg);
			opts.max_bytes = (unsigned long long)m;
			break;
		}
		case 'D':
			opts.flags |= SB_COPY_DISCARD_MEMORY;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_cp, _("invalid option '%s'"), argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return sb_cli_usage_error(NULL, &sb_cmd_cp, _("expected a source and a destination"));
	parse_side(&src, argv[optind]);
	parse_side(&dst, argv[optind + 1]);
	if (src.name && dst.name)
		return sb_cli_usage_error(NULL, &sb_cmd_cp, _("both sides name a sandbox: copy out to a host path, then in"));
	if (!src.name && !dst.name)
		return sb_cli_usage_error(NULL, &sb_cmd_cp, _("neither side names a sandbox (NAME:/path)"));
	if (src.stream && dst.stream)
		return sb_cli_usage_error(NULL, &sb_cmd_cp, _("only one side can be '-'"));
	if (json && dst.stream)
		return sb_cli_usage_error(NULL, &sb_cmd_cp, _("--json cannot share standard output with a tar stream"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (copy(&res, root, &src, &dst, &opts, &err) < 0) {
		sb_copy_result_clear(&res);
		return sb_cli_fail(&err);
	}
	if (res.skipped)
		fprintf(stderr, _("sandbench: %llu special files (FIFOs, devices, sockets) were left out, the first '%s'\n"),
			res.skipped, res.skipped_first ? res.skipped_first : "?");
	rc = json ? sb_cli_print_json(sb_copy_result_json(&res)) : SB_EXIT_OK;
	sb_copy_result_clear(&res);
	return rc;
}

const struct sb_cli_command sb_cmd_cp = {
	.name = "cp",
	.synopsis = "[-r] [--max-size SIZE] [--discard-memory] [--json] SRC DST",
	.summary = N_("copy files between a sandbox and the host (NAME:/path on one side, - for a tar stream)"),
	.help = N_("  -r, --recursive    copy directories (without it a directory is refused)\n"
		   "  --max-size SIZE    refuse to copy more file data than SIZE (default 1g)\n"
		   "  --discard-memory   copying into the root file system of a sandbox stopped with its\n"
		   "                     memory checkpointed drops that memory: restore cold-starts it\n"
		   "  --json             print what was copied as JSON\n"
		   "SRC or DST is NAME:/path (absolute, inside the sandbox), a host path, or - for a tar\n"
		   "stream on standard input or output. As with docker cp: a file goes into a directory\n"
		   "under its own name; a directory to a missing path becomes it, to a directory goes in\n"
		   "it; SRC/. copies a directory's content. A symlink at the destination is replaced.\n"),
	.run = cp_run,
};
