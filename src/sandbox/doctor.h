/* Runtime prerequisites. Everything that would run code checks them first and
 * refuses when one is missing: sandbench fails closed. */
#ifndef SB_DOCTOR_H
#define SB_DOCTOR_H

#include "base/error.h"
#include "base/root.h"

enum sb_check_status {
	SB_CHECK_OK,
	SB_CHECK_WARN,
	SB_CHECK_FAIL,
};

struct sb_check {
	const char *name;              /* "runsc", "root", ... (stable, for --json) */
	enum sb_check_status status;
	char detail[256];              /* what was found */
	const char *fix;               /* how to fix it; NULL when ok */
};

#define SB_DOCTOR_MAX_CHECKS 9

struct sb_doctor_report {
	struct sb_check checks[SB_DOCTOR_MAX_CHECKS];
	int count;
	int failures;
};

enum sb_doctor_flags {
	/* also boot a throw-away sandbox (~150 ms) and load the libraries that
	 * pulls and imports load on first use */
	SB_DOCTOR_FULL = 1 << 0,
};

/* Fills report with every check; returns 0 even when checks fail. */
int sb_doctor_run(struct sb_doctor_report *report, struct sb_root *root, unsigned flags, struct sb_error *err);
/* The fast checks a code-running operation needs; SB_ERR_PREREQ naming the
 * first missing prerequisite and its fix. */
int sb_doctor_require(struct sb_root *root, struct sb_error *err);

#endif
