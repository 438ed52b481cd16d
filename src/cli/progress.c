#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "base/i18n.h"
#include "progress.h"
#include "base/units.h"

static const char *const phase_names[] = {
	[SB_PROGRESS_RESOLVE] = N_("resolving"),
	[SB_PROGRESS_DOWNLOAD] = N_("downloading"),
	[SB_PROGRESS_VERIFY] = N_("verifying"),
	[SB_PROGRESS_UNPACK] = N_("unpacking"),
	[SB_PROGRESS_DONE] = N_("done"),
	[SB_PROGRESS_UPLOAD] = N_("uploading"),
};

/* Redraws at most this often: a terminal is slow next to a fast unpack. */
#define REDRAW_NS 100000000LL

static long long elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

/* Digests are long: the first 12 hex digits identify a blob on screen. */
static void short_item(char *buf, size_t size, const char *item)
{
	if (!strncmp(item, "sha256:", 7))
		snprintf(buf, size, "%.12s", item + 7);
	else
		snprintf(buf, size, "%s", item);
}

static void draw(struct sb_cli_progress *p, const struct sb_progress_event *ev, const struct timespec *now)
{
	char line[512], item[64], done[32], total[32], rate[32] = "";
	long long ns = elapsed_ns(&p->item_start, now);
	int n, width = term_width();

	short_item(item, sizeof(item), ev->item ? ev->item : "");
	n = snprintf(line, sizeof(line), "%s", _(phase_names[ev->phase]));
	if (ev->layers > 0)
		n += snprintf(line + n, sizeof(line) - (size_t)n, _(" layer %d/%d"), ev->layer, ev->layers);
	if (item[0])
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s", item);
	if (ev->done || ev->total) {
		sb_units_format_size(done, sizeof(done), ev->done, SB_UNITS_TEXT);
		if (ev->total) {
			sb_units_format_size(total, sizeof(total), ev->total, SB_UNITS_TEXT);
			n += snprintf(line + n, sizeof(line) - (size_t)n, "  %s / %s", done, total);
		} else {
			n += snprintf(line + n, sizeof(line) - (size_t)n, "  %s", done);
		}
		if (ns > 200000000LL) {
			sb_units_format_size(rate, sizeof(rate), (unsigned long long)((double)ev->done * 1e9 / (double)ns), SB_UNITS_TEXT);
			snprintf(line + n, sizeof(line) - (size_t)n, "  %s/s", rate);
		}
	}
	/* never wrap: a wrapped line cannot be redrawn in place */
	fprintf(stderr, "\r\033[K%.*s", width - 1, line);
	(void)fflush(stderr);
	p->drawn = 1;
	p->last_draw = *now;
}

static void on_event(void *user, const struct sb_progress_event *ev)
{
	struct sb_cli_progress *p = user;
	const char *item = ev->item ? ev->item : "";
	struct timespec now;
	int changed;

	if ((unsigned)ev->phase >= sizeof(phase_names) / sizeof(phase_names[0]))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	changed = (int)ev->phase != p->phase || strncmp(p->item, item, sizeof(p->item) - 1) != 0;
	if (changed) {
		p->phase = (int)ev->phase;
		snprintf(p->item, sizeof(p->item), "%s", item);
		p->item_start = now;
	}
	if (!changed && elapsed_ns(&p->last_draw, &now) < REDRAW_NS && ev->done != ev->total)
		return;
	draw(p, ev, &now);
}

void sb_cli_progress_init(struct sb_cli_progress *p, int quiet)
{
	memset(p, 0, sizeof(*p));
	p->phase = -1;
	p->enabled = !quiet && isatty(STDERR_FILENO);
	if (p->enabled) {
		p->base.fn = on_event;
		p->base.user = p;
	}
}

void sb_cli_progress_end(struct sb_cli_progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		(void)fflush(stderr);
	}
	p->drawn = 0;
}
