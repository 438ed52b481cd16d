/* gc: see gc.h. Runs under the root lock held exclusively, so no create,
 * stop, restore or remove is half-way while it looks; a sandbox whose own lock
 * is held (an exec or a shell in it) is left alone. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/generation.h"
#include "sandbox/gc.h"
#include "base/i18n.h"
#include "net/network.h"

struct gc {
	struct sb_root *root;
	int dry_run;
	struct sb_gc_item *items;
	size_t count, cap;
	const struct sb_backend_ops *be;
	void *be_state;
	struct sb_backend_object *containers;    /* the backend's containers of this root */
	size_t n_containers;
	json_t *known_ids;           /* ids that records account for: {id: true} */
	json_t *recordless;          /* sandbox directories without a record: [name] */
	int incomplete;              /* out of memory for those: sweeping would remove what records hold */
};

static struct sb_gc_item *add_item(struct gc *g, const char *kind, const char *name, const char *action)
{
	if (g->count == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct sb_gc_item *n = realloc(g->items, cap * sizeof(*n));
		if (!n)
			return NULL;
		g->items = n;
		g->cap = cap;
	}
	struct sb_gc_item *it = &g->items[g->count++];
	memset(it, 0, sizeof(*it));
	snprintf(it->kind, sizeof(it->kind), "%s", kind);
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->action = action;
	return it;
}

static void item_result(struct sb_gc_item *it, int rc, const struct sb_error *e)
{
	if (it && rc < 0) {
		it->rc = rc;
		snprintf(it->message, sizeof(it->message), "%s", e->msg);
	}
}

static const char *container_status(const struct gc *g, const char *id)
{
	for (size_t i = 0; i < g->n_containers; i++)
		if (!strcmp(g->containers[i].id, id))
			return g->containers[i].status;
	return NULL;
}

static int try_lock(const char *dir)
{
	char *path = sb_path_join(dir, "lock");
	int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;

	free(path);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Directories without sandbox.json: creates killed before they wrote the
 * record (or records deleted by hand). Runs after the orphaned containers are
 * gone, since a live container keeps the disk busy. */
static void sweep_recordless(struct gc *g)
{
	size_t i;
	json_t *v;

	json_array_foreach(g->recordless, i, v) {
		const char *name = json_string_value(v);
		struct sb_gc_item *it = add_item(g, "sandbox", name, N_("removed a sandbox directory without a record"));
		struct sb_error e;
		struct sb_box b;
		int rc, lock;
		if (g->dry_run)
			continue;
		if ((rc = sb_box_open(&b, g->root, name, BOX_LOCK_NONE, 0, &e)) == 0) {
			if ((lock = try_lock(b.dir)) < 0) {
				rc = sb_error_set(&e, SB_ERR_BUSY, _("sandbox directory '%s' is in use"), name);
			} else {
				/* no record, so no container id: this only unmounts the disks */
				rc = sb_box_destroy(&b, 1, &e);
				close(lock);
			}
		}
		sb_box_close(&b);
		item_result(it, rc, &e);
	}
}

static void mark_broken(struct gc *g, struct sb_box *b, const char *why)
{
	struct sb_gc_item *it = add_item(g, "sandbox", b->rec.name, N_("marked broken"));
	struct sb_error e;

	if (it)
		snprintf(it->message, sizeof(it->message), "%s", why);
	if (!g->dry_run)
		item_result(it, sb_record_transition_as(g->root, &b->rec, SB_STATE_BROKEN, why, SB_TIMELINE_SANDBENCH, &e), &e);
}

/* The same path as every verb takes for a sandbox whose runtime is gone:
 * stopped with its disk kept (removed when temporary and the host restarted). */
static void settle_gone(struct gc *g, struct sb_box *b)
{
	enum sb_gone why = sb_box_gone(b);
	struct sb_gc_item *it;
	struct sb_error e;
	int removed = 0, rc;

	if (why == SB_ALIVE)
		why = SB_GONE_DIED;
	it = add_item(g, "sandbox", b->rec.name, why == SB_GONE_RESTART && b->rec.kind == SB_KIND_TEMPORARY
				? N_("removed: temporary, and the host restarted")
				: N_("stopped: its runtime is gone, the disk is kept"));
	if (it)
		snprintf(it->message, sizeof(it->message), "%s", sb_gone_reason(why));
	if (g->dry_run)
		return;
	rc = sb_box_settle(b, why, &removed, &e);
	item_result(it, rc, &e);
}

static void remove_sandbox(struct gc *g, struct sb_box *b, const char *action)
{
	struct sb_gc_item *it = add_item(g, "sandbox", b->rec.name, action);
	struct sb_error e;
	int rc;

	if (g->dry_run)
		return;
	rc = sb_box_destroy(b, 1, &e);
	item_result(it, rc, &e);
}

/* A sandbox that is not running but whose container, staged host folders or
 * disk mount are still there. */
static void teardown_leftover(struct gc *g, struct sb_box *b, const char *status)
{
	struct sb_error e;

	if (status || sb_box_mounts_staged(b) ||
	    (sb_box_backend(b, NULL) == 0 && b->be->disk_mounted(b->be_state, sb_box_target(b)))) {
		struct sb_gc_item *it = add_item(g, "container", b->rec.id, N_("deleted a container left by a stopped sandbox"));
		if (!g->dry_run)
			item_result(it, sb_box_teardown(b, 1, &e), &e);
	}
}

/* Half-written state files of processes that died before their rename. */
static void sweep_temps(struct gc *g, const char *dir, const char *name)
{
	struct sb_error e;
	unsigned n;
	int rc = sb_fs_remove_stale_temps(&n, dir, g->dry_run, &e);

	if (rc < 0 || n > 0) {
		struct sb_gc_item *it = add_item(g, "files", name, N_("removed half-written state files"));
		if (it && rc == 0)
			snprintf(it->message, sizeof(it->message), "%u", n);
		if (!g->dry_run)
			item_result(it, rc, &e);
	}
}

/* how long a sandbox whose resume failed may take to end */
#define GONE_WAIT_MS 3000

/* Whether b's sandbox is gone, or goes within ms. */
static int gone_within(struct sb_box *b, int ms)
{
	long long deadline = sb_clock_monotonic_ms() + ms;

	while (sb_box_gone(b) == SB_ALIVE) {
		struct timespec ts = { 0, 10000000 };
		if (sb_clock_monotonic_ms() > deadline)
			return 0;
		nanosleep(&ts, NULL);
	}
	return 1;
}

/* A pause or resume that died between the runtime and the record: the
 * container is frozen or not; it carries on running either way. */
static void reconcile_freeze(struct gc *g, struct sb_box *b, const char *status)
{
	int frozen = !strcmp(status, "paused");
	struct sb_error e;

	if (frozen == (b->rec.state == SB_STATE_PAUSED))
		return;
	if (g->dry_run || sb_box_backend(b, &e) < 0) {
		add_item(g, "sandbox", b->rec.name, N_("resumed: a pause or resume was interrupted"));
		return;
	}
	int rc = frozen ? b->be->resume(b->be_state, sb_box_target(b), &e) : 0;
	/* one that did not live through its resume: a resume killed between
	 * its call and runsc's status left it running but "paused", and a
	 * second resume panics the sentry (docs/pause.md) */
	if (rc < 0 && gone_within(b, GONE_WAIT_MS)) {
		settle_gone(g, b);
		return;
	}
	struct sb_gc_item *it = add_item(g, "sandbox", b->rec.name, N_("resumed: a pause or resume was interrupted"));
	if (rc == 0)
		rc = sb_record_transition_as(g->root, &b->rec, SB_STATE_RUNNING, _("a pause or resume was interrupted: running"),
					     SB_TIMELINE_SANDBENCH, &e);
	if (rc == 0)
		sb_box_unmark_paused(b);
	item_result(it, rc, &e);
}

/* A record whose runsc container does not match its state. */
static void reconcile_record(struct gc *g, struct sb_box *b)
{
	const char *status = container_status(g, b->rec.id);

	g->incomplete |= json_object_set_new(g->known_ids, b->rec.id, json_true()) < 0;
	switch (b->rec.state) {
	case SB_STATE_RUNNING:
	case SB_STATE_PAUSED:
		if (status && (!strcmp(status, "running") || !strcmp(status, "paused")))
			reconcile_freeze(g, b, status);
		else
			settle_gone(g, b);
		break;
	case SB_STATE_CREATED:
		/* nobody holds its lock, so its create died half-way */
		if (b->rec.kind == SB_KIND_TEMPORARY) {
			remove_sandbox(g, b, N_("removed an interrupted create"));
			break;
		}
		mark_broken(g, b, _("its create was interrupted; the workspace is kept"));
		teardown_leftover(g, b, status);
		break;
	case SB_STATE_STOPPED:
	case SB_STATE_BROKEN:
		/* no container belongs to these states: a leftover one holds the disk mounted */
		teardown_leftover(g, b, status);
		break;
	}
}

static int scan_sandboxes(struct gc *g, struct sb_error *err)
{
	char *dir = sb_root_file(g->root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	if (!d) {
		int rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), dir ? dir : "sandboxes");
		free(dir);
		return rc;
	}
	while ((de = readdir(d))) {
		struct sb_box b;
		struct sb_error e;
		if (de->d_name[0] == '.' || sb_box_name_check(de->d_name, NULL) < 0)
			continue;
		if (sb_box_open(&b, g->root, de->d_name, BOX_LOCK_NONE, 0, &e) < 0) {
			sb_box_close(&b);
			continue;
		}
		int lock = try_lock(b.dir);
		if (lock < 0) {
			add_item(g, "sandbox", de->d_name, N_("skipped: in use"));
			sb_box_close(&b);
			continue;
		}
		int rc = sb_record_load(&b.rec, g->root, de->d_name, &e);
		if (rc == SB_ERR_NOTFOUND) {
			g->incomplete |= json_array_append_new(g->recordless, json_string(de->d_name)) < 0;
		} else if (rc < 0) {
			struct sb_gc_item *it = add_item(g, "sandbox", de->d_name, N_("left alone: unreadable record (rm --force removes it)"));
			if (it)
				snprintf(it->message, sizeof(it->message), "%s", e.msg);
		} else {
			b.loaded = 1;
			reconcile_record(g, &b);
		}
		sweep_temps(g, b.dir, de->d_name);
		close(lock);
		sb_box_close(&b);
	}
	closedir(d);
	free(dir);
	return 0;
}

/* Containers of the backend that no record accounts for. */
static void sweep_containers(struct gc *g)
{
	for (size_t i = 0; i < g->n_containers; i++) {
		const char *id = g->containers[i].id;
		if (json_object_get(g->known_ids, id))
			continue;
		struct sb_gc_item *it = add_item(g, "container", id, N_("deleted an orphaned runsc container"));
		struct sb_error e;
		if (!g->dry_run)
			item_result(it, g->be->remove_object(g->be_state, id, &e), &e);
	}
}

static void sweep_network(struct gc *g)
{
	struct sb_net_orphan *orphans = NULL;
	struct sb_network_config cfg;
	struct sb_settings settings;
	struct sb_error e;
	size_t n = 0;
	int rc = sb_settings_load(&settings, g->root, &e);

	if (rc == 0) {
		cfg = sb_box_netcfg(&settings);
		rc = sb_network_orphans(&orphans, &n, g->root, &cfg, &e);
	}
	if (rc < 0) {
		struct sb_gc_item *it = add_item(g, "network", "-", N_("could not list network objects"));
		item_result(it, e.code, &e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sb_gc_item *it = add_item(g, sb_net_orphan_kind_name(orphans[i].kind), orphans[i].name,
						 N_("removed an orphaned network object"));
		if (!g->dry_run)
			item_result(it, sb_network_orphan_remove(g->root, &cfg, &orphans[i], &e), &e);
	}
	free(orphans);
}

/* The folders of the state root that hold files sb_fs_replace writes (in
 * runsc's: the state files that pause and resume without the CLI edit). */
static const char *const root_dirs[] = { ".", "images", "images/build-cache", "network", "runsc" };

int sb_gc(struct sb_gc_item **items, size_t *count, struct sb_root *root, unsigned flags, struct sb_error *err)
{
	struct gc g = { .root = root, .dry_run = (flags & SB_GC_DRY_RUN) != 0 };
	int rc;

	*items = NULL;
	*count = 0;
	if ((rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) < 0)
		return rc;
	g.known_ids = json_object();
	g.recordless = json_array();
	/* one backend in this build; records of another would be left alone */
	g.be = sb_backend_default();
	if ((rc = g.be->open(&g.be_state, root, err)) < 0)
		goto out;
	if ((rc = g.be->list(&g.containers, &g.n_containers, g.be_state, err)) < 0)
		goto out;
	if ((rc = scan_sandboxes(&g, err)) < 0)
		goto out;
	if (g.incomplete) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	sweep_containers(&g);
	sweep_recordless(&g);
	sweep_network(&g);
	/* pool members no profile wants (the profile is gone) or that died */
	size_t pruned = 0;
	if (!g.dry_run && sb_pool_prune(&pruned, root, NULL) == 0 && pruned)
		add_item(&g, "pool", "members", N_("removed pool members no profile wants or that were not running"));
	/* the state root's own files (the root lock is held) */
	for (size_t i = 0; i < sizeof(root_dirs) / sizeof(root_dirs[0]); i++) {
		char *dir = sb_root_file(root, root_dirs[i]);
		if (dir)
			sweep_temps(&g, dir, root_dirs[i]);
		free(dir);
	}
	if (!g.dry_run)
		sb_generation_bump(root, SB_GEN_SANDBOXES, NULL);   /* records marked broken, directories swept */
out:
	sb_root_unlock(root);
	if (g.be_state)
		g.be->close(g.be_state);
	free(g.containers);
	json_decref(g.known_ids);
	json_decref(g.recordless);
	if (rc < 0) {
		free(g.items);
		return rc;
	}
	*items = g.items;
	*count = g.count;
	return 0;
}
