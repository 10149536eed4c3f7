/* belt/draft.h: speculative decoding, drafter plugins.
 *
 * A drafter is registered by name from a plugin module "draft-<name>". It
 * proposes a tree of tokens that may follow the accepted ones; the target
 * model checks the whole tree in one batched pass (BELT_RUN_TREE in
 * belt/backend.h) and tells the drafter how much of it held. A drafter
 * may add commands at the "hidden" insertion point (ABI 2): they run on
 * the backend after each pass, on the target's hidden state after the
 * final norm for the last accepted token (its features, as Medusa heads
 * read them), and what they write comes back to propose(). */
#ifndef BELT_DRAFT_H
#define BELT_DRAFT_H

#include <stddef.h>
#include <stdint.h>

#include "belt/backend.h"

/* 1: propose/accept; 2: tap() */
#define BELT_DRAFT_ABI 2
/* The oldest draft ABI the core still loads. */
#define BELT_DRAFT_ABI_MIN 1

/* One proposed token. Nodes form a tree by parent index: each node
 * continues its parent, -1 meaning the last accepted token. */
struct belt_draft_node {
	int32_t token;
	int32_t parent; /* -1, or the index of an earlier node */
};

/* ABI 2. What a tap command's binding refers to. */
enum belt_tap_slot {
	BELT_TAP_HIDDEN,  /* the tapped state: F32 [n_embd], read only */
	BELT_TAP_OUTPUT,  /* the target's output projection [n_embd x n_vocab]
			   * in its stored type, read only */
	BELT_TAP_SCRATCH, /* the drafter's work area: F32 [scratch_floats] */
	BELT_TAP_RESULT,  /* F32 [result_floats], read back for propose() */
	BELT_TAP_TENSOR	  /* + i: the drafter's tensor i, read only */
};

/* A binding: a slot, and for SCRATCH and RESULT the range of floats
 * [offset, offset + n) (n floats a row); other slots are bound whole. */
struct belt_tap_bind {
	uint32_t slot;
	uint64_t offset, n;
};

/* One command at the tap: a kernel op the backend offers (variant
 * "default"; of the weight type of its first binding where that is a
 * tensor or OUTPUT), its bindings and params as doc/ops.md gives them. */
struct belt_tap_cmd {
	const char *op;
	uint8_t n_bind;
	struct belt_tap_bind bind[BELT_MAX_BINDINGS];
	uint8_t n_param;
	union belt_param param[BELT_MAX_PARAMS];
};

/* A tensor the drafter brings (its heads' weights): the core copies
 * data (bytes, of type with ne[0] elements a row, ne[1] rows) to the
 * backend; data must stay valid until the drafter is freed. */
struct belt_tap_tensor {
	const char *name;
	int type; /* enum belt_type */
	int64_t ne[2];
	const void *data;
	uint64_t bytes;
};

/* The drafter's commands at the "hidden" tap, run in order. */
struct belt_draft_tap {
	const struct belt_tap_tensor *tensors;
	uint32_t n_tensors;
	const struct belt_tap_cmd *cmds;
	uint32_t n_cmds;
	uint64_t scratch_floats, result_floats;
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
	 * returns the count (0: no proposal), or -1 with err. hidden is what
	 * the tap's commands wrote to RESULT for the last accepted token, or
	 * NULL (no tap, or none could run). Must not allocate. */
	int (*propose)(void *ctx, const int32_t *history, size_t n_hist,
		       const float *hidden, struct belt_draft_node *nodes,
		       int max, char *err, size_t errsz);
	/* Feedback on the last proposal: the target accepted the nodes
	 * path[0..n) (path[0]'s parent -1, each the next one's parent); n may
	 * be 0. */
	void (*accept)(void *ctx, const int32_t *path, int n);

	/* ABI 2, may be NULL: fill *tap with the commands to run at the
	 * "hidden" tap of a target whose output projection is of type
	 * out_type (enum belt_type); 0 (n_cmds 0: no tap), or -1 with err.
	 * Called once a session; *tap's arrays stay valid until free. */
	int (*tap)(void *ctx, int out_type, struct belt_draft_tap *tap, char *err,
		   size_t errsz);
};

#endif
