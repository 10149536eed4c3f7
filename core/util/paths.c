/* The search paths of plugins, architecture files and belt.yaml, and
 * whether this libbelt runs from its build tree. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/paths.h"

/* Any object of libbelt: dladdr names the file it was loaded from. */
static const char anchor = 0;

/* realpath(dir) equals realpath(top) or realpath(top/.libs) */
static bool in_build_dir(const char *dir, const char *top)
{
	char libs[4096];
	snprintf(libs, sizeof libs, "%s/.libs", top);
	const char *cand[] = {top, libs};
	bool same = false;
	for (size_t i = 0; i < 2 && !same; i++) {
		char *c = realpath(cand[i], NULL);
		same = c && !strcmp(c, dir);
		free(c);
	}
	return same;
}

bool belt_running_uninstalled(void)
{
	/* Only the build tree's own library (libtool's .libs, or the top
	 * folder for a static link) counts: an installed, staged (DESTDIR)
	 * or moved copy must never read the build tree, which may be gone or
	 * hold another version. */
	Dl_info info;
	const char *file = "/proc/self/exe";
	if (dladdr(&anchor, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
		file = info.dli_fname;
	char *self = realpath(file, NULL);
	if (!self)
		return false;
	char *slash = strrchr(self, '/');
	*(slash == self ? slash + 1 : slash) = 0;
	bool r = in_build_dir(self, BELT_BUILD_DIR);
	free(self);
	return r;
}

const char *belt_search_dirs(char *buf, size_t bufsz, const char *first,
			     const char *env, const char *installed,
			     const char *uninstalled)
{
	const char *e = env ? getenv(env) : NULL;
	const char *build = uninstalled && belt_running_uninstalled() ? uninstalled : NULL;
	snprintf(buf, bufsz, "%s%s%s%s%s%s%s", first ? first : "", first ? ":" : "",
		 e && *e ? e : "", e && *e ? ":" : "", installed, build ? ":" : "",
		 build ? build : "");
	return buf;
}
