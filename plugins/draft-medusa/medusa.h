/* plugins/draft-medusa: Medusa heads (doc/drafting.md). K heads, each a
 * residual block on the target's hidden state after the final norm,
 * h_k = h + silu(W_k h + b_k), read through the target's output
 * projection or the head's own; each head's top candidates, with their
 * probabilities, make a tree of drafts: head k's guesses at depth k. */
#ifndef BELT_DRAFT_MEDUSA_H
#define BELT_DRAFT_MEDUSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/draft.h"
#include "belt/gguf.h"

#define MEDUSA_HEADS_MAX 8
#define MEDUSA_TOPK_MAX 8
#define MEDUSA_NODES_MAX 256

/* The heads of a side file, and the tap that runs them. */
struct medusa_heads {
	struct belt_gguf *g;
	uint32_t n_heads, n_embd, topk;
	int32_t n_vocab;
	/* W_k and b_k of every head, then the heads' own output projections */
	struct belt_tap_tensor tensors[3 * MEDUSA_HEADS_MAX];
	uint32_t n_tensors;
	int8_t own[MEDUSA_HEADS_MAX]; /* head k's projection in tensors, or -1 */
	struct belt_tap_cmd cmds[6 * MEDUSA_HEADS_MAX];
};

/* Open path (GGUF, general.architecture "medusa") for a target of n_vocab
 * tokens and n_embd wide, each head giving its topk best; -1 with err
 * naming the file and the key or tensor at fault. A head's own output
 * projection, medusa.{k}.output [n_embd x n_vocab] of any type, replaces
 * the target's for it. */
int medusa_heads_open(struct medusa_heads *h, const char *path, int32_t n_vocab,
		      uint32_t n_embd, uint32_t topk, char *err, size_t errsz);
void medusa_heads_close(struct medusa_heads *h);
/* The tap's commands for h (an output projection of any type). */
void medusa_heads_tap(struct medusa_heads *h, struct belt_draft_tap *tap);

/* The state of a tree's construction: candidates not yet taken. */
struct medusa_cand {
	float joint;  /* probability of the path to it */
	int16_t depth; /* head */
	int16_t rank;  /* its place in the head's list */
	int16_t parent; /* index among the nodes taken, -1 the root */
};
struct medusa_tree {
	struct medusa_cand front[MEDUSA_NODES_MAX * MEDUSA_TOPK_MAX + MEDUSA_TOPK_MAX];
	struct medusa_cand taken[MEDUSA_NODES_MAX];
	int16_t order[MEDUSA_NODES_MAX], place[MEDUSA_NODES_MAX];
};

/* Fill nodes[0..max) from result (per head: topk ids as floats, then
 * their probabilities): the most probable paths first, down to a joint
 * probability of min_joint, the chain of each head's best first. Returns
 * the count. Allocates nothing. */
int medusa_tree_build(struct medusa_tree *t, const float *result, uint32_t n_heads,
		      uint32_t topk, float min_joint, struct belt_draft_node *nodes, int max);

#endif
