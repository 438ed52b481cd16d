#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "internal.h"
#include "base/i18n.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when every symbol was found, -1 with lib->error filled otherwise */
static int load(struct sb_dynlib *lib)
{
	void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		snprintf(lib->error, sizeof(lib->error), "%s", dlerror());
		return -1;
	}
	for (size_t i = 0; i < lib->n_symbols; i++) {
		if (!(*lib->symbols[i].slot = dlsym(handle, lib->symbols[i].name))) {
			snprintf(lib->error, sizeof(lib->error), "%s", dlerror());
			return -1;
		}
	}
	return 1;
}

int sb_dynlib_loaded(const struct sb_dynlib *lib)
{
	return __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) == 1;
}

int sb_dynlib_load(struct sb_dynlib *lib, struct sb_error *err)
{
	int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

	if (state == 0) {
		pthread_mutex_lock(&load_lock);
		if ((state = lib->state) == 0) {
			state = load(lib);
			/* the slots are written before the state that publishes them */
			__atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&load_lock);
	}
	if (state < 0)
		return sb_error_set(err, SB_ERR_PREREQ, _("cannot load %s (%s): apt-get install %s"), lib->soname,
				    lib->error, lib->package);
	return 0;
}
