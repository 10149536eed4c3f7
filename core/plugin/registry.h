/* Internal side of the registry. */
#ifndef BELT_PLUGIN_REGISTRY_H
#define BELT_PLUGIN_REGISTRY_H

#include "belt/plugin.h"

/* The process-wide registry that plugins register into. */
struct belt_registry *belt_registry_global(void);
/* The registered feature of that kind called name (its ops table, a
 * struct belt_<kind>_ops), or NULL. */
const void *belt_registry_find(const struct belt_registry *r,
			       enum belt_plugin_kind kind, const char *name);
/* How many features are registered; and forgetting all but the first n,
 * which the loader does when a plugin fails halfway through registering,
 * since its module is then closed and the tables it added are gone. */
unsigned belt_registry_count(const struct belt_registry *r);
/* fn(name, ops, ud) for each feature of that kind, in registration order. */
void belt_registry_each(const struct belt_registry *r, enum belt_plugin_kind kind,
			void (*fn)(const char *name, const void *ops, void *ud), void *ud);
void belt_registry_truncate(struct belt_registry *r, unsigned n);

/* Call fn(name, file, ud) for each module file on the plugin path whose
 * name starts with prefix ("arch-"), without loading it: each name once,
 * as the first folder holding it has it. Returns how many. */
int belt_plugin_modules(const char *prefix, void (*fn)(const char *name, const char *file, void *ud),
			void *ud);

#endif
