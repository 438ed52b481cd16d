/* unpack-layer ROOT LAYER...: applies the layers to the directory ROOT with
 * sb_unpack_layer, then prints the process's peak RSS (KiB) on stderr. The
 * benchmark's driver (tests/bench/bench-unpack); not part of the CLI. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "image/internal.h"

int main(int argc, char **argv)
{
	struct sb_error err = { 0 };
	struct rusage ru;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ROOT LAYER...\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		if (sb_unpack_layer(fd, argv[i], NULL, NULL, &err) < 0) {
			fprintf(stderr, "%s: %s\n", argv[0], err.msg);
			return 1;
		}
	}
	close(fd);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "maxrss_kb %ld\n", ru.ru_maxrss);
	return 0;
}
