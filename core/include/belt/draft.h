/* belt/draft.h: speculative decoding, drafter plugins.
 *
 * A drafter is registered by name from a plugin module "draft-<name>". It
 * proposes a tree of tokens that may follow the accepted ones; the target
 * model checks the whole tree in one batched pass (BELT_RUN_TREE in
 * belt/backend.h) and tells the drafter how much of it held. A drafter
 * may read the "hidden" insertion point: a tap of the last hidden state
 * after the final norm, the target model's features for its last token. */
#ifndef BELT_DRAFT_H
#define BELT_DRAFT_H

#include <stddef.h>
#include <stdint.h>

#define BELT_DRAFT_ABI 1
/* The oldest draft ABI the core still loads. */
#define BELT_DRAFT_ABI_MIN 1

/* One proposed token. Nodes form a tree by parent index: each node
 * continues its parent, -1 meaning the last accepted token. */
struct belt_draft_node {
	int32_t token;
	int32_t parent; /* -1, or the index of an earlier node */
};

/* A drafter: one versioned table, filled with designated initializers.
 * It only grows at the end. ctx is what create() returned. */
struct belt_draft_ops {
	uint32_t abi; /* BELT_DRAFT_ABI */
	const char *name;
	const char *description;

	/* A drafter for a target with n_vocab tokens and hidden size n_embd;
	 * options: the drafter's own settings from the config, or NULL. */
	int (*create)(int32_t n_vocab, uint32_t n_embd, const char *options,
		      void **ctx, char *err, size_t errsz);
	/* Free; NULL is allowed. */
	void (*free)(void *ctx);
	/* Propose what follows history[0..n_hist) (the accepted tokens, the
	 * last one included): fill nodes[0..max), parents before children;
	 * returns the count (0: no proposal), or -1 with err. hidden is the
	 * "hidden" tap (n_embd floats) or NULL when there is none. Must not
	 * allocate. */
	int (*propose)(void *ctx, const int32_t *history, size_t n_hist,
		       const float *hidden, struct belt_draft_node *nodes,
		       int max, char *err, size_t errsz);
	/* Feedback on the last proposal: the target accepted the nodes
	 * path[0..n) (path[0]'s parent -1, each the next one's parent); n may
	 * be 0. */
	void (*accept)(void *ctx, const int32_t *path, int n);
};

#endif
