/* The timeline of a sandbox: what ran in it and who ran it. Every exec, every
 * line sent to a session, every lifecycle change and every host-side file
 * transfer is one JSON object on one line of ROOT/sandboxes/<name>/timeline.jsonl
 * (the format: docs/timeline.md). The host writes it; the guest cannot reach it.
 *
 * An append is one write(2) with O_APPEND and no fsync (an exec must stay
 * fast): a crash may lose the last entries or tear the last line, which
 * readers skip. At the size cap (setting timeline_size) the file is rotated to
 * timeline.jsonl.1, so the newest entries are kept and the timeline never
 * takes more than about twice the cap. Positions are absolute byte offsets
 * that stay valid across a rotation. */
#ifndef SB_TIMELINE_H
#define SB_TIMELINE_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "base/redact.h"
#include "base/root.h"

enum sb_timeline_kind {
	SB_TIMELINE_EXEC,
	SB_TIMELINE_INPUT,           /* a line sent to a session */
	SB_TIMELINE_LIFECYCLE,       /* a state change: text is the new state, detail the reason */
	SB_TIMELINE_FILE,            /* a host-side file transfer (cp) */
	SB_TIMELINE_COMMIT,          /* the disk committed as an image: text names it */
	SB_TIMELINE_NETWORK,         /* an egress policy change, or a connection the policy dropped */
	SB_TIMELINE_SERVICE,         /* a service started, ended, restarted or changed health */
	SB_TIMELINE_SESSION,         /* a session's own note: output its log could not keep */
};

enum sb_timeline_source {
	SB_TIMELINE_AGENT,           /* the default */
	SB_TIMELINE_HUMAN,
	SB_TIMELINE_WORKBENCH,
	SB_TIMELINE_SANDBENCH,       /* the system's own acts: reap, gc, a dead sandbox noticed */
};

/* Stable names ("exec", "agent", ...); "unknown" out of range. */
const char *sb_timeline_kind_name(enum sb_timeline_kind kind);
const char *sb_timeline_source_name(enum sb_timeline_source source);
/* Reverse lookups; -1 when the name is unknown. */
int sb_timeline_kind_parse(const char *s);
int sb_timeline_source_parse(const char *s);

/* Who this process acts for in the lifecycle entries of the verbs it calls
 * (create, stop, restore, ...): SB_TIMELINE_AGENT unless set. The workbench
 * sets SB_TIMELINE_WORKBENCH once at start. */
void sb_timeline_set_actor(enum sb_timeline_source source);
enum sb_timeline_source sb_timeline_actor(void);

/* One entry. Strings may be NULL (left out). On append the caller keeps
 * ownership; on read they point into the struct sb_timeline they came with. */
struct sb_timeline_entry {
	long long time_ms;                   /* wall clock, unix ms; 0 on append: now */
	enum sb_timeline_kind kind;
	enum sb_timeline_source source;
	const char *text;                    /* the command, input line, new state or transfer */
	const char *cwd;
	const char *detail;                  /* lifecycle: the reason; otherwise an error, if any */
	const char *session;                 /* session id */
	int exit_code;                       /* -1: none */
	int timed_out;
	long long duration_ms;               /* -1: not measured */
	long long out_bytes;                 /* output size (stdout + stderr); -1: none */
	const char *out, *err;               /* bounded copies of stdout and stderr (exec) */
	size_t out_len, err_len;
	int truncated;                       /* read: a copy or a text was cut at its cap */
	const char *const *secrets;          /* names of the secrets used, NULL-terminated; NULL: none */
	size_t n_secrets;                    /* read: how many */
	unsigned long long pos;              /* read: where the entry is (sb_timeline_read_at) */
};

#define SB_TIMELINE_ENTRY_INIT(k, s) { .kind = (k), .source = (s), .exit_code = -1, .duration_ms = -1, .out_bytes = -1 }

/* Appends e to sandbox name's timeline. With r (may be NULL), every text and
 * the output copies go through the redactor first: a secret's value is
 * written as "[secret NAME]". Copies are cut at the setting timeline_output,
 * texts at 64 KiB. Texts are redacted whole (r's stream is not touched);
 * output copies are fed through r's stream, which must hold nothing back
 * then (sb_redact_flush first) and is left empty. SB_ERR_NOTFOUND when the
 * sandbox does not exist (any more). Must not be called while this process holds the sandbox's lock
 * through the sandbox API (the file's creation and rotation take it). */
int sb_timeline_append(struct sb_root *root, const char *name, const struct sb_timeline_entry *e,
		       struct sb_redact *r, struct sb_error *err);

/* The entry as its line in the file: a new reference, NULL when out of memory.
 * Texts that are not UTF-8 get U+FFFD for each bad byte. No redaction, no caps. */
json_t *sb_timeline_entry_to_json(const struct sb_timeline_entry *e);

enum sb_timeline_read_flags {
	SB_TIMELINE_NO_OUTPUT = 1 << 0,      /* leave the output copies out (a list; see sb_timeline_read_at) */
};

struct sb_timeline_query {
	long long since_ms;                  /* only entries at or after this time; 0: all */
	unsigned long long from;             /* continue at this position (a read's next); 0: the oldest */
	unsigned flags;                      /* enum sb_timeline_read_flags */
};

struct sb_timeline {
	struct sb_timeline_entry *entries;   /* oldest first */
	size_t count;
	unsigned long long next;             /* after the last complete line: the next read's from */
	size_t skipped;                      /* malformed or torn lines passed over */
	int dropped;                         /* from was rotated away: entries after it are lost */
	void *priv;
};

/* Reads what the query asks for (q may be NULL: everything). Reads at most a
 * bounded amount of each file; a line that does not parse is skipped, an
 * unfinished last line is left for the next read. SB_ERR_NOTFOUND naming the
 * sandbox when it does not exist; a sandbox without a timeline yet has an
 * empty one. */
int sb_timeline_read(struct sb_timeline **out, struct sb_root *root, const char *name,
		     const struct sb_timeline_query *q, struct sb_error *err);
/* The one entry at pos, output included (the workbench opens one this way).
 * SB_ERR_NOTFOUND when it has been rotated away or no entry starts there. */
int sb_timeline_read_at(struct sb_timeline **out, struct sb_root *root, const char *name, unsigned long long pos,
			struct sb_error *err);
void sb_timeline_free(struct sb_timeline *t);

/* Following a timeline without polling: the descriptor becomes readable when
 * the timeline may have grown (inotify on the sandbox's directory). */
struct sb_timeline_watch;
int sb_timeline_watch_open(struct sb_timeline_watch **out, struct sb_root *root, const char *name,
			   struct sb_error *err);
void sb_timeline_watch_close(struct sb_timeline_watch *w);
int sb_timeline_watch_fd(const struct sb_timeline_watch *w);
/* Drains the descriptor: 1 when the timeline may have grown (read from the
 * last next), 0 when nothing of it moved, SB_ERR_NOTFOUND when the sandbox
 * was removed. */
int sb_timeline_watch_check(struct sb_timeline_watch *w, struct sb_error *err);

/* The --since forms: a duration ("90s", "10m", "2h", "1d": that long before
 * now_ms), a local time ("2026-12-01T10:00:00", "2026-12-01 10:00", the date
 * alone for its midnight; a final 'Z' for UTC) or unix seconds ("1764583200").
 * *out in unix ms. SB_ERR_INVALID naming the text. */
int sb_timeline_parse_since(long long *out, const char *text, long long now_ms, struct sb_error *err);

#endif
