/* plugins/backend-vulkan/ctx.h: the backend's device context, its tuning
 * switches and buffers, shared by every file of the backend: device.c,
 * buffers.c, pipelines.c, tuning.c, repack.c and those plan.h serves. */
#ifndef BELT_VK_CTX_H
#define BELT_VK_CTX_H

#include "belt/arch.h"
#include "belt/error.h"
#include "vk.h"

/* Architecture plugins' ops a context makes kernels for (ext.c). */
#define VK_EXT_MAX 8

#define VKCHECK(call, what)                                                  \
	do {                                                                 \
		VkResult r_ = (call);                                        \
		if (r_ != VK_SUCCESS)                                        \
			return belt_errf(err, errsz, "vulkan: %s: %s (%d)",  \
					 what, vk_result(r_), (int)r_);      \
	} while (0)

/* The tuning switches, as create() read them (tuning.c; conf/belt.yaml's
 * backends: vulkan:, each overridden by BELT_VK_<KEY>). The mv_* are 0 (or
 * mv_ksplit_k -1) where unset: each variant's default. */
struct vk_tuning {
	bool fuse;	  /* fuse (the file's; BELT_VK_FUSE at each prepare) */
	bool profile;	  /* profile (likewise BELT_VK_PROFILE) */
	bool staging;	  /* staging: never map device buffers */
	int validation;	  /* validation: 0 off, 1 count, 2 fatal */
	unsigned q8x;	  /* q8x: VK_Q8X_* bits wanted */
	uint32_t mv_rows, mv_wg, mv_unroll, mv_tile, mv_ksplit;
	/* mv_blocks, mv_blocks_plain: row groups a subgroup of a decode
	 * table's matvec_fused dispatch works through, with and without a
	 * norm (0: the default) */
	uint32_t mv_blocks, mv_blocks_plain;
	int64_t mv_ksplit_k;
	bool mv_swizzle;
	bool coopmat;	  /* coopmat: matrix units where the device has them */
	bool coopmat_int8; /* coopmat_int8: Q4_0/Q8_0 there in int8
			    * (matmul_q8cm.comp) where the device can */
	bool mq_glu;	  /* mq_glu: such a product's quantize_rows computes
			   * the silu_mul before it (backend.c glu_source) */
	bool mq_add;	  /* mq_add: such a product does the add after it
			   * (backend.c add_sink) */
	bool att_coopmat; /* att_coopmat: batched attention on them too */
	bool moe_grouped; /* moe_grouped: batched expert products by expert */
	uint32_t moe_rows; /* moe_rows: their rows of W a workgroup */
	uint32_t moe_tile[4]; /* moe_tile: their tile on the matrix units */
	uint32_t mm_tile[4]; /* mm_tile: their tile, BM BN WM WN (0s: by size) */
	uint32_t mq_tile[4]; /* mq_tile: the int8 products' tile (0s: default) */
	uint32_t att_chunk, att_splits; /* split_kv attention (0: defaults) */
	uint32_t att_kloads, att_vloads; /* attention.comp's loads (0: defaults) */
	bool att_short; /* att_short: attention.comp's path for short runs */
	bool att_seqs;	/* att_seqs: a table of sequences' attention on
			 * attention.comp, a workgroup per row and head */
	bool cond_stop; /* cond_stop: early exit by conditional rendering */
	uint32_t att_gqa_from; /* split_kv: the grouped kernel from this
				* many positions (0: never) */
	bool stats; /* stats: print each pipeline's driver statistics */
	bool few_rows; /* few_rows: batched runs of few rows on matvec_fused */
	bool few_shared; /* few_shared: there, each weight loaded once for
			  * all the rows of a workgroup (matvec_fused PR) */
	uint32_t few_pr; /* few_pr: the most rows a workgroup (0: VK_FEW_PR) */
	uint32_t few_nr; /* few_nr: rows of W a subgroup there (0: VK_FEW_NR) */
	uint32_t few_wg, few_unroll; /* few_wg, few_unroll: with few_xg, the
				      * workgroup size (0: VK_FEW_WG_XG) and
				      * units a lane loads ahead (0: mv_unroll) */
	uint32_t few_mma; /* few_mma: passes of at least this many rows (with
			   * few_xg, on a device with int8 matrix products)
			   * run matvec_few_cm.comp (0: never; VK_FEW_MMA) */
	uint32_t few_mma_sg; /* few_mma_sg: its subgroups a workgroup (0: by
			      * the matrix, few_mma_nsg) */
	uint32_t few_xg; /* few_xg: there, Q4_0 and Q8_0 over rows of at
			  * least this many values read x as int8 that one
			  * quantize_rows left (0: never; VK_FEW_XG_K) */
	bool defer_norms; /* defer_norms: a post-norm and its add applied by
			   * the next fused norm (matvec_fused PEND) rather
			   * than by the last workgroup of the matvec (TAIL) */
	bool pend_one_pass; /* pend_one_pass: PEND loads what a thread
			     * stages before its one reduction, where that
			     * fits (else, and with 0, y in a pass first) */
};
/* att_gqa_from's default: H100 measurements in doc/vulkan.md */
#define VK_ATT_GQA_FROM 512

struct vk_ctx {
	VkInstance inst;
	VkDebugUtilsMessengerEXT messenger;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	uint32_t qfamily;
	VkCommandPool cmd_pool;
	VkCommandBuffer xfer; /* one-shot copies and fills */
	VkFence fence;
	/* gated runs (gated.c): token slot i's gate waits on gate_ev[i % 2],
	 * which the host sets; a fence per slot in flight */
	VkEvent gate_ev[2];
	bool gate_set[2];
	VkFence gate_fence[2];
	VkPipelineCache cache;
	VkDescriptorSetLayout dsl[VK_FMV_BINDINGS + 1]; /* by n_bind */
	VkPipelineLayout pl[VK_FMV_BINDINGS + 1];
	/* by shader: the backend's, then architecture plugins' (ext.c) */
	VkShaderModule module[VK_SH_COUNT + VK_EXT_MAX];
	VkPipeline pipe[VK_SH_COUNT + VK_EXT_MAX];
	const struct belt_arch_op *ext[VK_EXT_MAX];
	struct vk_op ext_op[VK_EXT_MAX];
	struct belt_kernel ext_kernel[VK_EXT_MAX];
	unsigned n_ext;
	/* specialized pipelines made so far (fused matvecs, matmul_cm's
	 * tiles), by shader, bindings and constants */
	struct vk_spipe {
		uint32_t sh, n_bind, spec[VK_SPEC_MAX];
		VkPipeline pipe;
	} spipe[VK_SPIPE_MAX];
	uint32_t n_spipe;
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties mem;
	uint64_t max_alloc;
	uint32_t subgroup; /* subgroupSize */
	bool sg_shuffle;   /* subgroup shuffles in compute shaders */
	uint32_t mv_nr[VK_FMV_TYPES]; /* matvec_fused: rows per subgroup
				       * (NR), by weight type */
	uint32_t mv_rpw[VK_FMV_TYPES]; /* per workgroup, by weight type */
	uint32_t mv_swz;   /* 1: x swizzled in shared (matvec_fused SWZ) */
	uint32_t mv_wg[VK_FMV_TYPES]; /* matvec_fused threads per workgroup,
				       * by weight type (VK_SH_FMV_* order) */
	uint32_t mv_tile[VK_FMV_TYPES]; /* matvec_fused: floats of x in
					 * shared (TILE), by weight type */
	uint32_t mv_unr[VK_FMV_TYPES]; /* matvec_fused: units loaded at
					* once (UNR), by weight type */
	uint32_t mv_ks[VK_FMV_TYPES];	/* matvec_fused: subgroups per row
					 * (KS), by weight type ... */
	uint32_t mv_ks_k[VK_FMV_TYPES]; /* ... for k at least this */
	unsigned q8x; /* matvecs with x as int8 (VK_SH_FMV_Q4_0_XQ,
		       * VK_SH_FMV_Q8_0_XQ): VK_Q8X_* bits */
	bool coopmat; /* batched products on the matrix units (vk_coopmat
		       * and the coopmat setting) */
	bool coopmat_int8; /* and Q4_0/Q8_0 ones in int8 there
			    * (vk_coopmat_int8, coopmat_int8) */
	bool no_map; /* the staging setting */
	/* early exit (the stop word) by conditional rendering: each token
	 * slot's dispatches are skipped when it is set, and the shaders do
	 * not read it (VK_STOP_SPEC_ID 0); NULL: the shaders read it */
	PFN_vkCmdBeginConditionalRenderingEXT cond_begin;
	PFN_vkCmdEndConditionalRenderingEXT cond_end;
	bool stats;  /* the stats setting, where the device can (stats.c) */
	bool profile; /* BELT_BACKEND_PROFILE (the profile setting: tune) */
	struct vk_tuning tune;

	/* staging, allocated on first use */
	VkBuffer stage;
	VkDeviceMemory stage_mem;
	void *stage_map;
	uint64_t stage_size;

	/* validation */
	int validation; /* 0 off, 1 count, 2 fatal */
	unsigned n_messages;
	char first_message[256];
};

struct belt_buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	void *map;	   /* persistently mapped, or NULL */
	uint64_t size;	   /* as asked */
	uint64_t alloc;	   /* the VkBuffer's size */
	bool io;	   /* BELT_BUFFER_IO: the host may read it any time */
	bool cached;	   /* mapped memory the host reads through its caches */
	/* ranges table_prepare converted to the GPU weight layout (repack.c) */
	struct vk_repacked *rp;
	uint32_t n_rp, cap_rp;
};

/* One range of a buffer in the GPU weight layout. */
struct vk_repacked {
	uint64_t lo, hi;
	int type;
};

/* Device (device.c): create() and destroy() of the ops table. */
int vk_create(const struct belt_backend_options *opt, void **out,
	      char *err, size_t errsz);
void vk_destroy(void *vctx);
/* The physical device's queue families, at most max of them into qf;
 * returns how many. */
uint32_t vk_queue_families(const struct vk_ctx *ctx, VkQueueFamilyProperties *qf, uint32_t max);
/* In validation mode, anything the layer said fails the current call. */
int vk_check_messages(struct vk_ctx *ctx, const char *what, char *err,
		      size_t errsz);

/* Tuning (tuning.c). Read and check every setting of opt (and its
 * variable) into ctx->tune; an unknown key or a bad value is an error
 * naming it. */
int vk_tune_read(struct vk_ctx *ctx, const struct belt_backend_options *opt,
		 char *err, size_t errsz);
/* At table_prepare: fuse and profile (BELT_VK_FUSE and BELT_VK_PROFILE as
 * they are now, else the file's; profile also under BELT_BACKEND_PROFILE). */
int vk_tune_prepare(const struct vk_ctx *ctx, bool *fuse, bool *profile,
		    char *err, size_t errsz);
/* matvec_fused's parameters by variant into ctx (mv_*), for device
 * properties p and ctx->subgroup. */
void vk_tune_matvec(struct vk_ctx *ctx, const VkPhysicalDeviceProperties *p);
/* The q8x bits the device can run (ctx->phys chosen). */
unsigned vk_tune_q8x(const struct vk_ctx *ctx);

/* Pipeline statistics (stats.c): whether device d can give them
 * (VK_KHR_pipeline_executable_properties), and one line on stderr of
 * what the driver says of pipe, shader sh specialized by spec[0..n_spec). */
bool vk_stats_supported(VkPhysicalDevice d);
void vk_stats_print(struct vk_ctx *ctx, enum vk_shader sh,
		    const uint32_t *spec, uint32_t n_spec, VkPipeline pipe);

/* Buffers (buffers.c): the ops table's, and a barrier between everything
 * earlier on the queue and everything after (shaders, copies, host). */
int vk_buffer_create(void *vctx, enum belt_buffer_usage usage,
		     uint64_t size, struct belt_buffer **out, char *err,
		     size_t errsz);
void vk_buffer_destroy(void *vctx, struct belt_buffer *b);
int vk_buffer_write(void *vctx, struct belt_buffer *b, uint64_t offset,
		    const void *src, uint64_t size, char *err, size_t errsz);
int vk_buffer_read(void *vctx, struct belt_buffer *b, uint64_t offset,
		   void *dst, uint64_t size, char *err, size_t errsz);
/* belt_backend_ops.buffer_copy: the regions in one transfer submission */
int vk_buffer_copy(void *vctx, const struct belt_copy *r, uint32_t n, char *err, size_t errsz);
void vk_barrier_all(VkCommandBuffer cb);

/* The name of a VkResult. */
const char *vk_result(VkResult r);
/* Make a buffer of size bytes (host: mappable); what names it in errors. */
enum { VK_HOST_NEAR = 1, VK_HOST_CACHED = 2 }; /* vk_buf_make's host */
int vk_buf_make(struct vk_ctx *ctx, const char *what, int host,
		uint64_t size, struct belt_buffer *b, char *err, size_t errsz);
/* Free what vk_buf_make made (not b itself). */
void vk_buf_free(struct vk_ctx *ctx, struct belt_buffer *b);
/* Begin recording ctx->xfer; vk_xfer_end submits it and waits. */
int vk_xfer_begin(struct vk_ctx *ctx, char *err, size_t errsz);
int vk_xfer_end(struct vk_ctx *ctx, char *err, size_t errsz);
/* Create (once) the plain pipeline of shader sh with n_bind bindings. */
int vk_pipeline_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		    char *err, size_t errsz);
/* The pipeline of shader sh with n_bind bindings and its specialization
 * constants 0 .. n - 1 set to spec (made once; pipelines.c). */
/* groups workgroups as a grid of *gx by *gy within the device's limit
 * on x (a kernel numbers them wg_id(), skipping those past groups). */
void vk_grid_xy(const struct vk_ctx *ctx, uint64_t groups, uint32_t *gx, uint32_t *gy);
int vk_spec_pipeline(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		     const uint32_t *spec, uint32_t n, VkPipeline *out,
		     char *err, size_t errsz);
/* The matvec_fused pipeline of shader sh (VK_SH_FMV_*) specialized for
 * flags, nseg segments and ks subgroups per row (made once; pipelines.c). */
int vk_fused_pipeline(struct vk_ctx *ctx, enum vk_shader sh, uint32_t flags,
		      uint32_t nseg, uint32_t ks, VkPipeline *out, char *err,
		      size_t errsz);
/* The same for a pass of few rows (its BAT 1), pr of them a workgroup (its PR), nr
 * rows of W a subgroup, with x staged tile values at a time, or (xg)
 * read as int8 from memory (its XG); flags 0 or (xg) ADD; wg threads a
 * workgroup, unr units a lane loads ahead. */
int vk_fused_pipeline_pr(struct vk_ctx *ctx, enum vk_shader sh, uint32_t ks,
			 uint32_t pr, uint32_t nr, uint32_t tile, bool xg, uint32_t flags,
			 uint32_t wg, uint32_t unr, VkPipeline *out, char *err, size_t errsz);

/* Convert the Q8_0/Q4_0/Q6_K weights at b[offset, offset + size), n_blocks
 * blocks of type, to the GPU layout once (repack.c); an overlapping range
 * converted with another extent is an error. */
int vk_repack(struct vk_ctx *ctx, struct belt_buffer *b, uint64_t offset,
	      uint64_t size, int type, char *err, size_t errsz);
/* Where a converted range of size bytes of type keeps its scales, in
 * 16-bit words from its start: after every block's quants. */
uint32_t vk_repacked_scales(int type, uint64_t size);
/* Whether b[offset, offset + size) overlaps a converted range. */
bool vk_repacked_overlaps(const struct belt_buffer *b, uint64_t offset,
			  uint64_t size);

/* The kernel of an architecture plugin's op (belt/arch.h) that has a
 * shader, made on first use; NULL when none has op (or variant is not the
 * default). Whether k is one of them. The code of shader sh, the
 * backend's or, from VK_SH_COUNT on, a plugin's. (ext.c) */
const struct belt_kernel *vk_ext_kernel(struct vk_ctx *ctx, const char *op, const char *variant);
bool vk_ext_owns(const struct vk_ctx *ctx, const struct belt_kernel *k);
struct vk_spirv vk_shader_code(const struct vk_ctx *ctx, int sh);

#endif
