/* The TUI test harness (see harness.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vterm.h>

#include "harness.h"
#include "testutil.h"

struct tui {
	pid_t pid;
	int master;
	int rows, cols;
	VTerm *vt;
	VTermScreen *vts;
	char screen[64 * 1024];
	char *raw;                   /* the bytes the program wrote, escape sequences and all */
	size_t raw_len;
};

/* Enough for the sequences a test waits for; past it the older half goes. */
#define RAW_MAX (4u << 20)

static void keep_raw(struct tui *t, const char *buf, size_t n)
{
	if (!t->raw && !(t->raw = malloc(RAW_MAX)))
		return;
	if (n > RAW_MAX / 2) {
		buf += n - RAW_MAX / 2;
		n = RAW_MAX / 2;
	}
	if (t->raw_len + n > RAW_MAX) {
		memmove(t->raw, t->raw + t->raw_len - RAW_MAX / 2, RAW_MAX / 2);
		t->raw_len = RAW_MAX / 2;
	}
	memcpy(t->raw + t->raw_len, buf, n);
	t->raw_len += n;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* libvterm answers queries (cursor position ...) like a real terminal would */
static void vt_output(const char *s, size_t len, void *user)
{
	struct tui *t = user;

	while (len) {
		ssize_t n = write(t->master, s, len);
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

struct tui *tui_start(int rows, int cols, const char *const *argv, const char *const *env)
{
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
	struct tui *t = calloc(1, sizeof(*t));
	char *bin = tu_buildpath("sandbench");
	int slave;

	if (!t || openpty(&t->master, &slave, NULL, NULL, &ws) < 0)
		return NULL;
	t->rows = rows;
	t->cols = cols;
	t->pid = fork();
	if (t->pid == 0) {
		const char *args[64];
		int n = 0;
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		close(slave);
		close(t->master);
		setenv("TERM", "xterm-256color", 1);
		/* the screens asserted on are the UTF-8 ones, whatever the caller's locale */
		setenv("LC_ALL", "C.UTF-8", 1);
		unsetenv("NO_COLOR");
		for (size_t i = 0; env && env[i]; i++)
			putenv(strdup(env[i]));
		args[n++] = bin;
		for (size_t i = 0; argv && argv[i] && n < 63; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execv(bin, (char *const *)args);
		_exit(127);
	}
	close(slave);
	free(bin);
	fcntl(t->master, F_SETFL, O_NONBLOCK);
	t->vt = vterm_new(rows, cols);
	vterm_set_utf8(t->vt, 1);
	t->vts = vterm_obtain_screen(t->vt);
	vterm_screen_enable_altscreen(t->vts, 1);
	vterm_output_set_callback(t->vt, vt_output, t);
	vterm_screen_reset(t->vts, 1);
	return t;
}

int tui_termios(struct tui *t, struct termios *out)
{
	/* the master answers for its slave, even after the program closed it */
	return tcgetattr(t->master, out);
}

/* Reads what the program wrote, waiting at most timeout_ms for the first byte. */
static void pump(struct tui *t, int timeout_ms)
{
	struct pollfd pfd = { .fd = t->master, .events = POLLIN };
	char buf[65536];

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return;
	for (;;) {
		ssize_t n = read(t->master, buf, sizeof(buf));
		if (n <= 0)
			break;
		keep_raw(t, buf, (size_t)n);
		vterm_input_write(t->vt, buf, (size_t)n);
	}
	vterm_screen_flush_damage(t->vts);
}

static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | (c >> 12));
	out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[2] = (char)(0x80 | (c & 0x3f));
	return 3;
}

const char *tui_screen(struct tui *t)
{
	size_t len = 0;

	for (int r = 0; r < t->rows; r++) {
		for (int c = 0; c < t->cols;) {
			VTermScreenCell cell;
			vterm_screen_get_cell(t->vts, (VTermPos){ r, c }, &cell);
			uint32_t ch = cell.chars[0];
			if (len + 8 >= sizeof(t->screen))
				break;
			len += put_utf8(t->screen + len, ch && ch != (uint32_t)-1 ? ch : ' ');
			c += cell.width > 0 ? cell.width : 1;
		}
		t->screen[len++] = '\n';
	}
	t->screen[len] = '\0';
	return t->screen;
}

int tui_find_row(struct tui *t, const char *text)
{
	const char *s = tui_screen(t), *hit = strstr(s, text);
	int row = 0;

	if (!hit)
		return -1;
	for (const char *p = s; p < hit; p++)
		row += *p == '\n';
	return row;
}

int tui_wait_cond(struct tui *t, int (*cond)(struct tui *, const char *, const char *), const char *a,
		  const char *b, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		if (cond(t, a, b))
			return 0;
		long long left = end - now_ms();
		if (left <= 0)
			break;
		pump(t, (int)(left < 200 ? left : 200));
	}
	fprintf(stderr, "---- screen (waiting for '%s'%s%s) ----\n%s----\n", a, b ? " / " : "", b ? b : "", tui_screen(t));
	return -1;
}

static int has_text(struct tui *t, const char *a, const char *b)
{
	(void)b;
	return strstr(tui_screen(t), a) != NULL;
}

static int lacks_text(struct tui *t, const char *a, const char *b)
{
	(void)b;
	return strstr(tui_screen(t), a) == NULL;
}

/* Some row holds anchor ("^text": starts with text, leading blanks aside) and text. */
static int row_has(struct tui *t, const char *anchor, const char *text)
{
	const char *s = tui_screen(t);
	int at_start = anchor[0] == '^';
	const char *a = anchor + at_start;

	for (const char *line = s; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *row = strndup(line, len);
		int anchored = row && (at_start ? !strncmp(row + strspn(row, " "), a, strlen(a)) : strstr(row, a) != NULL);
		int ok = anchored && strstr(row, text);
		free(row);
		if (ok)
			return 1;
		line += len + (nl ? 1 : 0);
	}
	return 0;
}

static int line_starts(struct tui *t, const char *prefix, const char *unused)
{
	const char *s = tui_screen(t);
	size_t n = strlen(prefix);

	(void)unused;
	for (const char *line = s; *line;) {
		const char *p = line + strspn(line, " ");
		if (!strncmp(p, prefix, n))
			return 1;
		const char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

int tui_wait_line_start(struct tui *t, const char *prefix, int timeout_ms)
{
	return tui_wait_cond(t, line_starts, prefix, NULL, timeout_ms);
}

static int is_above(struct tui *t, const char *upper, const char *lower)
{
	int u = tui_find_row(t, upper), l = tui_find_row(t, lower);

	return u >= 0 && l >= 0 && u < l;
}

int tui_wait_above(struct tui *t, const char *upper, const char *lower, int timeout_ms)
{
	return tui_wait_cond(t, is_above, upper, lower, timeout_ms);
}

pid_t tui_pid(const struct tui *t)
{
	return t->pid;
}

static int wrote(struct tui *t, const char *a, const char *b)
{
	(void)b;
	return t->raw && memmem(t->raw, t->raw_len, a, strlen(a)) != NULL;
}

int tui_wait_output(struct tui *t, const char *bytes, int timeout_ms)
{
	return tui_wait_cond(t, wrote, bytes, NULL, timeout_ms);
}

int tui_wait_text(struct tui *t, const char *text, int timeout_ms)
{
	return tui_wait_cond(t, has_text, text, NULL, timeout_ms);
}

int tui_wait_gone(struct tui *t, const char *text, int timeout_ms)
{
	return tui_wait_cond(t, lacks_text, text, NULL, timeout_ms);
}

int tui_wait_row(struct tui *t, const char *anchor, const char *text, int timeout_ms)
{
	return tui_wait_cond(t, row_has, anchor, text, timeout_ms);
}

void tui_send(struct tui *t, const char *keys)
{
	tui_send_bytes(t, keys, strlen(keys));
}

void tui_send_bytes(struct tui *t, const char *keys, size_t len)
{
	/* drain first: a full pty buffer must not block the program while we write */
	pump(t, 0);
	while (len) {
		ssize_t n = write(t->master, keys, len);
		if (n < 0 && errno == EAGAIN) {
			pump(t, 50);
			continue;
		}
		if (n <= 0)
			return;
		keys += n;
		len -= (size_t)n;
	}
}

void tui_resize(struct tui *t, int rows, int cols)
{
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };

	t->rows = rows;
	t->cols = cols;
	vterm_set_size(t->vt, rows, cols);
	ioctl(t->master, TIOCSWINSZ, &ws);
}

int tui_finish(struct tui *t, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int status = 0, killed = 0;

	for (;;) {
		pid_t r = waitpid(t->pid, &status, WNOHANG);
		if (r == t->pid)
			break;
		/* past the deadline: asked to end (it restores the terminal and ends
		 * its probes), then killed if it does not within 5 s */
		if (now_ms() >= end && killed < 2) {
			kill(t->pid, killed ? SIGKILL : SIGTERM);
			killed++;
			end = now_ms() + 5000;
		}
		pump(t, 20);   /* keep the pty drained so the program can finish writing */
	}
	close(t->master);
	vterm_free(t->vt);
	free(t->raw);
	free(t);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
