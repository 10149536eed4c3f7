/* plugins/backend-vulkan/vk.h: the Vulkan backend's internal interfaces.
 *
 * backend.c  the ops table; table prepare (descriptor sets, weights to
 *            the GPU layout, fused groups, barriers, command buffers),
 *            release and run (one submit per run)
 * device.c   instance, validation messenger, device pick and creation,
 *            create/destroy
 * buffers.c  buffers, staging, one-shot transfers
 * pipelines.c layouts, shader modules, plain and fused pipelines
 * fusion.c   which commands fuse into matvec_fused (fuse_find), the fused
 *            commands, the sampler's fused argmax
 * record.c   barrier analysis, recording one-row tables' token slots
 * profile.c  timestamp queries and the per-kernel table
 * tuning.c   every tuning switch: default, belt.yaml key, env override
 * repack.c   Q8_0/Q4_0/Q6_K weights converted to the GPU layout
 * batch.c    batched tables (rows > 1): one recorded pass, and its run
 * kernels.c  the kernel table: per op its shader, checks and grid
 * matmul.c   a batched table's matvecs: the tiled matrix product's
 *            shader and grid
 * devices.c  list_devices: each physical device and its limits
 * plugin.c   the module's one export
 * shaders/   GLSL compute shaders, built by glslc into embedded SPIR-V
 *
 * Nothing here is exported from the module: only belt_plugin_entry is. */
#ifndef BELT_VK_H
#define BELT_VK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "belt/backend.h"

/* Rows per workgroup of shaders/matvec.comp (NR), the kernel for weights
 * whose rows do not allow 16-byte loads. On the H100, 8 rows decoded a 1B
 * Q4_0 model at 416 tokens/s against 679 with 2. */
#define VK_MATVEC_ROWS 2
/* rows of an expert's matrix a workgroup of the expert products takes
 * (matvec.comp MOE and GROUPED; setting moe_rows) */
#define VK_MOE_ROWS 4
/* their matmul_cm.comp tile (BM, BN, WM, WN) where the matrix units take
 * them (setting moe_tile): an expert has few of a pass's rows */
#define VK_MOE_TILE 128, 64, 32, 16
/* A batched table's runs of at most this many rows (a verification of
 * drafts) take its few-row kernels (plan.h: vk_cmd.has_few). */
#define VK_FEW_ROWS 16
/* A few-row pass's matvecs (doc/vulkan.md, H100 measurements): rows of
 * the pass a workgroup (tuning few_pr) and rows of W a subgroup (few_nr) */
#define VK_FEW_PR 4
#define VK_FEW_NR 4
/* ... and rows of W a subgroup where x comes as int8 from memory (its
 * kernel's 99 registers with 4, on the H200; a pass of 8 rows on the
 * synthetic 8B Q4_0 6.62 ms with 2 against 7.01 with 4 and 8.85 with 8,
 * 1B 2.09 against 2.24 and 2.83) */
#define VK_FEW_NR_XG 2
/* ... and threads a workgroup there (setting few_wg; decode's 512 for
 * Q4_0): no shared tile to amortize, so smaller workgroups spread the
 * rows of W over more SMs. H200, a pass of 8 rows, 128 against 256 and
 * 512: 8B Q4_0 5.98, 6.30, 6.79 ms; 1B 1.96, 1.99, 2.03; pycoder29M
 * 0.506, 0.513, 0.550 */
#define VK_FEW_WG_XG 128
/* ... x as int8 from memory (tuning few_xg) for rows of at least this
 * many values (every row: a block is 32). H200, a pass of 8 rows with it
 * and without (the ops it leaves out included): pycoder29M 0.560 and
 * 0.653 ms, the synthetic 1B Q4_0 1.92 and 2.69, 8B 5.95 and 8.17 */
#define VK_FEW_XG_K 32
/* ... and where the device has int8 matrix products, passes of at least
 * this many rows run those matvecs on them (shaders/matvec_few_cm.comp;
 * setting few_mma, 0: never): its time hardly grows with the rows, the
 * other kernel's does. H200, synthetic Q4_0, passes of 8, 12 and 15 rows,
 * ms, with it and without: 8B 8.09 and 8.26 (8, 15) against 5.89 and
 * 9.07; 1B 2.21, 2.26 and 2.29 against 1.91, 2.18 and 2.42 */
#define VK_FEW_MMA 14
/* ... with this many subgroups a workgroup, each lane loading this many
 * units of W (Q4_0 blocks, Q8_0 half blocks) a step (8B, 8 rows: 2 and 2
 * 8.09 ms, 3 and 2 8.15, 4 and 2 9.00, 2 and 4 11.80) */
#define VK_FEW_MMA_SG 2
#define VK_FEW_MMA_U 2
/* few_mma_nsg: up to this many subgroups a workgroup while the matrix's
 * workgroups have fewer than VK_FEW_MMA_SUBGROUPS in all. H200, passes of
 * 15 rows, us a token of the pass (profile), 2 subgroups against 4: 1B
 * 512 x 2048 21.0 / 16.1, 2048 x 2048 31.4 / 25.9, 2048 x 8192 36.0 /
 * 25.1, 8192 x 2048 51.6 / 49.4; 8B 1024 x 4096 67.0 / 48.8, 4096 x 4096
 * 99.0 / 103.6, 4096 x 14336 126.7 / 132.7, 14336 x 4096 249.8 / 259.2,
 * the heads (128256 rows) 14.2 / 17.8 and 26.8 / 32.0. (8 would not fit
 * Q4_0's tiles in 48 KiB of shared memory.) */
#define VK_FEW_MMA_SG_MAX 4
#define VK_FEW_MMA_SUBGROUPS 512
/* Rows per subgroup of shaders/matvec_fused.comp (its NR; the
 * setting mv_rows overrides it): 1, and 2 for Q4_0, Q4_K, Q5_K and Q6_K
 * with x as int8 (H100, 1B Q4_K_M tg128: 890.7 with 1, 923.2 with 2; 1B
 * Q6_K 847.0 and 893.8). */
#define VK_MVF_ROWS 1
#define VK_MVF_ROWS_Q4_0_XQ 2
/* A decode table's matvec_fused dispatch with a norm (NORM, PEND) over
 * rows of at least VK_MVF_BLOCKS_K, Q4_0 with x as int8: each subgroup
 * works through 2 row groups, so that half the workgroups stage x (the
 * settings mv_blocks and mv_blocks_plain override it; H200, tg128, 8B
 * llama 380.6 -> 413.8 tokens/s, gemma2 358.5 -> 397.1; with rows of
 * 2048, 1B, slower: 1,266.1 -> 1,187.2 and 1,201.7 -> 1,143.3; 4 row
 * groups, or 2 for the matvecs without a norm, slower on 8B too) */
#define VK_MVF_BLOCKS 2
#define VK_MVF_BLOCKS_K 4096
/* ... and one without a norm over at least VK_MVF_BLOCKS_PLAIN_M rows (a
 * vocabulary's head), Q4_0 with x as int8: 4 row groups a subgroup (H200,
 * profile of tg128, the head's matvec: 1B 60.4 -> 52.4 us a token, 8B
 * 88.8 -> 83.9; 2 and 3 row groups 53.7 and 52.3 on 1B; for the smaller
 * matvecs without a norm, fewer workgroups than SMs, slower) */
#define VK_MVF_BLOCKS_PLAIN 4
#define VK_MVF_BLOCKS_PLAIN_M 65536
/* Threads per workgroup of matvec_fused (the mv_wg setting overrides both):
 * 256, and 512 for Q4_0 and for int8 x. On the H100, tg128 tokens/s, 256
 * vs 512 threads of one row per subgroup: 1B Q4_0 989 vs 994, 8B Q4_0 253
 * vs 264, 1B F16 662 vs 633; int8 Q8_0 1B 847 vs 956, 8B 203 vs 236. */
#define VK_MVF_WG 256
#define VK_MVF_WG_Q4_0 512
/* matvec_fused: floats of x staged in shared memory at a time, and units
 * of 16 weight bytes each lane loads before it uses them (doc/vulkan.md) */
#define VK_MVF_TILE 2048
#define VK_MVF_TILE_Q4_0 4096
/* Q4_0 and Q8_0 with x as int8 (VK_SH_FMV_Q4_0_XQ, VK_SH_FMV_Q8_0_XQ):
 * values of x staged at once, 1.25 bytes each, so that rows up to 16384
 * (the 8B model's down: 14336) stage x once */
#define VK_MVF_TILE_XQ 16384
/* Which types' matvecs take x as int8 (vk_ctx q8x; the q8x setting) */
#define VK_Q8X_Q4_0 1u
#define VK_Q8X_Q8_0 2u
#define VK_Q8X_K 4u /* Q4_K, Q5_K and Q6_K */
#define VK_Q8X_ALL (VK_Q8X_Q4_0 | VK_Q8X_Q8_0 | VK_Q8X_K)
#define VK_MVF_UNROLL 2
#define VK_MVF_UNROLL_Q8_0_XQ 4
/* distinct matvec_fused pipelines a context keeps (flags x segments x
 * types in use, in practice well under this) */
#define VK_SPIPE_MAX 192 /* specialized pipelines: fused matvecs and matmul_cm's */
#define VK_SPEC_MAX 11 /* specialization constants of a vk_spec_pipeline */
/* every pipeline's specialization constant STOP (shaders/common.glsl): 1
 * where its shader reads the stop word, 0 where conditional rendering
 * skips a stopped run's dispatches instead (ctx.h cond_begin) */
#define VK_STOP_SPEC_ID 31
/* Variants of matvec_fused: VK_SH_FMV_F32 .. VK_SH_FMV_Q6_K_XQ. */
#define VK_FMV_TYPES 14

/* The descriptor binding every shader reads its run's base position (and
 * rope frequencies) from; command bindings are 0 .. n_bind - 1. */
#define VK_META_BINDING 8
/* The plan's work buffer (per-command scratch): a command's words start at
 * push constant aux[2]; the first VK_WORK_RESERVED words are the plan's
 * own. */
#define VK_WORK_BINDING 9
#define VK_WORK_RESERVED 4
/* matvec_fused's descriptors: a command's 8 bindings, then the four of
 * its PEND form (shaders/matvec_fused.comp) at binding numbers 10 .. 13 */
#define VK_FMV_BINDINGS (BELT_MAX_BINDINGS + 4)
/* a set's descriptors at most: command bindings, then meta and work */
#define VK_SET_MAX (VK_FMV_BINDINGS + 2)
/* The binding number of descriptor i of a set of nb command bindings
 * (descriptors nb and nb + 1: meta and work). */
static inline uint32_t vk_binding_number(uint32_t i, uint32_t nb)
{
	return i == nb ? VK_META_BINDING
	       : i > nb ? VK_WORK_BINDING
	       : i < BELT_MAX_BINDINGS ? i
				       : i + 2;
}
/* Meta buffer (shaders/common.glsl): uint base_pos, stop_on, n_rows
 * (a batched pass's rows), tree (1 under BELT_RUN_TREE), seqs (1 in a
 * table of sequences), 3 spare words; then, in a batched table, (depth,
 * parent) of each row for tree runs, (position, first cache slot) in a
 * table of sequences (VK_META_ROW_WORDS words a row); then floats (rope
 * freqs). */
#define VK_META_HEADER 32
#define VK_META_ROW_WORDS 2

/* vk_pc.mode: bits 0..3 the command's patch kind (enum belt_patch), bits
 * 8..11 the patch of a command fused into it; a batched table's command;
 * one that runs for the pass's last row only (the head under
 * BELT_RUN_HEAD_LAST_ONLY); bits 16..31 (batched) its rows. Must match
 * shaders/common.glsl. */
#define VK_MODE_PATCH2_SHIFT 8
#define VK_MODE_BATCHED 16u
#define VK_MODE_LAST 32u
/* batched: the rows of the table a dispatch covers, from row vk_pc.t */
#define VK_MODE_ROWS_SHIFT 16
#define VK_MODE_ROWS_MAX 0xffffu

/* Push constants of every shader: must match shaders/common.glsl. */
struct vk_pc {
	uint32_t t;	   /* token slot within the run; batched: the first
			    * row the dispatch covers */
	uint32_t aux[3];   /* op-specific (embed: rows, scales; rope: freq
			    * offset; matvec_fused: rows per workgroup);
			    * aux[2]: the command's work words */
	uint32_t o[BELT_MAX_BINDINGS]; /* binding offsets, in elements */
	uint32_t p[BELT_MAX_PARAMS];   /* the command's params */
	uint32_t mode;		       /* VK_MODE_*: patch kinds, rows */
};
/* A command binding caches has their slots in its last param word, which
 * no such op's params reach (shaders/common.glsl's KV_SLOTS): position p
 * in slot p mod slots. */
#define VK_PC_KV_SLOTS (BELT_MAX_PARAMS - 1)

/* The embedded shaders, one per (op, weight type). */
enum vk_shader {
	VK_SH_EMBED_F32,
	VK_SH_EMBED_F16,
	VK_SH_EMBED_BF16,
	VK_SH_EMBED_Q8_0,
	VK_SH_EMBED_Q4_0,
	VK_SH_MATVEC_F32,
	VK_SH_MATVEC_F16,
	VK_SH_MATVEC_BF16,
	VK_SH_MATVEC_Q8_0,
	VK_SH_MATVEC_Q4_0,
	VK_SH_RMSNORM,
	VK_SH_ROPE_KV,
	VK_SH_ATTENTION,
	VK_SH_SILU_MUL,
	VK_SH_QUANTIZE_ROWS,
	VK_SH_ADD,
	VK_SH_ARGMAX,
	/* internal: fused matvecs (fusion.c), by weight type */
	VK_SH_FMV_F32,
	VK_SH_FMV_F16,
	VK_SH_FMV_BF16,
	VK_SH_FMV_Q8_0,
	VK_SH_FMV_Q4_0,
	VK_SH_FMV_Q4_0_XQ, /* x as int8, integer dot products */
	VK_SH_FMV_Q8_0_XQ, /* the same for Q8_0 */
	VK_SH_FMV_Q4_K,	   /* K-quants: Q4_K, Q5_K in GGUF's layout */
	VK_SH_FMV_Q5_K,
	VK_SH_FMV_Q6_K, /* Q6_K in the GPU layout (repack.c) */
	VK_SH_FMV_IQ4_XS,
	VK_SH_FMV_Q4_K_XQ, /* the K-quants with x as int8 (these last) */
	VK_SH_FMV_Q5_K_XQ,
	VK_SH_FMV_Q6_K_XQ,
	VK_SH_EMBED_Q6_KR,
	VK_SH_REPACK_Q6_K,
	VK_SH_MATMUL_Q6_KR,
	VK_SH_EMBED_Q8_0R,
	VK_SH_EMBED_Q4_0R,
	VK_SH_REPACK_Q8_0,
	VK_SH_REPACK_Q4_0,
	VK_SH_ATTENTION_SPLIT,
	VK_SH_ATTENTION_RING,
	VK_SH_ATTENTION_SEQ,
	VK_SH_ATTENTION_GQA,
	VK_SH_SAMPLE_PENALTY,
	VK_SH_SAMPLE_THRESHOLD,
	VK_SH_SAMPLE_GUMBEL,
	VK_SH_ARGMAX_GUMBEL,
	VK_SH_SAMPLE_TGA,
	VK_SH_LOGIT_MASK,
	/* batched tables: matvec as a tiled matrix product (matmul.c), by
	 * weight type; Q8_0/Q4_0 in the GPU layout (R) or GGUF's */
	VK_SH_MATMUL_F32,
	VK_SH_MATMUL_F16,
	VK_SH_MATMUL_BF16,
	VK_SH_MATMUL_Q8_0,
	VK_SH_MATMUL_Q4_0,
	VK_SH_MATMUL_Q8_0R,
	VK_SH_MATMUL_Q4_0R,
	/* batched tables: attention for blocks of query rows, head_dim up
	 * to 128 and up to 256 */
	VK_SH_ATT_ROWS,
	VK_SH_ATT_ROWS_256,
	VK_SH_ATT_ROWS_CM,
	/* K-quants in GGUF's layout: embed, matvec, batched matvec */
	VK_SH_EMBED_Q4_K,
	VK_SH_EMBED_Q6_K,
	VK_SH_MATVEC_Q4_K,
	VK_SH_MATVEC_Q6_K,
	VK_SH_MATMUL_Q4_K,
	VK_SH_MATMUL_Q6_K,
	/* the other block types of shaders/quants.glsl, in GGUF's layout:
	 * embed, matvec, batched matvec */
	VK_SH_EMBED_Q4_1,
	VK_SH_EMBED_Q5_0,
	VK_SH_EMBED_Q5_1,
	VK_SH_EMBED_IQ4_NL,
	VK_SH_EMBED_Q2_K,
	VK_SH_EMBED_Q3_K,
	VK_SH_EMBED_Q5_K,
	VK_SH_EMBED_IQ4_XS,
	VK_SH_MATVEC_Q4_1,
	VK_SH_MATVEC_Q5_0,
	VK_SH_MATVEC_Q5_1,
	VK_SH_MATVEC_IQ4_NL,
	VK_SH_MATVEC_Q2_K,
	VK_SH_MATVEC_Q3_K,
	VK_SH_MATVEC_Q5_K,
	VK_SH_MATVEC_IQ4_XS,
	VK_SH_MATMUL_Q4_1,
	VK_SH_MATMUL_Q5_0,
	VK_SH_MATMUL_Q5_1,
	VK_SH_MATMUL_IQ4_NL,
	VK_SH_MATMUL_Q2_K,
	VK_SH_MATMUL_Q3_K,
	VK_SH_MATMUL_Q5_K,
	VK_SH_MATMUL_IQ4_XS,
	/* ops of architectures beyond Llama 1/2 */
	VK_SH_ROPE,
	VK_SH_ROPE_FF,
	VK_SH_KV_STORE,
	VK_SH_BIAS_ADD,
	VK_SH_RMSNORM_HEADS,
	VK_SH_SCALE,
	VK_SH_GELU_MUL,
	VK_SH_ATTENTION_EXT,
	VK_SH_MOE_ROUTE,
	VK_SH_MOE_COMBINE,
	VK_SH_MOE_F32,
	VK_SH_MOE_F16,
	VK_SH_MOE_BF16,
	VK_SH_MOE_Q8_0,
	VK_SH_MOE_Q4_0,
	VK_SH_MOE_Q4_K,
	VK_SH_MOE_Q6_K,
	VK_SH_MOE_Q4_1,
	VK_SH_MOE_Q5_0,
	VK_SH_MOE_Q5_1,
	VK_SH_MOE_IQ4_NL,
	VK_SH_MOE_Q2_K,
	VK_SH_MOE_Q3_K,
	VK_SH_MOE_Q5_K,
	VK_SH_MOE_IQ4_XS,
	VK_SH_MOEG_F32,
	VK_SH_MOEG_F16,
	VK_SH_MOEG_BF16,
	VK_SH_MOEG_Q8_0,
	VK_SH_MOEG_Q4_0,
	VK_SH_MOEG_Q4_K,
	VK_SH_MOEG_Q6_K,
	VK_SH_MOEG_Q4_1,
	VK_SH_MOEG_Q5_0,
	VK_SH_MOEG_Q5_1,
	VK_SH_MOEG_IQ4_NL,
	VK_SH_MOEG_Q2_K,
	VK_SH_MOEG_Q3_K,
	VK_SH_MOEG_Q5_K,
	VK_SH_MOEG_IQ4_XS,
	VK_SH_RMSNORM_ADD, /* rmsnorm.comp -DADD: fusion.c's rmsnorm + add */
	VK_SH_RMSNORM_ADD_NORM, /* -DADD -DNORM2: rmsnorm + add + rmsnorm */
	VK_SH_QKV_ROPE,	   /* fusion.c's biases or head norms, rope, kv_store */
	/* matmul_cm.comp by weight type (R: the GPU layout) */
	VK_SH_MATMUL_CM_F16,
	VK_SH_MATMUL_CM_BF16,
	VK_SH_MATMUL_CM_Q8_0,
	VK_SH_MATMUL_CM_Q8_0R,
	VK_SH_MATMUL_CM_Q4_0,
	VK_SH_MATMUL_CM_Q4_0R,
	VK_SH_MATMUL_CM_Q4_1,
	VK_SH_MATMUL_CM_Q5_0,
	VK_SH_MATMUL_CM_Q5_1,
	VK_SH_MATMUL_CM_IQ4_NL,
	VK_SH_MATMUL_CM_Q2_K,
	VK_SH_MATMUL_CM_Q3_K,
	VK_SH_MATMUL_CM_Q4_K,
	VK_SH_MATMUL_CM_Q5_K,
	VK_SH_MATMUL_CM_Q6_K,
	VK_SH_MATMUL_CM_Q6_KR,
	VK_SH_MATMUL_CM_IQ4_XS,
	VK_SH_MATMUL_Q8CM_Q8_0,
	VK_SH_MATMUL_Q8CM_Q8_0R,
	VK_SH_MATMUL_Q8CM_Q4_0,
	VK_SH_MATMUL_Q8CM_Q4_0R,
	VK_SH_FEW_CM_Q8_0,
	VK_SH_FEW_CM_Q4_0,
	VK_SH_MOECM_F16,
	VK_SH_MOECM_BF16,
	VK_SH_MOECM_Q8_0,
	VK_SH_MOECM_Q4_0,
	VK_SH_MOECM_Q4_1,
	VK_SH_MOECM_Q5_0,
	VK_SH_MOECM_Q5_1,
	VK_SH_MOECM_IQ4_NL,
	VK_SH_MOECM_Q2_K,
	VK_SH_MOECM_Q3_K,
	VK_SH_MOECM_Q4_K,
	VK_SH_MOECM_Q5_K,
	VK_SH_MOECM_Q6_K,
	VK_SH_MOECM_IQ4_XS,
	VK_SH_SILU,
	VK_SH_TOP_K,
	VK_SH_COUNT
};

struct vk_spirv {
	const uint32_t *code;
	size_t size;	  /* bytes */
	const char *name; /* the shader's build name, e.g. matmul_cm_q4_0 */
};

extern const struct vk_spirv vk_spirv[VK_SH_COUNT];

/* How a batched table's command covers its rows (vk_prep.rows_dim). */
enum vk_rows_dim {
	VK_ROWS_Z = 0, /* a z layer of the grid per row */
	VK_ROWS_X      /* x: tiles of rows_tile rows; y: pr.groups */
};

/* What a kernel's prepare tells the backend about a command. */
struct vk_prep {
	uint32_t rows;	   /* in: the table's rows (1: a one-row table) */
	bool seqs;	   /* in: a batched table of sequences (belt_table.seqs) */
	uint32_t parts;	   /* in: there, its sequences (its positions' parts) */
	bool coopmat;	   /* in: batched products on matrix units
			    * (matmul_cm.comp) where the type has one */
	uint32_t cm_tile[4]; /* in: their tile (BM, BN, WM, WN; 0s: by size) */
	bool coopmat_int8; /* in: Q4_0/Q8_0 ones in int8 (matmul_q8cm.comp) */
	uint32_t mq_tile[4]; /* in: their tile (0s: the default) */
	bool att_coopmat;  /* in: batched attention on the matrix units too */
	uint32_t max_shared; /* in: the device's shared memory per workgroup */
	uint32_t att_chunk, att_splits; /* in: split_kv's chunks (0: defaults) */
	uint32_t att_below; /* in: split_kv runs only for tokens that see
			     * fewer positions (a long-context kernel runs the
			     * others; 0: it runs them all) */
	uint32_t att_kloads, att_vloads; /* in: attention.comp's loads in flight */
	bool att_short; /* in: attention.comp's path for runs of <= 256 positions */
	bool att_seqs;	/* in: a table of sequences' attention on attention.comp
			 * (SEQS) where its sequences allow */
	uint32_t moe_rows; /* in: the setting moe_rows (rows a workgroup of
			    * the expert products takes) */
	uint32_t subgroup; /* in: the subgroup size where shaders can shuffle
			    * within subgroups, else 0 */
	uint32_t spec[VK_SPEC_MAX]; /* the shader's specialization constants */
	uint32_t n_spec;   /* how many (0: none) */
	uint64_t max_pos;  /* positions pos < max_pos are in range */
	uint32_t kv_slots; /* the slots its caches hold (kv_caches; 0: none);
			    * in a table of sequences, a sequence's part */
	uint32_t groups;   /* workgroups to dispatch (per row, VK_ROWS_Z) */
	uint32_t aux[3];   /* into the push constants */
	uint32_t n_freq;   /* rope: floats of meta it needs (freqs) */
	uint32_t work_words; /* 32-bit words of the work buffer it needs */
	int shader;	   /* in: the op's shader; a prepare may change it */
	enum vk_rows_dim rows_dim; /* batched: how the grid covers rows */
	uint32_t rows_tile; /* VK_ROWS_X: rows per workgroup */
	uint32_t chunk_rows; /* batched: rows per dispatch (batch.c) */
	uint8_t esize[BELT_MAX_BINDINGS]; /* element bytes per binding */
};

/* A kernel's implementation: kernel.impl points at one. */
struct vk_op {
	enum vk_shader shader;
	int wtype; /* matvec/embed: the weight type; else BELT_TYPE_ANY */
	/* Check the bindings and params of cmd; fill pr. */
	int (*prepare)(const struct belt_cmd *cmd, struct vk_prep *pr,
		       char *err, size_t errsz);
	/* rope: write the n_freq floats the command reads from meta */
	void (*fill_meta)(const struct belt_cmd *cmd, float *out);
	/* A one-row table's other kernel for tokens whose context holds
	 * at least the att_gqa_from setting's positions (split_kv: the
	 * grouped attention_gqa.comp): 1 with pr filled, 0 where there is
	 * none for cmd, -1 with err. NULL: none. */
	int (*prepare_long)(const struct belt_cmd *cmd, struct vk_prep *pr,
			    char *err, size_t errsz);
};

/* The instance-level Vulkan version the loader offers (1.0 if it cannot
 * say); devices.c. */
uint32_t vk_loader_version(void);
/* Whether device d can run Q4_0 and Q8_0 matvecs with x as int8
 * (VK_SH_FMV_Q4_0_XQ, VK_SH_FMV_Q8_0_XQ): VK_KHR_shader_integer_dot_product with
 * shaderIntegerDotProduct, and subgroup shuffles in compute shaders on
 * subgroups of 4 or more (four lanes quantize a block); devices.c. Needs
 * an instance of Vulkan 1.1 or later. */
bool vk_int8_dot(VkPhysicalDevice d);
/* Whether device d offers device extension name; devices.c. */
bool vk_device_ext(VkPhysicalDevice d, const char *name);
/* Whether device d can skip dispatches on a word in a buffer:
 * VK_EXT_conditional_rendering with conditionalRendering; devices.c. */
bool vk_cond_rendering(VkPhysicalDevice d);
/* Whether device d can run matmul_cm.comp: VK_NV_cooperative_matrix with
 * 16 x 16 x 16 float16 products into float32 on a subgroup of 32 in
 * compute shaders, and shaderFloat16; devices.c. Instance of 1.1 or later. */
bool vk_coopmat(VkInstance inst, VkPhysicalDevice d);
/* Whether device d can also run matmul_q8cm.comp: 16 x 16 x 32 int8
 * products into int32 on a subgroup of 32, and shaderInt8; devices.c. */
bool vk_coopmat_int8(VkInstance inst, VkPhysicalDevice d);

/* A batched table's matvec (matmul.c): pr's shader, specialization, grid
 * and rows for the tiled product of cmd (checked by prep_matvec), on the
 * matrix units where pr->coopmat and the weight type allow (the tile
 * pr->cm_tile, or chosen by size; an error if it needs more shared memory
 * than pr->max_shared). vk_matmul_repacked: the variant of
 * product shader sh that reads Q8_0/Q4_0/Q6_K in the GPU layout (sh
 * itself for other types). vk_matmul_tile_ok: whether BM x BN weight rows
 * by rows of the pass, WM x WN per subgroup, is a tile matmul_cm.comp
 * takes. */
int vk_matmul_prep(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
		   size_t errsz);
enum vk_shader vk_matmul_repacked(enum vk_shader sh);
/* Whether shader sh is one of matmul_q8cm.comp's (x as int8, from
 * quantize_rows.comp: backend.c, record.c). */
bool vk_matmul_is_q8(int sh);
bool vk_matmul_tile_ok(uint32_t bm, uint32_t bn, uint32_t wm, uint32_t wn);
/* matmul_cm.comp's specialization constants for tile t (BM, BN, WM, WN)
 * into spec (local size, BM, BN, FM, FN, SK); the shared memory it takes,
 * in bytes (matmul.c). */
uint64_t vk_matmul_cm_spec(const uint32_t t[4], uint32_t spec[6]);

extern const struct belt_kernel vk_kernels[];
extern const size_t vk_n_kernels;
extern const struct belt_backend_ops vk_backend_ops;

/* list_devices of the ops table (devices.c): its own instance, each
 * physical device's type, version, memory and compute limits. */
int vk_list_devices(char *buf, size_t bufsz, char *err, size_t errsz);

#endif
