/* What the benchmark drivers share: the clock and the quantiles. */
#ifndef SB_BENCHUTIL_H
#define SB_BENCHUTIL_H

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);
/* The p quantile (0 to 1, nearest rank) of v[0..n), which it sorts. */
double bench_pct(double *v, int n, double p);

#endif
