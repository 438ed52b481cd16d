/* Human units, read from the command line and the config and shown by both
 * front ends: sizes in binary units (what --memory 512m means) and durations. */
#ifndef SB_UNITS_H
#define SB_UNITS_H

#include <stddef.h>

/* "512m", "2g", "64MiB", "1048576" -> bytes; -1 when malformed. */
long long sb_units_parse_size(const char *s);
/* "90", "90s", "30m", "2h", "1d" -> seconds; -1 when malformed. */
long long sb_units_parse_duration(const char *s);

enum sb_units_style {
	SB_UNITS_TEXT,           /* "256.0 MiB": listings and messages */
	SB_UNITS_COMPACT,        /* "256M": narrow table cells */
};

void sb_units_format_size(char *buf, size_t size, unsigned long long bytes, enum sb_units_style style);
/* "42s", "4m05s", "2h07m", "3d04h"; "-" for a negative duration */
void sb_units_format_duration(char *buf, size_t size, long long seconds);

#endif
