/* The workbench's shared state: the model (sandboxes, images, mounts), the
 * view (panes, focus, overlays) and the glue between the modules of ui/.
 * Input handlers change this state and mark it dirty; app.c renders once per
 * loop iteration. */
#ifndef UI_UI_H
#define UI_UI_H

#include <curses.h>
#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "keys.h"
#include "layout.h"
#include "base/generation.h"
#include "base/root.h"
#include "sandbox/sandbox.h"

struct ui_app;

/* Entry point (src/cli/cmd_tui.c): runs until quit; returns an exit status. */
struct ui_options {
	const char *root_path;       /* NULL: $SANDBENCH_ROOT or the default */
	int readonly;                /* refuse every change */
	int no_reap;                 /* no reaper while open (what expired stays for the planner) */
};
int ui_run(const struct ui_options *opts);

/* ---- list panes (pane_sandboxes.c, pane_images.c, pane_mounts.c,
 * pane_sessions.c, pane_timeline.c) ---- */
enum ui_pane_id { UI_PANE_SANDBOXES, UI_PANE_IMAGES, UI_PANE_MOUNTS, UI_PANE_SESSIONS, UI_PANE_TIMELINE, UI_PANE_COUNT };

struct ui_pane {
	const char *title;                       /* N_() */
	/* rows of the (filtered, sorted) view */
	size_t (*rows)(struct ui_app *app);
	void (*draw)(struct ui_app *app, WINDOW *w, int focused);
	/* the details pane's lines for the selected row */
	void (*details)(struct ui_app *app, size_t row, void (*line)(void *ctx, const char *label, const char *value, int warn), void *ctx);
	/* 1 when handled */
	int (*action)(struct ui_app *app, enum ui_action a);
	const enum ui_action *hints;             /* UI_ACT_NONE-terminated, for the status line */
	/* what its filter query (filter.c) looks at, NULL: no filter ('/' is the
	 * pane's own); refilter applies a changed query to the view */
	const struct ui_query_fields *fields;
	void (*refilter)(struct ui_app *app);
};

extern const struct ui_pane ui_pane_sandboxes, ui_pane_images, ui_pane_mounts, ui_pane_sessions, ui_pane_timeline;
/* by enum ui_pane_id (app.c) */
extern const struct ui_pane *const ui_panes[UI_PANE_COUNT];

struct ui_pane_view {
	size_t selected, top;                    /* selected row, first visible row */
};

/* ---- the sandbox model ---- */
enum ui_sb_column {
	UI_COL_NAME, UI_COL_STATE, UI_COL_KIND, UI_COL_IDLE, UI_COL_EXPIRES, UI_COL_NET,
	UI_COL_IMAGE, UI_COL_OWNER, UI_COL_DISK, UI_COL_CPU, UI_COL_MEMORY, UI_COL_TASKS, UI_COL_COUNT
};

struct ui_event;
struct ui_query;
struct ui_query_fields;

/* A prompt's history (prompt.c): Up and Down walk it. */
#define UI_HISTORY_MAX 50
struct ui_history {
	char *items[UI_HISTORY_MAX];
	size_t n, pos;
};
struct ui_shell;
struct ui_job;

enum ui_overlay { UI_OV_NONE, UI_OV_VIEWER, UI_OV_FORM, UI_OV_CONFIRM, UI_OV_FILTER, UI_OV_SHELLS, UI_OV_PROMPT, UI_OV_DIFF, UI_OV_CMDLOG, UI_OV_COMMAND,
		  UI_OV_CLEANUP, UI_OV_EXPOSURE, UI_OV_PROCS };

/* Running sandboxes whose resources the list shows (a few cgroup reads each
 * per refresh): as many as a screen shows. */
#define UI_MEMUSE_MAX 24
/* Samples of the selected sandbox's history graph (one per STATS_MS: 96 s). */
#define UI_RES_HISTORY 32

struct ui_app {
	struct ui_options opts;
	struct sb_root *root;
	struct ui_keymap keys;
	struct ui_layout layout;
	int dirty;                               /* render at the end of this iteration */
	int quit;
	long long now;                           /* unix seconds, set once per iteration */

	/* sandboxes: the records, and the view's order after filter and sort */
	struct sb_sandbox_info *sbx;
	size_t n_sbx;
	int pool_ready, pool_size;               /* the warm pool's members (docs/pool.md), not listed */
	size_t *order;
	size_t n_order;
	enum ui_sb_column sort_col;
	int sort_reverse;
	/* each pane's query in force (query.h; filter.c), parsed (NULL: all) */
	struct ui_pane_filter {
		char text[128];
		struct ui_query *query;
	} filters[UI_PANE_COUNT];
	enum ui_pane_id filter_pane;             /* the pane the filter line edits */
	char filter_edit[128];                   /* the filter line while it is edited */
	char filter_before[128];                 /* the query in force when it opened */
	char filter_error[192];                  /* why the edited query is refused */
	struct ui_history filter_hist, cmd_hist;
	/* marked sandboxes (marks.c), by name: the bulk actions' targets */
	char (*marks)[SB_SANDBOX_NAME_MAX + 1];
	size_t n_marks;
	char last_mark[SB_SANDBOX_NAME_MAX + 1]; /* where a range mark starts */
	enum ui_action bulk_action;              /* waiting for its confirmation */
	int listed;                              /* the first listing is done */
	/* the library's change counters, and their values at our last listings */
	struct sb_generation *gen;
	unsigned long long gen_seen[SB_GEN_SLOTS];
	int gen_failed;                          /* they cannot be read: re-read on a timer */

	/* panes */
	enum ui_pane_id pane;
	struct ui_pane_view views[UI_PANE_COUNT];
	WINDOW *w_title, *w_list, *w_details, *w_events, *w_status, *w_shell, *w_overlay;

	/* attached shells; focus_shell >= 0 when one has the keyboard */
	struct ui_shell **shells;
	size_t n_shells;
	int focus_shell;

	/* overlays (one at a time) */
	enum ui_overlay overlay;
	void *overlay_state;

	/* background operations (jobs.c) */
	struct ui_job *jobs;
	int spinner;

	/* the status line's message */
	char message[256];
	int message_error;
	long long message_until;

	/* live resources of the selected and the first running sandboxes of
	 * the list (resources.c): the CPU, MEM and PIDS columns */
	struct ui_memuse {
		char name[SB_SANDBOX_NAME_MAX + 1];
		unsigned long long used, limit, cpu_ns, tasks;
		long long at_ms;                 /* when sampled (monotonic) */
		double cpu_pct;                  /* since the sample before; -1: not yet known */
	} memuse[UI_MEMUSE_MAX];
	size_t n_memuse;
	void *resources;                         /* history and disk cache (resources.c) */

	/* images (pane_images.c keeps its own list) */
	void *images;
	/* the sessions and the timeline of the selected sandbox, the session
	 * mirrored (it has the screen while open), the diff view's state */
	void *sessions, *timeline, *mirror, *diff;
};

/* app.c */
void ui_app_message(struct ui_app *app, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Re-reads the sandboxes now (changes the library counts reload them by themselves). */
void ui_app_reload(struct ui_app *app);
/* Notes the change counter of slot before a listing of it. */
void ui_app_note_generation(struct ui_app *app, enum sb_generation_slot slot);
/* The sandbox of the selected row of the Sandboxes pane, NULL if none. */
struct sb_sandbox_info *ui_app_selected_sandbox(struct ui_app *app);
struct sb_sandbox_info *ui_app_find_sandbox(struct ui_app *app, const char *name);
/* Refuses (with a message) when --readonly; returns 1 when allowed. */
int ui_app_may_change(struct ui_app *app, enum ui_action a);
/* Keeps the selection of the pane inside its rows and visible in h rows. */
void ui_app_clamp_view(struct ui_app *app, enum ui_pane_id pane, size_t rows, int h);
/* Moves the selection of the focused pane by a list-movement action; 1 if it was one. */
int ui_app_move(struct ui_app *app, enum ui_action a, size_t rows, int page);

/* pane_sandboxes.c: sort and filter into app->order; the selection stays on
 * the sandbox named keep (NULL: on the one selected now) */
void ui_sandboxes_rebuild(struct ui_app *app, const char *keep);
/* resources.c: samples the selected and the first UI_MEMUSE_MAX running
 * sandboxes (a quiet job) and walks the disk of a few listed ones whose
 * size is unknown, changed (state, activity) or due (10 s running, 60 s not) */
void ui_resources_poll(struct ui_app *app);
const struct ui_memuse *ui_resources_find(const struct ui_app *app, const char *name);
/* The disk of a sandbox as last measured; NULL while not known yet. */
struct sb_disk_usage;
const struct sb_disk_usage *ui_resources_disk(const struct ui_app *app, const char *name);
/* CPU, memory, tasks, disk and the history graph of s for the details pane. */
void ui_resources_details(struct ui_app *app, const struct sb_sandbox_info *s,
			  void (*line)(void *, const char *, const char *, int), void *ctx);
void ui_resources_free(struct ui_app *app);
const char *ui_sb_column_name(enum ui_sb_column c);
/* "python:3.12@3f2a1b0c9d8e" */
void ui_format_image(char *buf, size_t size, const char *ref, const char *digest);

/* pane_images.c: the image references the create form offers */
size_t ui_images_count(struct ui_app *app);
const char *ui_images_ref(struct ui_app *app, size_t i);
/* Re-lists the images now (changes the library counts re-list them by themselves). */
void ui_images_reload(struct ui_app *app);
void ui_images_free(struct ui_app *app);

/* pane_sessions.c: re-lists the selected sandbox's sessions when the
 * selection moved to another sandbox, when force, or once a second */
void ui_sessions_refresh(struct ui_app *app, int force);
void ui_sessions_free(struct ui_app *app);
/* "2, 1 running" for the selected sandbox name into buf: 1, else 0 */
int ui_sessions_summary(struct ui_app *app, const char *name, char *buf, size_t size);

/* session_view.c: one session mirrored read-only, taken over on request */
int ui_mirror_open(struct ui_app *app, const char *sandbox, const char *id);
void ui_mirror_close(struct ui_app *app);
int ui_mirror_active(struct ui_app *app);
int ui_mirror_pollfds(struct ui_app *app, struct pollfd *pfd, int max);
void ui_mirror_io(struct ui_app *app, const struct pollfd *pfd, int n);
/* items are buffered: the loop must not wait */
int ui_mirror_busy(struct ui_app *app);
int ui_mirror_want_render(struct ui_app *app);
void ui_mirror_key(struct ui_app *app, int key, int is_fn);
void ui_mirror_draw(struct ui_app *app, int force);
void ui_mirror_resize(struct ui_app *app);

/* pane_timeline.c: the selected sandbox's timeline, followed through its watch */
int ui_timeline_pollfds(struct ui_app *app, struct pollfd *pfd, int max);
void ui_timeline_io(struct ui_app *app, const struct pollfd *pfd, int n);
void ui_timeline_free(struct ui_app *app);

/* view_diff.c: what a sandbox changed (an overlay), and copying a file out */
void ui_diff_open(struct ui_app *app, const char *name);
void ui_diff_draw(struct ui_app *app);
void ui_diff_key(struct ui_app *app, int key);
void ui_diff_free(struct ui_app *app);
/* Asks for the host path (initial: the file's name in the current directory),
 * then copies name:path out in a job. */
void ui_copy_out_ask(struct ui_app *app, const char *name, const char *path);
/* Asks for the path inside name first (initial may be NULL), then as above. */
void ui_copy_out_ask_path(struct ui_app *app, const char *name, const char *initial);

/* pane_details.c */
void ui_details_draw(struct ui_app *app, WINDOW *w);

/* eventlog.c: lifecycle events with reasons */
void ui_event_add(struct ui_app *app, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Logs what changed between two listings (appeared, gone, state changes with reasons). */
void ui_event_diff(struct ui_app *app, const struct sb_sandbox_info *old, size_t n_old,
		   const struct sb_sandbox_info *cur, size_t n_cur);
void ui_eventlog_draw(struct ui_app *app, WINDOW *w);
void ui_eventlog_free(void);

/* cmdlog.c: the CLI command behind every action, viewable, copied with OSC 52 */
/* Logs "sandbench --root ROOT args..." shell-quoted; args NULL-terminated. */
void ui_cmdlog_add(struct ui_app *app, const char *const *args);
/* An action no CLI command does yet. */
void ui_cmdlog_note(struct ui_app *app, const char *action, const char *name);
void ui_cmdlog_open(struct ui_app *app);
void ui_cmdlog_draw(struct ui_app *app);
void ui_cmdlog_key(struct ui_app *app, int key);
void ui_cmdlog_free(void);

/* view_cleanup.c: the cleanup planner (the library's plan, marks, one
 * confirmation, a result per row); view_exposure.c: the exposure view */
void ui_cleanup_open(struct ui_app *app);
void ui_cleanup_draw(struct ui_app *app);
void ui_cleanup_key(struct ui_app *app, int key);
void ui_cleanup_free(void);
void ui_exposure_open(struct ui_app *app);
void ui_exposure_draw(struct ui_app *app);
void ui_exposure_key(struct ui_app *app, int key);
void ui_exposure_free(void);

/* procs.c: the processes of the selected running sandbox, a signal to one */
void ui_procs_open(struct ui_app *app);
void ui_procs_draw(struct ui_app *app);
void ui_procs_key(struct ui_app *app, int key);

/* custom_run.c: a custom command of the key table on the selected sandbox */
void ui_custom_run(struct ui_app *app, const struct ui_custom_cmd *c);

/* statusline.c */
void ui_statusline_draw(struct ui_app *app, WINDOW *w);

/* Ends the overlay, freeing its state block (the viewer frees its lines first). */
void ui_overlay_close(struct ui_app *app);

/* help.c and the text viewer (inspect) */
void ui_help_open(struct ui_app *app);
void ui_viewer_open(struct ui_app *app, const char *title, const char *text);
void ui_viewer_draw(struct ui_app *app);
void ui_viewer_key(struct ui_app *app, int key);
void ui_viewer_close(struct ui_app *app);

/* form.c: the create form */
void ui_form_open(struct ui_app *app);
void ui_form_draw(struct ui_app *app);
void ui_form_key(struct ui_app *app, int key);
void ui_form_close(struct ui_app *app);

/* confirm.c: yes/no dialogs listing consequences */
typedef void (*ui_confirm_fn)(struct ui_app *app, const char *name);
void ui_confirm_open(struct ui_app *app, const char *title, const char *text, const char *yes_label,
		     ui_confirm_fn on_yes, const char *name);
void ui_confirm_remove(struct ui_app *app, const struct sb_sandbox_info *info);
/* Appends to a dialog's text (len so far, returned grown; stops at size). */
size_t ui_confirm_cat(char *buf, size_t size, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ui_confirm_draw(struct ui_app *app);
void ui_confirm_key(struct ui_app *app, int key);
void ui_confirm_close(struct ui_app *app);

/* prompt.c: line editing (1 when key was an edit) and a question in the status
 * line; Enter calls fn with the text, "" included, Esc does not */
int ui_line_edit(char *buf, size_t size, int key);
typedef void (*ui_prompt_fn)(struct ui_app *app, const char *text);
void ui_prompt_open(struct ui_app *app, const char *label, const char *initial, ui_prompt_fn fn);
void ui_prompt_key(struct ui_app *app, int key);
void ui_prompt_draw(struct ui_app *app, WINDOW *w);

void ui_history_add(struct ui_history *h, const char *text);
/* Up/Down: the older/newer entry into buf; 1 when key was one of them. */
int ui_history_key(struct ui_history *h, int key, char *buf, size_t size);
void ui_history_free(struct ui_history *h);

/* filter.c: the filter line of the focused pane (a query, query.h) and its history */
void ui_filter_open(struct ui_app *app);
void ui_filter_key(struct ui_app *app, int key);
/* Sets the query in force of a pane; -1 (message shown, the previous one kept) when bad. */
int ui_filter_set(struct ui_app *app, enum ui_pane_id pane, const char *text);
/* For a view with its own query (the planner, exposure): parses new_text into
 * *query and text (size bytes); a bad one is refused with its reason in the
 * status line and the one in force stays (-1). */
int ui_filter_replace(struct ui_app *app, const struct ui_query_fields *fields, struct ui_query **query, char *text,
		      size_t size, const char *new_text);
/* Whether row passes the pane's query. */
int ui_filter_match(const struct ui_app *app, enum ui_pane_id pane, const void *row);
void ui_filter_draw(struct ui_app *app, WINDOW *w);
void ui_filter_free(struct ui_app *app);

/* command.c: the command line (':'), a table of commands with aliases,
 * history and Tab completion of command and sandbox names */
void ui_command_open(struct ui_app *app);
void ui_command_key(struct ui_app *app, int key);
void ui_command_draw(struct ui_app *app, WINDOW *w);
/* Runs one command line as if typed after ':'. */
void ui_command_run(struct ui_app *app, const char *line);
/* The table as help lines ("  :rm :remove ...  GLOB...  remove ..."). */
void ui_command_help(char *buf, size_t size);

/* marks.c: marked sandboxes and the actions on all of them at once */
int ui_marked(const struct ui_app *app, const char *name);
void ui_marks_set(struct ui_app *app, const char *name, int on);
/* Space, C-Space, mark-all, clear: 1 when a was a mark action. */
int ui_marks_action(struct ui_app *app, enum ui_action a);
/* Drops marks of sandboxes that are gone (after a listing). */
void ui_marks_prune(struct ui_app *app);
/* stop, restore, remove, expire, extend, touch on every marked sandbox: one
 * confirmation, then one job; 1 when there were marks to act on. */
int ui_marks_bulk(struct ui_app *app, enum ui_action a);
void ui_marks_free(struct ui_app *app);

/* shells.c: attached shells */
int ui_shell_attach(struct ui_app *app, const char *name);
/* Closes the shells of one sandbox (NULL: all); returns how many. */
int ui_shells_close(struct ui_app *app, const char *name);
size_t ui_shells_count(struct ui_app *app, const char *name);
void ui_shell_focus(struct ui_app *app, int index);
/* The loop's part: poll entries, I/O, keys, drawing, resize. */
int ui_shells_pollfds(struct ui_app *app, struct pollfd *pfd, int max);
void ui_shells_io(struct ui_app *app, const struct pollfd *pfd, int n);
void ui_shells_reap(struct ui_app *app);
void ui_shell_key(struct ui_app *app, int key, int is_fn);
void ui_shell_draw(struct ui_app *app, int force);
void ui_shells_resize(struct ui_app *app);
/* Titles for the title line: "[1 name] 2 other". */
void ui_shells_tabs(struct ui_app *app, char *buf, size_t size);
void ui_shells_list_open(struct ui_app *app);
void ui_shells_list_draw(struct ui_app *app);
void ui_shells_list_key(struct ui_app *app, int key);
int ui_shells_want_render(struct ui_app *app);

/* jobs.c: long operations in a child process, results through a socket */
struct ui_job_ctx;
typedef int (*ui_job_fn)(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err);
typedef void (*ui_job_done_fn)(struct ui_app *app, int rc, const char *message, void *arg);
/* Runs fn(arg) in a child with its own handle on the root; done(app, ...) runs
 * in the loop when it ends, with the error message when rc < 0, else the
 * job's result (ui_job_result, "" if none); free_arg (may be NULL) releases
 * arg then. An empty label makes a quiet job (not shown in the status line). */
int ui_job_start(struct ui_app *app, const char *label, ui_job_fn fn, void *arg, ui_job_done_fn done,
		 void (*free_arg)(void *));
/* From inside a job: an event line for the log, and progress. */
void ui_job_event(struct ui_job_ctx *ctx, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Progress of a job on several items: item i (1-based) of n. */
void ui_job_step(struct ui_job_ctx *ctx, size_t i, size_t n, const char *item);
/* A result line handed to the done callback (several are joined by '\n'). */
void ui_job_result(struct ui_job_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const struct sb_progress *ui_job_progress(struct ui_job_ctx *ctx);
int ui_jobs_pollfds(struct ui_app *app, struct pollfd *pfd, int max);
void ui_jobs_io(struct ui_app *app, const struct pollfd *pfd, int n);
size_t ui_jobs_running(struct ui_app *app);
/* The label and progress of the newest running job for the status line. */
int ui_jobs_describe(struct ui_app *app, char *buf, size_t size);
int ui_jobs_busy(struct ui_app *app, const char *label_prefix);
/* On quit: the user's operations go on without us; their labels, comma
 * separated, go to left ("" when none). */
void ui_jobs_abandon(struct ui_app *app, char *left, size_t size);

/* actions.c: the lifecycle actions on sandboxes */
/* stop, restore, remove, expire, extend or touch one sandbox (in a job's child). */
int ui_action_apply(struct sb_root *root, enum ui_action a, const char *name, struct sb_error *err);
/* Logs the CLI command that does what a does to name (cmdlog.c). */
void ui_action_log(struct ui_app *app, enum ui_action a, const char *name);
void ui_action_sandbox(struct ui_app *app, enum ui_action a, struct sb_sandbox_info *info);
void ui_action_create(struct ui_app *app, const struct sb_sandbox_spec *spec);
void ui_action_reap(struct ui_app *app);
/* gc: what it would do (its dry run) in a confirmation first, then it. */
void ui_action_gc_ask(struct ui_app *app);
/* First start on an empty root: the default image, then a default sandbox. */
void ui_action_bootstrap(struct ui_app *app);

#endif
