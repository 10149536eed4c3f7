/* Arch "broken": an architecture plugin whose description has an error on
 * its third line, for the test that a plugin's YAML errors name the
 * plugin's file and the line (tests/malformed.c). */
#include "belt/arch.h"
#include "belt/plugin.h"

static const struct belt_arch_ops broken = {
	.abi = BELT_ARCH_ABI,
	.name = "broken",
	.yaml = "arch: broken\n"
		"hparams:\n"
		"  n_embd: {key: \"{arch}.embedding_length\", bogus: 1}\n",
	.source = "arch-broken/broken.yaml",
};

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_arch(r, &broken, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "arch-broken",
	.description = "test: an architecture whose YAML has an error on line 3",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
