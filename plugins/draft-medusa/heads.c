/* Medusa heads from a GGUF side file, and the tap commands that run
 * them. The file: general.architecture "medusa", medusa.head_count K,
 * medusa.embedding_length (the target's n_embd), optionally
 * medusa.vocab_size (the target's); per head k, medusa.{k}.weight
 * [n_embd x n_embd] (F32 or F16) and medusa.{k}.bias [n_embd] (F32), and
 * optionally medusa.{k}.output [n_embd x n_vocab] (any type the backend's
 * matvec takes), the head's own output projection. */
#include <stdio.h>
#include <string.h>

#include "belt/error.h"
#include "belt/types.h"
#include "medusa.h"

/* An integer key that must be present (or, with need false, may be
 * absent: *out unchanged). */
static int get_int(const struct medusa_heads *h, const char *key, bool need, int64_t *out,
		   char *err, size_t errsz)
{
	int rc = belt_gguf_get_int(h->g, key, out, err, errsz);
	if (rc < 0)
		return belt_err_prefix(err, errsz, h->g->path);
	if (rc == 0 && need)
		return belt_errf(err, errsz, "%s: key '%s' is missing: expected an integer",
				 h->g->path, key);
	return 0;
}

/* The types a tensor may have: F32; F32 or F16; any. */
enum allowed { ONLY_F32, F32_F16, ANY_TYPE };

/* Tensor name of shape [ne0 x ne1] of one of the types allowed. */
static const struct belt_gguf_tensor *tensor(const struct medusa_heads *h, const char *name,
					     int64_t ne0, int64_t ne1, enum allowed types,
					     char *err, size_t errsz)
{
	const struct belt_gguf_tensor *t = belt_gguf_find_tensor(h->g, name);
	if (!t) {
		belt_errf(err, errsz, "%s: tensor '%s' is missing", h->g->path, name);
		return NULL;
	}
	bool type_ok = types == ANY_TYPE || t->type == BELT_TYPE_F32 ||
		       (types == F32_F16 && t->type == BELT_TYPE_F16);
	if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1 || !type_ok) {
		static const char *const names[] = {"F32", "F32 or F16", "any type"};
		belt_errf(err, errsz, "%s: tensor '%s' is %s [%lld x %lld x %lld x %lld]: expected "
			  "%s [%lld x %lld]", h->g->path, name, belt_type_name(t->type),
			  (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
			  (long long)t->ne[3], names[types], (long long)ne0, (long long)ne1);
		return NULL;
	}
	return t;
}

static struct belt_tap_tensor tap_tensor(const struct belt_gguf_tensor *t)
{
	return (struct belt_tap_tensor){.name = t->name, .type = t->type,
					.ne = {t->ne[0], t->ne[1]}, .data = t->data,
					.bytes = t->size};
}

int medusa_heads_open(struct medusa_heads *h, const char *path, int32_t n_vocab,
		      uint32_t n_embd, uint32_t topk, char *err, size_t errsz)
{
	memset(h, 0, sizeof *h);
	if (!(h->g = belt_gguf_open(path, err, errsz)))
		return -1;
	struct belt_gguf_str arch = {0};
	int rc = belt_gguf_get_str(h->g, "general.architecture", &arch, err, errsz);
	if (rc <= 0 || arch.len != 6 || memcmp(arch.ptr, "medusa", 6)) {
		if (rc >= 0)
			belt_errf(err, errsz, "%s: general.architecture is not \"medusa\": not a "
				  "file of draft heads", path);
		medusa_heads_close(h);
		return -1;
	}
	int64_t k = 0, width = 0, vocab = n_vocab;
	if (get_int(h, "medusa.head_count", true, &k, err, errsz) ||
	    get_int(h, "medusa.embedding_length", true, &width, err, errsz) ||
	    get_int(h, "medusa.vocab_size", false, &vocab, err, errsz)) {
		medusa_heads_close(h);
		return -1;
	}
	if (k < 1 || k > MEDUSA_HEADS_MAX || width != n_embd || vocab != n_vocab) {
		belt_errf(err, errsz, "%s: %lld heads %lld wide for %lld tokens: expected 1 .. %d "
			  "heads as wide as the model (%u) for its %d tokens", path, (long long)k,
			  (long long)width, (long long)vocab, MEDUSA_HEADS_MAX, n_embd, n_vocab);
		medusa_heads_close(h);
		return -1;
	}
	h->n_heads = (uint32_t)k;
	h->n_embd = n_embd;
	h->n_vocab = n_vocab;
	h->topk = topk;
	for (uint32_t i = 0; i < h->n_heads; i++) {
		char wn[64], bn[64];
		snprintf(wn, sizeof wn, "medusa.%u.weight", i);
		snprintf(bn, sizeof bn, "medusa.%u.bias", i);
		const struct belt_gguf_tensor *w = tensor(h, wn, n_embd, n_embd, F32_F16, err,
							  errsz);
		const struct belt_gguf_tensor *b = w ? tensor(h, bn, n_embd, 1, ONLY_F32, err,
							      errsz)
						     : NULL;
		if (!b) {
			medusa_heads_close(h);
			return -1;
		}
		h->tensors[2 * i] = tap_tensor(w);
		h->tensors[2 * i + 1] = tap_tensor(b);
	}
	/* the heads' own output projections after every W_k and b_k */
	h->n_tensors = 2 * h->n_heads;
	for (uint32_t i = 0; i < h->n_heads; i++) {
		char on[64];
		snprintf(on, sizeof on, "medusa.%u.output", i);
		h->own[i] = -1;
		if (!belt_gguf_find_tensor(h->g, on))
			continue;
		const struct belt_gguf_tensor *o = tensor(h, on, n_embd, n_vocab, ANY_TYPE, err,
							  errsz);
		if (!o) {
			medusa_heads_close(h);
			return -1;
		}
		h->own[i] = (int8_t)h->n_tensors;
		h->tensors[h->n_tensors++] = tap_tensor(o);
	}
	return 0;
}

void medusa_heads_close(struct medusa_heads *h)
{
	belt_gguf_close(h->g);
	h->g = NULL;
}

static struct belt_tap_bind scratch(uint64_t offset, uint64_t n)
{
	return (struct belt_tap_bind){.slot = BELT_TAP_SCRATCH, .offset = offset, .n = n};
}

/* Scratch: each head's block output (n_embd), then each head's logits
 * (n_vocab); result: each head's topk ids, then their probabilities. */
void medusa_heads_tap(struct medusa_heads *h, struct belt_draft_tap *tap)
{
	const struct belt_tap_bind hidden = {.slot = BELT_TAP_HIDDEN};
	uint64_t n = h->n_embd, nv = (uint64_t)h->n_vocab, K = h->n_heads;
	struct belt_tap_cmd *c = h->cmds;
	for (uint32_t k = 0; k < h->n_heads; k++) {
		struct belt_tap_bind t = scratch(k * n, n), l = scratch(K * n + k * nv, nv);
		struct belt_tap_bind w = {.slot = BELT_TAP_TENSOR + 2 * k},
				     b = {.slot = BELT_TAP_TENSOR + 2 * k + 1};
		struct belt_tap_bind out = {.slot = h->own[k] >= 0
							    ? BELT_TAP_TENSOR + (uint32_t)h->own[k]
							    : BELT_TAP_OUTPUT};
		struct belt_tap_bind res = {.slot = BELT_TAP_RESULT, .offset = k * 2 * h->topk,
					    .n = 2 * h->topk};
		*c++ = (struct belt_tap_cmd){.op = "matvec", .n_bind = 3, .bind = {w, hidden, t},
					     .n_param = 2, .param = {{.i = (int)n}, {.i = (int)n}}};
		*c++ = (struct belt_tap_cmd){.op = "bias_add", .n_bind = 2, .bind = {t, b},
					     .n_param = 1, .param = {{.i = (int)n}}};
		*c++ = (struct belt_tap_cmd){.op = "silu", .n_bind = 1, .bind = {t}, .n_param = 1,
					     .param = {{.i = (int)n}}};
		*c++ = (struct belt_tap_cmd){.op = "add", .n_bind = 3, .bind = {t, hidden, t},
					     .n_param = 1, .param = {{.i = (int)n}}};
		*c++ = (struct belt_tap_cmd){.op = "matvec", .n_bind = 3, .bind = {out, t, l},
					     .n_param = 2,
					     .param = {{.i = (int)n}, {.i = (int)nv}}};
		*c++ = (struct belt_tap_cmd){.op = "top_k", .n_bind = 2, .bind = {l, res},
					     .n_param = 2,
					     .param = {{.i = (int)nv}, {.i = (int)h->topk}}};
	}
	*tap = (struct belt_draft_tap){.tensors = h->tensors, .n_tensors = h->n_tensors,
				       .cmds = h->cmds, .n_cmds = (uint32_t)(c - h->cmds),
				       .scratch_floats = K * n + K * nv,
				       .result_floats = K * 2 * h->topk};
}
