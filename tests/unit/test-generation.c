/* The change counters of a state root (base/generation.h): what writes state
 * bumps them, in this process or another; a reader sees the counter move and
 * its descriptor wake up. No runsc. */
#include "config.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/generation.h"
#include "base/root.h"
#include "sandbox/sandbox.h"
#include "testutil.h"

static char *dir;
static struct sb_root *root;
static struct sb_generation *gen;

static void setup(void)
{
	dir = tu_tempdir("gen");
	cr_assert_not_null(dir);
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	cr_assert_eq(sb_generation_open(&gen, root, NULL), 0);
}

static void teardown(void)
{
	sb_generation_close(gen);
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
}

TestSuite(generation, .init = setup, .fini = teardown, .timeout = 30);

static unsigned long long counter(enum sb_generation_slot slot)
{
	unsigned long long c[SB_GEN_SLOTS];
	struct sb_error err;

	cr_assert_eq(sb_generation_read(c, gen, &err), 0, "%s", err.msg);
	return c[slot];
}

static int woken(void)
{
	struct pollfd p = { .fd = sb_generation_fd(gen), .events = POLLIN };

	cr_assert_geq(p.fd, 0, "inotify is there on Linux 6");
	return poll(&p, 1, 0) == 1;
}

Test(generation, counts_bumps_per_slot)
{
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 0);
	cr_assert_eq(counter(SB_GEN_IMAGES), 0);
	cr_assert_not(woken());
	cr_assert_eq(sb_generation_bump(root, SB_GEN_SANDBOXES, NULL), 0);
	cr_assert(woken(), "a bump wakes the reader");
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 1);
	cr_assert_not(woken(), "reading drains the wake-up");
	cr_assert_eq(counter(SB_GEN_IMAGES), 0);
	cr_assert_eq(sb_generation_bump(root, SB_GEN_IMAGES, NULL), 0);
	cr_assert_eq(counter(SB_GEN_IMAGES), 1);
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 1);
}

Test(generation, concurrent_writers_lose_no_bump)
{
	pid_t kids[4];

	for (int k = 0; k < 4; k++) {
		if ((kids[k] = fork()) == 0) {
			struct sb_root *r;
			if (sb_root_open(&r, dir, NULL) < 0)
				_exit(1);
			for (int i = 0; i < 250; i++)
				if (sb_generation_bump(r, SB_GEN_SANDBOXES, NULL) < 0)
					_exit(1);
			_exit(0);
		}
		cr_assert_gt(kids[k], 0);
	}
	for (int k = 0; k < 4; k++) {
		int status;
		cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 1000);
}

Test(generation, record_writes_and_touches_bump_the_sandboxes)
{
	struct sb_record rec = {
		.name = "box", .id = "sb-0123456789abcdef", .created = 1700000000, .image_ref = "",
		.kind = SB_KIND_PERMANENT, .expiry_action = SB_EXPIRY_RM, .exchange = 1,
		.owner = "", .state = SB_STATE_STOPPED, .reason = "test",
	};
	char *sdir = sb_path_join(dir, "sandboxes/box");
	unsigned long long before = counter(SB_GEN_SANDBOXES);

	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	cr_assert_eq(sb_fs_mkdirs(sdir, 0700, NULL), 0);
	cr_assert_eq(sb_record_save(root, &rec, NULL), 0);
	cr_assert_gt(counter(SB_GEN_SANDBOXES), before, "a record write counts");
	before = counter(SB_GEN_SANDBOXES);
	cr_assert_eq(sb_sandbox_touch(root, "box", NULL), 0);
	cr_assert_gt(counter(SB_GEN_SANDBOXES), before, "a touch counts");
	cr_assert_eq(counter(SB_GEN_IMAGES), 0, "images did not change");
	free(sdir);
}

Test(generation, a_reader_survives_the_file_being_replaced)
{
	char *path = sb_path_join(dir, "generation");

	cr_assert_eq(sb_generation_bump(root, SB_GEN_SANDBOXES, NULL), 0);
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 1);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(sb_generation_bump(root, SB_GEN_SANDBOXES, NULL), 0);
	cr_assert_eq(sb_generation_bump(root, SB_GEN_SANDBOXES, NULL), 0);
	/* the read sees the old file unlinked, re-attaches and reads the new one */
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 2);
	cr_assert_eq(sb_generation_bump(root, SB_GEN_SANDBOXES, NULL), 0);
	cr_assert(woken(), "the new file is watched");
	cr_assert_eq(counter(SB_GEN_SANDBOXES), 3);
	free(path);
}
