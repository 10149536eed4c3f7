/* plugins/backend-cpu/ext.c: the ops of architecture plugins
 * (belt/arch.h), run through their host functions. kernel_find makes a
 * kernel for such an op the first time a table asks for it; the context
 * keeps it. */
#include <string.h>

#include "belt/arch.h"
#include "belt/error.h"
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
	const struct belt_arch_op *op = belt_arch_op_find(cmd->kernel->op);
	if (!op)
		return belt_errf(err, errsz, "%s: op '%s' is no longer registered",
				 cmd->label ? cmd->label : "?", cmd->kernel->op);
	int at = belt_op_param_index(&op->contract, op->items);
	if (cmd->param[at].i < 1)
		return belt_errf(err, errsz, "%s: %s param %s is %d, must be >= 1",
				 cmd->label ? cmd->label : "?", cmd->kernel->op, op->items,
				 cmd->param[at].i);
	if (op->check && op->check(cmd, err, errsz))
		return -1;
	c->ext = op;
	pr->len = cmd->param[at].i;
	pr->align = 16;
	pr->item_bytes = 4u * cmd->n_bind;
	return 0;
}

const struct belt_kernel *cpu_ext_kernel(struct cpu_ctx *ctx, const char *op, const char *variant)
{
	const struct belt_arch_op *ao = belt_arch_op_find(op);
	if (!ao || (variant && *variant && strcmp(variant, "default")))
		return NULL;
	for (unsigned i = 0; i < ctx->n_ext; i++)
		if (!strcmp(ctx->ext_kernel[i].op, op))
			return &ctx->ext_kernel[i];
	if (ctx->n_ext == CPU_EXT_MAX)
		return NULL;
	unsigned i = ctx->n_ext++;
	ctx->ext_op[i] = (struct cpu_op){.w = CPU_W_F32, .run = run_ext, .prepare = prep_ext};
	ctx->ext_kernel[i] = (struct belt_kernel){
		.op = ao->contract.op,
		.variant = "default",
		.wtype = BELT_TYPE_ANY,
		.n_bind = ao->contract.n_bind,
		.params = ao->contract.params,
		.impl = &ctx->ext_op[i],
	};
	return &ctx->ext_kernel[i];
}

bool cpu_ext_owns(const struct cpu_ctx *ctx, const struct belt_kernel *k)
{
	return k >= ctx->ext_kernel && k < ctx->ext_kernel + ctx->n_ext;
}
