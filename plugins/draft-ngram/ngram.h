/* The n-gram drafter's index and lookup (doc/drafting.md): where each
 * n-gram of the text so far last ended, and the tokens that followed it. */
#ifndef BELT_DRAFT_NGRAM_H
#define BELT_DRAFT_NGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "belt/draft.h"

struct ngram_index {
	int nmin, nmax;	   /* n-gram lengths searched, longest first */
	uint32_t bits;	   /* each length's table holds 1 << bits ends */
	int32_t *ends;	   /* [nmax - nmin + 1][1 << bits]: -1, or the
			    * position where the latest n-gram of that hash
			    * ended */
	size_t indexed;	   /* n-grams ending before this are entered */
	int32_t first, last; /* history[0] and history[indexed - 1] when
			      * entered: a change means a new text */
};

/* An empty index for n-grams of nmin..nmax tokens; -1 when out of memory. */
int ngram_index_init(struct ngram_index *x, int nmin, int nmax, uint32_t bits);
void ngram_index_free(struct ngram_index *x);

#define NGRAM_BRANCHES 3 /* a proposal's chains at most */

/* A proposal's chains: branch b is nodes[start[b] .. start[b] + len[b]),
 * the first continuing the last token, each node the one before. */
struct ngram_tree {
	int n;
	int start[NGRAM_BRANCHES], len[NGRAM_BRANCHES];
};

/* Enter the n-grams of history[0..n) that end before its last token
 * (starting over when history is not the text entered so far), then
 * find the longest n-gram ending at the last token that occurred before,
 * and fill nodes (a chain of depth, at most max, nodes) with what
 * followed that occurrence, repeating the proposal itself where the
 * match runs into the present. With tree, where shorter n-grams' latest
 * occurrences were followed by other tokens, up to two of those
 * continuations follow as branches of their own (depth / 4 nodes each,
 * at least 1), where depth is below max (the first chain then shorter
 * where max leaves no room; a depth of max is the chain's alone).
 * Returns the count; 0 when nothing matches. Does not allocate. */
int ngram_propose(struct ngram_index *x, const int32_t *history, size_t n,
		  struct belt_draft_node *nodes, int depth, int max, struct ngram_tree *tree);

#endif
