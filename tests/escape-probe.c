/* Run inside a sandbox by the escape suites (built static: busybox cannot
 * open O_PATH descriptors). argv[1] is a file on a read-only mount; each
 * attempt to write it, move it or link it through an O_PATH descriptor must
 * fail. Prints what succeeded; exits 1 if anything did. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int escaped;

static void expect_fail(const char *what, int rc)
{
	if (rc >= 0) {
		printf("ESCAPED: %s\n", what);
		escaped++;
	}
}

int main(int argc, char **argv)
{
	char link[64], copy[4096];
	const char *base;
	int fd, dfd, n = 0;

	if (argc != 2)
		return 2;
	snprintf(copy, sizeof(copy), "%s", argv[1]);
	if ((fd = open(argv[1], O_PATH)) < 0 || (dfd = open(dirname(copy), O_PATH | O_DIRECTORY)) < 0) {
		perror(argv[1]);
		return 2;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
#define TRY(what, call) (n++, expect_fail(what, call))
	TRY("reopen O_WRONLY", open(link, O_WRONLY));
	TRY("reopen O_RDWR", open(link, O_RDWR));
	TRY("reopen O_WRONLY|O_TRUNC", open(link, O_WRONLY | O_TRUNC));
	TRY("fchmod", fchmod(fd, 0666));
	TRY("chmod of the fd link", chmod(link, 0666));
	TRY("fchmodat AT_EMPTY_PATH", fchmodat(fd, "", 0666, AT_EMPTY_PATH));
	TRY("fchownat AT_EMPTY_PATH", fchownat(fd, "", 1, 1, AT_EMPTY_PATH));
	TRY("truncate of the fd link", truncate(link, 0));
	TRY("linkat AT_EMPTY_PATH", linkat(fd, "", AT_FDCWD, "/workspace/probe-l1", AT_EMPTY_PATH));
	TRY("linkat of the fd link", linkat(AT_FDCWD, link, AT_FDCWD, "/workspace/probe-l2", AT_SYMLINK_FOLLOW));
	TRY("linkat in the mount", linkat(AT_FDCWD, link, dfd, "probe-l3", AT_SYMLINK_FOLLOW));
	TRY("openat O_CREAT beside", openat(dfd, "probe-new", O_CREAT | O_WRONLY, 0644));
	TRY("renameat beside", renameat(dfd, base, dfd, "probe-moved"));
	TRY("renameat out", renameat(dfd, base, AT_FDCWD, "/workspace/probe-moved"));
	TRY("unlinkat", unlinkat(dfd, base, 0));
	TRY("mkdirat", mkdirat(dfd, "probe-dir", 0755));
	TRY("symlinkat", symlinkat("/etc", dfd, "probe-sym"));
	TRY("utimensat of the fd link", utimensat(AT_FDCWD, link, NULL, 0));
	printf("refused %d of %d\n", n - escaped, n);
	return escaped > 0;
}
