/* sandbench timeline NAME [--follow] [--since T] [--json]: what ran in a
 * sandbox and who ran it. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "sandbox/sandbox.h"
#include "sandbox/timeline.h"

/* Recorded text comes from agents and sandboxes: control characters (a
 * terminal's escape sequences among them, C1 ones too) are shown escaped,
 * never sent to the terminal, and each entry stays one line. */
static void put_text(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			printf("\\u%04x", *++p);
		else
			putchar(*p);
	}
}

static void format_duration(char *buf, size_t size, long long ms)
{
	if (ms < 0)
		snprintf(buf, size, "-");
	else if (ms < 1000)
		snprintf(buf, size, "%lldms", ms);
	else if (ms < 60000)
		snprintf(buf, size, "%.1fs", (double)ms / 1000);
	else
		sb_units_format_duration(buf, size, ms / 1000);
}

static void print_header(void)
{
	printf("%-23s  %-9s  %-9s  %4s  %8s  %s\n", _("TIME"), _("SOURCE"), _("KIND"), _("EXIT"), _("DURATION"),
	       _("WHAT"));
}

static void print_line(const struct sb_timeline_entry *e)
{
	char when[32], dur[16], code[16] = "-";
	time_t secs = (time_t)(e->time_ms / 1000);
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof(when), "%lld", (long long)secs); /* out of localtime's range */
	format_duration(dur, sizeof(dur), e->duration_ms);
	if (e->timed_out)
		snprintf(code, sizeof(code), "%s", _("time"));
	else if (e->exit_code >= 0)
		snprintf(code, sizeof(code), "%d", e->exit_code);
	printf("%s.%03lld  %-9s  %-9s  %4s  %8s  ", when, e->time_ms % 1000, sb_timeline_source_name(e->source),
	       sb_timeline_kind_name(e->kind), code, dur);
	if (e->session) {
		printf("[");
		put_text(e->session);
		printf("] ");
	}
	put_text(e->text);
	if (e->detail) {
		fputs(e->text ? ": " : "", stdout);
		put_text(e->detail);
	}
	putchar('\n');
}

static int print_entries(const struct sb_timeline *t, int json)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct sb_timeline_entry *e = &t->entries[i];
		if (!json) {
			print_line(e);
			continue;
		}
		json_t *doc = sb_json_set(sb_timeline_entry_to_json(e), "pos", json_integer((json_int_t)e->pos));
		char *text = doc ? sb_json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(doc);
		if (!text) {
			struct sb_error err;
			sb_error_set(&err, SB_ERR_NOMEM, _("out of memory"));
			return sb_cli_fail(&err);
		}
		puts(text);
		free(text);
	}
	(void)fflush(stdout);
	return SB_EXIT_OK;
}

struct view {
	struct sb_root *root;
	const char *name;
	struct sb_timeline_query q;
	int json;
	int headed;              /* the table's header is out */
};

/* One read from where the last one ended. */
static int show(struct view *v)
{
	struct sb_timeline *t;
	struct sb_error err;

	/* connections the egress policy dropped are collected on reading (no daemon) */
	sb_sandbox_egress_collect(NULL, v->root, v->name, NULL);
	/* and so are the service supervisor's events */
	sb_sandbox_service_collect(NULL, v->root, v->name, NULL);
	if (sb_timeline_read(&t, v->root, v->name, &v->q, &err) < 0)
		return sb_cli_fail(&err);
	if (!v->json && !v->headed++)
		print_header();
	int rc = print_entries(t, v->json);
	v->q.from = t->next;
	sb_timeline_free(t);
	return rc;
}

/* Prints what comes until the sandbox is removed (then exits 0) or this
 * process is interrupted. The watch is opened before the first read, so
 * nothing appended in between is missed. */
static int follow(struct view *v)
{
	struct sb_timeline_watch *w;
	struct sb_error err;
	int rc;

	if (sb_timeline_watch_open(&w, v->root, v->name, &err) < 0)
		return sb_cli_fail(&err);
	rc = show(v);
	while (rc == SB_EXIT_OK) {
		struct pollfd p = { .fd = sb_timeline_watch_fd(w), .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			sb_error_errno(&err, SB_ERR_IO, errno, _("cannot follow the timeline of sandbox '%s'"), v->name);
			rc = sb_cli_fail(&err);
			break;
		}
		int moved = sb_timeline_watch_check(w, &err);
		if (moved == SB_ERR_NOTFOUND) {
			fprintf(stderr, _("sandbench: sandbox '%s' was removed: its timeline ends\n"), v->name);
			break;
		}
		if (moved < 0)
			rc = sb_cli_fail(&err);
		else if (moved)
			rc = show(v);
	}
	sb_timeline_watch_close(w);
	return rc;
}

static int timeline_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct view v = { 0 };
	struct sb_error err;
	int opt, rc, follow_on = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "f", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			follow_on = 1;
			break;
		case 's':
			if (sb_timeline_parse_since(&v.q.since_ms, optarg, sb_clock_now_ms(), &err) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_timeline, "%s", err.msg);
			break;
		case 'j':
			v.json = 1;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_timeline, _("invalid option"));
		}
	}
	if (optind != argc - 1)
		return sb_cli_usage_error(NULL, &sb_cmd_timeline, _("expected one sandbox name"));
	if ((rc = sb_cli_root(&v.root, cli)) != 0)
		return rc;
	v.name = argv[optind];
	return follow_on ? follow(&v) : show(&v);
}

const struct sb_cli_command sb_cmd_timeline = {
	.name = "timeline",
	.synopsis = "NAME [--follow] [--since T] [--json]",
	.summary = N_("what ran in a sandbox, and who ran it"),
	.help = N_("  -f, --follow   keep printing new entries until interrupted or the sandbox is removed\n"
		   "  --since T      entries from T on: a duration ago (10m, 2h), a local time\n"
		   "                 (2026-12-01T10:00:00, Z at the end for UTC) or unix seconds\n"
		   "  --json         one JSON object per entry and line (docs/timeline.md)\n"),
	.run = timeline_run,
};
