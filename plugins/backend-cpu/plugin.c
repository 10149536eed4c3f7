/* The module's one export: the plugin descriptor, which registers the CPU
 * backend. Kept apart from backend.c so the tests can link the backend
 * without the registry. */
#include "belt/plugin.h"
#include "cpu.h"

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_backend(r, &cpu_backend_ops, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "backend-cpu",
	.description = "CPU backend: threaded kernels in C with AVX2 paths",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
