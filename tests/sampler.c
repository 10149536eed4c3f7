/* Check suite for the samplers (core/sample, plugins/sampler-gumbel).
 *
 * The sampler under test is the real module, loaded through the registry
 * with belt_sampler_get from $BELT_PLUGIN_PATH. What is checked:
 *  - Philox4x32-10 against the Random123 known-answer vectors;
 *  - the distribution: for fixed logits and settings, 100,000 draws at
 *    consecutive positions with one seed, against the distribution
 *    tests/sampler_ref.c computes on its own (double precision, sorting:
 *    penalties, the kept set K, softmax(l / T) over K; shared with
 *    tests/sampler_vulkan.c); no draw may fall outside K and
 *    Pearson's chi-square p-value must exceed 0.001 (the seed is fixed, so
 *    the outcome is deterministic);
 *  - penalties bit for bit (sample() penalizes the logits in place), the
 *    noise bit for bit (Philox word, counter and key layout, u and g as
 *    doc/samplers.md spells them), temp 0 equals the argmax, a seed
 *    reproduces its draws, settings checks name the flag, the GPU chain
 *    commands, the registry; and the time per token on a 128k vocabulary.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/belt.h"
#include "belt/error.h"
#include "belt/plugin.h"
#include "belt/sampler.h"
#include "plugin/registry.h"
#include "../plugins/sampler-gumbel/philox.h"
#include "sampler_ref.h"

/* The CPU sums top-p's mass in double: a crossing of top_p this far from
 * a change of value cannot move tau. */
#define TOP_P_MARGIN 1e-9

static const struct belt_sampler_ops *S;
static char err[BELT_ERR_SIZE];

/* ---- helpers ---- */

static void *work_for(int32_t n)
{
	void *w = malloc(S->work_size(n));
	ck_assert_ptr_nonnull(w);
	return w;
}

static struct belt_sampling plain(float temp)
{
	return (struct belt_sampling){.temp = temp, .top_k = 0, .top_p = 1,
				      .min_p = 0, .repeat_penalty = 1,
				      .repeat_last_n = 64, .seed = 42};
}

/* ---- Philox ---- */

/* Random123's tests/kat_vectors, the three "philox4x32 10" lines:
 * counter[4], key[2], expected output[4]. */
START_TEST(test_philox_kat)
{
	static const uint32_t kat[3][10] = {
		{0, 0, 0, 0, 0, 0,
		 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
		 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
	};
	for (int v = 0; v < 3; v++) {
		uint32_t out[4];
		philox4x32_10(kat[v], kat[v] + 4, out);
		for (int j = 0; j < 4; j++)
			ck_assert_msg(out[j] == kat[v][6 + j],
				      "vector %d word %d: %08x, expected %08x", v, j,
				      out[j], kat[v][6 + j]);
	}
}
END_TEST

/* ---- chi-square ---- */

START_TEST(test_gamma_q)
{
	/* Q(1, x) = e^-x; Q(1/2, x) = erfc(sqrt x); Q(2, x) = (1 + x) e^-x */
	static const double xs[] = {0.01, 0.3, 1, 2.5, 7, 30, 200};
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		double x = xs[i];
		ck_assert_double_eq_tol(gamma_q(1, x), exp(-x), 1e-12 + 1e-10 * exp(-x));
		ck_assert_double_eq_tol(gamma_q(0.5, x), erfc(sqrt(x)),
					1e-12 + 1e-10 * erfc(sqrt(x)));
		ck_assert_double_eq_tol(gamma_q(2, x), (1 + x) * exp(-x),
					1e-12 + 1e-10 * (1 + x) * exp(-x));
	}
	/* chi-square tables: P(chi2_10 > 18.307) = 0.05, P(chi2_100 > 135.807) = 0.01 */
	ck_assert_double_eq_tol(gamma_q(5, 18.307 / 2), 0.05, 1e-4);
	ck_assert_double_eq_tol(gamma_q(50, 135.807 / 2), 0.01, 1e-4);
}
END_TEST

/* ---- chi-square against the reference (sampler_ref.c) ---- */

START_TEST(test_chi_square)
{
	const struct chi_config *cf = &chi_configs[_i];
	int32_t n;
	const float *src = chi_logits(cf, &n);
	size_t n_hist = POS0 + N_DRAWS;
	int32_t *hist = malloc(n_hist * sizeof *hist);
	float *l = malloc((size_t)n * sizeof *l);
	double *prob = malloc((size_t)n * sizeof *prob);
	bool *kept = malloc((size_t)n * sizeof *kept);
	long *obs = calloc((size_t)n, sizeof *obs);
	void *work = work_for(n);
	ck_assert(hist && l && prob && kept && obs);
	for (size_t i = 0; i < n_hist; i++)
		hist[i] = history_at(i);
	chi_reference(cf, TOP_P_MARGIN, kept, prob);

	for (long d = 0; d < N_DRAWS; d++) {
		uint32_t pos = POS0 + (uint32_t)d;
		memcpy(l, src, (size_t)n * sizeof *l);
		int32_t t = S->sample(&cf->p, l, n, hist, (size_t)pos + 1, pos, work);
		if (t < 0 || t >= n || !kept[t]) /* ck_assert per draw is slow */
			ck_abort_msg("%s: draw %ld gave token %d, outside the kept set",
				     cf->name, d, (int)t);
		obs[t]++;
	}
	chi_check("chi-square", cf, kept, prob, obs);
	free(hist);
	free(l);
	free(prob);
	free(kept);
	free(obs);
	free(work);
}
END_TEST

/* ---- penalties, bit for bit ---- */

START_TEST(test_penalties_exact)
{
	enum { N = 50, H = 300 };
	static const int32_t windows[] = {1, 7, 64, 299, 300, 1000, -1};
	static const float reps[][3] = {
		{1.3f, 0, 0}, {1, 0.5f, 0}, {1, 0, 0.25f}, {0.8f, -0.4f, 0.3f}, {1.17f, 0.1f, 1.5f},
	};
	int32_t hist[H];
	float l[N], want[N];
	void *work = work_for(N);
	rng_state = 777;
	for (int h = 0; h < H; h++) /* ids 0..59: some outside the vocabulary */
		hist[h] = h % 41 == 0 ? -7 : (int32_t)(rng_next() % 60);
	for (unsigned w = 0; w < sizeof windows / sizeof windows[0]; w++)
		for (unsigned r = 0; r < sizeof reps / sizeof reps[0]; r++)
			for (uint32_t pos = 0; pos < H; pos += 37) {
				struct belt_sampling p = plain(0);
				p.repeat_last_n = windows[w];
				p.repeat_penalty = reps[r][0];
				p.presence_penalty = reps[r][1];
				p.frequency_penalty = reps[r][2];
				for (int i = 0; i < N; i++)
					l[i] = i == 5 ? 0.0f : (float)(rng_unit() * 8 - 4);
				/* the formula of belt/sampler.h, in float */
				memcpy(want, l, sizeof l);
				ref_penalize_float(&p, want, N, hist, pos);
				int32_t t = S->sample(&p, l, N, hist, pos + 1, pos, work);
				for (int i = 0; i < N; i++)
					ck_assert_msg(memcmp(&l[i], &want[i], sizeof(float)) == 0,
						      "W %d config %u pos %u: logit %d is %.9g, expected %.9g",
						      windows[w], r, pos, i, l[i], want[i]);
				ck_assert_int_eq(t, ref_argmax(want, N));
			}
	free(work);
}
END_TEST

/* ---- greedy, seeds ---- */

START_TEST(test_greedy)
{
	enum { N = 1000 };
	float l[N], copy[N];
	void *work = work_for(N);
	rng_state = 99;
	for (int rep = 0; rep < 200; rep++) {
		for (int i = 0; i < N; i++) /* coarse values: ties are common */
			l[i] = (float)(rng_next() % 64) / 4 - 8;
		memcpy(copy, l, sizeof l);
		/* 0, below 0, and temperatures so small that 1 / temp is not
		 * finite: their limit, the argmax (not the lowest id) */
		static const float temps[] = {0.0f, -1.0f, 1e-45f, 1e-39f};
		struct belt_sampling p = plain(temps[rep % 4]);
		p.top_k = rep % 3 ? 5 : 0; /* truncation settings do not matter */
		int32_t t = S->sample(&p, l, N, NULL, 0, (uint32_t)rep, work);
		ck_assert_int_eq(t, ref_argmax(copy, N));
		ck_assert(memcmp(l, copy, sizeof l) == 0); /* no penalties: untouched */
	}
	free(work);
}
END_TEST

/* n draws from logits_a at positions pos0.. with seed. */
static void draws(uint64_t seed, uint32_t pos0, int n, int32_t *out)
{
	void *work = work_for(NA);
	struct belt_sampling p = plain(1.0f);
	p.seed = seed;
	for (int d = 0; d < n; d++) {
		float l[NA];
		memcpy(l, logits_a, sizeof l);
		out[d] = S->sample(&p, l, NA, NULL, 0, pos0 + (uint32_t)d, work);
	}
	free(work);
}

START_TEST(test_seeds)
{
	enum { D = 400 };
	int32_t a[D], b[D], c[D], e[D];
	draws(1, 0, D, a);
	draws(1, 0, D, b);
	ck_assert(memcmp(a, b, sizeof a) == 0);
	draws(2, 0, D, c);
	ck_assert(memcmp(a, c, sizeof a) != 0);
	draws(1 | (1ull << 32), 0, D, e); /* the high half of the seed counts */
	ck_assert(memcmp(a, e, sizeof a) != 0);
	/* a draw depends only on (seed, pos): a run resumed at pos 100 agrees */
	draws(1, 100, D - 100, c);
	ck_assert(memcmp(a + 100, c, (D - 100) * sizeof a[0]) == 0);
	/* BELT_SEED_RANDOM is a seed like any other to the sampler */
	draws(BELT_SEED_RANDOM, 0, D, b);
	draws(BELT_SEED_RANDOM, 0, D, c);
	ck_assert(memcmp(b, c, sizeof b) == 0);
}
END_TEST

/* The noise as doc/samplers.md spells it, computed here: the token must
 * be the same, bit for bit (same libm), at every position. */
START_TEST(test_noise_exact)
{
	void *work = work_for(NA);
	static const uint64_t seeds[] = {0, 0x0123456789abcdefull, BELT_SEED_RANDOM};
	for (unsigned s = 0; s < 3; s++)
		for (int c = 0; c < 2; c++) {
			struct belt_sampling p = plain(0.9f);
			p.seed = seeds[s];
			if (c)
				p.top_k = 3; /* K: the top value and the three tied at 2.5 */
			float inv_temp = 1.0f / p.temp;
			uint32_t key[2] = {(uint32_t)(p.seed & 0xffffffffu),
					   (uint32_t)(p.seed >> 32)};
			for (uint32_t pos = 0; pos < 3000; pos += 3) {
				int32_t want = -1;
				float best = 0;
				for (int32_t i = 0; i < NA; i++) {
					if (c && logits_a[i] < 2.5f)
						continue;
					uint32_t ctr[4] = {(uint32_t)i, pos, 0, 0}, x[4];
					philox4x32_10(ctr, key, x);
					float u = (float)(x[0] >> 9);
					u = u + 0.5f;
					u = u * (1.0f / 8388608.0f);
					float g = -logf(-logf(u));
					float v = logits_a[i] * inv_temp;
					v = v + g;
					if (want < 0 || v > best)
						want = i, best = v;
				}
				float l[NA];
				memcpy(l, logits_a, sizeof l);
				int32_t t = S->sample(&p, l, NA, NULL, 0, pos, work);
				if (t != want)
					ck_abort_msg("seed %u config %d pos %u: token %d, expected %d",
						     s, c, pos, (int)t, (int)want);
			}
		}
	free(work);
}
END_TEST

/* ---- edge cases ---- */

START_TEST(test_edges)
{
	enum { N = 64 };
	float l[N];
	void *work = work_for(N);
	/* one token: always it */
	struct belt_sampling p;
	belt_sampling_default(&p);
	p.seed = 3;
	for (uint32_t pos = 0; pos < 50; pos++) {
		l[0] = -1;
		ck_assert_int_eq(S->sample(&p, l, 1, NULL, 0, pos, work), 0);
	}
	/* masked (-inf) tokens are never drawn, even with no truncation */
	p = plain(2.0f);
	for (uint32_t pos = 0; pos < 2000; pos++) {
		for (int i = 0; i < N; i++)
			l[i] = i % 3 ? -INFINITY : (float)(i % 7) - 3;
		int32_t t = S->sample(&p, l, N, NULL, 0, pos, work);
		if (t % 3)
			ck_abort_msg("pos %u: masked token %d drawn", pos, (int)t);
	}
	/* min_p 1, top_k 1 and a tiny top_p keep the maximum and its ties
	 * only; top_k 1 with a tie keeps both */
	for (int c = 0; c < 3; c++) {
		p = plain(1.0f);
		if (c == 0)
			p.min_p = 1;
		else if (c == 1)
			p.top_k = 1;
		else
			p.top_p = 1e-6f;
		bool seen[2] = {false, false};
		for (uint32_t pos = 0; pos < 400; pos++) {
			for (int i = 0; i < N; i++)
				l[i] = (float)(i % 10) / 4;
			l[20] = l[50] = 5; /* the tied maximum */
			int32_t t = S->sample(&p, l, N, NULL, 0, pos, work);
			if (t != 20 && t != 50)
				ck_abort_msg("config %d pos %u: token %d", c, pos, (int)t);
			seen[t == 50] = true;
		}
		ck_assert(seen[0] && seen[1]);
	}
	free(work);
}
END_TEST

/* ---- settings ---- */

static void expect_bad(struct belt_sampling p, const char *flag)
{
	err[0] = 0;
	ck_assert_int_eq(belt_sampling_check(&p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, flag) != NULL, "message '%s' does not name %s", err, flag);
	/* chain_commands refuses it with the same message */
	struct belt_sampler_cmd cmds[4];
	uint64_t scratch = 99;
	char e2[BELT_ERR_SIZE] = "";
	ck_assert_int_eq(S->chain_commands(&p, 100, cmds, 4, &scratch, e2, sizeof e2), -1);
	ck_assert_str_eq(e2, err);
}

START_TEST(test_check)
{
	struct belt_sampling d;
	belt_sampling_default(&d);
	ck_assert_float_eq(d.temp, 0.8f);
	ck_assert_int_eq(d.top_k, 40);
	ck_assert_float_eq(d.top_p, 0.95f);
	ck_assert_float_eq(d.min_p, 0.05f);
	ck_assert_float_eq(d.repeat_penalty, 1.0f);
	ck_assert_int_eq(d.repeat_last_n, 64);
	ck_assert_float_eq(d.presence_penalty, 0);
	ck_assert_float_eq(d.frequency_penalty, 0);
	ck_assert(d.seed == BELT_SEED_RANDOM);
	ck_assert_int_eq(belt_sampling_check(&d, err, sizeof err), 0);
	ck_assert(!belt_sampling_greedy(&d));

	struct belt_sampling p = d;
	p.temp = -0.1f;
	expect_bad(p, "--temp");
	p.temp = NAN;
	expect_bad(p, "--temp");
	p = d, p.top_p = 0;
	expect_bad(p, "--top-p");
	p.top_p = 1.01f;
	expect_bad(p, "--top-p");
	p.top_p = NAN;
	expect_bad(p, "--top-p");
	p = d, p.min_p = -0.01f;
	expect_bad(p, "--min-p");
	p.min_p = 1.5f;
	expect_bad(p, "--min-p");
	p = d, p.repeat_penalty = 0;
	expect_bad(p, "--repeat-penalty");
	p.repeat_penalty = -1;
	expect_bad(p, "--repeat-penalty");
	p = d, p.repeat_last_n = -2;
	expect_bad(p, "--repeat-last-n");
	p = d, p.presence_penalty = NAN;
	expect_bad(p, "--presence-penalty");
	p = d, p.frequency_penalty = INFINITY;
	expect_bad(p, "--frequency-penalty");

	/* the edges of the ranges are valid */
	p = d, p.temp = 0, p.top_p = 1, p.min_p = 1, p.repeat_last_n = -1, p.top_k = -5;
	ck_assert_int_eq(belt_sampling_check(&p, err, sizeof err), 0);
	p.min_p = 0;
	ck_assert_int_eq(belt_sampling_check(&p, err, sizeof err), 0);

	/* greedy: temp <= 0 and no active penalty */
	p = d, p.temp = 0;
	ck_assert(belt_sampling_greedy(&p));
	p.repeat_penalty = 1.1f;
	ck_assert(!belt_sampling_greedy(&p));
	p.repeat_last_n = 0;
	ck_assert(belt_sampling_greedy(&p));
	p = d, p.temp = 0, p.presence_penalty = 0.1f;
	ck_assert(!belt_sampling_greedy(&p));
	p = d, p.temp = 0, p.frequency_penalty = 0.1f;
	ck_assert(!belt_sampling_greedy(&p));
}
END_TEST

/* ---- the GPU chain ---- */

static int chain(struct belt_sampling p, int32_t n, struct belt_sampler_cmd *c,
		 int max, uint64_t *scratch)
{
	err[0] = 0;
	return S->chain_commands(&p, n, c, max, scratch, err, sizeof err);
}

START_TEST(test_chain)
{
	struct belt_sampler_cmd c[4];
	uint64_t scratch = 99;
	struct belt_sampling d;
	belt_sampling_default(&d);
	d.seed = 0xfedcba9876543210ull;

	/* fully greedy: nothing */
	struct belt_sampling p = d;
	p.temp = 0;
	ck_assert_int_eq(chain(p, 1000, c, 4, &scratch), 0);
	ck_assert(scratch == 0);

	/* greedy with penalties: the penalty alone */
	p.repeat_penalty = 1.1f, p.presence_penalty = 0.5f, p.frequency_penalty = 0.25f;
	p.repeat_last_n = -1;
	ck_assert_int_eq(chain(p, 1000, c, 4, &scratch), 1);
	ck_assert_str_eq(c[0].op, "sample_penalty");
	ck_assert_int_eq(c[0].patch, BELT_PATCH_POSITION);
	ck_assert_int_eq(c[0].n_bind, 2);
	ck_assert_int_eq(c[0].slot[0], BELT_SLOT_LOGITS);
	ck_assert_int_eq(c[0].slot[1], BELT_SLOT_TOKEN_IDS);
	ck_assert_int_eq(c[0].n_param, 5);
	ck_assert_int_eq(c[0].param[0].i, 1000);
	ck_assert_int_eq(c[0].param[1].i, -1);
	ck_assert_float_eq(c[0].param[2].f, 1.1f);
	ck_assert_float_eq(c[0].param[3].f, 0.5f);
	ck_assert_float_eq(c[0].param[4].f, 0.25f);
	ck_assert(scratch == 0);

	/* everything on: penalty, threshold, gumbel */
	p.temp = 0.5f;
	ck_assert_int_eq(chain(p, 1000, c, 3, &scratch), 3);
	ck_assert_str_eq(c[1].op, "sample_threshold");
	ck_assert_int_eq(c[1].patch, BELT_PATCH_NONE);
	ck_assert_int_eq(c[1].n_bind, 2);
	ck_assert_int_eq(c[1].slot[0], BELT_SLOT_LOGITS);
	ck_assert_int_eq(c[1].slot[1], BELT_SLOT_SCRATCH);
	ck_assert_int_eq(c[1].n_param, 4);
	ck_assert_int_eq(c[1].param[0].i, 1000);
	ck_assert_int_eq(c[1].param[1].i, 40);
	ck_assert_float_eq(c[1].param[2].f, 0.95f);
	ck_assert_float_eq(c[1].param[3].f, 0.05f);
	ck_assert_str_eq(c[2].op, "sample_gumbel");
	ck_assert_int_eq(c[2].patch, BELT_PATCH_POSITION);
	ck_assert_int_eq(c[2].n_bind, 2);
	ck_assert_int_eq(c[2].slot[0], BELT_SLOT_LOGITS);
	ck_assert_int_eq(c[2].slot[1], BELT_SLOT_SCRATCH);
	ck_assert_int_eq(c[2].n_param, 5);
	ck_assert_int_eq(c[2].param[0].i, 1000);
	ck_assert_float_eq(c[2].param[1].f, 2.0f);
	ck_assert_uint_eq((uint32_t)c[2].param[2].i, 0x76543210u);
	ck_assert_uint_eq((uint32_t)c[2].param[3].i, 0xfedcba98u);
	ck_assert_int_eq(c[2].param[4].i, 1);
	ck_assert(scratch == 16);

	/* room for fewer: an error */
	ck_assert_int_eq(chain(p, 1000, c, 2, &scratch), -1);
	ck_assert_ptr_nonnull(strstr(err, "3"));

	/* truncations off are passed as off; top_k >= n is off */
	p = d, p.temp = 1, p.top_k = 1000, p.top_p = 0.5f, p.min_p = 0;
	ck_assert_int_eq(chain(p, 1000, c, 4, &scratch), 2);
	ck_assert_str_eq(c[0].op, "sample_threshold");
	ck_assert_int_eq(c[0].param[1].i, 0);
	ck_assert_float_eq(c[0].param[2].f, 0.5f);
	ck_assert_float_eq(c[0].param[3].f, 0.0f);
	p.top_k = 7, p.top_p = 1;
	ck_assert_int_eq(chain(p, 1000, c, 4, &scratch), 2);
	ck_assert_int_eq(c[0].param[1].i, 7);
	ck_assert_float_eq(c[0].param[2].f, 1.0f);

	/* plain temperature: gumbel alone, without the threshold */
	p = plain(0.25f);
	ck_assert_int_eq(chain(p, 1000, c, 1, &scratch), 1);
	ck_assert_str_eq(c[0].op, "sample_gumbel");
	ck_assert_float_eq(c[0].param[1].f, 4.0f);
	ck_assert_int_eq(c[0].param[4].i, 0);
	ck_assert(scratch == 16);

	/* a bad vocabulary size */
	ck_assert_int_eq(chain(p, 0, c, 4, &scratch), -1);
	ck_assert_ptr_nonnull(strstr(err, "n_vocab"));
}
END_TEST

/* ---- the registry ---- */

static size_t ws(int32_t n)
{
	return (size_t)n;
}

static int32_t smp(const struct belt_sampling *p, float *l, int32_t n,
		   const int32_t *h, size_t nh, uint32_t pos, void *w)
{
	(void)p, (void)l, (void)n, (void)h, (void)nh, (void)pos, (void)w;
	return 0;
}

static int chn(const struct belt_sampling *p, int32_t n,
	       struct belt_sampler_cmd *o, int max, uint64_t *s, char *e,
	       size_t es)
{
	(void)p, (void)n, (void)o, (void)max, (void)s, (void)e, (void)es;
	return 0;
}

START_TEST(test_registry)
{
	ck_assert_ptr_eq(belt_sampler_get("gumbel", err, sizeof err), S);
	ck_assert_str_eq(S->name, "gumbel");
	ck_assert_ptr_nonnull(S->description);
	ck_assert_uint_eq(S->abi, BELT_SAMPLER_ABI);
	ck_assert_uint_gt(S->work_size(128000), 0);

	ck_assert_ptr_null(belt_sampler_get("no-such", err, sizeof err));
	ck_assert_msg(strstr(err, "sampler-no-such") != NULL, "message: %s", err);

	struct belt_registry *r = belt_registry_global();
	ck_assert_int_eq(belt_registry_add_sampler(r, S, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "gumbel") && strstr(err, "twice"), "message: %s", err);

	static struct belt_sampler_ops other = {
		.abi = BELT_SAMPLER_ABI + 1, .name = "test-other",
		.work_size = ws, .sample = smp, .chain_commands = chn};
	ck_assert_int_eq(belt_registry_add_sampler(r, &other, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "ABI") && strstr(err, "test-other"), "message: %s", err);
	other.abi = BELT_SAMPLER_ABI;
	ck_assert_int_eq(belt_registry_add_sampler(r, &other, err, sizeof err), 0);
	ck_assert_ptr_eq(belt_sampler_get("test-other", err, sizeof err), &other);
}
END_TEST

/* ---- a real vocabulary size: speed, and draws in the kept set ---- */

START_TEST(test_large_vocab)
{
	enum { N = 131072, REPS = 20 };
	float *src = malloc(N * sizeof *src), *l = malloc(N * sizeof *l);
	double *ld = malloc(N * sizeof *ld), *prob = malloc(N * sizeof *prob);
	bool *kept = malloc(N * sizeof *kept);
	void *work = work_for(N);
	ck_assert(src && l && ld && prob && kept);
	rng_state = 2024;
	for (int32_t i = 0; i < N; i++) {
		double u1 = rng_unit() + 1e-12, u2 = rng_unit();
		src[i] = (float)(round((-2 + 2.5 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2)) * 256) / 256);
	}
	struct belt_sampling cfgs[3];
	belt_sampling_default(&cfgs[0]);
	cfgs[0].seed = 5;
	cfgs[1] = cfgs[0], cfgs[1].top_k = 0;	      /* top-p over the whole vocabulary */
	cfgs[2] = plain(1.0f);			      /* no truncation */
	static const char *names[] = {"defaults (k 40, p 0.95, m 0.05)", "k off, p 0.95, m 0.05",
				      "no truncation"};
	for (int c = 0; c < 3; c++) {
		for (int32_t i = 0; i < N; i++)
			ld[i] = src[i];
		ref_distribution(&cfgs[c], ld, N, TOP_P_MARGIN, kept, prob);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int r = 0; r < REPS; r++) {
			memcpy(l, src, N * sizeof *l);
			int32_t t = S->sample(&cfgs[c], l, N, NULL, 0, (uint32_t)r, work);
			ck_assert_msg(t >= 0 && t < N && kept[t], "%s: token %d outside K",
				      names[c], (int)t);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / REPS;
		printf("vocab %d, %-34s %8.1f us per token\n", N, names[c], us);
		fflush(stdout);
	}
	free(src);
	free(l);
	free(ld);
	free(prob);
	free(kept);
	free(work);
}
END_TEST
/* ---- sampled generation end to end (belt_generate), CPU and Vulkan ---- */

struct collect {
	int32_t ids[64];
	int n;
};

static bool collect_id(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct collect *c = ud;
	if (id >= 0 && c->n < 64)
		c->ids[c->n++] = id;
	return true;
}

/* 32 tokens after a fixed prompt with the given sampling (NULL: greedy). */
static void gen_ids(struct belt_session *s, const struct belt_sampling *sp,
		    struct collect *c)
{
	static const int32_t prompt[] = {1, 403, 407};
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = 32;
	gp.stop_at_eog = false;
	gp.sampling = sp;
	char err[BELT_ERR_SIZE];
	memset(c, 0, sizeof *c);
	ck_assert_msg(belt_generate(s, prompt, 3, &gp, collect_id, c, err, sizeof err) == 0,
		      "belt_generate: %s", err);
	ck_assert_int_eq(c->n, 32);
}

START_TEST(test_generate_seeds)
{
	static const char *const backends[] = {"cpu", "vulkan"};
	const char *dir = getenv("BELT_SHARED_DIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/models/stories260K.f32.gguf", dir ? dir : "../shared");
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	mp.backend = backends[_i];
	mp.n_threads = 1;
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	if (belt_model_load(&mp, &m, err, sizeof err)) {
		ck_assert_msg(_i == 1 && strstr(err, "vulkan"), "load: %s", err);
		fprintf(stderr, "generate seeds: %s skipped: %s\n", backends[_i], err);
		return;
	}
	struct belt_session *s;
	ck_assert_msg(belt_session_create(m, NULL, &s, err, sizeof err) == 0, "session: %s", err);
	struct belt_sampling sp;
	belt_sampling_default(&sp);
	sp.temp = 1.0f;
	sp.seed = 7;
	struct collect a, b, c, g, z;
	gen_ids(s, &sp, &a);
	gen_ids(s, &sp, &b);
	sp.seed = 8;
	gen_ids(s, &sp, &c);
	gen_ids(s, NULL, &g);
	sp.temp = 0.0f;
	gen_ids(s, &sp, &z);
	ck_assert_msg(!memcmp(a.ids, b.ids, sizeof a.ids), "%s: seed 7 twice differs", backends[_i]);
	ck_assert_msg(memcmp(a.ids, c.ids, sizeof a.ids), "%s: seeds 7 and 8 gave the same text",
		      backends[_i]);
	ck_assert_msg(!memcmp(g.ids, z.ids, sizeof g.ids), "%s: temp 0 is not greedy",
		      backends[_i]);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST


static Suite *suite(void)
{
	Suite *s = suite_create("sampler");
	TCase *tc = tcase_create("gumbel");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, test_philox_kat);
	tcase_add_test(tc, test_gamma_q);
	tcase_add_test(tc, test_penalties_exact);
	tcase_add_test(tc, test_greedy);
	tcase_add_test(tc, test_seeds);
	tcase_add_test(tc, test_noise_exact);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_registry);
	tcase_add_loop_test(tc, test_chi_square, 0, n_chi_configs);
	tcase_add_test(tc, test_large_vocab);
	tcase_add_loop_test(tc, test_generate_seeds, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	S = belt_sampler_get("gumbel", err, sizeof err);
	if (!S) {
		fprintf(stderr, "check_sampler: %s\n", err);
		return EXIT_FAILURE;
	}
	make_logits_b();
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
