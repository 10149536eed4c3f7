/* The Vulkan kernels: one table entry per op and weight type (the same ops,
 * weight types and param schemas as the CPU backend), each with its shader,
 * the checks of a command's bindings against its params (as the CPU
 * backend's, so errors read the same) and its workgroup count: per row
 * (a z layer each in a batched table) but for a batched table's matvec
 * (matmul.c) and attention, which tile the rows along x. What a command
 * writes comes from the op's contract (belt_op_writes). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "belt/error.h"
#include "belt/ops.h"
#include "belt/types.h"
#include "vk.h"

/* Workgroup sizes and rows per workgroup: must match the shaders. */
#define WG_ELEM 128	 /* embed, silu_mul, add, silu: elements per workgroup */
#define MATVEC_ROWS VK_MATVEC_ROWS
#define ROPE_MAX_PAIRS 512
#define ATT_MAX_HEAD_DIM 512 /* shaders/attention.comp shared q */
#define ATT_SPLIT_CHUNK 256 /* split_kv: positions per chunk at least */
#define ATT_SPLITS 8	    /* and chunks per head at most */
/* shaders/attention.comp: vec4 loads of k in flight per thread, positions
 * of v per step (specialization constants 2 and 3) */
#define ATT_KLOADS 32
#define ATT_VLOADS 32
/* attention.comp's short runs: head_dim / 4 at most (SHORT_HD4) */
#define ATT_SHORT_HD4 32
/* shaders/attention_rows.comp: query rows per workgroup (BQ) by the
 * largest head_dim of its variant */
#define ATT_ROWS_HD 128
#define ATT_ROWS_BQ 16
#define ATT_ROWS_HD_256 256
#define ATT_ROWS_BQ_256 8
/* a table of sequences' attention on attention.comp (SEQS) where a
 * sequence has at most this many positions: its ATT_SH, the scores it
 * keeps in shared memory */
#define ATT_SEQ_MAX_POS 2048
#define ARGMAX_CHUNK 2048    /* shaders/argmax.comp CHUNK */
#define SAMPLE_WG 256	     /* shaders/sample_gumbel.comp WG */
#define THRESH_CHUNK 4096    /* shaders/sample_threshold.comp CHUNK */
#define THRESH_CAND 65536    /* shaders/sample_threshold.comp CMAX */

static const char *label(const struct belt_cmd *cmd)
{
	return cmd->label ? cmd->label : cmd->kernel->op;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint32_t ceil_div(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

/* Binding i must hold at least `bytes`. */
static int need(const struct belt_cmd *cmd, int i, const char *what,
		uint64_t bytes, char *err, size_t errsz)
{
	if (cmd->bind[i].size >= bytes)
		return 0;
	return belt_errf(err, errsz,
			 "%s: %s binding %d (%s) holds %" PRIu64
			 " bytes, needs %" PRIu64,
			 label(cmd), cmd->kernel->op, i, what,
			 cmd->bind[i].size, bytes);
}

/* Integer param i must be at least min. */
static int need_int(const struct belt_cmd *cmd, int i, const char *name,
		    int32_t min, char *err, size_t errsz)
{
	if (cmd->param[i].i >= min)
		return 0;
	return belt_errf(err, errsz, "%s: %s param %s is %d, must be >= %d",
			 label(cmd), cmd->kernel->op, name, cmd->param[i].i,
			 min);
}

/* W binding 0 must be of the kernel's type, rows whole blocks. */
static int weight_rows(const struct belt_cmd *cmd, int k, uint64_t *row_bytes,
		       struct vk_prep *pr, char *err, size_t errsz)
{
	const struct vk_op *op = cmd->kernel->impl;
	int t = op->wtype;
	if (cmd->bind[0].type != t)
		return belt_errf(err, errsz,
				 "%s: %s weight binding has type %s, the "
				 "kernel takes %s",
				 label(cmd), cmd->kernel->op,
				 belt_type_name(cmd->bind[0].type),
				 belt_type_name(t));
	*row_bytes = belt_type_row_bytes(t, (uint64_t)k);
	if (!*row_bytes)
		return belt_errf(err, errsz,
				 "%s: %s row length %d is not a multiple of "
				 "the %s block (%zu)",
				 label(cmd), cmd->kernel->op, k,
				 belt_type_name(t), belt_type_block(t));
	/* the shaders read weights as 16-bit words but for F32 */
	pr->esize[0] = t == BELT_TYPE_F32 ? 4 : 2;
	return 0;
}

/* ---- embed ---- */

static int prep_embed(const struct belt_cmd *cmd, struct vk_prep *pr,
		      char *err, size_t errsz)
{
	uint64_t rb;
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    weight_rows(cmd, cmd->param[0].i, &rb, pr, err, errsz))
		return -1;
	int n = cmd->param[0].i;
	uint64_t rows = cmd->bind[0].size / rb;
	if (cmd->bind[0].ne[1] > 0 && (uint64_t)cmd->bind[0].ne[1] < rows)
		rows = (uint64_t)cmd->bind[0].ne[1];
	if (need(cmd, 2, "out", (uint64_t)n * 4, err, errsz))
		return -1;
	pr->aux[0] = (uint32_t)min_u64(rows, INT32_MAX);
	pr->max_pos = cmd->bind[1].size / 4;
	pr->groups = ceil_div((uint64_t)n, WG_ELEM);
	return 0;
}

/* ---- rmsnorm, silu_mul, add ---- */

static int prep_n3(const struct belt_cmd *cmd, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz))
		return -1;
	uint64_t b = (uint64_t)cmd->param[0].i * 4;
	static const char *const names[3] = {"in 0", "in 1", "out"};
	for (int i = 0; i < 3; i++)
		if (need(cmd, i, names[i], b, err, errsz))
			return -1;
	return 0;
}

static int prep_rmsnorm(const struct belt_cmd *cmd, struct vk_prep *pr,
			char *err, size_t errsz)
{
	if (prep_n3(cmd, err, errsz))
		return -1;
	pr->groups = 1;
	return 0;
}

static int prep_elementwise(const struct belt_cmd *cmd, struct vk_prep *pr,
			    char *err, size_t errsz)
{
	if (prep_n3(cmd, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, WG_ELEM);
	return 0;
}

/* ---- matvec ---- */

static int prep_matvec(const struct belt_cmd *cmd, struct vk_prep *pr,
		       char *err, size_t errsz)
{
	uint64_t rb;
	if (need_int(cmd, 0, "k", 1, err, errsz) ||
	    need_int(cmd, 1, "m", 1, err, errsz) ||
	    weight_rows(cmd, cmd->param[0].i, &rb, pr, err, errsz))
		return -1;
	int k = cmd->param[0].i, m = cmd->param[1].i;
	if (need(cmd, 0, "W", (uint64_t)m * rb, err, errsz) ||
	    need(cmd, 1, "x", (uint64_t)k * 4, err, errsz) ||
	    need(cmd, 2, "y", (uint64_t)m * 4, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)m, MATVEC_ROWS);
	if (pr->rows > 1)
		return vk_matmul_prep(cmd, pr, err, errsz);
	return 0;
}

/* ---- the KV cache ---- */

/* The caches at bindings i, i + 1 (K, V), rows of n values, as
 * shaders/kv.glsl reads and writes them: their types as specialization
 * constants 0 and 1, bound in 16-bit words, at offsets its loads can
 * take (vec4: four values at a time, 16 bytes aligned for F32 and 8 for
 * F16); the slots both hold (kv_slots: position p in slot p mod slots, a
 * sliding-window layer's ring where fewer than the context's), which
 * bound the positions of an op reading them whole (max_pos). */
static int kv_caches(const struct belt_cmd *cmd, int i, uint64_t n, bool vec4,
		     struct vk_prep *pr, char *err, size_t errsz)
{
	if (cmd->n_param > VK_PC_KV_SLOTS)
		return belt_errf(err, errsz, "%s: %s takes %u params: none of its push constants is "
				 "left for its caches' slots", label(cmd), cmd->kernel->op, cmd->n_param);
	for (int j = 0; j < 2; j++) {
		const struct belt_binding *b = &cmd->bind[i + j];
		uint32_t code = b->type == BELT_TYPE_F32 ? 0 : b->type == BELT_TYPE_F16 ? 1 : 2;
		uint64_t al = code == 2 ? 2 : code == 1 ? (vec4 ? 8 : 2) : (vec4 ? 16 : 4);
		if (b->offset % al)
			return belt_errf(err, errsz,
					 "%s: %s binding %d (a %s cache) at offset %" PRIu64
					 ": expected a multiple of %" PRIu64 " bytes",
					 label(cmd), cmd->kernel->op, i + j, belt_type_name(b->type),
					 b->offset, al);
		pr->esize[i + j] = 2;
		pr->spec[j] = code;
		/* belt_cmd_check saw a cache type holding a row at least */
		uint64_t slots = b->size / belt_type_row_bytes(b->type, n);
		if (j == 0 || slots < pr->kv_slots)
			pr->kv_slots = slots < UINT32_MAX ? (uint32_t)slots : UINT32_MAX;
		if (belt_op_contract(cmd->kernel->op)->bind[i + j].access & BELT_ACCESS_R)
			pr->max_pos = min_u64(pr->max_pos, slots);
	}
	pr->n_spec = 2;
	return 0;
}

/* attention.comp's loads in flight (specialization constants 2, 3, after
 * kv_caches' two) and its path for short runs (4). */
static void att_loads(struct vk_prep *pr, int head_dim)
{
	pr->spec[2] = pr->att_kloads ? pr->att_kloads : ATT_KLOADS;
	pr->spec[3] = pr->att_vloads ? pr->att_vloads : ATT_VLOADS;
	pr->spec[4] = pr->att_short;
	/* the short run's k vec4s a thread holds: head_dim's (at most
	 * ATT_SHORT_HD4; a larger head_dim takes the loops) */
	pr->spec[5] = head_dim / 4 < ATT_SHORT_HD4 ? (uint32_t)head_dim / 4 : ATT_SHORT_HD4;
	pr->n_spec = 6;
}

/* ---- rope_kv ---- */

#define ROPE_WG 128 /* local size of shaders/rope_kv.comp */

static int prep_heads(const struct belt_cmd *cmd, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n_head", 1, err, errsz) ||
	    need_int(cmd, 1, "n_head_kv", 1, err, errsz) ||
	    need_int(cmd, 2, "head_dim", 1, err, errsz))
		return -1;
	if (cmd->param[0].i % cmd->param[1].i)
		return belt_errf(err, errsz,
				 "%s: %s n_head %d is not a multiple of "
				 "n_head_kv %d",
				 label(cmd), cmd->kernel->op, cmd->param[0].i,
				 cmd->param[1].i);
	return 0;
}

static int prep_rope_kv(const struct belt_cmd *cmd, struct vk_prep *pr,
			char *err, size_t errsz)
{
	if (prep_heads(cmd, err, errsz) ||
	    need_int(cmd, 3, "rope_dim", 0, err, errsz))
		return -1;
	int head_dim = cmd->param[2].i, rope_dim = cmd->param[3].i;
	float base = cmd->param[4].f;
	if (rope_dim % 2 || rope_dim > head_dim || rope_dim / 2 > ROPE_MAX_PAIRS)
		return belt_errf(err, errsz,
				 "%s: rope_kv rope_dim %d must be even and "
				 "at most head_dim %d (and %d)",
				 label(cmd), rope_dim, head_dim,
				 2 * ROPE_MAX_PAIRS);
	if (!(base > 0.0f))
		return belt_errf(err, errsz,
				 "%s: rope_kv base %g must be positive",
				 label(cmd), (double)base);
	uint64_t q_bytes = (uint64_t)cmd->param[0].i * head_dim * 4;
	uint64_t kv_bytes = (uint64_t)cmd->param[1].i * head_dim * 4;
	if (need(cmd, 0, "q", q_bytes, err, errsz) ||
	    need(cmd, 1, "k", kv_bytes, err, errsz) ||
	    need(cmd, 2, "v", kv_bytes, err, errsz) ||
	    kv_caches(cmd, 3, kv_bytes / 4, false, pr, err, errsz))
		return -1;
	pr->n_freq = (uint32_t)(rope_dim / 2);
	/* one thread per pair of each q and k head (shaders/rope_kv.comp) */
	uint64_t pairs = (uint64_t)(cmd->param[0].i + cmd->param[1].i) * ((head_dim + 1) / 2);
	pr->groups = (uint32_t)ceil_div(pairs, ROPE_WG);
	return 0;
}

/* The inverse frequencies exactly as the CPU backend computes them, so that
 * the angle pos * freq is the same float. */
static void fill_rope(const struct belt_cmd *cmd, float *out)
{
	int rope_dim = cmd->param[3].i;
	float base = cmd->param[4].f;
	for (int i = 0; i < rope_dim; i += 2)
		out[i / 2] = 1.0f / powf(base, (float)i / (float)rope_dim);
}

/* ---- rope, rope_ff, kv_store, bias_add, rmsnorm_heads ---- */

static int prep_rope(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n_head", 1, err, errsz) ||
	    need_int(cmd, 1, "head_dim", 1, err, errsz) ||
	    need_int(cmd, 2, "rope_dim", 0, err, errsz))
		return -1;
	int n_head = cmd->param[0].i, head_dim = cmd->param[1].i, rope_dim = cmd->param[2].i;
	int neox = cmd->param[4].i;
	float base = cmd->param[3].f, scale = cmd->param[5].f;
	if (rope_dim % 2 || rope_dim > head_dim || rope_dim / 2 > ROPE_MAX_PAIRS)
		return belt_errf(err, errsz,
				 "%s: %s rope_dim %d must be even and at most head_dim %d (and %d)",
				 label(cmd), cmd->kernel->op, rope_dim, head_dim, 2 * ROPE_MAX_PAIRS);
	if (!(base > 0.0f) || !(scale > 0.0f) || (neox != 0 && neox != 1))
		return belt_errf(err, errsz,
				 "%s: %s base %g and freq_scale %g must be positive, neox 0 or 1 (is %d)",
				 label(cmd), cmd->kernel->op, (double)base, (double)scale, neox);
	if (need(cmd, 0, "x", (uint64_t)n_head * head_dim * 4, err, errsz))
		return -1;
	if (cmd->n_bind > 1 && (cmd->bind[1].type != BELT_TYPE_F32 ||
				cmd->bind[1].size < (uint64_t)rope_dim / 2 * 4))
		return belt_errf(err, errsz, "%s: rope_ff factors: expected %d F32 values",
				 label(cmd), rope_dim / 2);
	pr->n_freq = (uint32_t)(rope_dim / 2);
	/* one thread per rotated pair of each head (shaders/rope.comp) */
	pr->groups = ceil_div((uint64_t)n_head * (uint64_t)(rope_dim / 2), ROPE_WG);
	return 0;
}

/* As the CPU backend's rope: base^(-2i/rope_dim) times freq_scale (the
 * shader divides by rope_ff's factors). */
static void fill_rope_scaled(const struct belt_cmd *cmd, float *out)
{
	int rope_dim = cmd->param[2].i;
	float base = cmd->param[3].f, scale = cmd->param[5].f;
	for (int i = 0; i < rope_dim; i += 2)
		out[i / 2] = 1.0f / powf(base, (float)i / (float)rope_dim) * scale;
}

static int prep_kv_store(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			 size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz))
		return -1;
	uint64_t b = (uint64_t)cmd->param[0].i * 4;
	if (need(cmd, 0, "k", b, err, errsz) || need(cmd, 1, "v", b, err, errsz) ||
	    kv_caches(cmd, 2, b / 4, false, pr, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, WG_ELEM);
	return 0;
}

/* bias_add (n) and rmsnorm_heads (n_head, head_dim): x and an F32 vector */
static int prep_vec_weight(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			   size_t errsz)
{
	bool heads = cmd->n_param == 3;
	if (need_int(cmd, 0, heads ? "n_head" : "n", 1, err, errsz) ||
	    (heads && need_int(cmd, 1, "head_dim", 1, err, errsz)))
		return -1;
	uint64_t n = (uint64_t)cmd->param[heads ? 1 : 0].i;
	uint64_t row = heads ? n * (uint64_t)cmd->param[0].i : n;
	if (need(cmd, 0, "x", row * 4, err, errsz))
		return -1;
	if (cmd->bind[1].type != BELT_TYPE_F32 || cmd->bind[1].size < n * 4)
		return belt_errf(err, errsz, "%s: %s weight: expected %" PRIu64 " F32 values",
				 label(cmd), cmd->kernel->op, n);
	/* rmsnorm_heads: a workgroup per head; bias_add: per WG_ELEM values */
	pr->groups = heads ? (uint32_t)cmd->param[0].i : ceil_div(n, WG_ELEM);
	return 0;
}

/* A batched table's attention on the matrix units
 * (shaders/attention_rows_cm.comp; ext 1: attention_ext's softcap and
 * window) where it applies: F16 caches (kv_caches done) at 16-byte
 * offsets, head_dim 64 or 128, groups of query heads that divide 64;
 * whether it was chosen. */
static bool att_rows_cm(const struct belt_cmd *cmd, struct vk_prep *pr, uint32_t ext)
{
	int head_dim = cmd->param[2].i;
	uint32_t r = (uint32_t)(cmd->param[0].i / cmd->param[1].i);
	if (!pr->att_coopmat || pr->subgroup != 32 || pr->spec[0] != 1 || pr->spec[1] != 1 ||
	    (head_dim != 64 && head_dim != 128) || 64 % r != 0 || cmd->bind[1].offset % 16 ||
	    cmd->bind[2].offset % 16)
		return false;
	pr->shader = VK_SH_ATT_ROWS_CM;
	pr->rows_dim = VK_ROWS_X;
	pr->rows_tile = 64 / r;
	pr->groups = (uint32_t)cmd->param[1].i;
	pr->spec[2] = (uint32_t)head_dim;
	pr->spec[3] = r;
	pr->spec[4] = ext;
	pr->n_spec = 5;
	return true;
}

/* ---- scale (x and a float), attention_ext ---- */

static int prep_x_float(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "x", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	float v = cmd->param[1].f;
	if (!isfinite(v))
		return belt_errf(err, errsz, "%s: %s %g: expected a finite number", label(cmd),
				 cmd->kernel->op, (double)v);
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, WG_ELEM);
	return 0;
}

#define ATT_EXT_HD 256 /* shaders/attention_ext.comp HDMAX */

static int prep_attention_ext(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			      size_t errsz)
{
	if (prep_heads(cmd, err, errsz) || need_int(cmd, 3, "n_ctx", 1, err, errsz) ||
	    need_int(cmd, 6, "window", 0, err, errsz))
		return -1;
	int n_head = cmd->param[0].i, head_dim = cmd->param[2].i;
	float cap = cmd->param[5].f;
	if (head_dim > ATT_EXT_HD || !(cap >= 0.0f) || !isfinite(cap))
		return belt_errf(err, errsz,
				 "%s: attention_ext head_dim %d (this backend takes up to %d) and "
				 "softcap %g (at least 0)",
				 label(cmd), head_dim, ATT_EXT_HD, (double)cap);
	uint64_t q_bytes = (uint64_t)n_head * head_dim * 4;
	uint64_t kv_elems = (uint64_t)cmd->param[1].i * head_dim;
	if (need(cmd, 0, "q", q_bytes, err, errsz) ||
	    need(cmd, 3, "out", q_bytes, err, errsz))
		return -1;
	pr->groups = (uint32_t)n_head; /* a workgroup per head, per row */
	/* a one-row table's: attention.comp's default variant, which takes
	 * the softcap and window too (aux0 1), where its vec4 reads fit */
	bool vec4 = cmd->bind[0].offset % 16 == 0 && cmd->bind[3].offset % 16 == 0;
	for (int i = 1; i < 3; i++)
		vec4 = vec4 && cmd->bind[i].offset %
					(cmd->bind[i].type == BELT_TYPE_F32 ? 16 : 8) == 0;
	bool one_row = pr->rows == 1 && vec4 && head_dim % 4 == 0 &&
		       head_dim <= ATT_MAX_HEAD_DIM && cmd->n_bind > 4 &&
		       cmd->bind[4].size >= (uint64_t)n_head * cmd->param[3].i * 4;
	pr->max_pos = (uint64_t)cmd->param[3].i;
	if (kv_caches(cmd, 1, kv_elems, one_row, pr, err, errsz))
		return -1;
	/* within a window the caches may be rings (kv_caches lowered
	 * max_pos to their slots): positions up to the context */
	if (cmd->param[6].i > 0)
		pr->max_pos = (uint64_t)cmd->param[3].i;
	if (one_row) {
		/* the build that reads a row's positions as two runs of
		 * slots (rings), for every layer's: measured on the H200
		 * (gemma2 1B Q4_0 tg128), it only for the rings' layers and
		 * the plain build for the others ran 1,049 tokens/s against
		 * 1,081 with it for all of them (one pipeline) */
		pr->shader = VK_SH_ATTENTION_RING;
		pr->aux[0] = 1;
		pr->esize[0] = pr->esize[3] = 16;
		att_loads(pr, head_dim);
		return 0;
	}
	/* a batched table's, on the matrix units where they apply (q and
	 * out read as vec4s there) */
	if (pr->rows > 1 && !pr->seqs && cmd->bind[0].offset % 16 == 0 &&
	    cmd->bind[3].offset % 16 == 0 && att_rows_cm(cmd, pr, 1))
		pr->esize[0] = pr->esize[3] = 16;
	return 0;
}

/* ---- mixtures of experts ---- */

static int prep_moe_route(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n_expert", 1, err, errsz) || need_int(cmd, 1, "n_used", 1, err, errsz))
		return -1;
	if (cmd->param[0].i > 256 || cmd->param[1].i > cmd->param[0].i || cmd->param[1].i > 32)
		return belt_errf(err, errsz,
				 "%s: moe_route n_expert %d (at most 256) and n_used %d (at most "
				 "n_expert and 32)", label(cmd), cmd->param[0].i, cmd->param[1].i);
	pr->groups = 1;
	/* a batched pass's entries grouped by expert, where its products
	 * run so (moe.c, shaders/moe_groups.glsl): the counter, counts,
	 * offsets, entries */
	if (pr->rows > 1)
		pr->work_words = 1u + 2u * (uint32_t)cmd->param[0].i +
				 pr->rows * (uint32_t)cmd->param[1].i;
	return 0;
}

/* moe_matvec (aux[1] 0) and moe_matvec_slots (1): matvec.comp with MOE */
static int prep_moe_matvec(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			   size_t errsz)
{
	uint64_t rb;
	if (need_int(cmd, 0, "k", 1, err, errsz) || need_int(cmd, 1, "m", 1, err, errsz) ||
	    need_int(cmd, 2, "n_expert", 1, err, errsz) || need_int(cmd, 3, "n_used", 1, err, errsz) ||
	    weight_rows(cmd, cmd->param[0].i, &rb, pr, err, errsz))
		return -1;
	uint64_t m = (uint64_t)cmd->param[1].i;
	if (need(cmd, 0, "W", m * (uint64_t)cmd->param[2].i * rb, err, errsz))
		return -1;
	pr->aux[1] = !strcmp(cmd->kernel->op, "moe_matvec_slots");
	/* matvec.comp MOE's rows per workgroup: a specialization */
	pr->spec[0] = pr->moe_rows;
	pr->n_spec = 1;
	pr->groups = ceil_div(m, pr->moe_rows) * (uint32_t)cmd->param[3].i;
	return 0;
}

static int prep_moe_combine(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			    size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz) || need_int(cmd, 1, "n_used", 1, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, WG_ELEM);
	return 0;
}

/* ---- silu, top_k: what Medusa draft heads need ---- */

static int prep_silu(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "x", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, WG_ELEM);
	return 0;
}

/* A workgroup per row, whatever n (shaders/top_k.comp; n and k were
 * checked by belt_cmd_check) */
static int prep_top_k(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	(void)cmd, (void)err, (void)errsz;
	pr->groups = 1;
	return 0;
}

/* ---- attention ---- */

static int prep_attention(const struct belt_cmd *cmd, struct vk_prep *pr,
			  char *err, size_t errsz)
{
	if (prep_heads(cmd, err, errsz) ||
	    need_int(cmd, 3, "n_ctx", 1, err, errsz))
		return -1;
	int n_head = cmd->param[0].i, head_dim = cmd->param[2].i;
	if (head_dim > ATT_MAX_HEAD_DIM || head_dim % 4)
		return belt_errf(err, errsz,
				 "%s: attention head_dim %d: this backend "
				 "takes multiples of 4 up to %d",
				 label(cmd), head_dim, ATT_MAX_HEAD_DIM);
	/* q and out are read as vec4s, the caches four values at a time */
	pr->esize[0] = pr->esize[3] = 16;
	uint64_t n_ctx = (uint64_t)cmd->param[3].i;
	uint64_t q_bytes = (uint64_t)n_head * head_dim * 4;
	pr->max_pos = n_ctx;
	if (need(cmd, 0, "q", q_bytes, err, errsz) ||
	    kv_caches(cmd, 1, (uint64_t)cmd->param[1].i * head_dim, true, pr, err, errsz) ||
	    need(cmd, 3, "out", q_bytes, err, errsz) ||
	    need(cmd, 4, "att", (uint64_t)n_head * n_ctx * 4, err, errsz))
		return -1;
	att_loads(pr, head_dim);
	pr->groups = (uint32_t)n_head;
	if (pr->rows > 1) {
		/* blocks of query rows, every variant (the same result) */
		if (head_dim > ATT_ROWS_HD_256)
			return belt_errf(err, errsz,
					 "%s: attention head_dim %d: this backend "
					 "takes up to %d in batched tables",
					 label(cmd), head_dim, ATT_ROWS_HD_256);
		bool small = head_dim <= ATT_ROWS_HD;
		pr->shader = small ? VK_SH_ATT_ROWS : VK_SH_ATT_ROWS_256;
		pr->rows_dim = VK_ROWS_X;
		pr->rows_tile = small ? ATT_ROWS_BQ : ATT_ROWS_BQ_256;
		pr->n_spec = 2; /* the caches' types only */
		/* a table of sequences: a workgroup a row, each row its own
		 * sequence's entries (and not on the matrix units, whose
		 * tiles share them) */
		if (pr->seqs) {
			uint32_t bq = pr->rows_tile;
			pr->rows_tile = 1;
			/* each row as the one-row table's default variant
			 * attends (a workgroup per row and head), where a
			 * sequence's scores fit its shared memory */
			if (pr->att_seqs && pr->parts && n_ctx / pr->parts <= ATT_SEQ_MAX_POS) {
				pr->shader = VK_SH_ATTENTION_SEQ;
				att_loads(pr, head_dim);
				return 0;
			}
			/* a kv head's query heads as the block's rows where
			 * they fit (shaders/attention_rows.comp) */
			if ((uint32_t)(n_head / cmd->param[1].i) <= bq)
				pr->groups = (uint32_t)cmd->param[1].i;
			return 0;
		}
		att_rows_cm(cmd, pr, 0);
	}
	return 0;
}

/* Chunks per head (or kv head) of a split attention over n_ctx positions:
 * as many of chunk positions as there are, at most splits, at least
 * enough of cap positions (cap 0: no such bound), at least one. */
static uint64_t split_chunks(uint64_t n_ctx, uint64_t chunk, uint64_t splits, uint64_t cap)
{
	uint64_t chunks = ceil_div(n_ctx, chunk);
	if (chunks > splits)
		chunks = splits;
	if (cap && chunks < ceil_div(n_ctx, cap))
		chunks = ceil_div(n_ctx, cap);
	return chunks ? chunks : 1;
}

/* split_kv: a workgroup per head and chunk of positions, at most
 * pr->att_splits chunks per head of at least pr->att_chunk positions (the
 * shader sizes them from the token's positions); per (head, chunk) a
 * record of 4 + head_dim words, then a counter per head. */
static int prep_attention_split(const struct belt_cmd *cmd,
				struct vk_prep *pr, char *err, size_t errsz)
{
	if (prep_attention(cmd, pr, err, errsz))
		return -1;
	if (pr->rows > 1)
		return 0;
	uint64_t n_head = (uint64_t)cmd->param[0].i;
	uint64_t chunk = pr->att_chunk ? pr->att_chunk : ATT_SPLIT_CHUNK;
	/* as many chunks as the tokens it runs need (where a long-context
	 * kernel takes the others, the rest of the grid would only start
	 * and return: H200, 1B tg128, attention 155.5 -> 153.0 us a token) */
	uint64_t n_ctx = (uint64_t)cmd->param[3].i;
	if (pr->att_below && pr->att_below < n_ctx)
		n_ctx = pr->att_below;
	uint64_t chunks = split_chunks(n_ctx, chunk,
				       pr->att_splits ? pr->att_splits : ATT_SPLITS, 0);
	uint64_t words = n_head * chunks * (4 + (uint64_t)cmd->param[2].i) +
			 n_head;
	if (n_head * chunks > UINT32_MAX || words > UINT32_MAX / 8)
		return belt_errf(err, errsz,
				 "%s: attention split_kv: n_ctx %d is too "
				 "large",
				 label(cmd), cmd->param[3].i);
	pr->groups = (uint32_t)(n_head * chunks);
	pr->work_words = (uint32_t)words;
	pr->aux[0] = (uint32_t)chunk;
	pr->aux[1] = (uint32_t)chunks;
	return 0;
}

/* split_gqa (shaders/attention_gqa.comp): a workgroup per kv head and
 * chunk does the query heads of its group; its conditions below, else it
 * runs as split_kv. Chunks as split_kv's, with their own defaults, and at
 * most GQA_SC / R positions each (the shader's shared scores). */
#define GQA_CHUNK 64 /* positions per chunk at least */
#define GQA_SPLITS 32 /* and chunks per kv head at most, unless more are needed */
#define GQA_SC 4096   /* attention_gqa.comp's SC */
#define GQA_NSG 4     /* and its NSG */
#define GQA_U 4	      /* its steps of loads in flight */
/* attention_gqa.comp for cmd where it applies: 1 with pr filled, 0 where
 * it does not (pr then holds prep_attention's), -1 with err; also
 * split_kv's kernel for long contexts (vk_op.prepare_long). */
static int gqa_prep(const struct belt_cmd *cmd, struct vk_prep *pr,
		    char *err, size_t errsz)
{
	if (prep_attention(cmd, pr, err, errsz))
		return -1;
	if (pr->rows > 1)
		return 0;
	uint32_t n_head = (uint32_t)cmd->param[0].i;
	uint32_t n_kvh = (uint32_t)cmd->param[1].i;
	uint32_t hd = (uint32_t)cmd->param[2].i, r = n_head / n_kvh;
	uint32_t d8 = hd / 8, sgs = pr->subgroup;
	bool ok = sgs >= 1 && hd % 8 == 0 && (d8 & (d8 - 1)) == 0 &&
		  r * hd <= GQA_SC / GQA_NSG && r <= 16 && pr->spec[0] <= 1 &&
		  pr->spec[1] <= 1 && cmd->bind[1].offset % 16 == 0 &&
		  cmd->bind[2].offset % 16 == 0;
	if (!ok)
		return 0;
	uint32_t lanes = d8 < sgs ? d8 : sgs;
	uint64_t cap = GQA_SC / r / 32 * 32;
	uint64_t n_ctx = (uint64_t)cmd->param[3].i;
	uint64_t chunk = pr->att_chunk ? pr->att_chunk : GQA_CHUNK;
	if (chunk > cap)
		chunk = cap;
	uint64_t chunks = split_chunks(n_ctx, chunk,
				       pr->att_splits ? pr->att_splits : GQA_SPLITS, cap);
	if (2 * r * chunks > GQA_SC) /* the merge's shared weights */
		return 0;
	uint64_t words = (uint64_t)n_head * chunks * (4 + hd) + n_kvh;
	if ((uint64_t)n_kvh * chunks > UINT32_MAX || words > UINT32_MAX / 8)
		return belt_errf(err, errsz,
				 "%s: attention split_gqa: n_ctx %d is too "
				 "large",
				 label(cmd), cmd->param[3].i);
	pr->shader = VK_SH_ATTENTION_GQA;
	pr->groups = (uint32_t)(n_kvh * chunks);
	pr->work_words = (uint32_t)words;
	pr->aux[0] = (uint32_t)chunk;
	pr->aux[1] = (uint32_t)chunks;
	pr->spec[2] = r;
	pr->spec[3] = lanes;
	pr->spec[4] = d8 / lanes;
	pr->spec[5] = GQA_NSG * sgs;
	pr->spec[6] = GQA_U;
	pr->n_spec = 7;
	return 1;
}

/* split_gqa: the grouped kernel wherever it applies, else split_kv */
static int prep_attention_gqa(const struct belt_cmd *cmd,
			      struct vk_prep *pr, char *err, size_t errsz)
{
	int r = gqa_prep(cmd, pr, err, errsz);
	if (r)
		return r < 0 ? -1 : 0;
	pr->shader = VK_SH_ATTENTION_SPLIT;
	return prep_attention_split(cmd, pr, err, errsz);
}

/* ---- argmax ---- */

static int prep_argmax(const struct belt_cmd *cmd, struct vk_prep *pr,
		       char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "logits", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	uint64_t slots = cmd->bind[1].size / 4;
	/* one row writes token_ids[pos + 1]; a batched pass slot r < rows */
	if (pr->rows > 1 && slots < pr->rows)
		return belt_errf(err, errsz,
				 "%s: argmax row outputs hold %" PRIu64
				 " ids, the table has %u rows",
				 label(cmd), slots, pr->rows);
	if (pr->rows == 1)
		pr->max_pos = slots ? slots - 1 : 0;
	/* a workgroup per chunk; (value, index) each, then a counter; a
	 * region per row */
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, ARGMAX_CHUNK);
	uint64_t words = (uint64_t)pr->rows * (2 * pr->groups + 1);
	if (words > UINT32_MAX / 8)
		return belt_errf(err, errsz, "%s: argmax: too many rows",
				 label(cmd));
	pr->work_words = (uint32_t)words;
	return 0;
}

/* ---- the sampler chain (doc/samplers.md) ---- */

/* Binding 0 holds n logits; decode (one-row) tables only. */
static int prep_logits(const struct belt_cmd *cmd, const struct vk_prep *pr,
		       char *err, size_t errsz)
{
	if (pr->rows > 1)
		return belt_errf(err, errsz,
				 "%s: %s runs in one-row (decode) tables only",
				 label(cmd), cmd->kernel->op);
	if (need_int(cmd, 0, "n", 1, err, errsz))
		return -1;
	return need(cmd, 0, "logits", (uint64_t)cmd->param[0].i * 4, err,
		    errsz);
}

/* One workgroup; a count per vocabulary entry in the work buffer. */
static int prep_sample_penalty(const struct belt_cmd *cmd,
			       struct vk_prep *pr, char *err, size_t errsz)
{
	if (prep_logits(cmd, pr, err, errsz) ||
	    need_int(cmd, 1, "last_n", -1, err, errsz) ||
	    need(cmd, 1, "token_ids", 4, err, errsz))
		return -1;
	pr->max_pos = cmd->bind[1].size / 4; /* reads ids[0 .. pos] */
	pr->groups = 1;
	pr->work_words = (uint32_t)cmd->param[0].i;
	return 0;
}

/* A thread per logit; the mask a bit per token (shaders/logit_mask.comp). */
static int prep_logit_mask(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
			   size_t errsz)
{
	if (prep_logits(cmd, pr, err, errsz) ||
	    need(cmd, 1, "mask", ((uint64_t)cmd->param[0].i + 31) / 32 * 4, err, errsz))
		return -1;
	pr->groups = (uint32_t)ceil_div((uint64_t)cmd->param[0].i, 256);
	return 0;
}

/* A workgroup per chunk: maxima, sums, three counters, then the
 * candidates (shaders/sample_threshold.comp). */
static int prep_sample_threshold(const struct belt_cmd *cmd,
				 struct vk_prep *pr, char *err, size_t errsz)
{
	if (prep_logits(cmd, pr, err, errsz) ||
	    need(cmd, 1, "scratch", 4, err, errsz))
		return -1;
	uint64_t g = ceil_div((uint64_t)cmd->param[0].i, THRESH_CHUNK);
	pr->groups = (uint32_t)g;
	pr->work_words = (uint32_t)((2 * g + 3 + 3) / 4 * 4 + 2 * THRESH_CAND);
	return 0;
}

static int prep_sample_gumbel(const struct belt_cmd *cmd, struct vk_prep *pr,
			      char *err, size_t errsz)
{
	if (prep_logits(cmd, pr, err, errsz) ||
	    need(cmd, 1, "scratch", 4, err, errsz))
		return -1;
	pr->groups = ceil_div((uint64_t)cmd->param[0].i, SAMPLE_WG);
	return 0;
}

/* ---- the table ---- */

#define OP(name_, sh_, w_, prep_, fill_)                                  \
	static const struct vk_op name_ = {.shader = sh_,                 \
					   .wtype = w_,                   \
					   .prepare = prep_,              \
					   .fill_meta = fill_}

OP(op_embed_f32, VK_SH_EMBED_F32, BELT_TYPE_F32, prep_embed, NULL);
OP(op_embed_f16, VK_SH_EMBED_F16, BELT_TYPE_F16, prep_embed, NULL);
OP(op_embed_bf16, VK_SH_EMBED_BF16, BELT_TYPE_BF16, prep_embed, NULL);
OP(op_embed_q8_0, VK_SH_EMBED_Q8_0, BELT_TYPE_Q8_0, prep_embed, NULL);
OP(op_embed_q4_0, VK_SH_EMBED_Q4_0, BELT_TYPE_Q4_0, prep_embed, NULL);
OP(op_matvec_f32, VK_SH_MATVEC_F32, BELT_TYPE_F32, prep_matvec, NULL);
OP(op_matvec_f16, VK_SH_MATVEC_F16, BELT_TYPE_F16, prep_matvec, NULL);
OP(op_matvec_bf16, VK_SH_MATVEC_BF16, BELT_TYPE_BF16, prep_matvec, NULL);
OP(op_matvec_q8_0, VK_SH_MATVEC_Q8_0, BELT_TYPE_Q8_0, prep_matvec, NULL);
OP(op_matvec_q4_0, VK_SH_MATVEC_Q4_0, BELT_TYPE_Q4_0, prep_matvec, NULL);
OP(op_embed_q4_k, VK_SH_EMBED_Q4_K, BELT_TYPE_Q4_K, prep_embed, NULL);
OP(op_embed_q6_k, VK_SH_EMBED_Q6_K, BELT_TYPE_Q6_K, prep_embed, NULL);
OP(op_matvec_q4_k, VK_SH_MATVEC_Q4_K, BELT_TYPE_Q4_K, prep_matvec, NULL);
OP(op_matvec_q6_k, VK_SH_MATVEC_Q6_K, BELT_TYPE_Q6_K, prep_matvec, NULL);
OP(op_embed_q4_1, VK_SH_EMBED_Q4_1, BELT_TYPE_Q4_1, prep_embed, NULL);
OP(op_embed_q5_0, VK_SH_EMBED_Q5_0, BELT_TYPE_Q5_0, prep_embed, NULL);
OP(op_embed_q5_1, VK_SH_EMBED_Q5_1, BELT_TYPE_Q5_1, prep_embed, NULL);
OP(op_embed_iq4_nl, VK_SH_EMBED_IQ4_NL, BELT_TYPE_IQ4_NL, prep_embed, NULL);
OP(op_embed_q2_k, VK_SH_EMBED_Q2_K, BELT_TYPE_Q2_K, prep_embed, NULL);
OP(op_embed_q3_k, VK_SH_EMBED_Q3_K, BELT_TYPE_Q3_K, prep_embed, NULL);
OP(op_embed_q5_k, VK_SH_EMBED_Q5_K, BELT_TYPE_Q5_K, prep_embed, NULL);
OP(op_embed_iq4_xs, VK_SH_EMBED_IQ4_XS, BELT_TYPE_IQ4_XS, prep_embed, NULL);
OP(op_matvec_q4_1, VK_SH_MATVEC_Q4_1, BELT_TYPE_Q4_1, prep_matvec, NULL);
OP(op_matvec_q5_0, VK_SH_MATVEC_Q5_0, BELT_TYPE_Q5_0, prep_matvec, NULL);
OP(op_matvec_q5_1, VK_SH_MATVEC_Q5_1, BELT_TYPE_Q5_1, prep_matvec, NULL);
OP(op_matvec_iq4_nl, VK_SH_MATVEC_IQ4_NL, BELT_TYPE_IQ4_NL, prep_matvec, NULL);
OP(op_matvec_q2_k, VK_SH_MATVEC_Q2_K, BELT_TYPE_Q2_K, prep_matvec, NULL);
OP(op_matvec_q3_k, VK_SH_MATVEC_Q3_K, BELT_TYPE_Q3_K, prep_matvec, NULL);
OP(op_matvec_q5_k, VK_SH_MATVEC_Q5_K, BELT_TYPE_Q5_K, prep_matvec, NULL);
OP(op_matvec_iq4_xs, VK_SH_MATVEC_IQ4_XS, BELT_TYPE_IQ4_XS, prep_matvec, NULL);
OP(op_rmsnorm, VK_SH_RMSNORM, BELT_TYPE_ANY, prep_rmsnorm, NULL);
OP(op_rope_kv, VK_SH_ROPE_KV, BELT_TYPE_ANY, prep_rope_kv, fill_rope);
OP(op_attention, VK_SH_ATTENTION, BELT_TYPE_ANY, prep_attention, NULL);
static const struct vk_op op_attention_split = {
	.shader = VK_SH_ATTENTION_SPLIT,
	.wtype = BELT_TYPE_ANY,
	.prepare = prep_attention_split,
	.prepare_long = gqa_prep};
OP(op_attention_gqa, VK_SH_ATTENTION_GQA, BELT_TYPE_ANY, prep_attention_gqa,
   NULL);
OP(op_silu_mul, VK_SH_SILU_MUL, BELT_TYPE_ANY, prep_elementwise, NULL);
OP(op_add, VK_SH_ADD, BELT_TYPE_ANY, prep_elementwise, NULL);
OP(op_argmax, VK_SH_ARGMAX, BELT_TYPE_ANY, prep_argmax, NULL);
OP(op_sample_penalty, VK_SH_SAMPLE_PENALTY, BELT_TYPE_ANY,
   prep_sample_penalty, NULL);
OP(op_logit_mask, VK_SH_LOGIT_MASK, BELT_TYPE_ANY, prep_logit_mask, NULL);
OP(op_sample_threshold, VK_SH_SAMPLE_THRESHOLD, BELT_TYPE_ANY,
   prep_sample_threshold, NULL);
OP(op_sample_gumbel, VK_SH_SAMPLE_GUMBEL, BELT_TYPE_ANY, prep_sample_gumbel,
   NULL);
OP(op_rope, VK_SH_ROPE, BELT_TYPE_ANY, prep_rope, fill_rope_scaled);
OP(op_rope_ff, VK_SH_ROPE_FF, BELT_TYPE_ANY, prep_rope, fill_rope_scaled);
OP(op_kv_store, VK_SH_KV_STORE, BELT_TYPE_ANY, prep_kv_store, NULL);
OP(op_bias_add, VK_SH_BIAS_ADD, BELT_TYPE_ANY, prep_vec_weight, NULL);
OP(op_rmsnorm_heads, VK_SH_RMSNORM_HEADS, BELT_TYPE_ANY, prep_vec_weight, NULL);
OP(op_scale, VK_SH_SCALE, BELT_TYPE_ANY, prep_x_float, NULL);
OP(op_gelu_mul, VK_SH_GELU_MUL, BELT_TYPE_ANY, prep_elementwise, NULL);
OP(op_attention_ext, VK_SH_ATTENTION_EXT, BELT_TYPE_ANY, prep_attention_ext, NULL);
OP(op_moe_route, VK_SH_MOE_ROUTE, BELT_TYPE_ANY, prep_moe_route, NULL);
OP(op_moe_combine, VK_SH_MOE_COMBINE, BELT_TYPE_ANY, prep_moe_combine, NULL);
OP(op_silu, VK_SH_SILU, BELT_TYPE_ANY, prep_silu, NULL);
OP(op_top_k, VK_SH_TOP_K, BELT_TYPE_ANY, prep_top_k, NULL);
OP(op_moe_f32, VK_SH_MOE_F32, BELT_TYPE_F32, prep_moe_matvec, NULL);
OP(op_moe_f16, VK_SH_MOE_F16, BELT_TYPE_F16, prep_moe_matvec, NULL);
OP(op_moe_bf16, VK_SH_MOE_BF16, BELT_TYPE_BF16, prep_moe_matvec, NULL);
OP(op_moe_q8_0, VK_SH_MOE_Q8_0, BELT_TYPE_Q8_0, prep_moe_matvec, NULL);
OP(op_moe_q4_0, VK_SH_MOE_Q4_0, BELT_TYPE_Q4_0, prep_moe_matvec, NULL);
OP(op_moe_q4_k, VK_SH_MOE_Q4_K, BELT_TYPE_Q4_K, prep_moe_matvec, NULL);
OP(op_moe_q6_k, VK_SH_MOE_Q6_K, BELT_TYPE_Q6_K, prep_moe_matvec, NULL);
OP(op_moe_q4_1, VK_SH_MOE_Q4_1, BELT_TYPE_Q4_1, prep_moe_matvec, NULL);
OP(op_moe_q5_0, VK_SH_MOE_Q5_0, BELT_TYPE_Q5_0, prep_moe_matvec, NULL);
OP(op_moe_q5_1, VK_SH_MOE_Q5_1, BELT_TYPE_Q5_1, prep_moe_matvec, NULL);
OP(op_moe_iq4_nl, VK_SH_MOE_IQ4_NL, BELT_TYPE_IQ4_NL, prep_moe_matvec, NULL);
OP(op_moe_q2_k, VK_SH_MOE_Q2_K, BELT_TYPE_Q2_K, prep_moe_matvec, NULL);
OP(op_moe_q3_k, VK_SH_MOE_Q3_K, BELT_TYPE_Q3_K, prep_moe_matvec, NULL);
OP(op_moe_q5_k, VK_SH_MOE_Q5_K, BELT_TYPE_Q5_K, prep_moe_matvec, NULL);
OP(op_moe_iq4_xs, VK_SH_MOE_IQ4_XS, BELT_TYPE_IQ4_XS, prep_moe_matvec, NULL);

#define KERNEL(op_, w_, n_bind_, params_, impl_)                        \
	{                                                               \
		.op = op_, .variant = "default", .wtype = w_,           \
		.n_bind = n_bind_, .params = params_, .impl = &impl_    \
	}

#define KERNELV(op_, v_, w_, n_bind_, params_, impl_)                  \
	{                                                               \
		.op = op_, .variant = v_, .wtype = w_,                  \
		.n_bind = n_bind_, .params = params_, .impl = &impl_    \
	}

const struct belt_kernel vk_kernels[] = {
	KERNEL("embed", BELT_TYPE_F32, 3, "n:i", op_embed_f32),
	KERNEL("embed", BELT_TYPE_F16, 3, "n:i", op_embed_f16),
	KERNEL("embed", BELT_TYPE_BF16, 3, "n:i", op_embed_bf16),
	KERNEL("embed", BELT_TYPE_Q8_0, 3, "n:i", op_embed_q8_0),
	KERNEL("embed", BELT_TYPE_Q4_0, 3, "n:i", op_embed_q4_0),
	KERNEL("embed", BELT_TYPE_Q4_K, 3, "n:i", op_embed_q4_k),
	KERNEL("embed", BELT_TYPE_Q6_K, 3, "n:i", op_embed_q6_k),
	KERNEL("embed", BELT_TYPE_Q4_1, 3, "n:i", op_embed_q4_1),
	KERNEL("embed", BELT_TYPE_Q5_0, 3, "n:i", op_embed_q5_0),
	KERNEL("embed", BELT_TYPE_Q5_1, 3, "n:i", op_embed_q5_1),
	KERNEL("embed", BELT_TYPE_IQ4_NL, 3, "n:i", op_embed_iq4_nl),
	KERNEL("embed", BELT_TYPE_Q2_K, 3, "n:i", op_embed_q2_k),
	KERNEL("embed", BELT_TYPE_Q3_K, 3, "n:i", op_embed_q3_k),
	KERNEL("embed", BELT_TYPE_Q5_K, 3, "n:i", op_embed_q5_k),
	KERNEL("embed", BELT_TYPE_IQ4_XS, 3, "n:i", op_embed_iq4_xs),
	KERNEL("matvec", BELT_TYPE_F32, 3, "k:i m:i", op_matvec_f32),
	KERNEL("matvec", BELT_TYPE_F16, 3, "k:i m:i", op_matvec_f16),
	KERNEL("matvec", BELT_TYPE_BF16, 3, "k:i m:i", op_matvec_bf16),
	KERNEL("matvec", BELT_TYPE_Q8_0, 3, "k:i m:i", op_matvec_q8_0),
	KERNEL("matvec", BELT_TYPE_Q4_0, 3, "k:i m:i", op_matvec_q4_0),
	KERNEL("matvec", BELT_TYPE_Q4_K, 3, "k:i m:i", op_matvec_q4_k),
	KERNEL("matvec", BELT_TYPE_Q6_K, 3, "k:i m:i", op_matvec_q6_k),
	KERNEL("matvec", BELT_TYPE_Q4_1, 3, "k:i m:i", op_matvec_q4_1),
	KERNEL("matvec", BELT_TYPE_Q5_0, 3, "k:i m:i", op_matvec_q5_0),
	KERNEL("matvec", BELT_TYPE_Q5_1, 3, "k:i m:i", op_matvec_q5_1),
	KERNEL("matvec", BELT_TYPE_IQ4_NL, 3, "k:i m:i", op_matvec_iq4_nl),
	KERNEL("matvec", BELT_TYPE_Q2_K, 3, "k:i m:i", op_matvec_q2_k),
	KERNEL("matvec", BELT_TYPE_Q3_K, 3, "k:i m:i", op_matvec_q3_k),
	KERNEL("matvec", BELT_TYPE_Q5_K, 3, "k:i m:i", op_matvec_q5_k),
	KERNEL("matvec", BELT_TYPE_IQ4_XS, 3, "k:i m:i", op_matvec_iq4_xs),
	KERNEL("rmsnorm", BELT_TYPE_ANY, 3, "n:i eps:f", op_rmsnorm),
	KERNEL("rope_kv", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i rope_dim:i base:f", op_rope_kv),
	KERNEL("attention", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
	       op_attention),
	KERNELV("attention", "split_kv", BELT_TYPE_ANY, 5,
		"n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
		op_attention_split),
	KERNELV("attention", "split_gqa", BELT_TYPE_ANY, 5,
		"n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
		op_attention_gqa),
	KERNEL("silu_mul", BELT_TYPE_ANY, 3, "n:i", op_silu_mul),
	KERNEL("add", BELT_TYPE_ANY, 3, "n:i", op_add),
	KERNEL("argmax", BELT_TYPE_ANY, 2, "n:i", op_argmax),
	KERNEL("logit_mask", BELT_TYPE_ANY, 2, "n:i", op_logit_mask),
	KERNEL("sample_penalty", BELT_TYPE_ANY, 2,
	       "n:i last_n:i repeat:f presence:f frequency:f",
	       op_sample_penalty),
	KERNEL("sample_threshold", BELT_TYPE_ANY, 2,
	       "n:i top_k:i top_p:f min_p:f", op_sample_threshold),
	KERNEL("sample_gumbel", BELT_TYPE_ANY, 2,
	       "n:i inv_temp:f seed_lo:i seed_hi:i use_threshold:i",
	       op_sample_gumbel),
	KERNEL("rope", BELT_TYPE_ANY, 1,
	       "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f", op_rope),
	KERNEL("rope_ff", BELT_TYPE_ANY, 2,
	       "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f", op_rope_ff),
	KERNEL("kv_store", BELT_TYPE_ANY, 4, "n:i", op_kv_store),
	KERNEL("bias_add", BELT_TYPE_ANY, 2, "n:i", op_bias_add),
	KERNEL("rmsnorm_heads", BELT_TYPE_ANY, 2, "n_head:i head_dim:i eps:f", op_rmsnorm_heads),
	KERNEL("scale", BELT_TYPE_ANY, 1, "n:i s:f", op_scale),
	KERNEL("gelu_mul", BELT_TYPE_ANY, 3, "n:i", op_gelu_mul),
	KERNEL("attention_ext", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f softcap:f window:i",
	       op_attention_ext),
	KERNEL("moe_route", BELT_TYPE_ANY, 3, "n_expert:i n_used:i", op_moe_route),
	KERNEL("moe_combine", BELT_TYPE_ANY, 3, "n:i n_used:i", op_moe_combine),
	KERNEL("silu", BELT_TYPE_ANY, 1, "n:i", op_silu),
	KERNEL("top_k", BELT_TYPE_ANY, 2, "n:i k:i", op_top_k),
	KERNEL("moe_matvec", BELT_TYPE_F32, 4, "k:i m:i n_expert:i n_used:i", op_moe_f32),
	KERNEL("moe_matvec_slots", BELT_TYPE_F32, 4, "k:i m:i n_expert:i n_used:i", op_moe_f32),
	KERNEL("moe_matvec", BELT_TYPE_F16, 4, "k:i m:i n_expert:i n_used:i", op_moe_f16),
	KERNEL("moe_matvec_slots", BELT_TYPE_F16, 4, "k:i m:i n_expert:i n_used:i", op_moe_f16),
	KERNEL("moe_matvec", BELT_TYPE_BF16, 4, "k:i m:i n_expert:i n_used:i", op_moe_bf16),
	KERNEL("moe_matvec_slots", BELT_TYPE_BF16, 4, "k:i m:i n_expert:i n_used:i", op_moe_bf16),
	KERNEL("moe_matvec", BELT_TYPE_Q8_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q8_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q8_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q8_0),
	KERNEL("moe_matvec", BELT_TYPE_Q4_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_0),
	KERNEL("moe_matvec", BELT_TYPE_Q4_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_k),
	KERNEL("moe_matvec", BELT_TYPE_Q6_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q6_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q6_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q6_k),
	KERNEL("moe_matvec", BELT_TYPE_Q4_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_1),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_q4_1),
	KERNEL("moe_matvec", BELT_TYPE_Q5_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_0),
	KERNEL("moe_matvec", BELT_TYPE_Q5_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_1),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_1),
	KERNEL("moe_matvec", BELT_TYPE_IQ4_NL, 4, "k:i m:i n_expert:i n_used:i", op_moe_iq4_nl),
	KERNEL("moe_matvec_slots", BELT_TYPE_IQ4_NL, 4, "k:i m:i n_expert:i n_used:i", op_moe_iq4_nl),
	KERNEL("moe_matvec", BELT_TYPE_Q2_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q2_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q2_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q2_k),
	KERNEL("moe_matvec", BELT_TYPE_Q3_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q3_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q3_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q3_k),
	KERNEL("moe_matvec", BELT_TYPE_Q5_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_q5_k),
	KERNEL("moe_matvec", BELT_TYPE_IQ4_XS, 4, "k:i m:i n_expert:i n_used:i", op_moe_iq4_xs),
	KERNEL("moe_matvec_slots", BELT_TYPE_IQ4_XS, 4, "k:i m:i n_expert:i n_used:i", op_moe_iq4_xs),
};

const size_t vk_n_kernels = sizeof vk_kernels / sizeof vk_kernels[0];
