/* The filter line: a query (query.h) on the focused pane, applied live while
 * it is typed; a query that does not parse leaves the one in force and says
 * why. Up and Down walk the queries given before (one history for all panes). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "query.h"
#include "theme.h"
#include "ui.h"

int ui_filter_match(const struct ui_app *app, enum ui_pane_id pane, const void *row)
{
	return ui_query_match(app->filters[pane].query, row);
}

int ui_filter_replace(struct ui_app *app, const struct ui_query_fields *fields, struct ui_query **query, char *text,
		      size_t size, const char *new_text)
{
	struct ui_query *q;
	char why[160];

	if (ui_query_parse(&q, new_text, fields, why, sizeof(why)) < 0) {
		ui_app_message(app, 1, _("filter refused, '%s' stays: %s"), text, why);
		return -1;
	}
	ui_query_free(*query);
	*query = q;
	snprintf(text, size, "%s", new_text);
	return 0;
}

int ui_filter_set(struct ui_app *app, enum ui_pane_id pane, const char *text)
{
	struct ui_pane_filter *f = &app->filters[pane];
	struct ui_query *q;
	char why[160];

	if (!ui_panes[pane]->fields)
		return -1;
	if (ui_query_parse(&q, text, ui_panes[pane]->fields, why, sizeof(why)) < 0) {
		snprintf(app->filter_error, sizeof(app->filter_error), "%s", why);
		ui_app_message(app, 1, _("filter refused, '%s' stays: %s"), f->text, why);
		return -1;
	}
	ui_query_free(f->query);
	f->query = q;
	app->filter_error[0] = '\0';
	snprintf(f->text, sizeof(f->text), "%s", text);
	app->views[pane].selected = 0;
	app->views[pane].top = 0;
	ui_panes[pane]->refilter(app);
	app->dirty = 1;
	return 0;
}

void ui_filter_open(struct ui_app *app)
{
	app->filter_pane = app->pane;
	snprintf(app->filter_edit, sizeof(app->filter_edit), "%s", app->filters[app->pane].text);
	snprintf(app->filter_before, sizeof(app->filter_before), "%s", app->filters[app->pane].text);
	app->filter_error[0] = '\0';
	app->filter_hist.pos = app->filter_hist.n;
	app->overlay = UI_OV_FILTER;
	app->dirty = 1;
}

void ui_filter_key(struct ui_app *app, int key)
{
	app->dirty = 1;
	if (key == 27) {                       /* Esc: clear and close */
		app->overlay = UI_OV_NONE;
		ui_filter_set(app, app->filter_pane, "");
		return;
	}
	if (key == '\n' || key == '\r' || key == UI_KEY_FN + KEY_ENTER) {
		app->overlay = UI_OV_NONE;
		/* from the filter in force when the line opened (what was typed on
		 * the way filtered live): a refused query leaves that one */
		ui_filter_set(app, app->filter_pane, app->filter_before);
		if (ui_filter_set(app, app->filter_pane, app->filter_edit) == 0)
			ui_history_add(&app->filter_hist, app->filter_edit);
		return;
	}
	if (!ui_history_key(&app->filter_hist, key, app->filter_edit, sizeof(app->filter_edit)) &&
	    !ui_line_edit(app->filter_edit, sizeof(app->filter_edit), key))
		return;
	/* live, but quietly: a query half typed is often not one yet */
	struct ui_query *q;
	char why[160];
	if (ui_query_parse(&q, app->filter_edit, ui_panes[app->filter_pane]->fields, why, sizeof(why)) < 0) {
		snprintf(app->filter_error, sizeof(app->filter_error), "%s", why);
		return;
	}
	ui_query_free(q);
	ui_filter_set(app, app->filter_pane, app->filter_edit);
}

void ui_filter_draw(struct ui_app *app, WINDOW *w)
{
	char buf[512];

	if (app->filter_error[0])
		snprintf(buf, sizeof(buf), "/%s   %s", app->filter_edit, app->filter_error);
	else
		snprintf(buf, sizeof(buf), _("/%s   (Enter keeps the filter, Esc clears it, Up/Down: history)"),
			 app->filter_edit);
	ui_draw_text(w, 0, 0, getmaxx(w), buf, ui_theme_attr(app->filter_error[0] ? UI_ROLE_ERROR : UI_ROLE_KEY),
		     UI_LEFT);
}

void ui_filter_free(struct ui_app *app)
{
	for (int p = 0; p < UI_PANE_COUNT; p++) {
		ui_query_free(app->filters[p].query);
		app->filters[p].query = NULL;
	}
	ui_history_free(&app->filter_hist);
}
