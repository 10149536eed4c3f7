/* The Gumbel-max sampler: penalties, a truncation threshold tau, then the
 * argmax of l * inv_temp + Gumbel noise over the kept logits. The steps
 * and their float operations are those of belt/sampler.h and
 * doc/samplers.md; the GPU commands chain_commands() emits compute the
 * same. Nothing here allocates: the work area holds a float and an int32
 * per vocabulary entry. */
#include <math.h>
#include <string.h>

#include "belt/error.h"
#include "gumbel.h"
#include "philox.h"

/* ---- work area: float vals[n], then int32 count[n] ---- */

static size_t gumbel_work_size(int32_t n)
{
	return n > 0 ? (size_t)n * (sizeof(float) + sizeof(int32_t)) : 0;
}

/* ---- step 1: penalties ---- */

/* Penalize each distinct token of the window once. count[] is used only
 * at the window's ids and is cleared as it goes, so it needs no zeroing. */
static void penalize(const struct belt_sampling *p, float *l, int32_t n,
		     const int32_t *hist, size_t n_hist, uint32_t pos,
		     int32_t *count)
{
	size_t end = (size_t)pos + 1 < n_hist ? (size_t)pos + 1 : n_hist;
	size_t start = 0;
	if (p->repeat_last_n > 0 && end > (size_t)p->repeat_last_n)
		start = end - (size_t)p->repeat_last_n;
	for (size_t i = start; i < end; i++)
		if (hist[i] >= 0 && hist[i] < n)
			count[hist[i]] = 0;
	for (size_t i = start; i < end; i++)
		if (hist[i] >= 0 && hist[i] < n)
			count[hist[i]]++;
	for (size_t i = start; i < end; i++) {
		int32_t t = hist[i];
		if (t < 0 || t >= n || !count[t])
			continue;
		float v = l[t];
		v = v > 0 ? v / p->repeat_penalty : v * p->repeat_penalty;
		float sub = (float)count[t] * p->frequency_penalty;
		sub = sub + p->presence_penalty;
		l[t] = v - sub;
		count[t] = 0;
	}
}

/* ---- step 2: argmax, lowest index on ties ---- */

static int32_t argmax(const float *l, int32_t n)
{
	int32_t best = 0;
	for (int32_t i = 1; i < n; i++)
		if (l[i] > l[best])
			best = i;
	return best;
}

/* ---- step 3: the threshold tau ---- */

/* Restore the heap property below node i; min-heap if min, else max. */
static void sift_down(float *h, int32_t size, int32_t i, bool min)
{
	float v = h[i];
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= size)
			break;
		if (c + 1 < size && (min ? h[c + 1] < h[c] : h[c + 1] > h[c]))
			c++;
		if (min ? !(h[c] < v) : !(h[c] > v))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

static void heapify(float *h, int32_t size, bool min)
{
	for (int32_t i = size / 2 - 1; i >= 0; i--)
		sift_down(h, size, i, min);
}

/* tau_k: the k-th largest of l[0..n), counted with multiplicity, by a
 * min-heap of the k largest seen (O(n log k), no full sort). */
static float kth_largest(const float *l, int32_t n, int32_t k, float *heap)
{
	memcpy(heap, l, (size_t)k * sizeof *heap);
	heapify(heap, k, true);
	for (int32_t i = k; i < n; i++)
		if (l[i] > heap[0]) {
			heap[0] = l[i];
			sift_down(heap, k, 0, true);
		}
	return heap[0];
}

/* tau_p over the candidates v[0..c) (destroyed), whose largest is v1:
 * pops them largest first until the mass reaches top_p. Stops early with
 * a value below `floor` once one is popped, as tau_p is then irrelevant. */
static float top_p_threshold(float *v, int32_t c, float v1, float top_p,
			     float floor)
{
	double z = 0;
	for (int32_t j = 0; j < c; j++)
		z += exp((double)v[j] - (double)v1);
	heapify(v, c, false);
	double cum = 0;
	float top = v1;
	while (c > 0) {
		top = v[0];
		v[0] = v[--c];
		sift_down(v, c, 0, false);
		if (top < floor)
			break;
		cum += exp((double)top - (double)v1) / z;
		if (cum >= top_p)
			break;
	}
	return top;
}

/* tau = max(tau_k, tau_p, tau_m), -INFINITY when all are off. With top-k
 * on, cand[0..*n_cand) gets the indices (ascending) of the logits at or
 * above tau_k, the only ones that can be kept; else *n_cand is n and cand
 * is not used. */
static float threshold(const struct belt_sampling *p, const float *l,
		       int32_t n, float *vals, int32_t *cand, int32_t *n_cand)
{
	bool k_on = p->top_k > 0 && p->top_k < n;
	bool p_on = p->top_p < 1;
	bool m_on = p->min_p > 0;
	*n_cand = n;
	if (!k_on && !p_on && !m_on)
		return -INFINITY;
	float tau_k = -INFINITY, v1;
	if (k_on) {
		/* the heap holds the k largest, so the largest of all */
		tau_k = kth_largest(l, n, p->top_k, vals);
		v1 = vals[argmax(vals, p->top_k)];
		int32_t c = 0;
		for (int32_t i = 0; i < n; i++)
			if (l[i] >= tau_k)
				cand[c++] = i;
		*n_cand = c;
	} else {
		v1 = l[argmax(l, n)];
	}
	float tau_m = m_on ? v1 + logf(p->min_p) : -INFINITY;
	float tau = tau_k > tau_m ? tau_k : tau_m;
	if (p_on) {
		int32_t c = *n_cand;
		if (k_on)
			for (int32_t j = 0; j < c; j++)
				vals[j] = l[cand[j]];
		else
			memcpy(vals, l, (size_t)n * sizeof *vals);
		float tau_p = top_p_threshold(vals, c, v1, p->top_p, tau);
		if (tau_p > tau)
			tau = tau_p;
	}
	return tau;
}

/* ---- step 4: Gumbel-max ---- */

/* g_i for token i at position pos: -log(-log(u)), u uniform in (0, 1)
 * from 23 bits, so that every step is exact in float and u < 1. */
static float gumbel_noise(int32_t i, uint32_t pos, const uint32_t key[2])
{
	uint32_t ctr[4] = {(uint32_t)i, pos, 0, 0}, x[4];
	philox4x32_10(ctr, key, x);
	float u = ((float)(x[0] >> 9) + 0.5f) * (1.0f / 8388608.0f);
	return -logf(-logf(u));
}

static int32_t gumbel_sample(const struct belt_sampling *p, float *l,
			     int32_t n, const int32_t *history, size_t n_hist,
			     uint32_t pos, void *work)
{
	if (n < 1)
		return -1;
	float *vals = work;
	int32_t *count = (int32_t *)(vals + n);
	if (belt_sampling_penalties(p))
		penalize(p, l, n, history, n_hist, pos, count);
	if (!belt_sampling_draws(p->temp))
		return argmax(l, n);
	int32_t *cand = count, n_cand;
	float tau = threshold(p, l, n, vals, cand, &n_cand);
	bool all = n_cand == n; /* then cand is not filled */
	float inv_temp = 1.0f / p->temp;
	uint32_t key[2] = {(uint32_t)p->seed, (uint32_t)(p->seed >> 32)};
	int32_t best = -1;
	float best_v = 0;
	for (int32_t j = 0; j < n_cand; j++) {
		int32_t i = all ? j : cand[j];
		if (!(l[i] >= tau))
			continue;
		float v = l[i] * inv_temp;
		v = v + gumbel_noise(i, pos, key);
		if (best < 0 || v > best_v) {
			best = i;
			best_v = v;
		}
	}
	return best < 0 ? argmax(l, n) : best;
}

/* ---- the GPU chain ---- */

static int32_t bits(uint32_t u)
{
	int32_t i;
	memcpy(&i, &u, sizeof i);
	return i;
}

static struct belt_sampler_cmd *cmd(struct belt_sampler_cmd *c,
				    const char *op, enum belt_patch patch,
				    enum belt_sampler_slot s0,
				    enum belt_sampler_slot s1)
{
	*c = (struct belt_sampler_cmd){.op = op, .patch = patch, .n_bind = 2,
				       .slot = {s0, s1}};
	return c;
}

static int gumbel_chain(const struct belt_sampling *p, int32_t n_vocab,
			struct belt_sampler_cmd *out, int max,
			uint64_t *scratch_bytes, char *err, size_t errsz)
{
	*scratch_bytes = 0;
	if (n_vocab <= 0)
		return belt_errf(err, errsz, "sampler 'gumbel': n_vocab %d: expected > 0",
				 (int)n_vocab);
	if (belt_sampling_check(p, err, errsz))
		return -1;
	bool pen = belt_sampling_penalties(p);
	bool sampled = belt_sampling_draws(p->temp);
	bool k_on = p->top_k > 0 && p->top_k < n_vocab;
	bool p_on = p->top_p < 1;
	bool m_on = p->min_p > 0;
	bool thr = sampled && (k_on || p_on || m_on);
	int need = pen + thr + sampled;
	if (need > max)
		return belt_errf(err, errsz,
				 "sampler 'gumbel': %d chain commands needed, room for %d",
				 need, max);
	int n = 0;
	if (pen) {
		struct belt_sampler_cmd *c = cmd(&out[n++], "sample_penalty",
						 BELT_PATCH_POSITION, BELT_SLOT_LOGITS,
						 BELT_SLOT_TOKEN_IDS);
		c->n_param = 5;
		c->param[0].i = n_vocab;
		c->param[1].i = p->repeat_last_n;
		c->param[2].f = p->repeat_penalty;
		c->param[3].f = p->presence_penalty;
		c->param[4].f = p->frequency_penalty;
	}
	if (!sampled)
		return n;
	if (thr) {
		struct belt_sampler_cmd *c = cmd(&out[n++], "sample_threshold",
						 BELT_PATCH_NONE, BELT_SLOT_LOGITS,
						 BELT_SLOT_SCRATCH);
		c->n_param = 4;
		c->param[0].i = n_vocab;
		c->param[1].i = k_on ? p->top_k : 0;
		c->param[2].f = p_on ? p->top_p : 1.0f;
		c->param[3].f = m_on ? p->min_p : 0.0f;
	}
	struct belt_sampler_cmd *c = cmd(&out[n++], "sample_gumbel",
					 BELT_PATCH_POSITION, BELT_SLOT_LOGITS,
					 BELT_SLOT_SCRATCH);
	c->n_param = 5;
	c->param[0].i = n_vocab;
	c->param[1].f = 1.0f / p->temp;
	c->param[2].i = bits((uint32_t)p->seed);
	c->param[3].i = bits((uint32_t)(p->seed >> 32));
	c->param[4].i = thr;
	*scratch_bytes = 16;
	return n;
}

const struct belt_sampler_ops gumbel_sampler_ops = {
	.abi = BELT_SAMPLER_ABI,
	.name = "gumbel",
	.description = "Gumbel-max sampling (Philox4x32-10 noise per seed and "
		       "position) after penalties and top-k/top-p/min-p truncation",
	.work_size = gumbel_work_size,
	.sample = gumbel_sample,
	.chain_commands = gumbel_chain,
};
