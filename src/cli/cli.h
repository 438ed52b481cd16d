/* The command-line front end: a table of commands, one per file. */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <jansson.h>

#include "base/error.h"
#include "base/root.h"

struct sb_cli {
	const char *root_path;   /* --root, else $SANDBENCH_ROOT, else the default */
	int verbose;
	struct sb_root *root;    /* opened on first use by sb_cli_root */
};

struct sb_cli_command {
	const char *name;
	const char *synopsis;    /* arguments after the name, for usage lines */
	const char *summary;     /* one line for the command list (N_) */
	const char *help;        /* option descriptions, one per line (N_), may be NULL */
	int (*run)(struct sb_cli *cli, int argc, char **argv);
	int group;               /* dispatches again (image): --help belongs to its subcommands */
};

/* Exit statuses: part of the interface scripts rely on (see the man page). */
enum sb_exit {
	SB_EXIT_OK = 0,
	SB_EXIT_FAILURE = 1,
	SB_EXIT_USAGE = 2,
	SB_EXIT_NOTFOUND = 3,
	SB_EXIT_CONFLICT = 4,
	SB_EXIT_PREREQ = 5,
	SB_EXIT_AUTH = 6,
	SB_EXIT_BADCONTENT = 7,
	SB_EXIT_NETWORK = 8,
	SB_EXIT_TIMEOUT = 9,
	SB_EXIT_NOSPACE = 10,
	SB_EXIT_EXEC_FAILED = 125,  /* exec/run: sandbench itself failed, not the command */
};

/* Runs argv[0] from table (NULL-terminated) with --help handled for every entry. */
int sb_cli_dispatch(struct sb_cli *cli, const char *group, const struct sb_cli_command *const *table,
		    int argc, char **argv);
void sb_cli_usage(FILE *f, const char *group, const struct sb_cli_command *cmd);
/* Opens the state root once; on failure prints the error and returns the exit code (> 0). */
int sb_cli_root(struct sb_root **out, struct sb_cli *cli);
/* Prints "sandbench: <message>" on stderr and returns the exit status for err. */
int sb_cli_fail(const struct sb_error *err);
int sb_cli_exit_code(int code);
/* One-line usage error for cmd; returns SB_EXIT_USAGE. */
int sb_cli_usage_error(const char *group, const struct sb_cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Parses the arguments of a command whose only option is --json. With
 * operand_error NULL it takes no operand; otherwise exactly one (argv[optind]),
 * and operand_error is the message when that is not what it got. Returns 0, or
 * the exit status of the usage error it printed. */
int sb_cli_parse_json(int *json, const char *group, const struct sb_cli_command *cmd, int argc, char **argv,
		      const char *operand_error);
/* Prints a JSON document on stdout (and steals the reference); returns
 * SB_EXIT_OK. NULL, a document that could not be built whole, prints an error
 * instead and returns its exit status: never a document with parts missing. */
int sb_cli_print_json(json_t *doc);

/* The commands. */
extern const struct sb_cli_command sb_cmd_cleanup;
extern const struct sb_cli_command sb_cmd_doctor;
extern const struct sb_cli_command sb_cmd_image;
extern const struct sb_cli_command sb_cmd_commit;
extern const struct sb_cli_command sb_cmd_cp;
extern const struct sb_cli_command sb_cmd_create;
extern const struct sb_cli_command sb_cmd_diff;
extern const struct sb_cli_command sb_cmd_exec;
extern const struct sb_cli_command sb_cmd_fork;
extern const struct sb_cli_command sb_cmd_inspect;
extern const struct sb_cli_command sb_cmd_logs;
extern const struct sb_cli_command sb_cmd_logs;
extern const struct sb_cli_command sb_cmd_ls;
extern const struct sb_cli_command sb_cmd_mcp;
extern const struct sb_cli_command sb_cmd_network;
extern const struct sb_cli_command sb_cmd_owner;
extern const struct sb_cli_command sb_cmd_owner_ls;
extern const struct sb_cli_command sb_cmd_owner_rm;
extern const struct sb_cli_command sb_cmd_pause;
extern const struct sb_cli_command sb_cmd_resume;
extern const struct sb_cli_command sb_cmd_reap;
extern const struct sb_cli_command sb_cmd_pool;
extern const struct sb_cli_command sb_cmd_pool_set;
extern const struct sb_cli_command sb_cmd_pool_ls;
extern const struct sb_cli_command sb_cmd_pool_rm;
extern const struct sb_cli_command sb_cmd_pool_refill;
extern const struct sb_cli_command sb_cmd_gc;
extern const struct sb_cli_command sb_cmd_restore;
extern const struct sb_cli_command sb_cmd_rm;
extern const struct sb_cli_command sb_cmd_run;
extern const struct sb_cli_command sb_cmd_shell;
extern const struct sb_cli_command sb_cmd_session;
extern const struct sb_cli_command sb_cmd_stop;
extern const struct sb_cli_command sb_cmd_timeline;
extern const struct sb_cli_command sb_cmd_touch;
extern const struct sb_cli_command sb_cmd_tui;

#endif
