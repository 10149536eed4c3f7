/* belt/ops.h: the op contracts, one table in the core.
 *
 * For every op a dispatch table may hold: its bindings (what each is,
 * whether it is read or written, its elements per row), its param schema,
 * the patch kinds it takes and what it does per row. The dispatch builder
 * packs params and checks commands by it; backends take their dependency
 * analysis (what a command writes) and common checks from it, so no
 * backend keeps its own copy. doc/ops.md says what each op computes. */
#ifndef BELT_OPS_H
#define BELT_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/backend.h"

/* What a binding holds. */
enum belt_bind_kind {
	BELT_BIND_ROWS = 1,  /* activations: one row per token of the pass */
	BELT_BIND_WEIGHT,    /* a tensor, the same for every row */
	BELT_BIND_CACHE,     /* a layer's KV cache: one row per position */
	BELT_BIND_IDS,	     /* token_ids, or a batched table's row outputs */
	BELT_BIND_WORK	     /* the kernel's own scratch; undefined after */
};

#define BELT_ACCESS_R 1u
#define BELT_ACCESS_W 2u

struct belt_op_binding {
	const char *name;   /* "x", "W", "k_cache": for messages */
	uint8_t kind;	    /* enum belt_bind_kind */
	uint8_t access;	    /* BELT_ACCESS_R | BELT_ACCESS_W */
	/* elements per row: a product of param names and, in the core's
	 * contracts, numbers ("k", "n_head*head_dim", "2*k"); NULL where
	 * the kernel checks it itself */
	const char *row;
};

struct belt_op_contract {
	const char *op;
	const char *params; /* "name:i name:f ...", in order */
	uint8_t n_bind;
	struct belt_op_binding bind[BELT_MAX_BINDINGS];
	/* patch kinds the op takes, as (1u << BELT_PATCH_*); a command's
	 * patch must be one of them or none (which gives position 0) */
	uint32_t patches;
	/* rows are computed independently of each other (all but attention,
	 * whose row i reads what rope_kv wrote for rows before it) */
	bool row_wise;
	bool sampler; /* inserted by the core for sampled decode */
};

/* The contract of op, or NULL if the core knows no such op. */
const struct belt_op_contract *belt_op_contract(const char *op);
/* Every contract: *n of them. */
const struct belt_op_contract *belt_op_contracts(size_t *n);
/* Index of param name in c's schema, or -1. */
int belt_op_param_index(const struct belt_op_contract *c, const char *name);
/* Bit i set when binding i of op is written. */
uint8_t belt_op_writes(const struct belt_op_contract *c);
/* Elements per row of binding i given the command's params, or -1 when
 * the contract gives none or a param is not positive. */
int64_t belt_op_row_elems(const struct belt_op_contract *c, unsigned i,
			  const union belt_param *param);

/* Check a command against its op's contract: the kernel's schema and
 * binding count equal the contract's, the patch is one the op takes, and
 * every row binding holds its rows, every cache binding is of a cache type
 * with whole blocks per head (or row) and holds a row. Backends call it from table_prepare;
 * the message names the command's label. */
int belt_cmd_check(const struct belt_cmd *c, char *err, size_t errsz);
/* top_k's limits, which belt_cmd_check applies: k, and n (ids are exact
 * floats below 2^24). */
#define BELT_TOP_K_MAX 64
#define BELT_TOP_K_MAX_N 16777216

/* Whether caches may hold type t: F32, F16 or Q8_0 (llama.cpp's blocks,
 * a position's row of n_head_kv * head_dim values after another). */
bool belt_cache_type_ok(int t);

/* Bytes of binding i that one row of command c reads: the whole binding,
 * but one row of a table an embedding looks up by token, and n_used of
 * the n_expert matrices of an expert stack (the moe_matvec ops). */
uint64_t belt_cmd_weight_bytes(const struct belt_cmd *c, unsigned i);

/* Rows of a command's pass: ne[1] of its first row binding, or 1. */
uint32_t belt_cmd_rows(const struct belt_cmd *c);

/* The kernel of table[0..n) for op, variant (NULL or "": "default") and
 * weight type (a kernel of BELT_TYPE_ANY takes any), or NULL: the lookup
 * every backend's kernel_find makes. */
const struct belt_kernel *belt_kernel_lookup(const struct belt_kernel *table,
					     size_t n, const char *op,
					     const char *variant, int wtype);

/* Where a backend that runs the commands between two waits concurrently
 * must wait: barrier[i] is set when a command after i touches what the
 * commands since the last wait wrote, or writes what they read (binding
 * ranges by buffer, access by the contracts); always after the last. */
void belt_table_barriers(const struct belt_table *t, bool *barrier);

/* What a command's patch gives row `row` of a pass that starts at position
 * pos. A field its patch does not name is 0: a kernel reads nothing
 * per-token but these. In a batched table (rows > 1) row r sits at
 * position pos + r (depth[r] instead of r under BELT_RUN_TREE), its cache
 * entry at slot pos + r, and its output id goes to slot r of the row
 * outputs; in a one-row table the output goes to token_ids[pos + 1]. */
struct belt_row_at {
	uint32_t token;	   /* token_offset: slot of token_ids read */
	uint32_t position; /* position (and pos_and_kv): RoPE position */
	uint32_t slot;	   /* position: cache slot written */
	uint32_t n_kv;	   /* kv_len: cache entries attended (causal) */
	uint32_t out;	   /* argmax_output: slot of the ids written */
	uint32_t kv_base;  /* kv_len: the first cache slot attended */
};
void belt_row_at(enum belt_patch patch, bool batched, uint32_t pos,
		 uint32_t row, uint32_t depth, struct belt_row_at *out);
/* The same for row r of a run of a table of sequences (belt_table.seqs):
 * at position seq_pos, its cache entries from slot seq_base on (slots of
 * the whole context, in the caches' parts as belt_table.seq_ctx says). */
void belt_row_at_seq(enum belt_patch patch, uint32_t pos, uint32_t row, uint32_t seq_pos,
		     uint32_t seq_base, struct belt_row_at *out);
/* A table of sequences' parts of each cache binding, n_ctx / seq_ctx
 * (belt_table.seq_ctx), in *parts; -1 with a message where seq_ctx does
 * not divide n_ctx. Backends call it from table_prepare. */
int belt_seq_parts(const struct belt_table *t, uint32_t *parts, char *err, size_t errsz);
/* A sequence's part of command c's caches of slots slots, in *part; -1
 * with a message naming c where they are not parts equal parts. */
int belt_seq_part_slots(const struct belt_cmd *c, uint32_t slots, uint32_t parts,
			uint32_t *part, char *err, size_t errsz);
/* Whether row r of a run of table of sequences t lies in its part:
 * seq_base[r] a multiple of seq_ctx and seq_pos[r] below it; else -1
 * with a message naming the row. */
int belt_seq_row_check(const struct belt_table *t, uint32_t r, char *err, size_t errsz);

#endif
