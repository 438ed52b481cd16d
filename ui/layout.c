/* Screen layout: title line, the list pane with the details pane beside or
 * below it (or an attached shell across both), the event log, the status line. */
#include "config.h"

#include "layout.h"

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void ui_layout_compute(struct ui_layout *l, int rows, int cols)
{
	int events_h, main_h, details_w, details_h;

	*l = (struct ui_layout){ .rows = rows, .cols = cols };
	l->too_small = rows < UI_MIN_ROWS || cols < UI_MIN_COLS;
	if (l->too_small)
		return;
	events_h = clamp(rows / 6, 3, 8) + 1;     /* + its header line */
	main_h = rows - 2 - events_h;
	l->title = (struct ui_rect){ 0, 0, 1, cols };
	if (cols >= 150) {
		/* wide: details beside the list */
		details_w = clamp(cols * 30 / 100, 40, 70);
		l->list = (struct ui_rect){ 1, 0, main_h, cols - details_w };
		l->details = (struct ui_rect){ 1, cols - details_w, main_h, details_w };
	} else if (main_h >= 24) {
		/* tall: details under the list, which keeps every column */
		details_h = main_h * 2 / 5;
		l->list = (struct ui_rect){ 1, 0, main_h - details_h, cols };
		l->details = (struct ui_rect){ 1 + main_h - details_h, 0, details_h, cols };
	} else {
		l->list = (struct ui_rect){ 1, 0, main_h, cols };
	}
	l->shell = (struct ui_rect){ 1, 0, main_h, cols };
	l->events = (struct ui_rect){ 1 + main_h, 0, events_h, cols };
	l->status = (struct ui_rect){ rows - 1, 0, 1, cols };
}

struct ui_rect ui_layout_dialog(const struct ui_layout *l, int h, int w)
{
	struct ui_rect r;

	r.h = clamp(h, 3, l->rows - 2);
	r.w = clamp(w, 20, l->cols - 4);
	r.y = (l->rows - r.h) / 2;
	r.x = (l->cols - r.w) / 2;
	return r;
}
