/* Facts of the host that outlive no reboot. */
#ifndef SB_HOST_H
#define SB_HOST_H

#include "base/error.h"

#define SB_HOST_BOOT_ID_LEN 37

/* The kernel's random id of this boot (/proc/sys/kernel/random/boot_id): it
 * changes with every host restart, which ends every sandbox of the host.
 * $SANDBENCH_BOOT_ID replaces it (tests simulate a restart with it). */
int sb_host_boot_id(char out[SB_HOST_BOOT_ID_LEN], struct sb_error *err);

#endif
