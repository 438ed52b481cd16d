#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "base/i18n.h"
#include "mcp/mcp.h"

#define MAX_ALLOWED_MOUNTS 32

static volatile int stop;

static void on_ready(void *arg, const char *url)
{
	(void)arg;
	/* one line tests and scripts can wait for */
	fprintf(stderr, _("sandbench: MCP server listening on %s\n"), url);
}

/* HTTP: the token, printed once at start, then the server */
static int serve_http(struct sb_mcp_server *srv, struct sb_root *root, const char *listen)
{
	char token[128];
	struct sb_error err;
	int created;

	if (sb_mcp_token(token, sizeof(token), &created, root, &err) < 0)
		return sb_cli_fail(&err);
	fprintf(stderr, created ? _("sandbench: new MCP bearer token (kept in %s/mcp-token): %s\n")
				: _("sandbench: MCP bearer token (kept in %s/mcp-token): %s\n"),
		sb_root_path(root), token);
	return sb_mcp_serve_http(srv, listen, token, on_ready, NULL, &stop, &err) < 0 ? sb_cli_fail(&err) : SB_EXIT_OK;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int mcp_run(struct sb_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "owner", required_argument, NULL, 'o' },
		{ "readonly", no_argument, NULL, 'R' },
		{ "allow-mount", required_argument, NULL, 'm' },
		{ "allow-remove-any", no_argument, NULL, 'A' },
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_mcp_mount mounts[MAX_ALLOWED_MOUNTS];
	struct sb_mcp_opts o = { .mounts = mounts };
	struct sb_mcp_server *srv;
	struct sb_root *root;
	struct sb_error err;
	const char *listen = NULL, *connect_to = NULL;
	int opt, rc, server_options = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o.owner = optarg;
			break;
		case 'R':
			o.readonly = 1;
			break;
		case 'A':
			o.allow_remove_any = 1;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'c':
			connect_to = optarg;
			break;
		case 'm':
			if (o.n_mounts == MAX_ALLOWED_MOUNTS)
				return sb_cli_usage_error(NULL, &sb_cmd_mcp, _("too many --allow-mount"));
			if (sb_mcp_mount_parse(&mounts[o.n_mounts], optarg, &err) < 0)
				return sb_cli_usage_error(NULL, &sb_cmd_mcp, "%s", err.msg);
			o.n_mounts++;
			break;
		default:
			return sb_cli_usage_error(NULL, &sb_cmd_mcp, _("invalid option"));
		}
	}
	if (optind != argc)
		return sb_cli_usage_error(NULL, &sb_cmd_mcp, _("expected no operand"));
	server_options = listen || o.owner || o.readonly || o.allow_remove_any || o.n_mounts;
	/* not root (or asked to): the root server behind the socket serves */
	if (connect_to || (geteuid() != 0 && !server_options)) {
		if (server_options)
			return sb_cli_usage_error(NULL, &sb_cmd_mcp, _("--connect takes no server options: they are the socket service's"));
		signal(SIGPIPE, SIG_IGN);
		return sb_mcp_bridge(connect_to ? connect_to : SB_MCP_SOCKET, STDIN_FILENO, STDOUT_FILENO, &err) < 0
			       ? sb_cli_fail(&err)
			       : SB_EXIT_OK;
	}
	if ((rc = sb_cli_root(&root, cli)) != 0)
		return rc;
	if (sb_mcp_server_new(&srv, root, &o, &err) < 0)
		return sb_cli_fail(&err);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a client that goes away is an EPIPE, not the end of this process */
	signal(SIGPIPE, SIG_IGN);
	if (listen)
		rc = serve_http(srv, root, listen);
	else
		rc = sb_mcp_serve_stdio(srv, STDIN_FILENO, STDOUT_FILENO, &stop, &err) < 0 ? sb_cli_fail(&err) : SB_EXIT_OK;
	sb_mcp_server_free(srv);
	return rc;
}

const struct sb_cli_command sb_cmd_mcp = {
	.name = "mcp",
	.synopsis = "[--listen 127.0.0.1:PORT|unix:PATH | --connect SOCKET] [--owner O] [--readonly] [--allow-mount HOST[:ro|rw]]... [--allow-remove-any]",
	.summary = N_("serve sandboxes, sessions and files to agent hosts over the Model Context Protocol"),
	.help = N_("  --listen ADDR         serve Streamable HTTP at /mcp on 127.0.0.1:PORT, [::1]:PORT,\n"
		   "                        localhost:PORT or unix:PATH (never another address), with the\n"
		   "                        bearer token kept in ROOT/mcp-token (printed at start)\n"
		   "  --owner O             owner of the sandboxes clients create (default mcp)\n"
		   "  --readonly            offer only the listing and reading tools\n"
		   "  --allow-mount HOST[:ro|rw]  a host folder clients may mount (read-only unless :rw;\n"
		   "                        repeatable); no other host folder can be mounted\n"
		   "  --allow-remove-any    let clients remove sandboxes this server did not create\n"
		   "  --connect SOCKET      bridge standard input and output to the root server on this unix\n"
		   "                        socket (what a user who is not root gets by default: /run/sandbench/mcp.sock)\n"
		   "Without --listen it speaks JSON-RPC on standard input and output, one message per line.\n"),
	.run = mcp_run,
};
