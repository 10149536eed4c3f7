/* The registry: the one place that knows which features exist, by name.
 * It is the only global state in libbelt. */
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "plugin/registry.h"

#define MAX_BACKENDS 16

struct belt_registry {
	const struct belt_backend_ops *backends[MAX_BACKENDS];
	unsigned n_backends;
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
