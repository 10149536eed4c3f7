/* The GPU weight layout for Q8_0, Q4_0 and Q6_K (doc/vulkan.md).
 *
 * A GGUF block is a half scale then its quants (34 or 18 bytes), so no
 * 16-byte load of a row is aligned. At table_prepare the backend rewrites
 * each quantized weight range that a matvec or embed reads, in place and
 * once: all the range's block quants first (32 or 16 bytes each, in block
 * order), then all its scales. The size is unchanged; shaders that read
 * such a range (matvec_fused, embed with -DREPACK) find block j's quants at
 * j * 32 (or 16) bytes and its scale at blocks * 32 (or 16) + 2 j. Q6_K's
 * 210-byte blocks likewise: quants (192 bytes each), then the 16 scale
 * bytes of each block, then each d. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"

uint32_t vk_repacked_scales(int type, uint64_t size)
{
	uint64_t bb = belt_type_block_bytes(type);
	if (type == BELT_TYPE_Q6_K)
		return (uint32_t)(size / bb * 96); /* 192 of 210 bytes */
	return (uint32_t)(size / bb * (bb - 2) / 2);
}

bool vk_repacked_overlaps(const struct belt_buffer *b, uint64_t offset,
			  uint64_t size)
{
	for (uint32_t i = 0; i < b->n_rp; i++)
		if (offset < b->rp[i].hi && b->rp[i].lo < offset + size)
			return true;
	return false;
}

/* One dispatch of shaders/repack.comp from tmp (a copy) into b. */
static int repack_run(struct vk_ctx *ctx, struct belt_buffer *b,
		      uint64_t offset, uint64_t size, struct belt_buffer *tmp,
		      enum vk_shader sh, uint64_t blocks, char *err,
		      size_t errsz)
{
	if (vk_pipeline_for(ctx, sh, 2, err, errsz))
		return -1;
	VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
				   .descriptorCount = 4};
	VkDescriptorPoolCreateInfo dpi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = 1,
		.poolSizeCount = 1,
		.pPoolSizes = &ps,
	};
	VkDescriptorPool pool;
	VKCHECK(vkCreateDescriptorPool(ctx->dev, &dpi, NULL, &pool),
		"vkCreateDescriptorPool");
	VkDescriptorSetAllocateInfo dai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = pool,
		.descriptorSetCount = 1,
		.pSetLayouts = &ctx->dsl[2],
	};
	VkDescriptorSet set;
	VkResult r = vkAllocateDescriptorSets(ctx->dev, &dai, &set);
	if (r != VK_SUCCESS) {
		vkDestroyDescriptorPool(ctx->dev, pool, NULL);
		return belt_errf(err, errsz,
				 "vulkan: vkAllocateDescriptorSets: %s",
				 vk_result(r));
	}
	/* dst is bound from the offset rounded down to the device's
	 * alignment (a multiple of 2 bytes, as a block is) */
	uint64_t align = ctx->props.limits.minStorageBufferOffsetAlignment;
	if (!align)
		align = 1;
	uint64_t at = offset / align * align;
	/* meta and work are not used: any buffer will do */
	VkDescriptorBufferInfo bi[4] = {
		{.buffer = tmp->buf, .offset = 0, .range = size},
		{.buffer = b->buf, .offset = at, .range = offset - at + size},
		{.buffer = tmp->buf, .offset = 0, .range = VK_WHOLE_SIZE},
		{.buffer = tmp->buf, .offset = 0, .range = VK_WHOLE_SIZE},
	};
	VkWriteDescriptorSet w[4];
	for (int i = 0; i < 4; i++)
		w[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = set,
			.dstBinding = i < 2    ? (uint32_t)i
				      : i == 2 ? VK_META_BINDING
					       : VK_WORK_BINDING,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &bi[i],
		};
	vkUpdateDescriptorSets(ctx->dev, 4, w, 0, NULL);

	struct vk_pc pc;
	memset(&pc, 0, sizeof pc);
	pc.o[1] = (uint32_t)((offset - at) / 2);
	pc.p[0] = (uint32_t)blocks;
	uint32_t gx, gy;
	vk_grid_xy(ctx, (blocks + 127) / 128, &gx, &gy);
	int rc = vk_xfer_begin(ctx, err, errsz);
	if (!rc) {
		VkBufferCopy bc = {.srcOffset = offset, .dstOffset = 0,
				   .size = size};
		vkCmdCopyBuffer(ctx->xfer, b->buf, tmp->buf, 1, &bc);
		VkMemoryBarrier mb = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
					 VK_ACCESS_SHADER_WRITE_BIT,
		};
		vkCmdPipelineBarrier(ctx->xfer, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
				     1, &mb, 0, NULL, 0, NULL);
		vkCmdBindPipeline(ctx->xfer, VK_PIPELINE_BIND_POINT_COMPUTE,
				  ctx->pipe[sh]);
		vkCmdBindDescriptorSets(ctx->xfer,
					VK_PIPELINE_BIND_POINT_COMPUTE,
					ctx->pl[2], 0, 1, &set, 0, NULL);
		vkCmdPushConstants(ctx->xfer, ctx->pl[2],
				   VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc,
				   &pc);
		vkCmdDispatch(ctx->xfer, gx, gy, 1);
		rc = vk_xfer_end(ctx, err, errsz);
	}
	vkDestroyDescriptorPool(ctx->dev, pool, NULL);
	return rc;
}

int vk_repack(struct vk_ctx *ctx, struct belt_buffer *b, uint64_t offset,
	      uint64_t size, int type, char *err, size_t errsz)
{
	for (uint32_t i = 0; i < b->n_rp; i++) {
		const struct vk_repacked *r = &b->rp[i];
		if (r->lo == offset && r->hi == offset + size && r->type == type)
			return 0;
		if (offset < r->hi && r->lo < offset + size)
			return belt_errf(err, errsz,
					 "vulkan: weights at %" PRIu64
					 "..%" PRIu64
					 " overlap weights already converted "
					 "to the GPU layout with another "
					 "extent (%" PRIu64 "..%" PRIu64 ")",
					 offset, offset + size, r->lo, r->hi);
	}
	uint64_t bb = belt_type_block_bytes(type);
	if (offset % 2 || size % bb || size / bb > UINT32_MAX)
		return belt_errf(err, errsz,
				 "vulkan: cannot convert %" PRIu64
				 " bytes at %" PRIu64 " of %s weights",
				 size, offset, belt_type_name(type));
	if (b->n_rp == b->cap_rp) {
		uint32_t cap = b->cap_rp ? 2 * b->cap_rp : 16;
		struct vk_repacked *n = realloc(b->rp, cap * sizeof *n);
		if (!n)
			return belt_errf(err, errsz, "vulkan: out of memory");
		b->rp = n;
		b->cap_rp = cap;
	}
	struct belt_buffer tmp;
	if (vk_buf_make(ctx, "weight conversion", 0, size, &tmp, err,
			errsz))
		return -1;
	enum vk_shader sh = type == BELT_TYPE_Q8_0   ? VK_SH_REPACK_Q8_0
			    : type == BELT_TYPE_Q6_K ? VK_SH_REPACK_Q6_K
						     : VK_SH_REPACK_Q4_0;
	int rc = repack_run(ctx, b, offset, size, &tmp, sh, size / bb, err,
			    errsz);
	vk_buf_free(ctx, &tmp);
	if (rc)
		return -1;
	b->rp[b->n_rp++] = (struct vk_repacked){
		.lo = offset, .hi = offset + size, .type = type};
	return 0;
}
