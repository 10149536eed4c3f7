/* plugins/backend-vulkan/buffers.c: buffers (one allocation each, mapped
 * where the memory allows and staging is off), the staging buffer that
 * writes and reads of unmapped buffers go through, and the one-shot
 * transfer command buffer (vk_xfer_begin/end). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "ctx.h"

#define STAGING_BYTES (64ull << 20)
#define BUF_ALIGN 256
/* reads of mapped uncached memory up to this size are copied directly
 * (a run's token ids, a pass's row outputs); larger ones go through the
 * cached staging buffer */
#define READ_UNCACHED_MAX 16384

/* ---- buffers ---- */

static const char *usage_name(enum belt_buffer_usage u)
{
	switch (u) {
	case BELT_BUFFER_WEIGHTS: return "weights";
	case BELT_BUFFER_SCRATCH: return "scratch";
	case BELT_BUFFER_KV: return "KV cache";
	case BELT_BUFFER_IO: return "IO";
	}
	return "?";
}

/* The first memory type allowed by bits that has all of `want`, trying
 * each of the preferences in order. */
static int find_memory(const struct vk_ctx *ctx, uint32_t bits,
		       const VkMemoryPropertyFlags *prefs, int n_prefs)
{
	for (int p = 0; p < n_prefs; p++)
		for (uint32_t i = 0; i < ctx->mem.memoryTypeCount; i++)
			if ((bits & (1u << i)) &&
			    (ctx->mem.memoryTypes[i].propertyFlags & prefs[p]) ==
				    prefs[p])
				return (int)i;
	return -1;
}

void vk_buf_free(struct vk_ctx *ctx, struct belt_buffer *b)
{
	if (b->buf)
		vkDestroyBuffer(ctx->dev, b->buf, NULL);
	if (b->mem)
		vkFreeMemory(ctx->dev, b->mem, NULL); /* unmaps too */
}

/* host: the buffer must be mappable: VK_HOST_NEAR (IO, meta: device-local
 * memory the host can map first, as the GPU reads and writes them every
 * token) or VK_HOST_CACHED (staging: memory the host reads at its own
 * speed first; reads of mapped device-local memory are uncached). */
int vk_buf_make(struct vk_ctx *ctx, const char *what, int host,
		       uint64_t size, struct belt_buffer *b, char *err,
		       size_t errsz)
{
	memset(b, 0, sizeof *b);
	uint64_t alloc = (size + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
	if (!alloc)
		alloc = BUF_ALIGN;
	if (alloc < size || (ctx->max_alloc && alloc > ctx->max_alloc))
		return belt_errf(err, errsz,
				 "vulkan: cannot allocate a %s buffer of "
				 "%" PRIu64 " bytes: the device allocates at "
				 "most %" PRIu64 " bytes at once",
				 what, size, ctx->max_alloc);
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = alloc,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
			 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT |
			 (ctx->cond_begin ? VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT : 0),
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkResult r = vkCreateBuffer(ctx->dev, &bci, NULL, &b->buf);
	if (r != VK_SUCCESS)
		return belt_errf(err, errsz,
				 "vulkan: cannot create a %s buffer of %" PRIu64
				 " bytes: %s",
				 what, size, vk_result(r));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(ctx->dev, b->buf, &req);
	const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	const VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	const VkMemoryPropertyFlags hc = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
	VkMemoryPropertyFlags host_prefs[] = {hv | dl, hv | hc, hv};
	VkMemoryPropertyFlags cached_prefs[] = {hv | hc, hv | dl, hv};
	VkMemoryPropertyFlags dev_prefs[] = {dl, 0};
	int type = host == VK_HOST_CACHED ? find_memory(ctx, req.memoryTypeBits, cached_prefs, 3)
		   : host		  ? find_memory(ctx, req.memoryTypeBits, host_prefs, 3)
					  : find_memory(ctx, req.memoryTypeBits, dev_prefs, 2);
	if (type < 0) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: no memory type for a %s buffer of "
				 "%" PRIu64 " bytes",
				 what, size);
	}
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = (uint32_t)type,
	};
	r = vkAllocateMemory(ctx->dev, &mai, NULL, &b->mem);
	if (r != VK_SUCCESS) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: cannot allocate a %s buffer of "
				 "%" PRIu64 " bytes: %s",
				 what, size, vk_result(r));
	}
	r = vkBindBufferMemory(ctx->dev, b->buf, b->mem, 0);
	VkMemoryPropertyFlags fl = ctx->mem.memoryTypes[type].propertyFlags;
	if (r == VK_SUCCESS && (fl & hv) == hv && (host || !ctx->no_map))
		r = vkMapMemory(ctx->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
	if (r != VK_SUCCESS) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: cannot bind or map a %s buffer of "
				 "%" PRIu64 " bytes: %s",
				 what, size, vk_result(r));
	}
	b->size = size;
	b->alloc = alloc;
	b->cached = (fl & hc) != 0;
	return 0;
}

/* Submit ctx->xfer (recorded) and wait. */
static int xfer_submit(struct vk_ctx *ctx, char *err, size_t errsz)
{
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &ctx->xfer,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->fence), "vkQueueSubmit");
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	return 0;
}

/* Everything earlier on the queue (shaders, copies) is done and visible to
 * what follows (shaders, copies, the host). */
void vk_barrier_all(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_WRITE_BIT |
				 VK_ACCESS_HOST_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
				 VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_READ_BIT |
				 VK_ACCESS_TRANSFER_WRITE_BIT |
				 VK_ACCESS_HOST_READ_BIT,
	};
	vkCmdPipelineBarrier(cb,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				     VK_PIPELINE_STAGE_TRANSFER_BIT |
				     VK_PIPELINE_STAGE_HOST_BIT,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				     VK_PIPELINE_STAGE_TRANSFER_BIT |
				     VK_PIPELINE_STAGE_HOST_BIT,
			     0, 1, &mb, 0, NULL, 0, NULL);
}

int vk_xfer_begin(struct vk_ctx *ctx, char *err, size_t errsz)
{
	VKCHECK(vkResetCommandBuffer(ctx->xfer, 0), "vkResetCommandBuffer");
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VKCHECK(vkBeginCommandBuffer(ctx->xfer, &bi), "vkBeginCommandBuffer");
	vk_barrier_all(ctx->xfer);
	return 0;
}

int vk_xfer_end(struct vk_ctx *ctx, char *err, size_t errsz)
{
	vk_barrier_all(ctx->xfer);
	VKCHECK(vkEndCommandBuffer(ctx->xfer), "vkEndCommandBuffer");
	return xfer_submit(ctx, err, errsz);
}

int vk_buffer_create(void *vctx, enum belt_buffer_usage usage,
			    uint64_t size, struct belt_buffer **out,
			    char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	struct belt_buffer *b = malloc(sizeof *b);
	if (!b)
		return belt_errf(err, errsz, "vulkan: out of memory");
	if (vk_buf_make(ctx, usage_name(usage), usage == BELT_BUFFER_IO ? VK_HOST_NEAR : 0, size,
			b, err, errsz)) {
		free(b);
		return -1;
	}
	b->io = usage == BELT_BUFFER_IO;
	/* zeroed, as the CPU backend's */
	int rc = 0;
	if (b->map) {
		memset(b->map, 0, (size_t)b->alloc);
	} else {
		rc = vk_xfer_begin(ctx, err, errsz);
		if (!rc) {
			vkCmdFillBuffer(ctx->xfer, b->buf, 0, VK_WHOLE_SIZE, 0);
			rc = vk_xfer_end(ctx, err, errsz);
		}
	}
	if (rc) {
		vk_buf_free(ctx, b);
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

void vk_buffer_destroy(void *vctx, struct belt_buffer *b)
{
	struct vk_ctx *ctx = vctx;
	if (!b)
		return;
	vk_buf_free(ctx, b);
	free(b->rp);
	free(b);
}

static int check_range(const struct belt_buffer *b, uint64_t offset,
		       uint64_t size, const char *what, char *err,
		       size_t errsz)
{
	if (!b)
		return belt_errf(err, errsz, "vulkan: %s: NULL buffer", what);
	if (offset > b->size || size > b->size - offset)
		return belt_errf(err, errsz,
				 "vulkan: %s of %" PRIu64
				 " bytes at offset %" PRIu64
				 " is outside the buffer of %" PRIu64 " bytes",
				 what, size, offset, b->size);
	return 0;
}

static int staging(struct vk_ctx *ctx, char *err, size_t errsz)
{
	if (ctx->stage)
		return 0;
	uint64_t size = STAGING_BYTES;
	if (ctx->max_alloc && size > ctx->max_alloc)
		size = ctx->max_alloc / BUF_ALIGN * BUF_ALIGN;
	struct belt_buffer st;
	if (vk_buf_make(ctx, "staging", VK_HOST_CACHED, size, &st, err, errsz))
		return -1;
	ctx->stage = st.buf;
	ctx->stage_mem = st.mem;
	ctx->stage_map = st.map;
	ctx->stage_size = size;
	return 0;
}

/* Copy between b and the staging buffer, a piece at a time. */
static int staged(struct vk_ctx *ctx, struct belt_buffer *b, uint64_t offset,
		  void *host, uint64_t size, bool write, char *err,
		  size_t errsz)
{
	if (staging(ctx, err, errsz))
		return -1;
	for (uint64_t done = 0; done < size;) {
		uint64_t n = size - done;
		if (n > ctx->stage_size)
			n = ctx->stage_size;
		if (write)
			memcpy(ctx->stage_map, (const char *)host + done,
			       (size_t)n);
		if (vk_xfer_begin(ctx, err, errsz))
			return -1;
		VkBufferCopy bc = {.srcOffset = write ? 0 : offset + done,
				   .dstOffset = write ? offset + done : 0,
				   .size = n};
		vkCmdCopyBuffer(ctx->xfer, write ? ctx->stage : b->buf,
				write ? b->buf : ctx->stage, 1, &bc);
		if (vk_xfer_end(ctx, err, errsz))
			return -1;
		if (!write)
			memcpy((char *)host + done, ctx->stage_map, (size_t)n);
		done += n;
	}
	return 0;
}

int vk_buffer_write(void *vctx, struct belt_buffer *b, uint64_t offset,
			   const void *src, uint64_t size, char *err,
			   size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (check_range(b, offset, size, "buffer_write", err, errsz))
		return -1;
	if (!size)
		return 0;
	if (vk_repacked_overlaps(b, offset, size))
		return belt_errf(err, errsz,
				 "vulkan: buffer_write of %" PRIu64
				 " bytes at offset %" PRIu64
				 ": these weights were already converted to "
				 "the GPU layout by table_prepare; write "
				 "weights before preparing a table",
				 size, offset);
	if (b->map) {
		memcpy((char *)b->map + offset, src, (size_t)size);
		return 0;
	}
	return staged(ctx, b, offset, (void *)src, size, true, err, errsz);
}

int vk_buffer_read(void *vctx, struct belt_buffer *b, uint64_t offset,
			  void *dst, uint64_t size, char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (check_range(b, offset, size, "buffer_read", err, errsz) ||
	    vk_check_messages(ctx, "buffer_read", err, errsz))
		return -1;
	if (!size)
		return 0;
	/* the host reads uncached memory (device-local, mapped) slowly: on
	 * the H100 the 512 KB of a 128K vocabulary's logits took ~10 ms, a
	 * copy through cached staging memory tens of microseconds */
	if (b->map && (b->cached || size <= READ_UNCACHED_MAX)) {
		memcpy(dst, (const char *)b->map + offset, (size_t)size);
		return 0;
	}
	return staged(ctx, b, offset, dst, size, false, err, errsz);
}

static uint64_t buffer_bytes(const struct belt_buffer *b)
{
	return b->size;
}

static bool overlaps(const struct belt_buffer *a, uint64_t ao, const struct belt_buffer *b,
		     uint64_t bo, uint64_t size_a, uint64_t size_b)
{
	return a == b && ao < bo + size_b && bo < ao + size_a;
}

/* Whether region r reads or writes what one of q[0..n) writes, or writes
 * what one of them reads. */
static bool conflicts(const struct belt_copy *r, const struct belt_copy *q, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		if (overlaps(r->src, r->src_off, q[j].dst, q[j].dst_off, r->size, q[j].size) ||
		    overlaps(r->dst, r->dst_off, q[j].dst, q[j].dst_off, r->size, q[j].size) ||
		    overlaps(r->dst, r->dst_off, q[j].src, q[j].src_off, r->size, q[j].size))
			return true;
	return false;
}

/* One transfer submission: the regions as copy commands, a barrier only
 * before one that touches what the copies since the last barrier wrote
 * or read (the moves of one position across every layer run together). */
int vk_buffer_copy(void *vctx, const struct belt_copy *r, uint32_t n, char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (belt_copy_check(r, n, buffer_bytes, "vulkan", err, errsz))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (vk_repacked_overlaps(r[i].dst, r[i].dst_off, r[i].size))
			return belt_errf(err, errsz,
					 "vulkan: buffer_copy region %u: the destination holds "
					 "weights in the GPU layout",
					 i);
	}
	if (!n)
		return 0;
	if (vk_check_messages(ctx, "buffer_copy", err, errsz) || vk_xfer_begin(ctx, err, errsz))
		return -1;
	uint32_t b0 = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!r[i].size)
			continue;
		if (conflicts(&r[i], r + b0, i - b0)) {
			vk_barrier_all(ctx->xfer);
			b0 = i;
		}
		VkBufferCopy bc = {.srcOffset = r[i].src_off, .dstOffset = r[i].dst_off,
				   .size = r[i].size};
		vkCmdCopyBuffer(ctx->xfer, r[i].src->buf, r[i].dst->buf, 1, &bc);
	}
	return vk_xfer_end(ctx, err, errsz);
}
