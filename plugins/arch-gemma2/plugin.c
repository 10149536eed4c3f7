/* plugins/arch-gemma2: Gemma 2 as an architecture plugin. Its forward
 * pass (gemma2.yaml, built into the module) uses the core's ops and one
 * of its own that no other architecture needs: softcap, the final logits'
 * soft-capping x = cap * tanh(x / cap), with a host function for the CPU
 * backend and a shader for the Vulkan backend. */
#include <math.h>

#include "belt/arch.h"
#include "belt/error.h"
#include "belt/plugin.h"

static const char gemma2_yaml[] =
#include "gemma2.yaml.h"
	;

#ifdef ARCH_GEMMA2_SPIRV
static const uint32_t softcap_spv[] =
#include "softcap.spv.h"
	;
#define SOFTCAP_SPV softcap_spv, sizeof softcap_spv
#else
#define SOFTCAP_SPV NULL, 0
#endif

/* x of n values a row, in place; items are values */
static void softcap_host(const struct belt_op_host_run *run)
{
	float *x = (float *)run->bind[0] + (int64_t)run->row0 * run->per_row;
	float cap = run->param[1].f;
	for (int64_t i = run->i0; i < run->i1; i++)
		x[i] = tanhf(x[i] / cap) * cap;
}

static int softcap_check(const struct belt_cmd *cmd, char *err, size_t errsz)
{
	float cap = cmd->param[1].f;
	if (!isfinite(cap) || !(cap > 0.0f))
		return belt_errf(err, errsz, "%s: softcap cap %g: expected a finite positive number",
				 cmd->label ? cmd->label : "?", (double)cap);
	return 0;
}

static const struct belt_arch_op ops[] = {
	{
		.contract = {.op = "softcap",
			     .params = "n:i cap:f",
			     .n_bind = 1,
			     .row_wise = true,
			     .bind = {{"x", BELT_BIND_ROWS, BELT_ACCESS_R | BELT_ACCESS_W, "n"}}},
		.items = "n",
		.check = softcap_check,
		.host = softcap_host,
		.spirv = SOFTCAP_SPV,
		.local_size = 128,
	},
};

static const struct belt_arch_ops gemma2 = {
	.abi = BELT_ARCH_ABI,
	.name = "gemma2",
	.yaml = gemma2_yaml,
	.source = "arch-gemma2/gemma2.yaml",
	.ops = ops,
	.n_ops = sizeof ops / sizeof ops[0],
};

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_arch(r, &gemma2, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "arch-gemma2",
	.description = "Gemma 2: its forward pass and the logits' soft-capping op, "
		       "on the CPU and as a Vulkan shader",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
