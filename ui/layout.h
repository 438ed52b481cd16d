/* Where the panes go for a given screen size. */
#ifndef UI_LAYOUT_H
#define UI_LAYOUT_H

struct ui_rect {
	int y, x, h, w;
};

#define UI_MIN_ROWS 16
#define UI_MIN_COLS 64

struct ui_layout {
	int rows, cols;
	int too_small;               /* below UI_MIN_ROWS x UI_MIN_COLS: only a message */
	struct ui_rect title;        /* top line: name, root, counts, shell tabs */
	struct ui_rect list;         /* the focused list pane (sandboxes, images, mounts) */
	struct ui_rect details;      /* h == 0 when the screen is too small for it */
	struct ui_rect shell;        /* an attached shell, when one has the focus */
	struct ui_rect events;       /* the event log */
	struct ui_rect status;       /* bottom line: hints and messages */
};

void ui_layout_compute(struct ui_layout *l, int rows, int cols);
/* The centred box for a dialog of at most h x w. */
struct ui_rect ui_layout_dialog(const struct ui_layout *l, int h, int w);

#endif
