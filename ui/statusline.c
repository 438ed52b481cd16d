/* The bottom line: a message (errors stay until replaced), the progress of
 * running operations, or the key hints of the focused pane or shell. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "ui.h"

static int hint(WINDOW *w, int x, int width, const struct ui_app *app, enum ui_action a)
{
	char keys[64], buf[160];
	const struct ui_action_info *info = ui_action_info(a);

	ui_keymap_describe(&app->keys, a, keys, sizeof(keys));
	if (!info || !keys[0])
		return x;
	/* the first key is enough in a hint */
	char *comma = strchr(keys, ',');
	if (comma)
		*comma = '\0';
	if (x + ui_text_width(keys) + 2 >= width)
		return width;
	x = ui_draw_put(w, 0, x, width - x, keys, ui_theme_attr(UI_ROLE_KEY));
	snprintf(buf, sizeof(buf), " %s  ", _(info->name));
	return ui_draw_put(w, 0, x, width - x, buf, ui_theme_attr(UI_ROLE_STATUS));
}

void ui_statusline_draw(struct ui_app *app, WINDOW *w)
{
	static const enum ui_action shell_hints[] = { UI_ACT_PREFIX, UI_ACT_SCROLL_UP, UI_ACT_NONE };
	static const enum ui_action global_hints[] = { UI_ACT_HELP, UI_ACT_QUIT, UI_ACT_NONE };
	static const enum ui_action watch_hints[] = { UI_ACT_TAKE_OVER, UI_ACT_HAND_BACK, UI_ACT_LEAVE,
						      UI_ACT_SCROLL_UP, UI_ACT_NONE };
	int width = getmaxx(w), x = 0;
	char buf[512];

	werase(w);
	if (app->message[0] && (app->message_error || app->now <= app->message_until)) {
		ui_draw_text(w, 0, 0, width, app->message,
			     ui_theme_attr(app->message_error ? UI_ROLE_ERROR : UI_ROLE_STATUS), UI_LEFT);
		return;
	}
	if (ui_jobs_describe(app, buf, sizeof(buf)))
		x = ui_draw_put(w, 0, 0, width, buf, ui_theme_attr(UI_ROLE_WARN)) + 2;
	const enum ui_action *hints = app->focus_shell >= 0 ? shell_hints : ui_panes[app->pane]->hints;
	if (app->focus_shell < 0 && ui_mirror_active(app))
		hints = watch_hints;
	for (size_t i = 0; hints[i] != UI_ACT_NONE && x < width; i++)
		x = hint(w, x, width, app, hints[i]);
	int in_panes = app->focus_shell < 0 && !ui_mirror_active(app);
	for (size_t i = 0; in_panes && global_hints[i] != UI_ACT_NONE && x < width; i++)
		x = hint(w, x, width, app, global_hints[i]);
	if (app->opts.readonly && x + 12 < width)
		ui_draw_text(w, 0, width - 11, 11, _("read-only"), ui_theme_attr(UI_ROLE_WARN), UI_RIGHT);
}
