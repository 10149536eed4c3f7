/* plugins/backend-vulkan/plan.h: a prepared table (t->priv) and its
 * commands, shared by backend.c (table prepare/release/run), record.c,
 * fusion.c, profile.c and batch.c (batched tables). */
#ifndef BELT_VK_PLAN_H
#define BELT_VK_PLAN_H

#include "ctx.h"

/* A prepared command. */
struct vk_cmd {
	VkPipeline pipe;
	VkPipelineLayout layout;
	VkDescriptorSet set;
	struct vk_pc pc;
	uint32_t gx, gy; /* workgroups (a batched table's: per row, or x the
			  * tiles of rows; see rows_dim) */
	uint32_t gz;	 /* batched, VK_ROWS_Z: a layer per row of the table */
	enum vk_rows_dim rows_dim;
	bool head;
	bool barrier; /* later commands need this one's results */
	/* the kernel for tokens after plan.long_from positions (split_kv's
	 * grouped attention): its pipeline, aux words 0, 1 and grid; its work
	 * area long_aux[2] words after the command's (aux word 2) */
	bool has_long;
	VkPipeline long_pipe;
	uint32_t long_aux[3], long_gx, long_gy;
	/* a batched table's matvec for passes of at most VK_FEW_ROWS rows:
	 * matvec_fused per row, the rows of a weight group side by side
	 * (fusion.c, vk_few_rows_make); its own bindings and constants */
	bool has_few;
	VkPipeline few_pipe;
	VkPipelineLayout few_layout;
	VkDescriptorSet few_set;
	struct vk_pc few_pc;
	uint32_t few_gx, few_gy;
	/* ... and the same matvec on the int8 matrix units for passes of at
	 * least few_mma rows (matvec_few_cm.comp; few_set's bindings) */
	bool has_few_cm;
	VkPipeline few_cm_pipe;
	struct vk_pc few_cm_pc;
	uint32_t few_cm_gx, few_cm_gy;
	/* few_xg: that kernel reads x as int8 from the plan's xq, which
	 * quantize_rows (XQ 1: its pipeline, set, constants, grid) writes
	 * first unless the dispatch before left the same x there
	 * (few_xg_shared) */
	bool few_xg, few_xg_shared;
	VkPipeline fq_pipe;
	VkDescriptorSet fq_set;
	struct vk_pc fq_pc;
	uint32_t fq_gx;
	/* ... computing x from the inputs of core command fq_src, which the
	 * few-row pass then leaves out (dispatch before this one): 0 none,
	 * 1 silu_mul, 2 gelu_mul, 3 rmsnorm; few_add: the kernel does the
	 * add after it (core command few_add_cmd), left out there too */
	uint32_t fq_from, fq_src;
	bool few_add;
	uint32_t few_add_cmd;
	/* a batched table's matvec on the int8 matrix units (matmul_q8cm):
	 * its x as int8 in the plan's xq buffer, by quantize_rows first
	 * (its pipeline, set, constants and grid), which the pass records
	 * unless the command before left the same x there (pre_shared) */
	bool has_pre, pre_shared;
	VkPipeline pre_pipe;
	VkPipelineLayout pre_layout;
	VkDescriptorSet pre_set;
	struct vk_pc pre_pc;
	uint32_t pre_gx, pre_gz;
	/* has_glu: the quantize_rows computes x from the g and u of a
	 * silu_mul or gelu_mul (core command glu_cmd); has_add: the product
	 * does the add after it (core command add_cmd; binding 3 its r).
	 * The passes that run the product leave that op out: its
	 * skip_full, skip_few say whether the full and the few-row passes
	 * do (record.c) */
	bool has_glu, has_add, skip_full, skip_few;
	uint32_t glu_cmd, add_cmd;
	uint8_t n_bind;	 /* descriptor bindings (8 for fused commands) */
	bool work_b7;	 /* matvec_fused TAIL: binding 7 is the work buffer
			  * (its counter at word aux[2]) */
	bool spare_b12;	 /* matvec_fused PEND: binding 12 is the plan's spare
			  * copy of a residual */
	bool spare_b13;	 /* matvec_fused COPY: binding 13 is */
	char kind[48];	 /* for the profile: "norm+matvec3 q4_0" */
};

/* Which commands a recorded pass holds: all of them, all but the head's,
 * or (batched tables) the head's for the pass's last row only. */
/* VK_VAR_WIDE: the few-row pass (VK_VAR_FULL) with the matrix units'
 * few-row kernels where a command has one (few_cm_pipe) */
enum vk_variant { VK_VAR_FULL, VK_VAR_NOHEAD, VK_VAR_LAST, VK_VAR_WIDE };

/* What table_prepare makes: t->priv. */
struct plan {
	struct vk_cmd *cmds;
	uint32_t n_cmds;
	uint32_t max_run; /* token slots recorded; 1 (a pass) when batched */
	uint32_t rows;	  /* the table's rows: 1, or a batched table's */
	uint64_t max_pos;
	uint32_t seq_ctx; /* a table of sequences: a sequence's positions */
	VkDescriptorPool dpool;
	struct belt_buffer *meta;
	struct belt_buffer *work; /* per-command scratch, VK_WORK_BINDING */
	struct belt_buffer *spare; /* matvec_fused PEND's copy of a residual */
	struct belt_buffer *xq;	   /* batched: x as int8 for matmul_q8cm */
	VkCommandBuffer start, tail; /* barrier in; barrier out to the host */
	VkCommandBuffer *full;	     /* [max_run]: token slot t, all commands */
	VkCommandBuffer *nohead;     /* [max_run]: without head commands */
	VkCommandBuffer last;	     /* batched: the head for the last row */
	/* batched: the pass with every row's head again, for runs of at most
	 * VK_FEW_ROWS rows (NULL: no command has a few-row kernel) */
	VkCommandBuffer few_full;
	/* ... and for runs of at least few_mma rows, with the matrix units'
	 * few-row kernels (NULL: no command has one) */
	VkCommandBuffer few_wide;
	VkCommandBuffer *submit;     /* [max_run + 2]: what a run submits */
	/* one-row tables with a command that has a long-context kernel:
	 * the slots again with it, for tokens whose cache holds at least
	 * long_from positions (0: none recorded) */
	uint32_t long_from;
	VkCommandBuffer *full_long, *nohead_long; /* [max_run] */
	uint32_t n_orig;	     /* commands of the core's table */
	/* a one-row table with t->gate: each slot waits at cmds[gate_cmd]
	 * (the first to run the core's gate command or one after it) for
	 * gate_ev[slot % 2], set by the host (gated.c) */
	bool gated;
	uint32_t gate_cmd;
	VkEvent gate_ev[2];
	VkCommandBuffer tail2; /* gated: tail for odd slots (two in flight) */
	/* the context's conditional rendering (NULL: the shaders read the
	 * stop word): each recorded slot's dispatches skipped once it is set */
	PFN_vkCmdBeginConditionalRenderingEXT cond_begin;
	PFN_vkCmdEndConditionalRenderingEXT cond_end;

	/* BELT_VK_PROFILE: per slot and variant (full, nohead; batched:
	 * full, nohead, last) n_cmds + 1 timestamps; sums per command, read
	 * back after each run */
	VkQueryPool qpool;
	uint64_t *qbuf;	  /* [n_cmds + 1] */
	uint64_t *ticks;  /* [n_cmds] */
	uint64_t *calls;  /* [n_cmds] */
	uint64_t ts_mask;
	double ns_per_tick;
	uint64_t runs, tokens, slot_ticks;
	double wall_ns, submit_ns; /* per run: all of it; to vkQueueSubmit's return */
};

/* gated.c: open both gates of a gated plan, so that a plain run goes
 * through them; the backend's table_run_gated. */
int vk_gates_open(struct vk_ctx *ctx, char *err, size_t errsz);
int vk_table_run_gated(void *vctx, struct belt_table *t, uint32_t pos, uint32_t n,
		       int (*gate_fn)(void *ud, uint32_t i), void *ud, char *err,
		       size_t errsz);

/* Ranges of buffers a dispatch reads or writes, for the barrier analysis
 * (record.c): the commands since the last barrier. */
#define GROUP_MAX 64

/* matvec_fused's COPY flag (fusion.c, shaders/matvec_fused.comp) */
#define VK_FMV_F_COPY 512u

struct range {
	const struct belt_buffer *buf;
	uint64_t lo, hi;
	bool write;
};

struct group {
	struct range r[GROUP_MAX];
	int n;
};

/* Whether any of r[0..n) conflicts with g (one of them writes). */
bool vk_conflicts(const struct group *g, const struct range *r, int n);
/* r[]: the ranges of cmd's bindings (writes: its written bindings mask);
 * their count. */
int vk_ranges_of(const struct belt_cmd *cmd, uint8_t writes, struct range *r);
/* The range binding b covers, read or written. */
struct range vk_bind_range(const struct belt_binding *b, bool write);
/* Record a barrier into cb; with work, first a barrier and clearing the
 * work buffer's stop word (cond: made visible to conditional rendering). */
int vk_record_barrier(VkCommandBuffer cb, struct belt_buffer *work, bool cond,
		      char *err, size_t errsz);

/* Fusion (fusion.c): a group of commands one matvec_fused dispatch runs. */
struct fgroup {
	int norm;      /* rmsnorm folded in, or -1 */
	uint32_t mv[3];
	int nmv;
	int tail;      /* the silu_mul, gelu_mul, add, rope_kv or (rope
			* pieces) kv_store folded in, or -1 */
	int rope;      /* ROPE from pieces: the rope of q (then that of k,
			* then kv_store, the tail), or -1 */
	uint32_t flags;
	int res;       /* ADD, TAIL: the add's binding that is the residual */
	int tnorm;     /* TAIL: the rmsnorm of the matvec's output whose
			* result the tail's add puts into the residual, or
			* -1 */
	int pend;      /* PEND: the rmsnorm of y (then the add into the
			* residual, then the norm), or -1 */
	int pres;      /* PEND: the add's binding that is the residual */
	int copy_at;   /* PEND: the matvec whose dispatch copies r back */
	int copy_add, copy_res; /* COPY (set by the caller): the add of the
				 * PEND group and its residual binding */
	int bias;      /* BIAS: the bias_add of q (then those of k and v),
			* or -1 */
	uint32_t last; /* the last command of the group */
	bool norm_next; /* the rmsnorm's output is read by the matvec after
			 * the group too (another weight type): the next
			 * group fuses the same rmsnorm */
};

/* Whether c runs op. */
bool vk_is_op(const struct belt_cmd *c, const char *op);

/* A batched table's moe_matvecs grouped by expert where their moe_route
 * and they each cover all rows in one dispatch: their pipelines, grids
 * and the route's and their aux words changed in oc (moe.c). */
int vk_moe_group(struct vk_ctx *ctx, const struct belt_table *t, struct vk_cmd *oc,
		 const struct vk_prep *preps, uint32_t rows, char *err, size_t errsz);
/* Whether bindings a and b are the same range of one buffer. */
bool vk_same_bind(const struct belt_binding *a, const struct belt_binding *b);
/* Whether the ranges of bindings a and b (neither empty) share a byte. */
bool vk_bind_overlap(const struct belt_binding *a, const struct belt_binding *b);
/* Which input of add a is the residual it adds y into: 0 or 1, -1 if y
 * is neither of its inputs. */
int vk_residual_of(const struct belt_cmd *a, const struct belt_binding *y);
/* Whether the first bytes of binding b are dead after command last of t
 * (written whole before any command reads them, going round the table to
 * first): what last's group may leave unwritten. */
bool vk_dead_after(const struct belt_table *t, const uint8_t *writes, uint32_t first,
		   uint32_t last, const struct belt_binding *b, uint64_t bytes);
/* Whether matvec_fused can compute matvec m (prepared as oc; rp: its
 * Q8_0/Q4_0/Q6_K weights are in the GPU layout). */
bool vk_fusable_matvec(const struct belt_cmd *m, const struct vk_cmd *oc,
		       bool rp);
/* The bindings group g writes, into out (4 at most); their count. */
int vk_group_outputs(const struct belt_table *t, const struct fgroup *g,
		     const struct belt_binding **out);
/* A group of t's commands from i that one matvec_fused dispatch computes
 * the same way, into g; false if none (oc: the commands prepared, rp:
 * weights converted, writes: written bindings masks; norm: the rmsnorm
 * the previous group left for this one to fuse too (its norm_next), or
 * -1). */
bool vk_fuse_find(const struct vk_ctx *ctx, const struct belt_table *t,
		  const struct vk_cmd *oc, const bool *rp,
		  const uint8_t *writes, uint32_t i, int norm, struct fgroup *g);
/* The fused command c for group g, and its descriptor infos bi from the
 * originals' (obi). */
/* A batched table's matvec m (its prepared command oc, bindings obi) for
 * runs of at most VK_FEW_ROWS rows: matvec_fused alone, each workgroup
 * one row of the pass, the rows of a weight group side by side, so the
 * weights are read from memory about once. Fills c's few_* (the set is
 * written later from fbi: x, x, W x3, y x3); few_xg where it reads x as
 * int8 from the plan's xq (cap rows of k bytes, then their scales: the
 * caller sets up the quantize_rows and binding 0); with add (only there)
 * it adds its sums into y (the caller binds an add's residual). */
int vk_few_rows_make(struct vk_ctx *ctx, const struct belt_cmd *m, const struct vk_cmd *oc,
		     const VkDescriptorBufferInfo *obi, struct vk_cmd *c,
		     VkDescriptorBufferInfo *fbi, uint32_t cap, bool add, char *err, size_t errsz);
/* Whether matvec m's few-row kernel reads x as int8 (few_xg). */
bool vk_few_xg(const struct vk_ctx *ctx, const struct belt_cmd *m);
int vk_fuse_make(struct vk_ctx *ctx, const struct belt_table *t,
		 const struct vk_cmd *oc,
		 VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		 const struct fgroup *g, struct vk_cmd *c,
		 VkDescriptorBufferInfo *bi, char *err, size_t errsz);
/* The sampler's commands from i fused into its argmax: c, bi, the ranges
 * r (*nr) and *used (commands taken); false if none starts at i; *failed
 * (with err) if one does but has no pipeline. */
bool vk_sample_fuse(struct vk_ctx *ctx, const struct belt_table *t,
		    const struct vk_cmd *oc,
		    VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		    uint32_t i, struct vk_cmd *c, VkDescriptorBufferInfo *bi,
		    struct range *r, int *nr, uint32_t *used, bool *failed,
		    char *err, size_t errsz);

/* rmsnorm at i whose output only the next command, an add into a
 * residual, reads: one rmsnorm.comp -DADD dispatch (Gemma's post-norms),
 * with the rmsnorm of that residual after them where norm2_ok (its
 * dispatch not split into ranges of rows) and vk_norm_add_norm_at
 * (-DNORM2). c, bi, the ranges r (*nr), *used (commands taken: 2 or 3);
 * false if none starts at i; *failed (with err) if one does but has no
 * pipeline. */
bool vk_norm_add_fuse(struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc,
		      VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		      const uint8_t *writes, uint32_t i, bool norm2_ok, struct vk_cmd *c,
		      VkDescriptorBufferInfo *bi, struct range *r, int *nr,
		      uint32_t *used, bool *failed, char *err, size_t errsz);
/* Whether commands i .. i + 2 are an rmsnorm, the add of its output into
 * a residual r, and an rmsnorm of r, which one rmsnorm.comp -DADD -DNORM2
 * dispatch does (Gemma's post-norms and the norm after each; in a one-row
 * table the last post-norm and the output norm, the matvec before then
 * leaving them to it instead of its TAIL). */
bool vk_norm_add_norm_at(const struct belt_table *t, const uint8_t *writes, uint32_t i);

/* embed at i then a scale of the rows it wrote (Gemma's sqrt(n_embd)):
 * one embed.comp dispatch that multiplies as it writes. c, bi, the
 * ranges r (*nr); false if none starts at i. Takes 2 commands. */
bool vk_embed_scale_fuse(const struct belt_table *t, const struct vk_cmd *oc,
			 VkDescriptorBufferInfo (*obi)[VK_SET_MAX], const uint8_t *writes,
			 uint32_t i, struct vk_cmd *c, VkDescriptorBufferInfo *bi,
			 struct range *r, int *nr);

/* From i: bias_add of q, k and v, or rmsnorm_heads of q and k, or
 * neither, then rope of q and of k and kv_store, as one qkv_rope.comp
 * dispatch (a z layer per row of a batched table). c, bi, the ranges r (*nr), *used (commands taken); false if
 * none starts at i; *failed (with err) if one does but has no pipeline. */
bool vk_qkv_fuse(struct vk_ctx *ctx, const struct belt_table *t,
		 const struct vk_cmd *oc,
		 VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		 const uint8_t *writes, uint32_t i, struct vk_cmd *c,
		 VkDescriptorBufferInfo *bi, struct range *r, int *nr, uint32_t *used,
		 bool *failed, char *err, size_t errsz);

/* Profiling (profile.c): the query pool of a prepared plan (a note on
 * stderr, and no profile, where the queue has no timestamps); after a run
 * of a one-row table, its n slots' timestamps added up; the table of
 * times per command kind to stderr. */
int vk_profile_setup(struct vk_ctx *ctx, struct plan *pl, char *err,
		     size_t errsz);
void vk_profile_collect(struct vk_ctx *ctx, struct plan *pl, uint32_t n);
void vk_profile_print(const struct plan *pl);

/* Record token slot t (batched tables: the pass, t 0) of variant v into
 * cb, its timestamps (when profiling) from query qbase; lng: with the
 * long-context kernels of the commands that have one; record.c. */
int vk_record_pass(struct plan *pl, VkCommandBuffer cb, uint32_t t, bool lng,
		   enum vk_variant v, uint32_t qbase, char *err, size_t errsz);
/* Allocate n primary command buffers. */
int vk_alloc_cbs(struct vk_ctx *ctx, VkCommandBuffer *out, uint32_t n,
		 char *err, size_t errsz);
/* After a run: add one recorded pass's timestamps (profile.c) (from query qbase; the
 * head commands did not run when nohead). */
void vk_profile_add(struct vk_ctx *ctx, struct plan *pl, uint32_t qbase,
		    bool nohead);

/* Batched tables (batch.c). Rows per dispatch of cmd into
 * pr->chunk_rows: all of them, or as many as keep each of its row
 * bindings within the device's maxStorageBufferRange (the logits of a
 * large vocabulary on lavapipe). */
int vk_batch_chunk_rows(const struct vk_ctx *ctx, const struct belt_cmd *cmd,
			struct vk_prep *pr, char *err, size_t errsz);
/* Dispatch c of cmd, split so: its rows' descriptors (bi) and grid from
 * the whole command's (whole, wbi). */
void vk_batch_chunk(const struct vk_ctx *ctx, const struct belt_cmd *cmd,
		    const struct vk_prep *pr, const struct vk_cmd *whole,
		    const VkDescriptorBufferInfo *wbi, uint32_t c,
		    struct vk_cmd *out, VkDescriptorBufferInfo *bi);
/* Record the pass's three variants; run a pass over n rows at pos
 * (table_run's checks, meta, submit, wait). */
int vk_batch_record(struct vk_ctx *ctx, struct plan *pl, char *err,
		    size_t errsz);
int vk_batch_run(struct vk_ctx *ctx, const struct belt_table *t,
		 struct plan *pl, uint32_t pos, uint32_t n, uint32_t flags,
		 char *err, size_t errsz);

#endif
