/* The batched pass against the one-token path, end to end through the
 * session API on the backend $BELT_TEST_BACKEND (default cpu), on every
 * shipped model: every row's logits from batched passes of several sizes,
 * prompts of 1 .. 65 tokens across micro-batch boundaries, and
 * verification passes over a chain and a tree of drafts. The token
 * sequences are the reference rows of ../shared/models/reference.tsv. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/backend.h"
#include "belt/belt.h"
#include "belt/plugin.h"
#include "ref.h"

#define SEQ_MAX 96

static const char *backend(void)
{
	const char *b = getenv("BELT_TEST_BACKEND");
	return b && *b ? b : "cpu";
}

/* Models and the largest logit difference allowed between a batched pass
 * and the one-token path. Batched products add in another order than the
 * matvecs: about 1e-5 in F32. With quantized weights both paths round x to
 * int8 per block of 32 (as ggml does), and a difference of 1e-7 upstream
 * can move one value across a rounding boundary: one step of a block's
 * scale, about 0.1 to 0.2 in the logits (measured: at most 0.19 on the
 * shipped Q8_0, Q4_0 and Q4_K_M files; with x in F32 both paths agree to
 * 1e-5). */
static const struct model {
	const char *file, *ref; /* the GGUF, its reference.tsv model name */
	double tol;
} models[] = {
	{"stories260K.f32.gguf", "stories260K", 1e-3},
	{"stories260K.f16.gguf", "stories260K", 1e-3},
	{"stories260K.ggml-org.gguf", "stories260K", 1e-3},
	{"aidreams260K.f32.gguf", "aidreams260K", 1e-3},
	{"aidreams260K.f16.gguf", "aidreams260K", 1e-3},
	/* every architecture's op (rope_ff, bias_add, rmsnorm_heads, row
	 * views, attention_ext's window in chains and trees, the MoE ops) */
	{"arch/llama3-rope.gguf", "stories260K", 1e-3},
	{"arch/qwen2.gguf", "stories260K", 1e-3},
	{"arch/phi3-same.gguf", "stories260K", 1e-3},
	{"arch/qwen3.gguf", "stories260K", 1e-3},
	{"arch/gemma2.gguf", "stories260K", 1e-3},
	{"arch/gemma3.gguf", "stories260K", 1e-3},
	{"arch/qwen3moe.gguf", "stories260K", 1e-3},
	{"pycoder29M.f16.gguf", "pycoder29M", 2e-2},
	{"pycoder29M.q8_0.gguf", "pycoder29M", 0.3},
	{"pycoder29M.q4_0.gguf", "pycoder29M", 0.3},
	{"pycoder29M.q4_k_m.gguf", "pycoder29M", 0.3},
};
#define N_MODELS (sizeof models / sizeof models[0])
#define N_SMALL 12 /* the models before pycoder29M */

/* The K/V cache types the passes are checked with (each path with its
 * own cache of the type) and what a type allows beyond the model's
 * tolerance, relative to the logits' scale (1 + the row's largest
 * |logit|): the two paths' k and v differ by about 1e-6 and can round to
 * neighbouring cache values, an F16 step (2^-11 relative) or a Q8_0 step
 * (a block's amax / 127). Measured 2026-11-26, stories260K, the arch
 * files and pycoder29M.f16: F16 at most 0.00143 (lavapipe) and 0.00127
 * (CPU) of the scale, Q8_0 0.0016 and 0.00089. F16 is the default and
 * checks every test; F32 and Q8_0 (models whose head_dim is a multiple
 * of 32) the rows of the models with float weights. */
static const struct kv_run {
	int type;
	double rel; /* of 1 + the row's largest |logit| */
} kv_runs[] = {{BELT_TYPE_F16, 5e-3}, {BELT_TYPE_F32, 0}, {BELT_TYPE_Q8_0, 1e-2}};
#define N_KV (sizeof kv_runs / sizeof kv_runs[0])

/* A loaded model, its token sequence and the one-token path's logits at
 * every position of it. */
struct fixture {
	struct belt_model *m;
	const struct kv_run *kv; /* the caches' type */
	int32_t n_vocab;
	int32_t seq[SEQ_MAX];
	size_t n_seq, n_prompt;
	float *ref; /* n_seq x n_vocab */
};

static struct belt_session *session(const struct fixture *f, uint32_t n_ubatch)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ubatch = n_ubatch;
	sp.type_k = sp.type_v = f->kv->type;
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(f->m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

/* Load a model; false (with a note) when the backend cannot run its
 * weight types at all, or when BELT_GOLDEN_ONLY (the files a machine
 * has, as for the golden suite) leaves it out. */
static bool setup(const struct model *md, const struct kv_run *kv, struct fixture *f)
{
	memset(f, 0, sizeof *f);
	f->kv = kv;
	const char *only = getenv("BELT_GOLDEN_ONLY");
	if (only && *only && !strstr(only, md->file)) {
		printf("batch %-26s not in BELT_GOLDEN_ONLY, not checked in this run\n", md->file);
		return false;
	}
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	char rel[256];
	snprintf(rel, sizeof rel, "models/%s", md->file);
	mp.path = shared_path(rel);
	mp.backend = backend();
	mp.n_threads = 2;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &f->m, err, sizeof err) == 0, "%s", err);
	struct belt_session *s;
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ubatch = 1;
	sp.type_k = sp.type_v = kv->type;
	if (belt_session_create(f->m, &sp, &s, err, sizeof err)) {
		bool blocks = kv->type == BELT_TYPE_Q8_0 && strstr(err, "a multiple of 32");
		ck_assert_msg(strstr(err, "no kernel for op") || blocks, "%s", err);
		printf("batch %-26s %s: %s (not checked: %s)\n", md->file, backend(), err,
		       blocks ? "a q8_0 cache needs head_dim a multiple of 32"
			      : "the backend lacks the type");
		belt_model_free(f->m);
		return false;
	}
	f->n_vocab = belt_model_n_vocab(f->m);
	/* the first reference row of the model: its prompt, then its
	 * greedy continuation */
	struct tsv *t = tsv_load(shared_path("models/reference.tsv"));
	ck_assert(t);
	for (size_t r = 0; r < t->n_rows && !f->n_seq; r++) {
		if (strcmp(tsv_get(t, r, "model"), md->ref))
			continue;
		size_t np, ng;
		int32_t *p = parse_ids(tsv_get(t, r, "prompt_ids"), &np);
		int32_t *g = parse_ids(tsv_get(t, r, "generated_ids"), &ng);
		if (np >= 2 && np + ng >= 72) {
			f->n_prompt = np;
			for (size_t i = 0; i < np + ng && f->n_seq < SEQ_MAX; i++)
				f->seq[f->n_seq++] = i < np ? p[i] : g[i - np];
		}
		free(p);
		free(g);
	}
	tsv_free(t);
	ck_assert_msg(f->n_seq >= 72, "%s: no reference row of 72 tokens", md->file);
	f->ref = malloc(f->n_seq * (size_t)f->n_vocab * sizeof *f->ref);
	ck_assert(f->ref);
	ck_assert_msg(belt_session_eval_all(s, f->seq, f->n_seq, 0, f->ref, err, sizeof err) == 0,
		      "%s", err);
	belt_session_free(s);
	return true;
}

static void teardown(struct fixture *f)
{
	free(f->ref);
	belt_model_free(f->m);
}

/* The tolerance of a row whose one-token logits are ref: the model's, or
 * with a lossy cache what its type allows for logits of ref's scale. */
static double logit_scale(const struct fixture *f, const float *ref)
{
	double big = 0;
	for (int32_t i = 0; i < f->n_vocab; i++)
		big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
	return 1 + big;
}

/* Whether the backend's batched products round x to float16: Vulkan on
 * a default device with matrix units (doc/vulkan.md), unless
 * BELT_VK_COOPMAT is 0. Such passes differ from the one-token path by
 * up to 5.9e-4 of the scale (H100, 2026-11-26, stories260K.f16 with an
 * F32 cache, against 1e-6 without matrix units), so rows there get
 * MATRIX_UNITS_REL of it whatever the cache, as the products do in
 * check_backend_vulkan. */
#define MATRIX_UNITS_REL 1e-3
static bool matrix_units(void)
{
	static int known = -1;
	if (known < 0) {
		const char *e = getenv("BELT_VK_COOPMAT");
		char err[BELT_ERR_SIZE], buf[8192];
		const struct belt_backend_ops *be =
			strcmp(backend(), "vulkan") ? NULL : belt_backend_get("vulkan", err, sizeof err);
		known = 0;
		if (be && be->list_devices && !(e && !strcmp(e, "0")) &&
		    be->list_devices(buf, sizeof buf, err, sizeof err) > 0)
			for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
				if (strstr(line, "(default)"))
					known = strstr(line, "cooperative matrices") != NULL;
	}
	return known;
}

static double row_tol(const struct model *md, const struct fixture *f, const float *ref)
{
	double rel = f->kv->rel;
	if (rel < MATRIX_UNITS_REL && matrix_units())
		rel = MATRIX_UNITS_REL;
	double t = rel * logit_scale(f, ref);
	return t > md->tol ? t : md->tol;
}

/* Largest |a - b| over n floats. */
static double max_diff(const float *a, const float *b, size_t n)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - (double)b[i]);
		if (d > worst || d != d)
			worst = d != d ? INFINITY : d;
	}
	return worst;
}

static int32_t argmax(const float *x, int32_t n)
{
	int32_t best = 0;
	for (int32_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* Every row's logits from batched passes of n_ubatch rows. */
static void check_rows(const struct model *md, struct fixture *f, const uint32_t *ubatch,
		       size_t n_ub)
{
	size_t V = (size_t)f->n_vocab;
	float *got = malloc(f->n_seq * V * sizeof *got);
	ck_assert(got);
	double worst = 0, wrel = 0, wtol = 0;
	for (size_t u = 0; u < n_ub; u++) {
		struct belt_session *s = session(f, ubatch[u]);
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_session_eval_all(s, f->seq, f->n_seq, 0, got, err, sizeof err) == 0,
			      "%s", err);
		for (size_t p = 0; p < f->n_seq; p++) {
			double d = max_diff(got + p * V, f->ref + p * V, V);
			double tol = row_tol(md, f, f->ref + p * V);
			ck_assert_msg(d <= tol,
				      "%s on %s, kv %s, -ub %u: logits at position %zu differ by %g (tolerance %g)",
				      md->file, backend(), belt_type_name(f->kv->type), ubatch[u], p, d,
				      tol);
			worst = d > worst ? d : worst;
			double rel = d / logit_scale(f, f->ref + p * V);
			wrel = rel > wrel ? rel : wrel;
			wtol = tol > wtol ? tol : wtol;
		}
		belt_session_free(s);
	}
	printf("batch %-26s %s kv %s: %zu positions' logits in passes of", md->file, backend(),
	       belt_type_name(f->kv->type), f->n_seq);
	for (size_t u = 0; u < n_ub; u++)
		printf(" %u", ubatch[u]);
	printf(" rows: max |difference| %.3g (tolerance up to %g; relative to 1 + the largest |logit| %.3g)\n",
	       worst, wtol, wrel);
	free(got);
}

/* Prompts of 1 .. 65 tokens, prefilled in passes of 16 rows (boundaries
 * at 16, 32, 48, 64): the last position's logits and the first new token. */
static void check_prompts(const struct model *md, struct fixture *f)
{
	size_t V = (size_t)f->n_vocab;
	float *got = malloc(V * sizeof *got);
	ck_assert(got);
	struct belt_session *s = session(f, 16);
	double worst = 0;
	for (size_t n = 1; n <= 65; n++) {
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_session_eval(s, f->seq, n, 0, got, err, sizeof err) == 0, "%s", err);
		double d = max_diff(got, f->ref + (n - 1) * V, V);
		ck_assert_msg(d <= row_tol(md, f, f->ref + (n - 1) * V),
			      "%s on %s: a prompt of %zu tokens: logits differ by %g", md->file, backend(),
			      n, d);
		worst = d > worst ? d : worst;
		int32_t next;
		ck_assert_msg(belt_session_tokens(s, (uint32_t)n, 1, &next, err, sizeof err) == 0, "%s",
			      err);
		ck_assert_int_eq(next, argmax(got, f->n_vocab));
	}
	printf("batch %-26s %s: prompts of 1 .. 65 tokens in passes of 16 rows: max |difference| %.3g\n",
	       md->file, backend(), worst);
	belt_session_free(s);
	free(got);
}

/* Whether id is the argmax of row x, or ties it within tol. */
static bool is_argmax(const float *x, int32_t n, int32_t id, double tol)
{
	return id >= 0 && id < n && x[id] >= x[argmax(x, n)] - tol;
}

/* Drafts after the prompt verified in one pass: a chain of the sequence's
 * next tokens, then a tree. */
static void check_verify(const struct model *md, struct fixture *f)
{
	size_t V = (size_t)f->n_vocab;
	uint32_t P = (uint32_t)f->n_prompt;
	char err[BELT_ERR_SIZE];
	struct belt_session *s = session(f, 64);
	/* a chain of 12 drafts: row r predicts what follows seq[P + r] */
	enum { K = 12 };
	int32_t out[K], ids[K + 1], marker = f->seq[0];
	ck_assert_msg(belt_session_eval(s, f->seq, P, 0, NULL, err, sizeof err) == 0, "%s", err);
	/* slot P + K is not a draft: the pass must leave it as it is */
	ck_assert_msg(belt_session_eval(s, &marker, 1, P + K, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(belt_session_eval(s, f->seq, P, 0, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(belt_session_verify(s, f->seq + P, NULL, K, P, out, err, sizeof err) == 0,
		      "%s", err);
	for (int r = 0; r < K; r++)
		ck_assert_msg(is_argmax(f->ref + (P + r) * V, f->n_vocab, out[r],
					row_tol(md, f, f->ref + (P + r) * V)),
			      "%s on %s: chain row %d: %d is not the argmax %d", md->file, backend(),
			      r, out[r], argmax(f->ref + (P + r) * V, f->n_vocab));
	ck_assert_msg(belt_session_tokens(s, P, K + 1, ids, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(!memcmp(ids, f->seq + P, K * sizeof *ids), "%s: the drafts were overwritten",
		      md->file);
	ck_assert_int_eq(ids[K], marker);

	/* a tree: two children of the first draft, two of one of them */
	static const int32_t parent[] = {-1, 0, 0, 1, 1, 2, 5};
	enum { T = sizeof parent / sizeof parent[0] };
	int32_t tok[T];
	for (int r = 0; r < T; r++)
		tok[r] = f->seq[P + 1 + (size_t)(r * 5) % 40];
	int32_t tout[T];
	ck_assert_msg(belt_session_eval(s, f->seq, P, 0, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(belt_session_verify(s, tok, parent, T, P, tout, err, sizeof err) == 0, "%s",
		      err);
	belt_session_free(s);
	/* each node against one-token decoding of its path */
	struct belt_session *one = session(f, 1);
	float *lg = malloc(V * sizeof *lg);
	ck_assert(lg);
	ck_assert_msg(belt_session_eval(one, f->seq, P, 0, NULL, err, sizeof err) == 0, "%s", err);
	for (int r = 0; r < T; r++) {
		int32_t path[T];
		int depth = 0;
		for (int32_t a = r; a >= 0; a = parent[a])
			depth++;
		int i = depth;
		for (int32_t a = r; a >= 0; a = parent[a])
			path[--i] = tok[a];
		for (int d = 0; d < depth; d++)
			ck_assert_msg(belt_session_eval(one, &path[d], 1, P + (uint32_t)d, lg, err,
							sizeof err) == 0, "%s", err);
		ck_assert_msg(is_argmax(lg, f->n_vocab, tout[r], row_tol(md, f, lg)),
			      "%s on %s: tree node %d (depth %d): %d is not the argmax %d", md->file,
			      backend(), r, depth - 1, tout[r], argmax(lg, f->n_vocab));
	}
	free(lg);
	belt_session_free(one);
	printf("batch %-26s %s: verification of a chain of %d and a tree of %d drafts matches one-token decoding\n",
	       md->file, backend(), K, T);
}

static bool quantized(const struct model *md)
{
	return strstr(md->file, "q8_0") || strstr(md->file, "q4_0") || strstr(md->file, "q4_k");
}

static bool small(const struct model *md)
{
	return !strstr(md->file, "pycoder");
}

/* Model _i % N_MODELS with the cache type kv_runs[_i / N_MODELS]; the
 * types beyond the default on the models with float weights only (a
 * cache's rounding does not depend on the weights' type, and pycoder29M's
 * quantized files are the longest runs on lavapipe). */
START_TEST(rows)
{
	const struct model *md = &models[_i % N_MODELS];
	if (_i >= (int)N_MODELS && quantized(md))
		return;
	struct fixture f;
	if (!setup(md, &kv_runs[_i / N_MODELS], &f))
		return;
	static const uint32_t all[] = {2, 3, 7, 16, 64, 65};
	static const uint32_t few[] = {7, 64};
	if (small(md) || !strcmp(backend(), "cpu"))
		check_rows(md, &f, all, sizeof all / sizeof all[0]);
	else
		check_rows(md, &f, few, sizeof few / sizeof few[0]);
	teardown(&f);
}
END_TEST

START_TEST(prompts)
{
	const struct model *md = &models[_i];
	struct fixture f;
	if (!setup(md, &kv_runs[0], &f))
		return;
	check_prompts(md, &f);
	teardown(&f);
}
END_TEST

START_TEST(verify)
{
	const struct model *md = &models[_i];
	struct fixture f;
	if (!setup(md, &kv_runs[0], &f))
		return;
	check_verify(md, &f);
	teardown(&f);
}
END_TEST

/* Every row count 1 .. 65 of a pass, on the smallest model. */
START_TEST(row_counts)
{
	struct fixture f;
	if (!setup(&models[0], &kv_runs[0], &f))
		return;
	uint32_t ub[65];
	for (uint32_t i = 0; i < 65; i++)
		ub[i] = i + 1;
	check_rows(&models[0], &f, ub, 65);
	teardown(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batch");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	/* BELT_BATCH_LIGHT: the rows (with the default cache) and
	 * verification only (under valgrind) */
	bool light = getenv("BELT_BATCH_LIGHT") != NULL;
	tcase_add_loop_test(tc, rows, 0, (int)(light ? N_MODELS : N_MODELS * N_KV));
	if (light) {
		tcase_add_loop_test(tc, verify, 0, N_MODELS);
		suite_add_tcase(s, tc);
		return s;
	}
	tcase_add_test(tc, row_counts);
	/* the prompt sweep and the verification on the small models, and
	 * on the CPU on every model */
	bool cpu = !strcmp(backend(), "cpu");
	tcase_add_loop_test(tc, prompts, 0, cpu ? N_MODELS : N_SMALL);
	tcase_add_loop_test(tc, verify, 0, cpu ? N_MODELS : N_SMALL);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
