/* The colour table (see theme.h). */
#include "config.h"

#include <langinfo.h>
#include <stdlib.h>
#include <string.h>

#include "theme.h"

static const struct {
	enum ui_role role;
	short fg, bg;            /* -1: the terminal's default */
	attr_t color_attrs;      /* with colours */
	attr_t mono_attrs;       /* without */
} roles[] = {
	{ UI_ROLE_NORMAL, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_ROLE_TITLEBAR, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	{ UI_ROLE_PANE_TITLE, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_UNDERLINE },
	{ UI_ROLE_PANE_FOCUSED, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE | A_BOLD },
	{ UI_ROLE_COLUMNS, COLOR_CYAN, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_ROLE_SELECTED, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	{ UI_ROLE_SELECTED_DIM, -1, -1, A_REVERSE | A_DIM, A_UNDERLINE },
	{ UI_ROLE_RUNNING, COLOR_GREEN, -1, A_BOLD, A_BOLD },
	{ UI_ROLE_STOPPED, COLOR_BLUE, -1, A_BOLD, A_NORMAL },
	{ UI_ROLE_CREATED, COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	{ UI_ROLE_BROKEN, COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_ROLE_PAUSED, COLOR_MAGENTA, -1, A_NORMAL, A_DIM },
	{ UI_ROLE_WARN, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_ROLE_ERROR, COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD },
	{ UI_ROLE_DIM, -1, -1, A_DIM, A_DIM },
	{ UI_ROLE_STATUS, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_ROLE_KEY, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_ROLE_DIALOG, COLOR_WHITE, COLOR_BLACK, A_NORMAL, A_NORMAL },
	{ UI_ROLE_FIELD, COLOR_BLACK, COLOR_WHITE, A_NORMAL, A_UNDERLINE },
};

static int color;
static int pairs[UI_ROLE_COUNT];

void ui_theme_init(void)
{
	const char *no = getenv("NO_COLOR");

	color = has_colors() && !(no && *no) && start_color() == OK;
	if (!color)
		return;
	use_default_colors();
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		pairs[roles[i].role] = alloc_pair(roles[i].fg, roles[i].bg);
}

int ui_theme_has_color(void)
{
	return color;
}


attr_t ui_theme_attr(enum ui_role role)
{
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (roles[i].role == role)
			return color ? (roles[i].color_attrs | (attr_t)COLOR_PAIR(pairs[role])) : roles[i].mono_attrs;
	return A_NORMAL;
}

static const struct ui_glyphs glyphs_utf8 = { "\u25b2", "\u25bc", "\u2026", "\u25cf" };
static const struct ui_glyphs glyphs_ascii = { "^", "v", "...", "+" };

const struct ui_glyphs *ui_theme_glyphs(void)
{
	return strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? &glyphs_utf8 : &glyphs_ascii;
}
