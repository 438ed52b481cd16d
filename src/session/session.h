/* Agent sessions: a shell (or any program) in a running sandbox on a pty,
 * held by a small holder process per session that keeps the whole output
 * (numbered by absolute byte offset) in a log under the sandbox's directory
 * and serves clients over a unix socket there. The CLI that started a session
 * may exit; the session lives on until its program ends, it is killed, or the
 * sandbox stops. Files, protocol and states: docs/sessions.md. */
#ifndef SB_SESSION_H
#define SB_SESSION_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/redact.h"
#include "base/root.h"

#define SB_SESSION_ID_MAX 63

enum sb_session_state {
	SB_SESSION_RUNNING,          /* the holder and its program are alive */
	SB_SESSION_EXITED,           /* the program ended, was killed, or its holder died */
};

/* Who typed an input line (recorded with it). */
enum sb_session_source {
	SB_SOURCE_AGENT,
	SB_SOURCE_HUMAN,
	SB_SOURCE_WORKBENCH,
};
const char *sb_session_source_name(enum sb_session_source s);
/* "agent", "human", "workbench": 0 and *out, or SB_ERR_INVALID. */
int sb_session_source_parse(enum sb_session_source *out, const char *text, struct sb_error *err);

struct sb_session_opts {
	char *const *argv;           /* a program as it is; NULL: a shell set up for agents (below) */
	const char *shell;           /* that shell; NULL: the sandbox's login shell */
	const char *cwd;             /* NULL: /workspace */
	char *const *env;            /* "K=V", NULL-terminated; may be NULL */
	const struct sb_secret *secrets; /* exported in the shell, never written to a file; values
				      * redacted from the log and the events */
	size_t n_secrets;
	unsigned short rows, cols;   /* 0: 24 x 80 */
	int echo;                    /* the terminal echoes input (agents: off) */
	int reuse;                   /* a live session of that id is returned as it is */
	unsigned long long log_cap;  /* bytes of output kept on disk; 0: 64 MiB */
};

/* A session as listed. Strings are malloc'd (sb_session_info_clear). */
struct sb_session_info {
	char sandbox[64];
	char id[SB_SESSION_ID_MAX + 1];
	pid_t pid;                   /* the holder; 0 when exited */
	enum sb_session_state state;
	char *reason;                /* why it exited ("" while running) */
	int exit_code;               /* the program's exit status; -1 when unknown or running */
	unsigned long long offset;   /* bytes of output so far */
	unsigned long long first;    /* the oldest offset the log still has */
	long long created_at;        /* unix seconds of the first start */
	long long last_input;        /* unix ms of the last input line; 0: none */
	unsigned long long last_input_off; /* the output offset of the last input line */
	unsigned short rows, cols;   /* the terminal's size */
	long long last_output;       /* unix ms of the last output; 0: none */
	char controller[16];         /* "agent" or "human" */
	int watchers;                /* clients subscribed to its output */
	unsigned long long lost;     /* output its log could not keep (a full disk), marked in the output */
	int reused;                  /* start: an existing live session was returned */
};

/* Starts a session in running sandbox name, or (opts->reuse) returns the
 * live one of that id. id NULL: the lowest free number ("0", "1", ...). A
 * session of that id that exited is started again in the same id: its log
 * continues after a restart event. Without reuse, a live one is
 * SB_ERR_EXISTS. The agent defaults (argv NULL): echo off, TERM=dumb, the
 * prompt "root@NAME:/path# " and a mark after each prompt that carries the
 * last command's exit status out of band (stripped from the output). */
int sb_session_start(struct sb_session_info *out, struct sb_root *root, const char *name, const char *id,
		     const struct sb_session_opts *opts, struct sb_error *err);
/* The sessions of sandbox name (NULL: of every sandbox), sorted. */
int sb_session_list(struct sb_session_info **out, size_t *count, struct sb_root *root, const char *name,
		    struct sb_error *err);
/* One session; SB_ERR_NOTFOUND naming it. */
int sb_session_inspect(struct sb_session_info *out, struct sb_root *root, const char *name, const char *id,
		       struct sb_error *err);
void sb_session_info_clear(struct sb_session_info *info);
void sb_session_list_free(struct sb_session_info *list, size_t count);
/* SIGINT interrupts the foreground job (the terminal's interrupt key);
 * SIGTERM hangs the terminal up and SIGKILL kills the program: both end the
 * session. */
int sb_session_kill(struct sb_root *root, const char *name, const char *id, int sig, struct sb_error *err);
/* The sessions of a dead holder: stale sockets removed (gc). Each cleaned
 * session is named in *cleaned ("NAME/ID", free with sb_session_names_free). */
int sb_session_gc(char ***cleaned, size_t *count, struct sb_root *root, int dry_run, struct sb_error *err);
void sb_session_names_free(char **names, size_t count);

/* A client connection to a live session's holder. */
struct sb_session;
int sb_session_connect(struct sb_session **out, struct sb_root *root, const char *name, const char *id,
		       struct sb_error *err);
void sb_session_close(struct sb_session *s);
/* The socket (O_NONBLOCK): poll it for POLLIN, then sb_session_next until it
 * returns 0. A request (send, status, ...) reads subscription frames that
 * arrive before its reply into a buffer poll does not see: drain
 * sb_session_next after each request too. */
int sb_session_fd(const struct sb_session *s);
/* Input, written in pieces the terminal accepts. *offset (may be NULL): the
 * output offset at that moment (a reader's cursor). Input while a human has
 * control and src is agent: SB_ERR_BUSY, "... is controlled by a human". */
int sb_session_send(struct sb_session *s, unsigned long long *offset, const void *data, size_t len,
		    enum sb_session_source src, struct sb_error *err);
/* A control key: 'c', 'd', 'z', '\\' (the terminal's interrupt, end of file,
 * suspend and quit characters). */
int sb_session_ctrl(struct sb_session *s, unsigned long long *offset, char key, enum sb_session_source src,
		    struct sb_error *err);
int sb_session_resize(struct sb_session *s, unsigned short rows, unsigned short cols, struct sb_error *err);
int sb_session_signal(struct sb_session *s, int sig, struct sb_error *err);
/* A human takes control (agent input is refused) until release or until this
 * connection closes. SB_ERR_BUSY when another client holds it. */
int sb_session_take(struct sb_session *s, enum sb_session_source who, struct sb_error *err);
int sb_session_release(struct sb_session *s, struct sb_error *err);
/* The holder's view now (offset, controller, watchers, times). */
int sb_session_status(struct sb_session *s, struct sb_session_info *out, struct sb_error *err);

/* What a subscription delivers, in order: the output and the events from
 * since on, one SB_ITEM_LIVE when that backlog is through, then whatever
 * comes, and SB_ITEM_END when the session ends. */
enum sb_session_item_kind {
	SB_ITEM_OUTPUT,
	SB_ITEM_EVENT,
	SB_ITEM_LIVE,
	SB_ITEM_END,
};

enum sb_session_event_type {
	SB_EVENT_START,              /* the program started (text: its command) */
	SB_EVENT_RESTART,            /* started again in the same id: the log continues */
	SB_EVENT_INPUT,              /* an input line (text, source; secrets redacted) */
	SB_EVENT_CTRL,               /* a control key (text: "c", "d", ...) */
	SB_EVENT_PROMPT,             /* the prompt is back (exit_code of the last command) */
	SB_EVENT_CONTROL,            /* control taken (source human) or handed back (agent) */
	SB_EVENT_RESIZE,             /* text: "ROWSxCOLS" */
	SB_EVENT_EXIT,               /* the program ended (exit_code, text: why) */
};
const char *sb_session_event_name(enum sb_session_event_type t);

struct sb_session_event {
	enum sb_session_event_type type;
	unsigned long long offset;   /* the output offset it happened at */
	long long time_ms;           /* unix ms */
	enum sb_session_source source;
	int exit_code;               /* prompt, exit: -1 when unknown */
	int more;                    /* prompt: more input waits (a line of several sent at once) */
	char *text;                  /* malloc'd; "" when none */
};
void sb_session_event_clear(struct sb_session_event *e);

struct sb_session_item {
	enum sb_session_item_kind kind;
	unsigned long long offset;   /* output: where data starts */
	unsigned long long dropped;  /* output: bytes before it that the log no longer has */
	const char *data;            /* output: valid until the next call */
	size_t len;
	struct sb_session_event event;   /* event: owned by the item until the next call */
};

int sb_session_subscribe(struct sb_session *s, unsigned long long since, struct sb_error *err);
/* 1 and *item when one is there, 0 when the socket has nothing now,
 * negative on error (SB_ERR_IO when the holder went away unannounced).
 * Frames may be buffered after any call on the connection: take items until
 * 0 before polling the fd. */
int sb_session_next(struct sb_session *s, struct sb_session_item *item, struct sb_error *err);

/* read: output from since until a condition holds. */
enum sb_session_reason {
	SB_READ_PROMPT,              /* the prompt came back (the last command's exit code is known) */
	SB_READ_IDLE,                /* no output for wait_idle (a dialog: a shorter pause) */
	SB_READ_FIRST_TIMEOUT,       /* no output at all within first_timeout */
	SB_READ_MAX_WAIT,            /* the overall deadline */
	SB_READ_EXITED,              /* the session ended */
	SB_READ_DATA,                /* nothing to wait for: what there was */
};
const char *sb_session_reason_name(enum sb_session_reason r);

struct sb_session_read_opts {
	long long since;             /* < 0: the offset of the last input line */
	int wait_idle_ms;            /* 0: do not wait for a pause */
	int first_timeout_ms;        /* 0: none */
	int max_wait_ms;             /* 0: none */
};

struct sb_session_read_result {
	unsigned long long since, offset, dropped;
	char *output;                /* raw bytes, never ending inside a UTF-8 character */
	size_t len;
	enum sb_session_state state;
	int idle;                    /* at the prompt with nothing after it */
	int exit_code;               /* of the last command whose prompt came back after since; -1: none */
	char *prompt;                /* the prompt's text when idle, else NULL */
	int dialog;                  /* the last line asks something (Y/N, yes/no, ':' or '?') */
	long long idle_ms;           /* since the last output */
	enum sb_session_reason reason;
	struct sb_session_event *events; /* the events after since */
	size_t n_events;
};

/* Works on exited sessions too (from the log). SB_ERR_INVALID for a since
 * past the end. */
int sb_session_read(struct sb_session_read_result *out, struct sb_root *root, const char *name, const char *id,
		    const struct sb_session_read_opts *opts, struct sb_error *err);
void sb_session_read_result_clear(struct sb_session_read_result *r);
/* JSON forms (new references): a session as listed; a read's result with
 * text, its output as formatted by the caller (made valid UTF-8). */
json_t *sb_session_info_json(const struct sb_session_info *info);
json_t *sb_session_read_json(const struct sb_session_read_result *r, const char *text, size_t len);

/* Output as text for a model: escape sequences removed, each line's last
 * carriage-return segment kept, invalid UTF-8 replaced. malloc'd. */
char *sb_session_text_clean(const char *data, size_t len, size_t *out_len);
/* Valid UTF-8 (U+FFFD for what is not), malloc'd. */
char *sb_session_text_utf8(const char *data, size_t len, size_t *out_len);
/* 1 when the last line of text asks a question. */
int sb_session_text_dialog(const char *text, size_t len);

#endif
