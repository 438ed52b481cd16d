/* Long operations (create, stop, restore, remove, pull, reap) run in a child
 * process so the screen never freezes; the child reports progress, log events
 * and its result as lines on a socket that the poll loop reads:
 *   P <phase> <layer> <layers> <done> <total> <item>
 *   E <0|1> <text>
 *   D <text>            (a result line for the done callback; several are joined)
 *   S <i> <n> <item>    (item i of n of a job on several items)
 *   R <rc> <message>
 * A child process rather than a thread: the library's root lock and its
 * subreaping of runsc helpers are per process. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/i18n.h"
#include "theme.h"
#include "base/proc.h"
#include "base/progress.h"
#include "ui.h"
#include "base/units.h"

struct ui_job {
	struct ui_job *next;
	pid_t pid;
	int fd;
	char label[128];
	char buf[4096];
	size_t len;
	int have_result, rc;
	char message[1024];
	char result[8192];           /* the D lines, joined by newlines */
	char progress[128];
	long long started;           /* ms, for the elapsed time of long jobs */
	void *arg;
	ui_job_done_fn done;
	void (*free_arg)(void *);
};

struct ui_job_ctx {
	int fd;
	struct sb_progress progress;
	long long last_ms;
};

/* MSG_NOSIGNAL: once the workbench has quit, the job goes on and its lines
 * are dropped (EPIPE) instead of killing it with SIGPIPE. */
static void put_line(int fd, const char *line)
{
	size_t len = strlen(line);

	while (len) {
		ssize_t n = send(fd, line, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= (size_t)n;
	}
}

static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

void ui_job_event(struct ui_job_ctx *ctx, int error, const char *fmt, ...)
{
	char text[1024], line[1100];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	one_line(text);
	snprintf(line, sizeof(line), "E %d %s\n", error ? 1 : 0, text);
	put_line(ctx->fd, line);
}

static void on_progress(void *user, const struct sb_progress_event *ev)
{
	struct ui_job_ctx *ctx = user;
	char line[512], item[200];
	long long t = sb_clock_monotonic_ms();

	/* a few updates a second are enough for a progress line */
	if (ev->phase != SB_PROGRESS_DONE && t - ctx->last_ms < 100)
		return;
	ctx->last_ms = t;
	snprintf(item, sizeof(item), "%s", ev->item ? ev->item : "");
	one_line(item);
	snprintf(line, sizeof(line), "P %d %d %d %llu %llu %s\n", (int)ev->phase, ev->layer, ev->layers, ev->done,
		 ev->total, item);
	put_line(ctx->fd, line);
}

void ui_job_result(struct ui_job_ctx *ctx, const char *fmt, ...)
{
	char text[1024], line[1100];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	one_line(text);
	snprintf(line, sizeof(line), "D %s\n", text);
	put_line(ctx->fd, line);
}

void ui_job_step(struct ui_job_ctx *ctx, size_t i, size_t n, const char *item)
{
	char line[512], text[400];

	snprintf(text, sizeof(text), "%s", item);
	one_line(text);
	snprintf(line, sizeof(line), "S %zu %zu %s\n", i, n, text);
	put_line(ctx->fd, line);
}

const struct sb_progress *ui_job_progress(struct ui_job_ctx *ctx)
{
	return &ctx->progress;
}

static void run_child(const char *root_path, int fd, ui_job_fn fn, void *arg)
{
	struct ui_job_ctx ctx = { .fd = 3, .progress = { on_progress, &ctx } };
	struct sb_root *root = NULL;
	struct sb_error err = { 0 };
	char line[1200];
	int rc, null = open("/dev/null", O_RDWR);
	sigset_t none;

	/* the terminal belongs to the workbench: the child talks through fd 3
	 * only, in a session of its own, so that the terminal's hang-up after
	 * the workbench quit does not end it */
	setsid();
	dup2(fd, 3);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	for (int i = 4; i < 1024; i++)
		close(i);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sb_sandbox_process_init(NULL);
	rc = sb_root_open(&root, root_path, &err);
	if (rc == 0)
		rc = fn(root, arg, &ctx, &err);
	sb_root_close(root);
	one_line(err.msg);
	snprintf(line, sizeof(line), "R %d %s\n", rc, rc < 0 ? err.msg : "");
	put_line(3, line);
	_exit(0);
}

int ui_job_start(struct ui_app *app, const char *label, ui_job_fn fn, void *arg, ui_job_done_fn done,
		 void (*free_arg)(void *))
{
	struct ui_job *job = calloc(1, sizeof(*job));
	int p[2];

	if (!job || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0) {
		free(job);
		ui_app_message(app, 1, _("cannot start '%s': %s"), label, strerror(errno));
		if (free_arg)
			free_arg(arg);
		return -1;
	}
	job->pid = fork();
	if (job->pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		free(job);
		ui_app_message(app, 1, _("cannot start '%s': %s"), label, strerror(e));
		if (free_arg)
			free_arg(arg);
		return -1;
	}
	if (job->pid == 0)
		run_child(sb_root_path(app->root), p[1], fn, arg);
	/* the library's orphan reaping must leave this child to us */
	sb_proc_keep(job->pid, 1);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	job->fd = p[0];
	job->started = sb_clock_monotonic_ms();
	snprintf(job->label, sizeof(job->label), "%s", label);
	job->arg = arg;
	job->done = done;
	job->free_arg = free_arg;
	job->next = app->jobs;
	app->jobs = job;
	app->dirty = 1;
	return 0;
}

static const char *phase_name(int phase)
{
	static const char *const names[] = {
		[SB_PROGRESS_RESOLVE] = N_("resolving"), [SB_PROGRESS_DOWNLOAD] = N_("downloading"),
		[SB_PROGRESS_VERIFY] = N_("verifying"), [SB_PROGRESS_UNPACK] = N_("unpacking"),
		[SB_PROGRESS_DONE] = N_("done"),
	};

	return phase >= 0 && phase <= SB_PROGRESS_DONE ? _(names[phase]) : "";
}

static void handle_line(struct ui_app *app, struct ui_job *job, char *line)
{
	if (line[0] == 'R' && line[1] == ' ') {
		char *end;
		job->rc = (int)strtol(line + 2, &end, 10);
		snprintf(job->message, sizeof(job->message), "%s", *end ? end + 1 : "");
		job->have_result = 1;
	} else if (line[0] == 'D' && line[1] == ' ') {
		size_t len = strlen(job->result);
		snprintf(job->result + len, sizeof(job->result) - len, "%s%s", len ? "\n" : "", line + 2);
	} else if (line[0] == 'S' && line[1] == ' ') {
		int i, n, off = 0;
		if (sscanf(line + 2, "%d %d %n", &i, &n, &off) >= 2)
			snprintf(job->progress, sizeof(job->progress), "%d/%d %s", i, n, line + 2 + off);
	} else if (line[0] == 'E' && line[1] == ' ' && line[2]) {
		ui_event_add(app, line[2] == '1', "%s", line[3] ? line + 4 : "");
	} else if (line[0] == 'P' && line[1] == ' ') {
		int phase, layer, layers, off = 0;
		unsigned long long done, total;
		if (sscanf(line + 2, "%d %d %d %llu %llu %n", &phase, &layer, &layers, &done, &total, &off) >= 5) {
			char d[32], t[32];
			sb_units_format_size(d, sizeof(d), done, SB_UNITS_COMPACT);
			sb_units_format_size(t, sizeof(t), total, SB_UNITS_COMPACT);
			if (layers > 0 && total)
				snprintf(job->progress, sizeof(job->progress), "%s %d/%d %s / %s", phase_name(phase), layer,
					 layers, d, t);
			else if (total)
				snprintf(job->progress, sizeof(job->progress), "%s %s / %s", phase_name(phase), d, t);
			else
				snprintf(job->progress, sizeof(job->progress), "%s %s", phase_name(phase), line + 2 + off);
		}
	}
	app->dirty = 1;
}

static void finish(struct ui_app *app, struct ui_job *job)
{
	int status = 0;

	while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
		;
	sb_proc_keep(job->pid, 0);
	close(job->fd);
	if (!job->have_result) {
		job->rc = SB_ERR_INTERRUPTED;
		snprintf(job->message, sizeof(job->message), _("'%s' ended without a result (status %d)"), job->label,
			 WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
	}
	if (job->done)
		job->done(app, job->rc, job->rc < 0 ? job->message : job->result, job->arg);
	if (job->free_arg)
		job->free_arg(job->arg);
	free(job);
	app->dirty = 1;
}

int ui_jobs_pollfds(struct ui_app *app, struct pollfd *pfd, int max)
{
	int n = 0;

	for (struct ui_job *j = app->jobs; j && n < max; j = j->next)
		pfd[n++] = (struct pollfd){ .fd = j->fd, .events = POLLIN };
	return n;
}

void ui_jobs_io(struct ui_app *app, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct ui_job **pp = &app->jobs, *job;
		while (*pp && (*pp)->fd != pfd[i].fd)
			pp = &(*pp)->next;
		if (!(job = *pp))
			continue;
		ssize_t r = read(job->fd, job->buf + job->len, sizeof(job->buf) - 1 - job->len);
		if (r > 0) {
			job->len += (size_t)r;
			job->buf[job->len] = '\0';
			char *start = job->buf, *nl;
			while ((nl = strchr(start, '\n'))) {
				*nl = '\0';
				handle_line(app, job, start);
				start = nl + 1;
			}
			job->len -= (size_t)(start - job->buf);
			memmove(job->buf, start, job->len);
			if (job->len == sizeof(job->buf) - 1)
				job->len = 0;   /* an overlong line: drop it */
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		*pp = job->next;
		finish(app, job);
	}
}

size_t ui_jobs_running(struct ui_app *app)
{
	size_t n = 0;

	for (struct ui_job *j = app->jobs; j; j = j->next)
		n++;
	return n;
}

int ui_jobs_busy(struct ui_app *app, const char *label_prefix)
{
	for (struct ui_job *j = app->jobs; j; j = j->next)
		if (!strncmp(j->label, label_prefix, strlen(label_prefix)))
			return 1;
	return 0;
}

int ui_jobs_describe(struct ui_app *app, char *buf, size_t size)
{
	static const char *const spin[] = { "|", "/", "-", "\\" };
	const struct ui_job *first = NULL;
	size_t n = 0;

	/* quiet jobs (no label) are not announced */
	for (const struct ui_job *j = app->jobs; j; j = j->next) {
		if (!j->label[0])
			continue;
		if (!first)
			first = j;
		n++;
	}
	if (!n)
		return 0;
	if (n == 1 && first->progress[0])
		snprintf(buf, size, "%s %s%s %s", spin[app->spinner % 4], first->label, ui_theme_glyphs()->ellipsis,
			 first->progress);
	else if (n == 1)
		snprintf(buf, size, "%s %s%s %llds", spin[app->spinner % 4], first->label, ui_theme_glyphs()->ellipsis,
			 (sb_clock_monotonic_ms() - first->started) / 1000);
	else
		snprintf(buf, size, _("%s %s%s (+%zu more)"), spin[app->spinner % 4], first->label,
			 ui_theme_glyphs()->ellipsis, n - 1);
	return 1;
}

void ui_jobs_abandon(struct ui_app *app, char *left, size_t size)
{
	size_t used = 0;

	/* operations the user started (and the reaper) finish on their own,
	 * nobody waits for their result; quiet probes are simply ended */
	left[0] = '\0';
	while (app->jobs) {
		struct ui_job *job = app->jobs;
		app->jobs = job->next;
		close(job->fd);
		if (!job->label[0]) {
			kill(job->pid, SIGTERM);
			while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
				;
		} else if (used < size) {
			used += (size_t)snprintf(left + used, size - used, "%s%s", used ? ", " : "", job->label);
		}
		sb_proc_keep(job->pid, 0);
		if (job->free_arg)
			job->free_arg(job->arg);
		free(job);
	}
}
