/* The workbench's main loop: one poll over the keyboard, signals (self-pipe),
 * running jobs, attached shells and the library's change counters; handlers
 * change state and mark it dirty; one render per iteration. The terminal is restored on every way out. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/generation.h"
#include "draw.h"
#include "base/i18n.h"
#include "base/proc.h"
#include "sandbox/pool.h"
#include "sandbox/timeline.h"
#include "theme.h"
#include "ui.h"

#define CHANGES_MS 250          /* at most one listing this often while changes keep coming */
#define RELOAD_MS 2000          /* without change counters: re-read this often */
#define REAP_MS 30000           /* run the reaper while open */
#define TICK_MS 1000            /* countdowns */
#define STATS_MS 3000           /* live memory of the running sandboxes */
#define FRAME_MS 16             /* at most this often while shells stream output */

static int sig_pipe[2] = { -1, -1 };
static int curses_on;

const struct ui_pane *const ui_panes[UI_PANE_COUNT] = {
	[UI_PANE_SANDBOXES] = &ui_pane_sandboxes,
	[UI_PANE_IMAGES] = &ui_pane_images,
	[UI_PANE_MOUNTS] = &ui_pane_mounts,
	[UI_PANE_SESSIONS] = &ui_pane_sessions,
	[UI_PANE_TIMELINE] = &ui_pane_timeline,
};

static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int e = errno;

	if (write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a wake-up is pending anyway */
	}
	errno = e;
}

static void restore_terminal(void)
{
	if (curses_on) {
		endwin();
		curses_on = 0;
	}
}

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction fatal_old[sizeof(fatal_signals) / sizeof(fatal_signals[0])];

/* The terminal's modes before curses, for on_fatal. */
static struct termios saved_tio;

/* A crash must not leave the user's terminal in raw mode: restore it, then let
 * the previous handler (the default, or a sanitizer's report) have the signal.
 * endwin is not async-signal-safe: the saved modes go back with tcsetattr, and
 * the keypad mode, attributes, cursor and alternate screen by a plain write. */
static void on_fatal(int sig)
{
	static const char reset[] = "\033[?1l\033>\033[0m\033[?25h\033[?1049l\r\n";

	if (curses_on) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
		if (write(STDOUT_FILENO, reset, sizeof(reset) - 1) < 0) {
			/* nothing more can be done for the terminal */
		}
	}
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &fatal_old[i], NULL);
	raise(sig);
}

void ui_app_message(struct ui_app *app, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(app->message, sizeof(app->message), fmt, ap);
	va_end(ap);
	app->message_error = error;
	app->message_until = sb_clock_now() + 5;
	app->dirty = 1;
}

struct sb_sandbox_info *ui_app_find_sandbox(struct ui_app *app, const char *name)
{
	for (size_t i = 0; i < app->n_sbx; i++)
		if (!strcmp(app->sbx[i].rec.name, name))
			return &app->sbx[i];
	return NULL;
}

struct sb_sandbox_info *ui_app_selected_sandbox(struct ui_app *app)
{
	size_t sel = app->views[UI_PANE_SANDBOXES].selected;

	return sel < app->n_order && app->order ? &app->sbx[app->order[sel]] : NULL;
}

void ui_app_note_generation(struct ui_app *app, enum sb_generation_slot slot)
{
	unsigned long long gen[SB_GEN_SLOTS];

	if (app->gen && sb_generation_read(gen, app->gen, NULL) == 0)
		app->gen_seen[slot] = gen[slot];
}

/* Reloads what the library counted as changed since it was last listed (by
 * any process: the CLI in another terminal, agents, the reaper, our jobs);
 * without counters, everything. */
static void reload_changed(struct ui_app *app)
{
	unsigned long long gen[SB_GEN_SLOTS];
	struct sb_error err;

	if (!app->gen || sb_generation_read(gen, app->gen, &err) < 0) {
		if (app->gen && !app->gen_failed)
			ui_event_add(app, 1, _("cannot watch for changes (%s): re-reading every %d seconds"), err.msg,
				     RELOAD_MS / 1000);
		app->gen_failed = 1;
		ui_app_reload(app);
		ui_images_reload(app);
		return;
	}
	app->gen_failed = 0;
	if (gen[SB_GEN_SANDBOXES] != app->gen_seen[SB_GEN_SANDBOXES])
		ui_app_reload(app);
	if (gen[SB_GEN_IMAGES] != app->gen_seen[SB_GEN_IMAGES])
		ui_images_reload(app);
}

void ui_app_reload(struct ui_app *app)
{
	struct sb_sandbox_info *list = NULL;
	size_t n = 0;
	struct sb_error err;

	/* before listing: a change made while we list moves the counter again */
	ui_app_note_generation(app, SB_GEN_SANDBOXES);
	if (sb_sandbox_list(&list, &n, app->root, &err) < 0) {
		ui_app_message(app, 1, "%s", err.msg);
		return;
	}
	if (app->listed)
		ui_event_diff(app, app->sbx, app->n_sbx, list, n);
	struct sb_sandbox_info *old = app->sbx, *sel = ui_app_selected_sandbox(app);
	size_t n_old = app->n_sbx;
	char selected[SB_SANDBOX_NAME_MAX + 1] = "";
	/* the selection follows its sandbox into the new listing */
	if (sel)
		snprintf(selected, sizeof(selected), "%s", sel->rec.name);
	app->sbx = list;
	app->n_sbx = n;
	/* the warm pool's members are not the user's sandboxes: a count in the title */
	struct sb_pool_profile *pool;
	size_t n_pool;
	app->pool_ready = app->pool_size = 0;
	if (sb_pool_list(&pool, &n_pool, app->root, NULL) == 0) {
		for (size_t i = 0; i < n_pool; i++) {
			app->pool_ready += pool[i].ready;
			app->pool_size += pool[i].size;
		}
		sb_pool_list_free(pool, n_pool);
	}
	ui_sandboxes_rebuild(app, selected);
	sb_sandbox_list_free(old, n_old);
	ui_marks_prune(app);
	ui_panes[UI_PANE_IMAGES]->refilter(app);   /* its "user:" field comes from this listing */
	app->listed = 1;
	app->dirty = 1;
}

int ui_app_may_change(struct ui_app *app, enum ui_action a)
{
	const struct ui_action_info *info = ui_action_info(a);

	if (!app->opts.readonly || !info || !info->changes)
		return 1;
	ui_app_message(app, 1, _("read-only: '%s' is refused (the workbench was started with --readonly)"), info->name);
	return 0;
}

void ui_app_clamp_view(struct ui_app *app, enum ui_pane_id pane, size_t rows, int h)
{
	struct ui_pane_view *v = &app->views[pane];

	if (rows == 0) {
		v->selected = v->top = 0;
		return;
	}
	if (v->selected >= rows)
		v->selected = rows - 1;
	if (h < 1)
		h = 1;
	if (v->selected < v->top)
		v->top = v->selected;
	if (v->selected >= v->top + (size_t)h)
		v->top = v->selected - (size_t)h + 1;
	if (v->top + (size_t)h > rows)
		v->top = rows > (size_t)h ? rows - (size_t)h : 0;
}

int ui_app_move(struct ui_app *app, enum ui_action a, size_t rows, int page)
{
	struct ui_pane_view *v = &app->views[app->pane];
	size_t p = page > 1 ? (size_t)page : 1;

	switch (a) {
	case UI_ACT_UP:
		v->selected = v->selected ? v->selected - 1 : 0;
		break;
	case UI_ACT_DOWN:
		v->selected = v->selected + 1 < rows ? v->selected + 1 : v->selected;
		break;
	case UI_ACT_PAGE_UP:
		v->selected = v->selected > p ? v->selected - p : 0;
		break;
	case UI_ACT_PAGE_DOWN:
		v->selected = rows && v->selected + p < rows ? v->selected + p : (rows ? rows - 1 : 0);
		break;
	case UI_ACT_TOP:
		v->selected = 0;
		break;
	case UI_ACT_BOTTOM:
		v->selected = rows ? rows - 1 : 0;
		break;
	default:
		return 0;
	}
	app->dirty = 1;
	return 1;
}

/* ---- windows ---- */

static void delete_windows(struct ui_app *app)
{
	WINDOW **all[] = { &app->w_title, &app->w_list, &app->w_details, &app->w_events, &app->w_status,
			   &app->w_shell, &app->w_overlay };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (*all[i])
			delwin(*all[i]);
		*all[i] = NULL;
	}
}

static WINDOW *win(struct ui_rect r)
{
	return r.h > 0 && r.w > 0 ? newwin(r.h, r.w, r.y, r.x) : NULL;
}

static void apply_layout(struct ui_app *app, int rows, int cols)
{
	struct ui_layout *l = &app->layout;

	delete_windows(app);
	ui_layout_compute(l, rows, cols);
	if (l->too_small)
		return;
	app->w_title = win(l->title);
	app->w_list = win(l->list);
	app->w_details = win(l->details);
	app->w_events = win(l->events);
	app->w_status = win(l->status);
	/* the shell's first row is its header; the terminal gets the rest */
	app->w_shell = win(l->shell);
	app->w_overlay = newwin(3, 20, 0, 0);
	ui_shells_resize(app);
	ui_mirror_resize(app);
	app->dirty = 1;
}

static void handle_resize(struct ui_app *app)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
		return;
	resizeterm(ws.ws_row, ws.ws_col);
	apply_layout(app, ws.ws_row, ws.ws_col);
}

/* ---- rendering ---- */

static void draw_title(struct ui_app *app)
{
	WINDOW *w = app->w_title;
	size_t running = 0;
	char buf[512], tabs[256];
	int x;

	for (size_t i = 0; i < app->n_sbx; i++)
		running += app->sbx[i].rec.state == SB_STATE_RUNNING;
	werase(w);
	ui_draw_text(w, 0, 0, getmaxx(w), "", ui_theme_attr(UI_ROLE_TITLEBAR), UI_LEFT);
	snprintf(buf, sizeof(buf),
		 ngettext(" sandbench  %s  %zu sandbox, %zu running ", " sandbench  %s  %zu sandboxes, %zu running ",
			  app->n_sbx),
		 sb_root_path(app->root), app->n_sbx, running);
	x = ui_draw_put(w, 0, 0, getmaxx(w), buf, ui_theme_attr(UI_ROLE_TITLEBAR) | A_BOLD);
	if (app->pool_size) {
		snprintf(buf, sizeof(buf), _("pool %d/%d ready "), app->pool_ready, app->pool_size);
		x = ui_draw_put(w, 0, x, getmaxx(w) - x, buf, ui_theme_attr(UI_ROLE_TITLEBAR));
	}
	if (app->n_marks) {
		snprintf(buf, sizeof(buf), ngettext("[%zu marked] ", "[%zu marked] ", app->n_marks), app->n_marks);
		x = ui_draw_put(w, 0, x, getmaxx(w) - x, buf, ui_theme_attr(UI_ROLE_TITLEBAR) | A_BOLD);
	}
	if (app->n_shells) {
		char keys[32];
		ui_shells_tabs(app, tabs, sizeof(tabs));
		ui_keymap_describe(&app->keys, UI_ACT_PREFIX, keys, sizeof(keys));
		snprintf(buf, sizeof(buf), _("| shells: %s| %s: panes"), tabs, keys);
		ui_draw_put(w, 0, x + 1, getmaxx(w) - x - 1, buf, ui_theme_attr(UI_ROLE_TITLEBAR));
	}
}

static void draw_list(struct ui_app *app)
{
	WINDOW *w = app->w_list;
	char title[512];
	size_t len = 0;

	werase(w);
	for (int p = 0; p < UI_PANE_COUNT; p++) {
		int n = snprintf(title + len, sizeof(title) - len, p == (int)app->pane ? " [%d %s (%zu)] " : "  %d %s  ", p + 1,
				 _(ui_panes[p]->title), ui_panes[p]->rows(app));
		if (n > 0 && (size_t)n < sizeof(title) - len)
			len += (size_t)n;
	}
	if (app->filters[app->pane].text[0] || app->overlay == UI_OV_FILTER)
		snprintf(title + len, sizeof(title) - len, _("  filter: %s%s"),
			 app->overlay == UI_OV_FILTER ? app->filter_edit : app->filters[app->pane].text,
			 app->overlay == UI_OV_FILTER ? "_" : "");
	ui_draw_header(w, title, 1);
	ui_panes[app->pane]->draw(app, w, app->focus_shell < 0);
}

static void draw_too_small(struct ui_app *app)
{
	char buf[128];

	werase(stdscr);
	snprintf(buf, sizeof(buf), _("terminal too small: %dx%d, the workbench needs %dx%d"), app->layout.cols,
		 app->layout.rows, UI_MIN_COLS, UI_MIN_ROWS);
	mvaddnstr(app->layout.rows / 2, 0, buf, app->layout.cols);
	wnoutrefresh(stdscr);
	doupdate();
}

static void render(struct ui_app *app, int force_shell)
{
	if (app->layout.too_small) {
		draw_too_small(app);
		return;
	}
	curs_set(0);
	wnoutrefresh(stdscr);
	draw_title(app);
	wnoutrefresh(app->w_title);
	ui_eventlog_draw(app, app->w_events);
	wnoutrefresh(app->w_events);
	ui_statusline_draw(app, app->w_status);
	if (app->overlay == UI_OV_PROMPT)
		ui_prompt_draw(app, app->w_status);
	if (app->overlay == UI_OV_FILTER)
		ui_filter_draw(app, app->w_status);
	if (app->overlay == UI_OV_COMMAND)
		ui_command_draw(app, app->w_status);
	wnoutrefresh(app->w_status);
	if (app->focus_shell >= 0) {
		if (force_shell)
			touchwin(app->w_shell);
		ui_shell_draw(app, force_shell);
		if (app->overlay == UI_OV_NONE) {
			wnoutrefresh(app->w_shell);   /* last: its cursor wins */
			doupdate();
			return;
		}
		wnoutrefresh(app->w_shell);
	} else if (ui_mirror_active(app)) {
		ui_mirror_draw(app, force_shell);
		if (app->overlay == UI_OV_NONE) {
			doupdate();
			return;
		}
	} else {
		if (app->w_details) {
			ui_details_draw(app, app->w_details);
			wnoutrefresh(app->w_details);
		}
		draw_list(app);
		wnoutrefresh(app->w_list);
	}
	switch (app->overlay) {
	case UI_OV_VIEWER:
		ui_viewer_draw(app);
		break;
	case UI_OV_FORM:
		ui_form_draw(app);
		break;
	case UI_OV_CONFIRM:
		ui_confirm_draw(app);
		break;
	case UI_OV_SHELLS:
		ui_shells_list_draw(app);
		break;
	case UI_OV_DIFF:
		ui_diff_draw(app);
		break;
	case UI_OV_CMDLOG:
		ui_cmdlog_draw(app);
		break;
	case UI_OV_CLEANUP:
		ui_cleanup_draw(app);
		break;
	case UI_OV_EXPOSURE:
		ui_exposure_draw(app);
		break;
	case UI_OV_PROCS:
		ui_procs_draw(app);
		break;
	default:
		break;
	}
	if (app->overlay == UI_OV_PROMPT || app->overlay == UI_OV_COMMAND)
		wnoutrefresh(app->w_status);   /* again, last: the cursor is in the prompt */
	else if (app->overlay != UI_OV_NONE && app->overlay != UI_OV_FILTER)
		wnoutrefresh(app->w_overlay);
	doupdate();
}

/* ---- keys ---- */

void ui_overlay_close(struct ui_app *app)
{
	free(app->overlay_state);
	app->overlay_state = NULL;
	app->overlay = UI_OV_NONE;
	app->dirty = 1;
}

static void close_overlay(struct ui_app *app)
{
	switch (app->overlay) {
	case UI_OV_VIEWER:
		ui_viewer_close(app);
		break;
	case UI_OV_FORM:
		ui_form_close(app);
		break;
	case UI_OV_CONFIRM:
		ui_confirm_close(app);
		break;
	default:
		ui_overlay_close(app);
		break;
	}
}

static void pane_key(struct ui_app *app, int key)
{
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_PANES, key);
	const struct ui_custom_cmd *custom = ui_keymap_custom(&app->keys, key);
	int page = app->layout.list.h - 3;

	if (custom && app->pane == UI_PANE_SANDBOXES) {
		ui_custom_run(app, custom);
		return;
	}
	if (a == UI_ACT_NONE)
		return;
	if (!ui_app_may_change(app, a))
		return;
	if (ui_app_move(app, a, ui_panes[app->pane]->rows(app), page))
		return;
	switch (a) {
	case UI_ACT_QUIT:
		app->quit = 1;
		break;
	case UI_ACT_HELP:
		ui_help_open(app);
		break;
	case UI_ACT_NEXT_PANE:
		app->pane = (app->pane + 1) % UI_PANE_COUNT;
		break;
	case UI_ACT_PREV_PANE:
		app->pane = (app->pane + UI_PANE_COUNT - 1) % UI_PANE_COUNT;
		break;
	case UI_ACT_PANE_SANDBOXES:
		app->pane = UI_PANE_SANDBOXES;
		break;
	case UI_ACT_PANE_IMAGES:
		app->pane = UI_PANE_IMAGES;
		break;
	case UI_ACT_PANE_MOUNTS:
		app->pane = UI_PANE_MOUNTS;
		break;
	case UI_ACT_PANE_SESSIONS:
		app->pane = UI_PANE_SESSIONS;
		break;
	case UI_ACT_PANE_TIMELINE:
		app->pane = UI_PANE_TIMELINE;
		break;
	case UI_ACT_CREATE:
		ui_form_open(app);
		break;
	case UI_ACT_REFRESH:
		ui_app_reload(app);
		ui_images_reload(app);
		ui_sessions_refresh(app, 1);
		ui_app_message(app, 0, _("refreshed"));
		break;
	case UI_ACT_SHELLS:
		ui_shells_list_open(app);
		break;
	case UI_ACT_FILTER:
		if (ui_panes[app->pane]->fields)
			ui_filter_open(app);
		else if (!ui_panes[app->pane]->action(app, a))
			ui_app_message(app, 1, _("'%s' does not apply to the %s pane"), ui_action_info(a)->name,
				       _(ui_panes[app->pane]->title));
		break;
	case UI_ACT_COMMAND:
		ui_command_open(app);
		break;
	case UI_ACT_CMDLOG:
		ui_cmdlog_open(app);
		break;
	case UI_ACT_PROCESSES:
		ui_procs_open(app);
		break;
	case UI_ACT_GC:
		ui_action_gc_ask(app);
		break;
	case UI_ACT_CLEANUP:
		ui_cleanup_open(app);
		break;
	case UI_ACT_EXPOSURE:
		ui_exposure_open(app);
		break;
	case UI_ACT_NEXT_SHELL:
		if (app->n_shells)
			ui_shell_focus(app, (app->focus_shell + 1) % (int)app->n_shells);
		else
			ui_app_message(app, 0, _("no shells attached: Enter on a running sandbox attaches one"));
		break;
	default:
		if (!ui_panes[app->pane]->action(app, a))
			ui_app_message(app, 1, _("'%s' does not apply to the %s pane"), ui_action_info(a)->name,
				       _(ui_panes[app->pane]->title));
		break;
	}
	app->dirty = 1;
}

static void handle_key(struct ui_app *app, wint_t ch, int is_fn)
{
	int key = is_fn ? UI_KEY_FN + (int)ch : ch == 0 ? UI_KEY_C_SPACE : (int)ch;

	if (is_fn && ch == KEY_RESIZE)
		return;   /* SIGWINCH is ours (see handle_resize) */
	app->dirty = 1;
	switch (app->overlay) {
	case UI_OV_VIEWER:
		ui_viewer_key(app, key);
		return;
	case UI_OV_FORM:
		ui_form_key(app, key);
		return;
	case UI_OV_CONFIRM:
		ui_confirm_key(app, key);
		return;
	case UI_OV_FILTER:
		ui_filter_key(app, key);
		return;
	case UI_OV_SHELLS:
		ui_shells_list_key(app, key);
		return;
	case UI_OV_PROMPT:
		ui_prompt_key(app, key);
		return;
	case UI_OV_DIFF:
		ui_diff_key(app, key);
		return;
	case UI_OV_CMDLOG:
		ui_cmdlog_key(app, key);
		return;
	case UI_OV_CLEANUP:
		ui_cleanup_key(app, key);
		return;
	case UI_OV_EXPOSURE:
		ui_exposure_key(app, key);
		return;
	case UI_OV_PROCS:
		ui_procs_key(app, key);
		return;
	case UI_OV_COMMAND:
		ui_command_key(app, key);
		return;
	case UI_OV_NONE:
		break;
	}
	if (app->focus_shell >= 0)
		ui_shell_key(app, (int)ch, is_fn);
	else if (ui_mirror_active(app))
		ui_mirror_key(app, (int)ch, is_fn);
	else
		pane_key(app, key);
}

static void read_keys(struct ui_app *app)
{
	wint_t ch;
	int r;

	while ((r = get_wch(&ch)) != ERR)
		handle_key(app, ch, r == KEY_CODE_YES);
}

/* ---- signals ---- */

static int setup_signals(void)
{
	struct sigaction sa;
	static const int sigs[] = { SIGWINCH, SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT };

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, &fatal_old[i]);
	return 0;
}

static void handle_signals(struct ui_app *app)
{
	unsigned char buf[64];
	int winch = 0, chld = 0;
	ssize_t n;

	while ((n = read(sig_pipe[0], buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == SIGWINCH)
				winch = 1;
			else if (buf[i] == SIGCHLD)
				chld = 1;
			else
				app->quit = 1;
		}
	}
	if (chld) {
		ui_shells_reap(app);
		sb_proc_reap_orphans();
	}
	if (winch)
		handle_resize(app);   /* once for a burst of resizes */
}

/* ---- the loop ---- */

static void age_countdowns(struct ui_app *app, long long seconds)
{
	/* between listings the countdowns move with the clock */
	for (size_t i = 0; i < app->n_sbx; i++) {
		app->sbx[i].idle_seconds += seconds;
		if (app->sbx[i].expires_in > 0)
			app->sbx[i].expires_in = app->sbx[i].expires_in > seconds ? app->sbx[i].expires_in - seconds : 0;
	}
}

/* When the loop does what besides answering its descriptors (mono ms). */
struct timers {
	long long tick, reload, reap, stats;
	long long changes_at;                    /* look at the change counters from then on */
	int changes;                             /* a change may be waiting */
};

static void run_timers(struct ui_app *app, struct timers *t, long long now)
{
	if (now >= t->tick) {
		long long elapsed = (now - t->tick) / 1000 + 1;
		age_countdowns(app, elapsed);
		ui_shells_reap(app);   /* hung-up shells past their grace period */
		t->tick += elapsed * TICK_MS;
		app->now = sb_clock_now();
		app->dirty = 1;
		/* the counters cost one pread: a wake-up inotify missed waits a second at most */
		if (app->gen && !app->gen_failed)
			t->changes = 1;
	}
	if ((!app->gen || app->gen_failed) && now >= t->reload) {
		t->changes = 1;
		t->reload = now + RELOAD_MS;
	}
	/* a burst of changes (an agent's execs) costs one listing per CHANGES_MS */
	if (t->changes && now >= t->changes_at) {
		reload_changed(app);
		t->changes = 0;
		t->changes_at = now + CHANGES_MS;
	}
	if (now >= t->stats) {
		ui_resources_poll(app);
		t->stats = now + STATS_MS;
	}
	if (t->reap >= 0 && now >= t->reap) {
		ui_action_reap(app);
		t->reap = now + REAP_MS;
	}
}

static int loop(struct ui_app *app)
{
	long long start = sb_clock_monotonic_ms(), last_frame = 0;
	struct timers t = { .tick = start + TICK_MS, .reload = start + RELOAD_MS,
			    .reap = app->opts.readonly || app->opts.no_reap ? -1 : start + REAP_MS };
	int had_overlay = 0;

	if (!app->opts.readonly && !app->opts.no_reap)
		ui_action_reap(app);
	while (!app->quit) {
		struct pollfd pfd[128];
		int n = 0, n_jobs, n_shells, n_mirror, n_timeline, timeout, gen_at = -1;
		long long now = sb_clock_monotonic_ms();

		pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		n_jobs = ui_jobs_pollfds(app, pfd + n, 32);
		n += n_jobs;
		n_shells = ui_shells_pollfds(app, pfd + n, (int)(sizeof(pfd) / sizeof(pfd[0])) - n - 1);
		n += n_shells;
		n_mirror = ui_mirror_pollfds(app, pfd + n, (int)(sizeof(pfd) / sizeof(pfd[0])) - n - 1);
		n += n_mirror;
		n_timeline = ui_timeline_pollfds(app, pfd + n, (int)(sizeof(pfd) / sizeof(pfd[0])) - n - 1);
		n += n_timeline;
		/* a change already noticed is not polled for again until it is handled */
		if (!t.changes && sb_generation_fd(app->gen) >= 0) {
			gen_at = n;
			pfd[n++] = (struct pollfd){ .fd = sb_generation_fd(app->gen), .events = POLLIN };
		}
		timeout = (int)(t.tick - now);
		if (t.changes && t.changes_at - now < timeout)
			timeout = (int)(t.changes_at - now);
		if (app->dirty || ui_shells_want_render(app) || ui_mirror_want_render(app))
			timeout = (int)(last_frame + FRAME_MS - now);
		if (ui_mirror_busy(app))
			timeout = 0;   /* the session's items wait in a buffer, not on the socket */
		if (ui_jobs_running(app) && timeout > 150)
			timeout = 150;   /* the spinner */
		if (timeout < 0)
			timeout = 0;
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return -1;
		/* always, before the keys: a signal's handler has run by the time
		 * poll returns, but poll may report only the keys typed after a
		 * resize, and a shell would get them before its new size */
		handle_signals(app);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pfd[0].revents & (POLLHUP | POLLERR) && !(pfd[0].revents & POLLIN))
				app->quit = 1;   /* the terminal went away */
			read_keys(app);
		}
		ui_jobs_io(app, pfd + 2, n_jobs);
		ui_shells_io(app, pfd + 2 + n_jobs, n_shells);
		ui_mirror_io(app, pfd + 2 + n_jobs + n_shells, n_mirror);
		ui_timeline_io(app, pfd + 2 + n_jobs + n_shells + n_mirror, n_timeline);
		if (gen_at >= 0 && pfd[gen_at].revents)
			t.changes = 1;
		now = sb_clock_monotonic_ms();
		if (ui_jobs_running(app)) {
			app->spinner = (int)(now / 150);
			app->dirty = 1;
		}
		run_timers(app, &t, now);
		/* pace frames while a shell floods output; keys and everything else render at once */
		if ((app->dirty || ui_shells_want_render(app) || ui_mirror_want_render(app)) &&
		    (now - last_frame >= FRAME_MS || pfd[0].revents)) {
			int force = had_overlay && app->overlay == UI_OV_NONE;
			render(app, force);
			had_overlay = app->overlay != UI_OV_NONE;
			app->dirty = 0;
			last_frame = now;
		}
	}
	return 0;
}

static int start_curses(void)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return -1;
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0 || !initscr())
		return -1;
	curses_on = 1;
	if (atexit(restore_terminal) != 0) {
		restore_terminal();
		return -1;
	}
	raw();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	ui_theme_init();
	refresh();
	return 0;
}

int ui_run(const struct ui_options *opts)
{
	struct ui_app app = { .opts = *opts, .focus_shell = -1 };
	struct sb_error err;
	char warn[1024] = "";
	int rc;

	if (sb_root_open(&app.root, opts->root_path, &err) < 0) {
		fprintf(stderr, "sandbench: %s\n", err.msg);
		return 1;
	}
	sb_sandbox_process_init(NULL);
	/* what the workbench does is recorded as the workbench's */
	sb_timeline_set_actor(SB_TIMELINE_WORKBENCH);
	ui_keymap_defaults(&app.keys);
	ui_keymap_load_user(&app.keys, warn, sizeof(warn));
	if (setup_signals() < 0 || start_curses() < 0) {
		restore_terminal();
		fprintf(stderr, "%s\n", _("sandbench: the workbench needs a terminal (stdin and stdout)"));
		sb_root_close(app.root);
		return 1;
	}
	app.now = sb_clock_now();
	apply_layout(&app, LINES, COLS);
	if (sb_generation_open(&app.gen, app.root, &err) < 0)
		ui_event_add(&app, 1, _("cannot watch for changes (%s): re-reading every %d seconds"), err.msg,
			     RELOAD_MS / 1000);
	ui_app_reload(&app);
	if (warn[0]) {
		char *nl = strchr(warn, '\n');
		if (nl)
			*nl = '\0';
		ui_app_message(&app, 1, "%s", warn);
	}
	ui_event_add(&app, 0, _("workbench started on %s%s"), sb_root_path(app.root),
		     opts->readonly ? _(" (read-only)") : "");
	/* the sandboxes first: the image list (which reads every record too) follows */
	render(&app, 1);
	ui_images_reload(&app);
	/* ./setup && ./sandbench on a fresh machine ends in a running sandbox */
	if (!opts->readonly && geteuid() == 0 && app.n_sbx == 0 && ui_images_count(&app) == 0)
		ui_action_bootstrap(&app);
	rc = loop(&app);
	/* leaving: shells end, sandboxes stay as they are */
	char left[512];
	ui_shells_close(&app, NULL);
	ui_mirror_close(&app);
	ui_jobs_abandon(&app, left, sizeof(left));
	close_overlay(&app);
	delete_windows(&app);
	restore_terminal();
	if (left[0])
		fprintf(stderr, _("sandbench: still running in the background: %s\n"), left);
	ui_resources_free(&app);
	ui_images_free(&app);
	ui_sessions_free(&app);
	ui_timeline_free(&app);
	ui_diff_free(&app);
	ui_filter_free(&app);
	ui_history_free(&app.cmd_hist);
	ui_marks_free(&app);
	ui_cmdlog_free();
	ui_cleanup_free();
	ui_exposure_free();
	sb_sandbox_list_free(app.sbx, app.n_sbx);
	free(app.order);
	free(app.shells);
	ui_eventlog_free();
	sb_generation_close(app.gen);
	sb_root_close(app.root);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	return rc < 0 ? 1 : 0;
}
