/* A plugin built against another plugin ABI: the loader must refuse it. */
#include "belt/plugin.h"

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	(void)r;
	(void)err;
	(void)errsz;
	return 0;
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI + 998,
	.name = "backend-badabi",
	.description = "test plugin with a wrong ABI version",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
