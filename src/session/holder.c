/* The holder: one process per session (the abduco/dtach pattern). It owns
 * the pty master of the session's shell, appends everything the shell
 * writes to the log (marks taken out, secrets redacted), records events and
 * serves clients on its socket, all from one poll loop. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/redact.h"
#include "sandbox/sandbox.h"
#include "sandbox/timeline.h"

#define MAX_CLIENTS 64
#define CLIENT_QUEUE (512 << 10)          /* bytes queued to a subscriber before it must read */
#define INPUT_QUEUE_MAX (4 << 20)         /* input not yet taken by the terminal */
#define REDACT_FLUSH_MS 50                /* a held-back tail that may begin a secret goes out after this pause */
#define PROMPT_MAX 512
#define LINE_MAX_REC (64 << 10)
#define READY_PROMPT_MS 10000             /* the longest start waits for the first prompt */
#define SETTLE_POLL_MS 5                  /* how often start looks whether the runsc exec has settled */
#define LOST_RETRY_MS 500                 /* how often a log that failed is tried again without new output */

struct hclient {
	int fd;
	struct sb_buf in, out;
	size_t in_off, out_off;
	int subscribed, live_sent, gone;
	unsigned long long cursor;       /* the next output byte it gets */
	unsigned long long ev_seq;       /* the next event it gets */
	unsigned long long dropped;      /* skipped output its next output frame reports */
};

struct holder {
	const struct holder_args *a;
	struct sb_root *root;
	int dfd, listen_fd, sig_fd, events_fd;
	struct sb_shell *shell;
	int master;
	struct sess_log log;
	struct sb_session_event ev[SESS_EVENTS_MEM];
	unsigned long long ev_next;      /* sequence number of the next event */
	struct sb_redact *redact;
	struct sb_buf red;               /* redacted output on its way to the log */
	long long flush_at;              /* monotonic ms when the redactor's tail goes out; 0: none held */
	struct sess_marks marks;
	int in_prompt, prompt_exit, prompt_more; /* between the exit mark and the end of the prompt */
	struct sb_buf prompt;
	struct hclient *clients[MAX_CLIENTS];
	size_t n_clients;
	struct hclient *controller;
	struct sb_buf inq;
	size_t inq_off;
	struct sb_buf line[3];           /* the input line being typed, per source */
	struct sess_status st;
	int killed_sig;
	struct termios tio;
	char **secret_names;             /* NULL-terminated, for the timeline; NULL: none */
	int ready_fd;                    /* the starter waits on it until the shell's first prompt */
	int ready_prompts;               /* prompts to see before that (the secrets' export makes one more) */
	long long ready_at;              /* monotonic ms: ready anyway (a program without prompt marks) */
	int ready_wanted;                /* ready but for the runsc exec settling */
	long long settle_by;             /* monotonic ms: ready anyway */
	unsigned long long lost;         /* output the log could not take, not yet marked in it */
	int lost_errno;                  /* why (ENOSPC: the disk is full) */
	long long lost_retry_at;         /* monotonic ms of the next try to write the mark */
};

/* The starter returns once the shell has shown its first prompt, so that the
 * offset it reports is past the banner and the first prompt. */
static void say_ready(struct holder *h)
{
	if (h->ready_fd < 0)
		return;
	dprintf(h->ready_fd, "OK %ld", (long)getpid());
	close(h->ready_fd);
	h->ready_fd = -1;
}

/* Ready once the runsc exec has written its last file too: a disk that
 * fills right after start returned would otherwise end it (its write of the
 * pid inside fails, and it exits 128). */
static void want_ready(struct holder *h)
{
	h->ready_wanted = 1;
	if (h->ready_fd >= 0 && (sb_shell_settled(h->shell) || sb_clock_monotonic_ms() >= h->settle_by))
		say_ready(h);
}

static void fail_ready(int fd, int code, const char *msg)
{
	dprintf(fd, "ERR %d %s", code, msg);
	_exit(1);
}

/* The stdio to /dev/null and every fd but the ones kept closed. */
static void close_others(const int *keep, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self = d ? dirfd(d) : -1, null = open("/dev/null", O_RDWR);

	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	while (d && (de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		int kept = *end || fd <= 2 || fd == self;
		for (size_t i = 0; i < n && !kept; i++)
			kept = keep[i] == fd;
		if (!kept)
			close((int)fd);
	}
	if (d)
		closedir(d);
}

static int setup_signals(void)
{
	sigset_t mask;

	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* ---- events ---- */

static struct sb_session_event *event_at(struct holder *h, unsigned long long seq)
{
	return &h->ev[seq % SESS_EVENTS_MEM];
}

static unsigned long long event_oldest(const struct holder *h)
{
	return h->ev_next > SESS_EVENTS_MEM ? h->ev_next - SESS_EVENTS_MEM : 0;
}

static void keep_event(struct holder *h, struct sb_session_event *e)
{
	struct sb_session_event *slot = event_at(h, h->ev_next++);

	sb_session_event_clear(slot);
	*slot = *e;
	e->text = NULL;
}

/* Records an event at the current output offset; text is copied as valid UTF-8. */
static void add_event_more(struct holder *h, enum sb_session_event_type type, enum sb_session_source src, int code,
			   const char *text, size_t len, int more)
{
	struct sb_session_event e = {
		.type = type, .offset = h->log.end, .time_ms = sb_clock_now_ms(), .source = src, .exit_code = code,
		.more = more,
	};

	e.text = sb_session_text_utf8(text ? text : "", text ? len : 0, NULL);
	if (!e.text)
		return;
	sess_events_append(h->dfd, &h->events_fd, &e);
	keep_event(h, &e);
}

static void add_event(struct holder *h, enum sb_session_event_type type, enum sb_session_source src, int code,
		      const char *text, size_t len)
{
	add_event_more(h, type, src, code, text, len, 0);
}

/* ---- output ---- */

static const char *lost_cause(int e)
{
	return e == ENOSPC || e == EDQUOT ? _("disk full") : strerror(e);
}

/* Output that could not be logged is not dropped silently: once the log takes
 * writes again, a mark in the output stream and a timeline entry say how much
 * went. Until the mark is written, newer output counts as lost too, so the
 * mark stands where the gap is. Returns 0 when nothing (more) is pending. */
static int mark_lost(struct holder *h)
{
	if (!h->lost)
		return 0;
	h->lost_retry_at = sb_clock_monotonic_ms() + LOST_RETRY_MS;
	char *note = sb_strdupf(_("output lost: %s (%llu bytes)"), lost_cause(h->lost_errno), h->lost);
	char *mark = note ? sb_strdupf("\r\n[sandbench: %s]\r\n", note) : NULL;
	unsigned long long at = h->log.end;
	int rc = mark ? sess_log_append(&h->log, mark, strlen(mark), NULL) : SB_ERR_NOMEM;
	free(mark);
	if (rc < 0) {
		free(note);
		h->lost += h->log.end - at;   /* a part of the mark counts as more output lost */
		return -1;
	}
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_SESSION, SB_TIMELINE_SANDBENCH);
	e.text = note;
	e.session = h->a->dir->id;
	sb_timeline_append(h->root, h->a->dir->name, &e, NULL, NULL);
	free(note);
	h->lost = 0;
	return 0;
}

static void emit(struct holder *h)
{
	if (!h->red.len)
		return;
	unsigned long long at = h->log.end;
	if (mark_lost(h) < 0 || sess_log_append(&h->log, h->red.data, h->red.len, NULL) < 0) {
		if (!h->lost || h->log.end == at)
			h->lost_errno = errno;
		h->lost += h->red.len - (h->log.end - at);
		h->st.lost += h->red.len - (h->log.end - at);
		h->lost_retry_at = sb_clock_monotonic_ms() + LOST_RETRY_MS;
	}
	h->red.len = 0;
	h->st.last_output = sb_clock_now_ms();
}

static void redact_flush(struct holder *h)
{
	sb_redact_flush(h->redact, &h->red);
	h->flush_at = 0;
	emit(h);
}

static void out_plain(void *arg, const char *data, size_t len)
{
	struct holder *h = arg;

	if (h->in_prompt && h->prompt.len + len <= PROMPT_MAX)
		sb_buf_add(&h->prompt, data, len);
	sb_redact_feed(h->redact, &h->red, data, len);
	emit(h);
}

/* The agent prompt hook: "D;<status>" before the prompt, "B" after it. */
static void out_mark(void *arg, const char *body)
{
	struct holder *h = arg;

	redact_flush(h);
	if (body[0] == 'D') {
		h->in_prompt = 1;
		char *end = NULL;
		h->prompt_exit = body[1] == ';' ? (int)strtol(body + 2, &end, 10) : -1;
		/* "D;<status>;1": the shell sees more input waiting (bash's hook asks) */
		h->prompt_more = end && end[0] == ';' && end[1] == '1';
		h->prompt.len = 0;
	} else if (body[0] == 'B') {
		size_t n, m;
		char *red = sb_redact_text(h->redact, h->prompt.data ? h->prompt.data : "", h->prompt.len, &n);
		char *text = red ? sb_session_text_clean(red, n, &m) : NULL;
		add_event_more(h, SB_EVENT_PROMPT, SB_SOURCE_AGENT, h->in_prompt ? h->prompt_exit : -1, text, text ? m : 0,
			       h->prompt_more || h->inq.len > h->inq_off);
		free(red);
		free(text);
		h->in_prompt = 0;
		if (--h->ready_prompts <= 0 && !h->prompt_more && h->inq.len == h->inq_off)
			want_ready(h);
	}
}

/* 0: more may come, -1: the terminal is closed (the shell is gone). */
static int read_master(struct holder *h)
{
	const struct sess_marks_sink sink = { out_plain, out_mark, h };
	char buf[SESS_CHUNK];

	for (int i = 0; i < 16; i++) {
		ssize_t n = read(h->master, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return -1;
		sess_marks_feed(&h->marks, buf, (size_t)n, &sink);
	}
	/* with secrets, a tail that may begin one waits a moment for the rest */
	if (h->flush_at == 0 && h->a->opts->n_secrets)
		h->flush_at = sb_clock_monotonic_ms() + REDACT_FLUSH_MS;
	return 0;
}

/* ---- input ---- */

/* The sandbox's timeline gets each input line with its source (the
 * timeline redacts the text itself). */
static void timeline_line(struct holder *h, enum sb_session_source src, const char *line, size_t len)
{
	static const enum sb_timeline_source sources[] = {
		[SB_SOURCE_AGENT] = SB_TIMELINE_AGENT,
		[SB_SOURCE_HUMAN] = SB_TIMELINE_HUMAN,
		[SB_SOURCE_WORKBENCH] = SB_TIMELINE_WORKBENCH,
	};
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_INPUT, sources[src]);
	char *text = strndup(line, len);

	if (!text)
		return;
	e.text = text;
	e.session = h->a->dir->id;
	e.secrets = (const char *const *)h->secret_names;
	sb_timeline_append(h->root, h->a->dir->name, &e, h->redact, NULL);
	free(text);
}

static void finish_line(struct holder *h, enum sb_session_source src)
{
	struct sb_buf *l = &h->line[src];
	size_t n;
	char *text = sb_redact_text(h->redact, l->data ? l->data : "", l->len, &n);

	if (text)
		add_event(h, SB_EVENT_INPUT, src, -1, text, n);
	free(text);
	timeline_line(h, src, l->data ? l->data : "", l->len);
	l->len = 0;
	h->st.last_input = sb_clock_now_ms();
	h->st.last_input_off = h->log.end;
}

/* Input lines for the events: a line ends at \n or \r (\r\n once), an erase
 * takes a character back, other control characters are not recorded. */
static void record_input(struct holder *h, enum sb_session_source src, const char *data, size_t len)
{
	struct sb_buf *l = &h->line[src];

	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (c == '\n' || c == '\r') {
			finish_line(h, src);
			if (c == '\r' && i + 1 < len && data[i + 1] == '\n')
				i++;
		} else if (c == 0x7f || c == '\b') {
			if (l->len)
				l->len--;
		} else if ((unsigned char)c >= 0x20 || c == '\t') {
			if (l->len < LINE_MAX_REC)
				sb_buf_add(l, &c, 1);
		}
	}
}

static int queue_input(struct holder *h, const char *data, size_t len)
{
	if (h->inq.len - h->inq_off + len > INPUT_QUEUE_MAX)
		return SB_ERR_LIMIT;
	return sb_buf_add(&h->inq, data, len) < 0 ? SB_ERR_NOMEM : 0;
}

/* Writes what the terminal takes; the rest waits for POLLOUT. */
static void drain_input(struct holder *h)
{
	while (h->inq_off < h->inq.len) {
		ssize_t n = write(h->master, h->inq.data + h->inq_off, h->inq.len - h->inq_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		h->inq_off += (size_t)n;
	}
	if (h->inq_off == h->inq.len)
		h->inq.len = h->inq_off = 0;
}

/* ---- clients ---- */

static void reply_ok(struct hclient *c, unsigned long long off)
{
	unsigned char b[8];

	sess_put64(b, off);
	sess_frame_put(&c->out, MSG_OK, b, sizeof(b), NULL, 0);
}

static void reply_error(struct hclient *c, int code, const char *msg)
{
	/* shifted unsigned: shifting a negative code is not portable C */
	uint32_t u = (uint32_t)code;
	unsigned char b[4] = { (unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
			       (unsigned char)(u >> 24) };

	sess_frame_put(&c->out, MSG_ERROR, b, sizeof(b), msg, strlen(msg));
}

static int watchers(const struct holder *h)
{
	int n = 0;

	for (size_t i = 0; i < h->n_clients; i++)
		n += h->clients[i]->subscribed;
	return n;
}

static void reply_state(struct holder *h, struct hclient *c)
{
	json_t *doc = sess_status_json(&h->st, h->log.end, h->log.first, h->controller ? "human" : "agent", watchers(h));
	char *text = doc ? sb_json_dumps(doc, JSON_COMPACT) : NULL;

	json_decref(doc);
	if (text)
		sess_frame_put(&c->out, MSG_STATE, NULL, 0, text, strlen(text));
	else
		reply_error(c, SB_ERR_NOMEM, _("out of memory"));
	free(text);
}

static void touch(struct holder *h)
{
	sb_shell_activity(h->shell);
}

static int control_refused(struct holder *h, struct hclient *c)
{
	/* a controller whose connection closed in this round has handed back */
	if (!h->controller || h->controller == c || h->controller->gone)
		return 0;
	char msg[256];
	snprintf(msg, sizeof(msg), _("session '%s' of sandbox '%s' is controlled by a human"), h->a->dir->id,
		 h->a->dir->name);
	reply_error(c, SB_ERR_BUSY, msg);
	return 1;
}

static enum sb_session_source source_of(uint8_t b)
{
	return b <= SB_SOURCE_WORKBENCH ? (enum sb_session_source)b : SB_SOURCE_AGENT;
}

static void on_input(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	enum sb_session_source src = source_of(f->p[0]);

	if (control_refused(h, c))
		return;
	unsigned long long at = h->log.end;
	if (queue_input(h, (const char *)f->p + 1, f->len - 1) < 0) {
		reply_error(c, SB_ERR_LIMIT, _("the session's terminal is not taking input"));
		return;
	}
	record_input(h, src, (const char *)f->p + 1, f->len - 1);
	drain_input(h);
	touch(h);
	reply_ok(c, at);
}

static void on_ctrl(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	static const struct {
		char key;
		int cc;
	} keys[] = { { 'c', VINTR }, { 'd', VEOF }, { 'z', VSUSP }, { '\\', VQUIT } };
	enum sb_session_source src = source_of(f->p[0]);

	if (control_refused(h, c))
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (keys[i].key != (char)f->p[1])
			continue;
		char ch = (char)h->tio.c_cc[keys[i].cc];
		unsigned long long at = h->log.end;
		char name[2] = { (char)f->p[1], '\0' };
		queue_input(h, &ch, 1);
		drain_input(h);
		add_event(h, SB_EVENT_CTRL, src, -1, name, 1);
		touch(h);
		reply_ok(c, at);
		return;
	}
	reply_error(c, SB_ERR_INVALID, _("unknown control key (c, d, z or \\)"));
}

static void on_signal(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	int sig = f->p[0];

	if (control_refused(h, c))
		return;
	if (sig == SIGINT) {
		struct sess_frame ctrl = { .type = MSG_CTRL, .p = (const unsigned char[]){ SB_SOURCE_AGENT, 'c' }, .len = 2 };
		on_ctrl(h, c, &ctrl);
		return;
	}
	if (sig != SIGTERM && sig != SIGKILL) {
		reply_error(c, SB_ERR_INVALID, _("a session takes INT, TERM or KILL"));
		return;
	}
	h->killed_sig = sig;
	reply_ok(c, h->log.end);
	sb_shell_kill(h->shell);
}

static void on_control(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	if (f->type == MSG_TAKE) {
		if (control_refused(h, c))
			return;
		if (h->controller != c) {
			h->controller = c;
			add_event(h, SB_EVENT_CONTROL, source_of(f->p[0]), -1, "taken", 5);
		}
	} else if (h->controller == c) {
		h->controller = NULL;
		add_event(h, SB_EVENT_CONTROL, SB_SOURCE_AGENT, -1, "released", 8);
	}
	reply_ok(c, h->log.end);
}

static void on_subscribe(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	unsigned long long since = sess_get64(f->p);

	if (since > h->log.end) {
		char msg[256];
		snprintf(msg, sizeof(msg), _("offset %llu is past the end of session '%s' (%llu)"), since,
			 h->a->dir->id, h->log.end);
		reply_error(c, SB_ERR_INVALID, msg);
		return;
	}
	c->subscribed = 1;
	c->live_sent = 0;
	c->cursor = since;
	c->dropped = 0;
	c->ev_seq = event_oldest(h);
	while (c->ev_seq < h->ev_next && event_at(h, c->ev_seq)->offset < since)
		c->ev_seq++;
	reply_ok(c, h->log.end);
}

static void on_resize(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	unsigned short rows = (unsigned short)(f->p[0] | f->p[1] << 8), cols = (unsigned short)(f->p[2] | f->p[3] << 8);
	char text[32];

	if (rows == 0 || cols == 0 || sb_shell_resize(h->shell, rows, cols) < 0) {
		reply_error(c, SB_ERR_INVALID, _("cannot resize the session's terminal"));
		return;
	}
	h->st.rows = rows;
	h->st.cols = cols;
	int n = snprintf(text, sizeof(text), "%ux%u", rows, cols);
	add_event(h, SB_EVENT_RESIZE, SB_SOURCE_AGENT, -1, text, (size_t)n);
	reply_ok(c, h->log.end);
}

static void handle(struct holder *h, struct hclient *c, const struct sess_frame *f)
{
	switch (f->type) {
	case MSG_INPUT:
		on_input(h, c, f);
		break;
	case MSG_CTRL:
		on_ctrl(h, c, f);
		break;
	case MSG_RESIZE:
		on_resize(h, c, f);
		break;
	case MSG_SIGNAL:
		on_signal(h, c, f);
		break;
	case MSG_TAKE:
	case MSG_RELEASE:
		on_control(h, c, f);
		break;
	case MSG_SUBSCRIBE:
		on_subscribe(h, c, f);
		break;
	case MSG_STATUS:
		reply_state(h, c);
		break;
	default:
		c->gone = 1;   /* a holder's message from a client: not one of ours */
	}
}

static void encode_event(struct hclient *c, const struct sb_session_event *e)
{
	json_t *o = sess_event_json(e);
	char *text = o ? sb_json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (text)
		sess_frame_put(&c->out, MSG_EVENT, NULL, 0, text, strlen(text));
	free(text);
}

/* Queues what a subscriber has not had: events at their offsets between the
 * output, then LIVE once the backlog is through. */
static void fill_client(struct holder *h, struct hclient *c)
{
	char buf[SESS_CHUNK];

	if (c->ev_seq < event_oldest(h))
		c->ev_seq = event_oldest(h);
	while (c->subscribed && c->out.len - c->out_off < CLIENT_QUEUE) {
		/* output the log no longer has is skipped: the next output frame says how much */
		if (c->cursor < h->log.first) {
			c->dropped += h->log.first - c->cursor;
			c->cursor = h->log.first;
		}
		const struct sb_session_event *e = c->ev_seq < h->ev_next ? event_at(h, c->ev_seq) : NULL;
		if (e && e->offset <= c->cursor) {
			encode_event(c, e);
			c->ev_seq++;
			continue;
		}
		unsigned long long dropped = c->dropped;
		unsigned long long until = e && e->offset < h->log.end ? e->offset : h->log.end;
		if (c->cursor >= until) {
			if (!c->live_sent)
				sess_frame_put(&c->out, MSG_LIVE, NULL, 0, NULL, 0);
			c->live_sent = 1;
			return;
		}
		size_t want = until - c->cursor < sizeof(buf) ? (size_t)(until - c->cursor) : sizeof(buf);
		ssize_t n = sess_log_read(&h->log, c->cursor, buf, want);
		if (n <= 0) {
			c->gone = 1;
			return;
		}
		unsigned char head[16];
		sess_put64(head, c->cursor);
		sess_put64(head + 8, dropped);
		sess_frame_put(&c->out, MSG_OUTPUT, head, sizeof(head), buf, (size_t)n);
		c->cursor += (unsigned long long)n;
		c->dropped = 0;
	}
}

static void flush_client(struct hclient *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			c->gone = 1;
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len)
		c->out.len = c->out_off = 0;
}

static void read_client(struct holder *h, struct hclient *c)
{
	ssize_t n = sess_fill(&c->in, &c->in_off, c->fd);
	struct sess_frame f;
	int rc;

	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR)) {
		c->gone = 1;
		return;
	}
	while ((rc = sess_frame_take(&f, &c->in, &c->in_off, NULL)) == 1 && !c->gone)
		handle(h, c, &f);
	if (rc < 0)
		c->gone = 1;
}

static void drop_client(struct holder *h, size_t i)
{
	struct hclient *c = h->clients[i];

	if (h->controller == c) {
		h->controller = NULL;
		add_event(h, SB_EVENT_CONTROL, SB_SOURCE_AGENT, -1, "released", 8);
	}
	close(c->fd);
	sb_buf_clear(&c->in);
	sb_buf_clear(&c->out);
	free(c);
	h->clients[i] = h->clients[--h->n_clients];
}

static void accept_clients(struct holder *h)
{
	int fd;

	while ((fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct hclient *c = h->n_clients < MAX_CLIENTS ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		h->clients[h->n_clients++] = c;
	}
}

/* ---- the loop ---- */

static int poll_timeout(const struct holder *h)
{
	long long next = h->flush_at;

	if (h->ready_fd >= 0 && !h->ready_wanted && (!next || h->ready_at < next))
		next = h->ready_at;
	if (h->ready_fd >= 0 && h->ready_wanted && (!next || sb_clock_monotonic_ms() + SETTLE_POLL_MS < next))
		next = sb_clock_monotonic_ms() + SETTLE_POLL_MS;
	if (h->lost && (!next || h->lost_retry_at < next))
		next = h->lost_retry_at;
	if (!next)
		return -1;
	long long left = next - sb_clock_monotonic_ms();
	return left < 0 ? 0 : (int)left;
}

static void serve(struct holder *h)
{
	int open = 1;

	for (;;) {
		struct pollfd pfd[3 + MAX_CLIENTS];
		size_t nc = h->n_clients;
		pfd[0] = (struct pollfd){ .fd = h->listen_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = h->sig_fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = h->master, .events = POLLIN | (h->inq.len ? POLLOUT : 0) };
		for (size_t i = 0; i < nc; i++)
			pfd[3 + i] = (struct pollfd){ .fd = h->clients[i]->fd,
						      .events = POLLIN | (h->clients[i]->out.len ? POLLOUT : 0) };
		if (poll(pfd, 3 + nc, poll_timeout(h)) < 0 && errno != EINTR)
			return;
		if (pfd[2].revents & POLLOUT)
			drain_input(h);
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) && read_master(h) < 0)
			open = 0;
		if (h->flush_at && sb_clock_monotonic_ms() >= h->flush_at)
			redact_flush(h);
		if (h->ready_fd >= 0 && (h->ready_wanted || sb_clock_monotonic_ms() >= h->ready_at))
			want_ready(h);
		if (h->lost && sb_clock_monotonic_ms() >= h->lost_retry_at)
			mark_lost(h);
		if (pfd[1].revents) {
			struct signalfd_siginfo si;
			while (read(h->sig_fd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD && !h->killed_sig) {
					h->killed_sig = SIGTERM;
					sb_shell_kill(h->shell);
				}
		}
		for (size_t i = 0; i < nc; i++)
			if (pfd[3 + i].revents & (POLLIN | POLLHUP | POLLERR))
				read_client(h, h->clients[i]);
		if (pfd[0].revents)
			accept_clients(h);
		for (size_t i = 0; i < h->n_clients; i++) {
			fill_client(h, h->clients[i]);
			flush_client(h->clients[i]);
		}
		for (size_t i = h->n_clients; i-- > 0;)
			if (h->clients[i]->gone)
				drop_client(h, i);
		if (!open || sb_shell_poll(h->shell, NULL))
			return;
	}
}

static void describe_end(struct holder *h, int status)
{
	static const char *const sig_names[] = { [SIGTERM] = "TERM", [SIGKILL] = "KILL" };

	h->st.exit_code = status;
	if (sb_shell_ended_by_stop(h->shell))
		snprintf(h->st.reason, sizeof(h->st.reason), "%s", _("the sandbox was stopped"));
	else if (h->killed_sig)
		snprintf(h->st.reason, sizeof(h->st.reason), _("killed (%s)"), sig_names[h->killed_sig]);
	else
		snprintf(h->st.reason, sizeof(h->st.reason), _("exited with status %d"), status);
}

/* The last output, the exit event and status, END to every client. */
static void finish(struct holder *h)
{
	int status = -1;

	while (read_master(h) == 0 && h->master >= 0) {
		struct pollfd p = { .fd = h->master, .events = POLLIN };
		if (poll(&p, 1, 0) <= 0)
			break;
	}
	sess_marks_flush(&h->marks, &(const struct sess_marks_sink){ out_plain, out_mark, h });
	redact_flush(h);
	mark_lost(h);
	sb_shell_wait(h->shell, 5000, &status);
	describe_end(h, status);
	add_event(h, SB_EVENT_EXIT, SB_SOURCE_AGENT, status, h->st.reason, strlen(h->st.reason));
	h->st.state = SB_SESSION_EXITED;
	sess_status_write(h->dfd, &h->st, SESS_STATUS_FROM_SPARE, NULL);
	unlinkat(h->dfd, SESS_SOCK, 0);
	long long deadline = sb_clock_monotonic_ms() + 1000;
	for (size_t i = 0; i < h->n_clients; i++) {
		struct hclient *c = h->clients[i];
		fill_client(h, c);
		sess_frame_put(&c->out, MSG_END, NULL, 0, NULL, 0);
		while (!c->gone && c->out.len && sb_clock_monotonic_ms() < deadline) {
			struct pollfd p = { .fd = c->fd, .events = POLLOUT };
			poll(&p, 1, 100);
			flush_client(c);
			fill_client(h, c);
		}
	}
	sb_shell_close(h->shell);
}

static int bind_socket(struct holder *h, struct sb_error *err)
{
	struct sockaddr_un sa;

	unlinkat(h->dfd, SESS_SOCK, 0);
	sess_sockaddr(&sa, h->dfd);
	h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	mode_t old = umask(0177);
	int rc = h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		 listen(h->listen_fd, 64) < 0;
	umask(old);
	return rc ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot listen on the session's socket")) : 0;
}

/* Events and status of an earlier life of this id: the log continues. */
static void load_history(struct holder *h)
{
	struct sb_session_event *ev;
	struct sess_status old;
	size_t n;

	if (sess_events_load(&ev, &n, h->dfd, 0, NULL) == 0) {
		for (size_t i = n > SESS_EVENTS_MEM ? n - SESS_EVENTS_MEM : 0; i < n; i++)
			keep_event(h, &ev[i]);
		sess_events_free(ev, n);
	}
	h->st.created_at = h->st.started_at = sb_clock_now();
	if (sess_status_read(&old, h->dfd, NULL) == 0) {
		h->st.created_at = old.created_at;
		h->st.restarts = old.restarts + 1;
		h->st.last_input = old.last_input;
		h->st.last_input_off = old.last_input_off;
		h->st.last_output = old.last_output;
	}
}

/* Secrets go to the shell as typed input: never into a file (the process
 * spec) nor into the events. */
static int export_secrets(struct holder *h)
{
	const struct sb_session_opts *o = h->a->opts;
	struct sb_buf b = { 0 };
	int rc = o->n_secrets ? sb_buf_add(&b, " export", 7) : 0;

	for (size_t i = 0; rc == 0 && i < o->n_secrets; i++) {
		rc = sb_buf_add(&b, " ", 1) < 0 || sb_buf_add(&b, o->secrets[i].name, strlen(o->secrets[i].name)) < 0 ||
		     sb_buf_add(&b, "='", 2) < 0;
		for (const char *p = o->secrets[i].value; rc == 0 && *p; p++)
			rc = *p == '\'' ? sb_buf_add(&b, "'\\''", 4) : sb_buf_add(&b, p, 1);
		if (rc == 0)
			rc = sb_buf_add(&b, "'", 1);
	}
	if (rc == 0 && o->n_secrets)
		rc = sb_buf_add(&b, "\n", 1) < 0 ? -1 : queue_input(h, b.data, b.len);
	if (b.data)
		explicit_bzero(b.data, b.cap);
	sb_buf_clear(&b);
	return rc;
}

static int start_shell(struct holder *h, struct sb_error *err)
{
	const struct sb_session_opts *o = h->a->opts;
	struct sb_shell_opts so = {
		.argv = h->a->argv, .env = h->a->env, .cwd = o->cwd, .term = o->argv ? NULL : "dumb",
		.rows = o->rows ? o->rows : 24, .cols = o->cols ? o->cols : 80, .no_echo = !o->echo,
		.register_caller = 1,
	};
	int rc = sb_shell_open(&h->shell, h->root, h->a->dir->name, &so, err);

	if (rc < 0)
		return rc;
	h->master = sb_shell_fd(h->shell);
	tcgetattr(h->master, &h->tio);
	h->st.rows = so.rows;
	h->st.cols = so.cols;
	return export_secrets(h) < 0 ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory")) : 0;
}

static int setup(struct holder *h, struct sb_error *err)
{
	const struct sb_session_opts *o = h->a->opts;
	int rc;

	if ((rc = sb_root_open(&h->root, h->a->root_path, err)) < 0 ||
	    (rc = sess_log_open(&h->log, h->dfd, o->log_cap ? o->log_cap : SESS_DEFAULT_LOG_CAP, err)) < 0 ||
	    (rc = sb_redact_new(&h->redact, o->secrets, o->n_secrets, err)) < 0 || (rc = bind_socket(h, err)) < 0)
		return rc;
	load_history(h);
	if (o->n_secrets && (h->secret_names = calloc(o->n_secrets + 1, sizeof(char *))))
		for (size_t i = 0; i < o->n_secrets; i++)
			h->secret_names[i] = (char *)o->secrets[i].name;
	if ((rc = start_shell(h, err)) < 0)
		return rc;
	h->st.pid = getpid();
	h->st.state = SB_SESSION_RUNNING;
	h->st.exit_code = -1;
	struct sb_buf cmd = { 0 };
	for (size_t i = 0; h->a->argv[i]; i++)
		if ((i && sb_buf_add(&cmd, " ", 1) < 0) || sb_buf_add(&cmd, h->a->argv[i], strlen(h->a->argv[i])) < 0)
			break;
	add_event(h, h->st.restarts ? SB_EVENT_RESTART : SB_EVENT_START, SB_SOURCE_AGENT, -1, cmd.data, cmd.len);
	sb_buf_clear(&cmd);
	return sess_status_write(h->dfd, &h->st, SESS_STATUS_KEEP_SPARE, err);
}

void sess_holder_main(const struct holder_args *a)
{
	struct holder h = {
		.a = a, .dfd = a->dir->dfd, .listen_fd = -1, .events_fd = -1, .master = -1, .ready_fd = a->ready_fd,
		.ready_prompts = a->opts->n_secrets ? 2 : 1,   /* the export's prompt follows the first */
		.ready_at = sb_clock_monotonic_ms() + (a->opts->argv ? 0 : READY_PROMPT_MS),
		.settle_by = sb_clock_monotonic_ms() + READY_PROMPT_MS,
	};
	const int keep[] = { a->lock_fd, a->ready_fd, a->dir->dfd };
	struct sb_error err;

	close_others(keep, sizeof(keep) / sizeof(keep[0]));
	if ((h.sig_fd = setup_signals()) < 0)
		fail_ready(a->ready_fd, SB_ERR_IO, "signalfd");
	if (setup(&h, &err) < 0)
		fail_ready(a->ready_fd, err.code, err.msg);
	if (a->opts->argv)
		want_ready(&h);
	serve(&h);
	say_ready(&h);
	finish(&h);
	_exit(0);
}
