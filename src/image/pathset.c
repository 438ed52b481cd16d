#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/error.h"
#include "internal.h"

/* Keys are copied into large chunks: one allocation per 64 KiB of paths
 * rather than one per path. */
#define CHUNK_SIZE (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct slot {
	const char *key;     /* NULL: empty */
	uint32_t len;
	uint32_t flags;
	uint64_t hash;
};

struct sb_pathset {
	struct slot *slots;
	size_t cap, count;   /* cap is a power of two */
	uint64_t seed;       /* random per set: crafted names cannot force collisions */
	struct chunk *chunks;
};

struct sb_pathset *sb_pathset_new(void)
{
	struct sb_pathset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->cap = 1024;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	if (!set->slots) {
		free(set);
		return NULL;
	}
	if (getrandom(&set->seed, sizeof(set->seed), GRND_NONBLOCK) != sizeof(set->seed))
		set->seed = (uint64_t)(uintptr_t)set ^ 0x9e3779b97f4a7c15ULL;
	return set;
}

void sb_pathset_free(struct sb_pathset *set)
{
	if (!set)
		return;
	for (struct chunk *c = set->chunks, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(set->slots);
	free(set);
}

/* FNV-1a over the seeded state, finished with a 64-bit avalanche mix. */
static uint64_t hash_path(uint64_t seed, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static struct slot *find(const struct sb_pathset *set, const char *path, size_t len, uint64_t h)
{
	size_t mask = set->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *s = &set->slots[i];
		if (!s->key || (s->hash == h && s->len == len && !memcmp(s->key, path, len)))
			return s;
	}
}

static int grow(struct sb_pathset *set)
{
	struct sb_pathset bigger = *set;

	bigger.cap = set->cap * 2;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return SB_ERR_NOMEM;
	for (size_t i = 0; i < set->cap; i++) {
		if (set->slots[i].key)
			*find(&bigger, set->slots[i].key, set->slots[i].len, set->slots[i].hash) = set->slots[i];
	}
	free(set->slots);
	set->slots = bigger.slots;
	set->cap = bigger.cap;
	return 0;
}

static const char *store(struct sb_pathset *set, const char *path, size_t len)
{
	struct chunk *c = set->chunks;

	if (!c || c->size - c->used < len) {
		size_t size = len > CHUNK_SIZE ? len : CHUNK_SIZE;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = set->chunks;
		c->used = 0;
		c->size = size;
		set->chunks = c;
	}
	char *dst = c->data + c->used;
	memcpy(dst, path, len);
	c->used += len;
	return dst;
}

int sb_pathset_add(struct sb_pathset *set, const char *path, size_t len, unsigned flags)
{
	uint64_t h = hash_path(set->seed, path, len);
	struct slot *s;

	if (len > UINT32_MAX)
		return SB_ERR_NOMEM;
	s = find(set, path, len, h);
	if (s->key) {
		s->flags |= flags;
		return 0;
	}
	/* keep the load at most 1/2 so probe runs stay short */
	if ((set->count + 1) * 2 > set->cap) {
		if (grow(set) < 0)
			return SB_ERR_NOMEM;
		s = find(set, path, len, h);
	}
	const char *key = store(set, path, len);
	if (!key)
		return SB_ERR_NOMEM;
	*s = (struct slot){ .key = key, .len = (uint32_t)len, .flags = flags, .hash = h };
	set->count++;
	return 1;
}

int sb_pathset_get(const struct sb_pathset *set, const char *path, size_t len)
{
	const struct slot *s = find(set, path, len, hash_path(set->seed, path, len));

	return s->key ? (int)s->flags : -1;
}
