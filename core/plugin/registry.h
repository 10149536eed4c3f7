/* Internal side of the registry. */
#ifndef BELT_PLUGIN_REGISTRY_H
#define BELT_PLUGIN_REGISTRY_H

#include "belt/plugin.h"

/* The process-wide registry that plugins register into. */
struct belt_registry *belt_registry_global(void);
/* A registered backend by name, or NULL. */
const struct belt_backend_ops *belt_registry_backend(const struct belt_registry *r,
						     const char *name);
/* A registered sampler by name, or NULL. */
const struct belt_sampler_ops *belt_registry_sampler(const struct belt_registry *r,
						     const char *name);

#endif
