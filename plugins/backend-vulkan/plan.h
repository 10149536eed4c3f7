/* plugins/backend-vulkan/plan.h: a prepared table (t->priv) and its
 * commands, shared by backend.c (one-row tables, fusion, descriptors) and
 * batch.c (batched tables). */
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
	uint8_t n_bind;	 /* descriptor bindings (8 for fused commands) */
	char kind[40];	 /* for the profile: "norm+matvec3 q4_0" */
};

/* Which commands a recorded pass holds: all of them, all but the head's,
 * or (batched tables) the head's for the pass's last row only. */
enum vk_variant { VK_VAR_FULL, VK_VAR_NOHEAD, VK_VAR_LAST };

/* What table_prepare makes: t->priv. */
struct plan {
	struct vk_cmd *cmds;
	uint32_t n_cmds;
	uint32_t max_run; /* token slots recorded; 1 (a pass) when batched */
	uint32_t rows;	  /* the table's rows: 1, or a batched table's */
	uint64_t max_pos;
	VkDescriptorPool dpool;
	struct belt_buffer *meta;
	struct belt_buffer *work; /* per-command scratch, VK_WORK_BINDING */
	VkCommandBuffer start, tail; /* barrier in; barrier out to the host */
	VkCommandBuffer *full;	     /* [max_run]: token slot t, all commands */
	VkCommandBuffer *nohead;     /* [max_run]: without head commands */
	VkCommandBuffer last;	     /* batched: the head for the last row */
	VkCommandBuffer *submit;     /* [max_run + 2]: what a run submits */
	uint32_t n_orig;	     /* commands of the core's table */

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

/* Record token slot t (batched tables: the pass, t 0) of variant v into
 * cb, its timestamps (when profiling) from query qbase; backend.c. */
int vk_record_pass(struct plan *pl, VkCommandBuffer cb, uint32_t t,
		   enum vk_variant v, uint32_t qbase, char *err, size_t errsz);
/* Allocate n primary command buffers. */
int vk_alloc_cbs(struct vk_ctx *ctx, VkCommandBuffer *out, uint32_t n,
		 char *err, size_t errsz);
/* After a run: add one recorded pass's timestamps (from query qbase; the
 * head commands did not run when nohead). */
void vk_profile_add(struct vk_ctx *ctx, struct plan *pl, uint32_t qbase,
		    bool nohead);
/* In validation mode, anything the layer said fails the current call. */
int vk_check_messages(struct vk_ctx *ctx, const char *what, char *err,
		      size_t errsz);

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
