/* A batched table's matvec: y[r] = W x[r] for every row r of the pass, as
 * one tiled matrix product: a workgroup per tile of BN rows of the pass
 * (x) by BM weight rows (y), so that each weight is read from memory once
 * per BN rows. On a device with cooperative matrices (ctx->coopmat,
 * device.c) every weight type but F32 runs shaders/matmul_cm.comp on the
 * matrix units (128 x 64 tiles); otherwise, and for F32,
 * shaders/matmul.comp (64 x 64 tiles of float FMAs). Q8_0/Q4_0/Q6_K
 * weights are read in whichever layout their range is in: the GPU layout
 * where table_prepare converted it (repack.c; backend.c's convert_weights
 * then swaps in the R variant), else GGUF's. */
#include "belt/types.h"
#include "vk.h"

/* Must match shaders/matmul.comp BM and BN, matmul_cm.comp's. */
#define MATMUL_BM 64
#define MATMUL_BN 64
#define MATMUL_CM_BM 128
#define MATMUL_CM_BN 64
#define MATMUL_CM_BN_WIDE 128
/* matmul_cm: the wide tiles from this many weight rows (a tuning switch
 * overrides) */
#define MATMUL_CM_WIDE_M 4096

static enum vk_shader plain_shader(int wtype, bool repacked)
{
	switch (wtype) {
	case BELT_TYPE_F32: return VK_SH_MATMUL_F32;
	case BELT_TYPE_F16: return VK_SH_MATMUL_F16;
	case BELT_TYPE_BF16: return VK_SH_MATMUL_BF16;
	case BELT_TYPE_Q8_0:
		return repacked ? VK_SH_MATMUL_Q8_0R : VK_SH_MATMUL_Q8_0;
	case BELT_TYPE_Q4_K: return VK_SH_MATMUL_Q4_K;
	case BELT_TYPE_Q6_K:
		return repacked ? VK_SH_MATMUL_Q6_KR : VK_SH_MATMUL_Q6_K;
	case BELT_TYPE_Q4_1: return VK_SH_MATMUL_Q4_1;
	case BELT_TYPE_Q5_0: return VK_SH_MATMUL_Q5_0;
	case BELT_TYPE_Q5_1: return VK_SH_MATMUL_Q5_1;
	case BELT_TYPE_IQ4_NL: return VK_SH_MATMUL_IQ4_NL;
	case BELT_TYPE_Q2_K: return VK_SH_MATMUL_Q2_K;
	case BELT_TYPE_Q3_K: return VK_SH_MATMUL_Q3_K;
	case BELT_TYPE_Q5_K: return VK_SH_MATMUL_Q5_K;
	case BELT_TYPE_IQ4_XS: return VK_SH_MATMUL_IQ4_XS;
	default: return repacked ? VK_SH_MATMUL_Q4_0R : VK_SH_MATMUL_Q4_0;
	}
}

/* matmul_cm.comp's variant for wtype, or VK_SH_COUNT: none (F32). */
static enum vk_shader cm_shader(int wtype, bool repacked)
{
	switch (wtype) {
	case BELT_TYPE_F16: return VK_SH_MATMUL_CM_F16;
	case BELT_TYPE_BF16: return VK_SH_MATMUL_CM_BF16;
	case BELT_TYPE_Q8_0:
		return repacked ? VK_SH_MATMUL_CM_Q8_0R : VK_SH_MATMUL_CM_Q8_0;
	case BELT_TYPE_Q4_0:
		return repacked ? VK_SH_MATMUL_CM_Q4_0R : VK_SH_MATMUL_CM_Q4_0;
	case BELT_TYPE_Q6_K:
		return repacked ? VK_SH_MATMUL_CM_Q6_KR : VK_SH_MATMUL_CM_Q6_K;
	case BELT_TYPE_Q4_1: return VK_SH_MATMUL_CM_Q4_1;
	case BELT_TYPE_Q5_0: return VK_SH_MATMUL_CM_Q5_0;
	case BELT_TYPE_Q5_1: return VK_SH_MATMUL_CM_Q5_1;
	case BELT_TYPE_IQ4_NL: return VK_SH_MATMUL_CM_IQ4_NL;
	case BELT_TYPE_Q2_K: return VK_SH_MATMUL_CM_Q2_K;
	case BELT_TYPE_Q3_K: return VK_SH_MATMUL_CM_Q3_K;
	case BELT_TYPE_Q4_K: return VK_SH_MATMUL_CM_Q4_K;
	case BELT_TYPE_Q5_K: return VK_SH_MATMUL_CM_Q5_K;
	case BELT_TYPE_IQ4_XS: return VK_SH_MATMUL_CM_IQ4_XS;
	default: return VK_SH_COUNT;
	}
}

enum vk_shader vk_matmul_repacked(enum vk_shader sh)
{
	switch (sh) {
	case VK_SH_MATMUL_Q8_0: return VK_SH_MATMUL_Q8_0R;
	case VK_SH_MATMUL_Q4_0: return VK_SH_MATMUL_Q4_0R;
	case VK_SH_MATMUL_Q6_K: return VK_SH_MATMUL_Q6_KR;
	case VK_SH_MATMUL_CM_Q8_0: return VK_SH_MATMUL_CM_Q8_0R;
	case VK_SH_MATMUL_CM_Q4_0: return VK_SH_MATMUL_CM_Q4_0R;
	case VK_SH_MATMUL_CM_Q6_K: return VK_SH_MATMUL_CM_Q6_KR;
	case VK_SH_MATMUL_CMW_Q8_0: return VK_SH_MATMUL_CMW_Q8_0R;
	case VK_SH_MATMUL_CMW_Q4_0: return VK_SH_MATMUL_CMW_Q4_0R;
	case VK_SH_MATMUL_CMW_Q6_K: return VK_SH_MATMUL_CMW_Q6_KR;
	default: return sh;
	}
}

void vk_matmul_prep(const struct belt_cmd *cmd, struct vk_prep *pr)
{
	const struct vk_op *op = cmd->kernel->impl;
	uint32_t m = (uint32_t)cmd->param[1].i;
	enum vk_shader cm = pr->coopmat ? cm_shader(op->wtype, false) : VK_SH_COUNT;
	pr->rows_dim = VK_ROWS_X;
	if (cm == VK_SH_COUNT) {
		pr->shader = (int)plain_shader(op->wtype, false);
		pr->groups = (m + MATMUL_BM - 1) / MATMUL_BM;
		pr->rows_tile = MATMUL_BN;
		return;
	}
	bool wide = pr->cm_bn ? pr->cm_bn == MATMUL_CM_BN_WIDE
			      : m >= MATMUL_CM_WIDE_M;
	pr->shader = (int)(wide ? cm + (VK_SH_MATMUL_CMW_F16 - VK_SH_MATMUL_CM_F16)
				: cm);
	pr->groups = (m + MATMUL_CM_BM - 1) / MATMUL_CM_BM;
	pr->rows_tile = wide ? MATMUL_CM_BN_WIDE : MATMUL_CM_BN;
}
