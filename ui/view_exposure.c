/* The exposure view: per sandbox or per owner, what reaches out and what is
 * reached (sb_exposure_list), rows that widen access beyond the defaults
 * marked '!' and bold; sorted with the sort key, filtered with a query
 * (query.h) on name, owner, state, net, warn and mount. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "draw.h"
#include "query.h"
#include "sandbox/cleanup.h"
#include "theme.h"
#include "ui.h"

enum { SORT_NAME, SORT_OWNER, SORT_WARN, SORT_DENIED, SORT_COUNT };

static const struct {
	unsigned bit;
	const char *name;
} warn_names[] = {
	{ SB_EXPOSE_NETWORK, "network" }, { SB_EXPOSE_OPEN_EGRESS, "open-egress" },
	{ SB_EXPOSE_PUBLISHED, "published" }, { SB_EXPOSE_RW_MOUNT, "rw-mount" },
	{ SB_EXPOSE_SENSITIVE, "sensitive" },
};

static struct {
	struct sb_exposure *list;    /* per sandbox, as listed */
	size_t n;
	struct sb_exposure *owners;  /* per owner: the union of its sandboxes */
	size_t n_owners;
	size_t *order, n_order, selected, top;
	int by_owner, sort;
	char query_text[128];
	struct ui_query *query;
} xv;

static const char *net_word(const struct sb_exposure *x)
{
	if (!x->network)
		return "off";
	if (!strncmp(x->egress, "deny", 4))
		return "deny-all";
	return strncmp(x->egress, "allow", 5) ? "on" : "allow";
}

static size_t values(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct sb_exposure *x = row;
	size_t n = 0;

	if (!field || !strcmp(field, "name"))
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", x->name);
	if ((!field || !strcmp(field, "owner")) && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", x->owner);
	if (field && !strcmp(field, "state") && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", x->state ? x->state : "");
	if (field && !strcmp(field, "net") && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", net_word(x));
	if (field && !strcmp(field, "mount") && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", x->rw_mounts ? x->rw_mounts : "");
	for (size_t i = 0; (!field || !strcmp(field, "warn")) && i < sizeof(warn_names) / sizeof(warn_names[0]); i++)
		if ((x->warn & warn_names[i].bit) && n < max)
			snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", warn_names[i].name);
	return n;
}

static const char *const field_names[] = { "name", "owner", "state", "net", "warn", "mount", NULL };
static const struct ui_query_fields fields = { field_names, NULL, values };

static int compare(const struct sb_exposure *a, const struct sb_exposure *b)
{
	switch (xv.sort) {
	case SORT_OWNER:
		return strcmp(a->owner, b->owner) ? strcmp(a->owner, b->owner) : strcmp(a->name, b->name);
	case SORT_WARN:
		return __builtin_popcount(b->warn) - __builtin_popcount(a->warn) ? __builtin_popcount(b->warn) -
			__builtin_popcount(a->warn) : strcmp(a->name, b->name);
	case SORT_DENIED:
		return a->denied != b->denied ? (a->denied < b->denied) - (a->denied > b->denied) : strcmp(a->name, b->name);
	default:
		return strcmp(a->name, b->name);
	}
}

static struct sb_exposure *rows(size_t *n)
{
	*n = xv.by_owner ? xv.n_owners : xv.n;
	return xv.by_owner ? xv.owners : xv.list;
}

static int cmp_index(const void *pa, const void *pb)
{
	size_t n;
	struct sb_exposure *r = rows(&n);
	return compare(&r[*(const size_t *)pa], &r[*(const size_t *)pb]);
}

static void rebuild(void)
{
	size_t n;
	struct sb_exposure *r = rows(&n);

	free(xv.order);
	xv.n_order = 0;
	if (!(xv.order = calloc(n + 1, sizeof(*xv.order))))
		return;
	for (size_t i = 0; i < n; i++)
		if (!xv.query || ui_query_match(xv.query, &r[i]))
			xv.order[xv.n_order++] = i;
	qsort(xv.order, xv.n_order, sizeof(*xv.order), cmp_index);
	if (xv.selected >= xv.n_order)
		xv.selected = xv.n_order ? xv.n_order - 1 : 0;
}

/* One row per owner ("" is the sandboxes without one): the union of the flags. */
static void group_owners(void)
{
	free(xv.owners);
	xv.n_owners = 0;
	if (!(xv.owners = calloc(xv.n + 1, sizeof(*xv.owners))))
		return;
	for (size_t i = 0; i < xv.n; i++) {
		const struct sb_exposure *s = &xv.list[i];
		struct sb_exposure *o = NULL;
		for (size_t j = 0; j < xv.n_owners && !o; j++)
			if (!strcmp(xv.owners[j].owner, s->owner))
				o = &xv.owners[j];
		if (!o) {
			o = &xv.owners[xv.n_owners++];
			snprintf(o->owner, sizeof(o->owner), "%s", s->owner);
			snprintf(o->name, sizeof(o->name), "%.63s", s->owner[0] ? s->owner : _("(no owner)"));
			o->state = "";
		}
		o->network += s->network;
		o->n_rw += s->n_rw;
		o->n_ro += s->n_ro;
		o->n_sensitive += s->n_sensitive;
		o->exchange += s->exchange;
		o->denied += s->denied;
		o->warn |= s->warn;
	}
}

static void reload(struct ui_app *app)
{
	struct sb_error err;

	sb_exposure_list_free(xv.list, xv.n);
	xv.list = NULL;
	xv.n = 0;
	if (sb_exposure_list(&xv.list, &xv.n, app->root, &err) < 0)
		ui_app_message(app, 1, _("exposure: %s"), err.msg);
	group_owners();
	rebuild();
}

void ui_exposure_open(struct ui_app *app)
{
	if (app->overlay != UI_OV_NONE)
		return;
	reload(app);
	app->overlay = UI_OV_EXPOSURE;
	app->overlay_state = NULL;
	app->dirty = 1;
}

static void draw_row(WINDOW *w, int y, int width, const struct sb_exposure *x, int selected)
{
	char line[512], pub[16];
	attr_t a = selected ? ui_theme_attr(UI_ROLE_SELECTED) : ui_theme_attr(x->warn ? UI_ROLE_WARN : UI_ROLE_DIALOG);

	if (x->warn)
		a |= A_BOLD;
	if (xv.by_owner)
		snprintf(pub, sizeof(pub), "%d", x->network);
	else
		snprintf(pub, sizeof(pub), "%.15s", x->published && *x->published ? x->published : "-");
	snprintf(line, sizeof(line), "%s %-16.16s %-14.14s %-8s %-15s %3zu %4zu %4s %6llu", x->warn ? "!" : " ", x->name,
		 xv.by_owner ? "" : x->owner, xv.by_owner ? "" : net_word(x), pub, x->n_rw, x->n_sensitive,
		 x->exchange ? _("yes") : _("no"), x->denied);
	ui_draw_text(w, y, 1, width, line, a, UI_LEFT);
}

static void detail(WINDOW *w, int y, int width, const struct sb_exposure *x)
{
	char line[1024], warns[160] = "";

	for (size_t i = 0; i < sizeof(warn_names) / sizeof(warn_names[0]); i++)
		if (x->warn & warn_names[i].bit)
			snprintf(warns + strlen(warns), sizeof(warns) - strlen(warns), " %s", warn_names[i].name);
	snprintf(line, sizeof(line), _("widens:%s"), warns[0] ? warns : _(" nothing (the defaults)"));
	ui_draw_text(w, y, 2, width, line, ui_theme_attr(UI_ROLE_DIALOG), UI_LEFT);
	if (xv.by_owner)
		return;
	snprintf(line, sizeof(line), _("egress: %s  rw: %s"), x->network ? x->egress : _("none (network off)"),
		 x->rw_mounts && *x->rw_mounts ? x->rw_mounts : "-");
	ui_draw_text(w, y + 1, 2, width, line, ui_theme_attr(UI_ROLE_DIALOG), UI_LEFT);
}

void ui_exposure_draw(struct ui_app *app)
{
	static const char *const sorts[] = { N_("name"), N_("owner"), N_("warnings"), N_("denied") };
	struct ui_rect rc = ui_layout_dialog(&app->layout, app->layout.rows - 2, app->layout.cols - 2);
	WINDOW *w = app->w_overlay;
	int body = rc.h - 6;
	char title[256];
	size_t n;
	struct sb_exposure *r = rows(&n);

	wresize(w, rc.h, rc.w);
	mvwin(w, rc.y, rc.x);
	snprintf(title, sizeof(title), _("Exposure %s, sorted by %s%s%s"), xv.by_owner ? _("per owner") : _("per sandbox"),
		 _(sorts[xv.sort]), xv.query_text[0] ? " /" : "", xv.query_text);
	ui_draw_box(w, title);
	snprintf(title, sizeof(title), "  %-16s %-14s %-8s %-15s %3s %4s %4s %6s", xv.by_owner ? _("OWNER") : _("NAME"),
		 xv.by_owner ? "" : _("OWNER"), xv.by_owner ? "" : _("NET"), xv.by_owner ? _("NET ON") : _("PUBLISHED"),
		 _("RW"), _("SENS"), _("EXCH"), _("DENIED"));
	ui_draw_text(w, 1, 1, rc.w - 2, title, ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	if (xv.selected < xv.top)
		xv.top = xv.selected;
	if (body > 0 && xv.selected >= xv.top + (size_t)body)
		xv.top = xv.selected - (size_t)body + 1;
	for (int y = 0; y < body && xv.top + (size_t)y < xv.n_order; y++)
		draw_row(w, 2 + y, rc.w - 2, &r[xv.order[xv.top + (size_t)y]], xv.top + (size_t)y == xv.selected);
	if (xv.selected < xv.n_order)
		detail(w, rc.h - 4, rc.w - 4, &r[xv.order[xv.selected]]);
	ui_draw_put(w, rc.h - 2, 2, rc.w - 4, _("o: sort  /: filter  w: per owner/sandbox  C-r: refresh  q: close"),
		    ui_theme_attr(UI_ROLE_KEY));
	(void)n;
}

static void filter_set(struct ui_app *app, const char *text)
{
	app->overlay = UI_OV_EXPOSURE;
	if (ui_filter_replace(app, &fields, &xv.query, xv.query_text, sizeof(xv.query_text), text) == 0)
		rebuild();
}

void ui_exposure_key(struct ui_app *app, int key)
{
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);

	app->dirty = 1;
	if (key == 27 || key == 'q') {
		app->overlay = UI_OV_NONE;
		return;
	}
	if (key == 'w') {
		xv.by_owner = !xv.by_owner;
		xv.selected = xv.top = 0;
		rebuild();
		return;
	}
	switch (a) {
	case UI_ACT_UP:
		xv.selected -= xv.selected > 0;
		break;
	case UI_ACT_DOWN:
		xv.selected += xv.selected + 1 < xv.n_order;
		break;
	case UI_ACT_SORT:
		xv.sort = (xv.sort + 1) % SORT_COUNT;
		rebuild();
		break;
	case UI_ACT_FILTER:
		app->overlay = UI_OV_NONE;
		ui_prompt_open(app, _("filter (name owner state net warn mount):"), xv.query_text, filter_set);
		break;
	case UI_ACT_REFRESH:
		reload(app);
		break;
	default:
		break;
	}
}

void ui_exposure_free(void)
{
	sb_exposure_list_free(xv.list, xv.n);
	free(xv.owners);
	free(xv.order);
	ui_query_free(xv.query);
	memset(&xv, 0, sizeof(xv));
}
