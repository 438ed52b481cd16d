/* Runs the real sandbench binary on a pty of a fixed size, feeds everything
 * it writes into a libvterm screen inside the test, sends keys through the
 * master, and waits (with a deadline, never a sleep) for screen conditions. */
#ifndef TUI_HARNESS_H
#define TUI_HARNESS_H

#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

struct tui;

/* argv: arguments after the binary (NULL-terminated); env: extra "K=V" or NULL. */
struct tui *tui_start(int rows, int cols, const char *const *argv, const char *const *env);
/* Waits until text appears on the screen; 0 on success, -1 on timeout. */
int tui_wait_text(struct tui *t, const char *text, int timeout_ms);
/* Waits until text is gone from the screen. */
int tui_wait_gone(struct tui *t, const char *text, int timeout_ms);
/* Waits until the row holding `anchor` also holds `text`; an anchor "^name"
 * means a row that starts with name (leading blanks aside). */
int tui_wait_row(struct tui *t, const char *anchor, const char *text, int timeout_ms);
/* Waits until cond(t, a, b) holds (it reads the screen with tui_screen). */
int tui_wait_cond(struct tui *t, int (*cond)(struct tui *, const char *, const char *), const char *a,
		  const char *b, int timeout_ms);
/* Waits until some row starts with prefix (leading blanks ignored). */
int tui_wait_line_start(struct tui *t, const char *prefix, int timeout_ms);
/* Waits until the first row holding `upper` is above the first holding `lower`. */
int tui_wait_above(struct tui *t, const char *upper, const char *lower, int timeout_ms);
/* Waits until the bytes the program wrote (escape sequences included, not
 * only what reached the screen) hold bytes, e.g. an OSC sequence. */
int tui_wait_output(struct tui *t, const char *bytes, int timeout_ms);
void tui_send(struct tui *t, const char *keys);
/* Keys that may hold a NUL (C-Space). */
void tui_send_bytes(struct tui *t, const char *keys, size_t len);
pid_t tui_pid(const struct tui *t);
/* Changes the pty size (the program gets SIGWINCH) and the emulated screen's. */
void tui_resize(struct tui *t, int rows, int cols);
/* The screen as text, rows separated by '\n' (static buffer). */
const char *tui_screen(struct tui *t);
/* The row (0-based) holding text, -1 if none. */
int tui_find_row(struct tui *t, const char *text);
/* The pty's terminal modes as the program left them; 0, or -1. */
int tui_termios(struct tui *t, struct termios *out);
/* Waits for the program to exit (killing it after the deadline); returns its
 * exit status (128+signal when killed) and frees t. */
int tui_finish(struct tui *t, int timeout_ms);

#endif
