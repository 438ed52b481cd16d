/* Services against the real runsc: a busybox httpd supervised inside its
 * sandbox answers the host on a published loopback port (under --deny-all),
 * is restarted when killed, goes unhealthy and healthy again with its health
 * command, keeps answering (the same process) after stop and restore, runs
 * again after a cold start; logs shows its output and never follows a guest
 * symlink at the log's path; bad options get clear errors. */
#include "config.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fs.h"
#include "nettest.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static struct nt_names names;
static char name[32];

static void setup(void)
{
	sbf_setup(&f, "service");
	nt_names_init(&names);
	nt_config_write(&names, f.dir);
	snprintf(name, sizeof(name), "svc%s", names.sfx);
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(service, .init = setup, .fini = teardown, .timeout = 240);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)
#define WAIT_MS 30000

/* A loopback port nothing listens on now. */
static unsigned short free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		  getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* The body of GET /index.html on 127.0.0.1:port (malloc'd), NULL when nothing answers. */
static char *http_get(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 5, 0 };
	static const char req[] = "GET /index.html HTTP/1.0\r\n\r\n";
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write(fd, req, sizeof(req) - 1) != sizeof(req) - 1) {
		close(fd);
		return NULL;
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	char *body = strstr(buf, "\r\n\r\n");
	return body && !strncmp(buf, "HTTP/1.", 7) && strstr(buf, " 200 ") ? strdup(body + 4) : NULL;
}

struct answer {
	unsigned short port;
	const char *want;
};

static int answers(void *arg)
{
	struct answer *a = arg;
	char *body = http_get(a->port);
	int ok = body && strstr(body, a->want);

	free(body);
	return ok;
}

/* The service status field of inspect --json (malloc'd "" when absent). */
static char *status_field(const char *key)
{
	struct tu_run r = SB("inspect", name, "--json");
	json_t *doc = json_loads(r.out, 0, NULL), *v;
	char *out;

	cr_assert_not_null(doc, "inspect: %s", r.err);
	v = json_object_get(json_object_get(doc, "service_status"), key);
	if (json_is_integer(v))
		out = sb_strdupf("%lld", (long long)json_integer_value(v));
	else
		out = strdup(json_is_string(v) ? json_string_value(v) : "");
	json_decref(doc);
	tu_run_free(&r);
	return out;
}

struct field_is {
	const char *key, *want;
};

static int field_is(void *arg)
{
	struct field_is *w = arg;
	char *v = status_field(w->key);
	int ok = !strcmp(v, w->want);

	free(v);
	return ok;
}

static void wait_field(const char *key, const char *want)
{
	struct field_is w = { key, want };
	cr_assert(tu_wait_for(field_is, &w, WAIT_MS), "service %s never became %s", key, want);
}

/* httpd serving /tmp, which the service fills first: index.html says which
 * start it is (the guest's pid of the shell), ok makes the health check pass. */
#define SERVICE "echo run-$$ > /tmp/index.html; touch /tmp/ok; echo serving-marker; exec httpd -f -p 8080 -h /tmp"

static unsigned short create_service(void)
{
	unsigned short port = free_port();
	char publish[32];

	snprintf(publish, sizeof(publish), "%u:8080", port);
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--service", SERVICE, "--health", "test -f /tmp/ok",
		  "--health-interval", "1s", "--restart", "always", "--publish", publish, "--deny-all"),
	       "create");
	struct answer a = { port, "run-" };
	cr_assert(tu_wait_for(answers, &a, WAIT_MS), "the published port never answered");
	return port;
}

static char *served(unsigned short port)
{
	char *body = http_get(port);
	cr_assert_not_null(body, "no answer on port %u", port);
	return body;
}

Test(service, answers_on_the_published_port_under_deny_all_and_is_restarted_when_killed)
{
	unsigned short port = create_service();
	char *first = served(port);

	/* the egress policy holds: the sandbox reaches nothing itself */
	int status = 0;
	free(sbf_sh(&f, NULL, name, "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 1.1.1.1 80", &status));
	cr_assert_neq(status, 0, "a deny-all sandbox reached the internet");

	free(sbf_sh(&f, NULL, name, "kill $(cat /.sandbench/service/pid)", NULL));
	wait_field("restarts", "1");
	struct answer a = { port, "run-" };
	cr_assert(tu_wait_for(answers, &a, WAIT_MS), "the restarted service never answered");
	char *second = served(port);
	cr_assert_str_neq(first, second, "the same process answered: %s", first);
	free(first);
	free(second);

	struct tu_run r = SB("timeline", name);
	cr_assert(strstr(r.out, "service exited with status") && strstr(r.out, "service restarted, restart 1"), "%s", r.out);
	tu_run_free(&r);
	r = SB("ls");
	cr_assert(strstr(r.out, "running (healthy)") || strstr(r.out, "running (starting)"), "%s", r.out);
	tu_run_free(&r);
}

Test(service, goes_unhealthy_when_its_health_command_fails_and_healthy_again)
{
	create_service();
	wait_field("health", "healthy");
	free(sbf_sh(&f, NULL, name, "rm /tmp/ok", NULL));
	wait_field("health", "unhealthy");
	struct tu_run r = SB("ls");
	cr_assert(strstr(r.out, "running (unhealthy)"), "%s", r.out);
	tu_run_free(&r);
	free(sbf_sh(&f, NULL, name, "touch /tmp/ok", NULL));
	wait_field("health", "healthy");
	r = SB("timeline", name);
	cr_assert(strstr(r.out, "service health: unhealthy") && strstr(r.out, "service health: healthy"), "%s", r.out);
	tu_run_free(&r);
	r = SB("inspect", name, "--json");
	cr_assert(strstr(r.out, "\"health\": \"healthy\""), "%s", r.out);
	tu_run_free(&r);
}

Test(service, keeps_answering_after_stop_and_restore_and_runs_again_after_a_cold_start)
{
	unsigned short port = create_service();
	char *before = served(port);

	/* a client holding a connection open: this runsc cannot checkpoint an
	 * open TCP endpoint, so the keeper resets it first */
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int held = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(held, (struct sockaddr *)&to, sizeof(to)), 0);
	cr_assert_eq(write(held, "GET", 3), 3);
	sbf_ok(SB("stop", name), "stop with a connection open");
	close(held);
	cr_assert_null(http_get(port), "a stopped sandbox's port answered");
	/* the listener went with the keeper: the port is free (SO_REUSEADDR
	 * passes the held connection's TIME_WAIT, never a listener) */
	int probe = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(probe, (struct sockaddr *)&to, sizeof(to)), 0, "port %u still bound after stop", port);
	close(probe);
	sbf_ok(SB("restore", name), "restore");
	char *after = served(port);
	/* the process carried on in the checkpoint: the same start, no restart */
	cr_assert_str_eq(before, after);
	char *restarts = status_field("restarts");
	cr_assert_str_eq(restarts, "0");
	free(restarts);

	/* no checkpoint: the next restore boots cold and runs the command again */
	sbf_ok(SB("stop", name), "stop");
	cr_assert_eq(tu_sh("rm -rf '%s/sandboxes/%s/checkpoint'", f.dir, name), 0);
	sbf_ok(SB("restore", name), "cold restore");
	struct answer a = { port, "run-" };
	cr_assert(tu_wait_for(answers, &a, WAIT_MS), "the service did not run again after a cold start");
	free(before);
	free(after);
}

struct logs_has {
	const char *want;
};

static int logs_has(void *arg)
{
	struct tu_run r = SB("logs", name);
	int ok = r.status == 0 && strstr(r.out, ((struct logs_has *)arg)->want);

	tu_run_free(&r);
	return ok;
}

Test(service, logs_show_its_output_and_never_follow_a_guest_symlink)
{
	create_service();
	struct logs_has w = { "serving-marker" };
	cr_assert(tu_wait_for(logs_has, &w, WAIT_MS), "logs never showed the service's output");

	/* a host file the guest names by its host path */
	char *secret = sb_strdupf("%s/host-secret", f.dir);
	cr_assert_eq(sb_fs_write_atomic(secret, "HOSTSECRET\n", 11, 0600, NULL), 0);
	char *plant = sb_strdupf("cd /.sandbench/service && rm -f log log.1 && ln -s %s log && ln -s %s log.1", secret, secret);
	free(sbf_sh(&f, NULL, name, plant, NULL));
	struct tu_run r = SB("logs", name);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_null(strstr(r.out, "HOSTSECRET"), "logs followed the guest's symlink to the host: %s", r.out);
	tu_run_free(&r);
	free(plant);
	free(secret);

	r = SB("logs", name, "--since", "not-a-time");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
}

Test(service, bad_options_get_clear_errors_and_leave_nothing)
{
	unsigned short busy = create_service();
	char taken[32];
	snprintf(taken, sizeof(taken), "%u:80", busy);
	static const char *const bad[][2] = {
		{ "--publish", "99999:80" }, { "--publish", "1:2:3:4" }, { "--publish", "example.com:80:80" },
		{ "--health-interval", "soon" }, { "--restart", "sometimes" },
	};
	static const char *const why[] = { "--publish", "--publish", "IPv4", "--health-interval", "--restart" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct tu_run r = SB("create", "bad", "--image", SBF_IMAGE, "--service", "true", bad[i][0], bad[i][1]);
		cr_assert_neq(r.status, 0, "%s %s accepted", bad[i][0], bad[i][1]);
		cr_assert(strstr(r.err, why[i]), "%s %s: %s", bad[i][0], bad[i][1], r.err);
		tu_run_free(&r);
	}
	struct tu_run r = SB("create", "bad", "--image", SBF_IMAGE, "--service", "true", "--publish", taken);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "in use"), "%s", r.err);
	tu_run_free(&r);
	r = SB("create", "bad", "--image", SBF_IMAGE, "--service", "true", "--temporary");
	cr_assert(r.status != 0 && strstr(r.err, "permanent"), "%s", r.err);
	tu_run_free(&r);
	r = SB("create", "bad", "--image", SBF_IMAGE, "--publish", "8080:80", "--network", "off");
	cr_assert(r.status != 0 && strstr(r.err, "network on"), "%s", r.err);
	tu_run_free(&r);
	r = SB("create", "bad", "--image", SBF_IMAGE, "--health", "true");
	cr_assert(r.status != 0 && strstr(r.err, "--service"), "%s", r.err);
	tu_run_free(&r);
	r = SB("logs", "bad");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	/* nothing of the refused ones is left */
	r = SB("ls");
	cr_assert_null(strstr(r.out, "bad"), "%s", r.out);
	tu_run_free(&r);
}
