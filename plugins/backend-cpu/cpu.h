/* plugins/backend-cpu/cpu.h: the CPU backend's internal interfaces.
 *
 * plugin.c     the module's one export, belt_plugin_entry
 * backend.c    ops table, buffers, table prepare/run
 * pool.c       persistent worker threads, chunk claiming between them
 * kernels.c    the kernel table and each op
 * gemm.c       matrix-matrix products for batched tables: weight tiles
 *              dequantized once, then blocked F32 products (AVX2 or C)
 * vec.c        portable routines (the reference path, float math)
 * vec_avx2.c   AVX2/FMA/F16C routines (int8 activations for quantized
 *              weights, as ggml), chosen at create() when the CPU has them
 * vec_avx512.c AVX-512 F/BW/VL/VNNI routines, likewise
 *
 * Nothing here is exported from the module: only belt_plugin_entry is. */
#ifndef BELT_CPU_H
#define BELT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "belt/arch.h"
#include "belt/backend.h"
#include "belt/ops.h"

#define CPU_ALIGN 64
#define CPU_QK 32   /* block length of Q8_0/Q4_0 and of the quantized x */
#define CPU_QK_K 256 /* super-block length of the K-quants */

/* ggml's K-quant super-blocks (types.h has the 32-blocks). Q4_K: 8
 * sub-blocks of 32, w = d * sc * q - dmin * m with 6-bit sc, m packed in
 * scales[12]. Q6_K: 16 sub-blocks of 16, w = d * scales[i] * (q - 32),
 * q's low 4 bits in ql, high 2 in qh. */
struct cpu_block_q4_k {
	uint16_t d, dmin;
	uint8_t scales[12];
	uint8_t qs[CPU_QK_K / 2];
};

struct cpu_block_q6_k {
	uint8_t ql[CPU_QK_K / 2];
	uint8_t qh[CPU_QK_K / 4];
	int8_t scales[CPU_QK_K / 16];
	uint16_t d;
};

/* The other ggml blocks (doc/ops.md has each one's formula). Blocks of
 * 32: Q4_1 w = d * q + m; Q5_0 w = d * (q - 16), Q5_1 w = d * q + m, q's
 * 5th bit j in the 32-bit qh; IQ4_NL w = d * kvalues[q]. */
struct cpu_block_q4_1 {
	uint16_t d, m;
	uint8_t qs[CPU_QK / 2];
};

struct cpu_block_q5_0 {
	uint16_t d;
	uint8_t qh[4];
	uint8_t qs[CPU_QK / 2];
};

struct cpu_block_q5_1 {
	uint16_t d, m;
	uint8_t qh[4];
	uint8_t qs[CPU_QK / 2];
};

struct cpu_block_iq4_nl {
	uint16_t d;
	uint8_t qs[CPU_QK / 2];
};

/* Super-blocks of 256. Q2_K: 16 groups of 16 with 4-bit scale and min,
 * w = d * sc * q - dmin * m, 2-bit q. Q3_K: 16 groups of 16, w = d *
 * (s - 32) * q, s 6 bits packed in scales[12], q = 2 low bits minus 4
 * where the hmask bit is clear. Q5_K: Q4_K with a 5th bit in qh. IQ4_XS:
 * 8 sub-blocks of 32, w = d * (ls - 32) * kvalues[q], 6-bit ls. */
struct cpu_block_q2_k {
	uint8_t scales[CPU_QK_K / 16];
	uint8_t qs[CPU_QK_K / 4];
	uint16_t d, dmin;
};

struct cpu_block_q3_k {
	uint8_t hmask[CPU_QK_K / 8];
	uint8_t qs[CPU_QK_K / 4];
	uint8_t scales[12];
	uint16_t d;
};

struct cpu_block_q5_k {
	uint16_t d, dmin;
	uint8_t scales[12];
	uint8_t qh[CPU_QK_K / 8];
	uint8_t qs[CPU_QK_K / 2];
};

struct cpu_block_iq4_xs {
	uint16_t d, scales_h;
	uint8_t scales_l[CPU_QK_K / 64];
	uint8_t qs[CPU_QK_K / 2];
};

_Static_assert(sizeof(struct cpu_block_q4_k) == 144, "q4_k block");
_Static_assert(sizeof(struct cpu_block_q6_k) == 210, "q6_k block");
_Static_assert(sizeof(struct cpu_block_q4_1) == 20, "q4_1 block");
_Static_assert(sizeof(struct cpu_block_q5_0) == 22, "q5_0 block");
_Static_assert(sizeof(struct cpu_block_q5_1) == 24, "q5_1 block");
_Static_assert(sizeof(struct cpu_block_iq4_nl) == 18, "iq4_nl block");
_Static_assert(sizeof(struct cpu_block_q2_k) == 84, "q2_k block");
_Static_assert(sizeof(struct cpu_block_q3_k) == 110, "q3_k block");
_Static_assert(sizeof(struct cpu_block_q5_k) == 176, "q5_k block");
_Static_assert(sizeof(struct cpu_block_iq4_xs) == 136, "iq4_xs block");

/* IQ4_NL's and IQ4_XS's non-linear 4-bit values (vec.c). */
extern const int8_t cpu_iq4_values[16];

struct belt_buffer {
	void *data;
	uint64_t size;
	bool owned; /* data is ours to free (buffer_create), not wrapped */
	bool mapped; /* owned data from mmap (large buffers) */
};

/* Weight types with a matvec/embed kernel, as dense indices. */
enum cpu_wtype {
	CPU_W_F32,
	CPU_W_F16,
	CPU_W_BF16,
	CPU_W_Q8_0,
	CPU_W_Q4_0,
	CPU_W_Q4_K,
	CPU_W_Q6_K,
	CPU_W_Q4_1,
	CPU_W_Q5_0,
	CPU_W_Q5_1,
	CPU_W_IQ4_NL,
	CPU_W_Q2_K,
	CPU_W_Q3_K,
	CPU_W_Q5_K,
	CPU_W_IQ4_XS,
	CPU_W_COUNT
};

static inline bool cpu_w_quantized(enum cpu_wtype w)
{
	return w >= CPU_W_Q8_0;
}

/* y[r] = W[r] . x for rows r0 <= r < r1; W rows are row_bytes apart. x is
 * floats, or for quantized weights the output of quantize_x when the ISA
 * sets it. */
typedef void (*cpu_rows_fn)(const void *w, size_t row_bytes, const void *x,
			    float *y, int64_t r0, int64_t r1, int k);
/* Quantize k floats (k % 32 == 0) into the activation layout the quantized
 * rows of every ISA read (see cpu_xq_*). */
typedef void (*cpu_quant_fn)(const float *x, void *xq, int k);
/* Index of the largest of n floats, the lowest on ties. */
typedef int64_t (*cpu_argmax_fn)(const float *x, int64_t n);
/* One attention head over n_kv cached positions: att[t] = softmax_t(scale
 * * q . k_t), out = sum_t att[t] v_t; k_t = kc + slot(t) * stride
 * (floats), v_t likewise, slot(t) = t, or tail[t - base] for t >= base
 * where tail is not NULL (a tree row's ancestors, in slots of their own:
 * the same sums over other addresses). */
typedef void (*cpu_attend_fn)(const float *q, const float *kc,
			      const float *vc, size_t stride, int64_t n_kv,
			      int head_dim, float scale, float *att,
			      float *out, int64_t base, const uint32_t *tail);
/* The same over caches of halves (stride in halves). */
typedef void (*cpu_attend_f16_fn)(const float *q, const uint16_t *kc, const uint16_t *vc,
				  size_t stride, int64_t n_kv, int head_dim, float scale,
				  float *att, float *out, int64_t base, const uint32_t *tail);
/* slot(t) of the attend functions, whose parameters base and tail it reads */
#define CPU_ATT_SLOT(t) ((size_t)(tail && (t) >= base ? tail[(t) - base] : (uint64_t)(t)))
/* out[i] = g[i] / (1 + exp(-g[i])) * u[i] for i < n; out may alias g. */
typedef void (*cpu_silu_mul_fn)(const float *g, const float *u, float *out,
				int64_t n);

/* Quantized x of k elements, nb = k/32 blocks of 32: k int8 q (x ~ d * q
 * per block), nb float d, nb pairs of int32 sums of q over each half
 * block, then nb groups of 8 int32 {-8 * sum of the block's q, 0 x 7}
 * (where AVX-512's Q4_0 dot product starts; Q5_0's and the IQ4 types' at
 * 2 and 16 times that). */
static inline size_t cpu_xq_bytes(int k)
{
	return (size_t)k + (size_t)(k / CPU_QK) * (4 + 8 + 32);
}

static inline float *cpu_xq_d(const void *xq, int k)
{
	return (float *)((char *)xq + k);
}

static inline int32_t *cpu_xq_sums(const void *xq, int k)
{
	return (int32_t *)(cpu_xq_d(xq, k) + k / CPU_QK);
}

static inline int32_t *cpu_xq_corr(const void *xq, int k)
{
	return cpu_xq_sums(xq, k) + 2 * (k / CPU_QK);
}

/* y[t * y_stride + r] (+)= sum_j wt[j * 16 + r] * x[t * x_stride + j] for
 * t < n_t (at most 6), r < 16, j < kc: one block of a weight tile stored
 * k-major in 16 columns; add: accumulate onto y instead of storing. */
typedef void (*cpu_gemm_fn)(const float *wt, int kc, const float *x,
			    size_t x_stride, int n_t, float *y,
			    size_t y_stride, bool add);
/* The int8 matrix product of weights whose blocks of qk (32, or 16) values
 * are a float scale times int8, plus for some a float min
 * (cpu_matmul_int8; gemm.c packs them): y[t * y_stride + r] = sum over
 * blocks b < nb of dw[r][b] * dx[t][b] * (sum over the block of q_w *
 * q_x) + mw[r][b] * sx[t][b], for t < n_t (at most CPU_GEMM_I8_NT) and r <
 * n_r (at most 32): the integer dot products of decode's int8 path. wp:
 * two groups of 16 rows, each [nb][qk/4][16 rows][4] int8 (group 1 at wp +
 * nb * 16 * qk); ws: per group and block 16 float dw, then 16 int32 -128 *
 * sum of the row's q (group 1 at ws + nb * 32); wm: NULL (no mins) or per
 * group and block the 16 rows' mw (group 1 at wm + nb * 16); xu: each
 * token's q_x + 128 as bytes, xu_stride apart; dx: the scale of x's block
 * of 32 holding each block, sx: that times the block's sum of q_x, both
 * dx_stride apart. */
typedef void (*cpu_gemm_i8_fn)(const int8_t *wp, const float *ws, const float *wm,
			       int nb, int qk, const uint8_t *xu, size_t xu_stride,
			       const float *dx, const float *sx, size_t dx_stride,
			       int n_t, float *y, size_t y_stride, int n_r);
#define CPU_GEMM_I8_NT 4  /* tokens per call */
#define CPU_GEMM_I8_NR 32 /* weight rows per call */
/* out[i] = the fp16 h[i] as a float, i < n. */
typedef void (*cpu_f16_fn)(const uint16_t *h, float *out, int n);
/* x[i] = e^(x[i] - m) for i < n; returns their sum. */
typedef float (*cpu_exp_sum_fn)(float *x, int64_t n, float m);
#define CPU_GEMM_NT 6  /* tokens per block */
#define CPU_GEMM_NR 16 /* weight rows per block */
/* The portable block product (gemm.c). */
void cpu_gemm_block_generic(const float *wt, int kc, const float *x,
			    size_t x_stride, int n_t, float *y, size_t y_stride,
			    bool add);

/* One instruction set's routines. rows[] for quantized types reads
 * quantized x when quantize_x is set, floats otherwise. A NULL entry is
 * taken from the next set down (avx512 -> avx2 -> generic). */
struct cpu_isa {
	const char *name;
	cpu_rows_fn rows[CPU_W_COUNT];
	cpu_quant_fn quantize_x;
	cpu_argmax_fn argmax;
	cpu_attend_fn attend;
	cpu_attend_f16_fn attend_f16;
	cpu_silu_mul_fn silu_mul;
	cpu_gemm_fn gemm;
	cpu_gemm_i8_fn gemm_i8; /* NULL: quantized products in F32 */
	cpu_exp_sum_fn exp_sum;
	cpu_f16_fn f16;
};

extern const struct cpu_isa cpu_isa_generic;
/* NULL when the compiler cannot build them. */
extern const struct cpu_isa *const cpu_isa_avx2;
extern const struct cpu_isa *const cpu_isa_avx512;

struct cpu_pool;

/* A kernel's implementation: kernel.impl points at one. */
struct cpu_op;
struct cpu_cmd;
struct cpu_prep;
struct cpu_worker;
struct cpu_pass;
typedef void (*cpu_run_fn)(const struct cpu_cmd *c, struct cpu_worker *w,
			   const struct cpu_pass *ps, int64_t i0, int64_t i1);
struct cpu_ctx;
struct cpu_op {
	enum cpu_wtype w; /* for matvec/embed */
	cpu_run_fn run;
	/* Check the bindings and params of cmd, fill c and pr. */
	int (*prepare)(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		       struct cpu_cmd *c, struct cpu_prep *pr, char *err,
		       size_t errsz);
};

/* Architecture plugins' ops this context has made kernels for (ext.c). */
#define CPU_EXT_MAX 16

struct cpu_ctx {
	int n_threads;
	const struct cpu_isa *isa; /* &isa_merged */
	struct cpu_isa isa_merged;
	struct cpu_pool *pool; /* NULL with one thread */
	const struct belt_arch_op *ext[CPU_EXT_MAX];
	struct belt_kernel ext_kernel[CPU_EXT_MAX];
	struct cpu_op ext_op[CPU_EXT_MAX];
	unsigned n_ext;
};

/* The kernel of an architecture plugin's op (belt/arch.h) for this
 * context, made on first use; NULL when no plugin has op (or variant is
 * not the default). Whether k is one of them. (ext.c) */
const struct belt_kernel *cpu_ext_kernel(struct cpu_ctx *ctx, const char *op, const char *variant);
bool cpu_ext_owns(const struct cpu_ctx *ctx, const struct belt_kernel *k);

/* What a thread has while it walks a run. seq numbers the current
 * command's first chunk in the run (unique per command and position),
 * prev_seq the previous command's; xq_seq says for which command this
 * thread's scratch holds quantized x. */
struct cpu_worker {
	int ith, nth;
	void *scratch; /* this thread's own scratch (quantized x) */
	uint64_t seq, prev_seq, xq_seq;
};

/* One pass of a command: the token rows it covers and where they sit.
 * A one-row table runs a pass per position (pos, row 0); a batched table
 * runs one pass over rows [row0, row0 + n_rows) at pos + row (pos +
 * depth[row] under a tree). */
struct cpu_pass {
	uint32_t pos;
	uint32_t row0, n_rows;
	bool batched;
	const int32_t *parent;	/* tree runs: parent row per row, else NULL */
	const uint32_t *depth;	/* tree runs: depth per row, else NULL */
	/* runs of a table of sequences: each row's position and first cache
	 * slot (belt_table.seq_pos, seq_base), else NULL; the positions of a
	 * sequence (belt_table.seq_ctx) */
	const uint32_t *seq_pos, *seq_base;
	uint32_t seq_ctx;
};

/* The patch values of row r (belt_row_at) for command c in pass ps. */
void cpu_row_at(const struct cpu_cmd *c, const struct cpu_pass *ps,
		uint32_t r, struct belt_row_at *at);
/* Row r's first slot in c's caches: its sequence's part in a table of
 * sequences (c->kv_slots a part's slots there), else 0. */
uint32_t cpu_kv_first(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r);
/* The slot row r writes in c's caches (at: cpu_row_at's): its position,
 * or elsewhere its slot, mod the slots, in its part. */
uint32_t cpu_kv_slot(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
		     const struct belt_row_at *at);

/* A prepared command: the kernel's function, bindings resolved to
 * pointers, and what the kernel worked out once in prepare. run does
 * items [i0, i1) of the pass's work items: items_per_row per row of the
 * pass (rows, heads, elements), or, where items_per_row is 0, the len
 * items the command always has (a matrix product's weight rows). */
struct cpu_cmd {
	cpu_run_fn run;
	void *p[BELT_MAX_BINDINGS];
	union belt_param prm[BELT_MAX_PARAMS];
	bool head;
	bool barrier;	 /* later commands need this one's results */
	bool reuse_xq;	 /* same x as the previous command, unchanged */
	int64_t len;	 /* work items of a pass over every row */
	int64_t chunk;	 /* items per chunk */
	uint32_t n_chunks;
	int64_t items_per_row; /* 0: len items whatever the rows */
	int64_t rows_per_item; /* items_per_row items per this many rows */
	enum belt_patch patch;
	uint32_t rows;	 /* rows of the table */
	int tile;	 /* matrix products: weight rows per tile */
	cpu_rows_fn rows_fn;
	cpu_quant_fn quant;
	cpu_gemm_fn gemm;
	cpu_gemm_i8_fn gemm_i8; /* matrix products of cpu_matmul_int8 types */
	cpu_exp_sum_fn exp_sum;
	cpu_f16_fn f16;
	cpu_argmax_fn argmax;
	cpu_attend_fn attend;
	cpu_attend_f16_fn attend_f16;
	cpu_silu_mul_fn silu_mul;
	size_t row_bytes;
	enum cpu_wtype w;  /* embed: weight type */
	int64_t n_rows;	   /* embed: vocabulary rows in W */
	const float *freq; /* rope_kv: rope_dim/2 inverse frequencies */
	int kv_type[2];	   /* the K and V caches' element types (belt_type) */
	uint32_t kv_slots; /* the slots both hold (cache_rows); in a table of
			    * sequences, a sequence's part of them */
	void *owned;	   /* freed by table_release */
	const struct belt_arch_op *ext; /* an architecture plugin's op (ext.c) */
	const struct belt_cmd *src;
};

/* The KV cache in its element type (kvcache.c): rows of n values, F32,
 * F16 or Q8_0 blocks. Store src as row slot; read elements [off, off +
 * len) of row slot as floats (the cache itself for F32, else decoded into
 * tmp; off and len whole blocks); one head of attention (bindings and
 * params of the attention ops) over n_kv positions of typed caches, from
 * slot first on, position t in slot first + slot(t) (cpu_attend_fn). */
void cpu_kv_put(int type, void *cache, size_t slot, size_t n, const float *src);
const float *cpu_kv_get(int type, const void *cache, size_t slot, size_t n, size_t off,
			size_t len, cpu_f16_fn f16, float *tmp);
void cpu_attend_kv(const struct cpu_cmd *c, const float *q, size_t kv_off, uint32_t first,
		   uint32_t n_kv, float *att, float *out, int64_t base, const uint32_t *tail);

/* What a kernel's prepare tells the backend about a command. */
struct cpu_prep {
	uint64_t max_pos;    /* positions pos < max_pos are in range */
	size_t scratch;	     /* per-thread scratch bytes */
	int64_t len;	     /* work items per row (default 1); with
			      * fixed_len, of the whole command */
	bool fixed_len;	     /* len does not scale with the rows */
	int64_t rows_per_item; /* len items per this many rows (default 1) */
	int64_t align;	     /* chunks are multiples of this many items */
	size_t item_bytes;   /* memory an item touches, to size chunks */
	int max_chunks;	     /* per thread; 0: the default */
};

extern const struct belt_kernel cpu_kernels[];
extern const size_t cpu_n_kernels;
extern const struct belt_backend_ops cpu_backend_ops;

/* Thread pool (pool.c). cpu_pool_run publishes fn and a copy of arg (at
 * most CPU_JOB_ARG bytes) to the workers and runs fn as thread 0; fn must
 * itself wait until the job's chunks are finished. */
#define CPU_JOB_ARG 56
typedef void (*cpu_job_fn)(const void *arg, int ith, int nth);
int cpu_pool_create(int n, struct cpu_pool **out, char *err, size_t errsz);
void cpu_pool_destroy(struct cpu_pool *p);
void cpu_pool_run(struct cpu_pool *p, cpu_job_fn fn, const void *arg,
		  size_t size);
/* Return once no worker is inside a job (before freeing what jobs read). */
void cpu_pool_quiesce(struct cpu_pool *p);
/* Chunk counters: the next unclaimed chunk (the first of a new run);
 * claim the next chunk if it is below end; mark one finished; wait until
 * the finished count reaches target. */
uint64_t cpu_pool_frontier(struct cpu_pool *p);
bool cpu_pool_claim(struct cpu_pool *p, uint64_t end, uint64_t *idx);
void cpu_pool_finish(struct cpu_pool *p, int ith);
void cpu_pool_wait(struct cpu_pool *p, uint64_t target);

/* Batched matvec (gemm.c): y rows of the pass = W x rows, weight rows
 * [r0, r1) per call, each tile of weight rows dequantized once; a pass
 * of at most CPU_FEW_ROWS rows runs decode's row kernel per row instead,
 * on tiles of CPU_FEW_TILE_BYTES of weights. */
#define CPU_FEW_ROWS 16
#define CPU_FEW_TILE_BYTES 16384
void cpu_run_matmul(const struct cpu_cmd *c, struct cpu_worker *w,
		    const struct cpu_pass *ps, int64_t r0, int64_t r1);
/* Weight rows per tile for rows of k elements, and the per-thread
 * scratch a product of such tiles needs. */
int cpu_matmul_tile(int k);
size_t cpu_matmul_scratch(int k, int tile, uint32_t rows, bool round_x);
/* Whether products of weights of type w run through gemm_i8. */
bool cpu_matmul_int8(enum cpu_wtype w);
/* Weight row `row` of c (of c->w's type) as floats: elements [j0, j1),
 * j0 and j1 whole blocks of the type (or k). */
void cpu_dequant_range(const struct cpu_cmd *c, int64_t row, int j0, int j1,
		       float *out);

/* Attention of a batched causal pass (attention.c): for a kv head and a
 * block of rows, every query head of the group at once, keys in blocks
 * through the gemm routine with an online softmax. cpu_attn_block says
 * whether the command can (head_dim a multiple of 16), and the rows per
 * item and the per-thread scratch. */
bool cpu_attn_block(const struct cpu_cmd *c, int64_t *rows_per_item, size_t *scratch);
void cpu_run_attn_block(const struct cpu_cmd *c, struct cpu_worker *w,
			const struct cpu_pass *ps, int64_t i0, int64_t i1);

/* Row r of the pass, head h, attended as one-token decode attends (a
 * batched pass's scores in w's scratch, n_ctx floats) (kernels.c). */
void cpu_attend_row_head(const struct cpu_cmd *c, struct cpu_worker *w, const struct cpu_pass *ps,
			 uint32_t r, int h);
/* One head h of row r of a tree pass (kernels.c): the cache before pos and
 * the row's ancestors; att holds n_ctx floats, tmp head_dim (keys and
 * values of a typed cache). */
void cpu_attend_tree_head(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
			  int h, float *att, float *tmp);

/* Dequantize one block (vec.c) to the floats ggml's dequantize_row_*
 * gives, bit for bit: the same operations in the same order, compiled
 * without FMA contraction (local.mk). */
void cpu_dequant_q4_k(const struct cpu_block_q4_k *b, float *out);
void cpu_dequant_q6_k(const struct cpu_block_q6_k *b, float *out);
void cpu_dequant_q4_1(const struct cpu_block_q4_1 *b, float *out);
void cpu_dequant_q5_0(const struct cpu_block_q5_0 *b, float *out);
void cpu_dequant_q5_1(const struct cpu_block_q5_1 *b, float *out);
void cpu_dequant_iq4_nl(const struct cpu_block_iq4_nl *b, float *out);
void cpu_dequant_q2_k(const struct cpu_block_q2_k *b, float *out);
void cpu_dequant_q3_k(const struct cpu_block_q3_k *b, float *out);
void cpu_dequant_q5_k(const struct cpu_block_q5_k *b, float *out);
void cpu_dequant_iq4_xs(const struct cpu_block_iq4_xs *b, float *out);

/* Q3_K's 16 scales s - 32 from its 12 packed bytes: low nibbles in bytes
 * 0-7, high bit pairs in 8-11, as ggml unpacks them (little-endian). */
static inline void cpu_q3_k_scales(const uint8_t *packed, int8_t *sc)
{
	uint32_t a[3], s[4];
	memcpy(a, packed, 12);
	s[0] = (a[0] & 0x0f0f0f0f) | ((a[2] & 0x03030303) << 4);
	s[1] = (a[1] & 0x0f0f0f0f) | (((a[2] >> 2) & 0x03030303) << 4);
	s[2] = ((a[0] >> 4) & 0x0f0f0f0f) | (((a[2] >> 4) & 0x03030303) << 4);
	s[3] = ((a[1] >> 4) & 0x0f0f0f0f) | (((a[2] >> 6) & 0x03030303) << 4);
	uint8_t b[16];
	memcpy(b, s, 16);
	for (int i = 0; i < 16; i++)
		sc[i] = (int8_t)(b[i] - 32);
}

/* Q4_K's and Q5_K's 8 six-bit scales (bytes 0-7 of u) and 8 mins (8-15)
 * from their 12 packed bytes, as ggml unpacks them (little-endian). */
static inline void cpu_k4_scales(const uint8_t *packed, uint32_t u[4])
{
	memcpy(u, packed, 12);
	u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
	uint32_t mins03 = u[1] & 0x3f3f3f3f;
	u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
	u[2] = mins03;
	u[0] &= 0x3f3f3f3f;
}

/* fp16/bf16 -> f32 without library calls, so loops vectorize. */
static inline float cpu_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint32_t cpu_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline float cpu_fp16(uint16_t h)
{
	/* exact for all inputs: normals by rebias and scale, subnormals
	 * through a magic-number subtraction (M. Dukhan's FP16 library) */
	uint32_t w = (uint32_t)h << 16;
	uint32_t sign = w & 0x80000000u;
	uint32_t two_w = w + w;
	float norm = cpu_bits_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
	float denorm = cpu_bits_f32((two_w >> 17) | (126u << 23)) - 0.5f;
	uint32_t r = two_w < (1u << 27) ? cpu_f32_bits(denorm)
					: cpu_f32_bits(norm);
	return cpu_bits_f32(sign | r);
}

static inline float cpu_bf16(uint16_t h)
{
	return cpu_bits_f32((uint32_t)h << 16);
}

#endif
