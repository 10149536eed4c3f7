/* Draft "ngram": prompt lookup (doc/drafting.md). The text so far (prompt
 * and output) is its own draft model: when the last n tokens occurred
 * before, what followed them then is proposed now, a chain of up to
 * `depth` tokens, with branches for the other tokens that followed
 * shorter n-grams (a tree). The depth follows what the target accepts,
 * and after proposals that fail outright the drafter stays quiet for a
 * while, so text it cannot predict runs at the plain decode's speed. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "ngram.h"

#define QUIET_MAX 64 /* proposals skipped at most after failures */

struct drafter {
	struct ngram_index x;
	int depth;  /* of the next proposal */
	int last;   /* tokens in the last proposal's first chain */
	int misses; /* proposals in a row of which nothing held */
	int quiet;  /* calls left to answer with no proposal */
	bool tree;  /* branches (option tree, default 1) */
	struct ngram_tree branches; /* of the last proposal */
};

/* Parse "min=N,max=N,tree=B" (any of them, in any order) into *nmin,
 * *nmax, *tree. */
static int parse_options(const char *options, int *nmin, int *nmax, int *tree, char *err,
			 size_t errsz)
{
	for (const char *p = options; p && *p;) {
		int *dst = !strncmp(p, "min=", 4)    ? nmin
			   : !strncmp(p, "max=", 4)  ? nmax
			   : !strncmp(p, "tree=", 5) ? tree
						     : NULL;
		const char *v0 = dst == tree ? p + 5 : p + 4;
		char *end;
		long v = dst ? strtol(v0, &end, 10) : 0;
		if (!dst || end == v0 || (*end && *end != ',') ||
		    (dst == tree ? v < 0 || v > 1 : v < 1 || v > 16))
			return belt_errf(err, errsz,
					 "draft 'ngram': options '%s': expected min=N,max=N with N in "
					 "1..16, tree=0 or tree=1",
					 options);
		*dst = (int)v;
		p = *end ? end + 1 : end;
	}
	if (*nmin > *nmax)
		return belt_errf(err, errsz, "draft 'ngram': options '%s': min %d is above max %d",
				 options, *nmin, *nmax);
	return 0;
}

static int create(int32_t n_vocab, uint32_t n_embd, const char *options, void **ctx, char *err,
		  size_t errsz)
{
	(void)n_vocab;
	(void)n_embd;
	int nmin = 2, nmax = 4, tree = 1;
	if (parse_options(options, &nmin, &nmax, &tree, err, errsz))
		return -1;
	struct drafter *d = calloc(1, sizeof *d);
	if (!d || ngram_index_init(&d->x, nmin, nmax, 16)) {
		free(d);
		return belt_errf(err, errsz, "draft 'ngram': out of memory");
	}
	d->depth = 1 << 30; /* as deep as the caller allows, until told */
	d->tree = tree;
	*ctx = d;
	return 0;
}

static void dfree(void *ctx)
{
	struct drafter *d = ctx;
	if (!d)
		return;
	ngram_index_free(&d->x);
	free(d);
}

static int propose(void *ctx, const int32_t *history, size_t n_hist, const float *hidden,
		   struct belt_draft_node *nodes, int max, char *err, size_t errsz)
{
	(void)hidden;
	struct drafter *d = ctx;
	if (n_hist == 0)
		return belt_errf(err, errsz, "draft 'ngram': no history to continue");
	if (max < 1)
		return 0;
	if (d->quiet > 0) {
		d->quiet--;
		/* the index still follows the text, so that it is current when
		 * the drafter speaks again */
		ngram_propose(&d->x, history, n_hist, nodes, 0, 0, NULL);
		return 0;
	}
	d->branches.n = 0;
	int n = ngram_propose(&d->x, history, n_hist, nodes, d->depth, max,
			      d->tree ? &d->branches : NULL);
	d->last = d->branches.n ? d->branches.len[0] : n; /* the first chain */
	return n;
}

/* The path runs down one branch of the last proposal. Twice as deep
 * after a proposal whose branch held entirely, one past what held
 * otherwise; after m misses in a row, 2^m - 1 calls (at most QUIET_MAX)
 * without proposals. */
static void accept(void *ctx, const int32_t *path, int n)
{
	struct drafter *d = ctx;
	if (n == 0) {
		d->misses++;
		d->quiet = (1 << (d->misses < 6 ? d->misses : 6)) - 1;
		if (d->quiet > QUIET_MAX)
			d->quiet = QUIET_MAX;
		d->depth = 2;
		return;
	}
	d->misses = 0;
	int len = d->last; /* the held branch's nodes */
	for (int b = 0; b < d->branches.n; b++)
		if (path[0] == d->branches.start[b])
			len = d->branches.len[b];
	d->depth = n >= len ? (d->last < 1 << 20 ? 2 * d->last : d->last) : n + 1;
}

static const struct belt_draft_ops ngram_draft = {
	.abi = BELT_DRAFT_ABI,
	.name = "ngram",
	.description = "prompt lookup: what followed the last n-gram where it occurred before",
	.create = create,
	.free = dfree,
	.propose = propose,
	.accept = accept,
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_draft(r, &ngram_draft, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "draft-ngram",
	.description = "n-gram drafts from the text so far (prompt lookup)",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
