/* Replays each fuzz target's corpus (tests/fuzz/corpus/<target>/) plus every
 * truncation of each file: a crash or sanitizer report fails the test. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "fuzz.h"
#include "testutil.h"

#ifndef FUZZ_CORPUS
#error "FUZZ_CORPUS names the target's corpus directory"
#endif

Test(fuzz, corpus_replays_cleanly)
{
	char *dir = tu_srcpath("tests/fuzz/corpus/" FUZZ_CORPUS);
	DIR *d = opendir(dir);
	struct dirent *de;
	int files = 0;

	cr_assert_not_null(d, "no corpus at %s", dir);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char *path = sb_path_join(dir, de->d_name), *data;
		size_t len;
		cr_assert_eq(sb_fs_read_file(&data, &len, path, 1 << 20, NULL), 0, "%s", path);
		for (size_t cut = 0; cut <= len; cut++)
			LLVMFuzzerTestOneInput((const uint8_t *)data, cut);
		files++;
		free(data);
		free(path);
	}
	closedir(d);
	free(dir);
	cr_assert_gt(files, 0, "the corpus is empty");
}
