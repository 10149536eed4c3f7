/* The SPIR-V of every shader, compiled from shaders/ by glslc at
 * build time (local.mk) into C array initializers. */
#include "vk.h"

static const uint32_t spv_embed_f32[] =
#include "spv/embed_f32.spv.h"
	;
static const uint32_t spv_embed_f16[] =
#include "spv/embed_f16.spv.h"
	;
static const uint32_t spv_embed_bf16[] =
#include "spv/embed_bf16.spv.h"
	;
static const uint32_t spv_embed_q8_0[] =
#include "spv/embed_q8_0.spv.h"
	;
static const uint32_t spv_embed_q4_0[] =
#include "spv/embed_q4_0.spv.h"
	;
static const uint32_t spv_matvec_f32[] =
#include "spv/matvec_f32.spv.h"
	;
static const uint32_t spv_matvec_f16[] =
#include "spv/matvec_f16.spv.h"
	;
static const uint32_t spv_matvec_bf16[] =
#include "spv/matvec_bf16.spv.h"
	;
static const uint32_t spv_matvec_q8_0[] =
#include "spv/matvec_q8_0.spv.h"
	;
static const uint32_t spv_matvec_q4_0[] =
#include "spv/matvec_q4_0.spv.h"
	;
static const uint32_t spv_rmsnorm[] =
#include "spv/rmsnorm.spv.h"
	;
static const uint32_t spv_rope_kv[] =
#include "spv/rope_kv.spv.h"
	;
static const uint32_t spv_attention[] =
#include "spv/attention.spv.h"
	;
static const uint32_t spv_silu_mul[] =
#include "spv/silu_mul.spv.h"
	;
static const uint32_t spv_quantize_rows[] =
#include "spv/quantize_rows.spv.h"
	;
static const uint32_t spv_add[] =
#include "spv/add.spv.h"
	;
static const uint32_t spv_argmax[] =
#include "spv/argmax.spv.h"
	;
static const uint32_t spv_matvec_fused_f32[] =
#include "spv/matvec_fused_f32.spv.h"
	;
static const uint32_t spv_matvec_fused_f16[] =
#include "spv/matvec_fused_f16.spv.h"
	;
static const uint32_t spv_matvec_fused_bf16[] =
#include "spv/matvec_fused_bf16.spv.h"
	;
static const uint32_t spv_matvec_fused_q8_0[] =
#include "spv/matvec_fused_q8_0.spv.h"
	;
static const uint32_t spv_matvec_fused_q4_0[] =
#include "spv/matvec_fused_q4_0.spv.h"
	;
static const uint32_t spv_matvec_fused_q4_0_xq[] =
#include "spv/matvec_fused_q4_0_xq.spv.h"
	;
static const uint32_t spv_matvec_fused_q8_0_xq[] =
#include "spv/matvec_fused_q8_0_xq.spv.h"
	;
static const uint32_t spv_matvec_fused_q4_k[] =
#include "spv/matvec_fused_q4_k.spv.h"
	;
static const uint32_t spv_matvec_fused_q5_k[] =
#include "spv/matvec_fused_q5_k.spv.h"
	;
static const uint32_t spv_matvec_fused_q6_k[] =
#include "spv/matvec_fused_q6_k.spv.h"
	;
static const uint32_t spv_embed_q6_kr[] =
#include "spv/embed_q6_kr.spv.h"
	;
static const uint32_t spv_repack_q6_k[] =
#include "spv/repack_q6_k.spv.h"
	;
static const uint32_t spv_matmul_q6_kr[] =
#include "spv/matmul_q6_kr.spv.h"
	;
static const uint32_t spv_matvec_fused_q4_k_xq[] =
#include "spv/matvec_fused_q4_k_xq.spv.h"
	;
static const uint32_t spv_matvec_fused_q5_k_xq[] =
#include "spv/matvec_fused_q5_k_xq.spv.h"
	;
static const uint32_t spv_matvec_fused_iq4_xs[] =
#include "spv/matvec_fused_iq4_xs.spv.h"
	;
static const uint32_t spv_matvec_fused_q6_k_xq[] =
#include "spv/matvec_fused_q6_k_xq.spv.h"
	;
static const uint32_t spv_embed_q8_0r[] =
#include "spv/embed_q8_0r.spv.h"
	;
static const uint32_t spv_embed_q4_0r[] =
#include "spv/embed_q4_0r.spv.h"
	;
static const uint32_t spv_repack_q8_0[] =
#include "spv/repack_q8_0.spv.h"
	;
static const uint32_t spv_repack_q4_0[] =
#include "spv/repack_q4_0.spv.h"
	;
static const uint32_t spv_attention_split[] =
#include "spv/attention_split.spv.h"
	;
static const uint32_t spv_attention_ring[] =
#include "spv/attention_ring.spv.h"
	;
static const uint32_t spv_attention_seq[] =
#include "spv/attention_seq.spv.h"
	;
static const uint32_t spv_attention_gqa[] =
#include "spv/attention_gqa.spv.h"
	;
static const uint32_t spv_sample_penalty[] =
#include "spv/sample_penalty.spv.h"
	;
static const uint32_t spv_logit_mask[] =
#include "spv/logit_mask.spv.h"
	;
static const uint32_t spv_sample_threshold[] =
#include "spv/sample_threshold.spv.h"
	;
static const uint32_t spv_sample_gumbel[] =
#include "spv/sample_gumbel.spv.h"
	;
static const uint32_t spv_argmax_gumbel[] =
#include "spv/argmax_gumbel.spv.h"
	;
static const uint32_t spv_sample_tga[] =
#include "spv/sample_tga.spv.h"
	;
static const uint32_t spv_matmul_f32[] =
#include "spv/matmul_f32.spv.h"
	;
static const uint32_t spv_matmul_f16[] =
#include "spv/matmul_f16.spv.h"
	;
static const uint32_t spv_matmul_bf16[] =
#include "spv/matmul_bf16.spv.h"
	;
static const uint32_t spv_matmul_q8_0[] =
#include "spv/matmul_q8_0.spv.h"
	;
static const uint32_t spv_matmul_q4_0[] =
#include "spv/matmul_q4_0.spv.h"
	;
static const uint32_t spv_matmul_q8_0r[] =
#include "spv/matmul_q8_0r.spv.h"
	;
static const uint32_t spv_matmul_q4_0r[] =
#include "spv/matmul_q4_0r.spv.h"
	;
static const uint32_t spv_embed_q4_k[] =
#include "spv/embed_q4_k.spv.h"
	;
static const uint32_t spv_embed_q6_k[] =
#include "spv/embed_q6_k.spv.h"
	;
static const uint32_t spv_matvec_q4_k[] =
#include "spv/matvec_q4_k.spv.h"
	;
static const uint32_t spv_matvec_q6_k[] =
#include "spv/matvec_q6_k.spv.h"
	;
static const uint32_t spv_matmul_q4_k[] =
#include "spv/matmul_q4_k.spv.h"
	;
static const uint32_t spv_matmul_q6_k[] =
#include "spv/matmul_q6_k.spv.h"
	;
static const uint32_t spv_embed_q4_1[] =
#include "spv/embed_q4_1.spv.h"
	;
static const uint32_t spv_embed_q5_0[] =
#include "spv/embed_q5_0.spv.h"
	;
static const uint32_t spv_embed_q5_1[] =
#include "spv/embed_q5_1.spv.h"
	;
static const uint32_t spv_embed_iq4_nl[] =
#include "spv/embed_iq4_nl.spv.h"
	;
static const uint32_t spv_embed_q2_k[] =
#include "spv/embed_q2_k.spv.h"
	;
static const uint32_t spv_embed_q3_k[] =
#include "spv/embed_q3_k.spv.h"
	;
static const uint32_t spv_embed_q5_k[] =
#include "spv/embed_q5_k.spv.h"
	;
static const uint32_t spv_embed_iq4_xs[] =
#include "spv/embed_iq4_xs.spv.h"
	;
static const uint32_t spv_matvec_q4_1[] =
#include "spv/matvec_q4_1.spv.h"
	;
static const uint32_t spv_matvec_q5_0[] =
#include "spv/matvec_q5_0.spv.h"
	;
static const uint32_t spv_matvec_q5_1[] =
#include "spv/matvec_q5_1.spv.h"
	;
static const uint32_t spv_matvec_iq4_nl[] =
#include "spv/matvec_iq4_nl.spv.h"
	;
static const uint32_t spv_matvec_q2_k[] =
#include "spv/matvec_q2_k.spv.h"
	;
static const uint32_t spv_matvec_q3_k[] =
#include "spv/matvec_q3_k.spv.h"
	;
static const uint32_t spv_matvec_q5_k[] =
#include "spv/matvec_q5_k.spv.h"
	;
static const uint32_t spv_matvec_iq4_xs[] =
#include "spv/matvec_iq4_xs.spv.h"
	;
static const uint32_t spv_matmul_q4_1[] =
#include "spv/matmul_q4_1.spv.h"
	;
static const uint32_t spv_matmul_q5_0[] =
#include "spv/matmul_q5_0.spv.h"
	;
static const uint32_t spv_matmul_q5_1[] =
#include "spv/matmul_q5_1.spv.h"
	;
static const uint32_t spv_matmul_iq4_nl[] =
#include "spv/matmul_iq4_nl.spv.h"
	;
static const uint32_t spv_matmul_q2_k[] =
#include "spv/matmul_q2_k.spv.h"
	;
static const uint32_t spv_matmul_q3_k[] =
#include "spv/matmul_q3_k.spv.h"
	;
static const uint32_t spv_matmul_q5_k[] =
#include "spv/matmul_q5_k.spv.h"
	;
static const uint32_t spv_matmul_iq4_xs[] =
#include "spv/matmul_iq4_xs.spv.h"
	;
static const uint32_t spv_attention_rows[] =
#include "spv/attention_rows.spv.h"
	;
static const uint32_t spv_attention_rows_256[] =
#include "spv/attention_rows_256.spv.h"
	;
static const uint32_t spv_attention_rows_cm[] =
#include "spv/attention_rows_cm.spv.h"
	;

static const uint32_t spv_rope[] =
#include "spv/rope.spv.h"
	;
static const uint32_t spv_rope_ff[] =
#include "spv/rope_ff.spv.h"
	;
static const uint32_t spv_kv_store[] =
#include "spv/kv_store.spv.h"
	;
static const uint32_t spv_bias_add[] =
#include "spv/bias_add.spv.h"
	;
static const uint32_t spv_rmsnorm_heads[] =
#include "spv/rmsnorm_heads.spv.h"
	;

static const uint32_t spv_scale[] =
#include "spv/scale.spv.h"
	;
	;
static const uint32_t spv_gelu_mul[] =
#include "spv/gelu_mul.spv.h"
	;
static const uint32_t spv_attention_ext[] =
#include "spv/attention_ext.spv.h"
	;

static const uint32_t spv_moe_route[] =
#include "spv/moe_route.spv.h"
	;
static const uint32_t spv_moe_combine[] =
#include "spv/moe_combine.spv.h"
	;
static const uint32_t spv_matvec_moe_f32[] =
#include "spv/matvec_moe_f32.spv.h"
	;
static const uint32_t spv_matvec_moe_f16[] =
#include "spv/matvec_moe_f16.spv.h"
	;
static const uint32_t spv_matvec_moe_bf16[] =
#include "spv/matvec_moe_bf16.spv.h"
	;
static const uint32_t spv_matvec_moe_q8_0[] =
#include "spv/matvec_moe_q8_0.spv.h"
	;
static const uint32_t spv_matvec_moe_q4_0[] =
#include "spv/matvec_moe_q4_0.spv.h"
	;
static const uint32_t spv_matvec_moe_q4_k[] =
#include "spv/matvec_moe_q4_k.spv.h"
	;
static const uint32_t spv_matvec_moe_q6_k[] =
#include "spv/matvec_moe_q6_k.spv.h"
	;
static const uint32_t spv_matvec_moe_q4_1[] =
#include "spv/matvec_moe_q4_1.spv.h"
	;
static const uint32_t spv_matvec_moe_q5_0[] =
#include "spv/matvec_moe_q5_0.spv.h"
	;
static const uint32_t spv_matvec_moe_q5_1[] =
#include "spv/matvec_moe_q5_1.spv.h"
	;
static const uint32_t spv_matvec_moe_iq4_nl[] =
#include "spv/matvec_moe_iq4_nl.spv.h"
	;
static const uint32_t spv_matvec_moe_q2_k[] =
#include "spv/matvec_moe_q2_k.spv.h"
	;
static const uint32_t spv_matvec_moe_q3_k[] =
#include "spv/matvec_moe_q3_k.spv.h"
	;
static const uint32_t spv_matvec_moe_q5_k[] =
#include "spv/matvec_moe_q5_k.spv.h"
	;
static const uint32_t spv_matvec_moe_iq4_xs[] =
#include "spv/matvec_moe_iq4_xs.spv.h"
	;

static const uint32_t spv_rmsnorm_add[] =
#include "spv/rmsnorm_add.spv.h"
	;

static const uint32_t spv_rmsnorm_add_norm[] =
#include "spv/rmsnorm_add_norm.spv.h"
	;

static const uint32_t spv_qkv_rope[] =
#include "spv/qkv_rope.spv.h"
	;

static const uint32_t spv_matmul_cm_f16[] =
#include "spv/matmul_cm_f16.spv.h"
	;
static const uint32_t spv_matmul_cm_bf16[] =
#include "spv/matmul_cm_bf16.spv.h"
	;
static const uint32_t spv_matmul_cm_q8_0[] =
#include "spv/matmul_cm_q8_0.spv.h"
	;
static const uint32_t spv_matmul_cm_q8_0r[] =
#include "spv/matmul_cm_q8_0r.spv.h"
	;
static const uint32_t spv_matmul_cm_q4_0[] =
#include "spv/matmul_cm_q4_0.spv.h"
	;
static const uint32_t spv_matmul_cm_q4_0r[] =
#include "spv/matmul_cm_q4_0r.spv.h"
	;
static const uint32_t spv_matmul_cm_q4_1[] =
#include "spv/matmul_cm_q4_1.spv.h"
	;
static const uint32_t spv_matmul_cm_q5_0[] =
#include "spv/matmul_cm_q5_0.spv.h"
	;
static const uint32_t spv_matmul_cm_q5_1[] =
#include "spv/matmul_cm_q5_1.spv.h"
	;
static const uint32_t spv_matmul_cm_iq4_nl[] =
#include "spv/matmul_cm_iq4_nl.spv.h"
	;
static const uint32_t spv_matmul_cm_q2_k[] =
#include "spv/matmul_cm_q2_k.spv.h"
	;
static const uint32_t spv_matmul_cm_q3_k[] =
#include "spv/matmul_cm_q3_k.spv.h"
	;
static const uint32_t spv_matmul_cm_q4_k[] =
#include "spv/matmul_cm_q4_k.spv.h"
	;
static const uint32_t spv_matmul_cm_q5_k[] =
#include "spv/matmul_cm_q5_k.spv.h"
	;
static const uint32_t spv_matmul_cm_q6_k[] =
#include "spv/matmul_cm_q6_k.spv.h"
	;
static const uint32_t spv_matmul_cm_q6_kr[] =
#include "spv/matmul_cm_q6_kr.spv.h"
	;
static const uint32_t spv_matmul_cm_iq4_xs[] =
#include "spv/matmul_cm_iq4_xs.spv.h"
	;
static const uint32_t spv_matmul_q8cm_q8_0[] =
#include "spv/matmul_q8cm_q8_0.spv.h"
	;
static const uint32_t spv_matmul_q8cm_q8_0r[] =
#include "spv/matmul_q8cm_q8_0r.spv.h"
	;
static const uint32_t spv_matmul_q8cm_q4_0[] =
#include "spv/matmul_q8cm_q4_0.spv.h"
	;
static const uint32_t spv_matmul_q8cm_q4_0r[] =
#include "spv/matmul_q8cm_q4_0r.spv.h"
	;
static const uint32_t spv_matvec_few_cm_q8_0[] =
#include "spv/matvec_few_cm_q8_0.spv.h"
	;
static const uint32_t spv_matvec_few_cm_q4_0[] =
#include "spv/matvec_few_cm_q4_0.spv.h"
	;


static const uint32_t spv_matvec_moeg_f32[] =
#include "spv/matvec_moeg_f32.spv.h"
	;
static const uint32_t spv_matvec_moeg_f16[] =
#include "spv/matvec_moeg_f16.spv.h"
	;
static const uint32_t spv_matvec_moeg_bf16[] =
#include "spv/matvec_moeg_bf16.spv.h"
	;
static const uint32_t spv_matvec_moeg_q8_0[] =
#include "spv/matvec_moeg_q8_0.spv.h"
	;
static const uint32_t spv_matvec_moeg_q4_0[] =
#include "spv/matvec_moeg_q4_0.spv.h"
	;
static const uint32_t spv_matvec_moeg_q4_k[] =
#include "spv/matvec_moeg_q4_k.spv.h"
	;
static const uint32_t spv_matvec_moeg_q6_k[] =
#include "spv/matvec_moeg_q6_k.spv.h"
	;
static const uint32_t spv_matvec_moeg_q4_1[] =
#include "spv/matvec_moeg_q4_1.spv.h"
	;
static const uint32_t spv_matvec_moeg_q5_0[] =
#include "spv/matvec_moeg_q5_0.spv.h"
	;
static const uint32_t spv_matvec_moeg_q5_1[] =
#include "spv/matvec_moeg_q5_1.spv.h"
	;
static const uint32_t spv_matvec_moeg_iq4_nl[] =
#include "spv/matvec_moeg_iq4_nl.spv.h"
	;
static const uint32_t spv_matvec_moeg_q2_k[] =
#include "spv/matvec_moeg_q2_k.spv.h"
	;
static const uint32_t spv_matvec_moeg_q3_k[] =
#include "spv/matvec_moeg_q3_k.spv.h"
	;
static const uint32_t spv_matvec_moeg_q5_k[] =
#include "spv/matvec_moeg_q5_k.spv.h"
	;
static const uint32_t spv_matvec_moeg_iq4_xs[] =
#include "spv/matvec_moeg_iq4_xs.spv.h"
	;

static const uint32_t spv_matmul_cmg_f16[] =
#include "spv/matmul_cmg_f16.spv.h"
	;
static const uint32_t spv_matmul_cmg_bf16[] =
#include "spv/matmul_cmg_bf16.spv.h"
	;
static const uint32_t spv_matmul_cmg_q8_0[] =
#include "spv/matmul_cmg_q8_0.spv.h"
	;
static const uint32_t spv_matmul_cmg_q4_0[] =
#include "spv/matmul_cmg_q4_0.spv.h"
	;
static const uint32_t spv_matmul_cmg_q4_1[] =
#include "spv/matmul_cmg_q4_1.spv.h"
	;
static const uint32_t spv_matmul_cmg_q5_0[] =
#include "spv/matmul_cmg_q5_0.spv.h"
	;
static const uint32_t spv_matmul_cmg_q5_1[] =
#include "spv/matmul_cmg_q5_1.spv.h"
	;
static const uint32_t spv_matmul_cmg_iq4_nl[] =
#include "spv/matmul_cmg_iq4_nl.spv.h"
	;
static const uint32_t spv_matmul_cmg_q2_k[] =
#include "spv/matmul_cmg_q2_k.spv.h"
	;
static const uint32_t spv_matmul_cmg_q3_k[] =
#include "spv/matmul_cmg_q3_k.spv.h"
	;
static const uint32_t spv_matmul_cmg_q4_k[] =
#include "spv/matmul_cmg_q4_k.spv.h"
	;
static const uint32_t spv_matmul_cmg_q5_k[] =
#include "spv/matmul_cmg_q5_k.spv.h"
	;
static const uint32_t spv_matmul_cmg_q6_k[] =
#include "spv/matmul_cmg_q6_k.spv.h"
	;
static const uint32_t spv_matmul_cmg_iq4_xs[] =
#include "spv/matmul_cmg_iq4_xs.spv.h"
	;

static const uint32_t spv_silu[] =
#include "spv/silu.spv.h"
	;
static const uint32_t spv_top_k[] =
#include "spv/top_k.spv.h"
	;

#define ENTRY(e_, a_) [e_] = {.code = a_, .size = sizeof a_, .name = #a_ + 4}

const struct vk_spirv vk_spirv[VK_SH_COUNT] = {
	ENTRY(VK_SH_EMBED_F32, spv_embed_f32),
	ENTRY(VK_SH_EMBED_F16, spv_embed_f16),
	ENTRY(VK_SH_EMBED_BF16, spv_embed_bf16),
	ENTRY(VK_SH_EMBED_Q8_0, spv_embed_q8_0),
	ENTRY(VK_SH_EMBED_Q4_0, spv_embed_q4_0),
	ENTRY(VK_SH_MATVEC_F32, spv_matvec_f32),
	ENTRY(VK_SH_MATVEC_F16, spv_matvec_f16),
	ENTRY(VK_SH_MATVEC_BF16, spv_matvec_bf16),
	ENTRY(VK_SH_MATVEC_Q8_0, spv_matvec_q8_0),
	ENTRY(VK_SH_MATVEC_Q4_0, spv_matvec_q4_0),
	ENTRY(VK_SH_RMSNORM, spv_rmsnorm),
	ENTRY(VK_SH_RMSNORM_ADD, spv_rmsnorm_add),
	ENTRY(VK_SH_RMSNORM_ADD_NORM, spv_rmsnorm_add_norm),
	ENTRY(VK_SH_QKV_ROPE, spv_qkv_rope),
	ENTRY(VK_SH_MATMUL_CM_F16, spv_matmul_cm_f16),
	ENTRY(VK_SH_MATMUL_CM_BF16, spv_matmul_cm_bf16),
	ENTRY(VK_SH_MATMUL_CM_Q8_0, spv_matmul_cm_q8_0),
	ENTRY(VK_SH_MATMUL_CM_Q8_0R, spv_matmul_cm_q8_0r),
	ENTRY(VK_SH_MATMUL_CM_Q4_0, spv_matmul_cm_q4_0),
	ENTRY(VK_SH_MATMUL_CM_Q4_0R, spv_matmul_cm_q4_0r),
	ENTRY(VK_SH_MATMUL_CM_Q4_1, spv_matmul_cm_q4_1),
	ENTRY(VK_SH_MATMUL_CM_Q5_0, spv_matmul_cm_q5_0),
	ENTRY(VK_SH_MATMUL_CM_Q5_1, spv_matmul_cm_q5_1),
	ENTRY(VK_SH_MATMUL_CM_IQ4_NL, spv_matmul_cm_iq4_nl),
	ENTRY(VK_SH_MATMUL_CM_Q2_K, spv_matmul_cm_q2_k),
	ENTRY(VK_SH_MATMUL_CM_Q3_K, spv_matmul_cm_q3_k),
	ENTRY(VK_SH_MATMUL_CM_Q4_K, spv_matmul_cm_q4_k),
	ENTRY(VK_SH_MATMUL_CM_Q5_K, spv_matmul_cm_q5_k),
	ENTRY(VK_SH_MATMUL_CM_Q6_K, spv_matmul_cm_q6_k),
	ENTRY(VK_SH_MATMUL_CM_Q6_KR, spv_matmul_cm_q6_kr),
	ENTRY(VK_SH_MATMUL_CM_IQ4_XS, spv_matmul_cm_iq4_xs),
	ENTRY(VK_SH_MATMUL_Q8CM_Q8_0, spv_matmul_q8cm_q8_0),
	ENTRY(VK_SH_MATMUL_Q8CM_Q8_0R, spv_matmul_q8cm_q8_0r),
	ENTRY(VK_SH_MATMUL_Q8CM_Q4_0, spv_matmul_q8cm_q4_0),
	ENTRY(VK_SH_MATMUL_Q8CM_Q4_0R, spv_matmul_q8cm_q4_0r),
	ENTRY(VK_SH_FEW_CM_Q8_0, spv_matvec_few_cm_q8_0),
	ENTRY(VK_SH_FEW_CM_Q4_0, spv_matvec_few_cm_q4_0),
	ENTRY(VK_SH_MOECM_F16, spv_matmul_cmg_f16),
	ENTRY(VK_SH_MOECM_BF16, spv_matmul_cmg_bf16),
	ENTRY(VK_SH_MOECM_Q8_0, spv_matmul_cmg_q8_0),
	ENTRY(VK_SH_MOECM_Q4_0, spv_matmul_cmg_q4_0),
	ENTRY(VK_SH_MOECM_Q4_1, spv_matmul_cmg_q4_1),
	ENTRY(VK_SH_MOECM_Q5_0, spv_matmul_cmg_q5_0),
	ENTRY(VK_SH_MOECM_Q5_1, spv_matmul_cmg_q5_1),
	ENTRY(VK_SH_MOECM_IQ4_NL, spv_matmul_cmg_iq4_nl),
	ENTRY(VK_SH_MOECM_Q2_K, spv_matmul_cmg_q2_k),
	ENTRY(VK_SH_MOECM_Q3_K, spv_matmul_cmg_q3_k),
	ENTRY(VK_SH_MOECM_Q4_K, spv_matmul_cmg_q4_k),
	ENTRY(VK_SH_MOECM_Q5_K, spv_matmul_cmg_q5_k),
	ENTRY(VK_SH_MOECM_Q6_K, spv_matmul_cmg_q6_k),
	ENTRY(VK_SH_MOECM_IQ4_XS, spv_matmul_cmg_iq4_xs),
	ENTRY(VK_SH_ROPE_KV, spv_rope_kv),
	ENTRY(VK_SH_ATTENTION, spv_attention),
	ENTRY(VK_SH_SILU_MUL, spv_silu_mul),
	ENTRY(VK_SH_QUANTIZE_ROWS, spv_quantize_rows),
	ENTRY(VK_SH_ADD, spv_add),
	ENTRY(VK_SH_ARGMAX, spv_argmax),
	ENTRY(VK_SH_FMV_F32, spv_matvec_fused_f32),
	ENTRY(VK_SH_FMV_F16, spv_matvec_fused_f16),
	ENTRY(VK_SH_FMV_BF16, spv_matvec_fused_bf16),
	ENTRY(VK_SH_FMV_Q8_0, spv_matvec_fused_q8_0),
	ENTRY(VK_SH_FMV_Q4_0, spv_matvec_fused_q4_0),
	ENTRY(VK_SH_FMV_Q4_0_XQ, spv_matvec_fused_q4_0_xq),
	ENTRY(VK_SH_FMV_Q8_0_XQ, spv_matvec_fused_q8_0_xq),
	ENTRY(VK_SH_FMV_Q4_K, spv_matvec_fused_q4_k),
	ENTRY(VK_SH_FMV_Q5_K, spv_matvec_fused_q5_k),
	ENTRY(VK_SH_FMV_Q6_K, spv_matvec_fused_q6_k),
	ENTRY(VK_SH_FMV_Q4_K_XQ, spv_matvec_fused_q4_k_xq),
	ENTRY(VK_SH_FMV_Q5_K_XQ, spv_matvec_fused_q5_k_xq),
	ENTRY(VK_SH_FMV_IQ4_XS, spv_matvec_fused_iq4_xs),
	ENTRY(VK_SH_FMV_Q6_K_XQ, spv_matvec_fused_q6_k_xq),
	ENTRY(VK_SH_EMBED_Q6_KR, spv_embed_q6_kr),
	ENTRY(VK_SH_REPACK_Q6_K, spv_repack_q6_k),
	ENTRY(VK_SH_MATMUL_Q6_KR, spv_matmul_q6_kr),
	ENTRY(VK_SH_EMBED_Q8_0R, spv_embed_q8_0r),
	ENTRY(VK_SH_EMBED_Q4_0R, spv_embed_q4_0r),
	ENTRY(VK_SH_REPACK_Q8_0, spv_repack_q8_0),
	ENTRY(VK_SH_REPACK_Q4_0, spv_repack_q4_0),
	ENTRY(VK_SH_ATTENTION_SPLIT, spv_attention_split),
	ENTRY(VK_SH_ATTENTION_RING, spv_attention_ring),
	ENTRY(VK_SH_ATTENTION_SEQ, spv_attention_seq),
	ENTRY(VK_SH_ATTENTION_GQA, spv_attention_gqa),
	ENTRY(VK_SH_SAMPLE_PENALTY, spv_sample_penalty),
	ENTRY(VK_SH_SAMPLE_THRESHOLD, spv_sample_threshold),
	ENTRY(VK_SH_SAMPLE_GUMBEL, spv_sample_gumbel),
	ENTRY(VK_SH_ARGMAX_GUMBEL, spv_argmax_gumbel),
	ENTRY(VK_SH_SAMPLE_TGA, spv_sample_tga),
	ENTRY(VK_SH_LOGIT_MASK, spv_logit_mask),
	ENTRY(VK_SH_MATMUL_F32, spv_matmul_f32),
	ENTRY(VK_SH_MATMUL_F16, spv_matmul_f16),
	ENTRY(VK_SH_MATMUL_BF16, spv_matmul_bf16),
	ENTRY(VK_SH_MATMUL_Q8_0, spv_matmul_q8_0),
	ENTRY(VK_SH_MATMUL_Q4_0, spv_matmul_q4_0),
	ENTRY(VK_SH_MATMUL_Q8_0R, spv_matmul_q8_0r),
	ENTRY(VK_SH_MATMUL_Q4_0R, spv_matmul_q4_0r),
	ENTRY(VK_SH_EMBED_Q4_K, spv_embed_q4_k),
	ENTRY(VK_SH_EMBED_Q6_K, spv_embed_q6_k),
	ENTRY(VK_SH_MATVEC_Q4_K, spv_matvec_q4_k),
	ENTRY(VK_SH_MATVEC_Q6_K, spv_matvec_q6_k),
	ENTRY(VK_SH_MATMUL_Q4_K, spv_matmul_q4_k),
	ENTRY(VK_SH_MATMUL_Q6_K, spv_matmul_q6_k),
	ENTRY(VK_SH_EMBED_Q4_1, spv_embed_q4_1),
	ENTRY(VK_SH_EMBED_Q5_0, spv_embed_q5_0),
	ENTRY(VK_SH_EMBED_Q5_1, spv_embed_q5_1),
	ENTRY(VK_SH_EMBED_IQ4_NL, spv_embed_iq4_nl),
	ENTRY(VK_SH_EMBED_Q2_K, spv_embed_q2_k),
	ENTRY(VK_SH_EMBED_Q3_K, spv_embed_q3_k),
	ENTRY(VK_SH_EMBED_Q5_K, spv_embed_q5_k),
	ENTRY(VK_SH_EMBED_IQ4_XS, spv_embed_iq4_xs),
	ENTRY(VK_SH_MATVEC_Q4_1, spv_matvec_q4_1),
	ENTRY(VK_SH_MATVEC_Q5_0, spv_matvec_q5_0),
	ENTRY(VK_SH_MATVEC_Q5_1, spv_matvec_q5_1),
	ENTRY(VK_SH_MATVEC_IQ4_NL, spv_matvec_iq4_nl),
	ENTRY(VK_SH_MATVEC_Q2_K, spv_matvec_q2_k),
	ENTRY(VK_SH_MATVEC_Q3_K, spv_matvec_q3_k),
	ENTRY(VK_SH_MATVEC_Q5_K, spv_matvec_q5_k),
	ENTRY(VK_SH_MATVEC_IQ4_XS, spv_matvec_iq4_xs),
	ENTRY(VK_SH_MATMUL_Q4_1, spv_matmul_q4_1),
	ENTRY(VK_SH_MATMUL_Q5_0, spv_matmul_q5_0),
	ENTRY(VK_SH_MATMUL_Q5_1, spv_matmul_q5_1),
	ENTRY(VK_SH_MATMUL_IQ4_NL, spv_matmul_iq4_nl),
	ENTRY(VK_SH_MATMUL_Q2_K, spv_matmul_q2_k),
	ENTRY(VK_SH_MATMUL_Q3_K, spv_matmul_q3_k),
	ENTRY(VK_SH_MATMUL_Q5_K, spv_matmul_q5_k),
	ENTRY(VK_SH_MATMUL_IQ4_XS, spv_matmul_iq4_xs),
	ENTRY(VK_SH_ATT_ROWS, spv_attention_rows),
	ENTRY(VK_SH_ATT_ROWS_256, spv_attention_rows_256),
	ENTRY(VK_SH_ATT_ROWS_CM, spv_attention_rows_cm),
	ENTRY(VK_SH_ROPE, spv_rope),
	ENTRY(VK_SH_ROPE_FF, spv_rope_ff),
	ENTRY(VK_SH_KV_STORE, spv_kv_store),
	ENTRY(VK_SH_BIAS_ADD, spv_bias_add),
	ENTRY(VK_SH_RMSNORM_HEADS, spv_rmsnorm_heads),
	ENTRY(VK_SH_SCALE, spv_scale),
	ENTRY(VK_SH_GELU_MUL, spv_gelu_mul),
	ENTRY(VK_SH_ATTENTION_EXT, spv_attention_ext),
	ENTRY(VK_SH_MOE_ROUTE, spv_moe_route),
	ENTRY(VK_SH_MOE_COMBINE, spv_moe_combine),
	ENTRY(VK_SH_MOE_F32, spv_matvec_moe_f32),
	ENTRY(VK_SH_MOE_F16, spv_matvec_moe_f16),
	ENTRY(VK_SH_MOE_BF16, spv_matvec_moe_bf16),
	ENTRY(VK_SH_MOE_Q8_0, spv_matvec_moe_q8_0),
	ENTRY(VK_SH_MOE_Q4_0, spv_matvec_moe_q4_0),
	ENTRY(VK_SH_MOE_Q4_K, spv_matvec_moe_q4_k),
	ENTRY(VK_SH_MOE_Q6_K, spv_matvec_moe_q6_k),
	ENTRY(VK_SH_MOE_Q4_1, spv_matvec_moe_q4_1),
	ENTRY(VK_SH_MOE_Q5_0, spv_matvec_moe_q5_0),
	ENTRY(VK_SH_MOE_Q5_1, spv_matvec_moe_q5_1),
	ENTRY(VK_SH_MOE_IQ4_NL, spv_matvec_moe_iq4_nl),
	ENTRY(VK_SH_MOE_Q2_K, spv_matvec_moe_q2_k),
	ENTRY(VK_SH_MOE_Q3_K, spv_matvec_moe_q3_k),
	ENTRY(VK_SH_MOE_Q5_K, spv_matvec_moe_q5_k),
	ENTRY(VK_SH_MOE_IQ4_XS, spv_matvec_moe_iq4_xs),
	ENTRY(VK_SH_MOEG_F32, spv_matvec_moeg_f32),
	ENTRY(VK_SH_MOEG_F16, spv_matvec_moeg_f16),
	ENTRY(VK_SH_MOEG_BF16, spv_matvec_moeg_bf16),
	ENTRY(VK_SH_MOEG_Q8_0, spv_matvec_moeg_q8_0),
	ENTRY(VK_SH_MOEG_Q4_0, spv_matvec_moeg_q4_0),
	ENTRY(VK_SH_MOEG_Q4_K, spv_matvec_moeg_q4_k),
	ENTRY(VK_SH_MOEG_Q6_K, spv_matvec_moeg_q6_k),
	ENTRY(VK_SH_MOEG_Q4_1, spv_matvec_moeg_q4_1),
	ENTRY(VK_SH_MOEG_Q5_0, spv_matvec_moeg_q5_0),
	ENTRY(VK_SH_MOEG_Q5_1, spv_matvec_moeg_q5_1),
	ENTRY(VK_SH_MOEG_IQ4_NL, spv_matvec_moeg_iq4_nl),
	ENTRY(VK_SH_MOEG_Q2_K, spv_matvec_moeg_q2_k),
	ENTRY(VK_SH_MOEG_Q3_K, spv_matvec_moeg_q3_k),
	ENTRY(VK_SH_MOEG_Q5_K, spv_matvec_moeg_q5_k),
	ENTRY(VK_SH_MOEG_IQ4_XS, spv_matvec_moeg_iq4_xs),
	ENTRY(VK_SH_SILU, spv_silu),
	ENTRY(VK_SH_TOP_K, spv_top_k),
};
