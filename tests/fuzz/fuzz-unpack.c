/* Fuzz target: the bytes are a layer, unpacked into a scratch root. Besides
 * crashes it checks the promise that matters: nothing appears beside the root. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "fuzz.h"
#include "image/internal.h"

static char *dir, *layer, *root;

static void cleanup(void)
{
	sb_fs_remove_tree(dir, NULL);
}

/* Aborts unless dir holds exactly "layer" and "root". */
static void check_contained(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "layer") &&
		    strcmp(de->d_name, "root")) {
			fprintf(stderr, "fuzz-unpack: '%s' was written outside the root\n", de->d_name);
			abort();
		}
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct sb_unpack_limits limits = { .max_bytes = 1 << 20, .max_entries = 1000 };

	if (!layer) {
		dir = fuzz_scratch_dir("fuzz-unpack");
		atexit(cleanup);
		layer = sb_path_join(dir, "layer");
		root = sb_path_join(dir, "root");
	}
	int fd = open(layer, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) < 0 || mkdir(root, 0755) < 0)
		abort();
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		abort();
	sb_unpack_layer(fd, layer, &limits, NULL, NULL);
	close(fd);
	check_contained();
	if (sb_fs_remove_tree(root, NULL) < 0)
		abort();
	return 0;
}
