/* The module's one export: the plugin descriptor, which registers the
 * Vulkan backend. */
#include "belt/plugin.h"
#include "vk.h"

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_backend(r, &vk_backend_ops, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "backend-vulkan",
	.description = "Vulkan backend: GLSL compute shaders, pre-recorded "
		       "command buffers",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
