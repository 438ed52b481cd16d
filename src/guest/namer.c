/* sandbench-namer: a warm pool member's pre-started process that gives the
 * sandbox its name when it is claimed (docs/pool.md). It runs inside the
 * guest, started at boot with CAP_SYS_ADMIN (its own: no other process of a
 * sandbox has it, and it is in no bounding set), and waits: stdin is a host
 * FIFO of the member's directory. The claim writes the new name and a
 * newline there; the namer sets it as the hostname, writes "ok" (or why
 * not) to stdout, another FIFO, and exits, so that its end tells the claim
 * that the name is set. Linked statically: it must run in any image. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_LEN 63 /* the sandbox names' limit, and the UTS name's 64 bytes with its NUL */

static void say(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(1, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

int main(void)
{
	char name[NAME_MAX_LEN + 2];
	size_t len = 0;

	/* byte by byte up to the newline: nothing after it is taken */
	while (len < sizeof(name)) {
		ssize_t r = read(0, name + len, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (name[len] == '\n')
			break;
		len++;
	}
	if (len == 0 || len > NAME_MAX_LEN || len == sizeof(name)) {
		say("error: no name\n");
		return 1;
	}
	if (sethostname(name, len) < 0) {
		say("error: sethostname: ");
		say(strerror(errno));
		say("\n");
		return 1;
	}
	say("ok\n");
	return 0;
}
