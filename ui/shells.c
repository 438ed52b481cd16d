/* Attached shells: a library shell (pty running runsc exec --process with
 * "terminal": true), a pty channel and a terminal widget each. Several at once;
 * one may have the keyboard; the prefix key gives it back to the panes.
 * Closing a shell ends only the shell, never the sandbox. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "pty.h"
#include "term.h"
#include "term_view.h"
#include "ui.h"

#define SCROLLBACK_LINES 2000
/* read at most this much per shell per loop iteration, so a flood of output
 * cannot starve the keyboard or the other panes */
#define READ_BUDGET (256 * 1024)

struct ui_shell {
	char name[SB_SANDBOX_NAME_MAX + 1];
	struct sb_shell *shell;
	struct ui_pty *pty;
	struct ui_term *term;
	int gone;                    /* the pty reported EIO / EOF */
	long long gone_at;           /* when (ms): the exit status usually follows */
	int force;                   /* redraw every row next time */
};

static void term_output(void *user, const char *bytes, size_t len)
{
	struct ui_shell *sh = user;

	ui_pty_write(sh->pty, bytes, len);
}

static void term_bell(void *user)
{
	(void)user;
	beep();
}

static const struct ui_term_callbacks term_cbs = { .output = term_output, .bell = term_bell };

/* The sandbox's login shell, found by the library inside its root; /bin/sh
 * when its /etc/passwd cannot be used, saying so. NULL (with a message) when
 * there is no shell at all. */
static char *pick_shell(struct ui_app *app, const char *name)
{
	char *shell = NULL, *why = NULL;
	struct sb_error err;
	int rc = sb_sandbox_login_shell(&shell, &why, app->root, name, &err);

	if (rc == SB_ERR_NOTFOUND || rc == SB_ERR_STATE) {
		ui_app_message(app, 1, "%s", err.msg);
		return NULL;
	}
	if (rc < 0) {
		why = strdup(err.msg);
		shell = strdup("/bin/sh");
	}
	if (why && shell) {
		ui_app_message(app, 1, _("%s: using %s: %s"), name, shell, why);
		ui_event_add(app, 1, _("%s: using %s: %s"), name, shell, why);
	}
	free(why);
	return shell;
}

/* A shell, its pty channel and terminal: NULL (with a message) on failure. */
static struct ui_shell *open_shell(struct ui_app *app, const char *name, char *shell)
{
	struct ui_shell *sh = calloc(1, sizeof(*sh));
	char *argv[] = { shell, "-l", NULL };
	int rows = app->layout.shell.h, cols = app->layout.shell.w;
	struct sb_error err;

	if (!sh) {
		ui_app_message(app, 1, _("out of memory"));
		return NULL;
	}
	snprintf(sh->name, sizeof(sh->name), "%s", name);
	struct sb_shell_opts o = { .argv = argv, .rows = (unsigned short)rows, .cols = (unsigned short)cols };
	if (sb_shell_open(&sh->shell, app->root, name, &o, &err) < 0) {
		free(sh);
		ui_app_message(app, 1, "%s", err.msg);
		ui_event_add(app, 1, _("%s: cannot attach a shell: %s"), name, err.msg);
		return NULL;
	}
	sh->pty = ui_pty_new(sb_shell_fd(sh->shell));
	sh->term = ui_term_new(rows, cols, SCROLLBACK_LINES, &term_cbs, sh);
	if (!sh->pty || !sh->term) {
		ui_pty_free(sh->pty);
		ui_term_free(sh->term);
		sb_shell_close(sh->shell);
		free(sh);
		ui_app_message(app, 1, _("out of memory"));
		return NULL;
	}
	sh->force = 1;
	return sh;
}

int ui_shell_attach(struct ui_app *app, const char *name)
{
	struct ui_shell *sh, **list;
	char *shell;

	if (!ui_app_find_sandbox(app, name) || !(shell = pick_shell(app, name)))
		return -1;
	list = realloc(app->shells, sizeof(struct ui_shell *) * (app->n_shells + 1));
	if (list)
		app->shells = list;
	else
		ui_app_message(app, 1, _("out of memory"));
	if (!list || !(sh = open_shell(app, name, shell))) {
		free(shell);
		return -1;
	}
	app->shells[app->n_shells++] = sh;
	ui_event_add(app, 0, _("%s: shell attached (%s)"), name, shell);
	free(shell);
	ui_shell_focus(app, (int)app->n_shells - 1);
	return 0;
}

static void drop(struct ui_app *app, size_t i, const char *why)
{
	struct ui_shell *sh = app->shells[i];

	ui_event_add(app, 0, _("%s: shell closed (%s)"), sh->name, why);
	sb_shell_close(sh->shell);
	ui_pty_free(sh->pty);
	ui_term_free(sh->term);
	free(sh);
	memmove(app->shells + i, app->shells + i + 1, sizeof(struct ui_shell *) * (app->n_shells - i - 1));
	app->n_shells--;
	if (app->focus_shell == (int)i)
		app->focus_shell = -1;
	else if (app->focus_shell > (int)i)
		app->focus_shell--;
	app->dirty = 1;
}

int ui_shells_close(struct ui_app *app, const char *name)
{
	int n = 0;

	for (size_t i = app->n_shells; i-- > 0;) {
		if (!name || !strcmp(app->shells[i]->name, name)) {
			drop(app, i, _("closed by the workbench"));
			n++;
		}
	}
	return n;
}

size_t ui_shells_count(struct ui_app *app, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < app->n_shells; i++)
		n += !strcmp(app->shells[i]->name, name);
	return n;
}

void ui_shell_focus(struct ui_app *app, int index)
{
	app->focus_shell = index >= 0 && (size_t)index < app->n_shells ? index : -1;
	if (app->focus_shell >= 0)
		app->shells[index]->force = 1;
	app->dirty = 1;
}

int ui_shells_pollfds(struct ui_app *app, struct pollfd *pfd, int max)
{
	int n = 0;

	for (size_t i = 0; i < app->n_shells && n < max; i++)
		if (!app->shells[i]->gone)
			pfd[n++] = (struct pollfd){ .fd = ui_pty_fd(app->shells[i]->pty), .events = ui_pty_events(app->shells[i]->pty) };
	return n;
}

void ui_shells_io(struct ui_app *app, const struct pollfd *pfd, int n)
{
	static char buf[65536];

	for (int k = 0; k < n; k++) {
		for (size_t i = 0; i < app->n_shells; i++) {
			struct ui_shell *sh = app->shells[i];
			if (sh->gone || ui_pty_fd(sh->pty) != pfd[k].fd)
				continue;
			if ((pfd[k].revents & POLLOUT) && ui_pty_flush(sh->pty) < 0)
				sh->gone = 1;
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				size_t total = 0;
				while (total < READ_BUDGET) {
					ssize_t r = ui_pty_read(sh->pty, buf, sizeof(buf));
					if (r < 0) {
						sh->gone = 1;
						break;
					}
					if (r == 0)
						break;
					ui_term_feed(sh->term, buf, (size_t)r);
					total += (size_t)r;
				}
			}
			break;
		}
	}
	ui_shells_reap(app);
}

/* A shell whose terminal hung up is dropped when its process has exited (to
 * report the exit status), or after a grace period if it lingers. */
#define HANGUP_GRACE_MS 2000

void ui_shells_reap(struct ui_app *app)
{
	for (size_t i = app->n_shells; i-- > 0;) {
		struct ui_shell *sh = app->shells[i];
		int status = 0;
		char why[64];
		if (sb_shell_poll(sh->shell, &status)) {
			snprintf(why, sizeof(why), _("exit status %d"), status);
		} else if (sh->gone) {
			if (!sh->gone_at)
				sh->gone_at = sb_clock_monotonic_ms();
			if (sb_clock_monotonic_ms() - sh->gone_at < HANGUP_GRACE_MS)
				continue;
			snprintf(why, sizeof(why), "%s", _("terminal hung up"));
		} else {
			continue;
		}
		drop(app, i, why);
	}
}

void ui_shell_key(struct ui_app *app, int key, int is_fn)
{
	struct ui_shell *sh;
	enum ui_action a;

	if (app->focus_shell < 0)
		return;
	sh = app->shells[app->focus_shell];
	a = ui_keymap_lookup(&app->keys, UI_CTX_SHELL, is_fn ? UI_KEY_FN + key : key);
	if (a == UI_ACT_PREFIX) {
		ui_shell_focus(app, -1);
		return;
	}
	if (a == UI_ACT_SCROLL_UP || a == UI_ACT_SCROLL_DOWN) {
		int rows, cols;
		ui_term_size(sh->term, &rows, &cols);
		ui_term_scroll(sh->term, a == UI_ACT_SCROLL_UP ? rows / 2 : -rows / 2);
		app->dirty = 1;
		return;
	}
	/* typing returns a scrolled-back view to the live screen */
	if (ui_term_scroll_offset(sh->term))
		ui_term_scroll(sh->term, -ui_term_scroll_offset(sh->term));
	ui_term_view_key(sh->term, key, is_fn);
	sb_shell_activity(sh->shell);
}

void ui_shell_draw(struct ui_app *app, int force)
{
	struct ui_shell *sh;

	if (app->focus_shell < 0)
		return;
	sh = app->shells[app->focus_shell];
	ui_term_view_draw(app->w_shell, sh->term, force || sh->force);
	sh->force = 0;
	curs_set(ui_term_view_cursor(app->w_shell, sh->term) ? 1 : 0);
}

int ui_shells_want_render(struct ui_app *app)
{
	return app->focus_shell >= 0 && ui_term_any_dirty(app->shells[app->focus_shell]->term);
}

void ui_shells_resize(struct ui_app *app)
{
	int rows = app->layout.shell.h, cols = app->layout.shell.w;

	if (app->layout.too_small)
		return;   /* the shells keep their size until the screen is usable again */
	for (size_t i = 0; i < app->n_shells; i++) {
		ui_term_resize(app->shells[i]->term, rows, cols);
		sb_shell_resize(app->shells[i]->shell, (unsigned short)rows, (unsigned short)cols);
		app->shells[i]->force = 1;
	}
}

void ui_shells_tabs(struct ui_app *app, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < app->n_shells && len + 1 < size; i++) {
		int focused = (int)i == app->focus_shell, back = ui_term_scroll_offset(app->shells[i]->term);
		char scrolled[32] = "";
		if (back)
			snprintf(scrolled, sizeof(scrolled), _(" (%d lines back)"), back);
		int n = snprintf(buf + len, size - len, focused ? "[%zu:%s%s] " : " %zu:%s%s  ", i + 1, app->shells[i]->name,
				 scrolled);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len >= size)
		buf[size - 1] = '\0';
}

/* ---- the list of shells ('w') ---- */

struct shell_list {
	size_t selected;
};

void ui_shells_list_open(struct ui_app *app)
{
	struct shell_list *l;

	if (app->n_shells == 0) {
		ui_app_message(app, 0, _("no shells attached: Enter on a running sandbox attaches one"));
		return;
	}
	if (!(l = calloc(1, sizeof(*l))))
		return;
	app->overlay_state = l;
	app->overlay = UI_OV_SHELLS;
	app->dirty = 1;
}

void ui_shells_list_draw(struct ui_app *app)
{
	struct shell_list *l = app->overlay_state;
	struct ui_rect r = ui_layout_dialog(&app->layout, (int)app->n_shells + 4, 60);
	WINDOW *w = app->w_overlay;
	char line[256];

	wresize(w, r.h, r.w);
	mvwin(w, r.y, r.x);
	ui_draw_box(w, _("Attached shells"));
	for (size_t i = 0; i < app->n_shells && (int)i < r.h - 3; i++) {
		const char *title = ui_term_title(app->shells[i]->term);
		snprintf(line, sizeof(line), "%zu  %-20s %s", i + 1, app->shells[i]->name, title);
		ui_draw_text(w, 1 + (int)i, 1, r.w - 2, line,
			     ui_theme_attr(i == l->selected ? UI_ROLE_SELECTED : UI_ROLE_DIALOG), UI_LEFT);
	}
	ui_draw_put(w, r.h - 2, 2, r.w - 4, _("Enter: focus   d: close the shell   Esc: back"), ui_theme_attr(UI_ROLE_KEY));
}

void ui_shells_list_key(struct ui_app *app, int key)
{
	struct shell_list *l = app->overlay_state;
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);

	if (a == UI_ACT_UP && l->selected > 0)
		l->selected--;
	else if (a == UI_ACT_DOWN && l->selected + 1 < app->n_shells)
		l->selected++;
	else if (a == UI_ACT_SHELL && l->selected < app->n_shells) {
		size_t sel = l->selected;
		ui_overlay_close(app);
		ui_shell_focus(app, (int)sel);
		return;
	} else if (a == UI_ACT_REMOVE && l->selected < app->n_shells) {
		drop(app, l->selected, _("closed from the list"));
		if (app->n_shells == 0) {
			ui_overlay_close(app);
			return;
		}
		if (l->selected >= app->n_shells)
			l->selected = app->n_shells - 1;
	} else if (key == 27 || a == UI_ACT_QUIT || a == UI_ACT_SHELLS) {
		ui_overlay_close(app);
		return;
	}
	app->dirty = 1;
}
