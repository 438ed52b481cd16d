/* The backends this build has, by the name records carry. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/hooks.h"
#include "base/i18n.h"

static const struct sb_backend_ops *const backends[] = { &sb_backend_runsc };

const struct sb_backend_ops *sb_backend_default(void)
{
	return backends[0];
}

unsigned sb_backend_caps(const struct sb_backend_ops *be)
{
	return sb_hooks.backend_caps ? sb_hooks.backend_caps(be->caps) : be->caps;
}

int sb_backend_find(const struct sb_backend_ops **out, const char *name, struct sb_error *err)
{
	*out = NULL;
	if (!name || !*name) {
		*out = sb_backend_default();
		return 0;
	}
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!strcmp(backends[i]->name, name) && backends[i]->version == SB_BACKEND_OPS_VERSION) {
			*out = backends[i];
			return 0;
		}
	return sb_error_set(err, SB_ERR_PREREQ, _("this sandbench has no backend '%s'"), name);
}

void sb_backend_argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}
