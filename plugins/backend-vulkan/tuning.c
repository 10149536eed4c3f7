/* plugins/backend-vulkan/tuning.c: every tuning switch of the backend: its
 * key under conf/belt.yaml's backends: vulkan:, the environment variable
 * that overrides the file (BELT_VK_ and the key in upper case), its value
 * range and its default (doc/vulkan.md has the table). create() reads and
 * checks them all (vk_tune_read); the matvec_fused ones then set the
 * context's per-variant parameters (vk_tune_matvec), q8x its int8 x paths
 * (vk_tune_q8x); fuse and profile are looked at again at each
 * table_prepare (vk_tune_prepare), where their variables may have changed.
 * BELT_VK_DEVICE is not here: a device choice, as --device (devices.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "ctx.h"

static const char *const keys[] = {
	"fuse",	     "profile",	  "staging",   "validation",  "q8x",
	"mv_rows",   "mv_wg",	  "mv_unroll", "mv_tile",     "mv_ksplit",
	"mv_ksplit_k", "mv_swizzle", "coopmat", "mm_tile", "att_chunk",
	"att_splits", "att_kloads", "att_vloads", "att_short", "att_seqs", "cond_stop", "att_gqa_from", "att_coopmat", "stats", "few_rows", "few_shared", "few_xg", "few_pr", "few_nr", "few_wg", "few_unroll", "few_mma", "few_mma_sg", "moe_grouped", "moe_rows", "moe_tile", "defer_norms", "pend_one_pass", "coopmat_int8", "mq_tile", "mq_glu", "mq_add", "mv_blocks", "mv_blocks_plain", NULL};

/* BELT_VK_<KEY> */
static void env_name(const char *key, char *out, size_t outsz)
{
	size_t n = (size_t)snprintf(out, outsz, "BELT_VK_");
	for (; *key && n + 1 < outsz; key++)
		out[n++] = (char)(*key >= 'a' && *key <= 'z' ? *key - 'a' + 'A'
							     : *key);
	out[n] = 0;
}

/* A value that is not what key takes: the error names where it came
 * from (the variable, or belt.yaml's key) and what is expected. */
static int bad(const char *key, const char *v, const char *expected,
	       char *err, size_t errsz)
{
	char env[32];
	env_name(key, env, sizeof env);
	const char *e = getenv(env);
	if (e && *e)
		return belt_errf(err, errsz,
				 "vulkan: %s=%s (overriding belt.yaml "
				 "backends.vulkan.%s): expected %s",
				 env, v, key, expected);
	return belt_errf(err, errsz,
			 "vulkan: belt.yaml backends.vulkan.%s: '%s': "
			 "expected %s",
			 key, v, expected);
}

/* key's value (its variable overriding opt's settings; opt NULL: the
 * variable only), or NULL */
static const char *value_of(const struct belt_backend_options *opt,
			    const char *key)
{
	char env[32];
	env_name(key, env, sizeof env);
	return belt_setting_get(opt, key, env);
}

/* 0/1 (also false/true) into *out; absent: *out unchanged */
static int get_bool(const char *key, const char *v, bool *out, char *err,
		    size_t errsz)
{
	if (!v)
		return 0;
	if (!strcmp(v, "0") || !strcmp(v, "false"))
		*out = false;
	else if (!strcmp(v, "1") || !strcmp(v, "true"))
		*out = true;
	else
		return bad(key, v, "0 or 1", err, errsz);
	return 0;
}

/* a decimal integer in [lo, hi] into *out; absent: *out unchanged */
static int get_int(const char *key, const char *v, long lo, long hi,
		   const char *expected, long *out, char *err, size_t errsz)
{
	if (!v)
		return 0;
	char *end;
	long x = strtol(v, &end, 10);
	if (end == v || *end || x < lo || x > hi)
		return bad(key, v, expected, err, errsz);
	*out = x;
	return 0;
}

/* A matmul_cm tile BMxBNxWMxWN into out; absent or "0" leaves out. */
static int get_tile(const char *key, const char *v, uint32_t out[4], char *err, size_t errsz)
{
	if (!v || !strcmp(v, "0"))
		return 0;
	unsigned bm, bn, wm, wn;
	char end;
	if (sscanf(v, "%ux%ux%ux%u%c", &bm, &bn, &wm, &wn, &end) != 4 ||
	    !vk_matmul_tile_ok(bm, bn, wm, wn))
		return bad(key, v,
			   "BMxBNxWMxWN, powers of two: BM 64 to 256, "
			   "BN 32 to 128, subgroup tile WM x WN of 16 "
			   "to 64 each, at most 16 subgroups (or 0)",
			   err, errsz);
	out[0] = bm;
	out[1] = bn;
	out[2] = wm;
	out[3] = wn;
	return 0;
}

int vk_tune_read(struct vk_ctx *ctx, const struct belt_backend_options *opt,
		 char *err, size_t errsz)
{
	struct vk_tuning *t = &ctx->tune;
	*t = (struct vk_tuning){.fuse = true,
				.q8x = VK_Q8X_ALL,
				.mv_ksplit_k = -1,
				.mv_swizzle = true,
				.coopmat = true,
				.coopmat_int8 = true,
				.mq_glu = true,
				.mq_add = true,
				.att_coopmat = true,
				.att_short = true,
				.att_seqs = true,
				.cond_stop = true,
				.few_rows = true,
				.few_shared = true,
				.moe_grouped = true,
				.defer_norms = true,
				.pend_one_pass = true,
				.moe_tile = {VK_MOE_TILE}};
	if (belt_settings_check(opt, "vulkan", keys, err, errsz))
		return -1;
	/* fuse and profile: the file's value here, the variable's at each
	 * table_prepare (checked now too) */
	bool b = true;
	if (get_bool("fuse", belt_setting_get(opt, "fuse", NULL), &t->fuse,
		     err, errsz) ||
	    get_bool("fuse", value_of(NULL, "fuse"), &b, err, errsz) ||
	    get_bool("profile", belt_setting_get(opt, "profile", NULL),
		     &t->profile, err, errsz) ||
	    get_bool("profile", value_of(NULL, "profile"), &b, err, errsz) ||
	    get_bool("staging", value_of(opt, "staging"), &t->staging, err,
		     errsz) ||
	    get_bool("mv_swizzle", value_of(opt, "mv_swizzle"),
		     &t->mv_swizzle, err, errsz) ||
	    get_bool("coopmat", value_of(opt, "coopmat"), &t->coopmat, err,
		     errsz) ||
	    get_bool("coopmat_int8", value_of(opt, "coopmat_int8"),
		     &t->coopmat_int8, err, errsz) ||
	    get_bool("mq_glu", value_of(opt, "mq_glu"), &t->mq_glu, err, errsz) ||
	    get_bool("mq_add", value_of(opt, "mq_add"), &t->mq_add, err, errsz) ||
	    get_bool("att_coopmat", value_of(opt, "att_coopmat"), &t->att_coopmat,
		     err, errsz) ||
	    get_bool("att_short", value_of(opt, "att_short"), &t->att_short, err, errsz) ||
	    get_bool("att_seqs", value_of(opt, "att_seqs"), &t->att_seqs, err, errsz) ||
	    get_bool("cond_stop", value_of(opt, "cond_stop"), &t->cond_stop, err, errsz) ||
	    get_bool("stats", value_of(opt, "stats"), &t->stats, err, errsz) ||
	    get_bool("few_rows", value_of(opt, "few_rows"), &t->few_rows, err, errsz) ||
	    get_bool("few_shared", value_of(opt, "few_shared"), &t->few_shared, err, errsz) ||
	    get_bool("moe_grouped", value_of(opt, "moe_grouped"), &t->moe_grouped, err, errsz) ||
	    get_bool("defer_norms", value_of(opt, "defer_norms"), &t->defer_norms, err, errsz) ||
	    get_bool("pend_one_pass", value_of(opt, "pend_one_pass"), &t->pend_one_pass, err,
		     errsz))
		return -1;
	const char *v = value_of(opt, "validation");
	if (v) {
		if (!strcmp(v, "0") || !strcmp(v, "false"))
			t->validation = 0;
		else if (!strcmp(v, "1") || !strcmp(v, "true"))
			t->validation = 1;
		else if (!strcmp(v, "fatal"))
			t->validation = 2;
		else
			return bad("validation", v, "0, 1 or fatal", err, errsz);
	}
	v = value_of(opt, "q8x");
	if (v) {
		if (!strcmp(v, "0") || !strcmp(v, "false"))
			t->q8x = 0;
		else if (!strcmp(v, "1") || !strcmp(v, "true"))
			t->q8x = VK_Q8X_ALL;
		else if (!strcmp(v, "q4_0"))
			t->q8x = VK_Q8X_Q4_0;
		else if (!strcmp(v, "q8_0"))
			t->q8x = VK_Q8X_Q8_0;
		else if (!strcmp(v, "k"))
			t->q8x = VK_Q8X_K;
		else
			return bad("q8x", v, "0, 1, q4_0, q8_0 or k", err, errsz);
	}
	long rows = 0, wg = 0, unr = 0, tile = 0, ks = 0, ks_k = -1, achunk = 0,
	     asplits = 0, akl = 0, avl = 0, gqa_from = VK_ATT_GQA_FROM, fpr = 0, fxg = VK_FEW_XG_K, fwg = 0, funr = 0, fmma = VK_FEW_MMA, fmsg = 0,
	     fnr = 0, moe_rows = VK_MOE_ROWS, blocks = 0, blocks_plain = 0;
	if (get_int("mv_rows", value_of(opt, "mv_rows"), 1, 8, "1 to 8",
		    &rows, err, errsz) ||
	    get_int("mv_wg", value_of(opt, "mv_wg"), 64, 1024,
		    "a power of two from 64 to 1024", &wg, err, errsz) ||
	    get_int("mv_unroll", value_of(opt, "mv_unroll"), 2, 4, "2 or 4",
		    &unr, err, errsz) ||
	    get_int("mv_tile", value_of(opt, "mv_tile"), 2048, 1l << 30,
		    "a multiple of 2048", &tile, err, errsz) ||
	    get_int("mv_ksplit", value_of(opt, "mv_ksplit"), 1, 4,
		    "1, 2 or 4", &ks, err, errsz) ||
	    get_int("mv_ksplit_k", value_of(opt, "mv_ksplit_k"), 0,
		    (long)UINT32_MAX, "an integer >= 0", &ks_k, err, errsz) ||
	    get_int("att_chunk", value_of(opt, "att_chunk"), 32, 1 << 20,
		    "32 to 1048576", &achunk, err, errsz) ||
	    get_int("att_splits", value_of(opt, "att_splits"), 1, 1024,
		    "1 to 1024", &asplits, err, errsz) ||
	    get_int("att_kloads", value_of(opt, "att_kloads"), 1, 64,
		    "1 to 64", &akl, err, errsz) ||
	    get_int("att_vloads", value_of(opt, "att_vloads"), 1, 64,
		    "1 to 64", &avl, err, errsz) ||
	    get_int("att_gqa_from", value_of(opt, "att_gqa_from"), 0,
		    (long)UINT32_MAX, "an integer >= 0 (0: never)", &gqa_from,
		    err, errsz) ||
	    get_int("few_pr", value_of(opt, "few_pr"), 0, VK_FEW_ROWS,
		    "2, 4, 8 or 16 (0: 4)", &fpr, err, errsz) ||
	    get_int("few_nr", value_of(opt, "few_nr"), 0, 8, "1 to 8 (0: 4)", &fnr, err,
		    errsz) ||
	    get_int("few_xg", value_of(opt, "few_xg"), 0, 1l << 30,
		    "an integer >= 0 (0: never)", &fxg, err, errsz) ||
	    get_int("few_wg", value_of(opt, "few_wg"), 64, 1024,
		    "a power of two from 64 to 1024", &fwg, err, errsz) ||
	    get_int("few_unroll", value_of(opt, "few_unroll"), 2, 4, "2 or 4", &funr, err,
		    errsz) ||
	    get_int("few_mma", value_of(opt, "few_mma"), 0, VK_FEW_ROWS,
		    "0 to 16 (0: never)", &fmma, err, errsz) ||
	    get_int("few_mma_sg", value_of(opt, "few_mma_sg"), 0, VK_FEW_MMA_SG_MAX,
		    "0 to 4 (0: by the matrix)",
		    &fmsg, err, errsz) ||
	    get_int("moe_rows", value_of(opt, "moe_rows"), 1, 16, "1 to 16", &moe_rows, err,
		    errsz) ||
	    get_int("mv_blocks", value_of(opt, "mv_blocks"), 1, 4, "1 to 4", &blocks, err,
		    errsz) ||
	    get_int("mv_blocks_plain", value_of(opt, "mv_blocks_plain"), 1, 4, "1 to 4",
		    &blocks_plain, err, errsz))
		return -1;
	t->mv_blocks = (uint32_t)blocks;
	t->mv_blocks_plain = (uint32_t)blocks_plain;
	if (fpr & (fpr - 1) || fpr == 1)
		return bad("few_pr", value_of(opt, "few_pr"), "2, 4, 8 or 16 (0: 4)", err,
			   errsz);
	t->few_pr = (uint32_t)fpr;
	t->few_nr = (uint32_t)fnr;
	t->few_xg = (uint32_t)fxg;
	if (fwg & (fwg - 1))
		return bad("few_wg", value_of(opt, "few_wg"), "a power of two from 64 to 1024",
			   err, errsz);
	if (funr == 3)
		return bad("few_unroll", value_of(opt, "few_unroll"), "2 or 4", err, errsz);
	t->few_wg = (uint32_t)fwg;
	t->few_unroll = (uint32_t)funr;
	t->few_mma = (uint32_t)fmma;
	t->few_mma_sg = (uint32_t)fmsg;
	t->moe_rows = (uint32_t)moe_rows;
	t->att_chunk = (uint32_t)achunk;
	t->att_splits = (uint32_t)asplits;
	t->att_kloads = (uint32_t)akl;
	t->att_vloads = (uint32_t)avl;
	t->att_gqa_from = (uint32_t)gqa_from;
	if (get_tile("mm_tile", value_of(opt, "mm_tile"), t->mm_tile, err, errsz) ||
	    get_tile("mq_tile", value_of(opt, "mq_tile"), t->mq_tile, err, errsz) ||
	    get_tile("moe_tile", value_of(opt, "moe_tile"), t->moe_tile, err, errsz))
		return -1;
	if (wg & (wg - 1))
		return bad("mv_wg", value_of(opt, "mv_wg"),
			   "a power of two from 64 to 1024", err, errsz);
	if (unr == 3)
		return bad("mv_unroll", value_of(opt, "mv_unroll"), "2 or 4",
			   err, errsz);
	if (tile % 2048)
		return bad("mv_tile", value_of(opt, "mv_tile"),
			   "a multiple of 2048", err, errsz);
	if (ks == 3)
		return bad("mv_ksplit", value_of(opt, "mv_ksplit"),
			   "1, 2 or 4", err, errsz);
	t->mv_rows = (uint32_t)rows;
	t->mv_wg = (uint32_t)wg;
	t->mv_unroll = (uint32_t)unr;
	t->mv_tile = (uint32_t)tile;
	t->mv_ksplit = (uint32_t)ks;
	t->mv_ksplit_k = ks_k;
	return 0;
}

int vk_tune_prepare(const struct vk_ctx *ctx, bool *fuse, bool *profile,
		    char *err, size_t errsz)
{
	*fuse = ctx->tune.fuse;
	*profile = ctx->tune.profile;
	if (get_bool("fuse", value_of(NULL, "fuse"), fuse, err, errsz) ||
	    get_bool("profile", value_of(NULL, "profile"), profile, err,
		     errsz))
		return -1;
	*profile = *profile || ctx->profile;
	return 0;
}

/* Q4_0 and Q8_0 matvecs with x as int8 where the device can: 8 or 4
 * packed dot products per 16 weight bytes instead of 32 or 16 int8
 * conversions and FMAs (doc/vulkan.md); q8x 0: the float path, q4_0 or
 * q8_0: int8 x for that type only */
unsigned vk_tune_q8x(const struct vk_ctx *ctx)
{
	return vk_int8_dot(ctx->phys) ? ctx->tune.q8x : 0;
}

void vk_tune_matvec(struct vk_ctx *ctx, const VkPhysicalDeviceProperties *p)
{
	const struct vk_tuning *tu = &ctx->tune;
	/* matvec_fused's settings by variant, the H100's best measured
	 * (doc/vulkan.md): threads per workgroup (more for Q4_0 and int8
	 * x), rows per subgroup (2 for int8 Q4_0: 8B 346 -> 358 tokens/s),
	 * units each lane loads before using them (4 for int8 Q8_0: 8B 236 ->
	 * 245), values of x staged in shared memory at a time (Q4_0 the
	 * larger tile, slower for the rest; int8 x all of a row up to
	 * 16384), and subgroups sharing each row of a matvec with k at least
	 * a bound (2 for F16, every k, and for Q8_0, k >= 8192: down; 1 on a
	 * CPU device, lavapipe, which there runs F16 at twice the speed of
	 * 2). xq: x staged as int8 (5 bytes per 4 values, a scale and sum of
	 * 8 bytes per 32) rather than floats (16). */
	static const struct {
		uint32_t wg, nr, unr, tile, ks, ks_k;
		bool xq;
	} def[VK_FMV_TYPES] = {
		[VK_SH_FMV_F32 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 1, 0, false},
		[VK_SH_FMV_F16 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 2, 0, false},
		[VK_SH_FMV_BF16 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 1, 0, false},
		[VK_SH_FMV_Q8_0 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 2, 8192, false},
		[VK_SH_FMV_Q4_0 - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_Q4_0_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS_Q4_0_XQ, VK_MVF_UNROLL,
			VK_MVF_TILE_XQ, 1, 0, true},
		[VK_SH_FMV_Q8_0_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL_Q8_0_XQ,
			VK_MVF_TILE_XQ, 1, 0, true},
		[VK_SH_FMV_Q4_K - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_Q5_K - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_Q6_K - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_IQ4_XS - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_Q6_K_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS_Q4_0_XQ, VK_MVF_UNROLL,
			VK_MVF_TILE_XQ, 1, 0, true},
		[VK_SH_FMV_Q4_K_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS_Q4_0_XQ, VK_MVF_UNROLL,
			VK_MVF_TILE_XQ, 1, 0, true},
		[VK_SH_FMV_Q5_K_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS_Q4_0_XQ, VK_MVF_UNROLL,
			VK_MVF_TILE_XQ, 1, 0, true},
	};
	/* Each overridden for every variant, for sweeps: mv_wg (64 .. 1024, a
	 * power of two; the default where the device takes fewer threads),
	 * mv_rows (1..8), mv_unroll (2 or 4), mv_tile (a multiple of 2048,
	 * made smaller to fit beside the shader's other shared arrays, 6 KiB
	 * at most), mv_ksplit (1, 2 or 4) and mv_ksplit_k (8192 when only
	 * mv_ksplit is set); mv_swizzle 0: x not swizzled in shared memory,
	 * for comparison. */
	uint32_t wg = tu->mv_wg;
	bool wg_ok = wg && wg <= p->limits.maxComputeWorkGroupInvocations;
	uint32_t shmax = p->limits.maxComputeSharedMemorySize;
	bool cpu_dev = p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	ctx->mv_swz = tu->mv_swizzle;
	for (int i = 0; i < VK_FMV_TYPES; i++) {
		uint32_t w = wg_ok ? wg : def[i].wg;
		ctx->mv_wg[i] = w;
		ctx->mv_nr[i] = tu->mv_rows ? tu->mv_rows : def[i].nr;
		ctx->mv_rpw[i] = ctx->mv_nr[i] * (ctx->subgroup < w ? w / ctx->subgroup : 1);
		ctx->mv_unr[i] = tu->mv_unroll ? tu->mv_unroll : def[i].unr;
		/* shared bytes per 4 values: floats, or int8 with a block's
		 * scale and sum (8 bytes per 32; the K-quants' 16) */
		bool kxq = i >= VK_SH_FMV_Q4_K_XQ - VK_SH_FMV_F32;
		uint32_t b4 = kxq ? 6 : def[i].xq ? 5 : 16;
		uint32_t tile = tu->mv_tile ? tu->mv_tile : def[i].tile;
		while (tile > 2048 && tile / 4 * b4 + 6144 > shmax)
			tile -= 2048;
		ctx->mv_tile[i] = tile;
		uint32_t ks = tu->mv_ksplit ? tu->mv_ksplit : cpu_dev ? 1 : def[i].ks;
		ctx->mv_ks[i] = ks == 2 || ks == 4 ? ks : 1;
		ctx->mv_ks_k[i] = tu->mv_ksplit_k >= 0 ? (uint32_t)tu->mv_ksplit_k
				  : tu->mv_ksplit ? 8192 : def[i].ks_k;
	}
}
