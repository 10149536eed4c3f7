/* belt/backend.h: the contract between the core and a backend plugin.
 *
 * The core builds a dispatch table (an array of struct belt_cmd, one
 * forward pass of a block of `rows` tokens: 1 for the decode chain, a
 * micro-batch for prefill, drafted tokens for verification) from the
 * architecture YAML, using kernels the backend offers by (op, variant,
 * weight type); what each op reads, writes and does per row is its
 * contract in belt/ops.h. The backend prepares the table once and replays
 * it. The table only grows at the end: new fields and new ops are
 * appended. */
#ifndef BELT_BACKEND_H
#define BELT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/types.h"

/* 2: belt_backend_options.flags and belt_backend_ops.list_devices
 * 3: batched tables (belt_table.rows, row_ids, parent; BELT_RUN_TREE);
 *    commands checked against belt/ops.h; patches applied per row;
 *    belt_backend_options.settings; belt_backend_ops.memory_available
 * 4: tables of sequences (belt_table.seqs, seq_pos, seq_base)
 * 5: gated runs (belt_table.gate, belt_backend_ops.table_run_gated)
 * 6: tables of sequences split the caches into parts (belt_table.seq_ctx),
 *    sliding-window layers' parts rings
 * 7: belt_backend_ops.buffer_copy */
#define BELT_BACKEND_ABI 7
/* The oldest backend ABI the core still loads (one-row tables only). */
#define BELT_BACKEND_ABI_MIN 2

/* What a command reads per token, beyond its fixed bindings and params:
 * the backend gives the kernel these values (belt_row_at in belt/ops.h),
 * and 0 for any its patch does not name. For row r of a pass at pos:
 * token_offset reads token_ids[pos + r]; position rotates at pos + r and
 * writes cache slot pos + r; kv_len attends over pos + r + 1 entries;
 * argmax_output writes token_ids[pos + 1] in a one-row table, slot r of
 * row_ids in a batched one. In a table of sequences (belt_table.seqs)
 * row r rotates at seq_pos[r], writes slot seq_base[r] + seq_pos[r] and
 * attends over seq_pos[r] + 1 entries from slot seq_base[r], slots of
 * the whole context that belt_table.seq_ctx places in the caches. */
enum belt_patch {
	BELT_PATCH_NONE = 0,
	BELT_PATCH_TOKEN_OFFSET,
	BELT_PATCH_POSITION,
	BELT_PATCH_KV_LEN,
	BELT_PATCH_POS_AND_KV,
	BELT_PATCH_ARGMAX_OUTPUT
};

enum belt_buffer_usage {
	BELT_BUFFER_WEIGHTS, /* written once at load, then read-only */
	BELT_BUFFER_SCRATCH, /* activations: device-local */
	BELT_BUFFER_KV,	     /* KV cache: device-local */
	BELT_BUFFER_IO	     /* token_ids and logits: read/written by the host */
};

struct belt_buffer; /* defined by each backend */

/* One buffer range a command reads or writes. */
struct belt_binding {
	struct belt_buffer *buf;
	uint64_t offset;   /* bytes from the buffer start */
	uint64_t size;	   /* bytes */
	enum belt_type type; /* element type (F32 for activations, I32 ids) */
	int64_t ne[2];	   /* ne[0] elements per row, ne[1] rows */
};

#define BELT_MAX_BINDINGS 8
#define BELT_MAX_PARAMS 16

union belt_param {
	int32_t i;
	float f;
};

/* A kernel a backend offers; static const data in the backend. The ops,
 * their bindings and params are listed in doc/ops.md. */
struct belt_kernel {
	const char *op;	     /* "matvec", "rmsnorm", ... */
	const char *variant; /* "default", or a named alternative */
	int wtype;	     /* weight type handled (enum belt_type) or BELT_TYPE_ANY */
	uint8_t n_bind;	     /* number of bindings it takes */
	const char *params;  /* schema: "name:i name:f ..." in order */
	const void *impl;    /* backend-private (function, pipeline index) */
};

/* One command of the dispatch table: plain data. */
struct belt_cmd {
	const struct belt_kernel *kernel;
	enum belt_patch patch;
	uint8_t n_bind;
	uint8_t n_param;
	bool head;	   /* output head: for prefill, run for the last token only */
	int16_t layer;	   /* -1 outside the layer loop */
	struct belt_binding bind[BELT_MAX_BINDINGS];
	union belt_param param[BELT_MAX_PARAMS];
	const char *label; /* "blk.3.attn_q", for errors and profiles */
};

struct belt_table {
	struct belt_cmd *cmds;
	uint32_t n_cmds;
	uint32_t n_ctx;		      /* positions the KV cache holds */
	struct belt_buffer *token_ids; /* I32 [n_ctx + 1], BELT_BUFFER_IO */
	void *priv;		      /* the backend's prepared state */
	uint32_t max_run; /* no table_run call covers more positions than this */
	/* end-of-generation ids (at most BELT_MAX_EOG) for BELT_RUN_STOP_AT_EOG */
	int32_t eog[8];
	uint8_t n_eog;
	/* ABI 3. rows > 1: a batched table. table_run(pos, n) is then one
	 * pass over n <= rows tokens, row r at position pos + r reading
	 * token_ids[pos + r]; activations hold a row per token (ne[1] = rows
	 * of their bindings); argmax_output of row r writes row_ids[r]. */
	uint32_t rows;
	struct belt_buffer *row_ids; /* I32 [rows], BELT_BUFFER_IO; batched only */
	/* With BELT_RUN_TREE, parent[r] (host memory, [rows]) is the row that
	 * row r continues, -1 for the cache before pos, and parent[r] < r:
	 * row r then sits at position pos + depth(r), writes cache slot
	 * pos + r and attends to the cache before pos and its own ancestors
	 * in the block (itself included). */
	const int32_t *parent;
	/* ABI 4. seqs (set before table_prepare; batched tables only): each
	 * run's row r is a token of its own sequence, whose cache entries
	 * are the slots from seq_base[r] on: the row reads token_ids[pos + r],
	 * sits at position seq_pos[r], writes slot seq_base[r] + seq_pos[r]
	 * and attends to slots seq_base[r] .. seq_base[r] + seq_pos[r] (slots
	 * of the whole context; where each lies in a cache: seq_ctx). Rows
	 * of one sequence come in order of position. seq_pos and seq_base
	 * (host memory, [rows]) are read by each run. */
	bool seqs;
	const uint32_t *seq_pos, *seq_base;
	/* ABI 6 (required with seqs): the positions of each sequence; n_ctx
	 * is a multiple of it, each seq_base[r] too. A cache binding of B
	 * slots holds n_ctx / seq_ctx equal parts of P = B * seq_ctx / n_ctx
	 * slots, sequence seq_base[r] / seq_ctx's the one of that number:
	 * its position p lies in slot p mod P of it (P < seq_ctx: a
	 * sliding-window layer's ring, which the table's maker sizes for its
	 * readers' window and a pass's rows of one sequence). Set before
	 * table_prepare. */
	uint32_t seq_ctx;
	/* ABI 5. gate > 0 (one-row tables, set before table_prepare): the
	 * commands from cmds[gate] on read what the host writes between
	 * positions (a grammar's mask), so that table_run_gated can run the
	 * commands before it while the host writes. */
	uint32_t gate;
};
#define BELT_MAX_EOG 8

/* run() flags */
#define BELT_RUN_HEAD_LAST_ONLY 1u /* skip head commands but for the last token
				    * (in a batched table: the head runs for
				    * the pass's last row only) */
#define BELT_RUN_SKIP_HEAD 2u	   /* skip head commands for every token */
/* the backend may skip the work of the run's tokens after one whose argmax
 * wrote an id of t->eog (the core reads no token after it) */
#define BELT_RUN_STOP_AT_EOG 4u
/* batched tables: rows form the tree t->parent gives, not a chain */
#define BELT_RUN_TREE 8u

/* table_run_gated's gate_fn returns 0 to go on, or: */
#define BELT_GATE_STOP 1 /* position pos + i is not wanted */
#define BELT_GATE_LAST 2 /* run position pos + i, then no more */

/* belt_backend_options.flags */
#define BELT_BACKEND_PROFILE 1u /* time each command; the backend reports
				 * per-kernel times on stderr at table_release */

/* One setting of conf/belt.yaml's backends: <name>: mapping. */
struct belt_setting {
	const char *key, *value;
};

struct belt_backend_options {
	int n_threads; /* CPU threads; <= 0 means one per core */
	int device;    /* device index; < 0 means the backend's choice */
	uint32_t flags; /* BELT_BACKEND_*; 0 for none */
	/* ABI 3: the backend's settings from belt.yaml, valid during
	 * create(); an unknown key is the backend's error to report */
	const struct belt_setting *settings;
	uint32_t n_settings;
};

/* The value of setting key in o (NULL if absent), unless environment
 * variable env (may be NULL) is set: it overrides the file. */
const char *belt_setting_get(const struct belt_backend_options *o, const char *key,
			     const char *env);
/* 0 when every setting of o is one of the NULL-terminated keys; else -1
 * with a message naming the backend and the unknown key. */
int belt_settings_check(const struct belt_backend_options *o, const char *backend,
			const char *const *keys, char *err, size_t errsz);

/* A backend: one versioned table of functions, filled with designated
 * initializers. ctx is what create() returned. */
/* One region of buffer_copy: size bytes of src from src_off to dst at
 * dst_off. */
struct belt_copy {
	struct belt_buffer *src, *dst;
	uint64_t src_off, dst_off, size;
};

/* For backends' buffer_copy: 0 when every region of r[0..n) lies in its
 * buffers (size_of: a buffer's bytes) with source and destination apart;
 * else -1 with a message naming who ("cpu"), the region and the fault. */
int belt_copy_check(const struct belt_copy *r, uint32_t n,
		    uint64_t (*size_of)(const struct belt_buffer *b), const char *who,
		    char *err, size_t errsz);

struct belt_backend_ops {
	uint32_t abi; /* BELT_BACKEND_ABI */
	const char *name;
	const char *description;

	int (*create)(const struct belt_backend_options *opt, void **ctx,
		      char *err, size_t errsz);
	void (*destroy)(void *ctx);

	/* Device memory. wrap() may be NULL, or fail, when the backend cannot
	 * use host memory in place; the core then creates and writes. */
	int (*buffer_create)(void *ctx, enum belt_buffer_usage usage,
			     uint64_t size, struct belt_buffer **out,
			     char *err, size_t errsz);
	int (*buffer_wrap)(void *ctx, const void *host, uint64_t size,
			   struct belt_buffer **out, char *err, size_t errsz);
	void (*buffer_destroy)(void *ctx, struct belt_buffer *b);
	int (*buffer_write)(void *ctx, struct belt_buffer *b, uint64_t offset,
			    const void *src, uint64_t size, char *err,
			    size_t errsz);
	int (*buffer_read)(void *ctx, struct belt_buffer *b, uint64_t offset,
			   void *dst, uint64_t size, char *err, size_t errsz);

	/* The kernel for op/variant/weight type, or NULL if none. */
	const struct belt_kernel *(*kernel_find)(void *ctx, const char *op,
						 const char *variant, int wtype);

	/* Prepare a built table once (resolve bindings, record commands);
	 * release what prepare made. */
	int (*table_prepare)(void *ctx, struct belt_table *t, char *err,
			     size_t errsz);
	void (*table_release)(void *ctx, struct belt_table *t);

	/* Run the forward pass for positions pos .. pos + n - 1 in order
	 * (one-row table), or one pass over n rows (batched table),
	 * returning when the results are visible to buffer_read. Must not
	 * allocate. */
	int (*table_run)(void *ctx, struct belt_table *t, uint32_t pos,
			 uint32_t n, uint32_t flags, char *err, size_t errsz);

	/* Describe the devices options.device can pick, without create(): one
	 * line each, "INDEX: name, details", the one a negative device picks
	 * ending in " (default)", into buf (NUL-terminated, cut to bufsz; buf
	 * may be NULL if bufsz is 0). Returns the number of devices, or -1
	 * with a message. May be NULL: one device. */
	int (*list_devices)(char *buf, size_t bufsz, char *err, size_t errsz);

	/* ABI 3; may be NULL. Bytes the device can still allocate (an
	 * estimate: free memory, or the device-local heap less what is in
	 * use), so that the core refuses a session that cannot fit before it
	 * allocates anything. */
	int (*memory_available)(void *ctx, uint64_t *bytes, char *err, size_t errsz);

	/* ABI 5; may be NULL (the core then calls gate_fn before each one-
	 * position table_run). Positions pos .. pos + n - 1 of a one-row table
	 * with t->gate set, in order, the host between them: gate_fn(ud, i)
	 * is called on this thread once the results of the positions before
	 * pos + i are visible to buffer_read, while the commands of position
	 * pos + i before t->gate may already run; those from t->gate on wait
	 * until it returns (they see what it wrote to BELT_BUFFER_IO buffers
	 * with buffer_write, the one backend call it may make). It returns 0
	 * to let position pos + i go on; BELT_GATE_LAST to let it run as the
	 * last; BELT_GATE_STOP to stop before it: positions pos + i on are
	 * then not run, or run to no purpose (their results and cache
	 * entries undefined). Positions after one that picks an id of t->eog
	 * may be skipped likewise (as with BELT_RUN_STOP_AT_EOG). Returns the
	 * number of positions run, each finished, or -1 with a message. Must
	 * not allocate. */
	int (*table_run_gated)(void *ctx, struct belt_table *t, uint32_t pos, uint32_t n,
			       int (*gate_fn)(void *ud, uint32_t i), void *ud, char *err,
			       size_t errsz);

	/* ABI 7; may be NULL. Copy regions[0..n) on the device, in order
	 * (each sees what the ones before it wrote), after every table_run
	 * before the call and before any after it; returns when done. A
	 * region's source and destination must not overlap. Must not
	 * allocate. (The core moves a tree pass's accepted cache entries to
	 * their positions with it.) */
	int (*buffer_copy)(void *ctx, const struct belt_copy *regions, uint32_t n, char *err,
			   size_t errsz);
};

#endif
