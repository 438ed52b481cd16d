#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_image.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/build.h"

/* "Step 2/5: RUN ..." on stderr, "(cached)" when nothing ran. */
static void show_step(void *user, const struct sb_build_event *ev)
{
	(void)user;
	fprintf(stderr, _("Step %zu/%zu: %s %s%s\n"), ev->step, ev->n_steps, ev->word, ev->args,
		ev->cached ? _(" (cached)") : "");
}

struct build_args {
	struct sb_build_opts opts;
	char **build_args;
	int json;
};

static int parse(struct build_args *a, int argc, char **argv)
{
	static const struct option options[] = {
		{ "tag", required_argument, NULL, 't' },     { "file", required_argument, NULL, 'f' },
		{ "network", required_argument, NULL, 'n' }, { "build-arg", required_argument, NULL, 'b' },
		{ "no-cache", no_argument, NULL, 'C' },      { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "t:f:", options, NULL)) != -1) {
		switch (opt) {
		case 't':
			a->opts.ref = optarg;
			break;
		case 'f':
			a->opts.dockerfile = optarg;
			break;
		case 'n':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return sb_cli_usage_error("image", &sb_cmd_image_build, _("--network wants on or off, not '%s'"), optarg);
			a->opts.network = !strcmp(optarg, "on");
			break;
		case 'b': {
			char **nb = realloc(a->build_args, (a->opts.n_build_args + 1) * sizeof(*nb));
			if (!nb)
				return sb_cli_usage_error("image", &sb_cmd_image_build, _("out of memory"));
			a->build_args = nb;
			nb[a->opts.n_build_args++] = optarg;
			break;
		}
		case 'C':
			a->opts.no_cache = 1;
			break;
		case 'j':
			a->json = 1;
			break;
		default:
			return sb_cli_usage_error("image", &sb_cmd_image_build, _("invalid option '%s'"), argv[optind - 1]);
		}
	}
	a->opts.build_args = a->build_args;
	if (!a->opts.ref)
		return sb_cli_usage_error("image", &sb_cmd_image_build, _("the image needs a name: -t REF"));
	if (optind + 1 < argc)
		return sb_cli_usage_error("image", &sb_cmd_image_build, _("unexpected argument '%s'"), argv[optind + 1]);
	a->opts.context = optind < argc ? argv[optind] : ".";
	return 0;
}

static int build_run(struct sb_cli *cli, int argc, char **argv)
{
	struct build_args a = { .opts = { .log_fd = 2, .progress = show_step } };
	struct sb_build_result res;
	struct sb_root *root;
	struct sb_error err;
	int rc = parse(&a, argc, argv);

	if (rc == 0 && (rc = sb_cli_root(&root, cli)) == 0) {
		if (sb_build(&res, root, &a.opts, &err) < 0) {
			rc = sb_cli_fail(&err);
		} else if (a.json) {
			rc = sb_cli_print_json(sb_build_result_json(&res));
		} else {
			printf("%s %s\n", res.ref, res.digest);
		}
		sb_build_result_clear(&res);
	}
	free(a.build_args);
	return rc;
}

const struct sb_cli_command sb_cmd_image_build = {
	.name = "build",
	.synopsis = "-t REF [-f Dockerfile] [--network on|off] [--build-arg K=V]... [--no-cache] [--json] [CONTEXT]",
	.summary = N_("build an image from a Dockerfile, each RUN in a disposable sandbox"),
	.help = N_("  -t, --tag REF        the image's name (without a registry: under localhost/)\n"
		   "  -f, --file F         the Dockerfile (default: CONTEXT/Dockerfile)\n"
		   "  --network on|off     the network of every RUN (default off; a '# sandbench: network=on'\n"
		   "                       comment before a step turns it on for that step)\n"
		   "  --build-arg K=V      a value for ARG K; repeatable\n"
		   "  --no-cache           run every step again\n"
		   "  --json               print the result as JSON\n"
		   "Instructions: FROM, RUN, COPY, ADD (local files), ARG, ENV, WORKDIR, USER, CMD,\n"
		   "ENTRYPOINT, LABEL, EXPOSE. Progress and RUN's output go to stderr.\n"),
	.run = build_run,
};
