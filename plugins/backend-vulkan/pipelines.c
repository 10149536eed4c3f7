/* plugins/backend-vulkan/pipelines.c: descriptor set and pipeline layouts
 * by binding count, shader modules, the plain pipeline of each shader,
 * the fused matvec pipelines specialized by flags, segments and k-split
 * (tuned by the context's matvec_fused parameters, tuning.c), and
 * matmul_cm's tiles: every specialized pipeline made once, then found in
 * one cache (ctx->spipe). */
#include <string.h>

#include "belt/error.h"
#include "ctx.h"

/* The set layout and pipeline layout for n command bindings plus meta and
 * work. */
static int layout_for(struct vk_ctx *ctx, int n, char *err, size_t errsz)
{
	if (ctx->pl[n])
		return 0;
	VkDescriptorSetLayoutBinding lb[VK_SET_MAX];
	for (int i = 0; i <= n + 1; i++)
		lb[i] = (VkDescriptorSetLayoutBinding){
			.binding = vk_binding_number((uint32_t)i, (uint32_t)n),
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	VkDescriptorSetLayoutCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = (uint32_t)n + 2,
		.pBindings = lb,
	};
	VKCHECK(vkCreateDescriptorSetLayout(ctx->dev, &dci, NULL, &ctx->dsl[n]),
		"vkCreateDescriptorSetLayout");
	VkPushConstantRange pcr = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = sizeof(struct vk_pc),
	};
	VkPipelineLayoutCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &ctx->dsl[n],
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &pcr,
	};
	VKCHECK(vkCreatePipelineLayout(ctx->dev, &pci, NULL, &ctx->pl[n]),
		"vkCreatePipelineLayout");
	return 0;
}

static int module_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		      char *err, size_t errsz)
{
	if (layout_for(ctx, n_bind, err, errsz))
		return -1;
	if (ctx->module[sh])
		return 0;
	struct vk_spirv code = vk_shader_code(ctx, sh);
	VkShaderModuleCreateInfo smi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = code.size,
		.pCode = code.code,
	};
	VKCHECK(vkCreateShaderModule(ctx->dev, &smi, NULL, &ctx->module[sh]),
		"vkCreateShaderModule");
	return 0;
}

/* A compute pipeline of shader sh's module (made) over the layout of
 * n_bind bindings, specialized by spi (or not, NULL) and, in every
 * pipeline, VK_STOP_SPEC_ID by whether the shader reads the stop word. */
static int make_pipeline(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
			 const VkSpecializationInfo *spi, VkPipeline *out,
			 char *err, size_t errsz)
{
	uint32_t n = spi ? spi->mapEntryCount : 0;
	if (n > VK_SPEC_MAX || (spi && spi->dataSize != 4 * n))
		return belt_errf(err, errsz, "vulkan: %u specialization constants: at most %d",
				 n, VK_SPEC_MAX);
	VkSpecializationMapEntry me[VK_SPEC_MAX + 1];
	uint32_t data[VK_SPEC_MAX + 1];
	for (uint32_t i = 0; i < n; i++) {
		me[i] = spi->pMapEntries[i];
		memcpy(&data[i], (const char *)spi->pData + 4 * i, 4);
	}
	me[n] = (VkSpecializationMapEntry){.constantID = VK_STOP_SPEC_ID, .offset = 4 * n,
					   .size = 4};
	data[n] = ctx->cond_begin ? 0 : 1;
	VkSpecializationInfo all = {.mapEntryCount = n + 1, .pMapEntries = me,
				    .dataSize = 4 * (n + 1), .pData = data};
	VkComputePipelineCreateInfo cpi = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.flags = ctx->stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
				    : 0,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = ctx->module[sh],
			.pName = "main",
			.pSpecializationInfo = &all,
		},
		.layout = ctx->pl[n_bind],
	};
	VKCHECK(vkCreateComputePipelines(ctx->dev, ctx->cache, 1, &cpi, NULL,
					 out),
		"vkCreateComputePipelines");
	if (ctx->stats)
		vk_stats_print(ctx, sh, spi ? spi->pData : NULL,
			       spi ? (uint32_t)(spi->dataSize / 4) : 0, *out);
	return 0;
}

int vk_spec_pipeline(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		     const uint32_t *spec, uint32_t n, VkPipeline *out,
		     char *err, size_t errsz)
{
	uint32_t key[VK_SPEC_MAX] = {0};
	for (uint32_t i = 0; i < n && i < VK_SPEC_MAX; i++)
		key[i] = spec[i];
	for (uint32_t i = 0; i < ctx->n_spipe; i++) {
		const struct vk_spipe *f = &ctx->spipe[i];
		if (f->sh == (uint32_t)sh && f->n_bind == (uint32_t)n_bind &&
		    !memcmp(f->spec, key, sizeof key)) {
			*out = f->pipe;
			return 0;
		}
	}
	if (n > VK_SPEC_MAX || ctx->n_spipe == VK_SPIPE_MAX)
		return belt_errf(err, errsz,
				 "vulkan: more than %d specialized pipelines "
				 "(or %u constants)",
				 VK_SPIPE_MAX, n);
	if (module_for(ctx, sh, n_bind, err, errsz))
		return -1;
	VkSpecializationMapEntry me[VK_SPEC_MAX];
	for (uint32_t i = 0; i < n; i++)
		me[i] = (VkSpecializationMapEntry){
			.constantID = i, .offset = 4 * i, .size = 4};
	VkSpecializationInfo spi = {.mapEntryCount = n,
				    .pMapEntries = me,
				    .dataSize = 4 * n,
				    .pData = key};
	VkPipeline p;
	if (make_pipeline(ctx, sh, n_bind, &spi, &p, err, errsz))
		return -1;
	struct vk_spipe *f = &ctx->spipe[ctx->n_spipe++];
	f->sh = (uint32_t)sh;
	f->n_bind = (uint32_t)n_bind;
	memcpy(f->spec, key, sizeof key);
	f->pipe = p;
	*out = p;
	return 0;
}

/* A fused matvec pipeline: shader sh (VK_SH_FMV_*) specialized for flags,
 * segments and k-split, with the context's parameters for its type. */
int vk_fused_pipeline(struct vk_ctx *ctx, enum vk_shader sh,
			  uint32_t flags, uint32_t nseg, uint32_t ks,
			  VkPipeline *out, char *err, size_t errsz)
{
	uint32_t t = sh - VK_SH_FMV_F32;
	uint32_t data[8] = {flags,	   nseg,	      ctx->mv_nr[t],
			    ctx->mv_swz,   ctx->mv_wg[t],     ctx->mv_tile[t],
			    ctx->mv_unr[t], ks};
	return vk_spec_pipeline(ctx, sh, VK_FMV_BINDINGS, data, 8, out, err,
				errsz);
}

int vk_fused_pipeline_pr(struct vk_ctx *ctx, enum vk_shader sh, uint32_t ks,
			 uint32_t pr, uint32_t nr, uint32_t tile, bool xg, uint32_t flags,
			 uint32_t wg, uint32_t unr, VkPipeline *out, char *err, size_t errsz)
{
	/* BAT 1: the pass's rows from the table (the one-token table's
	 * pipelines leave that out) */
	uint32_t data[11] = {flags,	  1,  nr, ctx->mv_swz, wg, tile,
			     unr,	  ks, pr, xg, 1};
	return vk_spec_pipeline(ctx, sh, VK_FMV_BINDINGS, data, 11, out, err,
				errsz);
}

int vk_pipeline_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
			char *err, size_t errsz)
{
	if (ctx->pipe[sh])
		return 0;
	if (module_for(ctx, sh, n_bind, err, errsz))
		return -1;
	return make_pipeline(ctx, sh, n_bind, NULL, &ctx->pipe[sh], err,
			     errsz);
}

void vk_grid_xy(const struct vk_ctx *ctx, uint64_t groups, uint32_t *gx, uint32_t *gy)
{
	uint32_t maxx = ctx->props.limits.maxComputeWorkGroupCount[0];
	*gx = groups < maxx ? (uint32_t)groups : maxx;
	*gy = (uint32_t)((groups + *gx - 1) / *gx);
}
