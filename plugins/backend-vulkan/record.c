/* plugins/backend-vulkan/record.c: recording one-row tables: the barrier
 * analysis (which commands may run without a barrier between them), the
 * pre-recorded token slots (vk_record_pass, also a batched table's pass)
 * and the barrier command buffers around a run. */

#include "belt/error.h"
#include "plan.h"

/* ---- dependencies ----
 * As the CPU backend: a barrier goes after a command whenever the next one
 * touches what the group since the last barrier wrote, or writes what it
 * read; independent commands (q, k, v matvecs) run without one. */

bool vk_conflicts(const struct group *g, const struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->n; j++)
			if ((r[i].write || g->r[j].write) &&
			    r[i].buf == g->r[j].buf && r[i].lo < g->r[j].hi &&
			    g->r[j].lo < r[i].hi)
				return true;
	return false;
}

/* A quantize_rows dispatch (x as int8 into the plan's xq) between
 * barriers: after what read xq before, before what reads it; last: the
 * head's last row only. */
static void record_quantize(VkCommandBuffer cb, const VkMemoryBarrier *mb, VkPipeline pipe,
			    VkPipelineLayout layout, VkDescriptorSet set, struct vk_pc pc,
			    uint32_t gx, uint32_t gz, bool last)
{
	if (last) {
		pc.mode |= VK_MODE_LAST;
		gz = 1;
	}
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, mb, 0, NULL, 0, NULL);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
	vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
	vkCmdDispatch(cb, gx, 1, gz);
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, mb, 0, NULL, 0, NULL);
}

/* One token slot (a batched table's pass): every command (but the head's
 * for VK_VAR_NOHEAD; the head's for the last row only for VK_VAR_LAST),
 * with barriers where the next command depends on earlier ones; lng: the
 * long-context kernels of the commands that have one, or in a batched
 * table the pass for runs of at most VK_FEW_ROWS rows (the few-row
 * kernels, and a layer per row for VK_FEW_ROWS rows at most). */
int vk_record_pass(struct plan *pl, VkCommandBuffer cb, uint32_t t, bool lng,
		   enum vk_variant v, uint32_t qbase, char *err, size_t errsz)
{
	bool nohead = v == VK_VAR_NOHEAD;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
	if (pl->qpool) {
		vkCmdResetQueryPool(cb, pl->qpool, qbase, pl->n_cmds + 1);
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
				    pl->qpool, qbase);
	}
	bool cond = pl->cond_begin && pl->work;
	if (cond) {
		/* the slot's dispatches only while the stop word is 0, read
		 * after the barrier that ends the start (its clearing) or the
		 * slot before (its argmax): below and vk_record_barrier */
		VkConditionalRenderingBeginInfoEXT ci = {
			.sType = VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT,
			.buffer = pl->work->buf,
			.offset = 0,
			.flags = VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT,
		};
		pl->cond_begin(cb, &ci);
	}
	VkPipeline bound = VK_NULL_HANDLE;
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
				 VK_ACCESS_SHADER_WRITE_BIT,
	};
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		struct vk_cmd *c = &pl->cmds[i];
		if (pl->gated && i == pl->gate_cmd && !(nohead && c->head)) {
			/* what the host wrote before it set the event */
			VkMemoryBarrier hb = {
				.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT,
				.dstAccessMask = VK_ACCESS_SHADER_READ_BIT,
			};
			vkCmdWaitEvents(cb, 1, &pl->gate_ev[t % 2], VK_PIPELINE_STAGE_HOST_BIT,
					VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 1, &hb, 0, NULL, 0,
					NULL);
		}
		if (!(nohead && c->head)) {
			bool few = lng && pl->rows > 1;
			bool alt = lng && !few && c->has_long;
			if (few && c->has_few) {
				if (c->few_xg && !c->few_xg_shared) {
					record_quantize(cb, &mb, c->fq_pipe, c->pre_layout, c->fq_set,
							c->fq_pc, c->fq_gx, VK_FEW_ROWS,
							v == VK_VAR_LAST && c->head);
					bound = c->fq_pipe;
				}
				bool cm = v == VK_VAR_WIDE && c->has_few_cm;
				VkPipeline fp = cm ? c->few_cm_pipe : c->few_pipe;
				if (fp != bound) {
					vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, fp);
					bound = fp;
				}
				VkPipelineLayout fl = c->few_layout;
				vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, fl, 0, 1,
							&c->few_set, 0, NULL);
				struct vk_pc pc = cm ? c->few_cm_pc : c->few_pc;
				if (v == VK_VAR_LAST && c->head)
					pc.mode |= VK_MODE_LAST;
				vkCmdPushConstants(cb, fl, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc,
						   &pc);
				vkCmdDispatch(cb, cm ? c->few_cm_gx : c->few_gx,
					      cm ? c->few_cm_gy : c->few_gy, 1);
				goto done;
			}
			/* an op that a product does in this pass: a silu_mul
			 * or gelu_mul its quantize_rows computes, an add */
			if (few ? c->skip_few : c->skip_full)
				goto done;
			/* x as int8 first, unless the dispatch before left it
			 * (where its own quantize_rows ran: the few-row pass
			 * may have run another kernel for it) */
			if (c->has_pre && (!c->pre_shared || few)) {
				record_quantize(cb, &mb, c->pre_pipe, c->pre_layout, c->pre_set,
						c->pre_pc, c->pre_gx,
						few && c->pre_gz > VK_FEW_ROWS ? VK_FEW_ROWS
									 : c->pre_gz,
						v == VK_VAR_LAST && c->head);
				bound = c->pre_pipe;
			}
			VkPipeline pipe = alt ? c->long_pipe : c->pipe;
			if (pipe != bound) {
				vkCmdBindPipeline(cb,
						  VK_PIPELINE_BIND_POINT_COMPUTE,
						  pipe);
				bound = pipe;
			}
			vkCmdBindDescriptorSets(cb,
						VK_PIPELINE_BIND_POINT_COMPUTE,
						c->layout, 0, 1, &c->set, 0,
						NULL);
			struct vk_pc pc = c->pc;
			if (!(pc.mode & VK_MODE_BATCHED))
				pc.t = t; /* else its first row */
			uint32_t gx = alt ? c->long_gx : c->gx, gz = c->gz;
			uint32_t gy = alt ? c->long_gy : c->gy;
			if (alt) {
				pc.aux[0] = c->long_aux[0];
				pc.aux[1] = c->long_aux[1];
				pc.aux[2] += c->long_aux[2];
			}
			if (v == VK_VAR_LAST && c->head) {
				/* one row: n - 1 (shaders/common.glsl) */
				pc.mode |= VK_MODE_LAST;
				if (c->rows_dim == VK_ROWS_X)
					gx = 1;
				else
					gz = 1;
			}
			if (few && c->rows_dim != VK_ROWS_X && gz > VK_FEW_ROWS)
				gz = VK_FEW_ROWS;
			vkCmdPushConstants(cb, c->layout,
					   VK_SHADER_STAGE_COMPUTE_BIT, 0,
					   sizeof pc, &pc);
			vkCmdDispatch(cb, gx, gy, gz);
		}
	done:
		/* a skipped command keeps its barrier: the commands around
		 * it were grouped with it, not with each other */
		bool cond_last = cond && i + 1 == pl->n_cmds; /* the next slot reads the word */
		if (c->barrier || cond_last) {
			VkMemoryBarrier eb = mb;
			VkPipelineStageFlags dst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
			if (cond_last) {
				eb.dstAccessMask |= VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT;
				dst |= VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT;
			}
			vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst, 0, 1,
					     &eb, 0, NULL, 0, NULL);
		}
		if (pl->qpool)
			vkCmdWriteTimestamp(cb,
					    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					    pl->qpool, qbase + i + 1);
	}
	if (cond)
		pl->cond_end(cb);
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

/* A barrier; with work, first a barrier and clearing the stop word (cond:
 * a word conditional rendering reads next). */
int vk_record_barrier(VkCommandBuffer cb, struct belt_buffer *work, bool cond,
		      char *err, size_t errsz)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
	if (work) {
		vk_barrier_all(cb);
		vkCmdFillBuffer(cb, work->buf, 0, 4 * VK_WORK_RESERVED, 0);
		if (cond) {
			VkMemoryBarrier cb_mb = {
				.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
				.dstAccessMask = VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT,
			};
			vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
					     VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT, 0, 1,
					     &cb_mb, 0, NULL, 0, NULL);
		}
	}
	vk_barrier_all(cb);
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

int vk_alloc_cbs(struct vk_ctx *ctx, VkCommandBuffer *out, uint32_t n,
		 char *err, size_t errsz)
{
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = ctx->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = n,
	};
	VKCHECK(vkAllocateCommandBuffers(ctx->dev, &cai, out),
		"vkAllocateCommandBuffers");
	return 0;
}

/* ranges for the barrier analysis: a command's bindings */
struct range vk_bind_range(const struct belt_binding *b, bool write)
{
	return (struct range){.buf = b->buf, .lo = b->offset, .hi = b->offset + b->size,
			      .write = write};
}

int vk_ranges_of(const struct belt_cmd *cmd, uint8_t writes,
		     struct range *r)
{
	int nr = 0;
	for (int b = 0; b < cmd->n_bind; b++)
		if (cmd->bind[b].size)
			r[nr++] = vk_bind_range(&cmd->bind[b], writes & (1u << b));
	return nr;
}

