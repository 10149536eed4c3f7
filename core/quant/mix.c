/* The tensor type rules of llama.cpp's default mixes (llama-quant.cpp's
 * llama_tensor_get_type), for the targets of row.c: output.weight (or a
 * tied token_embd) in Q6_K, and the Q4_K_M / Q5_K_M / Q4_K_S / Q2_K /
 * IQ4 promotions of attn_v and ffn_down. doc/quantize.md lists them. */
#include <stdio.h>
#include <string.h>

#include "quant/mix.h"

static bool has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static uint32_t meta_u32(const struct belt_gguf *g, const char *arch, const char *key,
			 uint32_t dflt)
{
	char k[160];
	int64_t v;
	snprintf(k, sizeof k, "%s.%s", arch, key);
	if (belt_gguf_get_int(g, k, &v, NULL, 0) != 1 || v < 0 || v > UINT32_MAX)
		return dflt;
	return (uint32_t)v;
}

void quant_model_read(const struct belt_gguf *g, struct quant_model *m)
{
	char arch[64] = "llama";
	struct belt_gguf_str s;
	if (belt_gguf_get_str(g, "general.architecture", &s, NULL, 0) == 1 && s.len < sizeof arch) {
		memcpy(arch, s.ptr, (size_t)s.len);
		arch[s.len] = 0;
	}
	memset(m, 0, sizeof *m);
	/* without block_count: one more than the highest blk.N */
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		unsigned l;
		if (sscanf(g->tensors[i].name, "blk.%u.", &l) == 1 && l < UINT32_MAX &&
		    l + 1 > m->n_layer)
			m->n_layer = l + 1;
		const char *n = g->tensors[i].name;
		if (has(n, "attn_v.weight") || has(n, "attn_qkv.weight") || has(n, "attn_kv_b.weight"))
			m->n_attention_wv++;
	}
	m->n_layer = meta_u32(g, arch, "block_count", m->n_layer);
	m->n_head = meta_u32(g, arch, "attention.head_count", 0);
	m->n_head_kv = meta_u32(g, arch, "attention.head_count_kv", m->n_head);
	m->n_expert = meta_u32(g, arch, "expert_count", 0);
	m->tied = belt_gguf_find_tensor(g, "output.weight") == NULL;
	m->falcon = !strcmp(arch, "falcon");
	/* llama.cpp's LLM_TYPE_70B: an 80-layer llama with grouped KV heads */
	m->is_70b = !strcmp(arch, "llama") && m->n_layer == 80 && m->n_head != m->n_head_kv;
}

static int ggml_n_dims(const struct belt_gguf_tensor *t)
{
	for (int d = 3; d >= 1; d--)
		if (t->ne[d] > 1)
			return d + 1;
	return 1;
}

bool quant_mix_wants(const struct belt_gguf_tensor *t)
{
	static const char *const never[] = {
		"_norm.weight",	       "ffn_gate_inp.weight", "altup",	    "laurel",
		"per_layer_model_proj", "ssm_conv1d",	      "shortconv.conv.weight",
		"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
		"time_mix_w2.weight",	"time_mix_v0.weight", "time_mix_v1.weight",
		"time_mix_v2.weight",	"time_mix_a0.weight", "time_mix_a1.weight",
		"time_mix_a2.weight",	"time_mix_g1.weight", "time_mix_g2.weight",
		"time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
		"time_mix_lerp_fused.weight", "attn_rel_b.weight"};
	size_t len = strlen(t->name);
	if (ggml_n_dims(t) < 2 || len < 6 || strcmp(t->name + len - 6, "weight"))
		return false;
	if (!strcmp(t->name, "position_embd.weight") || !strcmp(t->name, "token_types.weight"))
		return false;
	for (size_t i = 0; i < sizeof never / sizeof *never; i++)
		if (has(t->name, never[i]))
			return false;
	return true;
}

static bool use_more_bits(int i, int n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* The layer of a ffn tensor: its position among its kind, or (experts)
 * the N of its blk.N. */
static int layer_of(const struct quant_model *m, int counter, const char *name)
{
	int l;
	if (m->n_expert > 1 && sscanf(name, "blk.%d.", &l) == 1)
		return l;
	return counter;
}

/* The file types whose rules belt applies (llama_ftype numbers). */
enum { FT_Q2_K = 10, FT_Q3_K_S = 11, FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_S = 16,
       FT_Q5_K_M = 17, FT_IQ4_NL = 25, FT_IQ4_XS = 30 };

static enum belt_type attn_v_type(const struct quant_model *m, struct quant_counters *c,
				  uint32_t ft, enum belt_type t)
{
	uint32_t gqa = m->n_head_kv ? m->n_head / m->n_head_kv : 1;
	if (ft == FT_Q2_K)
		t = gqa >= 4 ? BELT_TYPE_Q4_K : BELT_TYPE_Q3_K;
	else if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS) && gqa >= 4)
		t = BELT_TYPE_Q5_K;
	else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) &&
		 use_more_bits(c->i_attention_wv, m->n_attention_wv))
		t = BELT_TYPE_Q6_K;
	else if (ft == FT_Q4_K_S && c->i_attention_wv < 4)
		t = BELT_TYPE_Q5_K;
	if (m->is_70b && (t == BELT_TYPE_Q3_K || t == BELT_TYPE_Q4_K))
		t = BELT_TYPE_Q5_K;
	if (m->n_expert == 8)
		t = BELT_TYPE_Q8_0;
	c->i_attention_wv++;
	return t;
}

static enum belt_type ffn_down_type(const struct quant_model *m, struct quant_counters *c,
				    uint32_t ft, enum belt_type t, const char *name)
{
	int i = layer_of(m, c->i_ffn_down, name), n = (int)m->n_layer;
	if (ft == FT_Q2_K)
		t = BELT_TYPE_Q3_K;
	else if (ft == FT_Q4_K_M && m->falcon)
		t = i < n / 16 ? BELT_TYPE_Q6_K : use_more_bits(i, n) ? BELT_TYPE_Q5_K : BELT_TYPE_Q4_K;
	else if (ft == FT_Q4_K_M && use_more_bits(i, n))
		t = BELT_TYPE_Q6_K;
	else if (ft != FT_Q4_K_M && i < n / 8 && (ft == FT_IQ4_NL || ft == FT_IQ4_XS))
		t = BELT_TYPE_Q5_K;
	else if (ft == FT_Q5_K_M && use_more_bits(i, n))
		t = BELT_TYPE_Q6_K;
	else if (ft == FT_Q4_K_S && !m->falcon && i < n / 8)
		t = BELT_TYPE_Q5_K;
	c->i_ffn_down++;
	return t;
}

static enum belt_type mix_rules(const struct quant_model *m, struct quant_counters *c,
				uint32_t ft, enum belt_type t, const struct belt_gguf_tensor *x)
{
	const char *name = x->name;
	bool output = !strcmp(name, "output.weight");
	bool embd = !strcmp(name, "token_embd.weight") || !strcmp(name, "per_layer_token_embd.weight");
	if (output || (m->tied && embd)) {
		if (m->falcon || x->ne[0] % (int64_t)belt_type_block(t))
			return BELT_TYPE_Q8_0;
		return t == BELT_TYPE_Q8_0 ? t : BELT_TYPE_Q6_K;
	}
	if (embd)
		return t;
	if (has(name, "attn_qkv.weight")) {
		if (ft == FT_Q4_K_M)
			return BELT_TYPE_Q5_K;
		return ft == FT_Q5_K_M ? BELT_TYPE_Q6_K : t;
	}
	if (has(name, "attn_kv_b.weight") || has(name, "attn_v.weight"))
		return attn_v_type(m, c, ft, t);
	if (has(name, "attn_k.weight")) {
		return m->n_expert == 8 ? BELT_TYPE_Q8_0 : t;
	}
	if (has(name, "attn_q.weight"))
		return t;
	if (has(name, "attn_output.weight")) {
		bool k_mix = ft == FT_Q2_K || ft == FT_Q3_K_S || ft == FT_IQ4_NL ||
			     ft == FT_Q4_K_S || ft == FT_Q4_K_M || ft == FT_IQ4_XS;
		if (m->falcon)
			return t;
		if (m->n_expert == 8)
			return k_mix ? BELT_TYPE_Q5_K : t;
		return ft == FT_Q2_K ? BELT_TYPE_Q3_K : t;
	}
	if (has(name, "ffn_up")) {
		c->i_ffn_up++;
		return t;
	}
	if (has(name, "ffn_gate")) {
		c->i_ffn_gate++;
		return t;
	}
	if (has(name, "ffn_down"))
		return ffn_down_type(m, c, ft, t, name);
	return t;
}

static enum belt_type fallback_type(enum belt_type t)
{
	switch (t) {
	case BELT_TYPE_IQ4_XS: return BELT_TYPE_IQ4_NL;
	case BELT_TYPE_Q2_K:
	case BELT_TYPE_Q3_K: return BELT_TYPE_Q4_0;
	case BELT_TYPE_Q4_K: return BELT_TYPE_Q5_0;
	case BELT_TYPE_Q5_K: return BELT_TYPE_Q5_1;
	case BELT_TYPE_Q6_K: return BELT_TYPE_Q8_0;
	default: return BELT_TYPE_F16;
	}
}

enum belt_type quant_mix_type(const struct quant_model *m, struct quant_counters *c,
			      const struct belt_quant_target *target, bool pure,
			      const struct belt_gguf_tensor *t, bool *fallback)
{
	enum belt_type type = target->type;
	if (!pure)
		type = mix_rules(m, c, target->file_type, type, t);
	*fallback = t->ne[0] % (int64_t)belt_type_block(type) != 0;
	if (*fallback) {
		type = fallback_type(type);
		if (t->ne[0] % (int64_t)belt_type_block(type))
			type = BELT_TYPE_F16;
	}
	return type;
}
