/* The filter query of the panes: terms separated by spaces, all of which
 * must match (AND). A term is
 *   text          a substring of one of the row's texts (any case)
 *   /regex/       an extended regular expression against the texts (any case)
 *   field:glob    a field's value matches the glob (owner:plugin:*, label:team=x)
 *   field>dur     a duration field above (or field<dur below) a duration: idle>2h
 *   field>size    a size field likewise, in bytes with units: disk>100M
 *   !term         any of the above, inverted
 * No curses here: tests/unit/test-query runs it against plain rows. */
#ifndef UI_QUERY_H
#define UI_QUERY_H

#include <stddef.h>

#define UI_QUERY_VALUE_MAX 512

/* The values of one field of a row, or (field NULL) the texts a plain term or
 * a regex searches: up to max into vals; returns how many. Durations are in
 * seconds, sizes in bytes, as decimal text. */
typedef size_t (*ui_query_values_fn)(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX],
				     size_t max);

/* The fields a pane offers: their names, and which of them compare as durations or sizes. */
struct ui_query_fields {
	const char *const *names;    /* NULL-terminated */
	const char *const *durations;/* NULL-terminated; NULL: none */
	ui_query_values_fn values;
	const char *const *sizes;    /* NULL-terminated; NULL: none */
};

struct ui_query;

/* Parses text; on a bad query returns -1 with a one-line reason in msg (and
 * *out untouched). "" parses to a query that matches everything. */
int ui_query_parse(struct ui_query **out, const char *text, const struct ui_query_fields *fields, char *msg,
		   size_t msg_size);
int ui_query_match(const struct ui_query *q, const void *row);
void ui_query_free(struct ui_query *q);

#endif
