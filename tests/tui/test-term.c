/* The terminal widget alone: bytes in, cells, cursor, scrollback, alt screen
 * and answers out; plus the pty channel's queued writes on a real pty. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <poll.h>
#include <pty.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pty.h"
#include "term.h"

struct sink {
	char out[256];
	size_t len;
	int bells;
	char title[64];
};

static void on_output(void *user, const char *bytes, size_t len)
{
	struct sink *s = user;

	if (s->len + len < sizeof(s->out)) {
		memcpy(s->out + s->len, bytes, len);
		s->len += len;
		s->out[s->len] = '\0';
	}
}

static void on_bell(void *user)
{
	((struct sink *)user)->bells++;
}

static void on_title(void *user, const char *title)
{
	snprintf(((struct sink *)user)->title, sizeof(((struct sink *)user)->title), "%s", title);
}

static const struct ui_term_callbacks cbs = { .output = on_output, .bell = on_bell, .title = on_title };

static char *row(struct ui_term *t, int r)
{
	static char buf[512];

	ui_term_row_text(t, r, buf, sizeof(buf));
	return buf;
}

static void feed(struct ui_term *t, const char *s)
{
	ui_term_feed(t, s, strlen(s));
}

Test(term, text_cells_and_cursor)
{
	struct sink s = { 0 };
	struct ui_term *t = ui_term_new(5, 20, 100, &cbs, &s);
	struct ui_term_cell c;
	int r, col, vis;

	cr_assert_not_null(t);
	feed(t, "hello\r\n\x1b[1;31mred\x1b[0m wörld");
	cr_assert_str_eq(row(t, 0), "hello");
	cr_assert_str_eq(row(t, 1), "red wörld");
	ui_term_cell(t, 1, 0, &c);
	cr_assert_eq(c.chars[0], 'r');
	cr_assert(c.attrs & UI_TERM_BOLD);
	cr_assert_eq(c.fg.kind, UI_TERM_COLOR_INDEXED);
	cr_assert_eq(c.fg.index, 1);
	ui_term_cell(t, 1, 4, &c);
	cr_assert_eq(c.attrs, 0u);
	cr_assert_eq(c.fg.kind, UI_TERM_COLOR_DEFAULT);
	ui_term_cursor(t, &r, &col, &vis);
	cr_assert_eq(r, 1);
	cr_assert_eq(col, 9);
	cr_assert(vis);
	feed(t, "\x1b[?25l");
	ui_term_cursor(t, &r, &col, &vis);
	cr_assert_not(vis);
	ui_term_free(t);
}

Test(term, wide_characters_take_two_cells)
{
	struct ui_term *t = ui_term_new(3, 10, 0, NULL, NULL);
	struct ui_term_cell c;
	int r, col, vis;

	feed(t, "a\xe6\x97\xa5" "b");   /* a 日 b */
	ui_term_cell(t, 0, 1, &c);
	cr_assert_eq(c.chars[0], 0x65e5u);
	cr_assert_eq(c.width, 2);
	cr_assert_str_eq(row(t, 0), "a\xe6\x97\xa5" "b");
	ui_term_cursor(t, &r, &col, &vis);
	cr_assert_eq(col, 4);
	ui_term_free(t);
}

Test(term, answers_cursor_position_query_through_output)
{
	struct sink s = { 0 };
	struct ui_term *t = ui_term_new(10, 40, 0, &cbs, &s);

	feed(t, "\x1b[3;7H\x1b[6n");
	cr_assert_str_eq(s.out, "\x1b[3;7R");
	ui_term_free(t);
}

Test(term, keys_are_encoded_for_the_program)
{
	struct sink s = { 0 };
	struct ui_term *t = ui_term_new(10, 40, 0, &cbs, &s);

	ui_term_char(t, 'x', 0);
	ui_term_key(t, UI_TERM_KEY_UP, 0);
	ui_term_key(t, UI_TERM_KEY_ENTER, 0);
	ui_term_char(t, 'c', UI_TERM_MOD_CTRL);
	cr_assert_str_eq(s.out, "x\x1b[A\r\x03");
	ui_term_free(t);
}

Test(term, scrollback_keeps_lines_and_scrolls_the_view)
{
	struct ui_term *t = ui_term_new(3, 10, 5, NULL, NULL);
	int r, col, vis;

	for (int i = 1; i <= 10; i++) {
		char line[16];
		snprintf(line, sizeof(line), "%sl%d", i > 1 ? "\r\n" : "", i);
		feed(t, line);
	}
	cr_assert_str_eq(row(t, 0), "l8");
	cr_assert_str_eq(row(t, 2), "l10");
	cr_assert_eq(ui_term_scrollback_lines(t), 5);   /* capped */
	cr_assert_eq(ui_term_scroll(t, 2), 2);
	cr_assert_str_eq(row(t, 0), "l6");
	cr_assert_str_eq(row(t, 2), "l8");
	ui_term_cursor(t, &r, &col, &vis);
	cr_assert_not(vis);
	/* output while scrolled back keeps the view on the same lines */
	feed(t, "\r\nl11");
	cr_assert_str_eq(row(t, 0), "l6");
	cr_assert_eq(ui_term_scroll(t, 100), 5);
	cr_assert_str_eq(row(t, 0), "l4");
	cr_assert_eq(ui_term_scroll(t, -100), 0);
	cr_assert_str_eq(row(t, 2), "l11");
	ui_term_free(t);
}

Test(term, alt_screen_restores_the_main_screen)
{
	struct ui_term *t = ui_term_new(4, 20, 10, NULL, NULL);

	feed(t, "main text");
	feed(t, "\x1b[?1049h\x1b[2J\x1b[Hfull screen app");
	cr_assert(ui_term_altscreen(t));
	cr_assert_str_eq(row(t, 0), "full screen app");
	feed(t, "\x1b[?1049l");
	cr_assert_not(ui_term_altscreen(t));
	cr_assert_str_eq(row(t, 0), "main text");
	ui_term_free(t);
}

Test(term, dirty_rows_bell_and_title)
{
	struct sink s = { 0 };
	struct ui_term *t = ui_term_new(6, 20, 0, &cbs, &s);

	ui_term_clean(t);
	cr_assert_not(ui_term_any_dirty(t));
	feed(t, "\x1b[4;1Hx");
	cr_assert(ui_term_row_dirty(t, 3));
	cr_assert_not(ui_term_row_dirty(t, 1));
	feed(t, "\a\x1b]2;my title\a");
	cr_assert_eq(s.bells, 1);
	cr_assert_str_eq(s.title, "my title");
	cr_assert_str_eq(ui_term_title(t), "my title");
	ui_term_free(t);
}

Test(term, resize_keeps_text_and_pops_history)
{
	struct ui_term *t = ui_term_new(2, 10, 10, NULL, NULL);

	feed(t, "one\r\ntwo\r\nthree");
	cr_assert_str_eq(row(t, 0), "two");
	ui_term_resize(t, 4, 30);
	cr_assert_str_eq(row(t, 0), "one");
	cr_assert_str_eq(row(t, 2), "three");
	int r, c;
	ui_term_size(t, &r, &c);
	cr_assert_eq(r, 4);
	cr_assert_eq(c, 30);
	ui_term_free(t);
}

Test(pty, queued_writes_reach_the_other_side_and_eio_means_gone)
{
	int master, slave;
	char buf[64 * 1024];
	size_t got = 0;

	cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	struct termios tio;
	tcgetattr(slave, &tio);
	cfmakeraw(&tio);
	tcsetattr(slave, TCSANOW, &tio);
	struct ui_pty *p = ui_pty_new(master);
	static char big[200000];
	memset(big, 'z', sizeof(big));
	/* more than the pty buffer: the rest waits in the queue */
	cr_assert_eq(ui_pty_write(p, big, sizeof(big)), 0);
	cr_assert_gt(ui_pty_pending(p), 0u);
	cr_assert(ui_pty_events(p) & POLLOUT);
	while (got < sizeof(big)) {
		struct pollfd pf[2] = { { .fd = slave, .events = POLLIN }, { .fd = master, .events = ui_pty_events(p) } };
		cr_assert_gt(poll(pf, 2, 5000), 0, "stalled at %zu bytes", got);
		if (pf[1].revents & POLLOUT)
			cr_assert_eq(ui_pty_flush(p), 0);
		if (pf[0].revents & POLLIN) {
			ssize_t n = read(slave, buf, sizeof(buf));
			cr_assert_gt(n, 0);
			for (ssize_t i = 0; i < n; i++)
				cr_assert_eq(buf[i], 'z');
			got += (size_t)n;
		}
	}
	cr_assert_eq(ui_pty_pending(p), 0u);
	cr_assert_eq(write(slave, "hi", 2), 2);
	struct pollfd pf = { .fd = master, .events = POLLIN };
	cr_assert_eq(poll(&pf, 1, 5000), 1);
	cr_assert_eq(ui_pty_read(p, buf, sizeof(buf)), 2);
	cr_assert_eq(ui_pty_read(p, buf, sizeof(buf)), 0);   /* nothing now, not gone */
	close(slave);
	cr_assert_eq(ui_pty_read(p, buf, sizeof(buf)), -1);
	ui_pty_free(p);
	close(master);
}

Test(term, scroll_regions_insert_and_delete)
{
	struct ui_term *t = ui_term_new(5, 10, 10, NULL, NULL);

	feed(t, "a\r\nb\r\nc\r\nd\r\ne");
	/* a region of rows 2-4: scrolling inside it keeps row 1 and adds no history */
	feed(t, "\x1b[2;4r\x1b[4;1H\n");
	cr_assert_str_eq(row(t, 0), "a");
	cr_assert_str_eq(row(t, 1), "c");
	cr_assert_str_eq(row(t, 2), "d");
	cr_assert_str_eq(row(t, 3), "");
	cr_assert_str_eq(row(t, 4), "e");
	cr_assert_eq(ui_term_scrollback_lines(t), 0);
	feed(t, "\x1b[r\x1b[2;1H\x1b[L");   /* insert a line at row 2 */
	cr_assert_str_eq(row(t, 1), "");
	cr_assert_str_eq(row(t, 2), "c");
	feed(t, "\x1b[M");                  /* and delete it again: "e" fell off the bottom */
	cr_assert_str_eq(row(t, 1), "c");
	cr_assert_str_eq(row(t, 4), "");
	feed(t, "\x1b[5;1He");
	/* characters inserted and deleted within a line (not a whole-width move) */
	feed(t, "\x1b[5;1H\x1b[2@XY");
	cr_assert_str_eq(row(t, 4), "XYe");
	feed(t, "\x1b[5;1H\x1b[1P");
	cr_assert_str_eq(row(t, 4), "Ye");
	ui_term_free(t);
}

Test(term, erase_takes_the_pen_background)
{
	struct ui_term *t = ui_term_new(3, 10, 0, NULL, NULL);
	struct ui_term_cell c;

	feed(t, "\x1b[44m\x1b[2J");
	ui_term_cell(t, 1, 5, &c);
	cr_assert_eq(c.bg.kind, UI_TERM_COLOR_INDEXED);
	cr_assert_eq(c.bg.index, 4);
	cr_assert_eq(c.chars[0], 0u);
	ui_term_free(t);
}

Test(term, shrinking_keeps_the_cursor_line)
{
	struct ui_term *t = ui_term_new(4, 10, 10, NULL, NULL);
	int r, col, vis;

	feed(t, "1\r\n2\r\n3\r\n4");
	ui_term_resize(t, 2, 10);
	cr_assert_str_eq(row(t, 0), "3");
	cr_assert_str_eq(row(t, 1), "4");
	ui_term_cursor(t, &r, &col, &vis);
	cr_assert_eq(r, 1);
	cr_assert_eq(ui_term_scrollback_lines(t), 2);
	feed(t, "!");
	cr_assert_str_eq(row(t, 1), "4!");
	ui_term_free(t);
}

Test(term, a_flood_of_lines_is_fast)
{
	struct ui_term *t = ui_term_new(31, 120, 2000, NULL, NULL);
	char line[32];
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (int i = 1; i <= 100000; i++) {
		int n = snprintf(line, sizeof(line), "%d\r\n", i);
		ui_term_feed(t, line, (size_t)n);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	cr_assert_str_eq(row(t, 29), "100000");
	cr_assert_eq(ui_term_scrollback_lines(t), 2000);
	/* whole-width scrolls rotate rows: a few us of CPU a line, even under ASan
	 * (the screen layer of libvterm took ~15 us optimised) */
	double us = ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3) / 100000;
	cr_assert_lt(us, 25.0, "%.1f us per line", us);
	cr_log_info("%.2f us of CPU per line", us);
	ui_term_free(t);
}
