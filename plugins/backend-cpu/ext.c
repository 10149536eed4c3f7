/* plugins/backend-cpu/ext.c: the ops of architecture plugins
 * (belt/arch.h), run through their host functions. kernel_find makes a
 * kernel for such an op the first time a table asks for it; the context
 * keeps it. */
#include <string.h>

#include "belt/arch.h"
#include "cpu.h"

static void run_ext(const struct cpu_cmd *c, struct cpu_worker *w, const struct cpu_pass *ps,
		    int64_t i0, int64_t i1)
{
	(void)w;
	struct belt_op_host_run run = {
		.binding = c->src->bind,
		.param = c->prm,
		.row0 = ps->row0,
		.n_rows = ps->n_rows,
		.per_row = c->items_per_row,
		.i0 = i0,
		.i1 = i1,
	};
	memcpy(run.bind, c->p, sizeof run.bind);
	c->ext->host(&run);
}

static int prep_ext(const struct cpu_ctx *ctx, const struct belt_cmd *cmd, struct cpu_cmd *c,
		    struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	int64_t items;
	if (!(c->ext = belt_arch_op_prepare(cmd, &items, err, errsz)))
		return -1;
	pr->len = items;
	pr->align = 16;
	pr->item_bytes = 4u * cmd->n_bind;
	return 0;
}

const struct belt_kernel *cpu_ext_kernel(struct cpu_ctx *ctx, const char *op, const char *variant)
{
	int i = belt_arch_op_slot(ctx->ext, ctx->n_ext, CPU_EXT_MAX, op, variant, false);
	if (i < 0)
		return NULL;
	if ((unsigned)i == ctx->n_ext) {
		ctx->n_ext++;
		ctx->ext_op[i] = (struct cpu_op){.w = CPU_W_F32, .run = run_ext, .prepare = prep_ext};
		ctx->ext_kernel[i] = belt_arch_op_kernel(ctx->ext[i], &ctx->ext_op[i]);
	}
	return &ctx->ext_kernel[i];
}

bool cpu_ext_owns(const struct cpu_ctx *ctx, const struct belt_kernel *k)
{
	return k >= ctx->ext_kernel && k < ctx->ext_kernel + ctx->n_ext;
}
