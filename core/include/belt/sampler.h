/* belt/sampler.h: picking the next token from logits, and sampler plugins.
 *
 * A sampler is registered by name from a plugin module "sampler-<name>"
 * and does the same thing two ways: sample() on the CPU (logits read back
 * to the host), and chain_commands(), the kernels a GPU backend inserts
 * into the dispatch table before its argmax so that sampled decoding runs
 * as a chain with no CPU in between. Both follow the semantics below
 * exactly (doc/samplers.md has the long form):
 *
 *  1. Penalties, if repeat_penalty != 1 or presence_penalty != 0 or
 *     frequency_penalty != 0, and repeat_last_n != 0. The window is the
 *     tokens at positions max(0, pos + 1 - W) .. pos, W = repeat_last_n
 *     (pos + 1 if -1). For each distinct token t of the window, counted c
 *     times (ids outside [0, n) are ignored), once, in float:
 *         l = l > 0 ? l / repeat_penalty : l * repeat_penalty;
 *         l = l - ((float)c * frequency_penalty + presence_penalty);
 *  2. temp <= 0, or so small that 1.0f / temp is not finite (its limit):
 *     the argmax of the penalized logits, lowest index on ties.
 *  3. The kept set K = {i : l_i >= tau}, tau = max(tau_k, tau_p, tau_m),
 *     each -INFINITY when off:
 *     tau_k: the top_k-th largest value counted with multiplicity (ties at
 *            the boundary are all kept);
 *     tau_p: v_1 >= v_2 >= ... the values with l_i >= tau_k sorted,
 *            q_j = exp(v_j - v_1) / sum_j exp(v_j - v_1) (double), m the
 *            smallest with q_1 + ... + q_m >= top_p; tau_p = v_m;
 *     tau_m: v_1 + logf(min_p), v_1 the largest value (float).
 *  4. Gumbel-max: inv_temp = 1.0f / temp; the token is the argmax over K
 *     of l_i * inv_temp + g_i (float, unfused), lowest index on ties, with
 *     g_i = -logf(-logf(u_i)),
 *     u_i = ((float)(x >> 9) + 0.5f) * (1.0f / 8388608.0f), x the first
 *     word of Philox4x32-10 with key (seed & 0xffffffff, seed >> 32) and
 *     counter (i, pos, 0, 0). This samples exactly from softmax(l * inv_temp)
 *     restricted to K; a seed reproduces a run. */
#ifndef BELT_SAMPLER_H
#define BELT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include "belt/backend.h"

#define BELT_SAMPLER_ABI 1
/* The oldest sampler ABI the core still loads. */
#define BELT_SAMPLER_ABI_MIN 1
#define BELT_SEED_RANDOM UINT64_MAX /* the caller picks a seed (time) */

/* Sampling settings, as llama.cpp's flags of the same names. */
struct belt_sampling {
	float temp;		 /* <= 0 (or 1/temp not finite): greedy (argmax
				  * after penalties) */
	int32_t top_k;		 /* <= 0 or >= n: off */
	float top_p;		 /* >= 1: off */
	float min_p;		 /* <= 0: off */
	float repeat_penalty;	 /* 1: off */
	int32_t repeat_last_n;	 /* window of past tokens for the penalties;
				  * 0: off, -1: whole context */
	float presence_penalty;	 /* 0: off */
	float frequency_penalty; /* 0: off */
	uint64_t seed;		 /* used as given; BELT_SEED_RANDOM is for
				  * the caller to replace */
};

/* Fill p with llama.cpp's defaults: temp 0.8, top_k 40, top_p 0.95,
 * min_p 0.05, no penalties (window 64), seed BELT_SEED_RANDOM. */
void belt_sampling_default(struct belt_sampling *p);
/* 0 if p is valid; else -1 with a message naming the flag (--temp,
 * --top-p, ...) and the range it expects. */
int belt_sampling_check(const struct belt_sampling *p, char *err,
			size_t errsz);
/* Whether temp draws at all: above 0 with a finite 1/temp; otherwise the
 * draw is its limit, the argmax. */
static inline bool belt_sampling_draws(float temp)
{
	return temp > 0 && isfinite(1.0f / temp);
}

/* Whether p decodes greedily: temp <= 0 (or 1/temp not finite) and no
 * penalty active. */
bool belt_sampling_greedy(const struct belt_sampling *p);
/* Whether p's penalties change any logit (step 1 above). */
bool belt_sampling_penalties(const struct belt_sampling *p);

/* What a chain command binding refers to: the logits [n_vocab] (F32,
 * modified in place), the table's token_ids (I32 [n_ctx + 1]), or the
 * sampler's own scratch buffer (*scratch_bytes of chain_commands). */
enum belt_sampler_slot {
	BELT_SLOT_LOGITS,
	BELT_SLOT_TOKEN_IDS,
	BELT_SLOT_SCRATCH
};

/* One command a sampler inserts before the table's argmax: a kernel op the
 * backend must offer (variant "default", any weight type). */
struct belt_sampler_cmd {
	const char *op;
	enum belt_patch patch;
	uint8_t n_bind;
	uint8_t slot[BELT_MAX_BINDINGS]; /* enum belt_sampler_slot per binding */
	uint8_t n_param;
	union belt_param param[BELT_MAX_PARAMS]; /* in the op's schema order */
};

/* A sampler: one versioned table, filled with designated initializers.
 * It only grows at the end. */
struct belt_sampler_ops {
	uint32_t abi; /* BELT_SAMPLER_ABI */
	const char *name;
	const char *description;

	/* Bytes of work area sample() needs for a vocabulary of n_vocab. */
	size_t (*work_size)(int32_t n_vocab);
	/* CPU: the token that follows position pos, from logits[n] (modified
	 * in place); history[0..n_hist) are the token ids at positions
	 * 0..n_hist-1 (n_hist = pos + 1); work is work_size(n) bytes; -1 if
	 * n < 1. Must not allocate; p must pass belt_sampling_check. */
	int32_t (*sample)(const struct belt_sampling *p, float *logits,
			  int32_t n, const int32_t *history, size_t n_hist,
			  uint32_t pos, void *work);
	/* GPU chain: fill out[0..max) with the commands to insert before the
	 * argmax; returns their count (0 when greedy), or -1 with err;
	 * *scratch_bytes: size of the SCRATCH slot buffer needed (0: none). */
	int (*chain_commands)(const struct belt_sampling *p, int32_t n_vocab,
			      struct belt_sampler_cmd *out, int max,
			      uint64_t *scratch_bytes, char *err, size_t errsz);
};

#endif
