/* The --since forms of the timeline (sb_timeline_parse_since, timeline.h):
 * pure parsing, no files. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "base/i18n.h"
#include "base/units.h"
#include "sandbox/timeline.h"

/* n decimal digits at *p into *v; advances *p. */
static int digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		*v = *v * 10 + (**p - '0');
	}
	return 0;
}

/* "YYYY-MM-DD[(T| )HH:MM[:SS]][Z]" -> unix seconds; -1 when it is not that. */
static long long parse_time(const char *s)
{
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, sec = 0, utc = 0;

	if (digits(&s, 4, &y) < 0 || *s++ != '-' || digits(&s, 2, &mo) < 0 || *s++ != '-' || digits(&s, 2, &d) < 0)
		return -1;
	if (*s == 'T' || *s == ' ') {
		s++;
		if (digits(&s, 2, &h) < 0 || *s++ != ':' || digits(&s, 2, &mi) < 0)
			return -1;
		if (*s == ':' && (s++, digits(&s, 2, &sec) < 0))
			return -1;
	}
	if (*s == 'Z')
		utc = 1, s++;
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
		return -1;
	tm = (struct tm){ .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi,
			  .tm_sec = sec, .tm_isdst = -1 };
	time_t t = utc ? timegm(&tm) : mktime(&tm);
	/* a day the month does not have (02-30) comes back normalised */
	if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -1;
	return (long long)t;
}

int sb_timeline_parse_since(long long *out, const char *text, long long now_ms, struct sb_error *err)
{
	const char *s = text ? text : "";
	size_t n = strspn(s, "0123456789");
	long long v = -1;

	*out = 0;
	if (n > 0 && n < 13 && s[n] == '\0')
		v = strtoll(s, NULL, 10) * 1000;
	else if (n > 0 && n < 13 && s[n + 1] == '\0' && sb_units_parse_duration(s) >= 0)
		v = now_ms - sb_units_parse_duration(s) * 1000;
	else if ((v = parse_time(s)) >= 0)
		v *= 1000;
	if (v < 0)
		return sb_error_set(err, SB_ERR_INVALID,
				    _("invalid time '%s': give a duration (10m), a time (2026-12-01T10:00:00) or unix seconds"),
				    s);
	*out = v;
	return 0;
}
