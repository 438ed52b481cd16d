#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cli_sandbox.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/sandbox.h"
#include "base/units.h"

enum ls_column { COL_NAME, COL_STATE, COL_KIND, COL_IDLE, COL_EXPIRES, COL_NET, COL_IMAGE, COL_OWNER, COL_COUNT };

static const char *const headers[COL_COUNT] = {
	N_("NAME"), N_("STATE"), N_("KIND"), N_("IDLE"), N_("EXPIRES"), N_("NET"), N_("IMAGE"), N_("OWNER"),
};

#define CELL_MAX 256

static void row_cells(char cells[COL_COUNT][CELL_MAX], const struct sb_sandbox_info *s)
{
	snprintf(cells[COL_NAME], CELL_MAX, "%s", s->rec.name);
	sb_sandbox_state_text(cells[COL_STATE], CELL_MAX, s);
	snprintf(cells[COL_KIND], CELL_MAX, "%s", sb_sandbox_kind_name(s->rec.kind));
	sb_units_format_duration(cells[COL_IDLE], CELL_MAX, s->idle_seconds);
	sb_units_format_duration(cells[COL_EXPIRES], CELL_MAX, s->expires_in);
	snprintf(cells[COL_NET], CELL_MAX, "%s", sb_cli_onoff(s->rec.network));
	sb_cli_short_image(cells[COL_IMAGE], CELL_MAX, s->rec.image_ref, s->rec.image_digest);
	snprintf(cells[COL_OWNER], CELL_MAX, "%s", s->rec.owner ? s->rec.owner : "");
}

/* Terminal columns of UTF-8 text (translated headings), one per code point. */
static int text_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_row(char cells[COL_COUNT][CELL_MAX], const int width[COL_COUNT])
{
	for (int c = 0; c < COL_COUNT; c++) {
		if (c == COL_COUNT - 1)
			printf("%s\n", cells[c]);
		else
			printf("%s%*s", cells[c], width[c] - text_width(cells[c]) + 2, "");
	}
}

/* Columns as wide as their widest cell, as docker ps prints them. */
static void print_table(const struct sb_sandbox_info *list, size_t n)
{
	char (*cells)[COL_COUNT][CELL_MAX] = calloc(n + 1, sizeof(*cells));
	int width[COL_COUNT] = { 0 };

	if (!cells)
		return;
	for (int c = 0; c < COL_COUNT; c++)
		snprintf(cells[0][c], CELL_MAX, "%s", _(headers[c]));
	for (size_t i = 0; i < n; i++)
		row_cells(cells[i + 1], &list[i]);
	for (size_t i = 0; i <= n; i++)
		for (int c = 0; c < COL_COUNT; c++)
			if (text_width(cells[i][c]) > width[c])
				width[c] = text_width(cells[i][c]);
	for (size_t i = 0; i <= n; i++)
		print_row(cells[i], width);
	free(cells);
}

static int ls_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_sandbox_info *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int rc, json = 0, status = SB_EXIT_OK;

	if ((rc = sb_cli_parse_json(&json, NULL, &sb_cmd_ls, argc, argv, NULL)) != 0)
		return rc;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_sandbox_list(&list, &n, root, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			arr = sb_json_append(arr, sb_sandbox_info_json(&list[i]));
		status = sb_cli_print_json(arr);
	} else {
		print_table(list, n);
	}
	sb_sandbox_list_free(list, n);
	return status;
}

const struct sb_cli_command sb_cmd_ls = {
	.name = "ls",
	.synopsis = "[--json]",
	.summary = N_("list sandboxes with their state, idle time and time to expiry"),
	.help = N_("  --json    print the list as JSON\n"),
	.run = ls_run,
};
