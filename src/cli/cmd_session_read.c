#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vterm.h>

#include "cli.h"
#include "cmd_session.h"
#include "base/buf.h"
#include "base/i18n.h"

enum format { FORMAT_RAW, FORMAT_CLEAN, FORMAT_SCREEN };

static const char *const format_names[] = { [FORMAT_RAW] = "raw", [FORMAT_CLEAN] = "clean", [FORMAT_SCREEN] = "screen" };

static void put_cell(struct sb_buf *b, const VTermScreenCell *cell)
{
	char utf8[8];

	for (int k = 0; k < VTERM_MAX_CHARS_PER_CELL && cell->chars[k]; k++) {
		uint32_t c = cell->chars[k];
		int n = c < 0x80 ? (utf8[0] = (char)c, 1)
		      : c < 0x800 ? (utf8[0] = (char)(0xc0 | c >> 6), utf8[1] = (char)(0x80 | (c & 0x3f)), 2)
		      : c < 0x10000 ? (utf8[0] = (char)(0xe0 | c >> 12), utf8[1] = (char)(0x80 | (c >> 6 & 0x3f)),
				       utf8[2] = (char)(0x80 | (c & 0x3f)), 3)
				    : (utf8[0] = (char)(0xf0 | c >> 18), utf8[1] = (char)(0x80 | (c >> 12 & 0x3f)),
				       utf8[2] = (char)(0x80 | (c >> 6 & 0x3f)), utf8[3] = (char)(0x80 | (c & 0x3f)), 4);
		sb_buf_add(b, utf8, (size_t)n);
	}
	if (!cell->chars[0])
		sb_buf_add(b, " ", 1);
}

char *sb_cli_session_screen(const char *data, size_t len, unsigned short rows, unsigned short cols)
{
	VTerm *vt = vterm_new(rows ? rows : 24, cols ? cols : 80);
	struct sb_buf b = { 0 };

	if (!vt)
		return NULL;
	vterm_set_utf8(vt, 1);
	VTermScreen *vts = vterm_obtain_screen(vt);
	vterm_screen_reset(vts, 1);
	vterm_input_write(vt, data, len);
	vterm_screen_flush_damage(vts);
	int nr, nc;
	vterm_get_size(vt, &nr, &nc);
	size_t keep = 0;   /* the text up to the last non-blank row */
	for (int r = 0; r < nr; r++) {
		size_t start = b.len, line_end = b.len;
		for (int c = 0; c < nc;) {
			VTermScreenCell cell;
			VTermPos pos = { .row = r, .col = c };
			vterm_screen_get_cell(vts, pos, &cell);
			put_cell(&b, &cell);
			if (cell.chars[0] && cell.chars[0] != ' ')
				line_end = b.len;
			c += cell.width > 0 ? cell.width : 1;
		}
		b.len = line_end;
		sb_buf_add(&b, "\n", 1);
		if (line_end > start)
			keep = b.len;
	}
	b.len = keep;
	vterm_free(vt);
	return sb_buf_steal(&b, NULL);
}

static char *formatted(const struct sb_session_read_result *r, enum format f, unsigned short rows,
		       unsigned short cols, size_t *len)
{
	if (f == FORMAT_CLEAN)
		return sb_session_text_clean(r->output, r->len, len);
	if (f == FORMAT_SCREEN) {
		char *s = sb_cli_session_screen(r->output, r->len, rows, cols);
		*len = s ? strlen(s) : 0;
		return s;
	}
	char *copy = malloc(r->len + 1);
	if (copy) {
		memcpy(copy, r->output, r->len);
		copy[r->len] = '\0';
		*len = r->len;
	}
	return copy;
}

static int read_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "since", required_argument, NULL, 's' },     { "wait-idle", required_argument, NULL, 'i' },
		{ "first-timeout", required_argument, NULL, 'f' }, { "max-wait", required_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'F' },    { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct sb_cli_command *cmd = &sb_cmd_session_read;
	struct sb_session_read_opts o = { .since = -1 };
	struct sb_session_read_result r;
	enum format f = FORMAT_RAW;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, json = 0, found;
	char *end;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.since = strtoll(optarg, &end, 10);
			if (*end || end == optarg || o.since < 0)
				return sb_cli_usage_error("session", cmd, _("invalid offset '%s'"), optarg);
			break;
		case 'i':
		case 'f':
		case 'm':
			if (sb_cli_seconds_ms(opt == 'i' ? &o.wait_idle_ms : opt == 'f' ? &o.first_timeout_ms : &o.max_wait_ms,
					      optarg) < 0)
				return sb_cli_usage_error("session", cmd, _("invalid time '%s' (seconds)"), optarg);
			break;
		case 'F':
			found = 0;
			for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
				if (!strcmp(optarg, format_names[i]))
					f = (enum format)i, found = 1;
			if (!found)
				return sb_cli_usage_error("session", cmd, _("--format takes raw, clean or screen"));
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error("session", cmd, _("invalid option"));
		}
	}
	if (argc - optind != 2)
		return sb_cli_usage_error("session", cmd, _("expected a sandbox name and a session id"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	unsigned short rows = 24, cols = 80;
	if (f == FORMAT_SCREEN) {
		struct sb_session_info info;
		if (sb_session_inspect(&info, root, argv[optind], argv[optind + 1], &err) < 0)
			return sb_cli_fail(&err);
		rows = info.rows ? info.rows : rows;
		cols = info.cols ? info.cols : cols;
		sb_session_info_clear(&info);
	}
	if (sb_session_read(&r, root, argv[optind], argv[optind + 1], &o, &err) < 0)
		return sb_cli_fail(&err);
	size_t len = 0;
	char *text = formatted(&r, f, rows, cols, &len);
	if (!text) {
		rc = SB_EXIT_FAILURE;
	} else if (json) {
		rc = sb_cli_print_json(sb_session_read_json(&r, text, len));
	} else {
		rc = fwrite(text, 1, len, stdout) == len ? SB_EXIT_OK : SB_EXIT_FAILURE;
	}
	free(text);
	sb_session_read_result_clear(&r);
	return rc;
}

const struct sb_cli_command sb_cmd_session_read = {
	.name = "read",
	.synopsis = "NAME ID [--since OFF] [--wait-idle S] [--first-timeout S] [--max-wait S] [--format raw|clean|screen] "
		    "[--json]",
	.summary = N_("read a session's output from an offset until the prompt is back, a pause or a deadline"),
	.help = N_("  --since OFF          from this output offset (default: the last input's)\n"
		   "  --wait-idle S        return after S seconds without output\n"
		   "  --first-timeout S    return when nothing came within S seconds\n"
		   "  --max-wait S         return after S seconds in any case\n"
		   "  --format F           raw (bytes, whole characters), clean (no escape sequences,\n"
		   "                       the last \\r segment of each line) or screen (the terminal's screen)\n"
		   "  --json               the output with offset, state, exit_code, prompt, dialog, reason\n"
		   "Without a wait option it returns what there is now.\n"),
	.run = read_run,
};
