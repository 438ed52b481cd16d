#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "sandbox/sandbox.h"
#include "sandbox/timeline.h"
#include "session/session.h"

/* A sandbox's timeline and a session's output log as MCP resources. Both are
 * files the host writes about a sandbox's activity, read through the library
 * (never a path inside a sandbox) and cut to their newest RESOURCE_MAX bytes.
 * A subscription waits on the library's descriptors: inotify for a timeline
 * (sb_timeline_watch), the holder's socket for a session (its subscription
 * frames), so nothing is polled on a timer. */

#define SCHEME "sandbench://sandboxes/"
/* the text of one read: the newest bytes of the log, the newest whole entries of the timeline */
#define RESOURCE_MAX (256u << 10)
/* resources/list stops here (no pagination) */
#define LIST_MAX 1000

/* What a URI names, parsed: the sandbox, and the session for a log. */
struct target {
	char name[SB_SANDBOX_NAME_MAX + 1];
	char session[SB_SESSION_ID_MAX + 1];
};

struct kind {
	const char *suffix;              /* after the sandbox's name (a log: its session's id before it) */
	const char *template, *title, *description, *mime;
	int (*read)(char **text, size_t *len, struct sb_root *root, const struct target *t, struct sb_error *err);
	int (*watch)(struct mcp_sub *sub, struct sb_root *root, const struct target *t, struct sb_error *err);
	/* 1 when the resource grew since the last call, 0 not, negative: it is gone */
	int (*check)(struct mcp_sub *sub);
};

struct mcp_sub {
	struct mcp_sub *next;
	struct mcp_session *sess;
	char *uri;
	const struct kind *kind;
	struct sb_timeline_watch *tw;
	struct sb_session *ss;
};

/* one entry as its line (malloc'd, no newline), NULL when out of memory */
static char *entry_line(const struct sb_timeline_entry *e)
{
	json_t *doc = sb_timeline_entry_to_json(e);
	char *line = doc ? sb_json_dumps(doc, JSON_COMPACT) : NULL;

	json_decref(doc);
	return line;
}

static int read_timeline(char **text, size_t *len, struct sb_root *root, const struct target *t, struct sb_error *err)
{
	struct sb_timeline *tl;
	struct sb_buf out = { 0 };
	size_t i, used = 0;
	int rc;

	if ((rc = sb_timeline_read(&tl, root, t->name, NULL, err)) < 0)
		return rc;
	/* the newest entries that fit, oldest first: count back, then write */
	for (i = tl->count; i > 0; i--) {
		char *line = entry_line(&tl->entries[i - 1]);
		size_t n = line ? strlen(line) + 1 : 0;
		free(line);
		if (used + n > RESOURCE_MAX)
			break;
		used += n;
	}
	for (; i < tl->count && rc == 0; i++) {
		char *line = entry_line(&tl->entries[i]);
		if (!line || sb_buf_add(&out, line, strlen(line)) < 0 || sb_buf_add(&out, "\n", 1) < 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		free(line);
	}
	sb_timeline_free(tl);
	if (rc < 0) {
		sb_buf_clear(&out);
		return rc;
	}
	*len = out.len;
	*text = out.data ? out.data : strdup("");
	return *text ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int read_log(char **text, size_t *len, struct sb_root *root, const struct target *t, struct sb_error *err)
{
	struct sb_session_info info;
	struct sb_session_read_result r;
	int rc;

	if ((rc = sb_session_inspect(&info, root, t->name, t->session, err)) < 0)
		return rc;
	unsigned long long since = info.offset > RESOURCE_MAX ? info.offset - RESOURCE_MAX : 0;
	struct sb_session_read_opts o = { .since = (long long)(since > info.first ? since : info.first) };
	sb_session_info_clear(&info);
	if ((rc = sb_session_read(&r, root, t->name, t->session, &o, err)) < 0)
		return rc;
	*text = sb_session_text_clean(r.output, r.len, len);
	sb_session_read_result_clear(&r);
	return *text ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int watch_timeline(struct mcp_sub *sub, struct sb_root *root, const struct target *t, struct sb_error *err)
{
	return sb_timeline_watch_open(&sub->tw, root, t->name, err);
}

static int check_timeline(struct mcp_sub *sub)
{
	return sb_timeline_watch_check(sub->tw, NULL);
}

/* The holder streams the session's output to a subscriber from its current
 * end on: a frame of output is the log growing. */
static int watch_log(struct mcp_sub *sub, struct sb_root *root, const struct target *t, struct sb_error *err)
{
	struct sb_session_info info;
	int rc;

	if ((rc = sb_session_inspect(&info, root, t->name, t->session, err)) < 0)
		return rc;
	unsigned long long end = info.offset;
	sb_session_info_clear(&info);
	if ((rc = sb_session_connect(&sub->ss, root, t->name, t->session, err)) < 0)
		return rc;
	return sb_session_subscribe(sub->ss, end, err);
}

static int check_log(struct mcp_sub *sub)
{
	struct sb_session_item it;
	int rc, grew = 0;

	/* an item's data and event are the library's until the next call */
	while ((rc = sb_session_next(sub->ss, &it, NULL)) > 0) {
		if (it.kind == SB_ITEM_OUTPUT && it.len)
			grew = 1;
		if (it.kind == SB_ITEM_END)
			return -1;
	}
	return rc < 0 ? -1 : grew;
}

static const struct kind kinds[] = {
	{ "timeline", SCHEME "{name}/timeline", "Timeline",
	  "What ran in a sandbox and who ran it: one JSON object per line (execs, session input, lifecycle, "
	  "file transfers, commits), the newest 256 KiB.",
	  "application/jsonl", read_timeline, watch_timeline, check_timeline },
	{ "log", SCHEME "{name}/sessions/{session}/log", "Session output",
	  "A session's terminal output as text (escape sequences removed), the newest 256 KiB.", "text/plain",
	  read_log, watch_log, check_log },
};

/* SCHEME NAME/timeline or SCHEME NAME/sessions/ID/log, the names checked */
static const struct kind *parse_uri(struct target *t, const char *uri, struct sb_error *err)
{
	const char *p = uri && !strncmp(uri, SCHEME, strlen(SCHEME)) ? uri + strlen(SCHEME) : NULL;
	const char *slash = p ? strchr(p, '/') : NULL;

	memset(t, 0, sizeof(*t));
	if (slash && (size_t)(slash - p) <= SB_SANDBOX_NAME_MAX) {
		memcpy(t->name, p, (size_t)(slash - p));
		const char *rest = slash + 1, *sid = !strncmp(rest, "sessions/", 9) ? rest + 9 : NULL;
		const char *end = sid ? strchr(sid, '/') : NULL;
		if (!strcmp(rest, kinds[0].suffix))
			return sb_sandbox_name_check(t->name, err) < 0 ? NULL : &kinds[0];
		if (end && !strcmp(end + 1, kinds[1].suffix) && end > sid && (size_t)(end - sid) <= SB_SESSION_ID_MAX) {
			memcpy(t->session, sid, (size_t)(end - sid));
			return sb_sandbox_name_check(t->name, err) < 0 ? NULL : &kinds[1];
		}
	}
	sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a resource of this server."), uri ? uri : "");
	return NULL;
}

static json_t *resource_json(const struct kind *k, const char *uri, const char *what)
{
	char title[256];

	snprintf(title, sizeof(title), "%s: %s", k->title, what);
	return json_pack("{s:s, s:s, s:s, s:s}", "uri", uri, "name", title, "title", title, "mimeType", k->mime);
}

/* SCHEME NAME/timeline and SCHEME NAME/sessions/ID/log of each sandbox */
json_t *mcp_resources_list(struct sb_mcp_server *srv, struct sb_error *err)
{
	struct sb_sandbox_info *boxes;
	size_t n, m;
	json_t *list = json_array();

	if (sb_sandbox_list(&boxes, &n, srv->root, err) < 0) {
		json_decref(list);
		return NULL;
	}
	for (size_t i = 0; i < n && json_array_size(list) < LIST_MAX; i++) {
		const char *name = boxes[i].rec.name;
		char *uri = sb_strdupf(SCHEME "%s/%s", name, kinds[0].suffix);
		list = sb_json_append(list, uri ? resource_json(&kinds[0], uri, name) : NULL);
		free(uri);
		struct sb_session_info *ss;
		if (sb_session_list(&ss, &m, srv->root, name, NULL) < 0)
			continue;
		for (size_t j = 0; j < m && json_array_size(list) < LIST_MAX; j++) {
			char *what = sb_strdupf("%s/%s", name, ss[j].id);
			uri = sb_strdupf(SCHEME "%s/sessions/%s/%s", name, ss[j].id, kinds[1].suffix);
			list = sb_json_append(list, uri && what ? resource_json(&kinds[1], uri, what) : NULL);
			free(uri);
			free(what);
		}
		sb_session_list_free(ss, m);
	}
	sb_sandbox_list_free(boxes, n);
	return list;
}

json_t *mcp_resource_templates(void)
{
	json_t *list = json_array();

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		list = sb_json_append(list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "uriTemplate", kinds[i].template, "name",
						      kinds[i].title, "title", kinds[i].title, "description",
						      kinds[i].description, "mimeType", kinds[i].mime));
	return list;
}

json_t *mcp_resource_read(struct sb_mcp_server *srv, const char *uri, struct sb_error *err)
{
	struct target t;
	const struct kind *k = parse_uri(&t, uri, err);
	char *text;
	size_t len;

	if (!k || k->read(&text, &len, srv->root, &t, err) < 0)
		return NULL;
	json_t *doc = json_pack("{s:[{s:s, s:s, s:s%}]}", "contents", "uri", uri, "mimeType", k->mime, "text", text, len);
	free(text);
	if (!doc)
		sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return doc;
}

static void sub_free(struct mcp_sub *sub)
{
	sb_timeline_watch_close(sub->tw);
	sb_session_close(sub->ss);
	free(sub->uri);
	free(sub);
}

int mcp_resource_subscribe(struct mcp_session *s, const char *uri, struct sb_error *err)
{
	struct sb_mcp_server *srv = s->srv;
	struct target t;
	const struct kind *k = parse_uri(&t, uri, err);
	struct mcp_sub *sub;
	size_t n = 0;
	int rc;

	if (!k)
		return SB_ERR_INVALID;
	for (sub = srv->subs; sub; sub = sub->next, n++)
		if (sub->sess == s && !strcmp(sub->uri, uri))
			return 0;
	if (n >= MCP_MAX_SUBS)
		return sb_error_set(err, SB_ERR_LIMIT, _("Too many subscriptions: unsubscribe from one first."));
	if (!(sub = calloc(1, sizeof(*sub))) || !(sub->uri = strdup(uri))) {
		free(sub);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	sub->sess = s;
	sub->kind = k;
	if ((rc = k->watch(sub, srv->root, &t, err)) < 0) {
		sub_free(sub);
		return rc;
	}
	sub->next = srv->subs;
	srv->subs = sub;
	return 0;
}

/* Ends the subscriptions of s to uri (NULL: all of them). */
void mcp_resource_unsubscribe(struct mcp_session *s, const char *uri)
{
	for (struct mcp_sub **p = &s->srv->subs; *p;) {
		struct mcp_sub *sub = *p;
		if (sub->sess == s && (!uri || !strcmp(sub->uri, uri))) {
			*p = sub->next;
			sub_free(sub);
		} else {
			p = &sub->next;
		}
	}
}

int mcp_subs_pollfds(const struct sb_mcp_server *srv, struct pollfd *pfd, int max)
{
	int n = 0;

	for (const struct mcp_sub *sub = srv->subs; sub && n < max; sub = sub->next) {
		int fd = sub->tw ? sb_timeline_watch_fd(sub->tw) : sub->ss ? sb_session_fd(sub->ss) : -1;
		if (fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	return n;
}

/* After poll: one notifications/resources/updated per resource that grew; a
 * resource that went away (the sandbox removed, the session ended) is
 * notified once more, and its watch ends (the subscription stays until
 * unsubscribed; a read then says what happened). */
void mcp_subs_service(struct sb_mcp_server *srv)
{
	for (struct mcp_sub *sub = srv->subs; sub; sub = sub->next) {
		if (!sub->tw && !sub->ss)
			continue;
		int grew = sub->kind->check(sub);
		if (grew < 0) {
			sb_timeline_watch_close(sub->tw);
			sb_session_close(sub->ss);
			sub->tw = NULL;
			sub->ss = NULL;
		}
		if (grew)
			sub->sess->emit(sub->sess, NULL,
					json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
						  "notifications/resources/updated", "params", "uri", sub->uri));
	}
}
