/* Draft "test": proposes the last token repeated, a chain of k nodes (k
 * from the options, default 4). Its feedback shows in the next proposal,
 * as a real drafter tunes its depth to how much holds: after n accepted
 * it proposes n + 1 (at most k). Options "k,fail=N": its N-th proposal
 * is an error, for tests of a generation that fails half-way. "k,tree":
 * a tree of two branches, that chain first and then what followed the
 * last token's previous occurrence (which holds more often, and holds
 * off the first chain, so that its cache entries move). "k,badtree":
 * a tree whose second node names itself as its parent (the core must
 * refuse it with a message). "k,tap" (or "k,tree,tap"): also commands at the hidden tap
 * (belt/draft.h), the target's own output projection and top 2 of the
 * tapped state: each proposal checks that its first is the last token
 * taken (which the target picked from that state), or a near tie of it,
 * and fails without a tap result, so a run shows the tap reads the
 * right row every time. */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"

struct drafter {
	int k;
	int depth; /* of the next proposal */
	long fail; /* proposals left until the failing one; 0: none fails */
	int tree;  /* propose the second branch too (2: a bad one) */
	bool tap;  /* check the tap's top 2 */
	int32_t n_vocab;
	uint32_t n_embd;
	struct belt_tap_cmd cmds[2];
};

static int create(int32_t n_vocab, uint32_t n_embd, const char *options, void **ctx,
		  char *err, size_t errsz)
{
	char *end = NULL;
	long k = options ? strtol(options, &end, 10) : 4, fail = 0;
	int tree = 0;
	if (options && !strncmp(end, ",fail=", 6))
		fail = strtol(end + 6, &end, 10);
	if (options && !strncmp(end, ",tree", 5) && (!end[5] || end[5] == ',')) {
		tree = 1;
		end += 5;
	} else if (options && !strcmp(end, ",badtree")) {
		tree = 2;
		end += 8;
	}
	bool tap = options && !strcmp(end, ",tap");
	if (tap)
		end += 4;
	if ((options && *end) || k < 1 || k > 64 || fail < 0)
		return belt_errf(err, errsz, "draft 'test': expected k in 1..64, got '%s'", options);
	struct drafter *d = malloc(sizeof *d);
	if (!d)
		return belt_errf(err, errsz, "draft 'test': out of memory");
	*d = (struct drafter){.k = (int)k, .depth = (int)k, .fail = fail, .tree = tree, .tap = tap,
			      .n_vocab = n_vocab, .n_embd = n_embd};
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
	struct drafter *d = ctx;
	if (n_hist == 0)
		return belt_errf(err, errsz, "draft 'test': no history to continue");
	if (d->tap && !hidden)
		return belt_errf(err, errsz, "draft 'test': no tap result at token %zu", n_hist);
	/* the tap's first pick is the token taken, or its runner-up within a
	 * near tie (backends whose head sums differ in the last bits) */
	if (d->tap && (int32_t)hidden[0] != history[n_hist - 1] &&
	    !((int32_t)hidden[1] == history[n_hist - 1] && hidden[2] - hidden[3] < 0.02f))
		return belt_errf(err, errsz,
				 "draft 'test': the tap picks %d (p %.4f), then %d (p %.4f), after "
				 "token %zu, which is %d",
				 (int)hidden[0], hidden[2], (int)hidden[1], hidden[3], n_hist,
				 history[n_hist - 1]);
	if (d->fail && --d->fail == 0)
		return belt_errf(err, errsz, "draft 'test': the failing proposal, as asked");
	/* the second branch: after the last token's previous occurrence */
	size_t e = n_hist - 1;
	while (d->tree && e-- > 0 && history[e] != history[n_hist - 1])
		;
	int nb = d->tree && e < n_hist - 1 ? (int)(n_hist - 1 - e) : 0;
	if (nb > d->k)
		nb = d->k;
	if (nb > max / 2)
		nb = max / 2;
	int n = d->depth < max - nb ? d->depth : max - nb;
	for (int i = 0; i < n; i++)
		nodes[i] = (struct belt_draft_node){.token = history[n_hist - 1], .parent = i - 1};
	for (int i = 0; i < nb; i++)
		nodes[n + i] = (struct belt_draft_node){.token = history[e + 1 + (size_t)i],
							.parent = i ? n + i - 1 : -1};
	if (d->tree == 2 && n + nb > 1)
		nodes[1].parent = 1; /* itself: not an earlier node */
	return n + nb < 0 ? 0 : n + nb;
}

static void accept(void *ctx, const int32_t *path, int n)
{
	(void)path; /* its first node says which branch held */
	struct drafter *d = ctx;
	d->depth = n < d->k ? n + 1 : d->k;
}

/* The target's output projection on the tapped state, and its top 2. */
static int tap(void *ctx, int out_type, struct belt_draft_tap *t, char *err, size_t errsz)
{
	(void)out_type;
	(void)err;
	(void)errsz;
	struct drafter *d = ctx;
	if (!d->tap)
		return 0;
	uint64_t nv = (uint64_t)d->n_vocab;
	const struct belt_tap_bind logits = {.slot = BELT_TAP_SCRATCH, .n = nv};
	d->cmds[0] = (struct belt_tap_cmd){
		.op = "matvec", .n_bind = 3,
		.bind = {{.slot = BELT_TAP_OUTPUT}, {.slot = BELT_TAP_HIDDEN}, logits},
		.n_param = 2, .param = {{.i = (int)d->n_embd}, {.i = d->n_vocab}}};
	d->cmds[1] = (struct belt_tap_cmd){
		.op = "top_k", .n_bind = 2, .bind = {logits, {.slot = BELT_TAP_RESULT, .n = 4}},
		.n_param = 2, .param = {{.i = d->n_vocab}, {.i = 2}}};
	*t = (struct belt_draft_tap){.cmds = d->cmds, .n_cmds = 2, .scratch_floats = nv,
				     .result_floats = 4};
	return 0;
}

static const struct belt_draft_ops test_draft = {
	.abi = BELT_DRAFT_ABI,
	.name = "test",
	.description = "test drafter: the last token, k times",
	.create = create,
	.free = dfree,
	.propose = propose,
	.accept = accept,
	.tap = tap,
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
