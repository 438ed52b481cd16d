/* Clocks. The wall clock is for activity and expiry; tests inject time through
 * $SANDBENCH_NOW (unix seconds) so that expiry is testable without waiting.
 * The monotonic clock is for deadlines and intervals. */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

/* Unix seconds: $SANDBENCH_NOW when set to a number, else the real time. */
long long sb_clock_now(void);
/* The same in milliseconds (records that order events finer than a second):
 * $SANDBENCH_NOW * 1000 when set, else the real time. */
long long sb_clock_now_ms(void);
/* Milliseconds of CLOCK_MONOTONIC: unaffected by $SANDBENCH_NOW and by changes
 * of the wall clock, so a deadline neither fires early nor never. */
long long sb_clock_monotonic_ms(void);

#endif
