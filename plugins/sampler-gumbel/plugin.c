/* The module's one export: the plugin descriptor, which registers the
 * sampler "gumbel". */
#include "belt/plugin.h"
#include "gumbel.h"

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_sampler(r, &gumbel_sampler_ops, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "sampler-gumbel",
	.description = "Gumbel-max sampler: temperature, top-k, top-p, min-p, "
		       "repeat/presence/frequency penalties, on the CPU and as GPU chain commands",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
