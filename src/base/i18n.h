/* gettext glue shared by the library, the command line and the workbench. */
#ifndef SB_I18N_H
#define SB_I18N_H

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) (s)

#endif
