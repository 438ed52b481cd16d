/* The details pane: the record of the selected row of the focused list pane. */
#include "config.h"

#include <stdio.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

struct details_ctx {
	WINDOW *w;
	int y, x, width, label_w;   /* width: of one column */
};

/* Lines fill the pane top to bottom, then a second column when it is wide. */
static void put_line(void *user, const char *label, const char *value, int warn)
{
	struct details_ctx *c = user;

	if (c->y >= getmaxy(c->w) && c->x == 0 && getmaxx(c->w) >= 2 * c->width) {
		c->x = c->width;
		c->y = 1;
	}
	if (c->y >= getmaxy(c->w))
		return;
	ui_draw_text(c->w, c->y, c->x + 1, c->label_w, label, ui_theme_attr(UI_ROLE_DIM), UI_LEFT);
	ui_draw_put(c->w, c->y, c->x + c->label_w + 2, c->width - c->label_w - 3, value,
		    ui_theme_attr(warn ? UI_ROLE_WARN : UI_ROLE_NORMAL));
	c->y++;
}

void ui_details_draw(struct ui_app *app, WINDOW *w)
{
	const struct ui_pane *p = ui_panes[app->pane];
	int width = getmaxx(w);
	struct details_ctx c = { .w = w, .y = 1, .width = width >= 100 ? width / 2 : width, .label_w = 13 };
	char title[128];

	werase(w);
	snprintf(title, sizeof(title), " %s ", _("Details"));
	ui_draw_header(w, title, 0);
	if (p->rows(app) == 0)
		return;
	p->details(app, app->views[app->pane].selected, put_line, &c);
}
