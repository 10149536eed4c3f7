/* The dispatch layer: turns an architecture's forward pass into a dispatch
 * table for a block of `rows` tokens, from the model (tensors, weights,
 * hyperparameters, backend kernels) and a map of the buffers the session
 * made. It knows nothing of sessions or decoding. */
#ifndef BELT_DISPATCH_DISPATCH_H
#define BELT_DISPATCH_DISPATCH_H

#include "belt/ops.h"
#include "model/model.h"

/* Where layer l's slice of a KV cache lies: a cache of elems values
 * (slots x values per position), position p in slot p mod slots
 * (doc/ops.md). A sliding-window layer's slice holds fewer slots than
 * the context (session.c, ring_slots). */
struct dispatch_kv_layer {
	struct belt_buffer *buf;
	uint64_t offset, bytes, elems;
	uint32_t slots;
};

/* A scratch or KV buffer the architecture names. */
struct dispatch_buffer {
	const char *name;
	struct belt_buffer *buf; /* scratch: the buffer */
	uint64_t elems; /* elements per row (per layer for the KV cache, at
			 * the whole context) */
	int type;	/* element type: F32, or the KV cache's (belt_type) */
	uint64_t layer_bytes; /* KV cache: bytes of a whole-context layer */
	/* KV cache: each layer's slice ([n_layer], owned) in the buffers
	 * made for it (pieces of whole layers, as a device allocates only so
	 * much at once; a group's session has the group's: shared) */
	struct dispatch_kv_layer *layers;
	struct belt_buffer **pieces;
	uint32_t n_pieces;
	bool shared; /* the buffers are another's: not freed with the session */
	bool kv;
	bool per_row; /* holds a row per token of a batched pass */
};

/* What a table is built over. */
struct dispatch_map {
	const struct dispatch_buffer *bufs;
	unsigned n_bufs;
	const struct belt_vars *vars; /* the model's, plus n_ctx */
	struct belt_buffer *token_ids; /* I32 [n_ctx + 1] */
	uint32_t n_ctx;
	uint32_t rows;		     /* 1: the decode table; > 1 batched */
	struct belt_buffer *row_ids; /* batched: I32 [rows] */
	/* a table of sequences (belt_table.seq_ctx): a sequence's positions,
	 * the caches in n_ctx / seq_ctx parts, a pass a row of each; else 0 */
	uint32_t seq_ctx;
};

/* Whether the architecture binds buffer `name` as activations (a row per
 * token) anywhere, by the op contracts; work areas (attention's scores)
 * are not. */
bool belt_dispatch_buffer_per_row(const struct belt_arch *a, const char *name);

/* Which cache the architecture binds KV cache array `name` as: 'k' (a
 * k_cache binding of the op contracts), 'v', 0 for neither, or '?' for
 * both. */
int belt_dispatch_cache_role(const struct belt_arch *a, const char *name);

/* The window of KV cache array `name` at layer l: w > 0 when every op of
 * that layer reading it attends within w positions (its `window` param),
 * so the layer's slice need hold only the last w positions and a pass's
 * rows; 0 when some op reads it whole (or none reads it). vars: the
 * session's; errors name the YAML position of the param. */
int belt_dispatch_cache_window(struct belt_model *m, const struct belt_vars *vars,
			       const char *name, int layer, uint32_t *w, char *err,
			       size_t errsz);

/* Build t (cmds, n_cmds, n_ctx, token_ids, rows, row_ids) and its labels
 * (*labels, one per command, freed by the caller with t->cmds). Errors
 * name the YAML file, line and column of the op or binding at fault. */
int belt_dispatch_build(struct belt_model *m, const struct dispatch_map *map,
			struct belt_table *t, char (**labels)[48], char *err,
			size_t errsz);

#endif
