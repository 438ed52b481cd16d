/* Internal to src/session/: only its own files include this header. */
#ifndef SB_SESSION_INTERNAL_H
#define SB_SESSION_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/root.h"
#include "session/session.h"

/* Files of ROOT/sandboxes/<name>/sessions/<id>/ */
#define SESS_LOCK "lock"                 /* flock'd by the live holder for its whole life */
#define SESS_SOCK "sock"                 /* the holder's socket (0600) */
#define SESS_STATUS "status.json"
#define SESS_STATUS_SPARE "status.spare"  /* the end's record, written at start at its final size */
#define SESS_STATUS_SIZE 4096             /* status.json's size: the record padded with blanks */
#define SESS_EVENTS "events.jsonl"
#define SESS_EVENTS_OLD "events.old.jsonl"
#define SESS_LOG_PREFIX "out."           /* out.<20-digit start offset>: the output log's segments */

#define SESS_DEFAULT_LOG_CAP (64ULL << 20)
#define SESS_EVENTS_CAP (1 << 20)         /* bytes of events.jsonl before it rotates */
#define SESS_EVENTS_MEM 4096              /* events the holder keeps in memory */
#define SESS_RING_SIZE (256 << 10)        /* the newest output, kept in the holder's memory */
#define SESS_FRAME_MAX (1 << 20)
#define SESS_CHUNK (64 << 10)             /* output and input per frame */

/* Paths of one session. */
struct sess_dir {
	char name[64], id[SB_SESSION_ID_MAX + 1];
	char *sandbox_dir;               /* ROOT/sandboxes/<name> */
	char *record;                    /* its sandbox.json (sb_root_record_file) */
	char *sessions;                  /* .../sessions */
	char *dir;                       /* .../sessions/<id> */
	int dfd;                         /* the session directory (O_DIRECTORY), -1 until opened */
};
/* Checks both names and fills the paths (nothing opened). */
int sess_dir_init(struct sess_dir *d, struct sb_root *root, const char *name, const char *id, struct sb_error *err);
/* Opens an existing session directory: SB_ERR_NOTFOUND naming the sandbox
 * or the session. */
int sess_dir_open(struct sess_dir *d, struct sb_error *err);
void sess_dir_clear(struct sess_dir *d);
int sess_id_check(const char *id, struct sb_error *err);
/* 1 when a holder holds the session's lock (it is alive), 0 when not. */
int sess_dir_live(int dfd);
/* "/proc/self/fd/<dfd>/<file>": a short path into a long directory for
 * bind and connect (sun_path holds 108 bytes). */
void sess_sockaddr(struct sockaddr_un *sa, int dfd);

/* The wire: a frame is a 4-byte little-endian length (of what follows), a
 * type byte and the payload. */
enum sess_msg {
	/* client to holder */
	MSG_INPUT = 1,                   /* u8 source, bytes */
	MSG_CTRL,                        /* u8 source, u8 key letter */
	MSG_RESIZE,                      /* u16 rows, u16 cols */
	MSG_SIGNAL,                      /* u8 signal */
	MSG_TAKE,                        /* u8 source */
	MSG_RELEASE,
	MSG_SUBSCRIBE,                   /* u64 since */
	MSG_STATUS,
	/* holder to client */
	MSG_OK = 64,                     /* u64 output offset */
	MSG_ERROR,                       /* i32 code, message */
	MSG_OUTPUT,                      /* u64 offset, u64 dropped, bytes */
	MSG_EVENT,                       /* one event as JSON */
	MSG_LIVE,                        /* the backlog is through */
	MSG_STATE,                       /* the status as JSON */
	MSG_END,                         /* the session ended */
};
struct sess_frame {
	uint8_t type;
	const unsigned char *p;          /* payload, points into the reader's buffer */
	size_t len;
};
/* Appends a frame; the payload is head (hlen) then body (blen). 0 or -ENOMEM. */
int sess_frame_put(struct sb_buf *out, uint8_t type, const void *head, size_t hlen, const void *body, size_t blen);
/* Takes the next whole frame from in[*off..]: 1 (and *f), 0 when incomplete,
 * SB_ERR_FORMAT for a frame of an unknown type, too short or too long. */
int sess_frame_take(struct sess_frame *f, const struct sb_buf *in, size_t *off, struct sb_error *err);
/* Reads what the socket has into in (compacting consumed bytes first):
 * bytes read, 0 at EOF, -EAGAIN, or another -errno. */
ssize_t sess_fill(struct sb_buf *in, size_t *off, int fd);
uint64_t sess_get64(const unsigned char *p);
void sess_put64(unsigned char *p, uint64_t v);

/* Events: one JSON object a line, the same on the wire and in the file. */
json_t *sess_event_json(const struct sb_session_event *e);
int sess_event_parse(struct sb_session_event *out, const char *text, size_t len);
int sess_event_copy(struct sb_session_event *out, const struct sb_session_event *in);
/* The events of a session directory (old file, then current) at offsets >=
 * since, in order. */
int sess_events_load(struct sb_session_event **out, size_t *count, int dfd, unsigned long long since,
		     struct sb_error *err);
void sess_events_free(struct sb_session_event *ev, size_t n);
/* Appends one line to events.jsonl, rotating it at SESS_EVENTS_CAP. */
int sess_events_append(int dfd, int *fd, const struct sb_session_event *e);

/* The output log: segments out.<start>, capped with rotation, offsets absolute. */
struct sess_log {
	int dfd;
	unsigned long long cap;          /* bytes kept (0: read only) */
	unsigned long long first, end;   /* the oldest kept offset, the total */
	unsigned long long *starts;      /* segment starts, ascending */
	size_t n;
	int fd;                          /* the newest segment, appended to (-1: none yet) */
	char *ring;                      /* the newest SESS_RING_SIZE bytes (holder only) */
	unsigned long long ring_start;   /* the oldest offset the ring holds */
};
/* Scans dfd's segments. cap 0: for reading only. */
int sess_log_open(struct sess_log *log, int dfd, unsigned long long cap, struct sb_error *err);
void sess_log_close(struct sess_log *log);
/* On failure errno is the cause (ENOSPC: the disk is full); part may be written (end says). */
int sess_log_append(struct sess_log *log, const void *data, size_t len, struct sb_error *err);
/* Up to max bytes from off (first <= off < end) into buf: bytes read (< max
 * at a segment's end), or negative. */
ssize_t sess_log_read(struct sess_log *log, unsigned long long off, void *buf, size_t max);

/* The status file. */
struct sess_status {
	pid_t pid;
	enum sb_session_state state;
	char reason[256];
	int exit_code;
	long long created_at, started_at;
	long long last_input, last_output;
	unsigned long long last_input_off;
	unsigned short rows, cols;
	int restarts;
	unsigned long long lost;          /* output the log could not take (a full disk) */
};
enum sess_status_how {
	SESS_STATUS_PLAIN,               /* a new file renamed over status.json */
	SESS_STATUS_KEEP_SPARE,          /* that, and status.spare for the end */
	SESS_STATUS_FROM_SPARE,          /* status.spare overwritten in place and renamed: no allocation, so a
					  * full disk cannot keep the end from being recorded; else PLAIN */
};
int sess_status_write(int dfd, const struct sess_status *st, enum sess_status_how how, struct sb_error *err);
/* SB_ERR_NOTFOUND when there is none. */
int sess_status_read(struct sess_status *st, int dfd, struct sb_error *err);
json_t *sess_status_json(const struct sess_status *st, unsigned long long offset, unsigned long long first,
			 const char *controller, int watchers);
void sess_status_from_json(struct sess_status *st, unsigned long long *offset, unsigned long long *first,
			   char controller[16], int *watchers, const json_t *doc);

/* OSC 133 marks: ESC ] 133 ; BODY (BEL | ESC \) taken out of a byte stream. */
struct sess_marks {
	char pend[80];
	size_t n;
};
struct sess_marks_sink {
	void (*out)(void *arg, const char *data, size_t len);
	void (*mark)(void *arg, const char *body);
	void *arg;
};
void sess_marks_feed(struct sess_marks *m, const char *data, size_t len, const struct sess_marks_sink *sink);
/* What is held back (a mark's beginning that never ended) goes out as output. */
void sess_marks_flush(struct sess_marks *m, const struct sess_marks_sink *sink);

/* The holder: never returns (forked by start.c). ready is the pipe end that
 * gets "OK" or the error; lock_fd is held. */
struct holder_args {
	const char *root_path;
	struct sess_dir *dir;
	const struct sb_session_opts *opts;
	char *const *argv;
	char *const *env;
	int lock_fd, ready_fd;
};
void sess_holder_main(const struct holder_args *a) __attribute__((noreturn));

/* Client request/reply on a connection. */
int sess_client_request(struct sb_session *s, uint8_t type, const void *head, size_t hlen, const void *body,
			size_t blen, struct sess_frame *reply, struct sb_error *err);


#endif
