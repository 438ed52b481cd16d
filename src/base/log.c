#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static FILE *log_file;
static int log_fd = -1;

void sb_log_set(FILE *f)
{
	log_file = f;
	log_fd = f ? fileno(f) : -1;
}

int sb_log_from_env(void)
{
	const char *path = getenv("SANDBENCH_LOG");
	FILE *f;

	if (!path || !*path)
		return 0;
	f = fopen(path, "ae");
	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOLBF, 0);
	sb_log_set(f);
	return 0;
}

int sb_log_fd(void)
{
	return log_fd;
}

char *sb_log_decimal(char buf[SB_LOG_DECIMAL], long long v)
{
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	char *p = &buf[SB_LOG_DECIMAL - 1];

	*p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	return p;
}

/* Appends s to the line at *n (cap bytes), cut short. */
static void append(char *line, size_t *n, size_t cap, const char *s)
{
	while (*s && *n < cap)
		line[(*n)++] = *s++;
}

void sb_log_safe(const char *const parts[])
{
	char line[1024], num[SB_LOG_DECIMAL];
	struct timespec ts;
	size_t n = 0;

	if (log_fd < 0)
		return;
	/* the prefix sb_log writes */
	clock_gettime(CLOCK_REALTIME, &ts);
	append(line, &n, sizeof(line) - 1, sb_log_decimal(num, ts.tv_sec));
	append(line, &n, sizeof(line) - 1, ".");
	append(line, &n, sizeof(line) - 1, sb_log_decimal(num, 1000 + ts.tv_nsec / 1000000) + 1);
	append(line, &n, sizeof(line) - 1, " [");
	append(line, &n, sizeof(line) - 1, sb_log_decimal(num, getpid()));
	append(line, &n, sizeof(line) - 1, "] ");
	for (; *parts; parts++)
		append(line, &n, sizeof(line) - 1, *parts);
	line[n++] = '\n';
	/* one write: the log is opened for appending, lines of other processes stay whole */
	if (write(log_fd, line, n) < 0)
		return;
}

void sb_log(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (!log_file)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(log_file, "%lld.%03ld [%ld] ", (long long)ts.tv_sec, ts.tv_nsec / 1000000, (long)getpid());
	va_start(ap, fmt);
	vfprintf(log_file, fmt, ap);
	va_end(ap);
	fputc('\n', log_file);
}
