/* A session mirrored: the workbench subscribes to a live session's holder
 * (a watcher, which never counts as activity), replays the log's recent
 * output and then follows it into the same terminal widget the embedded
 * shells use; the input lines the agent sends are shown inline where they
 * were typed (its terminal does not echo). The human may take control: the
 * holder then refuses the agent's input ("controlled by a human") and the
 * keys typed here go to the session as the human's, until control is handed
 * back. The connection's socket is one more descriptor of the main poll. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "session/session.h"
#include "term.h"
#include "term_view.h"
#include "ui.h"

#define SCROLLBACK_BYTES (64 << 10)   /* of the log replayed on opening */
#define SCROLLBACK_LINES 2000
/* items taken per loop iteration: a flooding session cannot starve the keyboard */
#define ITEM_BUDGET (256 * 1024)

struct mirror {
	char sandbox[SB_SANDBOX_NAME_MAX + 1];
	char id[SB_SESSION_ID_MAX + 1];
	struct sb_session *s;
	struct ui_term *term;
	WINDOW *banner, *body;
	int controlled;                   /* this connection holds control */
	char controller[16];              /* who does, as the holder says */
	int live;                         /* the backlog is through */
	int ended;
	char end_reason[200];
	int pending;                      /* items may be buffered: take them before polling */
	int force;                        /* redraw every row */
	char typed[160];                  /* the line being typed under control (no echo: the banner shows it) */
	struct ui_app *app;
};

static struct mirror *get(struct ui_app *app)
{
	return app->mirror;
}

int ui_mirror_active(struct ui_app *app)
{
	return app->mirror != NULL;
}

/* What the terminal encodes for its program (keys, answers to queries)
 * reaches the session only while the human has control: a watcher is
 * read-only, even towards a query in the replayed output. */
static void term_output(void *user, const char *bytes, size_t len)
{
	struct mirror *m = user;
	struct sb_error err;

	if (!m->controlled || m->ended || !m->live)
		return;
	if (sb_session_send(m->s, NULL, bytes, len, SB_SOURCE_HUMAN, &err) < 0)
		ui_app_message(m->app, 1, "%s", err.msg);
	m->pending = 1;   /* output that came with the reply waits in the client's buffer */
}

static const struct ui_term_callbacks term_cbs = { .output = term_output };

static void end(struct mirror *m, const char *why)
{
	m->ended = 1;
	m->controlled = 0;
	snprintf(m->end_reason, sizeof(m->end_reason), "%.190s", why && *why ? why : _("the session ended"));
}

static void on_event(struct ui_app *app, struct mirror *m, const struct sb_session_event *e)
{
	unsigned r, c;

	switch (e->type) {
	case SB_EVENT_INPUT:
		/* bold, then back to what the output had set: the line as typed */
		ui_term_feed(m->term, "\x1b[1m", 4);
		ui_term_feed(m->term, e->text, strlen(e->text));
		ui_term_feed(m->term, "\x1b[22m\r\n", 7);
		break;
	case SB_EVENT_CONTROL:
		snprintf(m->controller, sizeof(m->controller), "%s", sb_session_source_name(e->source));
		app->dirty = 1;
		break;
	case SB_EVENT_RESIZE:
		if (sscanf(e->text, "%ux%u", &r, &c) == 2 && r > 0 && c > 0 && r < 1000 && c < 1000) {
			ui_term_resize(m->term, (int)r, (int)c);
			m->force = 1;
		}
		break;
	case SB_EVENT_EXIT:
		if (m->live)
			end(m, e->text);
		break;
	default:
		break;
	}
}

/* Takes what the holder sent, up to the budget. */
static void drain(struct ui_app *app, struct mirror *m)
{
	struct sb_session_item it;
	struct sb_error err;
	size_t taken = 0;
	int got = 0;

	while (!m->ended && taken < ITEM_BUDGET && (got = sb_session_next(m->s, &it, &err)) == 1) {
		switch (it.kind) {
		case SB_ITEM_OUTPUT:
			ui_term_feed(m->term, it.data, it.len);
			taken += it.len;
			break;
		case SB_ITEM_EVENT:
			on_event(app, m, &it.event);
			taken += 64;
			break;
		case SB_ITEM_LIVE:
			m->live = 1;
			app->dirty = 1;
			break;
		case SB_ITEM_END:
			end(m, NULL);
			app->dirty = 1;
			break;
		}
	}
	if (got < 0) {
		end(m, err.msg);
		app->dirty = 1;
	}
	m->pending = !m->ended && got == 1;
}

int ui_mirror_open(struct ui_app *app, const char *sandbox, const char *id)
{
	struct mirror *m = calloc(1, sizeof(*m));
	struct sb_session_info info;
	struct sb_error err;

	if (!m) {
		ui_app_message(app, 1, _("out of memory"));
		return -1;
	}
	ui_mirror_close(app);
	m->app = app;
	snprintf(m->sandbox, sizeof(m->sandbox), "%s", sandbox);
	snprintf(m->id, sizeof(m->id), "%s", id);
	if (sb_session_connect(&m->s, app->root, sandbox, id, &err) < 0 || sb_session_status(m->s, &info, &err) < 0) {
		ui_app_message(app, 1, "%s", err.msg);
		sb_session_close(m->s);
		free(m);
		return -1;
	}
	unsigned long long since = info.offset > SCROLLBACK_BYTES ? info.offset - SCROLLBACK_BYTES : 0;
	snprintf(m->controller, sizeof(m->controller), "%s", info.controller);
	m->term = ui_term_new(info.rows ? info.rows : 24, info.cols ? info.cols : 80, SCROLLBACK_LINES, &term_cbs, m);
	if (!m->term || sb_session_subscribe(m->s, since < info.first ? info.first : since, &err) < 0) {
		ui_app_message(app, 1, "%s", m->term ? err.msg : _("out of memory"));
		sb_session_info_clear(&info);
		ui_term_free(m->term);
		sb_session_close(m->s);
		free(m);
		return -1;
	}
	sb_session_info_clear(&info);
	m->pending = m->force = 1;   /* the subscription's reply may have brought the backlog */
	app->mirror = m;
	ui_shell_focus(app, -1);
	ui_event_add(app, 0, _("%s: watching session %s (read-only)"), sandbox, id);
	return 0;
}

void ui_mirror_close(struct ui_app *app)
{
	struct mirror *m = get(app);

	if (!m)
		return;
	if (m->controlled && !m->ended)
		sb_session_release(m->s, NULL);
	sb_session_close(m->s);   /* hands control back in any case */
	ui_term_free(m->term);
	if (m->banner)
		delwin(m->banner);
	if (m->body)
		delwin(m->body);
	ui_event_add(app, 0, _("%s: stopped watching session %s"), m->sandbox, m->id);
	free(m);
	app->mirror = NULL;
	app->dirty = 1;
}

int ui_mirror_pollfds(struct ui_app *app, struct pollfd *pfd, int max)
{
	struct mirror *m = get(app);

	if (!m || m->ended || max < 1)
		return 0;
	pfd[0] = (struct pollfd){ .fd = sb_session_fd(m->s), .events = POLLIN };
	return 1;
}

void ui_mirror_io(struct ui_app *app, const struct pollfd *pfd, int n)
{
	struct mirror *m = get(app);

	if (m && (m->pending || (n > 0 && pfd[0].revents)))
		drain(app, m);
}

int ui_mirror_busy(struct ui_app *app)
{
	struct mirror *m = get(app);

	return m && m->pending;
}

int ui_mirror_want_render(struct ui_app *app)
{
	struct mirror *m = get(app);

	return m && app->focus_shell < 0 && (m->force || ui_term_any_dirty(m->term));
}

static void take(struct ui_app *app, struct mirror *m)
{
	struct sb_error err;

	if (m->ended) {
		ui_app_message(app, 1, _("session %s has ended: %s"), m->id, m->end_reason);
		return;
	}
	if (!ui_app_may_change(app, UI_ACT_TAKE_OVER))
		return;
	if (sb_session_take(m->s, SB_SOURCE_HUMAN, &err) < 0) {
		m->pending = 1;
		ui_app_message(app, 1, "%s", err.msg);
		return;
	}
	m->controlled = 1;
	m->pending = 1;
	m->typed[0] = '\0';
	snprintf(m->controller, sizeof(m->controller), "human");
	ui_event_add(app, 0, _("%s: you took control of session %s (the agent's input is refused)"), m->sandbox, m->id);
}

static void hand_back(struct ui_app *app, struct mirror *m)
{
	struct sb_error err;

	if (sb_session_release(m->s, &err) < 0 && !m->ended)
		ui_app_message(app, 1, "%s", err.msg);
	m->controlled = 0;
	m->pending = 1;
	m->typed[0] = '\0';
	snprintf(m->controller, sizeof(m->controller), "agent");
	ui_event_add(app, 0, _("%s: control of session %s handed back to the agent"), m->sandbox, m->id);
}

/* The line being typed, for the banner: the terminal does not echo it. */
static void note_typed(struct mirror *m, int key, int is_fn)
{
	size_t len = strlen(m->typed);

	if (!is_fn && (key == '\r' || key == '\n' || key == 3 || key == 21)) {
		m->typed[0] = '\0';
	} else if ((is_fn && key == KEY_BACKSPACE) || key == 127 || key == 8) {
		ui_line_edit(m->typed, sizeof(m->typed), UI_KEY_FN + KEY_BACKSPACE);
	} else if (!is_fn && key >= ' ' && len + 5 < sizeof(m->typed)) {
		ui_line_edit(m->typed, sizeof(m->typed), key);
	}
}

static int scroll_key(struct ui_app *app, struct mirror *m, int k)
{
	enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_SHELL, k);
	int rows, cols;

	if (a != UI_ACT_SCROLL_UP && a != UI_ACT_SCROLL_DOWN)
		return 0;
	ui_term_size(m->term, &rows, &cols);
	ui_term_scroll(m->term, a == UI_ACT_SCROLL_UP ? rows / 2 : -rows / 2);
	m->force = 1;
	return 1;
}

void ui_mirror_key(struct ui_app *app, int key, int is_fn)
{
	struct mirror *m = get(app);
	int k = is_fn ? UI_KEY_FN + key : key;

	if (!m)
		return;
	app->dirty = 1;
	if (scroll_key(app, m, k))
		return;
	if (!m->controlled) {
		enum ui_action a = ui_keymap_lookup(&app->keys, UI_CTX_WATCH, k);
		if (a == UI_ACT_TAKE_OVER)
			take(app, m);
		else if (a == UI_ACT_LEAVE)
			ui_mirror_close(app);
		else if (a == UI_ACT_HELP || key == '?')
			ui_help_open(app);
		return;
	}
	if (ui_keymap_lookup(&app->keys, UI_CTX_CONTROL, k) == UI_ACT_HAND_BACK) {
		hand_back(app, m);
		return;
	}
	if (ui_term_scroll_offset(m->term)) {
		ui_term_scroll(m->term, -ui_term_scroll_offset(m->term));
		m->force = 1;
	}
	note_typed(m, key, is_fn);
	ui_term_view_key(m->term, key, is_fn);
}

void ui_mirror_resize(struct ui_app *app)
{
	struct mirror *m = get(app);

	if (!m)
		return;
	if (m->banner)
		delwin(m->banner);
	if (m->body)
		delwin(m->body);
	m->banner = m->body = NULL;
	m->force = 1;
}

static void banner_text(struct ui_app *app, struct mirror *m, char *buf, size_t size, enum ui_role *role)
{
	char k1[32], k2[32];

	*role = UI_ROLE_TITLEBAR;
	if (m->ended) {
		ui_keymap_describe(&app->keys, UI_ACT_LEAVE, k1, sizeof(k1));
		snprintf(buf, size, _(" session %s of %s: ended (%s)   %s: leave"), m->id, m->sandbox, m->end_reason, k1);
		*role = UI_ROLE_ERROR;
	} else if (m->controlled) {
		ui_keymap_describe(&app->keys, UI_ACT_HAND_BACK, k1, sizeof(k1));
		snprintf(buf, size, _(" YOU CONTROL session %s of %s: the agent's input is refused   %s: hand back   typing: %s"),
			 m->id, m->sandbox, k1, m->typed);
		*role = UI_ROLE_WARN;
	} else {
		ui_keymap_describe(&app->keys, UI_ACT_TAKE_OVER, k1, sizeof(k1));
		ui_keymap_describe(&app->keys, UI_ACT_LEAVE, k2, sizeof(k2));
		snprintf(buf, size, _(" watching session %s of %s (read-only), %s has control%s   %s: take over   %s: leave"),
			 m->id, m->sandbox, !strcmp(m->controller, "human") ? _("a human") : _("the agent"),
			 m->live ? "" : _(", reading the log…"), k1, k2);
	}
}

void ui_mirror_draw(struct ui_app *app, int force)
{
	struct mirror *m = get(app);
	struct ui_rect r = app->layout.shell;
	enum ui_role role;
	char buf[512];

	if (!m || r.h < 2)
		return;
	if (!m->banner && !(m->banner = newwin(1, r.w, r.y, r.x)))
		return;
	if (!m->body && !(m->body = newwin(r.h - 1, r.w, r.y + 1, r.x)))
		return;
	if (force || m->force)
		werase(m->body);
	banner_text(app, m, buf, sizeof(buf), &role);
	ui_draw_text(m->banner, 0, 0, r.w, buf, ui_theme_attr(role) | A_BOLD, UI_LEFT);
	wnoutrefresh(m->banner);
	ui_term_view_draw(m->body, m->term, force || m->force);
	m->force = 0;
	curs_set(m->controlled && ui_term_view_cursor(m->body, m->term) ? 1 : 0);
	wnoutrefresh(m->body);
}
