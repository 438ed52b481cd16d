/* Wall clock for activity and expiry; tests inject time through $SANDBENCH_NOW
 * (unix seconds) so that expiry is testable without waiting. */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

/* Unix seconds: $SANDBENCH_NOW when set to a number, else the real time. */
long long sb_clock_now(void);

#endif
