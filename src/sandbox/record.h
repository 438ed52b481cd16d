/* The sandbox record: ROOT/sandboxes/<name>/sandbox.json (schema 2, see DESIGN;
 * schema-1 records are read too and written back as schema 2).
 * Last activity is not in the record: it is the mtime of ROOT/sandboxes/<name>/activity,
 * so that touching a sandbox is one utimensat and never rewrites JSON. */
#ifndef SB_RECORD_H
#define SB_RECORD_H

#include <jansson.h>
#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/host.h"
#include "base/name.h"
#include "base/root.h"
#include "net/egress.h"

#define SB_RECORD_SCHEMA 2
#define SB_SANDBOX_NAME_MAX SB_NAME_MAX
/* "sb-" + 16 hex digits + NUL */
#define SB_SANDBOX_ID_LEN 20

enum sb_sandbox_kind {
	SB_KIND_DEFAULT = 0,     /* only in a create spec: take the configured default */
	SB_KIND_TEMPORARY,
	SB_KIND_PERMANENT,
};

enum sb_sandbox_state {
	SB_STATE_CREATED = 0,    /* record and disk exist, runsc container not (yet) running */
	SB_STATE_RUNNING,
	SB_STATE_STOPPED,        /* checkpointed (or cold) on disk, no runsc container */
	SB_STATE_BROKEN,         /* a transition failed half-way; rm --force cleans it */
	SB_STATE_PAUSED,         /* runsc container frozen: memory kept in RAM, no checkpoint */
};

enum sb_expiry_action {
	SB_EXPIRY_DEFAULT = 0,   /* only in a create spec */
	SB_EXPIRY_RM,
	SB_EXPIRY_STOP,
	SB_EXPIRY_PAUSE,         /* frozen in RAM; with expiry_stop_after, stopped after that long paused */
};

enum sb_mount_mode {
	SB_MOUNT_RO = 0,
	SB_MOUNT_RW,
};

struct sb_sandbox_mount {
	char *host;              /* absolute host path */
	char *path;              /* absolute path inside the sandbox */
	enum sb_mount_mode mode;
	/* the host folder's identity when it was checked at create (0, 0: not
	 * recorded, as in schema-1 records): every boot binds only this folder */
	unsigned long long dev, ino;
	/* created with sensitive mounts allowed: the mount policy's deny list,
	 * checked again at every boot, does not apply */
	int allow_sensitive;
};

struct sb_sandbox_label {
	char *key;
	char *value;
};

#define SB_BACKEND_NAME_MAX 15

/* What a service's supervisor does when its command ends (docs/services.md). */
enum sb_service_restart {
	SB_RESTART_NO = 0,
	SB_RESTART_ON_FAILURE,   /* a non-zero exit status or a signal */
	SB_RESTART_ALWAYS,
};

/* A command that runs inside the sandbox for as long as it runs, supervised
 * there; command NULL: the sandbox has none. */
struct sb_service {
	char *command;           /* sh -c text */
	char *health;            /* sh -c text, exit 0: healthy; NULL: no health check */
	long long interval;      /* seconds between health checks */
	enum sb_service_restart restart;
};

/* A sandbox port reachable on a host address: address:host_port -> port inside. */
struct sb_publish {
	char address[16];        /* IPv4, "127.0.0.1" unless written otherwise */
	unsigned short host_port, port;
};

struct sb_record {
	int schema;
	char backend[SB_BACKEND_NAME_MAX + 1];   /* "runsc": who holds the sandbox */
	char name[SB_SANDBOX_NAME_MAX + 1];
	char id[SB_SANDBOX_ID_LEN];          /* runsc container id, unique per incarnation */
	long long created;                   /* unix seconds */
	char *image_ref;                     /* canonical reference as given ("" if by digest) */
	char image_digest[SB_DIGEST_STR_LEN];/* pinned manifest digest */
	/* what of the image's config its processes get: {"Env": [..],
	 * "WorkingDir": .., "User": ..} as in the config, only those present
	 * (NULL: none, as in records from before; "image_config" in JSON) */
	json_t *image_config;
	enum sb_sandbox_kind kind;
	long long idle_timeout;              /* seconds; temporary only (0 for permanent) */
	enum sb_expiry_action expiry_action;
	/* pause only: seconds paused (and idle) until a stop; 0: stays paused
	 * ("expiry_stop_after" in JSON, absent when 0) */
	long long expiry_stop_after;
	int network;                         /* 0 off, 1 on */
	struct sb_egress egress;             /* network on: what it may reach ("egress" in JSON; absent: default) */
	int exchange;                        /* /exchange mounted */
	struct sb_sandbox_mount *mounts;     /* host mounts */
	size_t n_mounts;
	unsigned long long memory;           /* bytes, 0: no limit */
	double cpus;                         /* 0: no limit */
	unsigned long long disk;             /* bytes of its own disk (upper and workspace); 0: no cap */
	char *owner;                         /* "" when none */
	struct sb_sandbox_label *labels;
	size_t n_labels;
	enum sb_sandbox_state state;
	char *reason;                        /* why the last state change happened */
	long long state_changed;             /* unix seconds of the last state change */
	/* of the last boot: the runtime's build (a checkpoint of another build is
	 * not restored) and the host's boot id (a change means a host restart) */
	char *runtime_build;                 /* "" when unknown */
	char boot_id[SB_HOST_BOOT_ID_LEN];        /* "" when unknown */
	/* a fork's source, as it was at the fork ("" when not a fork) */
	char parent[SB_SANDBOX_NAME_MAX + 1];
	char parent_id[SB_SANDBOX_ID_LEN];
	struct sb_service service;           /* "service" in JSON; absent: none */
	struct sb_publish *publish;          /* "publish" in JSON; absent: none */
	size_t n_publish;
};

/* Loads ROOT/sandboxes/<name>/sandbox.json; SB_ERR_NOTFOUND naming the sandbox when absent. */
int sb_record_load(struct sb_record *out, struct sb_root *root, const char *name, struct sb_error *err);
/* Writes the record atomically (temp file, fsync, rename; a temporary
 * sandbox's without the fsyncs). */
int sb_record_save(struct sb_root *root, const struct sb_record *rec, struct sb_error *err);
/* JSON form (the on-disk schema); new reference, NULL when it cannot be built
 * whole (out of memory, text that is not UTF-8). */
json_t *sb_record_to_json(const struct sb_record *rec);
int sb_record_from_json(struct sb_record *out, const json_t *doc, struct sb_error *err);
/* Sets state, reason and state_changed (now), then saves, and adds the
 * change to the sandbox's timeline (source: this process's actor). The
 * caller holds the sandbox's lock exclusively, as for every transition. */
int sb_record_transition(struct sb_root *root, struct sb_record *rec, enum sb_sandbox_state state,
			 const char *reason, struct sb_error *err);
void sb_record_clear(struct sb_record *rec);

/* Stable names used in JSON and listings ("temporary", "running", "rm", "ro", ...). */
const char *sb_sandbox_kind_name(enum sb_sandbox_kind kind);
const char *sb_sandbox_state_name(enum sb_sandbox_state state);
const char *sb_expiry_action_name(enum sb_expiry_action action);
const char *sb_mount_mode_name(enum sb_mount_mode mode);
const char *sb_service_restart_name(enum sb_service_restart r);
int sb_service_restart_parse(const char *s);
/* Parses "[ADDRESS:]HOSTPORT:PORT" (ADDRESS an IPv4 address, 127.0.0.1 when
 * left out); SB_ERR_INVALID naming the text. */
int sb_publish_parse(struct sb_publish *out, const char *text, struct sb_error *err);
/* 1 when p binds a loopback address only. */
int sb_publish_loopback(const struct sb_publish *p);
/* Reverse lookups; -1 when the name is unknown. */
int sb_sandbox_kind_parse(const char *s);
int sb_sandbox_state_parse(const char *s);
int sb_expiry_action_parse(const char *s);
int sb_mount_mode_parse(const char *s);
/* "rm", "stop", "pause" or the tiered "pause,stop=DURATION" (pause after the
 * idle timeout, stop after DURATION paused); SB_ERR_INVALID naming the text. */
int sb_expiry_parse(enum sb_expiry_action *action, long long *stop_after, const char *text, struct sb_error *err);
/* The same spelling back ("pause,stop=2h"), into buf. */
const char *sb_expiry_format(char *buf, size_t size, enum sb_expiry_action action, long long stop_after);
/* 1 for the states in which the sandbox's runtime holds it (running, paused). */
int sb_sandbox_state_live(enum sb_sandbox_state s);

#endif
