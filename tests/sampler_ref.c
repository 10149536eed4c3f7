/* The sampler tests' reference: see sampler_ref.h. */
#include "sampler_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---- */

uint64_t rng_state = 0x853c49e6748fea9bull;

uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rng_unit(void)
{
	return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

int32_t ref_argmax(const float *l, int32_t n)
{
	int32_t b = 0;
	for (int32_t i = 1; i < n; i++)
		if (l[i] > l[b])
			b = i;
	return b;
}

/* ---- the history ---- */

/* Any window whose length is a multiple of PERIOD holds the same
 * multiset; -1 and 5000 are outside the vocabulary and must be ignored. */
static const int32_t pattern[PERIOD] = {3, 7, 3, 1, 9, 3, 7, -1,
					 30, 3, 1, 5000, 7, 3, 0, 12};

int32_t history_at(size_t i)
{
	return pattern[i % PERIOD];
}

/* ---- logits ---- */

const float logits_a[NA] = {
	2.0f, 1.5f, 3.0f, 0.5f, 2.5f, -1.0f, 2.5f, 0.0f,
	2.5f, 1.0f, -0.5f, 1.75f, -2.0f, 0.25f, 1.25f, -3.0f,
	0.75f, -1.5f, 2.25f, -4.0f, 0.125f, -0.25f, 1.875f, -2.5f,
	0.625f, -0.75f, 1.375f, -3.5f, 0.375f, 1.625f, -1.25f, 2.125f,
};

float logits_b[NB];

/* A long tail around -2 (sd 2), a few strong candidates; token ids < 32
 * are the pattern's, lifted so the penalties matter. */
void make_logits_b(void)
{
	rng_state = 12345;
	for (int32_t i = 0; i < NB; i++) {
		double u1 = rng_unit() + 1e-12, u2 = rng_unit();
		double g = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		double v = -2 + 2 * g;
		if (i < NA)
			v = logits_a[i] + 3;
		logits_b[i] = (float)(round(v * 512) / 512);
	}
}

/* ---- the configurations ---- */

#define SP(T, K, P, M, R, PR, FR, W) \
	{.temp = T, .top_k = K, .top_p = P, .min_p = M, .repeat_penalty = R, \
	 .presence_penalty = PR, .frequency_penalty = FR, .repeat_last_n = W, \
	 .seed = 0x0123456789abcdefull}

const struct chi_config chi_configs[] = {
	{"32: T=0.7", false, SP(0.7f, 0, 1, 0, 1, 0, 0, 64)},
	{"32: T=1.0", false, SP(1.0f, 0, 1, 0, 1, 0, 0, 64)},
	{"32: T=1.5", false, SP(1.5f, 0, 1, 0, 1, 0, 0, 64)},
	{"32: top_k=3 (tie)", false, SP(1.0f, 3, 1, 0, 1, 0, 0, 64)},
	{"32: top_k=2 (tie) T=2", false, SP(2.0f, 2, 1, 0, 1, 0, 0, 64)},
	{"32: top_p=0.8", false, SP(1.0f, 0, 0.8f, 0, 1, 0, 0, 64)},
	{"32: min_p=0.1", false, SP(1.0f, 0, 1, 0.1f, 1, 0, 0, 64)},
	{"32: k=10 p=0.9 m=0.05 T=0.8", false, SP(0.8f, 10, 0.9f, 0.05f, 1, 0, 0, 64)},
	{"32: repeat=1.3 n=16", false, SP(1.0f, 0, 1, 0, 1.3f, 0, 0, 16)},
	{"32: presence=0.5 frequency=0.25 n=32", false, SP(1.0f, 0, 1, 0, 1, 0.5f, 0.25f, 32)},
	{"32: all, n=48", false, SP(1.2f, 8, 0.95f, 0.02f, 1.2f, 0.3f, 0.1f, 48)},
	{"1000: T=1.0", true, SP(1.0f, 0, 1, 0, 1, 0, 0, 64)},
	{"1000: top_k=40 T=0.8", true, SP(0.8f, 40, 1, 0, 1, 0, 0, 64)},
	{"1000: top_p=0.9", true, SP(1.0f, 0, 0.9f, 0, 1, 0, 0, 64)},
	{"1000: min_p=0.05", true, SP(1.0f, 0, 1, 0.05f, 1, 0, 0, 64)},
	{"1000: k=100 p=0.95 m=0.01 penalties T=0.9", true,
	 SP(0.9f, 100, 0.95f, 0.01f, 1.1f, 0.2f, 0.1f, 64)},
};

const int n_chi_configs = (int)(sizeof chi_configs / sizeof chi_configs[0]);

const float *chi_logits(const struct chi_config *cf, int32_t *n)
{
	*n = cf->big ? NB : NA;
	return cf->big ? logits_b : logits_a;
}

/* ---- penalties ---- */

/* First position of the window of p ending at pos. */
static size_t window_start(const struct belt_sampling *p, uint32_t pos)
{
	if (p->repeat_last_n > 0 && pos + 1 > (uint32_t)p->repeat_last_n)
		return pos + 1 - (size_t)p->repeat_last_n;
	return 0;
}

/* count[t] for t in [0, n): occurrences in the window; NULL when off. */
static int32_t *window_counts(const struct belt_sampling *p, int32_t n,
			      int32_t (*hist_fn)(size_t), const int32_t *hist,
			      uint32_t pos)
{
	if (p->repeat_last_n == 0)
		return NULL;
	int32_t *count = calloc((size_t)n, sizeof *count);
	ck_assert_ptr_nonnull(count);
	for (size_t i = window_start(p, pos); i <= pos; i++) {
		int32_t t = hist ? hist[i] : hist_fn(i);
		if (t >= 0 && t < n)
			count[t]++;
	}
	return count;
}

int32_t *ref_window_counts(const struct belt_sampling *p, int32_t n,
			   const int32_t *hist, uint32_t pos)
{
	return window_counts(p, n, NULL, hist, pos);
}

void ref_penalize(const struct belt_sampling *p, double *l, int32_t n,
		  int32_t (*hist)(size_t), uint32_t pos)
{
	int32_t *count = window_counts(p, n, hist, NULL, pos);
	if (!count)
		return;
	for (int32_t t = 0; t < n; t++) {
		if (!count[t])
			continue;
		double v = l[t];
		v = v > 0 ? v / p->repeat_penalty : v * p->repeat_penalty;
		l[t] = v - (count[t] * (double)p->frequency_penalty +
			    p->presence_penalty);
	}
	free(count);
}

void ref_penalize_float(const struct belt_sampling *p, float *l, int32_t n,
			const int32_t *hist, uint32_t pos)
{
	int32_t *count = ref_window_counts(p, n, hist, pos);
	if (!count)
		return;
	for (int32_t t = 0; t < n; t++) {
		if (!count[t])
			continue;
		float v = l[t];
		v = v > 0 ? v / p->repeat_penalty : v * p->repeat_penalty;
		float sub = (float)count[t] * p->frequency_penalty;
		sub = sub + p->presence_penalty;
		l[t] = v - sub;
	}
	free(count);
}

/* ---- truncation and the distribution ---- */

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

/* tau_p over the candidates v[0..c) (sorted descending). */
static double ref_tau_p(double top_p, const double *v, int32_t c,
			double margin)
{
	double z = 0, cum = 0;
	for (int32_t j = 0; j < c; j++)
		z += exp(v[j] - v[0]);
	int32_t m = 0;
	while (m < c) {
		cum += exp(v[m] - v[0]) / z;
		m++;
		if (cum >= top_p)
			break;
	}
	/* the mass before v_m's tie group and through its end: only a
	 * crossing outside the group changes tau, so both must be clear of
	 * top_p by more than the sums' rounding */
	double tau = v[m - 1], before = 0, through = 0;
	for (int32_t j = 0; j < c && v[j] >= tau; j++) {
		double q = exp(v[j] - v[0]) / z;
		through += q;
		if (v[j] > tau)
			before += q;
	}
	ck_assert_msg(top_p - before > margin && through - top_p > margin,
		      "test data: top-p mass %.9f or %.9f too close to %g", before,
		      through, top_p);
	return tau;
}

double ref_tau_kp(const struct belt_sampling *p, const double *l, int32_t n,
		  double margin, double *top)
{
	double *v = malloc((size_t)n * sizeof *v);
	ck_assert_ptr_nonnull(v);
	memcpy(v, l, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, cmp_desc);
	double tau = -INFINITY;
	int32_t c = n; /* candidates for top-p: v[0..c) */
	if (p->top_k > 0 && p->top_k < n) {
		tau = v[p->top_k - 1];
		while (c > 0 && v[c - 1] < tau)
			c--;
	}
	if (p->top_p < 1) {
		double tp = ref_tau_p(p->top_p, v, c, margin);
		if (tp > tau)
			tau = tp;
	}
	*top = v[0];
	free(v);
	return tau;
}

void ref_distribution(const struct belt_sampling *p, const double *l,
		      int32_t n, double margin, bool *kept, double *prob)
{
	double top;
	double tau = ref_tau_kp(p, l, n, margin, &top);
	if (p->min_p > 0 && top + log(p->min_p) > tau)
		tau = top + log(p->min_p);
	double z = 0;
	for (int32_t i = 0; i < n; i++) {
		kept[i] = l[i] >= tau;
		ck_assert_msg(l[i] == tau || fabs(l[i] - tau) > 1e-4,
			      "test data: logit %d (%.6f) too close to the threshold %.6f",
			      i, l[i], tau);
		prob[i] = kept[i] ? exp((l[i] - top) / p->temp) : 0;
		z += prob[i];
	}
	for (int32_t i = 0; i < n; i++)
		prob[i] /= z;
}

void chi_reference(const struct chi_config *cf, double margin, bool *kept,
		   double *prob)
{
	int32_t n;
	const float *src = chi_logits(cf, &n);
	double *ld = malloc((size_t)n * sizeof *ld);
	ck_assert_ptr_nonnull(ld);
	/* a window that is a multiple of PERIOD is the same multiset at
	 * every position from POS0 on */
	ck_assert(cf->p.repeat_last_n % PERIOD == 0);
	for (int32_t i = 0; i < n; i++)
		ld[i] = src[i];
	if (belt_sampling_penalties(&cf->p))
		ref_penalize(&cf->p, ld, n, history_at, POS0);
	ref_distribution(&cf->p, ld, n, margin, kept, prob);
	free(ld);
}

/* ---- chi-square ---- */

/* By the power series of P = 1 - Q for x < a + 1, else by Legendre's
 * continued fraction for Q evaluated with the modified Lentz method. */
double gamma_q(double a, double x)
{
	if (x <= 0)
		return 1.0;
	double front = exp(-x + a * log(x) - lgamma(a));
	if (x < a + 1) {
		double term = 1.0 / a, sum = term;
		for (int n = 1; n < 100000; n++) {
			term *= x / (a + n);
			sum += term;
			if (fabs(term) < fabs(sum) * 1e-16)
				break;
		}
		return 1.0 - front * sum;
	}
	const double tiny = 1e-300;
	double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
	for (int n = 1; n < 100000; n++) {
		double an = -n * (n - a);
		b += 2;
		d = an * d + b;
		if (fabs(d) < tiny)
			d = tiny;
		c = b + an / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-16)
			break;
	}
	return front * h;
}

/* The bins are merged smallest expected count first, into groups of at
 * least 5. */
double chi_square(const double *prob, const bool *kept, const long *obs,
		  int32_t n, long draws, int *df_out)
{
	int32_t *idx = malloc((size_t)n * sizeof *idx);
	ck_assert_ptr_nonnull(idx);
	int32_t k = 0;
	for (int32_t i = 0; i < n; i++)
		if (kept[i])
			idx[k++] = i;
	/* insertion sort by expected count, ascending (k is small enough) */
	for (int32_t a = 1; a < k; a++) {
		int32_t t = idx[a], b = a;
		while (b > 0 && prob[idx[b - 1]] > prob[t]) {
			idx[b] = idx[b - 1];
			b--;
		}
		idx[b] = t;
	}
	double chi2 = 0, ge = 0, go = 0, last_e = 0, last_o = 0;
	int groups = 0;
	for (int32_t a = 0; a < k; a++) {
		ge += prob[idx[a]] * draws;
		go += obs[idx[a]];
		if (ge >= 5) {
			if (groups)
				chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
			last_e = ge;
			last_o = go;
			groups++;
			ge = go = 0;
		}
	}
	/* a remainder under 5 joins the last group */
	last_e += ge;
	last_o += go;
	if (groups || ge > 0) {
		chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
		groups += !groups;
	}
	free(idx);
	*df_out = groups - 1;
	return chi2;
}

void chi_check(const char *tag, const struct chi_config *cf,
	       const bool *kept, const double *prob, const long *obs)
{
	int32_t n;
	chi_logits(cf, &n);
	int df;
	double chi2 = chi_square(prob, kept, obs, n, N_DRAWS, &df);
	int32_t n_kept = 0;
	for (int32_t i = 0; i < n; i++)
		n_kept += kept[i];
	double pv = df > 0 ? gamma_q(df / 2.0, chi2 / 2) : 1.0;
	printf("%s %-42s |K| %4d  chi2 %8.2f  df %4d  p %.4f\n", tag,
	       cf->name, (int)n_kept, chi2, df, pv);
	fflush(stdout);
	ck_assert_msg(pv > 0.001, "%s: chi2 %.2f on %d degrees of freedom, p %.3g",
		      cf->name, chi2, df, pv);
}
