/* Services: a command that runs inside its sandbox, supervised there by a
 * small shell loop that sandbench starts in the guest after every cold boot.
 * The supervisor lives in the guest, so a checkpoint keeps it with the
 * service (stop and restore need nothing of the host), and it holds no host
 * file: an exec'd process holding a host pipe makes restore fail, one writing
 * a host file writes nothing after it. It writes its state, its events and the
 * service's output under /.sandbench/service in the guest; the host reads
 * them from the sandbox's upper directory, inside that root (they are the
 * guest's data: untrusted, capped, parsed strictly). docs/services.md. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/inroot.h"
#include "base/log.h"
#include "internal.h"

#define SVC_DIR "/.sandbench/service"
#define SVC_LOG_CAP (1 << 20)       /* bytes of the log before it is rotated to log.1 */
#define SVC_EVENTS_CAP (1 << 17)    /* read cap; the guest empties its events file past 64 KiB */
#define SVC_INDEX_CAP (1 << 17)
#define SVC_START_TIMEOUT_MS 30000

/* $1 command, $2 health command ("" none), $3 health interval, $4 restart
 * policy, $5 log cap. Ticks once a second: an ended command (its watcher
 * wrote rc) is restarted by policy with a doubling delay (1 s to 60 s, back
 * to 1 s after a minute of running); the health command runs every
 * interval while the command runs. Every file is replaced by rename, so the
 * host never reads one half-written; the log is rotated by copy and
 * truncate, because the command keeps its descriptor (opened O_APPEND). */
static const char supervisor[] =
	"( exec </dev/null >/dev/null 2>&1\n"
	"cmd=$1 health=$2 every=$3 policy=$4 cap=$5 d=" SVC_DIR "\n"
	"mkdir -p $d || exit 1\n"
	"rm -f $d/rc $d/log.1; : > $d/log; : > $d/index; last=0\n"
	"ev() { echo \"$(date +%s) $*\" >> $d/events\n"
	"  [ \"$(wc -c < $d/events)\" -gt 65536 ] && : > $d/events; }\n"
	"put() { echo \"$run $hl $restarts\" > $d/state.new && mv -f $d/state.new $d/state; }\n"
	"start() { ( sh -c \"$cmd\" >> $d/log 2>&1 & echo $! > $d/pid.new && mv -f $d/pid.new $d/pid\n"
	"    wait $!; echo $? > $d/rc.new; mv -f $d/rc.new $d/rc ) &\n"
	"  w=$! started=$(date +%s) run=running; [ -n \"$health\" ] && hl=starting; put; }\n"
	"hl=none restarts=0 delay=1 next=0\n"
	"start; ev started\n"
	"while :; do t=$(date +%s)\n"
	"  if [ $run = running ] && [ -f $d/rc ]; then rc=$(cat $d/rc); rm -f $d/rc; wait $w\n"
	"    ev exited \"$rc\"\n"
	"    if [ $policy = always ] || { [ $policy = on-failure ] && [ \"$rc\" != 0 ]; }; then\n"
	"      [ $((t - started)) -ge 60 ] && delay=1\n"
	"      run=backoff due=$((t + delay)) delay=$((delay * 2)); [ $delay -gt 60 ] && delay=60\n"
	"    else run=exited; fi; put; fi\n"
	"  if [ $run = backoff ] && [ $t -ge $due ]; then restarts=$((restarts + 1)); start; ev restarted $restarts; fi\n"
	"  if [ -n \"$health\" ] && [ $run = running ] && [ $t -ge $next ]; then next=$((t + every))\n"
	"    if sh -c \"$health\" >/dev/null 2>&1; then h=healthy\n"
	"    elif [ $hl = starting ] && [ $((t - started)) -lt $every ]; then h=starting; else h=unhealthy; fi\n"
	"    [ $h != $hl ] && { hl=$h; ev health $h; put; }; fi\n"
	"  s=$(wc -c < $d/log)\n"
	"  if [ $s -gt $cap ]; then cp $d/log $d/log.new && mv -f $d/log.new $d/log.1 && : > $d/log; : > $d/index; s=0; fi\n"
	"  if [ $s != $last ]; then last=$s; echo \"$t $s\" >> $d/index\n"
	"    [ \"$(wc -c < $d/index)\" -gt 65536 ] && : > $d/index; fi\n"
	"  sleep 1\n"
	"done ) &\n";

int sb_box_service_start(struct sb_box *b, struct sb_error *err)
{
	const struct sb_service *s = &b->rec.service;
	char interval[24], cap[24];

	if (!s->command)
		return 0;
	snprintf(interval, sizeof(interval), "%lld", s->interval);
	snprintf(cap, sizeof(cap), "%d", SVC_LOG_CAP);
	char *argv[] = { "/bin/sh", "-c", (char *)supervisor, "sb-service", s->command,
			 s->health ? s->health : "", interval, (char *)sb_service_restart_name(s->restart), cap, NULL };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot start the service of sandbox '%s'"), b->rec.name);
	struct sb_backend_exec x = { .argv = argv, .cwd = "/", .proc = SB_PROC_OPTS_DEFAULT };
	struct sb_proc_result res;
	x.proc.timeout_ms = SVC_START_TIMEOUT_MS;
	x.proc.stdin_fd = x.proc.stdout_fd = x.proc.stderr_fd = null;
	memset(&res, 0, sizeof(res));
	int rc = b->be->exec(&res, b->be_state, sb_box_target(b), &x, err);
	close(null);
	if (rc == 0 && res.status != 0)
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("the service supervisor of sandbox '%s' did not start (status %d)"),
				  b->rec.name, res.status);
	sb_proc_result_clear(&res);
	if (rc < 0)
		sb_error_wrap(err, _("cannot start the service of sandbox '%s'"), b->rec.name);
	return rc;
}

/* A file of the supervisor's, read from the upper directory inside that root. */
static int svc_read(char **out, size_t *len, const struct sb_sandbox_info *info, const char *file, size_t cap,
		    struct sb_error *err)
{
	char *upper = sb_path_join(info->dir, info->rec.disk ? SB_BOX_DISK "/upper" : "upper"), path[64];
	int rc;

	if (!upper)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	snprintf(path, sizeof(path), SVC_DIR "/%s", file);
	rc = sb_inroot_read(out, len, upper, path, cap, err);
	free(upper);
	return rc;
}

static const char *const svc_states[] = { "running", "backoff", "exited", NULL };
static const char *const svc_health[] = { "none", "starting", "healthy", "unhealthy", NULL };

static int one_of(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

int sb_sandbox_service_status(struct sb_service_status *out, const struct sb_sandbox_info *info)
{
	char *text = NULL, st[16], hl[16];
	int restarts = 0, ok = 0;

	memset(out, 0, sizeof(*out));
	if (!info->rec.service.command || info->rec.state != SB_STATE_RUNNING || !info->dir ||
	    svc_read(&text, NULL, info, "state", 256, NULL) < 0)
		return 0;
	if (sscanf(text, "%15s %15s %d", st, hl, &restarts) == 3 && one_of(svc_states, st) >= 0 &&
	    one_of(svc_health, hl) >= 0 && restarts >= 0) {
		snprintf(out->state, sizeof(out->state), "%s", st);
		snprintf(out->health, sizeof(out->health), "%s", hl);
		out->restarts = restarts;
		ok = out->known = 1;
	}
	free(text);
	return ok;
}

/* The supervisor's event words and what the timeline says of them; arg is
 * the check its argument must pass. */
static int arg_status(const char *a) { return strspn(a, "0123456789") == strlen(a) && *a && strlen(a) < 4; }
static int arg_health(const char *a) { return one_of(svc_health, a) > 0; }
static int arg_none(const char *a) { return !*a; }

static const struct svc_event {
	const char *word, *text;
	int (*arg)(const char *);
} svc_events[] = {
	{ "started", N_("service started"), arg_none },
	{ "exited", N_("service exited with status"), arg_status },
	{ "restarted", N_("service restarted, restart"), arg_status },
	{ "health", N_("service health:"), arg_health },
};

/* One line "TIME WORD [ARG]" into a timeline entry; 0 when it is not one. */
static int event_add(struct sb_root *root, const char *name, char *line)
{
	char *save = NULL, *t = strtok_r(line, " ", &save), *word = strtok_r(NULL, " ", &save);
	char *arg = strtok_r(NULL, " ", &save), text[96];

	if (!t || !word || strtok_r(NULL, " ", &save) || strspn(t, "0123456789") != strlen(t) || strlen(t) > 12)
		return 0;
	for (size_t i = 0; i < sizeof(svc_events) / sizeof(*svc_events); i++) {
		const struct svc_event *ev = &svc_events[i];
		if (strcmp(word, ev->word) || !ev->arg(arg ? arg : ""))
			continue;
		struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_SERVICE, SB_TIMELINE_SANDBENCH);
		snprintf(text, sizeof(text), "%s%s%s", _(ev->text), arg ? " " : "", arg ? arg : "");
		e.text = text;
		e.detail = _("reported by the supervisor inside the sandbox");
		e.time_ms = strtoll(t, NULL, 10) * 1000;
		return sb_timeline_append(root, name, &e, NULL, NULL) == 0;
	}
	return 0;
}

int sb_sandbox_service_collect(size_t *count, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_sandbox_info info;
	char *text = NULL, *posfile = NULL, *postext = NULL, *save = NULL;
	size_t len = 0, n = 0;
	int rc;

	if (count)
		*count = 0;
	if ((rc = sb_sandbox_inspect(&info, root, name, err)) < 0)
		return rc;
	if (!info.rec.service.command || svc_read(&text, &len, &info, "events", SVC_EVENTS_CAP, NULL) < 0)
		goto out;
	/* where the last collection stopped, in a file of the host's */
	posfile = sb_path_join(info.dir, "service.events");
	unsigned long long pos = 0;
	if (posfile && sb_fs_read_file(&postext, NULL, posfile, 64, NULL) == 0)
		pos = strtoull(postext, NULL, 10);
	/* the guest emptied the file: it starts over */
	if (pos > len)
		pos = 0;
	char *end = strrchr(text + pos, '\n');
	if (!end)
		goto out;
	*end = '\0';
	for (char *l = strtok_r(text + pos, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		n += event_add(root, name, l);
	char buf[32];
	snprintf(buf, sizeof(buf), "%zu", (size_t)(end + 1 - text));
	if (posfile && sb_fs_replace(posfile, buf, strlen(buf), 0600, 0, NULL) < 0)
		sb_log("cannot note the service events read of sandbox '%s'", name);
out:
	if (count)
		*count = n;
	free(text);
	free(postext);
	free(posfile);
	sb_sandbox_info_clear(&info);
	return 0;
}

/* The log's offset from which lines were written at or after since (unix
 * seconds): the index holds "TIME SIZE" lines, the log's size at each tick. */
static size_t since_offset(const struct sb_sandbox_info *info, long long since)
{
	char *text = NULL, *save = NULL;
	size_t off = 0;

	if (svc_read(&text, NULL, info, "index", SVC_INDEX_CAP, NULL) < 0)
		return 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long long t = 0;
		unsigned long long size = 0;
		if (sscanf(l, "%lld %llu", &t, &size) != 2 || t >= since)
			break;
		off = (size_t)size;
	}
	free(text);
	return off;
}

static int write_out(int fd, const char *p, size_t n, struct sb_error *err)
{
	return sb_fs_write_all(fd, p, n) < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot write the service's output")) : 0;
}

int sb_sandbox_logs(unsigned long long *pos, int fd, struct sb_root *root, const char *name, long long since,
		    struct sb_error *err)
{
	struct sb_sandbox_info info;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if ((rc = sb_sandbox_inspect(&info, root, name, err)) < 0)
		return rc;
	if (!info.rec.service.command) {
		rc = sb_error_set(err, SB_ERR_INVALID, _("sandbox '%s' has no service (create it with --service)"), name);
		goto out;
	}
	/* first read: the rotated part too, unless only what is newer is asked for */
	if (*pos == 0 && since <= 0 && svc_read(&text, &len, &info, "log.1", SVC_LOG_CAP * 2, NULL) == 0 &&
	    (rc = write_out(fd, text, len, err)) < 0)
		goto out;
	free(text);
	text = NULL;
	rc = svc_read(&text, &len, &info, "log", SVC_LOG_CAP * 2, err);
	if (rc == SB_ERR_NOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc < 0)
		goto out;
	if (*pos == 0 && since > 0)
		*pos = since_offset(&info, since);
	/* rotated since the last read: the new file from its start */
	if (*pos > len)
		*pos = 0;
	if ((rc = write_out(fd, text + *pos, len - *pos, err)) == 0)
		*pos = len;
out:
	free(text);
	sb_sandbox_info_clear(&info);
	return rc;
}

void sb_sandbox_state_text(char *buf, size_t size, const struct sb_sandbox_info *info)
{
	struct sb_service_status st;
	const char *state = sb_sandbox_state_name(info->rec.state);

	int service = sb_sandbox_service_status(&st, info);

	if (service && strcmp(st.state, "running"))
		snprintf(buf, size, "%s (%s)", state, strcmp(st.state, "backoff") ? _("service exited") : _("restarting"));
	else if (service && strcmp(st.health, "none"))
		snprintf(buf, size, "%s (%s)", state, st.health);
	else
		snprintf(buf, size, "%s", state);
}

json_t *sb_service_status_json(const struct sb_sandbox_info *info)
{
	struct sb_service_status st;

	if (!sb_sandbox_service_status(&st, info))
		return json_null();
	return json_pack("{s:s, s:s, s:i}", "state", st.state, "health", st.health, "restarts", st.restarts);
}
