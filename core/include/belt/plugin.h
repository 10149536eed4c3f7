/* belt/plugin.h: plugin modules and the registry they fill.
 *
 * A plugin is a libtool module exporting one function, belt_plugin_entry,
 * that returns a static const descriptor. The core checks its ABI version,
 * then calls register_features, which adds what the plugin provides to the
 * registry by name. */
#ifndef BELT_PLUGIN_H
#define BELT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "belt/backend.h"
#include "belt/sampler.h"

#define BELT_PLUGIN_ABI 1

struct belt_registry;

struct belt_plugin {
	uint32_t abi; /* BELT_PLUGIN_ABI */
	const char *name;
	const char *description;
	int (*register_features)(struct belt_registry *r, char *err,
				 size_t errsz);
};

/* The one symbol a plugin module exports. */
typedef const struct belt_plugin *(*belt_plugin_entry_fn)(void);
#define BELT_PLUGIN_ENTRY_SYMBOL "belt_plugin_entry"

/* Called from register_features: add a backend under ops->name. Fails on
 * an ABI mismatch or a name already taken. */
int belt_registry_add_backend(struct belt_registry *r,
			      const struct belt_backend_ops *ops, char *err,
			      size_t errsz);

/* Called from register_features: add a sampler under ops->name. Fails on
 * an ABI mismatch or a name already taken. */
int belt_registry_add_sampler(struct belt_registry *r,
			      const struct belt_sampler_ops *ops, char *err,
			      size_t errsz);

/* The plugin search path: $BELT_PLUGIN_PATH (':'-separated), then the
 * installed plugin directory, then the build tree's plugins/ folder. */
const char *belt_plugin_path(void);

/* Load module `name` (e.g. "backend-cpu") from the search path and
 * register its features; loading twice is a no-op. */
int belt_plugin_load(const char *name, char *err, size_t errsz);

/* The backend called name, loading plugin "backend-<name>" if it is not
 * registered yet. */
const struct belt_backend_ops *belt_backend_get(const char *name, char *err,
						size_t errsz);

/* The sampler called name, loading plugin "sampler-<name>" if it is not
 * registered yet. */
const struct belt_sampler_ops *belt_sampler_get(const char *name, char *err,
						size_t errsz);

/* Call fn for each plugin module found on the search path, with its
 * descriptor or the error that loading it gave; stops if fn returns
 * nonzero. */
typedef int (*belt_plugin_visit_fn)(void *ud, const char *file,
				    const struct belt_plugin *p,
				    const char *error);
int belt_plugin_scan(belt_plugin_visit_fn fn, void *ud);

#endif
