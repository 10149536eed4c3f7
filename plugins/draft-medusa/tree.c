/* A tree of drafts from the heads' candidates: best first. Every path
 * taken so far offers its next head's candidates as children, each with
 * the joint probability of the path to it (the product of the heads'
 * probabilities along it, as if they were independent); the most
 * probable of all offered is taken next, until max nodes are taken or
 * none offered reaches min_joint. So the tree is wide where the heads
 * hesitate between a few tokens, deep where they agree, and small where
 * they are unsure. The chain of each head's first choice goes first
 * (what a target that verifies chains only keeps). */
#include "medusa.h"

/* Offer the candidates of head `depth` under taken node parent. */
static int offer(struct medusa_tree *t, int nf, const float *result, uint32_t topk,
		 int depth, int parent, float joint)
{
	const float *prob = result + (size_t)depth * 2 * topk + topk;
	for (uint32_t r = 0; r < topk; r++)
		t->front[nf++] = (struct medusa_cand){.joint = joint * prob[r],
						      .depth = (int16_t)depth,
						      .rank = (int16_t)r,
						      .parent = (int16_t)parent};
	return nf;
}

int medusa_tree_build(struct medusa_tree *t, const float *result, uint32_t n_heads,
		      uint32_t topk, float min_joint, struct belt_draft_node *nodes, int max)
{
	if (max > MEDUSA_NODES_MAX)
		max = MEDUSA_NODES_MAX;
	int nf = offer(t, 0, result, topk, 0, -1, 1.0f), n = 0;
	while (n < max && nf > 0) {
		int best = 0;
		for (int i = 1; i < nf; i++)
			if (t->front[i].joint > t->front[best].joint)
				best = i;
		if (!(t->front[best].joint >= min_joint))
			break;
		struct medusa_cand c = t->front[best];
		t->front[best] = t->front[--nf];
		t->taken[n] = c;
		if ((uint32_t)c.depth + 1 < n_heads)
			nf = offer(t, nf, result, topk, c.depth + 1, n, c.joint);
		n++;
	}
	/* order: the chain of first choices, then the rest as taken (a
	 * parent is always taken before its children) */
	int m = 0, at = -1;
	for (int i = 0; i < n; i++)
		t->place[i] = -1;
	for (int i = 0; i < n; i++)
		if (t->taken[i].parent == at && t->taken[i].rank == 0) {
			t->order[m] = (int16_t)i;
			t->place[i] = (int16_t)m++;
			at = i;
		}
	for (int i = 0; i < n; i++)
		if (t->place[i] < 0) {
			t->order[m] = (int16_t)i;
			t->place[i] = (int16_t)m++;
		}
	for (int j = 0; j < n; j++) {
		const struct medusa_cand *c = &t->taken[t->order[j]];
		const float *ids = result + (size_t)c->depth * 2 * topk;
		nodes[j] = (struct belt_draft_node){.token = (int32_t)ids[c->rank],
						    .parent = c->parent < 0 ? -1 : t->place[c->parent]};
	}
	return n;
}
