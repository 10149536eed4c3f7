/* Architecture plugins for the layers below (model.h's
 * model_arch_plugins) and belt_arch_scan: the registry lookups the model
 * layer does not make itself. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "arch/arch.h"
#include "belt/arch.h"
#include "belt/belt.h"
#include "plugin/registry.h"
#include "util/paths.h"

/* An exact module name, found or not. */
struct module_want {
	const char *name;
	bool found;
};

static void find_module(const char *name, const char *file, void *ud)
{
	(void)file;
	struct module_want *w = ud;
	w->found = w->found || !strcmp(name, w->name);
}

/* The architecture plugin called arch: registered already (by a module
 * of any name, or by the program itself), else module arch-<arch> where
 * the plugin path has one; 0 where neither is. */
static int find(const char *arch, const struct belt_arch_ops **out, char *err, size_t errsz)
{
	char module[80];
	*out = belt_registry_find(belt_registry_global(), BELT_KIND_ARCH, arch);
	if (*out)
		return 1;
	if ((size_t)snprintf(module, sizeof module, "arch-%s", arch) >= sizeof module)
		return 0;
	struct module_want want = {.name = module};
	belt_plugin_modules(module, find_module, &want);
	if (!want.found)
		return 0;
	*out = belt_arch_get(arch, err, errsz);
	return *out ? 1 : -1;
}

/* Each module arch-NAME as (NAME, file). */
struct visit {
	void (*fn)(const char *name, const char *file, void *ud);
	void *ud;
	const char *hide; /* arch dirs: a name with a YAML file there is not listed */
	int n;
};

static void visit_module(const char *module, const char *file, void *ud)
{
	struct visit *v = ud;
	const char *name = module + 5; /* after "arch-" */
	char yaml[4096];
	if (!*name || (v->hide && belt_arch_find(name, v->hide, yaml, sizeof yaml) == 0))
		return;
	v->fn(name, file, v->ud);
	v->n++;
}

/* A registered architecture as (name, its description's source). */
static void visit_registered(const char *name, const void *ops, void *ud)
{
	struct visit *v = ud;
	v->fn(name, ((const struct belt_arch_ops *)ops)->source, v->ud);
}

/* The modules arch-NAME on the plugin path, then the architectures
 * registered (a name may come twice: the callers keep the first). */
static void list(void (*fn)(const char *name, const char *file, void *ud), void *ud)
{
	struct visit v = {.fn = fn, .ud = ud};
	belt_plugin_modules("arch-", visit_module, &v);
	belt_registry_each(belt_registry_global(), BELT_KIND_ARCH, visit_registered, &v);
}

const struct model_arch_plugins api_arch_plugins = {.find = find, .list = list};

int belt_arch_scan(void (*fn)(const char *name, const char *file, void *ud), void *ud,
		   char *path, size_t pathsz)
{
	belt_search_dirs(path, pathsz, NULL, "BELT_ARCH_PATH", BELT_ARCH_DIR, BELT_SRC_ARCH_DIR);
	int n = belt_arch_list(path, fn, ud);
	struct visit v = {.fn = fn, .ud = ud, .hide = path};
	belt_plugin_modules("arch-", visit_module, &v);
	return n + v.n;
}
