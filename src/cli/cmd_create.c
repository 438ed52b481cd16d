#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"
#include "sandbox/settings.h"
#include "base/units.h"

#define MAX_ITEMS 64

struct create_args {
	struct sb_sandbox_spec spec;
	struct sb_sandbox_mount mounts[MAX_ITEMS];
	struct sb_sandbox_label labels[MAX_ITEMS];
	struct sb_cli_egress egress;
	struct sb_service service;
	struct sb_publish publish[MAX_ITEMS];
	int json;
};

static int parse_label(struct create_args *a, char *arg)
{
	char *eq = strchr(arg, '='); /* NOLINT(clang-analyzer-core.NonNullParamChecker): required argument (docs/checks.md) */

	if (!eq || eq == arg || a->spec.n_labels == MAX_ITEMS)
		return -1;
	*eq = '\0';
	a->labels[a->spec.n_labels++] = (struct sb_sandbox_label){ arg, eq + 1 };
	return 0;
}

static int parse_mount(struct create_args *a, char *arg)
{
	if (a->spec.n_mounts == MAX_ITEMS || sb_sandbox_mount_parse(&a->mounts[a->spec.n_mounts], arg, NULL) < 0)
		return -1;
	a->spec.n_mounts++;
	return 0;
}

static int parse_onoff(const char *s)
{
	return !strcmp(s, "on") ? 1 : !strcmp(s, "off") ? 0 : -1; /* NOLINT(clang-analyzer-core.NonNullParamChecker): required argument (docs/checks.md) */
}

/* A size option's bytes; 0 when it is not a positive size. */
static unsigned long long size_arg(const char *s)
{
	long long v = sb_units_parse_size(s);

	return v > 0 ? (unsigned long long)v : 0;
}

static int create_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "temporary", optional_argument, NULL, 't' },
		{ "permanent", no_argument, NULL, 'p' },
		{ "network", required_argument, NULL, 'n' },
		{ "mount", required_argument, NULL, 'm' },
		{ "allow-sensitive-mounts", no_argument, NULL, 'S' },
		{ "no-exchange", no_argument, NULL, 'X' },
		{ "memory", required_argument, NULL, 'M' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "disk", required_argument, NULL, 'd' },
		{ "owner", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, 'l' },
		{ "expiry", required_argument, NULL, 'e' },
		{ "allow", required_argument, NULL, 'A' },
		{ "deny-all", no_argument, NULL, 'D' },
		{ "service", required_argument, NULL, 's' },
		{ "health", required_argument, NULL, 'H' },
		{ "health-interval", required_argument, NULL, 'I' },
		{ "restart", required_argument, NULL, 'R' },
		{ "publish", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct create_args a = { .spec = { .network = -1 } };
	struct sb_sandbox_info info;
	struct sb_root *root;
	struct sb_error err;
	char *end;
	int opt, rc, status = SB_EXIT_OK;

	a.spec.mounts = a.mounts;
	a.spec.labels = a.labels;
	/* 0: full re-initialisation, so options may follow the name (main parsed with "+") */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			a.spec.image = optarg;
			break;
		case 't':
			a.spec.kind = SB_KIND_TEMPORARY;
			if (optarg && (a.spec.idle_timeout = sb_units_parse_duration(optarg)) <= 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid idle time '%s' (e.g. 90s, 30m, 2h)"), optarg);
			break;
		case 'p':
			a.spec.kind = SB_KIND_PERMANENT;
			break;
		case 'n':
			if ((a.spec.network = parse_onoff(optarg)) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("--network takes on or off"));
			break;
		case 'm':
			if (parse_mount(&a, optarg) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid mount '%s' (HOST:PATH[:ro|rw])"), optarg);
			break;
		case 'S':
			a.spec.allow_sensitive_mounts = 1;
			break;
		case 'X':
			a.spec.no_exchange = 1;
			break;
		case 'M':
			if (!(a.spec.memory = size_arg(optarg)))
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid memory size '%s' (e.g. 512m, 2g)"), optarg);
			break;
		case 'd':
			if (!(a.spec.disk = size_arg(optarg)))
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid disk size '%s' (e.g. 512m, 2g)"), optarg);
			break;
		case 'c':
			a.spec.cpus = strtod(optarg, &end); /* NOLINT(clang-analyzer-core.NonNullParamChecker): required argument (docs/checks.md) */
			if (*end || end == optarg || !(a.spec.cpus > 0 && a.spec.cpus <= 1024)) /* NaN too */
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid CPU count '%s'"), optarg);
			break;
		case 'o':
			a.spec.owner = optarg;
			break;
		case 'l':
			if (parse_label(&a, optarg) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid label '%s' (KEY=VALUE)"), optarg);
			break;
		case 'e':
			if (sb_expiry_parse(&a.spec.expiry_action, &a.spec.expiry_stop_after, optarg, NULL) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create,
							  _("--expiry takes rm, stop, pause or pause,stop=DURATION"));
			break;
		case 'A':
			if (sb_cli_egress_allow(&a.egress, optarg) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("too many --allow rules"));
			break;
		case 'D':
			a.egress.deny_all = 1;
			break;
		case 's':
			a.service.command = optarg;
			a.spec.service = &a.service;
			break;
		case 'H':
			a.service.health = optarg;
			break;
		case 'I':
			if ((a.service.interval = sb_units_parse_duration(optarg)) <= 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid --health-interval '%s' (e.g. 10s, 1m)"), optarg);
			break;
		case 'R':
			if ((rc = sb_service_restart_parse(optarg)) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("--restart takes no, on-failure or always"));
			a.service.restart = rc;
			break;
		case 'P':
			if (a.spec.n_publish == MAX_ITEMS)
				return sb_cli_usage_error(NULL, &sb_cmd_create, _("too many --publish ports"));
			if (sb_publish_parse(&a.publish[a.spec.n_publish], optarg, &err) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_create, "%s", err.msg);
			a.spec.n_publish++;
			break;
		case 'j':
			a.json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_create, _("invalid option"));
		}
	}
	if (optind + 1 != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_create, _("expected one sandbox name"));
	if (!a.spec.image)
		return sb_cli_usage_error(NULL, &sb_cmd_create, _("--image is required"));
	if ((a.service.health || a.service.interval) && !a.service.command)
		return sb_cli_usage_error(NULL, &sb_cmd_create, _("--health and --health-interval need --service"));
	a.spec.publish = a.publish;
	if (a.egress.n && a.egress.deny_all)
		return sb_cli_usage_error(NULL, &sb_cmd_create, _("--allow and --deny-all exclude each other"));
	a.spec.name = argv[optind];
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	struct sb_egress egress;
	if (sb_cli_egress_build(&egress, root, &a.egress, &err) < 0)
		return sb_cli_fail(&err);
	/* an allow-list or --deny-all is about network on */
	if (egress.mode != SB_EGRESS_DEFAULT && a.spec.network < 0)
		a.spec.network = 1;
	a.spec.egress = &egress;
	rc = sb_sandbox_create(&info, root, &a.spec, &err);
	sb_egress_clear(&egress);
	if (rc < 0)
		return sb_cli_fail(&err);
	if (a.json)
		status = sb_cli_print_json(sb_sandbox_info_json(&info));
	else
		printf("%s\n", info.rec.name);
	sb_sandbox_info_clear(&info);
	return status;
}

const struct sb_cli_command sb_cmd_create = {
	.name = "create",
	.synopsis = "NAME --image REF [--temporary[=IDLE]|--permanent] [--network on|off] "
		    "[--mount HOST:PATH[:ro|rw]]... [--allow-sensitive-mounts] [--no-exchange] [--memory M] [--cpus N] [--disk SIZE] "
		    "[--owner O] "
		    "[--label K=V]... [--expiry rm|stop|pause[,stop=D]] [--allow ADDR[/PREFIX][:PORT]|@PROFILE]... [--deny-all] "
		    "[--service CMD [--health CMD] [--health-interval T] [--restart no|on-failure|always]] "
		    "[--publish [ADDR:]HOSTPORT:PORT]... [--json]",
	.summary = N_("create and start a sandbox from an image"),
	.help = N_("  --image REF          image reference or manifest digest (pinned at create)\n"
		   "  --temporary[=IDLE]   expire after IDLE without activity (default from the config, 30m)\n"
		   "  --permanent          keep until removed explicitly\n"
		   "  --network on|off     network access (default off)\n"
		   "  --mount HOST:PATH[:ro|rw]  give a host folder (read-only unless :rw)\n"
		   "  --allow-sensitive-mounts  also accept credential, system and runtime folders\n"
		   "  --no-exchange        do not mount the exchange folder at /exchange\n"
		   "  --memory M           memory limit (e.g. 512m, 2g)\n"
		   "  --cpus N             CPU limit in cores\n"
		   "  --disk SIZE          cap its disk (root file system changes and workspace) at SIZE,\n"
		   "                       a file system of its own (at least 16M)\n"
		   "  --owner O            who owns it (e.g. plugin:search)\n"
		   "  --label K=V          a label (repeatable)\n"
		   "  --expiry rm|stop|pause[,stop=D]  what expiry does to a temporary sandbox (pause,stop=D:\n"
		   "                       pause, then stop after D paused)\n"
		   "  --allow RULE         network on, reaching only ADDR[/PREFIX][:PORT], HOST[:PORT],\n"
		   "                       sandbox:NAME[:PORT] or the rules of allow_profile @PROFILE\n"
		   "                       (repeatable)\n"
		   "  --deny-all           network on without any egress\n"
		   "  --service CMD        run CMD (sh -c) inside, supervised; the sandbox is permanent\n"
		   "  --health CMD         health check run inside every interval (exit 0: healthy)\n"
		   "  --health-interval T  time between health checks (default 10s)\n"
		   "  --restart POLICY     restart the service: no (default), on-failure, always\n"
		   "  --publish [ADDR:]HP:P  sandbox port P on host port HP of ADDR (default\n"
		   "                       127.0.0.1; network on; repeatable)\n"
		   "  --json               print the new sandbox as JSON\n"),
	.run = create_run,
};
