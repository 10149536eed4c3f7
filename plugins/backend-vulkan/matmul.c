/* A batched table's matvec: y[r] = W x[r] for every row r of the pass, as
 * one tiled matrix product (shaders/matmul.comp): a workgroup per tile of
 * MATMUL_BN rows of the pass (x) by MATMUL_BM weight rows (y), so that
 * each weight is read from memory once per MATMUL_BN rows. Q8_0/Q4_0/Q6_K
 * weights are read in whichever layout their range is in: the GPU layout
 * where table_prepare converted it (repack.c; backend.c's convert_weights
 * then swaps in the R variant), else GGUF's. */
#include "belt/types.h"
#include "vk.h"

/* Must match shaders/matmul.comp BM and BN. */
#define MATMUL_BM 64
#define MATMUL_BN 64

enum vk_shader vk_matmul_shader(int wtype, bool repacked)
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

void vk_matmul_prep(const struct belt_cmd *cmd, struct vk_prep *pr)
{
	const struct vk_op *op = cmd->kernel->impl;
	uint32_t m = (uint32_t)cmd->param[1].i;
	pr->shader = (int)vk_matmul_shader(op->wtype, false);
	pr->groups = (m + MATMUL_BM - 1) / MATMUL_BM;
	pr->rows_dim = VK_ROWS_X;
	pr->rows_tile = MATMUL_BN;
}
