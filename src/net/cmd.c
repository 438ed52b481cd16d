#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/i18n.h"
#include "internal.h"
#include "net/network.h"
#include "base/proc.h"

static int input_fd(const char *input, struct sb_error *err)
{
	int fd = memfd_create("sandbench-input", MFD_CLOEXEC);
	size_t len = strlen(input), done = 0;

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create a memory file"));
	while (done < len) {
		ssize_t w = write(fd, input + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			return sb_error_errno(err, SB_ERR_IO, e, _("cannot write a memory file"));
		}
		done += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* "ip -n ns addr add ..." for messages, cut to the buffer. */
static const char *command_line(char *buf, size_t size, const char *const *argv)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && n + 1 < size; i++) {
		int w = snprintf(buf + n, size - n, "%s%s", i ? " " : "", argv[i]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

int sb_net_cmd(char **out, const char *const *argv, const char *input, struct sb_error *err)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	char line[300], cmd[200];
	int rc;

	if (out)
		*out = NULL;
	opts.timeout_ms = 20000;
	if (input && (opts.stdin_fd = input_fd(input, err)) < 0)
		return opts.stdin_fd;
	rc = sb_proc_run(&res, (char *const *)argv, &opts, err);
	if (opts.stdin_fd >= 0)
		close(opts.stdin_fd);
	if (rc == 0 && res.status == 127)
		rc = sb_error_set(err, SB_ERR_PREREQ, _("%s is not installed; network needs it (apt-get install iproute2 nftables)"),
				  argv[0]);
	else if (rc == 0 && res.status != 0)
		rc = sb_error_set(err, SB_ERR_IO, _("'%s' failed (exit %d): %s"), command_line(cmd, sizeof(cmd), argv),
				  res.status, sb_proc_last_line(&res, line, sizeof(line)));
	if (rc == 0 && out) {
		*out = res.out;
		res.out = NULL;
	}
	sb_proc_result_clear(&res);
	return rc;
}
