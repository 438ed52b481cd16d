#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_session.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

#define MAX_ENV 128
#define MAX_INPUT (16 << 20)

static const struct sb_cli_command *const session_commands[] = {
	&sb_cmd_session_attach, &sb_cmd_session_kill, &sb_cmd_session_ls,
	&sb_cmd_session_read,   &sb_cmd_session_send, &sb_cmd_session_start, NULL,
};

int sb_cli_seconds_ms(int *ms, const char *text)
{
	char *end;
	double s = strtod(text, &end);

	if (*end || end == text || !(s >= 0 && s <= 86400)) /* NaN too */
		return -1;
	*ms = (int)(s * 1000);
	return 0;
}

/* ---- start ---- */

static int parse_size(struct sb_session_opts *o, const char *text)
{
	unsigned r, c;
	char x;

	if (sscanf(text, "%u%c%u", &r, &x, &c) != 3 || x != 'x' || r < 2 || c < 10 || r > 1000 || c > 1000)
		return -1;
	o->rows = (unsigned short)r;
	o->cols = (unsigned short)c;
	return 0;
}

static int start_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "reuse", no_argument, NULL, 'u' },     { "shell", required_argument, NULL, 's' },
		{ "cwd", required_argument, NULL, 'C' }, { "env", required_argument, NULL, 'e' },
		{ "secret-env", required_argument, NULL, 'S' }, { "size", required_argument, NULL, 'z' },
		{ "echo", no_argument, NULL, 'E' },      { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct sb_cli_command *cmd = &sb_cmd_session_start;
	struct sb_session_opts o = { 0 };
	struct sb_secret secrets[MAX_ENV];
	char *env[MAX_ENV + 1] = { NULL };
	struct sb_session_info info;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, json = 0, n_env = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'u':
			o.reuse = 1;
			break;
		case 's':
			o.shell = optarg;
			break;
		case 'C':
			o.cwd = optarg;
			break;
		case 'e':
		case 'S':
			if (n_env == MAX_ENV || o.n_secrets == MAX_ENV)
				return sb_cli_usage_error("session", cmd, _("too many --env"));
			if (opt == 'e' && !strchr(optarg, '='))
				return sb_cli_usage_error("session", cmd, _("--env takes K=V, not '%s'"), optarg);
			if (opt == 'e')
				env[n_env++] = optarg;
			else if (sb_secret_parse(&secrets[o.n_secrets++], optarg, &err) < 0)
				return sb_cli_usage_error("session", cmd, "%s", err.msg);
			break;
		case 'z':
			if (parse_size(&o, optarg) < 0)
				return sb_cli_usage_error("session", cmd, _("invalid size '%s' (ROWSxCOLS)"), optarg);
			break;
		case 'E':
			o.echo = 1;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error("session", cmd, _("invalid option"));
		}
	}
	if (optind >= argc || argc - optind > 2)
		return sb_cli_usage_error("session", cmd, _("expected a sandbox name and an optional session id"));
	o.env = n_env ? env : NULL;
	o.secrets = secrets;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_session_start(&info, root, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL, &o, &err) < 0)
		return sb_cli_fail(&err);
	if (json) {
		rc = sb_cli_print_json(sb_session_info_json(&info));
	} else {
		printf("%s\n", info.id);
		rc = SB_EXIT_OK;
	}
	sb_session_info_clear(&info);
	return rc;
}

/* ---- send ---- */

static char *read_all(int fd, size_t *len)
{
	struct sb_buf b = { 0 };
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0 && b.len < MAX_INPUT)
		if (sb_buf_add(&b, buf, (size_t)n) < 0)
			break;
	return n == 0 ? sb_buf_steal(&b, len) : (sb_buf_clear(&b), NULL);
}

static char *joined(char **words, int n, int newline, size_t *len)
{
	struct sb_buf b = { 0 };

	for (int i = 0; i < n; i++)
		if ((i && sb_buf_add(&b, " ", 1) < 0) || sb_buf_add(&b, words[i], strlen(words[i])) < 0)
			goto nomem;
	if (newline && sb_buf_add(&b, "\n", 1) < 0)
		goto nomem;
	return sb_buf_steal(&b, len);
nomem:
	sb_buf_clear(&b);
	return NULL;
}

static int send_fail(const struct sb_error *err)
{
	int status = sb_cli_fail(err);

	return err->code == SB_ERR_BUSY ? SB_EXIT_CONTROLLED : status;
}

static int send_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "no-newline", no_argument, NULL, 'n' }, { "ctrl", required_argument, NULL, 'c' },
		{ "as", required_argument, NULL, 'a' },   { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct sb_cli_command *cmd = &sb_cmd_session_send;
	enum sb_session_source src = SB_SOURCE_AGENT;
	struct sb_session *s = NULL;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, json = 0, newline = 1;
	char ctrl = 0;

	/* permuting: options anywhere before "--", everything after it is input */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'n':
			newline = 0;
			break;
		case 'c':
			if (strlen(optarg) != 1 || !strchr("cdz\\", optarg[0]))
				return sb_cli_usage_error("session", cmd, _("--ctrl takes c, d or z"));
			ctrl = optarg[0];
			break;
		case 'a':
			if (sb_session_source_parse(&src, optarg, &err) < 0)
				return sb_cli_usage_error("session", cmd, "%s", err.msg);
			break;
		case 'j':
			json = 1;
			break;
		default:
			return sb_cli_usage_error("session", cmd, _("invalid option"));
		}
	}
	if (argc - optind < 2)
		return sb_cli_usage_error("session", cmd, _("expected a sandbox name and a session id"));
	const char *name = argv[optind], *id = argv[optind + 1];
	int nwords = argc - optind - 2;
	char **words = argv + optind + 2;
	int from_stdin = nwords == 1 && !strcmp(words[0], "-");
	if (!ctrl && nwords == 0)
		return sb_cli_usage_error("session", cmd, _("expected the input after -- (or - for standard input)"));
	if (ctrl && nwords > 0)
		return sb_cli_usage_error("session", cmd, _("--ctrl takes no input text"));
	size_t len = 0;
	char *text = ctrl ? NULL : from_stdin ? read_all(0, &len) : joined(words, nwords, newline, &len);
	if (!ctrl && !text) {
		fprintf(stderr, "sandbench: %s\n", _("cannot read the input"));
		return SB_EXIT_FAILURE;
	}
	if ((rc = sb_cli_root(&root, cli)) != 0) {
		free(text);
		return rc;
	}
	unsigned long long off = 0;
	rc = sb_session_connect(&s, root, name, id, &err);
	if (rc == 0)
		rc = ctrl ? sb_session_ctrl(s, &off, ctrl, src, &err) : sb_session_send(s, &off, text, len, src, &err);
	sb_session_close(s);
	free(text);
	if (rc < 0)
		return send_fail(&err);
	if (json)
		return sb_cli_print_json(json_pack("{s:I, s:b}", "offset", (json_int_t)off, "accepted", 1));
	printf("%llu\n", off);
	return SB_EXIT_OK;
}

/* ---- ls ---- */

static int ls_run(struct sb_cli *cli, int argc, char **argv)
{
	struct sb_session_info *list;
	struct sb_root *root;
	struct sb_error err;
	size_t n;
	int json, rc;

	static const struct option options[] = { { "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 } };
	int opt;

	json = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'j')
			return sb_cli_usage_error("session", &sb_cmd_session_ls, _("invalid option"));
		json = 1;
	}
	if (argc - optind > 1)
		return sb_cli_usage_error("session", &sb_cmd_session_ls, _("unexpected argument '%s'"), argv[optind + 1]);
	const char *name = optind < argc ? argv[optind] : NULL;
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_session_list(&list, &n, root, name, &err) < 0)
		return sb_cli_fail(&err);
	json_t *arr = json ? json_array() : NULL;
	if (!json && n)
		printf("%-20s %-10s %-8s %8s %12s %-10s %s\n", _("SANDBOX"), _("ID"), _("STATE"), _("PID"), _("OFFSET"),
		       _("CONTROL"), _("WATCHERS"));
	for (size_t i = 0; i < n; i++) {
		const struct sb_session_info *s = &list[i];
		if (json)
			arr = sb_json_append(arr, sb_session_info_json(s));
		else
			printf("%-20s %-10s %-8s %8ld %12llu %-10s %d\n", s->sandbox, s->id,
			       s->state == SB_SESSION_RUNNING ? _("running") : _("exited"), (long)s->pid, s->offset,
			       s->controller, s->watchers);
	}
	sb_session_list_free(list, n);
	return json ? sb_cli_print_json(arr) : SB_EXIT_OK;
}

/* ---- kill ---- */

static int kill_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = { { "signal", required_argument, NULL, 's' }, { NULL, 0, NULL, 0 } };
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "INT", SIGINT }, { "TERM", SIGTERM }, { "KILL", SIGKILL } };
	const struct sb_cli_command *cmd = &sb_cmd_session_kill;
	struct sb_root *root;
	struct sb_error err;
	int opt, rc, sig = SIGTERM;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 's')
			return sb_cli_usage_error("session", cmd, _("invalid option"));
		sig = 0;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			if (!strcmp(optarg, sigs[i].name) || (!strncmp(optarg, "SIG", 3) && !strcmp(optarg + 3, sigs[i].name)))
				sig = sigs[i].sig;
		if (!sig)
			return sb_cli_usage_error("session", cmd, _("--signal takes INT, TERM or KILL"));
	}
	if (argc - optind != 2)
		return sb_cli_usage_error("session", cmd, _("expected a sandbox name and a session id"));
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_session_kill(root, argv[optind], argv[optind + 1], sig, &err) < 0)
		return sb_cli_fail(&err);
	return SB_EXIT_OK;
}

static int session_run(struct sb_cli *cli, int argc, char **argv)
{
	return sb_cli_dispatch(cli, "session", session_commands, argc - 1, argv + 1);
}

const struct sb_cli_command sb_cmd_session = {
	.name = "session",
	.synopsis = "COMMAND [ARGS]",
	.summary = N_("persistent shells for agents: start, send, read, ls, kill, attach"),
	.run = session_run,
	.group = 1,
};

const struct sb_cli_command sb_cmd_session_start = {
	.name = "start",
	.synopsis = "NAME [ID] [--reuse] [--shell P] [--cwd D] [--env K=V]... [--secret-env K=V]... [--size RxC] "
		    "[--echo] [--json]",
	.summary = N_("start a session (a shell on a terminal that outlives this command) in a running sandbox"),
	.help = N_("  --reuse          return the session of that id if it is running\n"
		   "  --shell P        the shell (default: root's login shell in the sandbox)\n"
		   "  --cwd D          its working directory (default /workspace)\n"
		   "  --env K=V        an environment variable (repeatable)\n"
		   "  --secret-env K=V exported in the shell; the value never reaches a log or file\n"
		   "  --size RxC       the terminal's size (default 24x80)\n"
		   "  --echo           the terminal echoes input (default off, as agents expect)\n"
		   "  --json           print the session as JSON\n"),
	.run = start_run,
};

const struct sb_cli_command sb_cmd_session_send = {
	.name = "send",
	.synopsis = "NAME ID [--no-newline] [--ctrl c|d|z] [--as human|agent] (-- TEXT | -) [--json]",
	.summary = N_("type input into a session; prints the output offset at that moment"),
	.help = N_("  --no-newline  do not end the input with a newline\n"
		   "  --ctrl KEY    send Ctrl-C, Ctrl-D or Ctrl-Z instead of text\n"
		   "  --as WHO      who types: agent (default), human or workbench\n"
		   "  -             read the input from standard input\n"
		   "Refused (exit status 11) while a human controls the session.\n"),
	.run = send_run,
};

const struct sb_cli_command sb_cmd_session_ls = {
	.name = "ls",
	.synopsis = "[NAME] [--json]",
	.summary = N_("list sessions (of one sandbox, or of all)"),
	.run = ls_run,
};

const struct sb_cli_command sb_cmd_session_kill = {
	.name = "kill",
	.synopsis = "NAME ID [--signal INT|TERM|KILL]",
	.summary = N_("interrupt a session's foreground job (INT) or end the session (TERM, the default; KILL)"),
	.run = kill_run,
};
