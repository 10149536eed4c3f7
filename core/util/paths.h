/* Where belt looks for its plugins, architecture files and belt.yaml:
 * the caller's directories and the environment variable first, then the
 * installed directory, then the build or source tree's, which only a
 * libbelt running uninstalled looks at (doc/install.md). */
#ifndef BELT_UTIL_PATHS_H
#define BELT_UTIL_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* True when this libbelt is the one in its build tree (the file it was
 * loaded from lies in $(abs_top_builddir) or its .libs), not an installed
 * or copied one. */
bool belt_running_uninstalled(void);

/* Write "first:$env:installed[:uninstalled]" into buf (bufsz bytes),
 * leaving out first and the variable when they are NULL or unset, and
 * uninstalled unless belt_running_uninstalled(). Returns buf. */
const char *belt_search_dirs(char *buf, size_t bufsz, const char *first,
			     const char *env, const char *installed,
			     const char *uninstalled);

#endif
