#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "benchutil.h"

double bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[(int)(p * (n - 1) + 0.5)];
}
