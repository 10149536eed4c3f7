/* A batched table's matvec: y[r] = W x[r] for every row r of the pass, as
 * one tiled matrix product: a workgroup per tile of BN rows of the pass
 * (x) by BM weight rows (y), so that each weight is read from memory once
 * per BN rows. On a device with cooperative matrices (ctx->coopmat,
 * device.c) every weight type but F32 runs shaders/matmul_cm.comp on the
 * matrix units (tiles of mm_tile, 128 x 128 by default), but Q4_0 and
 * Q8_0 run shaders/matmul_q8cm.comp there in int8 where the device has
 * int8 products too (ctx->coopmat_int8; x as int8 from
 * shaders/quantize_rows.comp, which backend.c's q8_pre adds); otherwise,
 * and for F32, shaders/matmul.comp (64 x 64 tiles of float FMAs). Q8_0/Q4_0/Q6_K
 * weights are read in whichever layout their range is in: the GPU layout
 * where table_prepare converted it (repack.c; backend.c's convert_weights
 * then swaps in the R variant), else GGUF's. */
#include <inttypes.h>

#include "belt/error.h"
#include "belt/types.h"
#include "vk.h"

/* Must match shaders/matmul.comp BM and BN. */
#define MATMUL_BM 64
#define MATMUL_BN 64
/* matmul_cm.comp's columns per step */
#define MATMUL_CM_SK 32

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
	case VK_SH_MATMUL_Q8CM_Q8_0: return VK_SH_MATMUL_Q8CM_Q8_0R;
	case VK_SH_MATMUL_Q8CM_Q4_0: return VK_SH_MATMUL_Q8CM_Q4_0R;
	default: return sh;
	}
}

bool vk_matmul_is_q8(int sh)
{
	return sh == VK_SH_MATMUL_Q8CM_Q8_0 || sh == VK_SH_MATMUL_Q8CM_Q8_0R ||
	       sh == VK_SH_MATMUL_Q8CM_Q4_0 || sh == VK_SH_MATMUL_Q8CM_Q4_0R;
}

bool vk_matmul_tile_ok(uint32_t bm, uint32_t bn, uint32_t wm, uint32_t wn)
{
	bool p2 = !(bm & (bm - 1)) && !(bn & (bn - 1)) && !(wm & (wm - 1)) &&
		  !(wn & (wn - 1));
	if (!p2 || bm < 64 || bm > 256 || bn < 32 || bn > 128 || wm < 16 ||
	    wm > 64 || wn < 16 || wn > 64 || wm > bm || wn > bn)
		return false;
	/* at most 16 subgroups, whose result tiles (64 uvec4s each) fit in
	 * the two weight buffers (2 BM rows of 5 uvec4s) */
	uint32_t sg = bm / wm * (bn / wn);
	return sg <= 16 && sg * 64 <= 10 * bm;
}

/* matmul_cm's tile where mm_tile does not set one: BM, BN, subgroup tile
 * WM x WN. One for every size: on the H200, pp512 of the 1B and 8B shapes
 * moved by less than 10% across the tiles that fit (doc/vulkan.md), 128 x
 * 128 by 16 subgroups of 64 x 16 being the best of both. */
static const uint32_t cm_tile_default[4] = {128, 128, 64, 16};

uint64_t vk_matmul_cm_spec(const uint32_t t[4], uint32_t spec[6])
{
	/* matmul_cm.comp's constants: local size, BM, BN, FM, FN, SK */
	spec[0] = t[0] / t[2] * (t[1] / t[3]) * 32;
	spec[1] = t[0];
	spec[2] = t[1];
	spec[3] = t[2] / 16;
	spec[4] = t[3] / 16;
	spec[5] = MATMUL_CM_SK;
	/* its shared arrays: two buffers of BM + BN rows of SK + 8 halves,
	 * the IQ4 table */
	return 2 * (uint64_t)(t[0] + t[1]) * (MATMUL_CM_SK + 8) * 2 + 64;
}

/* An error naming setting key where tile t of a matrix product needs
 * more than the device's shared memory. */
static int tile_fits(const struct belt_cmd *cmd, const struct vk_prep *pr, const uint32_t t[4],
		     uint64_t shared, const char *key, char *err, size_t errsz)
{
	if (shared <= pr->max_shared)
		return 0;
	return belt_errf(err, errsz,
			 "%s: matmul tile %ux%ux%ux%u needs %" PRIu64
			 " bytes of shared memory, this device has %u (%s)",
			 cmd->label ? cmd->label : "?", t[0], t[1], t[2], t[3], shared,
			 pr->max_shared, key);
}

/* matmul_q8cm's tiles where mq_tile does not set one: BM, BN, WM, WN;
 * the small one where the large one would give fewer than
 * Q8_SMALL_BELOW workgroups. The H200's profiles of pp512 (doc/vulkan.md)
 * had the large one faster where it gives 128 workgroups or more (132
 * SMs, one workgroup each), the small one below that (a 1024 x 4096
 * product 14.1 -> 8.4 us a token). */
static const uint32_t q8_tile_large[4] = {128, 128, 32, 32};
static const uint32_t q8_tile_small[4] = {64, 64, 16, 32};
#define Q8_SMALL_BELOW 128

/* Q4_0 and Q8_0 in int8 on the matrix units (matmul_q8cm.comp): its
 * shader, constants and grid; k is whole blocks. */
static int q8_prep(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
		   size_t errsz)
{
	const struct vk_op *op = cmd->kernel->impl;
	uint32_t m = (uint32_t)cmd->param[1].i;
	const uint32_t *t = pr->mq_tile;
	if (!t[0]) {
		uint64_t wgs = (uint64_t)((m + 127) / 128) * ((pr->rows + 127) / 128);
		t = wgs < Q8_SMALL_BELOW ? q8_tile_small : q8_tile_large;
	}
	/* two buffers of BM + BN rows of two blocks' int8s, 16 bytes of
	 * padding and the blocks' scales */
	if (tile_fits(cmd, pr, t, 2 * (uint64_t)(t[0] + t[1]) * (64 + 16 + 8), "mq_tile",
		      err, errsz))
		return -1;
	pr->spec[0] = t[0] / t[2] * (t[1] / t[3]) * 32;
	pr->spec[1] = t[0];
	pr->spec[2] = t[1];
	pr->spec[3] = t[2] / 16;
	pr->spec[4] = t[3] / 16;
	pr->spec[5] = 0; /* ADD: backend.c's add_sink sets it */
	pr->n_spec = 6;
	pr->shader = op->wtype == BELT_TYPE_Q8_0 ? VK_SH_MATMUL_Q8CM_Q8_0
						 : VK_SH_MATMUL_Q8CM_Q4_0;
	pr->groups = (m + t[0] - 1) / t[0];
	pr->rows_tile = t[1];
	return 0;
}

int vk_matmul_prep(const struct belt_cmd *cmd, struct vk_prep *pr, char *err,
		   size_t errsz)
{
	const struct vk_op *op = cmd->kernel->impl;
	uint32_t m = (uint32_t)cmd->param[1].i;
	pr->rows_dim = VK_ROWS_X;
	if (pr->coopmat && pr->coopmat_int8 && cmd->param[0].i % 32 == 0 &&
	    (op->wtype == BELT_TYPE_Q4_0 || op->wtype == BELT_TYPE_Q8_0))
		return q8_prep(cmd, pr, err, errsz);
	enum vk_shader cm = pr->coopmat ? cm_shader(op->wtype, false) : VK_SH_COUNT;
	if (cm == VK_SH_COUNT) {
		pr->shader = (int)plain_shader(op->wtype, false);
		pr->groups = (m + MATMUL_BM - 1) / MATMUL_BM;
		pr->rows_tile = MATMUL_BN;
		return 0;
	}
	const uint32_t *t = pr->cm_tile[0] ? pr->cm_tile : cm_tile_default;
	if (tile_fits(cmd, pr, t, vk_matmul_cm_spec(t, pr->spec), "mm_tile", err, errsz))
		return -1;
	pr->shader = (int)cm;
	pr->n_spec = 6;
	pr->groups = (m + t[0] - 1) / t[0];
	pr->rows_tile = t[1];
	return 0;
}
