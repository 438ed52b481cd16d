/* The warm pool's profiles, members and refill (docs/pool.md); the claim is
 * in pool_claim.c. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/log.h"
#include "base/proc.h"
#include "image/store.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"

#define PROFILES_MAX (1 << 20)
#define REFILL_LOG_MAX (64 << 10)

/* Takes ROOT/pool/<name> as a flock (nonblocking: -1 with EWOULDBLOCK when held). */
static int pool_lock(struct sb_root *root, const char *name, int nonblock, struct sb_error *err)
{
	char *dir = sb_root_file(root, "pool"), *path = dir ? sb_path_join(dir, name) : NULL;
	int fd = -1;

	if (!path)
		sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if (sb_fs_mkdirs(dir, 0700, err) == 0 &&
		 (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock the warm pool"));
	while (fd >= 0 && flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0)) < 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(fd);
		fd = -1;
		errno = e;
		if (e != EWOULDBLOCK)
			sb_error_errno(err, SB_ERR_IO, e, _("cannot lock the warm pool"));
	}
	free(path);
	free(dir);
	return fd;
}

/* 1 when the pool has profiles (a root without a pool gets no ROOT/pool). */
static int pool_exists(struct sb_root *root)
{
	char *path = sb_root_file(root, "pool/profiles.json");
	struct stat st;
	int rc = path && stat(path, &st) == 0;

	free(path);
	return rc;
}

/* 1 when some directory under ROOT/sandboxes has a member's name. */
static int has_members(struct sb_root *root)
{
	char *dir = sb_root_file(root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;
	int found = 0;

	while (d && !found && (de = readdir(d)))
		found = sb_pool_member_name(de->d_name);
	if (d)
		closedir(d);
	free(dir);
	return found;
}

static void profile_clear(struct sb_pool_profile *p)
{
	free(p->image);
	for (size_t i = 0; p->members && i < p->n_members; i++)
		free(p->members[i]);
	free(p->members);
	memset(p, 0, sizeof(*p));
}

void sb_pool_list_free(struct sb_pool_profile *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++)
		profile_clear(&list[i]);
	free(list);
}

/* ROOT/pool/profiles.json into *out (none: an empty list). */
static int load_profiles(struct sb_pool_profile **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	char *path = sb_root_file(root, "pool/profiles.json");
	json_t *doc = NULL, *v;
	size_t i;
	int rc = path ? sb_json_load(&doc, path, PROFILES_MAX, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));

	free(path);
	*out = NULL;
	*count = 0;
	if (rc == SB_ERR_NOTFOUND)
		return 0;
	json_t *arr = json_object_get(doc, "profiles");
	if (rc == 0 && json_array_size(arr) && !(*out = calloc(json_array_size(arr), sizeof(**out))))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	json_array_foreach (rc == 0 ? arr : NULL, i, v) {
		struct sb_pool_profile *p = &(*out)[*count];
		const char *image = json_string_value(json_object_get(v, "image"));
		const char *digest = json_string_value(json_object_get(v, "digest"));
		if (!image || !digest || strlen(digest) >= sizeof(p->digest))
			continue;
		snprintf(p->digest, sizeof(p->digest), "%s", digest);
		p->network = json_is_true(json_object_get(v, "network")); /* NOLINT(clang-analyzer-core.NullDereference): *out holds every profile */
		p->memory = (unsigned long long)json_integer_value(json_object_get(v, "memory"));
		p->cpus = json_number_value(json_object_get(v, "cpus"));
		p->size = (int)json_integer_value(json_object_get(v, "size"));
		if (!(p->image = strdup(image))) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			break;
		}
		(*count)++;
	}
	json_decref(doc);
	if (rc < 0) {
		sb_pool_list_free(*out, *count);
		*out = NULL;
		*count = 0;
	}
	return rc;
}

static int save_profiles(struct sb_root *root, const struct sb_pool_profile *list, size_t count, struct sb_error *err)
{
	json_t *arr = json_array(), *doc = json_pack("{s:i, s:o}", "pool", 1, "profiles", arr);
	char *path = sb_root_file(root, "pool/profiles.json");
	int rc = 0;

	for (size_t i = 0; doc && i < count; i++)
		if (json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:I, s:f, s:i}", "image", list[i].image, "digest",
							 list[i].digest, "network", list[i].network, "memory",
							 (json_int_t)list[i].memory, "cpus", list[i].cpus, "size",
							 list[i].size)) < 0)
			rc = -1;
	rc = !doc || !path || rc < 0 ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory")) : sb_json_save(path, doc, err);
	json_decref(doc);
	free(path);
	return rc;
}

/* A member with network on carries the network settings it booted under
 * (bridge, subnet, private ranges) as this label; a claim hands it out only
 * while they are the settings, and a sweep removes it after they changed. */
#define NET_LABEL "sandbench.pool.network"

static void net_settings(char *out, size_t size, const struct sb_settings *set)
{
	snprintf(out, size, "%s %s %d", set->network_bridge, set->network_subnet, set->network_private);
}

int sb_pool_net_current(const struct sb_record *rec, const struct sb_settings *set)
{
	char now[64];

	if (!rec->network)
		return 1;
	net_settings(now, sizeof(now), set);
	for (size_t i = 0; i < rec->n_labels; i++)
		if (!strcmp(rec->labels[i].key, NET_LABEL))
			return !strcmp(rec->labels[i].value, now);
	return 0;
}

/* A running member of the profile: same image, network and limits. */
static int member_matches(const struct sb_record *rec, const struct sb_pool_profile *p, const struct sb_settings *set)
{
	return rec->state == SB_STATE_RUNNING && !strcmp(rec->image_digest, p->digest) && rec->network == p->network &&
	       rec->memory == p->memory && fabs(rec->cpus - p->cpus) < 1e-9 && rec->exchange && !rec->n_mounts &&
	       !rec->disk && sb_pool_net_current(rec, set);
}

typedef void (*member_fn)(void *ctx, struct sb_box *b, int alive);

/* Calls fn for each member not locked by anyone else (a claim or a boot),
 * with its lock held and record loaded (alive: its runtime lives). */
static int each_member(struct sb_root *root, member_fn fn, void *ctx, struct sb_error *err)
{
	char *dir = sb_root_file(root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	free(dir);
	if (!d)
		return errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot list the warm pool"));
	while ((de = readdir(d))) {
		struct sb_box b;
		if (!sb_pool_member_name(de->d_name) || sb_box_open(&b, root, de->d_name, BOX_LOCK_NONE, 0, NULL) < 0) {
			if (sb_pool_member_name(de->d_name))
				sb_box_close(&b);
			continue;
		}
		char *lock = sb_path_join(b.dir, "lock");
		b.lock_fd = lock ? open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;
		free(lock);
		if (b.lock_fd >= 0 && flock(b.lock_fd, LOCK_EX | LOCK_NB) == 0 &&
		    sb_record_load(&b.rec, root, de->d_name, NULL) == 0) {
			b.loaded = 1;
			fn(ctx, &b, sb_box_gone(&b) == SB_ALIVE);
		} else if (b.lock_fd < 0 && errno == ENOENT) {
			/* no lock file: half made and left; the prune removes it */
			memset(&b.rec, 0, sizeof(b.rec));
			fn(ctx, &b, 0);
		}
		sb_box_close(&b);
	}
	closedir(d);
	return 0;
}

struct sweep {
	struct sb_pool_profile *profiles;
	size_t n;
	int prune;                       /* remove members no profile wants */
	size_t removed;
	struct sb_settings set;          /* what members' networks are compared with */
};

static void sweep_one(void *ctx, struct sb_box *b, int alive)
{
	struct sweep *s = ctx;
	const char *name = strrchr(b->dir, '/') + 1;

	for (size_t i = 0; alive && b->loaded && i < s->n; i++) {
		struct sb_pool_profile *p = &s->profiles[i];
		if (!member_matches(&b->rec, p, &s->set) || p->ready >= p->size)
			continue;
		char **grown = realloc(p->members, (p->n_members + 1) * sizeof(*grown));
		if (grown && (grown[p->n_members] = strdup(name))) {
			p->members = grown;
			p->n_members++;
		} else if (grown) {
			p->members = grown;
		}
		p->ready++;
		return;
	}
	if (!s->prune)
		return;
	struct sb_error e;
	if (sb_box_destroy(b, 1, &e) == 0)
		s->removed++;
	else
		sb_log("pool: cannot remove member '%s': %s", name, e.msg);
}

/* Counts ready members per profile; with prune, removes the others. */
static int sweep(struct sweep *s, struct sb_root *root, struct sb_error *err)
{
	int rc = sb_settings_load(&s->set, root, err);

	return rc < 0 ? rc : each_member(root, sweep_one, s, err);
}

int sb_pool_list(struct sb_pool_profile **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	int rc = load_profiles(out, count, root, err);
	struct sweep s = { .profiles = *out, .n = *count };

	if (rc == 0 && (rc = sweep(&s, root, err)) < 0) {
		sb_pool_list_free(*out, *count);
		*out = NULL;
		*count = 0;
	}
	return rc;
}

json_t *sb_pool_profile_json(const struct sb_pool_profile *p)
{
	json_t *members = json_array();

	for (size_t i = 0; members && i < p->n_members; i++)
		json_array_append_new(members, json_string(p->members[i]));
	return json_pack("{s:s, s:s, s:s, s:I, s:f, s:i, s:i, s:o*}", "image", p->image, "digest", p->digest, "network",
			 p->network ? "on" : "off", "memory", (json_int_t)p->memory, "cpus", p->cpus, "size", p->size,
			 "ready", p->ready, "members", members);
}

int sb_pool_set(struct sb_root *root, const char *image, int size, int network, unsigned long long memory,
		double cpus, struct sb_error *err)
{
	struct sb_settings set;
	struct sb_image_info info;
	struct sb_pool_profile *list = NULL;
	size_t n = 0;
	int rc, fd;

	if (size < 1 || size > SB_POOL_SIZE_MAX)
		return sb_error_set(err, SB_ERR_INVALID, _("the pool size must be from 1 to %d"), SB_POOL_SIZE_MAX);
	if (cpus < 0 || !isfinite(cpus))
		return sb_error_set(err, SB_ERR_INVALID, _("--cpus must be a positive number"));
	if ((rc = sb_settings_load(&set, root, err)) < 0)
		return rc;
	network = (network < 0 ? set.network : network) != 0;
	if (!image || !*image)
		return sb_error_set(err, SB_ERR_INVALID, _("no image given"));
	if ((rc = sb_image_resolve(&info, root, image, err)) < 0)
		return rc;
	if ((fd = pool_lock(root, "lock", 0, err)) < 0) {
		sb_image_info_clear(&info);
		return SB_ERR_IO;
	}
	if ((rc = load_profiles(&list, &n, root, err)) == 0) {
		size_t i = 0;
		while (i < n && (strcmp(list[i].digest, info.digest) || list[i].network != network))
			i++;
		struct sb_pool_profile *grown = i < n ? list : realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		} else {
			list = grown;
			if (i == n)
				memset(&list[n++], 0, sizeof(*list));
			free(list[i].image);
			list[i].image = strdup(image);
			snprintf(list[i].digest, sizeof(list[i].digest), "%s", info.digest);
			list[i].network = network;
			list[i].memory = memory ? memory : set.memory;
			list[i].cpus = cpus > 0 ? cpus : set.cpus;
			list[i].size = size;
			rc = list[i].image ? save_profiles(root, list, n, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		}
	}
	sb_pool_list_free(list, n);
	sb_image_info_clear(&info);
	close(fd);
	return rc;
}

int sb_pool_remove(size_t *removed, struct sb_root *root, const char *image, struct sb_error *err)
{
	struct sb_pool_profile *list = NULL;
	struct sb_image_info info;
	size_t n = 0, kept = 0, gone = 0;
	int rc, fd, refill;

	if (removed)
		*removed = 0;
	/* the image may be gone: its profile is found by the reference too */
	int resolved = image && sb_image_resolve(&info, root, image, NULL) == 0;
	if ((fd = pool_lock(root, "lock", 0, err)) < 0) {
		if (resolved)
			sb_image_info_clear(&info);
		return SB_ERR_IO;
	}
	if ((rc = load_profiles(&list, &n, root, err)) == 0) {
		for (size_t i = 0; i < n; i++) {
			int drop = !image || !strcmp(list[i].image, image) || (resolved && !strcmp(list[i].digest, info.digest));
			if (drop) {
				gone++;
				profile_clear(&list[i]);
			} else {
				list[kept++] = list[i];
			}
		}
		if (!gone && image)
			rc = sb_error_set(err, SB_ERR_NOTFOUND, _("no warm pool for image '%s'"), image);
		else
			rc = save_profiles(root, list, kept, err);
	}
	close(fd);
	/* a refill running now finishes first: then nothing boots behind our back */
	if (rc == 0 && (refill = pool_lock(root, "refill.lock", 0, err)) >= 0) {
		struct sweep s = { .profiles = list, .n = kept, .prune = 1 };
		rc = sweep(&s, root, err);
		if (removed)
			*removed = s.removed;
		close(refill);
	}
	sb_pool_list_free(list, kept);
	if (resolved)
		sb_image_info_clear(&info);
	return rc;
}

/* A refill's failure: the log and ROOT/pool/refill.log, never the claimer. */
static void note_failure(struct sb_root *root, const struct sb_pool_profile *p, const char *msg)
{
	char *path = sb_root_file(root, "pool/refill.log"), stamp[32];
	time_t now = (time_t)sb_clock_now();
	struct tm tm;
	struct stat st;

	sb_log("pool: refill of '%s' failed: %s", p->image, msg);
	(void)strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm)); /* now: in range, fits */
	int trunc = path && stat(path, &st) == 0 && st.st_size > REFILL_LOG_MAX;
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (trunc ? O_TRUNC : 0), 0600) : -1;
	if (fd >= 0) {
		dprintf(fd, "%s refill of '%s' failed: %s\n", stamp, p->image, msg);
		close(fd);
	}
	free(path);
}

static int boot_member(struct sb_root *root, const struct sb_pool_profile *p, struct sb_error *err)
{
	struct sb_settings set;
	unsigned char rnd[6];
	char name[32], net[64];
	int rc;

	if ((rc = sb_settings_load(&set, root, err)) < 0)
		return rc;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot name a pool member"));
	snprintf(name, sizeof(name), SB_POOL_PREFIX "%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5]);
	net_settings(net, sizeof(net), &set);
	struct sb_sandbox_label label = { NET_LABEL, net };
	struct sb_sandbox_spec spec = {
		.name = name, .image = p->digest, .kind = SB_KIND_TEMPORARY, .network = p->network,
		.memory = p->memory, .cpus = p->cpus, .labels = &label, .n_labels = p->network != 0,
	};
	if ((rc = sb_box_create(NULL, root, &spec, err)) < 0)
		return rc;
	return sb_pool_namer_start(root, name, err);
}

int sb_pool_refill(size_t *failed, struct sb_root *root, int wait, struct sb_error *err)
{
	struct sb_pool_profile *list = NULL;
	size_t n = 0;
	int rc, fd;

	if (failed)
		*failed = 0;
	if (!pool_exists(root))
		return 0;
	if ((fd = pool_lock(root, "refill.lock", !wait, err)) < 0)
		return errno == EWOULDBLOCK ? 0 : SB_ERR_IO;
	if ((rc = load_profiles(&list, &n, root, err)) == 0) {
		struct sweep s = { .profiles = list, .n = n, .prune = 1 };
		rc = sweep(&s, root, err);
		for (size_t i = 0; rc == 0 && i < n; i++)
			while (list[i].ready < list[i].size) {
				struct sb_error e;
				if (boot_member(root, &list[i], &e) < 0) {
					/* once per profile and refill: the next refill tries again */
					note_failure(root, &list[i], e.msg);
					if (failed)
						(*failed)++;
					break;
				}
				list[i].ready++;
			}
	}
	sb_pool_list_free(list, n);
	close(fd);
	return rc;
}

int sb_pool_prune(size_t *removed, struct sb_root *root, struct sb_error *err)
{
	struct sweep s = { .prune = 1 };
	int rc = 0, fd;

	*removed = 0;
	if (!pool_exists(root) && !has_members(root))
		return 0;
	if ((fd = pool_lock(root, "refill.lock", 1, err)) < 0)
		return errno == EWOULDBLOCK ? 0 : SB_ERR_IO;
	if ((rc = load_profiles(&s.profiles, &s.n, root, err)) == 0)
		rc = sweep(&s, root, err);
	*removed = s.removed;
	sb_pool_list_free(s.profiles, s.n);
	close(fd);
	return rc;
}

int sb_pool_refilling(struct sb_root *root)
{
	if (!pool_exists(root))
		return 0;
	int fd = pool_lock(root, "refill.lock", 1, NULL);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EWOULDBLOCK;
}

/* The grandchild: owns nothing of the caller (stdio, locks, log), writes
 * its pid for whoever waits for it, refills and ends. */
static void __attribute__((noreturn)) refill_child(const char *root_path, const char *pid_path)
{
	struct sb_root *root;
	int devnull = open("/dev/null", O_RDWR);

	sb_log_set(NULL);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 || chdir("/") < 0)
		_exit(126);
	syscall(SYS_close_range, 3, ~0U, 0);
	sb_log_from_env();
	int fd = open(pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		dprintf(fd, "%ld\n", (long)getpid());
		close(fd);
	}
	if (sb_root_open(&root, root_path, NULL) < 0)
		_exit(1);
	sb_sandbox_process_init(NULL);
	struct sb_error e;
	/* waits for a refill running now: it may have counted before our claim */
	if (sb_pool_refill(NULL, root, 1, &e) < 0)
		sb_log("pool: refill failed: %s", e.msg);
	sb_root_close(root);
	_exit(0);
}

void sb_pool_refill_detached(struct sb_root *root)
{
	char *pid_path = sb_root_file(root, "pool/refill.pid"), *root_path = strdup(sb_root_path(root));

	if (pid_path && root_path && pool_exists(root)) {
		pid_t pid = fork();
		if (pid == 0) {
			setsid();
			pid_t g = fork();
			if (g != 0)
				_exit(g < 0);
			refill_child(root_path, pid_path);
		}
		if (pid > 0) {
			sb_proc_keep(pid, 1);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			sb_proc_keep(pid, 0);
		} else {
			sb_log("pool: cannot start a refill: %s", strerror(errno));
		}
	}
	free(pid_path);
	free(root_path);
}
