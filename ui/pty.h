/* The workbench side of a pseudo-terminal master, driven from a poll loop:
 * non-blocking reads, writes queued and drained on POLLOUT (pasted input is
 * never dropped on EAGAIN), EIO meaning the child side is gone. The shell
 * that owns the master (sb_shell_open: openpty, setsid, TIOCSCTTY, runsc
 * exec --process with "terminal": true) keeps ownership of the fd. */
#ifndef UI_PTY_H
#define UI_PTY_H

#include <stddef.h>
#include <sys/types.h>

struct ui_pty;

/* Wraps a master fd (made non-blocking); NULL on allocation failure. */
struct ui_pty *ui_pty_new(int fd);
/* Frees the queue; does not close the fd. NULL is fine. */
void ui_pty_free(struct ui_pty *p);
int ui_pty_fd(const struct ui_pty *p);
/* Events to poll for: POLLIN, plus POLLOUT while writes are queued. */
short ui_pty_events(const struct ui_pty *p);
/* Reads what is there (at most size bytes): > 0 bytes, 0 nothing now,
 * -1 the child side is gone (EIO/EOF). */
ssize_t ui_pty_read(struct ui_pty *p, char *buf, size_t size);
/* Queues bytes for the child and writes as much as it can now. */
int ui_pty_write(struct ui_pty *p, const char *bytes, size_t len);
/* Writes queued bytes (on POLLOUT); returns -1 when the child is gone. */
int ui_pty_flush(struct ui_pty *p);
size_t ui_pty_pending(const struct ui_pty *p);

#endif
