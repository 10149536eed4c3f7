/* plugins/backend-vulkan/ext.c: the ops of architecture plugins
 * (belt/arch.h) that bring a SPIR-V shader. kernel_find makes a kernel
 * for such an op the first time a table asks for it, its shader the slot
 * VK_SH_COUNT + i of the context's modules and pipelines. */
#include <inttypes.h>
#include <string.h>

#include "belt/arch.h"
#include "belt/error.h"
#include "ctx.h"

static int prep_ext(const struct belt_cmd *cmd, struct vk_prep *pr, char *err, size_t errsz)
{
	/* pc.o counts 32-bit words */
	for (unsigned i = 0; i < cmd->n_bind; i++)
		if (cmd->bind[i].offset % 4)
			return belt_errf(err, errsz,
					 "%s: %s binding %u starts at byte %" PRIu64
					 ": this backend needs whole 32-bit words",
					 cmd->label ? cmd->label : "?", cmd->kernel->op, i,
					 cmd->bind[i].offset);
	int64_t items;
	const struct belt_arch_op *op = belt_arch_op_prepare(cmd, &items, err, errsz);
	if (!op)
		return -1;
	pr->groups = (uint32_t)((items + op->local_size - 1) / op->local_size);
	return 0;
}

const struct belt_kernel *vk_ext_kernel(struct vk_ctx *ctx, const char *op, const char *variant)
{
	int i = belt_arch_op_slot(ctx->ext, ctx->n_ext, VK_EXT_MAX, op, variant, true);
	if (i < 0)
		return NULL;
	if ((unsigned)i == ctx->n_ext) {
		ctx->n_ext++;
		ctx->ext_op[i] = (struct vk_op){.shader = (enum vk_shader)(VK_SH_COUNT + i),
						.wtype = BELT_TYPE_ANY,
						.prepare = prep_ext};
		ctx->ext_kernel[i] = belt_arch_op_kernel(ctx->ext[i], &ctx->ext_op[i]);
	}
	return &ctx->ext_kernel[i];
}

bool vk_ext_owns(const struct vk_ctx *ctx, const struct belt_kernel *k)
{
	return k >= ctx->ext_kernel && k < ctx->ext_kernel + ctx->n_ext;
}

struct vk_spirv vk_shader_code(const struct vk_ctx *ctx, int sh)
{
	if (sh < VK_SH_COUNT)
		return vk_spirv[sh];
	const struct belt_arch_op *ao = ctx->ext[sh - VK_SH_COUNT];
	return (struct vk_spirv){.code = ao->spirv, .size = ao->spirv_bytes,
				 .name = ao->contract.op};
}
