/* Clocks. The wall clock is for activity and expiry; test builds inject time
 * (sb_hooks.now, base/hooks.h) so that expiry is testable without waiting.
 * The monotonic clock is for deadlines and intervals. */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

/* Unix seconds: the injected time of a test build, else the real time. */
long long sb_clock_now(void);
/* The same in milliseconds (records that order events finer than a second). */
long long sb_clock_now_ms(void);
/* Milliseconds of CLOCK_MONOTONIC: unaffected by an injected time and by changes
 * of the wall clock, so a deadline neither fires early nor never. */
long long sb_clock_monotonic_ms(void);

#endif
