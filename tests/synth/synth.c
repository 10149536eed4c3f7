/* Writes a GGUF with random weights in an architecture's layout (see
 * synth.h). The vocabulary is
 * a real SentencePiece-style one: <unk>, <s>, </s>, the 256 byte tokens,
 * then filler pieces, so the tokenizer loads it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf_writer.h"
#include "belt/quant.h"
#include "synth.h"

void synth_default(struct synth_shape *s)
{
	*s = (struct synth_shape){.n_embd = 64, .n_layer = 2, .n_head = 4, .n_head_kv = 2,
				  .n_ff = 128, .n_vocab = 300, .n_ctx = 128,
				  .wtype = BELT_TYPE_F32, .embd_type = BELT_TYPE_ANY, .seed = 1,
				  .n_expert = 8, .n_expert_used = 2, .n_ff_exp = 32};
}

struct fill {
	uint64_t state;
	enum belt_type type;
	float scale;
	bool ones; /* norm weights: 1 + small noise */
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Uniform in [-1, 1). */
static float uniform(uint64_t *s)
{
	return (float)((next(s) >> 40) * (1.0 / (1 << 23)) - 1.0);
}

/* Produce n bytes of tensor data at offset. Each block (or element) is
 * made from its own seed, so any split of the tensor into pieces gives the
 * same bytes. */
static int fill_fn(void *ud, void *dst, uint64_t offset, uint64_t n)
{
	struct fill *f = ud;
	uint8_t *out = dst;
	size_t bs = belt_type_block_bytes(f->type);
	for (uint64_t i = 0; i < n;) {
		uint64_t pos = offset + i;
		uint64_t block = pos / bs;
		uint64_t s = f->state ^ (block * 0x9e3779b97f4a7c15ull);
		next(&s);
		uint8_t tmp[256];
		switch (f->type) {
		case BELT_TYPE_F32: {
			float v = f->ones ? 1.0f + 0.1f * uniform(&s) : f->scale * uniform(&s);
			memcpy(tmp, &v, 4);
			break;
		}
		case BELT_TYPE_F16: {
			uint16_t h = belt_f32_to_fp16(f->scale * uniform(&s));
			memcpy(tmp, &h, 2);
			break;
		}
		case BELT_TYPE_BF16: {
			uint16_t h = belt_f32_to_bf16(f->scale * uniform(&s));
			memcpy(tmp, &h, 2);
			break;
		}
		case BELT_TYPE_Q8_0:
		case BELT_TYPE_Q4_0: { /* a scale, then random quants */
			uint16_t d = belt_f32_to_fp16(f->scale / (f->type == BELT_TYPE_Q8_0 ? 127.0f : 8.0f));
			memcpy(tmp, &d, 2);
			for (size_t b = 2; b < bs; b++)
				tmp[b] = (uint8_t)next(&s);
			break;
		}
		default: { /* any other type: random values through belt's quantizer */
			float x[256];
			size_t nb = belt_type_block(f->type);
			for (size_t j = 0; j < nb && j < 256; j++)
				x[j] = f->scale * uniform(&s);
			if (nb > 256 || belt_quantize_row(f->type, x, tmp, (int64_t)nb))
				return -1;
		}
		}
		size_t in = (size_t)(pos % bs), take = bs - in;
		if (take > n - i)
			take = (size_t)(n - i);
		memcpy(out + i, tmp + in, take);
		i += take;
	}
	return 0;
}

struct plan {
	char name[64];
	uint32_t n_dims;
	int64_t ne[3];
	enum belt_type type;
	struct fill fill;
};

/* What a tensor of a layout is: a matrix of the weight type, the token
 * embedding (of the embedding type), a 1-D norm (ones and noise), a 1-D
 * bias (small values), an F32 matrix (MoE router) or a 3-D stack of
 * expert matrices. */
enum role { MAT, EMBED, NORM, BIAS, ROUTER, EXPERTS };

static void add(struct plan *p, unsigned *n, const struct synth_shape *s, const char *name,
		int64_t ne0, int64_t ne1, int64_t ne2, enum role role)
{
	if (s->omit_tensor && !strcmp(s->omit_tensor, name))
		return;
	struct plan *t = &p[(*n)++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->n_dims = role == EXPERTS ? 3 : role == NORM || role == BIAS ? 1 : 2;
	t->ne[0] = ne0 + (s->bad_shape_tensor && !strcmp(s->bad_shape_tensor, name) ? 32 : 0);
	t->ne[1] = t->n_dims > 1 ? ne1 : 1;
	t->ne[2] = t->n_dims > 2 ? ne2 : 1;
	t->type = role == EMBED && s->embd_type != BELT_TYPE_ANY ? s->embd_type
		  : role == MAT || role == EMBED || role == EXPERTS ? s->wtype
								    : BELT_TYPE_F32;
	t->fill = (struct fill){.state = s->seed * 2654435761u + *n * 0x51ed27, .type = t->type,
				.scale = role == BIAS ? 0.1f : 1.0f / sqrtf((float)ne0),
				.ones = role == NORM};
}

static int vocab(struct belt_gguf_writer *w, const struct synth_shape *s)
{
	if (s->vocab_from) {
		for (uint64_t i = 0; i < s->vocab_from->n_kv; i++)
			if (!strncmp(s->vocab_from->kv[i].key, "tokenizer.", 10) &&
			    belt_gguf_writer_copy_kv(w, &s->vocab_from->kv[i]))
				return -1;
		return 0;
	}
	uint32_t n = s->n_vocab;
	char **tok = calloc(n, sizeof *tok);
	float *score = calloc(n, sizeof *score);
	int32_t *type = calloc(n, sizeof *type);
	int rc = -1;
	if (!tok || !score || !type)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		char buf[32];
		if (i < 3)
			snprintf(buf, sizeof buf, "%s", (const char *[]){"<unk>", "<s>", "</s>"}[i]);
		else if (i < 259)
			snprintf(buf, sizeof buf, "<0x%02X>", i - 3);
		else
			snprintf(buf, sizeof buf, "\xe2\x96\x81t%u", i);
		tok[i] = strdup(buf);
		score[i] = i < 259 ? 0.0f : -(float)i;
		type[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
	}
	rc = belt_gguf_writer_str(w, "tokenizer.ggml.model", "llama") ||
	     belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)tok, n) ||
	     belt_gguf_writer_arr(w, "tokenizer.ggml.scores", BELT_GGUF_FLOAT32, score, n) ||
	     belt_gguf_writer_arr(w, "tokenizer.ggml.token_type", BELT_GGUF_INT32, type, n) ||
	     belt_gguf_writer_u32(w, "tokenizer.ggml.bos_token_id", 1) ||
	     belt_gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", 2) ||
	     belt_gguf_writer_u32(w, "tokenizer.ggml.unknown_token_id", 0) ? -1 : 0;
out:
	for (uint32_t i = 0; tok && i < n; i++)
		free(tok[i]);
	free(tok);
	free(score);
	free(type);
	return rc;
}

static int hparams(struct belt_gguf_writer *w, const struct synth_shape *s)
{
	const char *a = s->arch ? s->arch : "llama";
	char k[128];
#define U32(name, v) (snprintf(k, sizeof k, "%s." name, a), belt_gguf_writer_u32(w, k, v))
	return belt_gguf_writer_str(w, "general.architecture", a) ||
	       belt_gguf_writer_str(w, "general.name", "belt synthetic") ||
	       U32("context_length", s->n_ctx) || U32("embedding_length", s->n_embd) ||
	       U32("block_count", s->n_layer) || U32("feed_forward_length", s->n_ff) ||
	       U32("attention.head_count", s->n_head) ||
	       U32("attention.head_count_kv", s->n_head_kv) ||
	       U32("rope.dimension_count", s->n_embd / s->n_head) ||
	       (snprintf(k, sizeof k, "%s.attention.layer_norm_rms_epsilon", a),
		belt_gguf_writer_f32(w, k, 1e-5f)) ||
	       (snprintf(k, sizeof k, "%s.rope.freq_base", a), belt_gguf_writer_f32(w, k, 10000.0f)) ||
	       (!strcmp(a, "qwen3moe") &&
		(U32("expert_count", s->n_expert) || U32("expert_used_count", s->n_expert_used) ||
		 U32("expert_feed_forward_length", s->n_ff_exp))) ||
	       (s->rope_scaling &&
		((snprintf(k, sizeof k, "%s.rope.scaling.type", a),
		  belt_gguf_writer_str(w, k, s->rope_scaling)) ||
		 (snprintf(k, sizeof k, "%s.rope.scaling.factor", a),
		  belt_gguf_writer_f32(w, k, s->rope_factor))))
		       ? -1 : 0;
#undef U32
}

/* The dimensions a layout's tensor names by index. */
enum dim { EMBD, KV, FF, HEAD, QKV, FF2, EXPERT, FF_EXP, ONE };

struct layer_tensor {
	const char *name;
	uint8_t in, out; /* enum dim */
	uint8_t role;	 /* enum role */
};

#define T(name, in, out, role) {name, in, out, role}
#define ATTN_NORM T("attn_norm", EMBD, ONE, NORM)
#define QKV_SPLIT T("attn_q", EMBD, EMBD, MAT), T("attn_k", EMBD, KV, MAT), T("attn_v", EMBD, KV, MAT)
#define QK_NORM T("attn_q_norm", HEAD, ONE, NORM), T("attn_k_norm", HEAD, ONE, NORM)
#define ATTN_OUT T("attn_output", EMBD, EMBD, MAT)
#define FFN T("ffn_norm", EMBD, ONE, NORM), T("ffn_gate", EMBD, FF, MAT), \
	T("ffn_up", EMBD, FF, MAT), T("ffn_down", FF, EMBD, MAT)

static const struct layer_tensor llama_layer[] = {ATTN_NORM, QKV_SPLIT, ATTN_OUT, FFN, {0}};
static const struct layer_tensor qwen2_layer[] = {
	ATTN_NORM, QKV_SPLIT, T("attn_q.bias", EMBD, ONE, BIAS), T("attn_k.bias", KV, ONE, BIAS),
	T("attn_v.bias", KV, ONE, BIAS), ATTN_OUT, FFN, {0}};
static const struct layer_tensor qwen3_layer[] = {ATTN_NORM, QKV_SPLIT, QK_NORM, ATTN_OUT, FFN, {0}};
static const struct layer_tensor phi3_layer[] = {
	ATTN_NORM, T("attn_qkv", EMBD, QKV, MAT), ATTN_OUT, T("ffn_norm", EMBD, ONE, NORM),
	T("ffn_up", EMBD, FF2, MAT), T("ffn_down", FF, EMBD, MAT), {0}};
static const struct layer_tensor gemma2_layer[] = {
	ATTN_NORM, QKV_SPLIT, ATTN_OUT, T("post_attention_norm", EMBD, ONE, NORM), FFN,
	T("post_ffw_norm", EMBD, ONE, NORM), {0}};
static const struct layer_tensor gemma3_layer[] = {
	ATTN_NORM, QKV_SPLIT, QK_NORM, ATTN_OUT, T("post_attention_norm", EMBD, ONE, NORM), FFN,
	T("post_ffw_norm", EMBD, ONE, NORM), {0}};
static const struct layer_tensor qwen3moe_layer[] = {
	ATTN_NORM, QKV_SPLIT, QK_NORM, ATTN_OUT, T("ffn_norm", EMBD, ONE, NORM),
	T("ffn_gate_inp", EMBD, EXPERT, ROUTER), T("ffn_gate_exps", EMBD, FF_EXP, EXPERTS),
	T("ffn_up_exps", EMBD, FF_EXP, EXPERTS), T("ffn_down_exps", FF_EXP, EMBD, EXPERTS), {0}};

static const struct {
	const char *arch;
	const struct layer_tensor *layer;
	bool tied; /* the architecture has no output.weight */
} layouts[] = {
	{"llama", llama_layer, false},	 {"qwen2", qwen2_layer, false},
	{"qwen3", qwen3_layer, false},	 {"phi3", phi3_layer, false},
	{"gemma2", gemma2_layer, true},	 {"gemma3", gemma3_layer, true},
	{"qwen3moe", qwen3moe_layer, false},
};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

int synth_arch_known(const char *arch)
{
	for (size_t i = 0; i < N_LAYOUTS; i++)
		if (!strcmp(layouts[i].arch, arch))
			return 1;
	return 0;
}

int synth_write(const struct synth_shape *s, const char *path, char *err, size_t errsz)
{
	if (!s->n_head || s->n_embd % s->n_head || !s->n_head_kv || s->n_head % s->n_head_kv)
		return belt_errf(err, errsz, "synth: n_embd must divide by n_head and n_head by n_head_kv");
	size_t li = 0;
	for (size_t i = 0; i < N_LAYOUTS; i++)
		if (s->arch && !strcmp(layouts[i].arch, s->arch))
			li = i;
	const struct layer_tensor *layer = layouts[li].layer;
	if (layer == qwen3moe_layer &&
	    (!s->n_expert || !s->n_ff_exp || !s->n_expert_used || s->n_expert_used > s->n_expert))
		return belt_errf(err, errsz, "synth: qwen3moe needs 1 <= experts used <= experts and a "
					     "positive expert FFN width");
	unsigned per_layer = 0;
	while (layer[per_layer].name)
		per_layer++;
	unsigned cap = 3 + per_layer * s->n_layer, n = 0;
	struct plan *p = calloc(cap, sizeof *p);
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	if (!p || !w) {
		free(p);
		belt_gguf_writer_free(w);
		return belt_errf(err, errsz, "synth: out of memory");
	}
	uint32_t hd = s->n_embd / s->n_head, kv = hd * s->n_head_kv;
	const int64_t dims[] = {[EMBD] = s->n_embd, [KV] = kv, [FF] = s->n_ff, [HEAD] = hd,
				[QKV] = s->n_embd + 2 * kv, [FF2] = 2 * (int64_t)s->n_ff,
				[EXPERT] = s->n_expert, [FF_EXP] = s->n_ff_exp, [ONE] = 1};
	add(p, &n, s, "token_embd.weight", s->n_embd, s->n_vocab, 1, EMBED);
	add(p, &n, s, "output_norm.weight", s->n_embd, 1, 1, NORM);
	if (!s->tied && !layouts[li].tied)
		add(p, &n, s, "output.weight", s->n_embd, s->n_vocab, 1, MAT);
	for (uint32_t l = 0; l < s->n_layer; l++)
		for (const struct layer_tensor *t = layer; t->name; t++) {
			char name[64];
			snprintf(name, sizeof name, "blk.%u.%s%s", l, t->name,
				 strchr(t->name, '.') ? "" : ".weight");
			add(p, &n, s, name, dims[t->in], dims[t->out], s->n_expert, t->role);
		}
	int rc = hparams(w, s) || vocab(w, s) ? belt_errf(err, errsz, "synth: out of memory") : 0;
	for (unsigned i = 0; rc == 0 && i < n; i++)
		if (belt_gguf_writer_tensor_fn(w, p[i].name, p[i].type, p[i].n_dims, p[i].ne, fill_fn,
					       &p[i].fill))
			rc = belt_errf(err, errsz, "synth: tensor '%s' rejected (type %s, ne0 %lld)",
				       p[i].name, belt_type_name(p[i].type), (long long)p[i].ne[0]);
	if (rc == 0)
		rc = belt_gguf_writer_write(w, path, err, errsz);
	belt_gguf_writer_free(w);
	free(p);
	return rc;
}
