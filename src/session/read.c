/* session read: the output from an offset until the prompt comes back, the
 * output pauses, a deadline passes or the session ends. Driven by the
 * holder's subscription: it returns when its condition holds, never after a
 * polling sleep. An exited session is read from its files. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "base/utf8.h"

#define DIALOG_IDLE_MS 500     /* a question waits for an answer: the pause that says so */

static const char *const reason_names[] = {
	[SB_READ_PROMPT] = "prompt",   [SB_READ_IDLE] = "idle",     [SB_READ_FIRST_TIMEOUT] = "first_timeout",
	[SB_READ_MAX_WAIT] = "max_wait", [SB_READ_EXITED] = "exited", [SB_READ_DATA] = "data",
};

const char *sb_session_reason_name(enum sb_session_reason r)
{
	return (size_t)r < sizeof(reason_names) / sizeof(reason_names[0]) ? reason_names[r] : "data";
}

void sb_session_read_result_clear(struct sb_session_read_result *r)
{
	if (!r)
		return;
	free(r->output);
	free(r->prompt);
	sess_events_free(r->events, r->n_events);
	memset(r, 0, sizeof(*r));
}

struct reader {
	struct sb_session_read_result *r;
	struct sb_buf out;
	struct sb_session_event *ev;
	size_t n_ev, cap_ev;
	long long last_output;         /* monotonic ms of the last output (the backlog's: from the status) */
	int live, ended, got_prompt;
	unsigned long long prompt_at;  /* the offset of the prompt mark read */
	unsigned long long out_end;    /* where the output read so far ends */
};

static int add_event(struct reader *rd, const struct sb_session_event *e)
{
	if (rd->n_ev == rd->cap_ev) {
		size_t c = rd->cap_ev ? rd->cap_ev * 2 : 16;
		struct sb_session_event *p = realloc(rd->ev, c * sizeof(*p));
		if (!p)
			return SB_ERR_NOMEM;
		rd->ev = p;
		rd->cap_ev = c;
	}
	if (sess_event_copy(&rd->ev[rd->n_ev], e) < 0)
		return SB_ERR_NOMEM;
	rd->n_ev++;
	if (e->type == SB_EVENT_PROMPT && e->offset > rd->r->since && !e->more) {
		rd->got_prompt = 1;
		rd->prompt_at = e->offset;
	}
	if (e->type == SB_EVENT_EXIT)
		rd->ended = 1;
	return 0;
}

/* state, idle, exit code, prompt and dialog from what was read */
static int conclude(struct reader *rd, unsigned long long end)
{
	struct sb_session_read_result *r = rd->r;
	const struct sb_session_event *prompt = NULL;
	int typed_after = 0;

	for (size_t i = 0; i < rd->n_ev; i++) {
		if (rd->ev[i].type == SB_EVENT_PROMPT && !rd->ev[i].more) {
			if (rd->ev[i].offset > r->since)
				r->exit_code = rd->ev[i].exit_code;
			prompt = &rd->ev[i];
			typed_after = 0;
		} else if (rd->ev[i].type == SB_EVENT_INPUT || rd->ev[i].type == SB_EVENT_CTRL) {
			typed_after = 1;
		}
	}
	r->state = rd->ended ? SB_SESSION_EXITED : SB_SESSION_RUNNING;
	r->idle = !rd->ended && prompt && prompt->offset == end && !typed_after;
	if (r->idle && !(r->prompt = strdup(prompt->text)))
		return SB_ERR_NOMEM;
	size_t keep = sb_utf8_boundary(rd->out.data ? rd->out.data : "", rd->out.len);
	r->offset = r->since + r->dropped + keep;
	rd->out.len = keep;
	if (!r->idle) {
		size_t n;
		char *clean = sb_session_text_clean(rd->out.data ? rd->out.data : "", rd->out.len, &n);
		if (!clean)
			return SB_ERR_NOMEM;
		r->dialog = sb_session_text_dialog(clean, n);
		free(clean);
	}
	r->idle_ms = rd->last_output ? sb_clock_monotonic_ms() - rd->last_output : -1;
	if (r->idle_ms < 0)
		r->idle_ms = 0;
	r->output = sb_buf_steal(&rd->out, &r->len);
	r->events = rd->ev;
	r->n_events = rd->n_ev;
	rd->ev = NULL;
	return r->output ? 0 : SB_ERR_NOMEM;
}

static int take_item(struct reader *rd, const struct sb_session_item *it)
{
	if (it->kind == SB_ITEM_OUTPUT) {
		if (it->dropped) {
			/* a reader that fell behind the log's cap: what it had is no
			 * longer followed by what comes, so only the rest is returned
			 * and since + dropped + len stays the offset */
			rd->r->dropped += rd->out.len + it->dropped;
			rd->out.len = 0;
		}
		if (rd->live || !rd->last_output)
			rd->last_output = sb_clock_monotonic_ms();
		rd->out_end = it->offset + it->len;
		return sb_buf_add(&rd->out, it->data, it->len) < 0 ? SB_ERR_NOMEM : 0;
	}
	if (it->kind == SB_ITEM_EVENT)
		return add_event(rd, &it->event);
	if (it->kind == SB_ITEM_LIVE)
		rd->live = 1;
	if (it->kind == SB_ITEM_END)
		rd->ended = rd->live = 1;
	return 0;
}

/* The reason to return now, or -1 to wait on; *wait_ms: until the next deadline. */
static int decide(const struct reader *rd, const struct sb_session_read_opts *o, long long start, int *wait_ms)
{
	long long now = sb_clock_monotonic_ms(), next = -1;

	if (rd->ended)
		return SB_READ_EXITED;
	/* the mark may come before the output in front of it: wait for that too */
	if (rd->got_prompt && rd->out_end >= rd->prompt_at)
		return SB_READ_PROMPT;
	if (!o->wait_idle_ms && !o->first_timeout_ms && !o->max_wait_ms)
		return SB_READ_DATA;
	if (o->max_wait_ms) {
		if (now - start >= o->max_wait_ms)
			return SB_READ_MAX_WAIT;
		next = start + o->max_wait_ms;
	}
	if (rd->out.len == 0 && o->first_timeout_ms) {
		if (now - start >= o->first_timeout_ms)
			return SB_READ_FIRST_TIMEOUT;
		if (next < 0 || start + o->first_timeout_ms < next)
			next = start + o->first_timeout_ms;
	}
	if (rd->out.len > 0) {
		size_t n;
		char *clean = sb_session_text_clean(rd->out.data, rd->out.len, &n);
		int idle_ms = o->wait_idle_ms;
		if (clean && sb_session_text_dialog(clean, n) && (!idle_ms || idle_ms > DIALOG_IDLE_MS))
			idle_ms = DIALOG_IDLE_MS;
		free(clean);
		if (idle_ms) {
			if (now - rd->last_output >= idle_ms)
				return SB_READ_IDLE;
			if (next < 0 || rd->last_output + idle_ms < next)
				next = rd->last_output + idle_ms;
		}
	}
	*wait_ms = next < 0 ? -1 : (int)(next - now);
	return -1;
}

static int read_live(struct reader *rd, struct sb_session *s, const struct sb_session_read_opts *o,
		     struct sb_error *err)
{
	struct sb_session_info info;
	long long start = sb_clock_monotonic_ms();
	int rc = sb_session_status(s, &info, err);

	if (rc < 0)
		return rc;
	rd->r->since = o->since < 0 ? info.last_input_off : (unsigned long long)o->since;
	if (info.last_output)
		rd->last_output = start - (sb_clock_now_ms() - info.last_output);
	sb_session_info_clear(&info);
	if ((rc = sb_session_subscribe(s, rd->r->since, err)) < 0)
		return rc;
	for (;;) {
		struct sb_session_item it;
		int got, wait_ms = -1, why;
		while ((got = sb_session_next(s, &it, err)) == 1 && (rc = take_item(rd, &it)) == 0 && it.kind != SB_ITEM_END)
			;
		if (got < 0 || rc < 0)
			return got < 0 ? got : sb_error_set(err, rc, _("out of memory"));
		if (rd->live && (why = decide(rd, o, start, &wait_ms)) >= 0) {
			rd->r->reason = (enum sb_session_reason)why;
			return 0;
		}
		struct pollfd p = { .fd = sb_session_fd(s), .events = POLLIN };
		if (poll(&p, 1, rd->live ? wait_ms : -1) < 0 && errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read a session"));
	}
}

static int read_files(struct reader *rd, const struct sess_dir *d, const struct sb_session_read_opts *o,
		      struct sb_error *err)
{
	struct sess_status st;
	struct sess_log log;
	char buf[SESS_CHUNK];
	int rc;

	sess_status_read(&st, d->dfd, NULL);
	if ((rc = sess_log_open(&log, d->dfd, 0, err)) < 0)
		return rc;
	unsigned long long since = o->since < 0 ? st.last_input_off : (unsigned long long)o->since;
	rd->r->since = since;
	if (since > log.end) {
		rc = sb_error_set(err, SB_ERR_INVALID, _("offset %llu is past the end of session '%s' (%llu)"), since, d->id,
				  log.end);
		goto out;
	}
	if (since < log.first)
		rd->r->dropped = log.first - since;
	for (unsigned long long off = since + rd->r->dropped; off < log.end && rc == 0;) {
		ssize_t n = sess_log_read(&log, off, buf, sizeof(buf));
		if (n <= 0)
			break;
		rc = sb_buf_add(&rd->out, buf, (size_t)n) < 0 ? SB_ERR_NOMEM : 0;
		off += (unsigned long long)n;
	}
	struct sb_session_event *ev;
	size_t n;
	if (rc == 0 && (rc = sess_events_load(&ev, &n, d->dfd, since, err)) == 0) {
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = add_event(rd, &ev[i]);
		sess_events_free(ev, n);
	}
	rd->ended = 1;
	rd->r->reason = SB_READ_EXITED;
out:
	sess_log_close(&log);
	return rc;
}

int sb_session_read(struct sb_session_read_result *out, struct sb_root *root, const char *name, const char *id,
		    const struct sb_session_read_opts *opts, struct sb_error *err)
{
	static const struct sb_session_read_opts defaults = { .since = -1 };
	struct reader rd = { .r = out };
	struct sb_session *s = NULL;
	struct sess_dir d;
	int rc;

	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	if (!opts)
		opts = &defaults;
	if ((rc = sess_dir_init(&d, root, name, id, err)) < 0 || (rc = sess_dir_open(&d, err)) < 0)
		goto out;
	if (sess_dir_live(d.dfd) && sb_session_connect(&s, root, name, id, NULL) == 0)
		rc = read_live(&rd, s, opts, err);
	else
		rc = read_files(&rd, &d, opts, err);
	if (rc == 0 && (rc = conclude(&rd, out->since + out->dropped + rd.out.len)) < 0)
		sb_error_set(err, rc, _("out of memory"));
out:
	sb_buf_clear(&rd.out);
	sess_events_free(rd.ev, rd.n_ev);
	sb_session_close(s);
	sess_dir_clear(&d);
	if (rc < 0)
		sb_session_read_result_clear(out);
	return rc;
}
