/* Sandboxes made for a purpose in the workbench: a service with its health,
 * and the warm pool's members, which are a count and never rows (the fixture
 * of test-tui.c). */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "base/root.h"
#include "harness.h"
#include "sandbox/pool.h"
#include "testutil.h"
#include "tuitest.h"

/* A service sandbox lists with its health, which follows the service, and
 * its details name the service and its health check. */
Test(tui, a_service_lists_with_its_health)
{
	struct tu_run r = tu_sandbench(root_dir, NULL, "create", "svc", "--image", image, "--service", "touch /tmp/ok; exec sleep 100000",
			 "--health", "test -f /tmp/ok", "--health-interval", "1s", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_row(t, "svc", "running (healthy)", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "Health check", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_text(t, "test -f /tmp/ok", WAIT), 0, "%s", tui_screen(t));
	r = tu_sandbench(root_dir, NULL, "exec", "svc", "--", "rm", "/tmp/ok", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(tui_wait_row(t, "svc", "running (unhealthy)", WAIT), 0, "%s", tui_screen(t));
	quit(t);
}

/* The warm pool's members are no rows: a count in the title, which follows
 * a claim and the pool's removal. */
Test(tui, warm_pool_is_a_count_in_the_title_not_rows)
{
	cli_ok("pool", "set", image, "--size", "1", NULL);
	cli_ok("pool", "refill", NULL, NULL, NULL, NULL);
	struct tui *t = open_tui(NULL, NULL);

	cr_assert_eq(tui_wait_text(t, "pool 1/1 ready", WAIT), 0, "%s", tui_screen(t));
	cr_assert_null(strstr(tui_screen(t), SB_POOL_PREFIX), "a member is listed: %s", tui_screen(t));
	cli_ok("create", "claimed", "--image", image, NULL, NULL);
	cr_assert_eq(tui_wait_row(t, "claimed", "running", WAIT), 0, "%s", tui_screen(t));
	/* the claimer's refill boots a replacement, which is no row either */
	cr_assert_eq(tui_wait_text(t, "pool 1/1 ready", WAIT), 0, "%s", tui_screen(t));
	cr_assert_null(strstr(tui_screen(t), SB_POOL_PREFIX), "a member is listed: %s", tui_screen(t));
	struct sb_root *root;
	cr_assert_eq(sb_root_open(&root, root_dir, NULL), 0);
	tu_wait_for(tui_refill_ended, root, WAIT);
	sb_root_close(root);
	cli_ok("pool", "rm", "--all", NULL, NULL, NULL);
	cr_assert_eq(tui_wait_gone(t, "ready ", WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_wait_row(t, "claimed", "running", WAIT), 0, "the claimed sandbox is no member: %s", tui_screen(t));
	quit(t);
}
