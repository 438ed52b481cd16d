#include "config.h"

#include <string.h>

#include "base/i18n.h"
#include "base/name.h"

int sb_name_check(const char *name, const char *what, struct sb_error *err)
{
	size_t n = name ? strlen(name) : 0;

	/* strspn, not isalnum: the locale must not widen the rule */
	if (n == 0 || n > SB_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						       "0123456789-_.") != n ||
	    name[0] == '.' || name[0] == '-')
		return sb_error_set(err, SB_ERR_INVALID,
				    /* TRANSLATORS: the first %s is what the name names, e.g. "sandbox name" */
				    _("invalid %s '%s': use 1-%d letters, digits, '-', '_' or '.', "
				      "not starting with '.' or '-'"),
				    what, name ? name : "", SB_NAME_MAX);
	return 0;
}
