/* Check suite for the gumbel sampler's GPU chain on the Vulkan backend:
 * the ops sample_penalty, sample_threshold and sample_gumbel of
 * doc/samplers.md ("Chain ops"). The backend and the sampler are the real
 * modules, loaded through the registry; the tables are built here by hand
 * as the core builds them for sampled decoding: a reset of the logits,
 * the commands the sampler's chain_commands() returns, the argmax. What is
 * checked:
 *  - the distribution: for 9 of the 16 chi-square configurations of
 *    tests/sampler_ref.c (chi_gpu below says why not all), 100,000 draws
 *    at consecutive positions, checked as check_sampler checks the CPU
 *    sampler's (no draw outside K, Pearson p > 0.001, the same reference
 *    code); and the same draws as the CPU sampler's sample() but for
 *    at most 1 in 10,000 (the noise's integer part is bit-exact, GPU log
 *    may differ from libm's in the last bits);
 *  - sample_penalty: the penalized logits bit for bit against the float
 *    formula, but for the division by repeat_penalty (Vulkan: 2.5 ulp;
 *    3 ulp allowed), over windows 1 .. longer than the history and -1;
 *  - sample_threshold: tau on a 131,072-entry vocabulary with many ties,
 *    bit for bit (1 ulp where min-p sets it: GPU log), for top-k, top-p,
 *    min-p, combinations, thousands of ties at the k-th value, all off;
 *  - errors: a logits binding smaller than n floats is refused by
 *    table_prepare, naming the op;
 *  - all but the chi-square runs under BELT_VK_VALIDATION=fatal where the
 *    layer is installed (a validated chain of 2,048 draws stands in).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/backend.h"
#include "belt/belt.h"
#include "belt/error.h"
#include "belt/plugin.h"
#include "belt/sampler.h"
#include "belt/types.h"
#include "cmd.h"
#include "sampler_ref.h"

static const struct belt_backend_ops *V;
static const struct belt_sampler_ops *S;
static char err[BELT_ERR_SIZE];
static void *vk;	    /* the running test's backend context */
static bool validation;	    /* the validation layer is installed */

/* Positions per table_run: the chain tables record one command buffer
 * per position slot. */
#define MAX_RUN 1024
#define MAX_SAMPLER_CMDS 8

/* The GPU sums top-p's mass in float, with GPU exp: the test data keep
 * every crossing of top_p this far from a change of value. */
#define TOP_P_MARGIN 1e-5

/* ---- the backend ---- */

/* Under the validation layer (fatal: any message fails the test) when
 * asked and installed; the long chi-square runs go without it. */
static void vk_open(bool validate)
{
	if (validate && validation)
		setenv("BELT_VK_VALIDATION", "fatal", 1);
	else
		unsetenv("BELT_VK_VALIDATION");
	struct belt_backend_options opt = {.n_threads = 1, .device = -1};
	ck_assert_msg(V->create(&opt, &vk, err, sizeof err) == 0,
		      "vulkan create: %s", err);
}

static void vk_close(void)
{
	V->destroy(vk);
	vk = NULL;
}

static struct belt_buffer *buf_new(uint64_t size)
{
	struct belt_buffer *r = NULL;
	ck_assert_msg(V->buffer_create(vk, BELT_BUFFER_SCRATCH, size, &r, err,
				       sizeof err) == 0,
		      "buffer_create: %s", err);
	return r;
}

static void buf_put(struct belt_buffer *b, const void *src, uint64_t size)
{
	ck_assert_msg(V->buffer_write(vk, b, 0, src, size, err, sizeof err) == 0,
		      "buffer_write: %s", err);
}

static struct belt_buffer *buf_from(const void *src, uint64_t size)
{
	struct belt_buffer *b = buf_new(size);
	buf_put(b, src, size);
	return b;
}

static void buf_get(struct belt_buffer *b, void *dst, uint64_t size)
{
	ck_assert_msg(V->buffer_read(vk, b, 0, dst, size, err, sizeof err) == 0,
		      "buffer_read: %s", err);
}

static struct belt_cmd cmd_new(const char *op, const char *label)
{
	struct belt_cmd c;
	memset(&c, 0, sizeof c);
	c.kernel = V->kernel_find(vk, op, "default", BELT_TYPE_ANY);
	ck_assert_msg(c.kernel != NULL, "vulkan: no kernel %s", op);
	c.label = label;
	c.layer = -1;
	return c;
}

static void prepare(struct belt_table *t)
{
	ck_assert_msg(V->table_prepare(vk, t, err, sizeof err) == 0,
		      "table_prepare: %s", err);
}

/* Positions pos .. pos + n - 1, in runs of at most MAX_RUN. */
static void run(struct belt_table *t, uint32_t pos, uint32_t n)
{
	for (uint32_t done = 0; done < n;) {
		uint32_t r = n - done < MAX_RUN ? n - done : MAX_RUN;
		ck_assert_msg(V->table_run(vk, t, pos + done, r, 0, err,
					   sizeof err) == 0,
			      "table_run at %u: %s", pos + done, err);
		done += r;
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- a sampled-decoding table ---- */

/* The table the core builds for sampled decoding, over buffers of its
 * own: cmd 0 resets the logits to a pristine copy (pristine + zero: the
 * chain changes the logits in place, and each position must start from
 * the same ones), then the sampler's commands, then the argmax writing
 * draws[pos + 1]. The TOKEN_IDS slot is a fixed history, not the draws,
 * so the penalty windows are the test's. */
struct chain {
	int32_t n;
	uint32_t n_pos; /* positions hist holds, and draws - 1 */
	struct belt_buffer *pristine, *zero, *logits, *hist, *scratch, *draws;
	uint64_t scratch_bytes;
	struct belt_cmd cmds[MAX_SAMPLER_CMDS + 2];
	struct belt_table tab;
};

/* The backend command for a sampler command, its slots mapped. */
static struct belt_cmd chain_cmd(const struct chain *ch,
				 const struct belt_sampler_cmd *s)
{
	struct belt_cmd c = cmd_new(s->op, s->op);
	c.patch = s->patch;
	for (int b = 0; b < s->n_bind; b++) {
		switch (s->slot[b]) {
		case BELT_SLOT_LOGITS:
			bind(&c, ch->logits, 0, (uint64_t)ch->n * 4, BELT_TYPE_F32);
			break;
		case BELT_SLOT_TOKEN_IDS:
			bind(&c, ch->hist, 0, (uint64_t)ch->n_pos * 4, BELT_TYPE_I32);
			break;
		case BELT_SLOT_SCRATCH:
			ck_assert_msg(ch->scratch, "%s binds SCRATCH, scratch_bytes is 0",
				      s->op);
			bind(&c, ch->scratch, 0, ch->scratch_bytes, BELT_TYPE_F32);
			break;
		default:
			ck_abort_msg("%s: unknown slot %d", s->op, s->slot[b]);
		}
	}
	c.n_param = s->n_param;
	memcpy(c.param, s->param, sizeof c.param);
	return c;
}

static void chain_build(struct chain *ch, const struct belt_sampling *p,
			const float *src, int32_t n, const int32_t *hist,
			uint32_t n_pos)
{
	memset(ch, 0, sizeof *ch);
	ch->n = n;
	ch->n_pos = n_pos;
	uint64_t lb = (uint64_t)n * 4;
	float *zeros = calloc((size_t)n, sizeof *zeros);
	int32_t *none = calloc((size_t)n_pos + 1, sizeof *none);
	ck_assert(zeros && none);
	ch->pristine = buf_from(src, lb);
	ch->zero = buf_from(zeros, lb);
	ch->logits = buf_new(lb);
	ch->hist = buf_from(hist, (uint64_t)n_pos * 4);
	ch->draws = buf_from(none, ((uint64_t)n_pos + 1) * 4);
	free(zeros);
	free(none);

	struct belt_sampler_cmd sc[MAX_SAMPLER_CMDS];
	int k = S->chain_commands(p, n, sc, MAX_SAMPLER_CMDS, &ch->scratch_bytes,
				  err, sizeof err);
	ck_assert_msg(k >= 0, "chain_commands: %s", err);
	if (ch->scratch_bytes)
		ch->scratch = buf_new(ch->scratch_bytes);
	struct belt_cmd *c = ch->cmds;
	c[0] = cmd_new("add", "test.reset");
	bind(&c[0], ch->pristine, 0, lb, BELT_TYPE_F32);
	bind(&c[0], ch->zero, 0, lb, BELT_TYPE_F32);
	bind(&c[0], ch->logits, 0, lb, BELT_TYPE_F32);
	pi(&c[0], n);
	for (int j = 0; j < k; j++)
		c[1 + j] = chain_cmd(ch, &sc[j]);
	c[1 + k] = cmd_new("argmax", "test.argmax");
	c[1 + k].patch = BELT_PATCH_ARGMAX_OUTPUT;
	bind(&c[1 + k], ch->logits, 0, lb, BELT_TYPE_F32);
	bind(&c[1 + k], ch->draws, 0, ((uint64_t)n_pos + 1) * 4, BELT_TYPE_I32);
	pi(&c[1 + k], n);
	table_init(&ch->tab, c, (uint32_t)k + 2, n_pos, ch->draws, MAX_RUN);
	prepare(&ch->tab);
}

static void chain_free(struct chain *ch)
{
	V->table_release(vk, &ch->tab);
	struct belt_buffer *all[] = {ch->pristine, ch->zero, ch->logits,
				     ch->hist, ch->scratch, ch->draws};
	for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i])
			V->buffer_destroy(vk, all[i]);
}

/* history_at for positions 0 .. n_pos - 1. */
static int32_t *periodic_history(uint32_t n_pos)
{
	int32_t *h = malloc((size_t)n_pos * sizeof *h);
	ck_assert_ptr_nonnull(h);
	for (uint32_t i = 0; i < n_pos; i++)
		h[i] = history_at(i);
	return h;
}

/* How many of the draws at positions pos0 .. pos0 + count - 1 differ from
 * the CPU sampler's; the first difference goes to *first ("" if none). */
static long cpu_mismatches(const struct belt_sampling *p, const float *src,
			   int32_t n, const int32_t *hist, const int32_t *draws,
			   uint32_t pos0, uint32_t count, char *first,
			   size_t firstsz)
{
	float *l = malloc((size_t)n * sizeof *l);
	void *work = malloc(S->work_size(n));
	ck_assert(l && work);
	long bad = 0;
	first[0] = 0;
	for (uint32_t d = 0; d < count; d++) {
		uint32_t pos = pos0 + d;
		memcpy(l, src, (size_t)n * sizeof *l);
		int32_t t = S->sample(p, l, n, hist, (size_t)pos + 1, pos, work);
		if (t == draws[pos + 1])
			continue;
		if (!bad++)
			snprintf(first, firstsz, "first at pos %u: gpu %d, cpu %d",
				 pos, (int)draws[pos + 1], (int)t);
	}
	free(l);
	free(work);
	return bad;
}

/* At most 1 in 10,000 draws may differ from the CPU's (rounded up). */
static void check_cpu_agreement(const char *name, long bad, uint32_t count,
				const char *first)
{
	long allowed = ((long)count + 9999) / 10000;
	ck_assert_msg(bad <= allowed,
		      "%s: %ld of %u draws differ from the CPU sampler's (at most "
		      "%ld allowed); %s",
		      name, bad, count, allowed, first);
}

/* ---- the distribution ---- */

/* The configurations of chi_configs run here: one or more of each kind
 * (plain temperature, top-k through a tie, top-p, min-p, the penalties,
 * all combined). All 16 take about 9 minutes on lavapipe with 2 cores
 * (threshold on 1000 logits: 0.6 to 1 ms per token); the other seven
 * (more temperatures, a second top-k tie, min-p and k/p/m on 32 logits,
 * top-k 40 and top-p 0.9 on 1000) only vary settings these cover, and
 * check_sampler runs all 16 on the CPU against the same reference (all 16
 * passed here too when this list was chosen). */
static const char *const chi_gpu[] = {
	"32: T=1.0",
	"1000: T=1.0",
	"32: top_k=3 (tie)",
	"32: top_p=0.8",
	"1000: min_p=0.05",
	"32: repeat=1.3 n=16",
	"32: presence=0.5 frequency=0.25 n=32",
	"32: all, n=48",
	"1000: k=100 p=0.95 m=0.01 penalties T=0.9",
};
#define N_CHI_GPU ((int)(sizeof chi_gpu / sizeof chi_gpu[0]))

static const struct chi_config *chi_find(const char *name)
{
	for (int i = 0; i < n_chi_configs; i++)
		if (!strcmp(chi_configs[i].name, name))
			return &chi_configs[i];
	ck_abort_msg("no chi-square configuration '%s'", name);
	return NULL;
}

START_TEST(test_chi_square)
{
	const struct chi_config *cf = chi_find(chi_gpu[_i]);
	int32_t n;
	const float *src = chi_logits(cf, &n);
	uint32_t n_pos = POS0 + N_DRAWS;
	int32_t *hist = periodic_history(n_pos);
	int32_t *draws = malloc(((size_t)n_pos + 1) * sizeof *draws);
	bool *kept = malloc((size_t)n * sizeof *kept);
	double *prob = malloc((size_t)n * sizeof *prob);
	long *obs = calloc((size_t)n, sizeof *obs);
	ck_assert(draws && kept && prob && obs);
	chi_reference(cf, TOP_P_MARGIN, kept, prob);

	vk_open(false);
	struct chain ch;
	chain_build(&ch, &cf->p, src, n, hist, n_pos);
	double t0 = now_s();
	run(&ch.tab, POS0, N_DRAWS);
	double t1 = now_s();
	buf_get(ch.draws, draws, ((uint64_t)n_pos + 1) * 4);
	chain_free(&ch);
	vk_close();

	for (uint32_t d = 0; d < N_DRAWS; d++) {
		int32_t t = draws[POS0 + d + 1];
		if (t < 0 || t >= n || !kept[t]) /* ck_assert per draw is slow */
			ck_abort_msg("%s: draw %u gave token %d, outside the kept set",
				     cf->name, d, (int)t);
		obs[t]++;
	}
	char first[128];
	long bad = cpu_mismatches(&cf->p, src, n, hist, draws, POS0, N_DRAWS,
				  first, sizeof first);
	printf("vulkan %-42s %6.1f s (%.0f us per token), %ld draws differ "
	       "from the cpu's\n",
	       cf->name, t1 - t0, (t1 - t0) * 1e6 / N_DRAWS, bad);
	fflush(stdout);
	chi_check("vulkan chi-square", cf, kept, prob, obs);
	check_cpu_agreement(cf->name, bad, N_DRAWS, first);
	free(hist);
	free(draws);
	free(kept);
	free(prob);
	free(obs);
}
END_TEST

/* A short chain under the validation layer (the barriers between the
 * reset, the chain ops and the argmax, across runs), against the CPU
 * sampler: the combined configurations, two runs of MAX_RUN; with the
 * backend's gumbel+argmax fusion (as everywhere else) and without it
 * (BELT_VK_FUSE=0: sample_gumbel and argmax as two dispatches). */
START_TEST(test_chain_validated)
{
	const struct chi_config *cf = chi_find(_i & 1 ? "1000: k=100 p=0.95 m=0.01 penalties T=0.9"
					      : "32: all, n=48");
	if (_i & 2)
		setenv("BELT_VK_FUSE", "0", 1);
	enum { COUNT = 2 * MAX_RUN };
	int32_t n;
	const float *src = chi_logits(cf, &n);
	uint32_t n_pos = POS0 + COUNT;
	int32_t *hist = periodic_history(n_pos);
	int32_t *draws = malloc(((size_t)n_pos + 1) * sizeof *draws);
	ck_assert_ptr_nonnull(draws);
	vk_open(true);
	struct chain ch;
	chain_build(&ch, &cf->p, src, n, hist, n_pos);
	unsetenv("BELT_VK_FUSE");
	ck_assert_uint_eq(ch.tab.n_cmds, 5); /* reset, 3 chain ops, argmax */
	run(&ch.tab, POS0, COUNT);
	buf_get(ch.draws, draws, ((uint64_t)n_pos + 1) * 4);
	chain_free(&ch);
	vk_close();
	char first[128];
	long bad = cpu_mismatches(&cf->p, src, n, hist, draws, POS0, COUNT,
				  first, sizeof first);
	check_cpu_agreement(cf->name, bad, COUNT, first);
	free(hist);
	free(draws);
}
END_TEST

/* The fused dispatch on a real vocabulary size: 131,072 logits (more than
 * one chunk, so the candidate lists and their token ids are used), draws
 * against the CPU sampler for each path of sample_threshold: top-k
 * candidates (the defaults, top-k 300), the min-p list (no top-k), all
 * logits (top-p alone). */
START_TEST(test_chain_large)
{
	enum { N = 131072, COUNT = 256 };
	static const struct {
		const char *name;
		int32_t k;
		float p, m;
	} cfg[] = {
		{"defaults", 40, 0.95f, 0.05f},
		{"top-k 300", 300, 0.9f, 0.05f},
		{"min-p list", 0, 0.9f, 0.02f},
		{"top-p alone", 0, 0.5f, 0},
	};
	struct belt_sampling p;
	belt_sampling_default(&p);
	p.temp = 0.9f;
	p.seed = 0x5eed;
	p.top_k = cfg[_i].k;
	p.top_p = cfg[_i].p;
	p.min_p = cfg[_i].m;
	float *src = malloc(N * sizeof *src);
	ck_assert_ptr_nonnull(src);
	rng_state = 99;
	for (int32_t i = 0; i < N; i++) {
		double u1 = rng_unit() + 1e-12, u2 = rng_unit();
		src[i] = (float)(4 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
	}
	uint32_t n_pos = POS0 + COUNT;
	int32_t *hist = periodic_history(n_pos);
	int32_t *draws = malloc(((size_t)n_pos + 1) * sizeof *draws);
	ck_assert_ptr_nonnull(draws);
	vk_open(true);
	struct chain ch;
	chain_build(&ch, &p, src, N, hist, n_pos);
	run(&ch.tab, POS0, COUNT);
	buf_get(ch.draws, draws, ((uint64_t)n_pos + 1) * 4);
	chain_free(&ch);
	vk_close();
	char first[128];
	long bad = cpu_mismatches(&p, src, N, hist, draws, POS0, COUNT, first,
				  sizeof first);
	check_cpu_agreement(cfg[_i].name, bad, COUNT, first);
	free(hist);
	free(draws);
	free(src);
}
END_TEST

/* ---- sample_penalty ---- */

/* Distance in units in the last place (0 for +0 and -0). */
static int64_t ulps(float a, float b)
{
	if (a == b)
		return 0;
	if (isnan(a) || isnan(b))
		return INT64_MAX;
	int32_t ia, ib;
	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	/* order the bit patterns: negative floats count down from 0 */
	int64_t oa = ia < 0 ? -(int64_t)(ia & 0x7fffffff) : ia;
	int64_t ob = ib < 0 ? -(int64_t)(ib & 0x7fffffff) : ib;
	return oa > ob ? oa - ob : ob - oa;
}

static float ulp(float x)
{
	x = fabsf(x);
	return nextafterf(x, INFINITY) - x;
}

/* got against want for a logit l that occurs c times in the window:
 * exact, but where the formula divides by repeat_penalty, whose quotient q
 * Vulkan rounds within 2.5 ulp: then 3 ulp of q, plus the rounding of the
 * subtraction that follows. */
static bool penalty_ok(const struct belt_sampling *p, int32_t c, float l,
		       float got, float want)
{
	if (!c || !(l > 0))
		return ulps(got, want) == 0;
	float q = l / p->repeat_penalty;
	float sub = (float)c * p->frequency_penalty;
	sub = sub + p->presence_penalty;
	if (sub == 0)
		return ulps(got, want) <= 3;
	float r = fabsf(got) > fabsf(want) ? got : want;
	return fabsf(got - want) <= 3 * ulp(q) + ulp(r);
}

/* sample_penalty with greedy decoding (temp 0: the chain is the penalty
 * alone), its logits read back after each position: the windows of
 * check_sampler's test_penalties_exact, over a history holding ids outside
 * [0, n). The argmax must see the penalized logits. */
START_TEST(test_penalty)
{
	enum { N = 50, H = 300 };
	static const int32_t windows[] = {1, 7, 64, -1, 299, 300, 1000};
	static const float reps[][3] = {
		{1.3f, 0, 0}, {1, 0.5f, 0}, {1, 0, 0.25f}, {0.8f, -0.4f, 0.3f}, {1.17f, 0.1f, 1.5f},
	};
	int32_t hist[H], draws[H + 1];
	float l[N], want[N], got[N];
	rng_state = 777;
	for (int h = 0; h < H; h++) /* ids 0..59: some outside the vocabulary */
		hist[h] = h % 41 == 0 ? -7 : (int32_t)(rng_next() % 60);
	vk_open(true);
	for (unsigned w = 0; w < sizeof windows / sizeof windows[0]; w++)
		for (unsigned r = 0; r < sizeof reps / sizeof reps[0]; r++) {
			struct belt_sampling p = {
				.temp = 0, .top_k = 0, .top_p = 1, .min_p = 0,
				.repeat_penalty = reps[r][0], .presence_penalty = reps[r][1],
				.frequency_penalty = reps[r][2], .repeat_last_n = windows[w],
				.seed = 42};
			memset(l, 0, sizeof l);
			struct chain ch;
			chain_build(&ch, &p, l, N, hist, H);
			ck_assert_uint_eq(ch.tab.n_cmds, 3);
			ck_assert_str_eq(ch.cmds[1].kernel->op, "sample_penalty");
			for (uint32_t pos = 0; pos < H; pos += 37) {
				for (int i = 0; i < N; i++) /* 0 and -0 take the product */
					l[i] = i == 5 ? 0.0f : i == 6 ? -0.0f
						: (float)(rng_unit() * 8 - 4);
				buf_put(ch.pristine, l, sizeof l);
				memcpy(want, l, sizeof l);
				ref_penalize_float(&p, want, N, hist, pos);
				run(&ch.tab, pos, 1);
				buf_get(ch.logits, got, sizeof got);
				buf_get(ch.draws, draws, sizeof draws);
				int32_t *count = ref_window_counts(&p, N, hist, pos);
				for (int i = 0; i < N; i++)
					ck_assert_msg(penalty_ok(&p, count[i], l[i], got[i],
								 want[i]),
						      "W %d config %u pos %u: logit %d is %.9g, "
						      "expected %.9g (from %.9g)",
						      windows[w], r, pos, i, got[i], want[i], l[i]);
				ck_assert_msg(draws[pos + 1] == ref_argmax(got, N),
					      "W %d config %u pos %u: argmax %d, the "
					      "penalized logits' is %d",
					      windows[w], r, pos, (int)draws[pos + 1],
					      (int)ref_argmax(got, N));
				free(count);
			}
			chain_free(&ch);
		}
	vk_close();
}
END_TEST

/* ---- sample_threshold ---- */

#define NV 131072

struct cut {
	const char *name;
	int32_t top_k;
	float top_p, min_p;
	bool ties; /* the vector with thousands tied at the 5th value */
};

static const struct cut cuts[] = {
	{"defaults (k 40, p 0.95, m 0.05)", 40, 0.95f, 0.05f, false},
	{"k 1", 1, 1, 0, false},
	{"k 40", 40, 1, 0, false},
	{"k 300", 300, 1, 0, false},
	{"p 0.9", 0, 0.9f, 0, false},
	{"p 0.95, m 0.05 (min-p sets tau)", 0, 0.95f, 0.05f, false},
	{"p 0.5, m 0.001 (top-p sets tau)", 0, 0.5f, 0.001f, false},
	{"k 5, 5042 tied at the 5th value", 5, 1, 0, true},
	{"k 5, p 0.5, ties (tau in the ties)", 5, 0.5f, 0, true},
	{"k 5, p 0.002, ties (all ties in the mass)", 5, 0.002f, 0, true},
	{"all off", 0, 1, 0, false},
};
#define N_CUTS ((int)(sizeof cuts / sizeof cuts[0]))

/* Logits like check_sampler's test_large_vocab: normal, mean -2, sd 2.5,
 * multiples of 1/256 so that many tie. With ties: the others clipped to 9,
 * four above 10 and every 26th token (5042 of them) at 10, so that top_k 5
 * keeps 5046 and top-p's mass must count all of them. */
static void large_logits(float *l, bool ties)
{
	rng_state = 2024;
	for (int32_t i = 0; i < NV; i++) {
		double u1 = rng_unit() + 1e-12, u2 = rng_unit();
		double g = -2 + 2.5 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		l[i] = (float)(round(g * 256) / 256);
		if (ties)
			l[i] = i % 26 == 1 ? 10.0f : fminf(l[i], 9.0f);
	}
	if (ties) {
		l[7] = 12.0f;
		l[100] = 11.5f;
		l[1000] = 11.0f;
		l[50000] = 10.5f;
	}
}

/* The reference tau in float: tau_k and tau_p are logits, exact; tau_m =
 * v1 + logf(min_p), whose log the GPU may round differently (*loose). */
static float cut_tau(const struct belt_sampling *p, const double *ld,
		     bool *loose)
{
	double top;
	float tau = (float)ref_tau_kp(p, ld, NV, TOP_P_MARGIN, &top);
	*loose = false;
	if (p->min_p > 0) {
		float tm = (float)top + logf(p->min_p);
		if (tm >= tau) {
			tau = tm;
			*loose = true;
		}
	}
	return tau;
}

/* One sample_threshold command, built by hand (not through the sampler,
 * so that any setting can be given); three positions in one run, so that
 * what a position leaves behind must not spoil the next. */
START_TEST(test_threshold)
{
	float *src[2] = {malloc(NV * sizeof(float)), malloc(NV * sizeof(float))};
	float *back = malloc(NV * sizeof(float));
	double *ld = malloc(NV * sizeof *ld);
	ck_assert(src[0] && src[1] && back && ld);
	large_logits(src[0], false);
	large_logits(src[1], true);
	vk_open(true);
	struct belt_buffer *bl[2] = {buf_from(src[0], NV * 4), buf_from(src[1], NV * 4)};
	struct belt_buffer *bs = buf_new(16);
	for (int c = 0; c < N_CUTS; c++) {
		const struct cut *cu = &cuts[c];
		struct belt_sampling p = {.temp = 1, .top_k = cu->top_k, .top_p = cu->top_p,
					  .min_p = cu->min_p, .repeat_penalty = 1};
		for (int32_t i = 0; i < NV; i++)
			ld[i] = src[cu->ties][i];
		bool loose;
		float want = cut_tau(&p, ld, &loose);
		int32_t n_kept = 0;
		for (int32_t i = 0; i < NV; i++)
			n_kept += ld[i] >= want;

		static const float poison[4] = {12345, 12345, 12345, 12345};
		buf_put(bs, poison, sizeof poison);
		struct belt_cmd cmd = cmd_new("sample_threshold", "test.threshold");
		bind(&cmd, bl[cu->ties], 0, NV * 4, BELT_TYPE_F32);
		bind(&cmd, bs, 0, 16, BELT_TYPE_F32);
		pi(&cmd, NV);
		pi(&cmd, cu->top_k);
		pf(&cmd, cu->top_p);
		pf(&cmd, cu->min_p);
		struct belt_table tab;
		table_init(&tab, &cmd, 1, 8, NULL, MAX_RUN);
		prepare(&tab);
		double t0 = now_s();
		run(&tab, 0, 3);
		double t1 = now_s();
		V->table_release(vk, &tab);
		float got[4];
		buf_get(bs, got, sizeof got);
		buf_get(bl[cu->ties], back, NV * 4);
		printf("threshold %-42s tau %12.7g (want %12.7g)  |K| %6d  %6.0f us\n",
		       cu->name, got[0], want, (int)n_kept, (t1 - t0) * 1e6 / 3);
		fflush(stdout);
		ck_assert_msg(loose ? ulps(got[0], want) <= 1
				    : memcmp(&got[0], &want, 4) == 0,
			      "threshold %s: tau %.9g, expected %.9g", cu->name,
			      got[0], want);
		ck_assert_msg(memcmp(back, src[cu->ties], NV * 4) == 0,
			      "threshold %s: the logits changed", cu->name);
	}
	V->buffer_destroy(vk, bl[0]);
	V->buffer_destroy(vk, bl[1]);
	V->buffer_destroy(vk, bs);
	vk_close();
	free(src[0]);
	free(src[1]);
	free(back);
	free(ld);
}
END_TEST

/* ---- errors ---- */

/* cmd (its logits binding one float short) is refused, naming its op;
 * with the full binding it prepares. */
static void expect_short_logits(struct belt_cmd *cmd, uint32_t n)
{
	struct belt_table tab;
	table_init(&tab, cmd, 1, 64, NULL, MAX_RUN);
	cmd->bind[0].size = (uint64_t)n * 4 - 4;
	ck_assert_int_eq(V->table_prepare(vk, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, cmd->kernel->op) != NULL,
		      "the message does not name %s: %s", cmd->kernel->op, err);
	ck_assert_ptr_null(tab.priv);
	cmd->bind[0].size = (uint64_t)n * 4;
	prepare(&tab);
	V->table_release(vk, &tab);
}

START_TEST(test_errors)
{
	enum { N = 1000 };
	vk_open(true);
	struct belt_buffer *l = buf_new(N * 4), *s = buf_new(16), *ids = buf_new(64 * 4);
	/* labels that are not the op: the op must be named on its own */
	struct belt_cmd c = cmd_new("sample_threshold", "test.a");
	bind(&c, l, 0, N * 4, BELT_TYPE_F32);
	bind(&c, s, 0, 16, BELT_TYPE_F32);
	pi(&c, N);
	pi(&c, 40);
	pf(&c, 0.95f);
	pf(&c, 0.05f);
	expect_short_logits(&c, N);

	c = cmd_new("sample_penalty", "test.b");
	c.patch = BELT_PATCH_POSITION;
	bind(&c, l, 0, N * 4, BELT_TYPE_F32);
	bind(&c, ids, 0, 64 * 4, BELT_TYPE_I32);
	pi(&c, N);
	pi(&c, 64);
	pf(&c, 1.1f);
	pf(&c, 0.5f);
	pf(&c, 0.25f);
	expect_short_logits(&c, N);

	c = cmd_new("sample_gumbel", "test.c");
	c.patch = BELT_PATCH_POSITION;
	bind(&c, l, 0, N * 4, BELT_TYPE_F32);
	bind(&c, s, 0, 16, BELT_TYPE_F32);
	pi(&c, N);
	pf(&c, 1.0f);
	pi(&c, 1);
	pi(&c, 0);
	pi(&c, 1);
	expect_short_logits(&c, N);

	V->buffer_destroy(vk, l);
	V->buffer_destroy(vk, s);
	V->buffer_destroy(vk, ids);
	vk_close();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sampler-vulkan");
	TCase *tk = tcase_create("kernels");
	tcase_set_timeout(tk, 0); /* no limit: CI bounds the run */
	tcase_add_test(tk, test_errors);
	tcase_add_test(tk, test_penalty);
	tcase_add_test(tk, test_threshold);
	tcase_add_loop_test(tk, test_chain_validated, 0, 4);
	tcase_add_loop_test(tk, test_chain_large, 0, 4);
	suite_add_tcase(s, tk);
	TCase *tc = tcase_create("chi-square");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tc, test_chi_square, 0, N_CHI_GPU);
	suite_add_tcase(s, tc);
	return s;
}

/* Whether BELT_VK_VALIDATION=fatal can create a context here (machines
 * without the layer run the same checks without it). */
static bool validation_available(void)
{
	setenv("BELT_VK_VALIDATION", "fatal", 1);
	struct belt_backend_options opt = {.n_threads = 1, .device = -1};
	void *probe = NULL;
	bool ok = V->create(&opt, &probe, err, sizeof err) == 0;
	if (ok)
		V->destroy(probe);
	else
		fprintf(stderr, "check_sampler_vulkan: no validation: %s\n", err);
	unsetenv("BELT_VK_VALIDATION");
	return ok;
}

int main(void)
{
	V = belt_backend_get("vulkan", err, sizeof err);
	if (!V) {
		fprintf(stderr, "check_sampler_vulkan: %s\n", err);
		return EXIT_FAILURE;
	}
	S = belt_sampler_get("gumbel", err, sizeof err);
	if (!S) {
		fprintf(stderr, "check_sampler_vulkan: %s\n", err);
		return EXIT_FAILURE;
	}
	validation = validation_available();
	make_logits_b();
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
