/* Diagnostic log: off by default; the front ends turn it on (-v, SANDBENCH_LOG). */
#ifndef SB_LOG_H
#define SB_LOG_H

#include <stdio.h>

/* Sends the log to f (NULL turns it off). The caller keeps ownership of f. */
void sb_log_set(FILE *f);
/* Opens $SANDBENCH_LOG for appending when it is set; returns 0 or -errno. */
int sb_log_from_env(void);
/* The log's file descriptor, -1 when there is no log (a forked child that
 * closes what exec would keeps it); async-signal-safe. */
int sb_log_fd(void);
void sb_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* sb_log for a forked child of a process with threads, where a lock of
 * stdio or malloc may be held by a thread that is not there: async-signal-
 * safe, the strings of parts (NULL ends them) as one line. */
void sb_log_safe(const char *const parts[]);
/* v in decimal, async-signal-safe: a pointer into buf. */
#define SB_LOG_DECIMAL 24
char *sb_log_decimal(char buf[SB_LOG_DECIMAL], long long v);

#endif
