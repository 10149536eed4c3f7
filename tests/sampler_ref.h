/* The reference the sampler tests check against, shared by tests/sampler.c
 * (the CPU sampler, check_sampler) and tests/sampler_vulkan.c (the GPU
 * chain ops, check_sampler_vulkan): the semantics of doc/samplers.md
 * computed here on their own (double precision, sorting), the test data
 * (logits, a periodic history, the chi-square configurations) and
 * Pearson's chi-square test. Failures abort the running Check test. */
#ifndef BELT_TESTS_SAMPLER_REF_H
#define BELT_TESTS_SAMPLER_REF_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/sampler.h"

/* ---- test data ---- */

/* splitmix64 state; tests reseed it by assigning a constant. */
extern uint64_t rng_state;
/* The next 64 random bits (splitmix64: test data only). */
uint64_t rng_next(void);
/* A double uniform in [0, 1), 53 bits. */
double rng_unit(void);

/* The index of the largest of l[0..n), the lowest on ties. */
int32_t ref_argmax(const float *l, int32_t n);

#define N_DRAWS 100000 /* draws per chi-square configuration */
#define POS0 256       /* first draw's position: every window is full */
#define PERIOD 16      /* the history repeats every PERIOD positions */

/* The token at position i of the fixed history: a PERIOD-long pattern
 * holding repeats and two ids outside any vocabulary here (-1, 5000). */
int32_t history_at(size_t i);

#define NA 32
#define NB 1000

/* 32 logits, three tied at 2.5 just under the top (top_k 2 and 3 cut
 * through the tie). */
extern const float logits_a[NA];
/* 1000 logits like a model's, multiples of 1/512 (some tie); ids < 32
 * are logits_a + 3. Filled by make_logits_b. */
extern float logits_b[NB];
/* Fill logits_b (deterministic; reseeds rng_state). */
void make_logits_b(void);

/* A chi-square configuration: logits_b if big, else logits_a. */
struct chi_config {
	const char *name;
	bool big;
	struct belt_sampling p;
};

/* 16 fixed configurations: temperatures, top-k through ties, top-p,
 * min-p, all three, each penalty (windows multiples of PERIOD). */
extern const struct chi_config chi_configs[];
extern const int n_chi_configs;

/* The configuration's logits and their count. */
const float *chi_logits(const struct chi_config *cf, int32_t *n);

/* ---- the semantics of doc/samplers.md ---- */

/* Step 1 in double on l[0..n): the window of repeat_last_n tokens ending
 * at pos (-1: all of 0..pos), hist(i) the token at position i. */
void ref_penalize(const struct belt_sampling *p, double *l, int32_t n,
		  int32_t (*hist)(size_t), uint32_t pos);
/* The occurrences of each id in [0, n) in the window of p ending at pos,
 * hist[0..pos] the tokens (malloc'd; NULL when repeat_last_n is 0). */
int32_t *ref_window_counts(const struct belt_sampling *p, int32_t n,
			   const int32_t *hist, uint32_t pos);
/* Step 1 exactly as specified, in float, one operation at a time (what
 * sample() and sample_penalty must produce bit for bit); hist[0..pos]. */
void ref_penalize_float(const struct belt_sampling *p, float *l, int32_t n,
			const int32_t *hist, uint32_t pos);
/* max(tau_k, tau_p) of step 3 (-INFINITY when both are off), *top the
 * largest logit. Asserts that top-p's cumulative mass stays `margin` away
 * from top_p either side of the tie group it lands in (else rounding of
 * the sums could move tau). */
double ref_tau_kp(const struct belt_sampling *p, const double *l, int32_t n,
		  double margin, double *top);
/* Step 3 and the sampled distribution: kept[i] (l[i] >= tau, min-p in
 * double) and prob[i] = softmax(l / temp) over K. Asserts that no logit
 * lies within 1e-4 of tau (float and double tau must agree). */
void ref_distribution(const struct belt_sampling *p, const double *l,
		      int32_t n, double margin, bool *kept, double *prob);
/* The configuration's kept set and probabilities at POS0 (penalties with
 * history_at's window, which is the same at every later position). */
void chi_reference(const struct chi_config *cf, double margin, bool *kept,
		   double *prob);

/* ---- chi-square ---- */

/* Q(a, x), the regularized upper incomplete gamma function: the p-value
 * of chi2 on df degrees of freedom is Q(df / 2, chi2 / 2). */
double gamma_q(double a, double x);
/* Pearson's chi-square of the observed counts over the kept tokens,
 * merging bins expected fewer than 5 times; *df_out: degrees of freedom. */
double chi_square(const double *prob, const bool *kept, const long *obs,
		  int32_t n, long draws, int *df_out);
/* Print "tag name |K| chi2 df p" and assert p > 0.001 for N_DRAWS draws
 * counted in obs. */
void chi_check(const char *tag, const struct chi_config *cf,
	       const bool *kept, const double *prob, const long *obs);

#endif
