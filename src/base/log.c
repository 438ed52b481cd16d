#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static FILE *log_file;

void sb_log_set(FILE *f)
{
	log_file = f;
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
	log_file = f;
	return 0;
}

int sb_log_fd(void)
{
	return log_file ? fileno(log_file) : -1;
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
