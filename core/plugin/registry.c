/* The registry: the one place that knows which features exist, by name.
 * It is the only global state in libbelt. */
#include <stdio.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "plugin/registry.h"

#define MAX_BACKENDS 16
#define MAX_SAMPLERS 16

struct belt_registry {
	const struct belt_backend_ops *backends[MAX_BACKENDS];
	unsigned n_backends;
	const struct belt_sampler_ops *samplers[MAX_SAMPLERS];
	unsigned n_samplers;
};

static struct belt_registry registry;

struct belt_registry *belt_registry_global(void)
{
	return &registry;
}

int belt_registry_add_backend(struct belt_registry *r,
			      const struct belt_backend_ops *ops, char *err,
			      size_t errsz)
{
	if (!ops || !ops->name)
		return belt_errf(err, errsz, "backend without a name");
	if (ops->abi != BELT_BACKEND_ABI)
		return belt_errf(err, errsz,
				 "backend '%s' has backend ABI version %u, this belt expects %u",
				 ops->name, ops->abi, BELT_BACKEND_ABI);
	if (belt_registry_backend(r, ops->name))
		return belt_errf(err, errsz, "backend '%s' registered twice", ops->name);
	if (r->n_backends == MAX_BACKENDS)
		return belt_errf(err, errsz, "too many backends (at most %d)", MAX_BACKENDS);
	r->backends[r->n_backends++] = ops;
	return 0;
}

const struct belt_backend_ops *belt_registry_backend(const struct belt_registry *r,
						     const char *name)
{
	for (unsigned i = 0; i < r->n_backends; i++)
		if (!strcmp(r->backends[i]->name, name))
			return r->backends[i];
	return NULL;
}

int belt_registry_add_sampler(struct belt_registry *r,
			      const struct belt_sampler_ops *ops, char *err,
			      size_t errsz)
{
	if (!ops || !ops->name)
		return belt_errf(err, errsz, "sampler without a name");
	if (ops->abi != BELT_SAMPLER_ABI)
		return belt_errf(err, errsz,
				 "sampler '%s' has sampler ABI version %u, this belt expects %u",
				 ops->name, ops->abi, BELT_SAMPLER_ABI);
	if (!ops->work_size || !ops->sample || !ops->chain_commands)
		return belt_errf(err, errsz, "sampler '%s' lacks a function", ops->name);
	if (belt_registry_sampler(r, ops->name))
		return belt_errf(err, errsz, "sampler '%s' registered twice", ops->name);
	if (r->n_samplers == MAX_SAMPLERS)
		return belt_errf(err, errsz, "too many samplers (at most %d)", MAX_SAMPLERS);
	r->samplers[r->n_samplers++] = ops;
	return 0;
}

const struct belt_sampler_ops *belt_registry_sampler(const struct belt_registry *r,
						     const char *name)
{
	for (unsigned i = 0; i < r->n_samplers; i++)
		if (!strcmp(r->samplers[i]->name, name))
			return r->samplers[i];
	return NULL;
}

/* As belt_backend_get (loader.c), for module "sampler-<name>". */
const struct belt_sampler_ops *belt_sampler_get(const char *name, char *err,
						size_t errsz)
{
	if (!name || !*name) {
		belt_errf(err, errsz, "sampler: expected a name");
		return NULL;
	}
	const struct belt_sampler_ops *ops = belt_registry_sampler(&registry, name);
	if (ops)
		return ops;
	char module[80];
	snprintf(module, sizeof module, "sampler-%s", name);
	if (belt_plugin_load(module, err, errsz))
		return NULL;
	ops = belt_registry_sampler(&registry, name);
	if (!ops)
		belt_errf(err, errsz, "plugin '%s' registered no sampler named '%s'", module, name);
	return ops;
}
