# plugins/backend-vulkan: the Vulkan backend module (built only when
# configure finds Vulkan and glslc). Shaders in shaders/ are compiled by
# glslc into C array initializers (spv/*.spv.h in the build tree) that
# shaders.c embeds.
if HAVE_VULKAN
plugin_LTLIBRARIES += plugins/backend-vulkan.la
plugins_backend_vulkan_la_SOURCES = \
	plugins/backend-vulkan/vk.h \
	plugins/backend-vulkan/backend.c \
	plugins/backend-vulkan/batch.c \
	plugins/backend-vulkan/buffers.c \
	plugins/backend-vulkan/device.c \
	plugins/backend-vulkan/devices.c \
	plugins/backend-vulkan/ext.c \
	plugins/backend-vulkan/fusion.c \
	plugins/backend-vulkan/gated.c \
	plugins/backend-vulkan/kernels.c \
	plugins/backend-vulkan/matmul.c \
	plugins/backend-vulkan/moe.c \
	plugins/backend-vulkan/pipelines.c \
	plugins/backend-vulkan/plan.h \
	plugins/backend-vulkan/plugin.c \
	plugins/backend-vulkan/profile.c \
	plugins/backend-vulkan/ctx.h \
	plugins/backend-vulkan/record.c \
	plugins/backend-vulkan/repack.c \
	plugins/backend-vulkan/shaders.c \
	plugins/backend-vulkan/stats.c \
	plugins/backend-vulkan/tuning.c
plugins_backend_vulkan_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/plugins/backend-vulkan
plugins_backend_vulkan_la_CFLAGS = $(AM_CFLAGS) $(VULKAN_CFLAGS)
plugins_backend_vulkan_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_backend_vulkan_la_LIBADD = libbelt.la $(VULKAN_LIBS) -lm

VK_SPV = plugins/backend-vulkan/spv/embed_f32.spv.h \
	plugins/backend-vulkan/spv/embed_f16.spv.h \
	plugins/backend-vulkan/spv/embed_bf16.spv.h \
	plugins/backend-vulkan/spv/embed_q8_0.spv.h \
	plugins/backend-vulkan/spv/embed_q4_0.spv.h \
	plugins/backend-vulkan/spv/matvec_f32.spv.h \
	plugins/backend-vulkan/spv/matvec_f16.spv.h \
	plugins/backend-vulkan/spv/matvec_bf16.spv.h \
	plugins/backend-vulkan/spv/matvec_q8_0.spv.h \
	plugins/backend-vulkan/spv/matvec_q4_0.spv.h \
	plugins/backend-vulkan/spv/rmsnorm.spv.h \
	plugins/backend-vulkan/spv/rope_kv.spv.h \
	plugins/backend-vulkan/spv/attention.spv.h \
	plugins/backend-vulkan/spv/silu_mul.spv.h \
	plugins/backend-vulkan/spv/quantize_rows.spv.h \
	plugins/backend-vulkan/spv/add.spv.h \
	plugins/backend-vulkan/spv/argmax.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_f32.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_f16.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_bf16.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q8_0.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q4_0.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q4_0_xq.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q8_0_xq.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q4_k.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q5_k.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q6_k.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q4_k_xq.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q5_k_xq.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_iq4_xs.spv.h \
	plugins/backend-vulkan/spv/matvec_fused_q6_k_xq.spv.h \
	plugins/backend-vulkan/spv/embed_q6_kr.spv.h \
	plugins/backend-vulkan/spv/repack_q6_k.spv.h \
	plugins/backend-vulkan/spv/matmul_q6_kr.spv.h \
	plugins/backend-vulkan/spv/embed_q8_0r.spv.h \
	plugins/backend-vulkan/spv/embed_q4_0r.spv.h \
	plugins/backend-vulkan/spv/repack_q8_0.spv.h \
	plugins/backend-vulkan/spv/repack_q4_0.spv.h \
	plugins/backend-vulkan/spv/attention_split.spv.h \
	plugins/backend-vulkan/spv/attention_ring.spv.h \
	plugins/backend-vulkan/spv/attention_seq.spv.h \
	plugins/backend-vulkan/spv/attention_gqa.spv.h \
	plugins/backend-vulkan/spv/sample_penalty.spv.h \
	plugins/backend-vulkan/spv/logit_mask.spv.h \
	plugins/backend-vulkan/spv/sample_threshold.spv.h \
	plugins/backend-vulkan/spv/sample_gumbel.spv.h \
	plugins/backend-vulkan/spv/argmax_gumbel.spv.h \
	plugins/backend-vulkan/spv/sample_tga.spv.h \
	plugins/backend-vulkan/spv/matmul_f32.spv.h \
	plugins/backend-vulkan/spv/matmul_f16.spv.h \
	plugins/backend-vulkan/spv/matmul_bf16.spv.h \
	plugins/backend-vulkan/spv/matmul_q8_0.spv.h \
	plugins/backend-vulkan/spv/matmul_q4_0.spv.h \
	plugins/backend-vulkan/spv/matmul_q8_0r.spv.h \
	plugins/backend-vulkan/spv/matmul_q4_0r.spv.h \
	plugins/backend-vulkan/spv/attention_rows.spv.h \
	plugins/backend-vulkan/spv/attention_rows_256.spv.h \
	plugins/backend-vulkan/spv/embed_q4_k.spv.h \
	plugins/backend-vulkan/spv/embed_q6_k.spv.h \
	plugins/backend-vulkan/spv/matvec_q4_k.spv.h \
	plugins/backend-vulkan/spv/matvec_q6_k.spv.h \
	plugins/backend-vulkan/spv/matmul_q4_k.spv.h \
	plugins/backend-vulkan/spv/matmul_q6_k.spv.h \
	plugins/backend-vulkan/spv/embed_q4_1.spv.h \
	plugins/backend-vulkan/spv/embed_q5_0.spv.h \
	plugins/backend-vulkan/spv/embed_q5_1.spv.h \
	plugins/backend-vulkan/spv/embed_iq4_nl.spv.h \
	plugins/backend-vulkan/spv/embed_q2_k.spv.h \
	plugins/backend-vulkan/spv/embed_q3_k.spv.h \
	plugins/backend-vulkan/spv/embed_q5_k.spv.h \
	plugins/backend-vulkan/spv/embed_iq4_xs.spv.h \
	plugins/backend-vulkan/spv/matvec_q4_1.spv.h \
	plugins/backend-vulkan/spv/matvec_q5_0.spv.h \
	plugins/backend-vulkan/spv/matvec_q5_1.spv.h \
	plugins/backend-vulkan/spv/matvec_iq4_nl.spv.h \
	plugins/backend-vulkan/spv/matvec_q2_k.spv.h \
	plugins/backend-vulkan/spv/matvec_q3_k.spv.h \
	plugins/backend-vulkan/spv/matvec_q5_k.spv.h \
	plugins/backend-vulkan/spv/matvec_iq4_xs.spv.h \
	plugins/backend-vulkan/spv/matmul_q4_1.spv.h \
	plugins/backend-vulkan/spv/matmul_q5_0.spv.h \
	plugins/backend-vulkan/spv/matmul_q5_1.spv.h \
	plugins/backend-vulkan/spv/matmul_iq4_nl.spv.h \
	plugins/backend-vulkan/spv/matmul_q2_k.spv.h \
	plugins/backend-vulkan/spv/matmul_q3_k.spv.h \
	plugins/backend-vulkan/spv/matmul_q5_k.spv.h \
	plugins/backend-vulkan/spv/matmul_iq4_xs.spv.h

# shaders.c includes the generated headers (Makefile.am has no
# BUILT_SOURCES, so the objects name them)
$(plugins_backend_vulkan_la_OBJECTS): $(VK_SPV)
CLEANFILES += $(VK_SPV)
# the shader interface architecture plugins build against (belt/arch.h)
shaderdir = $(pkgdatadir)/shaders
dist_shader_DATA = shaders/common.glsl
VK_GLSLC = $(GLSLC) --target-env=vulkan1.2 -O -mfmt=c -I$(srcdir)/shaders
# what embed.comp, matvec.comp and matmul.comp include for block types
VK_QUANTS = $(srcdir)/shaders/quants.glsl $(srcdir)/shaders/quants32.glsl \
	$(srcdir)/shaders/kquants.glsl

plugins/backend-vulkan/spv/embed_f32.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F32 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_f16.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F16 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_bf16.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_BF16 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q8_0.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q4_0.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/matvec_f32.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F32 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_f16.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F16 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_bf16.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_BF16 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q8_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q4_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/rmsnorm.spv.h: $(srcdir)/shaders/rmsnorm.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/rmsnorm.comp

VK_SPV += plugins/backend-vulkan/spv/rmsnorm_add.spv.h
plugins/backend-vulkan/spv/rmsnorm_add.spv.h: $(srcdir)/shaders/rmsnorm.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DADD -o $@ $(srcdir)/shaders/rmsnorm.comp

VK_SPV += plugins/backend-vulkan/spv/rmsnorm_add_norm.spv.h
plugins/backend-vulkan/spv/rmsnorm_add_norm.spv.h: $(srcdir)/shaders/rmsnorm.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DADD -DNORM2 -o $@ $(srcdir)/shaders/rmsnorm.comp

VK_SPV += plugins/backend-vulkan/spv/qkv_rope.spv.h
plugins/backend-vulkan/spv/qkv_rope.spv.h: $(srcdir)/shaders/qkv_rope.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/qkv_rope.comp
EXTRA_DIST += shaders/qkv_rope.comp

plugins/backend-vulkan/spv/rope_kv.spv.h: $(srcdir)/shaders/rope_kv.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/rope_kv.comp

plugins/backend-vulkan/spv/attention.spv.h: $(srcdir)/shaders/attention.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/attention.comp

plugins/backend-vulkan/spv/silu_mul.spv.h: $(srcdir)/shaders/silu_mul.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/silu_mul.comp

plugins/backend-vulkan/spv/quantize_rows.spv.h: $(srcdir)/shaders/quantize_rows.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/quantize_rows.comp

plugins/backend-vulkan/spv/add.spv.h: $(srcdir)/shaders/add.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/add.comp

plugins/backend-vulkan/spv/argmax.spv.h: $(srcdir)/shaders/argmax.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/wg_argmax.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/argmax.comp

plugins/backend-vulkan/spv/matvec_fused_f32.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F32 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_f16.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F16 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_bf16.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_BF16 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q8_0.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q4_0.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q4_0_xq.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -DXQ8 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q8_0_xq.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -DXQ8 -o $@ $(srcdir)/shaders/matvec_fused.comp


plugins/backend-vulkan/spv/embed_q8_0r.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -DREPACK -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q4_0r.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -DREPACK -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/matvec_fused_q4_k.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_K -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q5_k.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_K -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q6_k.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q4_k_xq.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_K -DXQ8 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q5_k_xq.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_K -DXQ8 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_iq4_xs.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_XS -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/matvec_fused_q6_k_xq.spv.h: $(srcdir)/shaders/matvec_fused.comp $(srcdir)/shaders/fused_kquants.glsl $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -DXQ8 -o $@ $(srcdir)/shaders/matvec_fused.comp

plugins/backend-vulkan/spv/embed_q6_kr.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -DREPACK -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/repack_q6_k.spv.h: $(srcdir)/shaders/repack.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -o $@ $(srcdir)/shaders/repack.comp

plugins/backend-vulkan/spv/matmul_q6_kr.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -DREPACK -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/repack_q8_0.spv.h: $(srcdir)/shaders/repack.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/repack.comp

plugins/backend-vulkan/spv/repack_q4_0.spv.h: $(srcdir)/shaders/repack.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/repack.comp

plugins/backend-vulkan/spv/attention_split.spv.h: $(srcdir)/shaders/attention.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DSPLIT -o $@ $(srcdir)/shaders/attention.comp

plugins/backend-vulkan/spv/attention_ring.spv.h: $(srcdir)/shaders/attention.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DRING -o $@ $(srcdir)/shaders/attention.comp

plugins/backend-vulkan/spv/attention_seq.spv.h: $(srcdir)/shaders/attention.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DSEQS -o $@ $(srcdir)/shaders/attention.comp

plugins/backend-vulkan/spv/attention_gqa.spv.h: $(srcdir)/shaders/attention_gqa.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/attention_gqa.comp
EXTRA_DIST += shaders/attention_gqa.comp

plugins/backend-vulkan/spv/sample_penalty.spv.h: $(srcdir)/shaders/sample_penalty.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/sample_penalty.comp

plugins/backend-vulkan/spv/logit_mask.spv.h: $(srcdir)/shaders/logit_mask.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/logit_mask.comp

plugins/backend-vulkan/spv/sample_threshold.spv.h: $(srcdir)/shaders/sample_threshold.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/sample_threshold.comp

plugins/backend-vulkan/spv/sample_gumbel.spv.h: $(srcdir)/shaders/sample_gumbel.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/gumbel.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/sample_gumbel.comp

plugins/backend-vulkan/spv/argmax_gumbel.spv.h: $(srcdir)/shaders/argmax.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/gumbel.glsl $(srcdir)/shaders/wg_argmax.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DGUMBEL -o $@ $(srcdir)/shaders/argmax.comp

plugins/backend-vulkan/spv/sample_tga.spv.h: $(srcdir)/shaders/sample_threshold.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/gumbel.glsl $(srcdir)/shaders/wg_argmax.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DARGMAX -o $@ $(srcdir)/shaders/sample_threshold.comp

plugins/backend-vulkan/spv/matmul_f32.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F32 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_f16.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_F16 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_bf16.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_BF16 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q8_0.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q4_0.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q8_0r.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q8_0 -DREPACK -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q4_0r.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_0 -DREPACK -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/embed_q4_k.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_K -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q6_k.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/matvec_q4_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_K -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q6_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matmul_q4_k.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_K -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q6_k.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q6_K -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/embed_q4_1.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_1 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q5_0.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_0 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q5_1.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_1 -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_iq4_nl.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_NL -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q2_k.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q2_K -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q3_k.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q3_K -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_q5_k.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_K -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/embed_iq4_xs.spv.h: $(srcdir)/shaders/embed.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_XS -o $@ $(srcdir)/shaders/embed.comp

plugins/backend-vulkan/spv/matvec_q4_1.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_1 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q5_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_0 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q5_1.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_1 -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_iq4_nl.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_NL -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q2_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q2_K -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q3_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q3_K -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_q5_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_K -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matvec_iq4_xs.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_XS -o $@ $(srcdir)/shaders/matvec.comp

plugins/backend-vulkan/spv/matmul_q4_1.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q4_1 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q5_0.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_0 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q5_1.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_1 -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_iq4_nl.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_NL -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q2_k.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q2_K -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q3_k.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q3_K -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_q5_k.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_Q5_K -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/matmul_iq4_xs.spv.h: $(srcdir)/shaders/matmul.comp $(srcdir)/shaders/matmul_load.glsl $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DTYPE_IQ4_XS -o $@ $(srcdir)/shaders/matmul.comp

plugins/backend-vulkan/spv/attention_rows.spv.h: $(srcdir)/shaders/attention_rows.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/attention_rows.comp

plugins/backend-vulkan/spv/attention_rows_256.spv.h: $(srcdir)/shaders/attention_rows.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DHD=256 -o $@ $(srcdir)/shaders/attention_rows.comp

# The ops of architectures beyond Llama 1/2 (rope alone, with frequency
# factors, kv_store, bias_add, rmsnorm_heads).
VK_SPV += plugins/backend-vulkan/spv/rope.spv.h \
	plugins/backend-vulkan/spv/rope_ff.spv.h \
	plugins/backend-vulkan/spv/kv_store.spv.h \
	plugins/backend-vulkan/spv/bias_add.spv.h \
	plugins/backend-vulkan/spv/rmsnorm_heads.spv.h
plugins/backend-vulkan/spv/rope.spv.h: $(srcdir)/shaders/rope.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/rope.comp
plugins/backend-vulkan/spv/rope_ff.spv.h: $(srcdir)/shaders/rope.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/rope.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DFF -o $@ $(srcdir)/shaders/rope.comp
plugins/backend-vulkan/spv/kv_store.spv.h: $(srcdir)/shaders/kv_store.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/kv_store.comp
plugins/backend-vulkan/spv/bias_add.spv.h: $(srcdir)/shaders/bias_add.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/bias_add.comp
plugins/backend-vulkan/spv/rmsnorm_heads.spv.h: $(srcdir)/shaders/rmsnorm_heads.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/rmsnorm_heads.comp
EXTRA_DIST += shaders/rope.comp shaders/kv_store.comp shaders/bias_add.comp shaders/rmsnorm_heads.comp
# Gemma's: embedding scale, GELU-tanh gating, attention with soft-capped
# scores and a sliding window (the logits' soft-capping is the arch-gemma2
# plugin's)
VK_SPV += plugins/backend-vulkan/spv/scale.spv.h \
	plugins/backend-vulkan/spv/gelu_mul.spv.h \
	plugins/backend-vulkan/spv/attention_ext.spv.h
plugins/backend-vulkan/spv/scale.spv.h: $(srcdir)/shaders/scale.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/scale.comp
plugins/backend-vulkan/spv/gelu_mul.spv.h: $(srcdir)/shaders/gelu_mul.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/gelu_mul.comp
plugins/backend-vulkan/spv/attention_ext.spv.h: $(srcdir)/shaders/attention_ext.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl $(srcdir)/shaders/kv.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/attention_ext.comp
EXTRA_DIST += shaders/scale.comp shaders/gelu_mul.comp shaders/attention_ext.comp shaders/tanh.glsl shaders/kv.glsl

# Mixtures of experts: routing, each type's matvec over the chosen
# experts (matvec.comp with MOE), the weighted sum
VK_SPV += plugins/backend-vulkan/spv/moe_route.spv.h \
	plugins/backend-vulkan/spv/moe_combine.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_f32.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_f16.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_bf16.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q8_0.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q4_0.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q4_k.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q6_k.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q4_1.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q5_0.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q5_1.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_iq4_nl.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q2_k.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q3_k.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_q5_k.spv.h \
	plugins/backend-vulkan/spv/matvec_moe_iq4_xs.spv.h
# the batched expert products grouped by expert (matvec.comp GROUPED)
VK_MOEG_TYPES = f32 f16 bf16 q8_0 q4_0 q4_k q6_k q4_1 \
	q5_0 q5_1 iq4_nl q2_k q3_k q5_k iq4_xs
VK_SPV += $(VK_MOEG_TYPES:%=plugins/backend-vulkan/spv/matvec_moeg_%.spv.h)
plugins/backend-vulkan/spv/matvec_moeg_%.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS) $(srcdir)/shaders/moe_groups.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && \
	$(VK_GLSLC) -DMOE -DGROUPED -DTYPE_`echo $* | tr a-z A-Z` -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/moe_route.spv.h: $(srcdir)/shaders/moe_route.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/moe_groups.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/moe_route.comp
plugins/backend-vulkan/spv/moe_combine.spv.h: $(srcdir)/shaders/moe_combine.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/moe_combine.comp
plugins/backend-vulkan/spv/matvec_moe_f32.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_F32 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_f16.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_F16 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_bf16.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_BF16 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q8_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q8_0 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q4_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q4_0 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q4_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q4_K -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q6_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q6_K -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q4_1.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q4_1 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q5_0.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q5_0 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q5_1.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q5_1 -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_iq4_nl.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_IQ4_NL -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q2_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q2_K -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q3_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q3_K -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_q5_k.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_Q5_K -o $@ $(srcdir)/shaders/matvec.comp
plugins/backend-vulkan/spv/matvec_moe_iq4_xs.spv.h: $(srcdir)/shaders/matvec.comp $(srcdir)/shaders/common.glsl $(VK_QUANTS)
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -DMOE -DTYPE_IQ4_XS -o $@ $(srcdir)/shaders/matvec.comp
EXTRA_DIST += shaders/moe_route.comp shaders/moe_combine.comp shaders/moe_groups.glsl

# matmul_cm.comp (the batched product on matrix units), one per weight type
# it takes; a trailing r: Q8_0/Q4_0/Q6_K in the GPU layout (-DREPACK)
VK_CM_TYPES = f16 bf16 q8_0 q8_0r q4_0 q4_0r q4_1 q5_0 q5_1 iq4_nl \
	q2_k q3_k q4_k q5_k q6_k q6_kr iq4_xs
VK_SPV += $(VK_CM_TYPES:%=plugins/backend-vulkan/spv/matmul_cm_%.spv.h)
VK_CM_DEPS = $(srcdir)/shaders/matmul_cm.comp $(srcdir)/shaders/matmul_load.glsl \
	$(srcdir)/shaders/common.glsl $(VK_QUANTS)
VK_CM_GLSLC = $(MKDIR_P) plugins/backend-vulkan/spv && \
	r=; case $$t in *r) r=-DREPACK; t=$${t%r};; esac; \
	$(VK_GLSLC) -DTYPE_`echo $$t | tr a-z A-Z` $$r
plugins/backend-vulkan/spv/matmul_cm_%.spv.h: $(VK_CM_DEPS)
	$(AM_V_GEN)t='$*'; $(VK_CM_GLSLC) -o $@ $(srcdir)/shaders/matmul_cm.comp
EXTRA_DIST += shaders/matmul_cm.comp shaders/matmul_load.glsl
# matmul_q8cm.comp: Q4_0/Q8_0 products on the matrix units in int8
VK_Q8CM_TYPES = q8_0 q8_0r q4_0 q4_0r
VK_SPV += $(VK_Q8CM_TYPES:%=plugins/backend-vulkan/spv/matmul_q8cm_%.spv.h)
plugins/backend-vulkan/spv/matmul_q8cm_%.spv.h: $(VK_CM_DEPS) $(srcdir)/shaders/matmul_q8cm.comp
	$(AM_V_GEN)t='$*'; $(VK_CM_GLSLC) -o $@ $(srcdir)/shaders/matmul_q8cm.comp
EXTRA_DIST += shaders/matmul_q8cm.comp
# matvec_few_cm.comp: passes of few rows' Q4_0/Q8_0 matvecs on the matrix
# units in int8 (the GPU layout)
VK_FEWCM_TYPES = q8_0 q4_0
VK_SPV += $(VK_FEWCM_TYPES:%=plugins/backend-vulkan/spv/matvec_few_cm_%.spv.h)
plugins/backend-vulkan/spv/matvec_few_cm_%.spv.h: $(srcdir)/shaders/matvec_few_cm.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)t='$*'; $(VK_CM_GLSLC) -o $@ $(srcdir)/shaders/matvec_few_cm.comp
EXTRA_DIST += shaders/matvec_few_cm.comp
# and GROUPED: a batched pass's expert products grouped by expert (moe.c)
VK_CMG_TYPES = f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl \
	q2_k q3_k q4_k q5_k q6_k iq4_xs
VK_SPV += $(VK_CMG_TYPES:%=plugins/backend-vulkan/spv/matmul_cmg_%.spv.h)
plugins/backend-vulkan/spv/matmul_cmg_%.spv.h: $(VK_CM_DEPS) $(srcdir)/shaders/moe_groups.glsl
	$(AM_V_GEN)t='$*'; $(VK_CM_GLSLC) -DGROUPED -o $@ $(srcdir)/shaders/matmul_cm.comp

# Medusa draft heads' silu (in place) and the best k tokens of a row
VK_SPV += plugins/backend-vulkan/spv/silu.spv.h \
	plugins/backend-vulkan/spv/top_k.spv.h
plugins/backend-vulkan/spv/silu.spv.h: $(srcdir)/shaders/silu.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/silu.comp
plugins/backend-vulkan/spv/top_k.spv.h: $(srcdir)/shaders/top_k.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/wg_argmax.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/top_k.comp
EXTRA_DIST += shaders/silu.comp shaders/top_k.comp

# batched attention on the matrix units (F16 caches)
VK_SPV += plugins/backend-vulkan/spv/attention_rows_cm.spv.h
plugins/backend-vulkan/spv/attention_rows_cm.spv.h: $(srcdir)/shaders/attention_rows_cm.comp $(srcdir)/shaders/common.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/backend-vulkan/spv && $(VK_GLSLC) -o $@ $(srcdir)/shaders/attention_rows_cm.comp
EXTRA_DIST += shaders/attention_rows_cm.comp

# Against the CPU backend, both loaded through the registry.
check_PROGRAMS += tests/check_backend_vulkan
TESTS += tests/check_backend_vulkan
tests_check_backend_vulkan_SOURCES = tests/backend_vulkan.c
tests_check_backend_vulkan_CFLAGS = $(TEST_CFLAGS) $(VULKAN_CFLAGS)
tests_check_backend_vulkan_LDADD = $(TEST_LIBS) $(LTDL_LIBS) -lm
endif

EXTRA_DIST += \
	shaders/quants.glsl \
	shaders/quants32.glsl \
	shaders/kquants.glsl \
	shaders/gumbel.glsl \
	shaders/wg_argmax.glsl \
	shaders/rope.glsl \
	shaders/sample_gumbel.comp \
	shaders/sample_threshold.comp \
	shaders/sample_penalty.comp \
	shaders/logit_mask.comp \
	shaders/repack.comp \
	shaders/add.comp \
	shaders/argmax.comp \
	shaders/attention.comp \
	shaders/attention_rows.comp \
	shaders/matmul.comp \
	shaders/embed.comp \
	shaders/matvec.comp \
	shaders/matvec_fused.comp \
	shaders/fused_kquants.glsl \
	shaders/rmsnorm.comp \
	shaders/rope_kv.comp \
	shaders/quantize_rows.comp \
	shaders/silu_mul.comp
