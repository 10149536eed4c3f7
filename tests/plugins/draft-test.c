/* Draft "test": proposes the last token repeated, a chain of k nodes (k
 * from the options, default 4). Its feedback shows in the next proposal,
 * as a real drafter tunes its depth to how much holds: after n accepted
 * it proposes n + 1 (at most k). Options "k,fail=N": its N-th proposal
 * is an error, for tests of a generation that fails half-way. */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"

struct drafter {
	int k;
	int depth; /* of the next proposal */
	long fail; /* proposals left until the failing one; 0: none fails */
};

static int create(int32_t n_vocab, uint32_t n_embd, const char *options, void **ctx,
		  char *err, size_t errsz)
{
	(void)n_vocab;
	(void)n_embd;
	char *end = NULL;
	long k = options ? strtol(options, &end, 10) : 4, fail = 0;
	if (options && !strncmp(end, ",fail=", 6))
		fail = strtol(end + 6, &end, 10);
	if ((options && *end) || k < 1 || k > 64 || fail < 0)
		return belt_errf(err, errsz, "draft 'test': expected k in 1..64, got '%s'", options);
	struct drafter *d = malloc(sizeof *d);
	if (!d)
		return belt_errf(err, errsz, "draft 'test': out of memory");
	*d = (struct drafter){.k = (int)k, .depth = (int)k, .fail = fail};
	*ctx = d;
	return 0;
}

static void dfree(void *ctx)
{
	free(ctx);
}

static int propose(void *ctx, const int32_t *history, size_t n_hist, const float *hidden,
		   struct belt_draft_node *nodes, int max, char *err, size_t errsz)
{
	(void)hidden;
	struct drafter *d = ctx;
	if (n_hist == 0)
		return belt_errf(err, errsz, "draft 'test': no history to continue");
	if (d->fail && --d->fail == 0)
		return belt_errf(err, errsz, "draft 'test': the failing proposal, as asked");
	int n = d->depth < max ? d->depth : max;
	for (int i = 0; i < n; i++)
		nodes[i] = (struct belt_draft_node){.token = history[n_hist - 1], .parent = i - 1};
	return n < 0 ? 0 : n;
}

static void accept(void *ctx, const int32_t *path, int n)
{
	(void)path; /* a chain: the path is 0 .. n - 1 */
	struct drafter *d = ctx;
	d->depth = n < d->k ? n + 1 : d->k;
}

static const struct belt_draft_ops test_draft = {
	.abi = BELT_DRAFT_ABI,
	.name = "test",
	.description = "test drafter: the last token, k times",
	.create = create,
	.free = dfree,
	.propose = propose,
	.accept = accept,
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_draft(r, &test_draft, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "draft-test",
	.description = "test plugin: a drafter that repeats the last token",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
