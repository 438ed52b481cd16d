/* The lifecycle event log: what happened to which sandbox and why (from the
 * records' reasons, the workbench's own actions and the reaper). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

#define EVENTS_MAX 200

struct ui_event {
	char time[16];
	int error;
	char text[300];
};

static struct ui_event events[EVENTS_MAX];
static size_t n_events, first;

void ui_event_add(struct ui_app *app, int error, const char *fmt, ...)
{
	struct ui_event *e;
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;

	if (n_events == EVENTS_MAX) {
		first = (first + 1) % EVENTS_MAX;
		n_events--;
	}
	e = &events[(first + n_events++) % EVENTS_MAX];
	localtime_r(&t, &tm);
	if (strftime(e->time, sizeof(e->time), "%H:%M:%S", &tm) == 0)
		e->time[0] = '\0';
	e->error = error;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	if (app)
		app->dirty = 1;
}

static const char *reason_of(const struct sb_sandbox_info *i)
{
	return i->rec.reason && *i->rec.reason ? i->rec.reason : _("no reason recorded");
}

/* Both listings are sorted by name (sb_sandbox_list): one merge walk. */
void ui_event_diff(struct ui_app *app, const struct sb_sandbox_info *old, size_t n_old,
		   const struct sb_sandbox_info *cur, size_t n_cur)
{
	size_t i = 0, j = 0;

	while (i < n_old || j < n_cur) {
		int c = i == n_old ? 1 : j == n_cur ? -1 : strcmp(old[i].rec.name, cur[j].rec.name);
		if (c < 0) {
			ui_event_add(app, 0, _("%s: removed"), old[i++].rec.name);
		} else if (c > 0) {
			ui_event_add(app, cur[j].rec.state == SB_STATE_BROKEN, _("%s: appeared, %s (%s)"), cur[j].rec.name,
				     sb_sandbox_state_name(cur[j].rec.state), reason_of(&cur[j]));
			j++;
		} else {
			if (old[i].rec.state != cur[j].rec.state || old[i].rec.state_changed != cur[j].rec.state_changed)
				ui_event_add(app, cur[j].rec.state == SB_STATE_BROKEN, _("%s: %s -> %s (%s)"),
					     cur[j].rec.name, sb_sandbox_state_name(old[i].rec.state),
					     sb_sandbox_state_name(cur[j].rec.state), reason_of(&cur[j]));
			i++;
			j++;
		}
	}
}

void ui_eventlog_draw(struct ui_app *app, WINDOW *w)
{
	int h = getmaxy(w), width = getmaxx(w);
	char title[128];
	size_t show = (size_t)(h - 1) < n_events ? (size_t)(h - 1) : n_events;

	(void)app;
	werase(w);
	snprintf(title, sizeof(title), " %s ", _("Events"));
	ui_draw_header(w, title, 0);
	/* newest at the bottom, like a log */
	for (size_t i = 0; i < show; i++) {
		const struct ui_event *e = &events[(first + n_events - show + i) % EVENTS_MAX];
		int y = 1 + (int)i, x;
		x = ui_draw_put(w, y, 0, width, e->time, ui_theme_attr(UI_ROLE_DIM));
		ui_draw_put(w, y, x + 1, width - x - 1, e->text, ui_theme_attr(e->error ? UI_ROLE_BROKEN : UI_ROLE_NORMAL));
	}
}

void ui_eventlog_free(void)
{
	n_events = first = 0;
}
