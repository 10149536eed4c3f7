/* The n-gram index: one open table per n-gram length, keyed by a hash of
 * the n tokens, holding the end position of the latest occurrence. An
 * entry is only a hint: a lookup compares the tokens in the history
 * itself, so a hash collision or a stale entry costs a proposal, never a
 * wrong one, and the drafter keeps no copy of the text. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

int ngram_index_init(struct ngram_index *x, int nmin, int nmax, uint32_t bits)
{
	size_t n = (size_t)(nmax - nmin + 1) << bits;
	*x = (struct ngram_index){.nmin = nmin, .nmax = nmax, .bits = bits};
	if (!(x->ends = malloc(n * sizeof *x->ends)))
		return -1;
	memset(x->ends, 0xff, n * sizeof *x->ends);
	return 0;
}

void ngram_index_free(struct ngram_index *x)
{
	free(x->ends);
	x->ends = NULL;
}

/* Hash of the n tokens ending at h[e]. */
static uint32_t hash(const int32_t *h, size_t e, int n, uint32_t bits)
{
	uint64_t v = 0x9e3779b97f4a7c15u * (uint64_t)n;
	for (int i = 0; i < n; i++)
		v = (v ^ (uint32_t)h[e - (size_t)i]) * 0xff51afd7ed558ccdu;
	return (uint32_t)(v >> (64 - bits));
}

static int32_t *slot(struct ngram_index *x, int n, uint32_t key)
{
	return &x->ends[((size_t)(n - x->nmin) << x->bits) + key];
}

static void enter(struct ngram_index *x, const int32_t *h, size_t n)
{
	if (x->indexed &&
	    (n <= x->indexed || h[0] != x->first || h[x->indexed - 1] != x->last)) {
		memset(x->ends, 0xff, ((size_t)(x->nmax - x->nmin + 1) << x->bits) * sizeof *x->ends);
		x->indexed = 0;
	}
	/* the n-grams ending at e < n - 1: the last token's own are what a
	 * lookup searches for, so they enter only with the next call */
	for (size_t e = x->indexed; e + 1 < n; e++)
		for (int k = x->nmin; k <= x->nmax && (size_t)k <= e + 1; k++)
			*slot(x, k, hash(h, e, k, x->bits)) = (int32_t)e;
	if (n > 1) {
		x->indexed = n - 1;
		x->first = h[0];
		x->last = h[n - 2];
	}
}

static bool same(const int32_t *h, size_t a, size_t b, int n)
{
	for (int i = 0; i < n; i++)
		if (h[a - (size_t)i] != h[b - (size_t)i])
			return false;
	return true;
}

/* The latest earlier end of the k-gram ending at h[last], or -1. */
static int32_t match(struct ngram_index *x, const int32_t *h, size_t last, int k)
{
	if ((size_t)k > last) /* an earlier occurrence needs room */
		return -1;
	int32_t e = *slot(x, k, hash(h, last, k, x->bits));
	if (e < k - 1 || (size_t)e >= last || !same(h, (size_t)e, last, k))
		return -1;
	return e;
}

/* nodes[at .. at + len): what followed h[e], a chain; where it runs into
 * the present, the chain's own earlier nodes. */
static void chain(const int32_t *h, size_t n, int32_t e, struct belt_draft_node *nodes, int at,
		  int len)
{
	for (int i = 0; i < len; i++) {
		size_t src = (size_t)e + 1 + (size_t)i;
		int32_t t = src < n ? h[src] : nodes[at + (int)(src - n)].token;
		nodes[at + i] = (struct belt_draft_node){.token = t, .parent = i ? at + i - 1 : -1};
	}
}

int ngram_propose(struct ngram_index *x, const int32_t *h, size_t n,
		  struct belt_draft_node *nodes, int depth, int max, struct ngram_tree *tree)
{
	enter(x, h, n);
	size_t last = n - 1;
	int32_t ends[NGRAM_BRANCHES];
	int nb = 0;
	for (int k = x->nmax; k >= x->nmin && nb < (tree ? NGRAM_BRANCHES : 1); k--) {
		int32_t e = match(x, h, last, k);
		if (e < 0)
			continue;
		/* a branch of its own where its next token is new */
		bool seen = false;
		for (int b = 0; b < nb; b++)
			seen = seen || h[ends[b] + 1] == h[e + 1];
		if (!seen)
			ends[nb++] = e;
	}
	/* a depth that reaches max: the chain held whole lately, and gets
	 * all of max; branches where it is shorter, as after a miss */
	if (depth >= max) {
		depth = max;
		nb = nb ? 1 : 0;
	}
	if (!nb || depth < 1)
		return 0;
	int side = depth / 4 > 1 ? depth / 4 : 1;
	while (nb > 1 && max - (nb - 1) * side < 1)
		nb--;
	int main_len = max - (nb - 1) * side < depth ? max - (nb - 1) * side : depth, at = 0;
	if (tree)
		tree->n = nb;
	for (int b = 0; b < nb; b++) {
		int len = b ? side : main_len;
		chain(h, n, ends[b], nodes, at, len);
		if (tree) {
			tree->start[b] = at;
			tree->len[b] = len;
		}
		at += len;
	}
	return at;
}
