/* Progress reports from long operations (pull, push, import, unpack) to a front end.
 * The library calls the callback; it never prints. */
#ifndef SB_PROGRESS_H
#define SB_PROGRESS_H

enum sb_progress_phase {
	SB_PROGRESS_RESOLVE,     /* manifest / index lookup */
	SB_PROGRESS_DOWNLOAD,    /* a blob is being fetched */
	SB_PROGRESS_VERIFY,
	SB_PROGRESS_UNPACK,      /* a layer is being extracted */
	SB_PROGRESS_DONE,
	SB_PROGRESS_UPLOAD,      /* a blob is being pushed (done == total: it was there) */
};

struct sb_progress_event {
	enum sb_progress_phase phase;
	const char *item;            /* digest or name of what is being worked on */
	int layer, layers;           /* 1-based index of the layer, count (0 when n/a) */
	unsigned long long done;     /* bytes so far for this item */
	unsigned long long total;    /* bytes expected, 0 when unknown */
};

struct sb_progress {
	void (*fn)(void *user, const struct sb_progress_event *ev);
	void *user;
};

static inline void sb_progress_emit(const struct sb_progress *p, const struct sb_progress_event *ev)
{
	if (p && p->fn)
		p->fn(p->user, ev);
}

#endif
