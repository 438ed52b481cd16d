#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/hooks.h"
#include "base/host.h"
#include "base/i18n.h"

int sb_host_boot_id(char out[SB_HOST_BOOT_ID_LEN], struct sb_error *err)
{
	static char cached[SB_HOST_BOOT_ID_LEN];
	const char *fake = sb_hooks.boot_id ? sb_hooks.boot_id() : NULL;
	int fd;

	/* tests simulate a host restart with another id */
	if (fake && *fake && strlen(fake) < SB_HOST_BOOT_ID_LEN) {
		memcpy(out, fake, strlen(fake) + 1);
		return 0;
	}
	/* the same for the whole life of this process */
	if (!cached[0] && (fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, cached, SB_HOST_BOOT_ID_LEN - 1);
		close(fd);
		cached[n == SB_HOST_BOOT_ID_LEN - 1 ? n : 0] = '\0';
	}
	if (!cached[0]) {
		out[0] = '\0';
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the host's boot id"));
	}
	memcpy(out, cached, SB_HOST_BOOT_ID_LEN);
	return 0;
}
