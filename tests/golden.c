/* End-to-end golden tests: greedy generation and logits against outputs
 * recorded with independent implementations (llama2.c run.c, llama.cpp),
 * read from $BELT_SHARED_DIR/models at run time (see REFERENCE.md there). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "ref.h"

/* BELT_GOLDEN_ONLY=a.gguf,b.gguf limits a run to the files a machine has
 * (the GPU machine gets only what fits its transfer limit); unset, every
 * file is checked. */
static bool selected(const char *file)
{
	const char *only = getenv("BELT_GOLDEN_ONLY");
	if (!only || strstr(only, file))
		return true;
	printf("golden: %s not in BELT_GOLDEN_ONLY, not checked in this run\n", file);
	return false;
}

/* BELT_GOLDEN_SHORT=a.gguf,b.gguf: for these files (the biggest model, in
 * software Vulkan) check each prompt once, over its first SHORT_TOKENS
 * generated tokens: every kernel and shape still runs, without replaying
 * the long rows, which the CPU run and the GPU machine check in full. */
#define SHORT_TOKENS 24
static bool short_rows(const char *file)
{
	const char *s = getenv("BELT_GOLDEN_SHORT");
	return s && strstr(s, file);
}

/* A session with K and V caches of type kv (the default, F16, for the
 * run.c and llama.cpp greedy rows, which hold with it; F32 for logits
 * against references computed with F32 caches). */
static struct belt_session *session(struct belt_model *m, uint32_t chunk, int kv)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.chunk = chunk;
	sp.type_k = sp.type_v = kv;
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

struct collect {
	int32_t ids[1024];
	size_t end[1024]; /* where each token's text ends in text */
	size_t n;
	char text[8192];
	size_t len;
};

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	struct collect *c = ud;
	if (id >= 0 && c->n < 1024)
		c->ids[c->n++] = id;
	if (c->len + len < sizeof c->text) {
		memcpy(c->text + c->len, text, len);
		c->len += len;
		c->text[c->len] = 0;
	}
	if (id >= 0 && c->n <= 1024)
		c->end[c->n - 1] = c->len;
	return true;
}

static void generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
		     uint32_t n_predict, bool stop_at_eog, struct collect *c)
{
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = n_predict;
	gp.stop_at_eog = stop_at_eog;
	memset(c, 0, sizeof *c);
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_generate(s, prompt, n_prompt, &gp, collect, c, err, sizeof err) == 0,
		      "%s", err);
}

/* A near-tie: llama.cpp's own batched and one-token paths differ by up to
 * 0.13 (Q4_0) and 0.41 (Q4_K, Q6_K) in a logit on the 8-bit activation
 * types (../shared/models/quant/README.md), so where our top two logits
 * are closer than that either token is llama.cpp's choice on some path;
 * 0.1 is inside the smaller of them. */
#define NEAR_TIE 0.1

/* Our top-1 minus top-2 logit before generated token d of c (the prompt
 * and c's first d tokens evaluated afresh). */
static double margin_at(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
			const struct collect *c, size_t d, int32_t n_vocab)
{
	int32_t *ids = malloc((n_prompt + d) * sizeof *ids);
	float *lg = malloc((size_t)n_vocab * sizeof *lg);
	ck_assert(ids && lg);
	memcpy(ids, prompt, n_prompt * sizeof *ids);
	memcpy(ids + n_prompt, c->ids, d * sizeof *ids);
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_eval(s, ids, n_prompt + d, 0, lg, err, sizeof err) == 0, "%s",
		      err);
	float t1 = -INFINITY, t2 = -INFINITY;
	for (int32_t v = 0; v < n_vocab; v++)
		if (lg[v] > t1) {
			t2 = t1;
			t1 = lg[v];
		} else if (lg[v] > t2) {
			t2 = lg[v];
		}
	free(ids);
	free(lg);
	return (double)t1 - t2;
}

/* A Q8_0 K/V cache rounds each cached value to within 0.57 of a step of
 * its block (amax / 127), which moves a logit by more than the margins
 * run.c's stable prefixes allow for (0.01): a greedy row under it may
 * leave run.c's where our own top two logits are closer than this. On
 * pycoder29M (2026-11-26) 3 of 16 rows leave early, at margins 0.0085,
 * 0.0085 and 0.023; llama.cpp's perplexity text scores 8.5899 with it
 * against 8.5898 with F32 or F16 caches (llama.cpp: 8.5898). */
#define Q8_KV_TIE 0.05

/* Generate every reference.tsv row of `model` with `file` and compare the
 * ids over at least each row's stable prefix. */
static void check_reference(const char *model, const char *file, uint32_t chunk, int kv)
{
	if (!selected(file))
		return;
	struct tsv *t = tsv_load(shared_path("models/reference.tsv"));
	ck_assert(t);
	struct belt_model *m = ref_load_model(file);
	struct belt_session *s = session(m, chunk, kv);
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	unsigned rows = 0, full = 0;
	bool shortened = short_rows(file);
	for (size_t r = 0; r < t->n_rows; r++) {
		if (strcmp(tsv_get(t, r, "model"), model))
			continue;
		/* the same prompt's longer row repeats the shorter's start */
		bool seen = false;
		for (size_t e = 0; shortened && e < r && !seen; e++)
			seen = !strcmp(tsv_get(t, e, "model"), model) &&
			       !strcmp(tsv_get(t, e, "prompt"), tsv_get(t, r, "prompt"));
		if (seen)
			continue;
		size_t n_prompt, n_gen, n_ours;
		int32_t *prompt = parse_ids(tsv_get(t, r, "prompt_ids"), &n_prompt);
		int32_t *gen = parse_ids(tsv_get(t, r, "generated_ids"), &n_gen);
		const char *text = tsv_get(t, r, "prompt");
		int32_t ours[1024];
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_tok_encode(tok, text, strlen(text), true, ours, 1024, &n_ours,
					      err, sizeof err) == 0, "%s", err);
		ck_assert_msg(n_ours == n_prompt && !memcmp(ours, prompt, n_prompt * 4),
			      "%s: prompt '%s' tokenizes differently", file, text);
		size_t stable = (size_t)atol(tsv_get(t, r, "stable_prefix"));
		if (shortened && n_gen > SHORT_TOKENS)
			n_gen = SHORT_TOKENS;
		if (n_gen > 0) {
			struct collect c;
			generate(s, prompt, n_prompt, (uint32_t)n_gen, false, &c);
			ck_assert_uint_eq(c.n, n_gen);
			size_t same = 0;
			while (same < n_gen && c.ids[same] == gen[same])
				same++;
			/* a Q8_0 cache moves logits by more than the reference's
			 * margins: a row may leave it early at a near-tie of ours */
			double mg = -1;
			if (kv == BELT_TYPE_Q8_0 && same < stable && same < n_gen) {
				mg = margin_at(s, prompt, n_prompt, &c, same, belt_model_n_vocab(m));
				printf("golden %s kv q8_0: prompt %zu leaves the reference at generated token %zu of a stable prefix of %zu, at our margin %.4f\n",
				       file, r, same, stable, mg);
			}
			ck_assert_msg(same >= (stable < n_gen ? stable : n_gen) || (mg >= 0 && mg < Q8_KV_TIE),
				      "%s: prompt '%s' -n %s: ids differ at generated token %zu (ours %d, reference %d), stable prefix %zu",
				      file, text, tsv_get(t, r, "n_steps"), same, c.ids[same], gen[same], stable);
			full += same == n_gen;
		} else
			full++;
		rows++;
		free(prompt);
		free(gen);
	}
	ck_assert_uint_gt(rows, 0);
	printf("golden %-28s %s kv %s chunk %2u: %u/%u rows identical to the reference over their whole length%s\n",
	       file, getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu",
	       belt_type_name(kv), chunk, full, rows,
	       shortened ? " (BELT_GOLDEN_SHORT: first " "24" " tokens, one row per prompt)" : "");
	belt_session_free(s);
	belt_model_free(m);
	tsv_free(t);
}

START_TEST(stories_f32) { check_reference("stories260K", "stories260K.f32.gguf", 16, BELT_TYPE_F16); }
END_TEST
START_TEST(stories_f16) { check_reference("stories260K", "stories260K.f16.gguf", 16, BELT_TYPE_F16); }
END_TEST
START_TEST(stories_ggml_org) { check_reference("stories260K", "stories260K.ggml-org.gguf", 7, BELT_TYPE_F16); }
END_TEST
START_TEST(aidreams_f32) { check_reference("aidreams260K", "aidreams260K.f32.gguf", 1, BELT_TYPE_F16); }
END_TEST
START_TEST(aidreams_f16) { check_reference("aidreams260K", "aidreams260K.f16.gguf", 16, BELT_TYPE_F16); }
END_TEST
START_TEST(pycoder_f16) { check_reference("pycoder29M", "pycoder29M.f16.gguf", 16, BELT_TYPE_F16); }
END_TEST

/* stories260K re-emitted as Qwen2 (NEOX-reordered q/k, zero biases, tied
 * output) and as Phi-3 (fused qkv and gate+up): the same function, so
 * run.c's stories260K rows (models/arch/README.md) */
START_TEST(pycoder_kv_q8_0) { check_reference("pycoder29M", "pycoder29M.f16.gguf", 16, BELT_TYPE_Q8_0); }
END_TEST
START_TEST(same_qwen2) { check_reference("stories260K", "arch/qwen2-same.gguf", 16, BELT_TYPE_F16); }
END_TEST

START_TEST(same_phi3) { check_reference("stories260K", "arch/phi3-same.gguf", 16, BELT_TYPE_F16); }
END_TEST

/* Read the next number after *p in a JSON text. */
static double next_number(const char **p)
{
	while (**p && !strchr("-0123456789", **p))
		(*p)++;
	char *end;
	double v = strtod(*p, &end);
	*p = end;
	return v;
}

/* Logits at each of 16 positions against run.c's F32 ones
 * (reference_logits.jsonl), with K/V caches of type kv. */
static void check_logits(const char *file, const char *model, int kv, double tol)
{
	if (!selected(file))
		return;
	FILE *fp = fopen(shared_path("models/reference_logits.jsonl"), "rb");
	ck_assert(fp);
	struct belt_model *m = ref_load_model(file);
	struct belt_session *s = session(m, 16, kv);
	int32_t n_vocab = belt_model_n_vocab(m);
	float *logits = malloc((size_t)n_vocab * sizeof *logits);
	char *line = NULL;
	size_t cap = 0;
	double worst = 0;
	unsigned seqs = 0;
	while (getline(&line, &cap, fp) > 0) {
		char key[64];
		snprintf(key, sizeof key, "\"model\": \"%s\"", model);
		if (!strstr(line, key))
			continue;
		const char *p = strstr(line, "\"ids\"");
		const char *lp = strstr(line, "\"logits\"");
		ck_assert(p && lp);
		int32_t ids[64];
		int n = 0;
		while (p < lp && n < 64) {
			const char *q = p;
			double v = next_number(&q);
			if (q >= lp)
				break;
			ids[n++] = (int32_t)v;
			p = q;
		}
		for (int pos = 0; pos < n; pos++) {
			char err[BELT_ERR_SIZE];
			ck_assert_msg(belt_session_eval(s, &ids[pos], 1, (uint32_t)pos, logits, err,
							sizeof err) == 0, "%s", err);
			for (int32_t v = 0; v < n_vocab; v++) {
				double d = fabs(next_number(&lp) - logits[v]);
				if (d > worst)
					worst = d;
				ck_assert_msg(d <= tol, "%s: logit %d at position %d off by %g (tolerance %g)",
					      file, v, pos, d, tol);
			}
		}
		seqs++;
	}
	ck_assert_uint_eq(seqs, 2);
	printf("logits %-28s kv %s max |difference| %.3g over 2 x 16 positions (tolerance %g)\n",
	       file, belt_type_name(kv), worst, tol);
	free(line);
	fclose(fp);
	free(logits);
	belt_session_free(s);
	belt_model_free(m);
}

START_TEST(logits_stories_f32) { check_logits("stories260K.f32.gguf", "stories260K", BELT_TYPE_F32, 1e-4); }
END_TEST
START_TEST(logits_stories_ggml_org) { check_logits("stories260K.ggml-org.gguf", "stories260K", BELT_TYPE_F32, 1e-4); }
END_TEST
START_TEST(logits_aidreams_f32) { check_logits("aidreams260K.f32.gguf", "aidreams260K", BELT_TYPE_F32, 1e-4); }
END_TEST
/* F16 caches (the default): run.c's F32 logits within the tolerance
 * REFERENCE.md gives F16 weights (measured 2026-11-26: 0.0127 on
 * stories260K, 0.0019 on aidreams260K; F16 weights 0.0113). Q8_0 caches
 * need head_dim a multiple of 32, which these models' 8 and 16 are not. */
START_TEST(logits_stories_kv_f16) { check_logits("stories260K.f32.gguf", "stories260K", BELT_TYPE_F16, 0.05); }
END_TEST
START_TEST(logits_aidreams_kv_f16) { check_logits("aidreams260K.f32.gguf", "aidreams260K", BELT_TYPE_F16, 0.05); }
END_TEST
START_TEST(logits_stories_f16) { check_logits("stories260K.f16.gguf", "stories260K", BELT_TYPE_F32, 0.05); }
END_TEST

/* llama.cpp's greedy text for a file: our first `n` tokens' text must be a
 * prefix of it on at least `need` of its prompts, a prompt whose text
 * leaves llama.cpp's at a token we chose by less than NEAR_TIE counting as
 * agreeing (a soft reference: REFERENCE.md). */
static void check_llamacpp(const char *file, uint32_t n, unsigned need, int kv)
{
	if (!selected(file))
		return;
	struct tsv *t = tsv_load(shared_path("models/reference_llamacpp.tsv"));
	ck_assert(t);
	struct belt_model *m = ref_load_model(file);
	struct belt_session *s = session(m, 16, kv);
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	unsigned rows = 0, same = 0, ties = 0;
	if (short_rows(file) && n > SHORT_TOKENS)
		n = SHORT_TOKENS;
	for (size_t r = 0; r < t->n_rows; r++) {
		if (strcmp(tsv_get(t, r, "file"), file))
			continue;
		const char *prompt = tsv_get(t, r, "prompt"), *ref = tsv_get(t, r, "text");
		int32_t ids[512];
		size_t n_ids;
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_tok_encode(tok, prompt, strlen(prompt), true, ids, 512, &n_ids, err,
					      sizeof err) == 0, "%s", err);
		struct collect c;
		generate(s, ids, n_ids, n, true, &c);
		bool ok = !strncmp(c.text, ref, c.len);
		if (!ok) {
			size_t common = 0, d = 0;
			while (c.text[common] == ref[common])
				common++;
			while (d < c.n && c.end[d] <= common)
				d++;
			double mg = margin_at(s, ids, n_ids, &c, d, belt_model_n_vocab(m));
			printf("llama.cpp differs on %s prompt %zu at our token %zu (margin %.3f%s):\n"
			       "  ours: %s\n  llama.cpp: %.*s\n",
			       file, r, d, mg, mg < NEAR_TIE ? ", a near-tie" : "", c.text, (int)c.len,
			       ref);
			ties += mg < NEAR_TIE;
		}
		same += ok;
		rows++;
	}
	printf("llama.cpp %-28s kv %s first %u tokens identical on %u of %u prompts, left at a "
	       "near-tie on %u\n",
	       file, belt_type_name(kv), n, same, rows, ties);
	same += ties;
	ck_assert_uint_eq(rows, 7);
	ck_assert_uint_ge(same, need);
	belt_session_free(s);
	belt_model_free(m);
	tsv_free(t);
}

START_TEST(llamacpp_q8_0) { check_llamacpp("pycoder29M.q8_0.gguf", 16, 6, BELT_TYPE_F16); }
END_TEST
START_TEST(llamacpp_f16) { check_llamacpp("pycoder29M.f16.gguf", 64, 7, BELT_TYPE_F16); }
END_TEST
/* Q4_0 with a Q6_K token embedding, and Q4_K_M (Q4_K and Q6_K): both
 * backends run every tensor type of these files. A soft reference for
 * quantized files (../shared/models/REFERENCE.md): rounding activations
 * to int8 flips a near-tie; Q4_0 leaves llama.cpp's text on one prompt of
 * seven within 16 tokens, as Q8_0 may. */
/* llama.cpp ran with its default F16 cache: with a Q8_0 one our text
 * leaves its on one prompt of seven, at a near-tie (0.009) */
START_TEST(llamacpp_f16_kv_q8_0) { check_llamacpp("pycoder29M.f16.gguf", 64, 7, BELT_TYPE_Q8_0); }
END_TEST
START_TEST(llamacpp_q4_0) { check_llamacpp("pycoder29M.q4_0.gguf", 16, 6, BELT_TYPE_F16); }
END_TEST
START_TEST(llamacpp_q4_k_m) { check_llamacpp("pycoder29M.q4_k_m.gguf", 16, 7, BELT_TYPE_F16); }
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("golden");
	TCase *gen = tcase_create("generation");
	tcase_set_timeout(gen, 0); /* no limit: CI bounds the run */
	tcase_add_test(gen, stories_f32);
	tcase_add_test(gen, stories_f16);
	tcase_add_test(gen, stories_ggml_org);
	tcase_add_test(gen, aidreams_f32);
	tcase_add_test(gen, aidreams_f16);
	tcase_add_test(gen, pycoder_f16);
	tcase_add_test(gen, pycoder_kv_q8_0);
	tcase_add_test(gen, same_qwen2);
	tcase_add_test(gen, same_phi3);
	suite_add_tcase(s, gen);
	TCase *lg = tcase_create("logits");
	tcase_set_timeout(lg, 0); /* no limit: CI bounds the run */
	tcase_add_test(lg, logits_stories_f32);
	tcase_add_test(lg, logits_stories_ggml_org);
	tcase_add_test(lg, logits_aidreams_f32);
	tcase_add_test(lg, logits_stories_f16);
	tcase_add_test(lg, logits_stories_kv_f16);
	tcase_add_test(lg, logits_aidreams_kv_f16);
	suite_add_tcase(s, lg);
	TCase *lc = tcase_create("llamacpp");
	tcase_set_timeout(lc, 0); /* no limit: CI bounds the run */
	tcase_add_test(lc, llamacpp_q8_0);
	tcase_add_test(lc, llamacpp_f16);
	tcase_add_test(lc, llamacpp_f16_kv_q8_0);
	tcase_add_test(lc, llamacpp_q4_0);
	tcase_add_test(lc, llamacpp_q4_k_m);
	suite_add_tcase(s, lc);
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
