/* Session events (input lines with their source, prompt marks, start, exit):
 * JSON lines in events.jsonl, rotated to events.old.jsonl at a cap. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/jsonfile.h"
#include "base/i18n.h"

static const char *const event_names[] = {
	[SB_EVENT_START] = "start",   [SB_EVENT_RESTART] = "restart", [SB_EVENT_INPUT] = "input",
	[SB_EVENT_CTRL] = "ctrl",     [SB_EVENT_PROMPT] = "prompt",   [SB_EVENT_CONTROL] = "control",
	[SB_EVENT_RESIZE] = "resize", [SB_EVENT_EXIT] = "exit",
};
#define N_EVENT_NAMES (sizeof(event_names) / sizeof(event_names[0]))

static const char *const source_names[] = {
	[SB_SOURCE_AGENT] = "agent",
	[SB_SOURCE_HUMAN] = "human",
	[SB_SOURCE_WORKBENCH] = "workbench",
};
#define N_SOURCES (sizeof(source_names) / sizeof(source_names[0]))

const char *sb_session_event_name(enum sb_session_event_type t)
{
	return (size_t)t < N_EVENT_NAMES ? event_names[t] : "unknown";
}

const char *sb_session_source_name(enum sb_session_source s)
{
	return (size_t)s < N_SOURCES ? source_names[s] : "agent";
}

int sb_session_source_parse(enum sb_session_source *out, const char *text, struct sb_error *err)
{
	for (size_t i = 0; i < N_SOURCES; i++)
		if (text && strcmp(text, source_names[i]) == 0) {
			*out = (enum sb_session_source)i;
			return 0;
		}
	return sb_error_set(err, SB_ERR_INVALID, _("unknown input source '%s' (agent, human or workbench)"),
			    text ? text : "");
}

void sb_session_event_clear(struct sb_session_event *e)
{
	if (!e)
		return;
	free(e->text);
	e->text = NULL;
}

json_t *sess_event_json(const struct sb_session_event *e)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:s}", "type", sb_session_event_name(e->type), "off",
			      (json_int_t)e->offset, "t", (json_int_t)e->time_ms, "src", sb_session_source_name(e->source));

	if (o && e->text && *e->text)
		o = sb_json_set(o, "text", json_string(e->text));
	if (o && e->more)
		o = sb_json_set(o, "more", json_true());
	if (o && (e->type == SB_EVENT_PROMPT || e->type == SB_EVENT_EXIT))
		o = sb_json_set(o, "code", e->exit_code >= 0 ? json_integer(e->exit_code) : json_null());
	return o;
}

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

int sess_event_parse(struct sb_session_event *out, const char *text, size_t len)
{
	json_t *o = json_loadb(text, len, 0, NULL);
	int type = o ? lookup(event_names, N_EVENT_NAMES, json_string_value(json_object_get(o, "type"))) : -1;
	int src = o ? lookup(source_names, N_SOURCES, json_string_value(json_object_get(o, "src"))) : -1;
	json_t *code = o ? json_object_get(o, "code") : NULL;
	const char *t = o ? json_string_value(json_object_get(o, "text")) : NULL;

	memset(out, 0, sizeof(*out));
	if (type < 0) {
		json_decref(o);
		return SB_ERR_FORMAT;
	}
	out->type = (enum sb_session_event_type)type;
	out->source = src < 0 ? SB_SOURCE_AGENT : (enum sb_session_source)src;
	out->offset = (unsigned long long)json_integer_value(json_object_get(o, "off"));
	out->time_ms = json_integer_value(json_object_get(o, "t"));
	out->exit_code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
	out->more = json_is_true(json_object_get(o, "more"));
	out->text = strdup(t ? t : "");
	json_decref(o);
	return out->text ? 0 : SB_ERR_NOMEM;
}

int sess_event_copy(struct sb_session_event *out, const struct sb_session_event *in)
{
	*out = *in;
	out->text = strdup(in->text ? in->text : "");
	return out->text ? 0 : SB_ERR_NOMEM;
}

void sess_events_free(struct sb_session_event *ev, size_t n)
{
	for (size_t i = 0; ev && i < n; i++)
		sb_session_event_clear(&ev[i]);
	free(ev);
}

static int load_file(struct sb_session_event **ev, size_t *n, size_t *cap, int dfd, const char *file,
		     unsigned long long since)
{
	int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 4 * SESS_EVENTS_CAP) {
		close(fd);
		return -EINVAL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	ssize_t got = text ? read(fd, text, (size_t)st.st_size) : -1;
	close(fd);
	if (got < 0) {
		free(text);
		return -EIO;
	}
	int rc = 0;
	for (char *line = text, *nl; line < text + got && rc == 0; line = nl + 1) {
		if (!(nl = memchr(line, '\n', (size_t)(text + got - line))))
			break;   /* a line cut by a crash */
		struct sb_session_event e;
		if (sess_event_parse(&e, line, (size_t)(nl - line)) < 0)
			continue;
		if (e.offset < since) {
			sb_session_event_clear(&e);
			continue;
		}
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			struct sb_session_event *p = realloc(*ev, c * sizeof(*p));
			if (!p) {
				sb_session_event_clear(&e);
				rc = -ENOMEM;
				break;
			}
			*ev = p;
			*cap = c;
		}
		(*ev)[(*n)++] = e;
	}
	free(text);
	return rc;
}

int sess_events_load(struct sb_session_event **out, size_t *count, int dfd, unsigned long long since,
		     struct sb_error *err)
{
	size_t n = 0, cap = 0;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = load_file(out, &n, &cap, dfd, SESS_EVENTS_OLD, since)) < 0 ||
	    (rc = load_file(out, &n, &cap, dfd, SESS_EVENTS, since)) < 0) {
		sess_events_free(*out, n);
		*out = NULL;
		return sb_error_errno(err, rc == -ENOMEM ? SB_ERR_NOMEM : SB_ERR_IO, -rc,
				      _("cannot read the events of a session"));
	}
	*count = n;
	return 0;
}

int sess_events_append(int dfd, int *fd, const struct sb_session_event *e)
{
	json_t *o = sess_event_json(e);
	char *line = o ? sb_json_dumps(o, JSON_COMPACT) : NULL;
	struct stat st;
	int rc = 0;

	json_decref(o);
	if (!line)
		return -ENOMEM;
	if (*fd >= 0 && fstat(*fd, &st) == 0 && st.st_size >= SESS_EVENTS_CAP) {
		renameat(dfd, SESS_EVENTS, dfd, SESS_EVENTS_OLD);
		close(*fd);
		*fd = -1;
	}
	if (*fd < 0)
		*fd = openat(dfd, SESS_EVENTS, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t len = strlen(line);
	line[len] = '\n';
	/* one write: a line is whole or (after a crash) cut at the end, where load skips it */
	if (*fd < 0 || write(*fd, line, len + 1) != (ssize_t)(len + 1))
		rc = -errno;
	free(line);
	return rc;
}
