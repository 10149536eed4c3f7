/* mix.h: which type each tensor gets (llama.cpp's llama_tensor_get_type
 * for the targets belt knows). Not installed. */
#ifndef BELT_QUANT_MIX_H
#define BELT_QUANT_MIX_H

#include <stdbool.h>

#include "belt/gguf.h"
#include "belt/quant.h"

/* What the rules read from the model. */
struct quant_model {
	uint32_t n_layer, n_head, n_head_kv, n_expert;
	int n_attention_wv; /* attn_v (attn_qkv, attn_kv_b) tensors */
	bool tied;	   /* no output.weight: token_embd is the output matrix */
	bool falcon, is_70b;
};

/* The running counts of the rules, in file order. */
struct quant_counters {
	int i_attention_wv, i_ffn_down, i_ffn_gate, i_ffn_up;
};

/* Fill m from the file's metadata and tensor names. */
void quant_model_read(const struct belt_gguf *g, struct quant_model *m);
/* Whether llama-quantize quantizes this tensor at all (2-D or more, a
 * ".weight" that is not a norm, a gate input or a position embedding). */
bool quant_mix_wants(const struct belt_gguf_tensor *t);
/* The type of a tensor quant_mix_wants: the target's type, the mix rules
 * (unless pure), then a fallback where the row length is not a multiple of
 * the block (*fallback set): Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0,
 * Q2_K/Q3_K -> Q4_0, IQ4_XS -> IQ4_NL, and F16 if that still does not fit. */
enum belt_type quant_mix_type(const struct quant_model *m, struct quant_counters *c,
			      const struct belt_quant_target *target, bool pure,
			      const struct belt_gguf_tensor *t, bool *fallback);

#endif
