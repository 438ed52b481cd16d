#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/sandbox.h"
#include "base/units.h"

static void print_time(const char *label, long long t)
{
	char buf[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, sizeof(buf), "%lld", t); /* out of gmtime's range: the seconds */
	printf("%-14s %s\n", label, buf);
}

static void print_service(const struct sb_sandbox_info *s)
{
	const struct sb_service *svc = &s->rec.service;
	struct sb_service_status st;

	if (svc->command) {
		printf("%-14s %s (%s %s)\n", _("service:"), svc->command, _("restart"), sb_service_restart_name(svc->restart));
		if (svc->health)
			printf("%-14s %s (%s %llds)\n", _("health:"), svc->health, _("every"), svc->interval);
		if (sb_sandbox_service_status(&st, s))
			printf("%-14s %s, %s, %d %s\n", "", st.state, st.health, st.restarts, _("restarts"));
	}
	for (size_t i = 0; i < s->rec.n_publish; i++) {
		const struct sb_publish *p = &s->rec.publish[i];
		printf("%-14s %s:%u -> %u%s\n", i ? "" : _("published:"), p->address, p->host_port, p->port,
		       sb_publish_loopback(p) ? "" : _(" (warning: reachable from other hosts)"));
	}
}

static void print_info(struct sb_root *root, const struct sb_sandbox_info *s, const struct sb_sandbox_stats *st)
{
	char a[32], b[32], state[64];

	printf("%-14s %s\n", _("name:"), s->rec.name);
	printf("%-14s %s\n", _("id:"), s->rec.id);
	sb_sandbox_state_text(state, sizeof(state), s);
	printf("%-14s %s (%s)\n", _("state:"), state, s->rec.reason);
	printf("%-14s %s\n", _("kind:"), sb_sandbox_kind_name(s->rec.kind));
	sb_units_format_duration(a, sizeof(a), s->idle_seconds);
	if (s->expires_in >= 0) {
		sb_units_format_duration(b, sizeof(b), s->expires_in);
		char act[64];
		sb_expiry_format(act, sizeof(act), s->rec.expiry_action, s->rec.expiry_stop_after);
		printf("%-14s %s, %s %s (%s)\n", _("idle:"), a, _("expires in"), b, act);
	} else {
		printf("%-14s %s\n", _("idle:"), a);
	}
	printf("%-14s %s\n", _("image:"), s->rec.image_ref[0] ? s->rec.image_ref : "-");
	printf("%-14s %s\n", _("digest:"), s->rec.image_digest);
	if (s->rec.parent[0])
		printf("%-14s %s (%s)\n", _("forked from:"), s->rec.parent, s->rec.parent_id);
	printf("%-14s %s%s%s%s\n", _("network:"), sb_cli_onoff(s->rec.network), s->address[0] ? " (" : "", s->address,
	       s->address[0] ? ")" : "");
	if (s->rec.network) {
		char *egress = sb_sandbox_egress_text(root, &s->rec);
		printf("%-14s %s\n", _("egress:"), egress ? egress : "?");
		free(egress);
	}
	print_service(s);
	printf("%-14s %s\n", _("workspace:"), s->workspace);
	printf("%-14s %s\n", _("exchange:"), sb_cli_onoff(s->rec.exchange));
	for (size_t i = 0; i < s->rec.n_mounts; i++)
		printf("%-14s %s -> %s (%s)\n", i ? "" : _("mounts:"), s->rec.mounts[i].host, s->rec.mounts[i].path,
		       sb_mount_mode_name(s->rec.mounts[i].mode));
	char cpus[32];
	if (s->rec.memory)
		sb_units_format_size(a, sizeof(a), s->rec.memory, SB_UNITS_TEXT);
	else
		snprintf(a, sizeof(a), "%s", _("unlimited"));
	if (s->rec.cpus > 0)
		snprintf(cpus, sizeof(cpus), "%.2f", s->rec.cpus);
	else
		snprintf(cpus, sizeof(cpus), "%s", _("unlimited"));
	printf("%-14s %s %s, %s %s\n", _("limits:"), _("memory"), a, _("cpus"), cpus);
	if (s->rec.disk) {
		sb_units_format_size(a, sizeof(a), s->rec.disk, SB_UNITS_TEXT);
		printf("%-14s %s", _("disk limit:"), a);
		if (s->disk_size) {
			sb_units_format_size(a, sizeof(a), s->disk_used, SB_UNITS_TEXT);
			printf(_(" (%s used)"), a);
		}
		putchar('\n');
	}
	if (st) {
		sb_units_format_size(a, sizeof(a), st->memory_usage, SB_UNITS_TEXT);
		printf("%-14s %s\n", _("memory used:"), a);
	}
	printf("%-14s %s\n", _("owner:"), s->rec.owner[0] ? s->rec.owner : "-");
	for (size_t i = 0; i < s->rec.n_labels; i++)
		printf("%-14s %s=%s\n", i ? "" : _("labels:"), s->rec.labels[i].key, s->rec.labels[i].value);
	print_time(_("created:"), s->rec.created);
	print_time(_("last active:"), s->last_activity);
	printf("%-14s %s\n", _("checkpoint:"), s->has_checkpoint ? _("yes") : _("no"));
}

static int inspect_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_sandbox_info info;
	struct sb_sandbox_stats stats;
	struct sb_root *root;
	struct sb_error err;
	int rc, json = 0, have_stats, status = SB_EXIT_OK;

	if ((rc = sb_cli_parse_json(&json, NULL, &sb_cmd_inspect, argc, argv, _("expected one sandbox name"))) != 0)
		return rc;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_inspect(&info, root, argv[optind], &err) < 0)
		return sb_cli_fail(&err);
	have_stats = info.rec.state == SB_STATE_RUNNING && sb_sandbox_stats(&stats, root, argv[optind], &err) == 0;
	if (json) {
		json_t *doc = sb_sandbox_info_json(&info);
		if (have_stats)
			doc = sb_json_set(doc, "stats", json_pack("{s:I, s:I, s:I, s:I}", "memory_usage",
								  (json_int_t)stats.memory_usage, "memory_limit",
								  (json_int_t)stats.memory_limit, "cpu_ns",
								  (json_int_t)stats.cpu_ns, "pids", (json_int_t)stats.pids));
		status = sb_cli_print_json(doc);
	} else {
		print_info(root, &info, have_stats ? &stats : NULL);
	}
	sb_sandbox_info_clear(&info);
	return status;
}

const struct sb_cli_command sb_cmd_inspect = {
	.name = "inspect",
	.synopsis = "NAME [--json]",
	.summary = N_("show everything about a sandbox, memory use included"),
	.help = N_("  --json    print it as JSON\n"),
	.run = inspect_run,
};
