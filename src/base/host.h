/* Facts of the host that outlive no reboot. */
#ifndef SB_HOST_H
#define SB_HOST_H

#include "base/error.h"

#define SB_HOST_BOOT_ID_LEN 37

/* The kernel's random id of this boot (/proc/sys/kernel/random/boot_id): it
 * changes with every host restart, which ends every sandbox of the host.
 * A test build replaces it (sb_hooks.boot_id) to simulate a restart. */
int sb_host_boot_id(char out[SB_HOST_BOOT_ID_LEN], struct sb_error *err);

#endif
