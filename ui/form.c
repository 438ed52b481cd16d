/* The create form: name, image (from the Images list), temporary with an idle
 * timeout or permanent, network, exchange folder, host mounts, memory. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "draw.h"
#include "base/i18n.h"
#include "sandbox/settings.h"
#include "ui.h"
#include "base/units.h"

enum field { F_NAME, F_IMAGE, F_KIND, F_IDLE, F_NETWORK, F_EXCHANGE, F_MOUNTS, F_MEMORY, F_COUNT };

static const struct {
	const char *label;           /* N_() */
	const char *hint;            /* N_() */
	int choice;                  /* toggled with Left/Right/Space instead of typed */
} fields[F_COUNT] = {
	[F_NAME] = { N_("Name"), N_("letters, digits, . _ -"), 0 },
	[F_IMAGE] = { N_("Image"), N_("Left/Right: the Images list, or type a reference"), 0 },
	[F_KIND] = { N_("Kind"), N_("temporary expires when idle; permanent keeps its workspace"), 1 },
	[F_IDLE] = { N_("Idle timeout"), N_("e.g. 30m, 2h; empty: the configured default"), 0 },
	[F_NETWORK] = { N_("Network"), N_("off: only loopback inside"), 1 },
	[F_EXCHANGE] = { N_("Exchange"), N_("the shared exchange folder at /exchange"), 1 },
	[F_MOUNTS] = { N_("Host mounts"), N_("HOST:PATH[:ro|rw], comma separated; ro by default"), 0 },
	[F_MEMORY] = { N_("Memory"), N_("e.g. 512m, 2g; empty: the configured default"), 0 },
};

struct form {
	enum field focus;
	char text[F_COUNT][512];
	int kind_permanent, network, exchange;
	size_t image_index;
	char error[1100];
};

void ui_form_open(struct ui_app *app)
{
	struct form *f = calloc(1, sizeof(*f));
	const char *image;

	if (!f)
		return;
	f->exchange = 1;
	image = ui_images_ref(app, app->views[UI_PANE_IMAGES].selected);
	if (!image)
		image = ui_images_ref(app, 0);
	snprintf(f->text[F_IMAGE], sizeof(f->text[F_IMAGE]), "%s", image ? image : "");
	app->overlay_state = f;
	app->overlay = UI_OV_FORM;
	app->dirty = 1;
}

void ui_form_close(struct ui_app *app)
{
	if (app->overlay == UI_OV_FORM)
		ui_overlay_close(app);
}

static const char *value(const struct form *f, enum field i)
{
	switch (i) {
	case F_KIND:
		return f->kind_permanent ? _("permanent") : _("temporary");
	case F_NETWORK:
		return f->network ? _("on") : _("off");
	case F_EXCHANGE:
		return f->exchange ? _("on") : _("off");
	default:
		return f->text[i];
	}
}

void ui_form_draw(struct ui_app *app)
{
	struct form *f = app->overlay_state;
	struct ui_rect r = ui_layout_dialog(&app->layout, F_COUNT + 7, 76);
	WINDOW *w = app->w_overlay;
	int lw = 14, y = 1;

	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	ui_draw_box(w, _("Create a sandbox"));
	for (int i = 0; i < F_COUNT; i++, y++) {
		int focused = f->focus == (enum field)i;
		int dim = i == F_IDLE && f->kind_permanent;
		ui_draw_text(w, y, 2, lw, _(fields[i].label), ui_theme_attr(focused ? UI_ROLE_KEY : UI_ROLE_DIALOG), UI_LEFT);
		char shown[600];
		snprintf(shown, sizeof(shown), fields[i].choice ? "< %s >" : "%s", dim ? _("(never expires)") : value(f, i));
		ui_draw_text(w, y, 2 + lw + 1, r.w - lw - 5, shown,
			     ui_theme_attr(focused ? UI_ROLE_FIELD : dim ? UI_ROLE_DIM : UI_ROLE_DIALOG), UI_LEFT);
		if (i == F_MOUNTS && strstr(f->text[F_MOUNTS], ":rw"))
			ui_draw_put(w, y, r.w - 12, 10, _(" rw! "), ui_theme_attr(UI_ROLE_WARN));
	}
	y++;
	ui_draw_put(w, y++, 2, r.w - 4, _(fields[f->focus].hint), ui_theme_attr(UI_ROLE_DIM));
	if (f->error[0])
		ui_draw_put(w, y, 2, r.w - 4, f->error, ui_theme_attr(UI_ROLE_ERROR));
	ui_draw_put(w, r.h - 2, 2, r.w - 4, _("Enter: create   Tab/Up/Down: field   Esc: cancel"), ui_theme_attr(UI_ROLE_KEY));
	if (!fields[f->focus].choice) {
		int x = 2 + lw + 1 + ui_text_width(value(f, f->focus));
		if (x < r.w - 2) {
			wmove(w, 1 + (int)f->focus, x);
			curs_set(1);
		}
	}
}

/* "HOST:PATH[:ro|rw], ..." into mounts, which point into text (cut up in
 * place): the count, or -1 with the error set. */
static int parse_mounts(struct form *f, char *text, struct sb_sandbox_mount *out, size_t max)
{
	struct sb_error err;
	char *save = NULL;
	size_t n = 0;

	for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		item += strspn(item, " ");
		for (char *end = item + strlen(item); end > item && end[-1] == ' '; end--)
			end[-1] = '\0';
		if (!*item)
			continue;
		if (n == max) {
			snprintf(f->error, sizeof(f->error), _("at most %zu host mounts"), max);
			return -1;
		}
		if (sb_sandbox_mount_parse(&out[n++], item, &err) < 0) {
			snprintf(f->error, sizeof(f->error), "%s", err.msg);
			return -1;
		}
	}
	return (int)n;
}

static void submit(struct ui_app *app, struct form *f)
{
	struct sb_sandbox_spec spec = { 0 };
	struct sb_sandbox_mount mounts[16] = { 0 };
	char mount_text[sizeof(f->text[F_MOUNTS])];
	struct sb_error err;
	int n;

	f->error[0] = '\0';
	if (sb_sandbox_name_check(f->text[F_NAME], &err) < 0) {
		snprintf(f->error, sizeof(f->error), "%s", err.msg);
		f->focus = F_NAME;
		return;
	}
	if (ui_app_find_sandbox(app, f->text[F_NAME])) {
		snprintf(f->error, sizeof(f->error), _("a sandbox named '%s' exists already"), f->text[F_NAME]);
		f->focus = F_NAME;
		return;
	}
	if (!f->text[F_IMAGE][0]) {
		snprintf(f->error, sizeof(f->error), "%s", _("choose an image (Left/Right) or type a reference"));
		f->focus = F_IMAGE;
		return;
	}
	spec.name = f->text[F_NAME];
	spec.image = f->text[F_IMAGE];
	spec.kind = f->kind_permanent ? SB_KIND_PERMANENT : SB_KIND_TEMPORARY;
	if (!f->kind_permanent && f->text[F_IDLE][0] && (spec.idle_timeout = sb_units_parse_duration(f->text[F_IDLE])) <= 0) {
		snprintf(f->error, sizeof(f->error), _("idle timeout '%s': use e.g. 30m or 2h"), f->text[F_IDLE]);
		f->focus = F_IDLE;
		return;
	}
	if (f->text[F_MEMORY][0]) {
		long long m = sb_units_parse_size(f->text[F_MEMORY]);
		if (m <= 0) {
			snprintf(f->error, sizeof(f->error), _("memory '%s': use e.g. 512m or 2g"), f->text[F_MEMORY]);
			f->focus = F_MEMORY;
			return;
		}
		spec.memory = (unsigned long long)m;
	}
	spec.network = f->network;
	spec.no_exchange = !f->exchange;
	snprintf(mount_text, sizeof(mount_text), "%s", f->text[F_MOUNTS]);
	if ((n = parse_mounts(f, mount_text, mounts, sizeof(mounts) / sizeof(mounts[0]))) < 0) {
		f->focus = F_MOUNTS;
		return;
	}
	spec.mounts = mounts;
	spec.n_mounts = (size_t)n;
	ui_action_create(app, &spec);
	ui_form_close(app);
}

static void toggle(struct ui_app *app, struct form *f, int dir)
{
	switch (f->focus) {
	case F_KIND:
		f->kind_permanent = !f->kind_permanent;
		break;
	case F_NETWORK:
		f->network = !f->network;
		break;
	case F_EXCHANGE:
		f->exchange = !f->exchange;
		break;
	case F_IMAGE: {
		size_t n = ui_images_count(app);
		if (!n)
			break;
		f->image_index = (f->image_index + n + (size_t)(dir < 0 ? -1 : 1)) % n;
		snprintf(f->text[F_IMAGE], sizeof(f->text[F_IMAGE]), "%s", ui_images_ref(app, f->image_index));
		break;
	}
	default:
		break;
	}
}

void ui_form_key(struct ui_app *app, int key)
{
	struct form *f = app->overlay_state;

	app->dirty = 1;
	if (key == 27) {
		ui_form_close(app);
	} else if (key == '\n' || key == '\r' || key == UI_KEY_FN + KEY_ENTER) {
		submit(app, f);
	} else if (key == '\t' || key == UI_KEY_FN + KEY_DOWN) {
		f->focus = (f->focus + 1) % F_COUNT;
	} else if (key == UI_KEY_FN + KEY_BTAB || key == UI_KEY_FN + KEY_UP) {
		f->focus = (f->focus + F_COUNT - 1) % F_COUNT;
	} else if (key == UI_KEY_FN + KEY_LEFT || key == UI_KEY_FN + KEY_RIGHT ||
		   (fields[f->focus].choice && key == ' ')) {
		toggle(app, f, key == UI_KEY_FN + KEY_LEFT ? -1 : 1);
	} else if (fields[f->focus].choice) {
		return;
	} else {
		ui_line_edit(f->text[f->focus], sizeof(f->text[0]), key);
	}
}
