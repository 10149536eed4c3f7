/* A backend built for a backend ABI newer than this belt's: it must be
 * refused. It registers a drafter first, so that the test sees the loader
 * drop that too: the module is closed when registering fails. */
#include "belt/plugin.h"

static int propose(void *ctx, const int32_t *history, size_t n_hist, const float *hidden,
		   struct belt_draft_node *nodes, int max, char *err, size_t errsz)
{
	(void)ctx, (void)history, (void)n_hist, (void)hidden, (void)nodes, (void)max;
	(void)err, (void)errsz;
	return 0;
}

static int create(int32_t n_vocab, uint32_t n_embd, const char *options, void **ctx,
		  char *err, size_t errsz)
{
	(void)n_vocab, (void)n_embd, (void)options, (void)err, (void)errsz;
	*ctx = NULL;
	return 0;
}

static void dfree(void *ctx)
{
	(void)ctx;
}

static void accept(void *ctx, const int32_t *path, int n)
{
	(void)ctx, (void)path, (void)n;
}

static const struct belt_draft_ops draft = {
	.abi = BELT_DRAFT_ABI,
	.name = "newabi",
	.create = create,
	.free = dfree,
	.propose = propose,
	.accept = accept,
};

/* Its functions are never reached: the ABI check comes first. */
static const struct belt_backend_ops newabi = {
	.abi = BELT_BACKEND_ABI + 1,
	.name = "newabi",
	.description = "test backend from a newer belt",
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	if (belt_registry_add_draft(r, &draft, err, errsz))
		return -1;
	return belt_registry_add_backend(r, &newabi, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "backend-newabi",
	.description = "test plugin: a backend of a newer ABI",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
