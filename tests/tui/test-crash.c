/* A workbench that dies of a fatal signal gives the terminal back as it was
 * before curses: line mode and echo, the main screen, the cursor. Its handler
 * may only make async-signal-safe calls (no endwin), so this is a test of
 * what those calls restore. */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>

#include "harness.h"
#include "testutil.h"

#define WAIT 30000
#define HELP "Enter shell"

static void crash_with(int sig)
{
	char *root = tu_tempdir("crash");
	cr_assert_not_null(root);
	const char *argv[] = { "--root", root, "tui", "--readonly", NULL };
	struct tui *t = tui_start(24, 80, argv, NULL);
	struct termios tio;

	cr_assert_not_null(t);
	/* the read-only workbench on an empty root: its help line is up (a
	 * sanitizer's report after the crash may name the binary, never this) */
	cr_assert_eq(tui_wait_text(t, HELP, WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_termios(t, &tio), 0);
	cr_assert_eq(tio.c_lflag & (ICANON | ECHO), 0, "curses runs raw, without echo");
	cr_assert_eq(kill(tui_pid(t), sig), 0);
	/* the alternate screen is left: the workbench's frame is gone */
	cr_assert_eq(tui_wait_gone(t, HELP, WAIT), 0, "%s", tui_screen(t));
	cr_assert_eq(tui_termios(t, &tio), 0);
	cr_assert_eq(tio.c_lflag & (ICANON | ECHO), (tcflag_t)(ICANON | ECHO), "line mode and echo are back");
	int status = tui_finish(t, WAIT);
	cr_assert_gt(status, 128, "the signal still ends it (status %d)", status);
	tu_remove(root);
	free(root);
}

Test(crash, segv_restores_the_terminal)
{
	crash_with(SIGSEGV);
}

Test(crash, abort_restores_the_terminal)
{
	crash_with(SIGABRT);
}
