/* Finds plugin modules with libltdl on the search path, checks their
 * descriptor and lets them register. Modules stay loaded for the life of
 * the process, since the registry points into them. */
#include <dirent.h>
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "plugin/registry.h"
#include "util/paths.h"

#define MAX_LOADED 32

static struct {
	bool init;
	char path[4096];
	char names[MAX_LOADED][64];
	unsigned n_loaded;
} loader;

/* The build tree's plugins/ only for an uninstalled libbelt. */
const char *belt_plugin_path(void)
{
	return belt_search_dirs(loader.path, sizeof loader.path, NULL, "BELT_PLUGIN_PATH",
				BELT_PLUGIN_DIR, BELT_BUILD_PLUGIN_DIR);
}

static int init(char *err, size_t errsz)
{
	const char *env = getenv("BELT_PLUGIN_PATH");
	if (env && !*env)
		return belt_errf(err, errsz,
				 "BELT_PLUGIN_PATH is set but empty: expected ':'-separated plugin directories");
	if (!loader.init) {
		if (lt_dlinit())
			return belt_errf(err, errsz, "libltdl: %s", lt_dlerror());
		loader.init = true;
	}
	if (lt_dlsetsearchpath(belt_plugin_path()))
		return belt_errf(err, errsz, "libltdl: %s", lt_dlerror());
	return 0;
}

/* Check a loaded module's descriptor; file names it in messages. */
static const struct belt_plugin *descriptor(lt_dlhandle h, const char *file,
					    char *err, size_t errsz)
{
	belt_plugin_entry_fn entry;
	*(void **)&entry = lt_dlsym(h, BELT_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		belt_errf(err, errsz, "%s: no symbol '%s': not a belt plugin", file,
			  BELT_PLUGIN_ENTRY_SYMBOL);
		return NULL;
	}
	const struct belt_plugin *p = entry();
	if (!p) {
		belt_errf(err, errsz, "%s: %s() returned no descriptor", file,
			  BELT_PLUGIN_ENTRY_SYMBOL);
		return NULL;
	}
	/* Only abi is read before this check: the rest of a descriptor
	 * from outside the range may not be laid out as this core expects. */
	if (p->abi < BELT_PLUGIN_ABI_MIN || p->abi > BELT_PLUGIN_ABI) {
		belt_errf(err, errsz, "%s: plugin ABI %u; this belt supports %u..%u", file,
			  p->abi, BELT_PLUGIN_ABI_MIN, BELT_PLUGIN_ABI);
		return NULL;
	}
	if (!p->name || !p->register_features) {
		belt_errf(err, errsz, "%s: descriptor lacks a name or register function", file);
		return NULL;
	}
	return p;
}

int belt_plugin_load(const char *name, char *err, size_t errsz)
{
	if (init(err, errsz))
		return -1;
	for (unsigned i = 0; i < loader.n_loaded; i++)
		if (!strcmp(loader.names[i], name))
			return 0;
	if (loader.n_loaded == MAX_LOADED || strlen(name) >= sizeof loader.names[0])
		return belt_errf(err, errsz, "plugin '%s': too many plugins or name too long", name);
	lt_dlhandle h = lt_dlopenext(name);
	if (!h)
		return belt_errf(err, errsz, "plugin '%s' not found in %s (%s)", name,
				 loader.path, lt_dlerror());
	const lt_dlinfo *info = lt_dlgetinfo(h);
	const char *file = info && info->filename ? info->filename : name;
	const struct belt_plugin *p = descriptor(h, file, err, errsz);
	struct belt_registry *r = belt_registry_global();
	unsigned before = belt_registry_count(r);
	if (!p || p->register_features(r, err, errsz)) {
		if (p)
			belt_err_prefix(err, errsz, file);
		/* What it registered before failing points into the module. */
		belt_registry_truncate(r, before);
		lt_dlclose(h);
		return -1;
	}
	strcpy(loader.names[loader.n_loaded++], name);
	return 0;
}

/* A module file to visit: NAME.la, or NAME.so when no NAME.la is beside
 * it (installs without libtool archives, as Debian packages them). */
static bool module_file(const char *dir, const char *name)
{
	size_t n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, ".la"))
		return true;
	if (n < 4 || strcmp(name + n - 3, ".so"))
		return false;
	char la[4096];
	snprintf(la, sizeof la, "%s/%.*s.la", dir, (int)(n - 3), name);
	return access(la, F_OK) != 0;
}

/* Call fn(dir, file name, ud) for each module file in the folders of
 * dirs (':'-separated), in order, until fn returns nonzero; a folder
 * that is on the path twice (by any spelling) is visited once. */
static void each_module(const char *dirs, int (*fn)(const char *dir, const char *name, void *ud),
			void *ud)
{
	char path[4096];
	snprintf(path, sizeof path, "%s", dirs);
	int stop = 0;
	struct {
		dev_t dev;
		ino_t ino;
	} seen[64];
	int n_seen = 0;
	for (char *save = NULL, *dir = strtok_r(path, ":", &save); dir && !stop;
	     dir = strtok_r(NULL, ":", &save)) {
		struct stat st;
		if (stat(dir, &st) != 0)
			continue;
		bool again = false;
		for (int i = 0; i < n_seen; i++)
			again = again || (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino);
		if (again)
			continue;
		if (n_seen < 64) {
			seen[n_seen].dev = st.st_dev;
			seen[n_seen].ino = st.st_ino;
			n_seen++;
		}
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while (!stop && (e = readdir(d)))
			if (module_file(dir, e->d_name))
				stop = fn(dir, e->d_name, ud);
		closedir(d);
	}
}

struct scan {
	belt_plugin_visit_fn fn;
	void *ud;
};

/* belt_plugin_scan's visit of one module: loaded, its descriptor read. */
static int scan_module(const char *dir, const char *name, void *ud)
{
	struct scan *sc = ud;
	char file[4096];
	snprintf(file, sizeof file, "%s/%s", dir, name);
	char msg[BELT_ERR_SIZE] = "";
	lt_dlhandle h = lt_dlopen(file);
	const struct belt_plugin *p = NULL;
	if (!h)
		snprintf(msg, sizeof msg, "%.300s: %.200s", file, lt_dlerror());
	else
		p = descriptor(h, file, msg, sizeof msg);
	int stop = sc->fn(sc->ud, file, p, p ? NULL : msg);
	/* Keep modules that registered something open; close the rest. */
	if (h && !p)
		lt_dlclose(h);
	return stop;
}

int belt_plugin_scan(belt_plugin_visit_fn fn, void *ud)
{
	char err[BELT_ERR_SIZE];
	if (init(err, sizeof err))
		return fn(ud, "", NULL, err), -1;
	struct scan sc = {.fn = fn, .ud = ud};
	each_module(loader.path, scan_module, &sc);
	return 0;
}

/* belt_plugin_modules' records: "name\0dir/file" each, a name once (the
 * first folder's), at most 64. */
struct modules {
	const char *prefix;
	char *found[64];
	int n;
};

static int collect_module(const char *dir, const char *name, void *ud)
{
	struct modules *ms = ud;
	size_t len = strlen(name);
	if (strncmp(name, ms->prefix, strlen(ms->prefix)))
		return 0;
	for (int i = 0; i < ms->n; i++)
		if (strlen(ms->found[i]) == len - 3 && !strncmp(ms->found[i], name, len - 3))
			return 0;
	size_t sz = 2 * len + strlen(dir) + 4;
	char *rec = malloc(sz);
	if (rec) {
		snprintf(rec, sz, "%.*s%c%s/%s", (int)(len - 3), name, 0, dir, name);
		ms->found[ms->n++] = rec;
	}
	return ms->n == 64;
}

static int cmp_module(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int belt_plugin_modules(const char *prefix, void (*fn)(const char *name, const char *file, void *ud),
			void *ud)
{
	struct modules ms = {.prefix = prefix, .n = 0};
	each_module(belt_plugin_path(), collect_module, &ms);
	qsort(ms.found, (size_t)ms.n, sizeof *ms.found, cmp_module);
	for (int i = 0; i < ms.n; i++) {
		fn(ms.found[i], ms.found[i] + strlen(ms.found[i]) + 1, ud);
		free(ms.found[i]);
	}
	return ms.n;
}
