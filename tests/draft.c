/* Speculative decoding end to end (doc/drafting.md): with a drafter, greedy
 * generation gives exactly the ids it gives without one, for every shipped
 * model and every reference prompt in $BELT_SHARED_DIR/models; sampled
 * generation gives the same draws for a seed, and over many seeds the
 * same distribution (a two-sample chi-square test on seeds that differ).
 * Exactly on the CPU backend; on others, whose verification rows differ
 * from decode's in the last bits, a run may leave the plain one at a
 * near-tie of the plain run's logits (asserted), and the sampled draws
 * are asserted to repeat and to follow the same distribution.
 * Two drafters: "ngram" set to draft at every chance (n-grams of one
 * token), and the test plugin "test" (tests/plugins/draft-test.c), whose
 * proposals (the last token repeated) mostly fail, so both the accepting
 * and the rejecting paths run. BELT_TEST_BACKEND picks the backend;
 * BELT_DRAFT_TOKENS caps the tokens per prompt (software Vulkan);
 * BELT_GOLDEN_ONLY limits the files, as for check_golden. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "belt/belt.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"
#include "belt/sampler.h"
#include "belt/types.h"
#include "ngram.h"
#include "ref.h"

#define MAX_TOKENS 512

/* Passes of 32 rows at most: room for any proposal (8 drafts by default),
 * and in software Vulkan a pass costs what its table's rows cost. */
static struct belt_session *session(struct belt_model *m, uint32_t n_ctx)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = n_ctx;
	sp.n_ubatch = 32;
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

struct ids {
	int32_t id[MAX_TOKENS];
	size_t n;
};

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct ids *c = ud;
	if (id >= 0 && c->n < MAX_TOKENS)
		c->id[c->n++] = id;
	return true;
}

/* Generate n tokens (no stop at end-of-generation) with drafter d (NULL:
 * none), sampled with sp (NULL: greedy). */
static void generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt, uint32_t n,
		     struct belt_drafter *d, const struct belt_sampling *sp, struct ids *out)
{
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = n;
	gp.stop_at_eog = false;
	gp.drafter = d;
	gp.draft_unpaced = true; /* every proposal checked, however slow */
	gp.sampling = sp;
	memset(out, 0, sizeof *out);
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_generate(s, prompt, n_prompt, &gp, collect, out, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_uint_eq(out->n, n);
}

static struct belt_drafter *drafter(struct belt_model *m, const char *name, const char *options)
{
	struct belt_drafter *d;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_drafter_new(m, name, options, &d, err, sizeof err) == 0, "%s", err);
	return d;
}

/* A new empty file in $TMPDIR (else /tmp), its name prefix and six
 * characters mkstemp picks (the XXXXXX of its template): path. */
static void temp_file(const char *prefix, char *path, size_t pathsz)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, pathsz, "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", prefix);
	int fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "%s: cannot create it", path);
	close(fd);
}

/* A side file of Medusa heads for m (plugins/draft-medusa): the trained
 * heads committed for pycoder29M, else 3 heads of small random weights
 * written to a temporary file (their drafts mostly fail, but are trees
 * of the tap's candidates all the same). *tmp says which. */
static void medusa_file(struct belt_model *m, const char *model, char *path, size_t pathsz,
			bool *tmp)
{
	*tmp = false;
	snprintf(path, pathsz, "%s/../tools/medusa/%s.medusa.gguf", BELT_TEST_SRCDIR, model);
	FILE *f = fopen(path, "rb");
	if (f) {
		fclose(f);
		return;
	}
	double e = 0;
	ck_assert(belt_model_hparam(m, "n_embd", &e));
	int64_t n = (int64_t)e;
	temp_file("belt-medusa", path, pathsz);
	*tmp = true;
	uint16_t *w = malloc((size_t)(n * n) * sizeof *w);
	float *b = calloc((size_t)n, sizeof *b);
	struct belt_gguf_writer *g = belt_gguf_writer_new();
	ck_assert(w && b && g);
	uint64_t x = 88172645463325252ull;
	for (int64_t i = 0; i < n * n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		w[i] = belt_f32_to_fp16(((float)(x >> 40) / 16777216.0f - 0.5f) * 0.2f);
	}
	ck_assert(!belt_gguf_writer_str(g, "general.architecture", "medusa") &&
		  !belt_gguf_writer_u32(g, "medusa.head_count", 3) &&
		  !belt_gguf_writer_u32(g, "medusa.embedding_length", (uint32_t)n));
	for (int k = 0; k < 3; k++) {
		char wn[32], bn[32];
		snprintf(wn, sizeof wn, "medusa.%d.weight", k);
		snprintf(bn, sizeof bn, "medusa.%d.bias", k);
		const int64_t wne[2] = {n, n}, bne[1] = {n};
		ck_assert(!belt_gguf_writer_tensor(g, wn, BELT_TYPE_F16, 2, wne, w) &&
			  !belt_gguf_writer_tensor(g, bn, BELT_TYPE_F32, 1, bne, b));
	}
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_gguf_writer_write(g, path, err, sizeof err) == 0, "%s", err);
	belt_gguf_writer_free(g);
	free(w);
	free(b);
}

static uint32_t cap(uint32_t n)
{
	const char *c = getenv("BELT_DRAFT_TOKENS");
	return c && (uint32_t)atoi(c) > 0 && (uint32_t)atoi(c) < n ? (uint32_t)atoi(c) : n;
}

/* Totals over a file's prompts, to show the drafts were exercised. */
struct tally {
	unsigned prompts, identical;
	uint64_t verify, drafted, accepted, moved;
};

/* The CPU backend verifies with decode's own kernels per row, bit for bit
 * (doc/cpu.md); other backends' verification passes are their batched
 * tables, whose sums differ from the one-token table's in the last bits. */
static bool exact_backend(void)
{
	const char *b = getenv("BELT_TEST_BACKEND");
	return !b || !strcmp(b, "cpu");
}

/* Where a backend's rows may differ from decode's, a drafted run may
 * leave the plain one only where the plain run's top two logits are
 * closer than the difference such rows make: last bits of float sums
 * (check_golden's NEAR_TIE, 0.1), and for quantized weights x rounded to
 * int8 in other places (after the norm instead of fused into it): the
 * bounds llama.cpp's own batched and one-token paths show, 0.13 for Q4_0
 * (taken for Q8_0 too, which llama.cpp computes alike both ways) and
 * 0.41 for the K-quants (../shared/models/quant/README.md). */
static double near_tie(const char *file)
{
	if (strstr(file, "q4_k") || strstr(file, "q5_k") || strstr(file, "q6_k"))
		return 0.41;
	if (strstr(file, "q4_0") || strstr(file, "q8_0"))
		return 0.13;
	return 0.1;
}

/* The top-1 minus top-2 logit after prompt and ids[0..d). */
static double margin_at(struct belt_model *m, struct belt_session *s, const int32_t *prompt,
			size_t n_prompt, const int32_t *ids, size_t d)
{
	int32_t nv = belt_model_n_vocab(m);
	int32_t *all = malloc((n_prompt + d) * sizeof *all);
	float *lg = malloc((size_t)nv * sizeof *lg);
	ck_assert(all && lg);
	memcpy(all, prompt, n_prompt * sizeof *all);
	memcpy(all + n_prompt, ids, d * sizeof *all);
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_eval(s, all, n_prompt + d, 0, lg, err, sizeof err) == 0, "%s",
		      err);
	float t1 = -INFINITY, t2 = -INFINITY;
	for (int32_t v = 0; v < nv; v++)
		if (lg[v] > t1) {
			t2 = t1;
			t1 = lg[v];
		} else if (lg[v] > t2) {
			t2 = lg[v];
		}
	free(all);
	free(lg);
	return (double)t1 - t2;
}

/* Greedy with and without each drafter on one prompt: the same ids (on
 * backends that are not exact, up to a near-tie of the plain run's). */
static void check_prompt(struct belt_model *m, struct belt_session *s,
			 struct belt_drafter *const *ds, const char *const *names, int n_ds,
			 const char *file, const char *text, uint32_t n, struct tally *t)
{
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	int32_t prompt[1024];
	size_t n_prompt;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_tok_encode(tok, text, strlen(text), belt_tok_add_bos(tok), prompt, 1024,
				      &n_prompt, err, sizeof err) == 0, "%s", err);
	n = cap(n);
	static struct ids plain, drafted;
	generate(s, prompt, n_prompt, n, NULL, NULL, &plain);
	for (int i = 0; i < n_ds; i++) {
		generate(s, prompt, n_prompt, n, ds[i], NULL, &drafted);
		size_t same = 0;
		while (same < n && drafted.id[same] == plain.id[same])
			same++;
		const struct belt_stats *st = belt_session_stats(s);
		uint32_t verify = st->n_verify, drafted_n = st->n_drafted, accepted = st->n_accepted,
			 moved = st->n_moved;
		double mg = -1;
		if (same < n && !exact_backend()) {
			mg = margin_at(m, s, prompt, n_prompt, plain.id, same);
			printf("draft %s %s, drafter %s: prompt '%s' leaves the plain run at id %zu of %u, at its margin %.4f\n",
			       file, getenv("BELT_TEST_BACKEND"), names[i], text, same, n, mg);
		}
		ck_assert_msg(same == n || (mg >= 0 && mg < near_tie(file)),
			      "%s, drafter %s, prompt '%s': id %zu of %u is %d with drafts, %d without (margin %.4f)",
			      file, names[i], text, same, n, drafted.id[same], plain.id[same], mg);
		t[i].verify += verify;
		t[i].drafted += drafted_n;
		t[i].accepted += accepted;
		t[i].moved += moved;
		t[i].prompts++;
		t[i].identical += same == n;
	}
}

/* Every prompt of the references for model (reference.tsv's rows of that
 * name, longest row per prompt; and reference_llamacpp.tsv's rows of the
 * file), greedy, with both drafters. */
static void check_file(const char *model, const char *file)
{
	/* BELT_GOLDEN_ONLY=a.gguf,b.gguf: the files a machine has (as for
	 * check_golden) */
	const char *only = getenv("BELT_GOLDEN_ONLY");
	if (only && !strstr(only, file)) {
		printf("draft %s not in BELT_GOLDEN_ONLY, not checked in this run\n", file);
		return;
	}
	struct belt_model *m = ref_load_model(file);
	struct belt_session *s = session(m, 1024);
	/* the test drafter's trees: a second branch that often holds; its
	 * tap checks the hidden state each proposal reads */
	char heads[4096], opts[4200];
	bool tmp;
	medusa_file(m, model, heads, sizeof heads, &tmp);
	snprintf(opts, sizeof opts, "heads=%s", heads);
	struct belt_drafter *ds[3] = {drafter(m, "ngram", "min=1,max=3"),
				      drafter(m, "test", "4,tree,tap"), drafter(m, "medusa", opts)};
	if (tmp)
		unlink(heads);
	const char *names[3] = {"ngram", "test", "medusa"};
	struct tally t[3] = {{0}};
	struct tsv *ref = tsv_load(shared_path("models/reference.tsv"));
	ck_assert(ref);
	for (size_t r = 0; r < ref->n_rows; r++) {
		if (strcmp(tsv_get(ref, r, "model"), model))
			continue;
		const char *prompt = tsv_get(ref, r, "prompt");
		long steps = atol(tsv_get(ref, r, "n_steps"));
		bool longer = false; /* a longer row of the same prompt follows */
		for (size_t e = 0; e < ref->n_rows && !longer; e++)
			longer = e != r && !strcmp(tsv_get(ref, e, "model"), model) &&
				 !strcmp(tsv_get(ref, e, "prompt"), prompt) &&
				 atol(tsv_get(ref, e, "n_steps")) > steps;
		if (!longer)
			check_prompt(m, s, ds, names, 3, file, prompt, (uint32_t)steps, t);
	}
	tsv_free(ref);
	struct tsv *lc = tsv_load(shared_path("models/reference_llamacpp.tsv"));
	ck_assert(lc);
	for (size_t r = 0; r < lc->n_rows; r++)
		if (!strcmp(tsv_get(lc, r, "file"), file))
			check_prompt(m, s, ds, names, 3, file, tsv_get(lc, r, "prompt"),
				     (uint32_t)atol(tsv_get(lc, r, "n_predict")), t);
	tsv_free(lc);
	for (int i = 0; i < 3; i++) {
		/* the test drafter proposes at every position, medusa where its
		 * heads are sure enough; ngram once the text repeats, which a
		 * few tokens (BELT_DRAFT_TOKENS) may not */
		ck_assert_msg(t[i].prompts > 0 && (t[i].verify > 0 || (i == 0 && getenv("BELT_DRAFT_TOKENS"))),
			      "%s: drafter %s verified no proposal", file, names[i]);
		printf("draft %-26s %s %-5s: %u of %u prompts identical with and without drafts; %llu passes verified %llu drafted tokens, %llu accepted (%llu off a tree's first chain)\n",
		       file, getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu",
		       names[i], t[i].identical, t[i].prompts, (unsigned long long)t[i].verify,
		       (unsigned long long)t[i].drafted, (unsigned long long)t[i].accepted,
		       (unsigned long long)t[i].moved);
	}
	/* the trees' second branches held somewhere, their entries moved */
	ck_assert_msg(t[1].moved > 0 || getenv("BELT_DRAFT_TOKENS"),
		      "%s: no tree branch past the first chain was accepted", file);
	/* over the references' full lengths the text repeats somewhere */
	ck_assert_msg(t[0].accepted > 0 || getenv("BELT_DRAFT_TOKENS"),
		      "%s: no ngram draft was accepted", file);
	/* trained heads guess right often */
	ck_assert_msg(tmp || t[2].accepted > 0 || getenv("BELT_DRAFT_TOKENS"),
		      "%s: no draft of the trained medusa heads was accepted", file);
	for (int i = 0; i < 3; i++)
		belt_drafter_free(ds[i]);
	belt_session_free(s);
	belt_model_free(m);
}

START_TEST(greedy_stories_f32) { check_file("stories260K", "stories260K.f32.gguf"); }
END_TEST
START_TEST(greedy_stories_f16) { check_file("stories260K", "stories260K.f16.gguf"); }
END_TEST
START_TEST(greedy_stories_ggml_org) { check_file("stories260K", "stories260K.ggml-org.gguf"); }
END_TEST
START_TEST(greedy_aidreams_f32) { check_file("aidreams260K", "aidreams260K.f32.gguf"); }
END_TEST
START_TEST(greedy_aidreams_f16) { check_file("aidreams260K", "aidreams260K.f16.gguf"); }
END_TEST
START_TEST(greedy_pycoder_f16) { check_file("pycoder29M", "pycoder29M.f16.gguf"); }
END_TEST
START_TEST(greedy_pycoder_q8_0) { check_file("pycoder29M", "pycoder29M.q8_0.gguf"); }
END_TEST
START_TEST(greedy_pycoder_q4_0) { check_file("pycoder29M", "pycoder29M.q4_0.gguf"); }
END_TEST
START_TEST(greedy_pycoder_q4_k_m) { check_file("pycoder29M", "pycoder29M.q4_k_m.gguf"); }
END_TEST

#define SAMPLED_TOKENS 12

static void sampling(struct belt_sampling *sp, uint64_t seed)
{
	belt_sampling_default(sp);
	sp->temp = 1.0f;
	sp->top_k = 0;
	sp->top_p = 1.0f;
	sp->min_p = 0.0f;
	sp->seed = seed;
}

/* The n-gram index's trees (plugins/draft-ngram/ngram.c). The text
 * 1 2 3 4 8 9 3 4 5 8 7 2 3 4 6 8 9 3 4 ends with the 3-gram 9 3 4, last
 * seen ending at position 7 (then 5 8 7 ...), and the 2-gram 3 4, last
 * seen ending at 13 (then 6 8 ...): two continuations, a chain of the
 * depth and a branch of a quarter of it. Without trees, or with a depth
 * of max, the chain alone; a text whose n-grams saw one continuation
 * (1 2 3 4 1 2 3: 4 after both), a chain. */
START_TEST(ngram_tree)
{
	struct ngram_index x;
	ck_assert_int_eq(ngram_index_init(&x, 2, 3, 10), 0);
	static const int32_t h[] = {1, 2, 3, 4, 8, 9, 3, 4, 5, 8, 7, 2, 3, 4, 6, 8, 9, 3, 4};
	size_t n = sizeof h / sizeof h[0];
	struct belt_draft_node nodes[16];
	struct ngram_tree t;
	ck_assert_int_eq(ngram_propose(&x, h, n, nodes, 8, 16, &t), 10);
	ck_assert_int_eq(t.n, 2);
	ck_assert(t.start[0] == 0 && t.len[0] == 8 && t.start[1] == 8 && t.len[1] == 2);
	static const int32_t chain[8] = {5, 8, 7, 2, 3, 4, 6, 8};
	for (int i = 0; i < 8; i++)
		ck_assert(nodes[i].token == chain[i] && nodes[i].parent == i - 1);
	ck_assert(nodes[8].token == 6 && nodes[8].parent == -1);
	ck_assert(nodes[9].token == 8 && nodes[9].parent == 8);
	ck_assert_int_eq(ngram_propose(&x, h, n, nodes, 8, 16, NULL), 8);
	ck_assert_int_eq(nodes[0].token, 5);
	ck_assert_int_eq(ngram_propose(&x, h, n, nodes, 16, 16, &t), 16);
	ck_assert_int_eq(t.n, 1);
	/* max leaves the branch 1 node, the chain the rest */
	ck_assert_int_eq(ngram_propose(&x, h, n, nodes, 12, 10, &t), 10);
	ck_assert(t.n == 1 && t.len[0] == 10);
	ck_assert_int_eq(ngram_propose(&x, h, n, nodes, 8, 9, &t), 9);
	ck_assert(t.n == 2 && t.len[0] == 7 && t.len[1] == 2);
	static const int32_t once[] = {1, 2, 3, 4, 1, 2, 3};
	ck_assert_int_eq(ngram_propose(&x, once, 7, nodes, 4, 16, &t), 4);
	ck_assert_int_eq(t.n, 1);
	static const int32_t cont[4] = {4, 1, 2, 3}; /* running into itself */
	for (int i = 0; i < 4; i++)
		ck_assert(nodes[i].token == cont[i] && nodes[i].parent == i - 1);
	ngram_index_free(&x);
}
END_TEST

/* Sampled: a seed gives the same draws with and without drafts (the
 * sampler's noise is keyed by seed and position), twice alike. */
START_TEST(sampled_same_draws)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	struct belt_session *s = session(m, 256);
	char heads[4096], opts[4200];
	bool tmp;
	medusa_file(m, "stories260K", heads, sizeof heads, &tmp);
	snprintf(opts, sizeof opts, "heads=%s", heads);
	/* medusa: trees of the tap's candidates, the tap after sampled passes */
	struct belt_drafter *ds[3] = {drafter(m, "ngram", "min=1,max=3"),
				      drafter(m, "test", "4,tree"), drafter(m, "medusa", opts)};
	if (tmp)
		unlink(heads);
	const int32_t prompt[] = {1, 403, 407, 261, 378}; /* "Once upon a time" */
	static struct ids plain, a, b;
	uint64_t verified = 0, moved = 0;
	unsigned identical = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct belt_sampling sp;
		sampling(&sp, seed);
		sp.repeat_penalty = seed % 2 ? 1.0f : 1.3f; /* penalties read the drafts */
		generate(s, prompt, 5, 48, NULL, &sp, &plain);
		for (int i = 0; i < 3; i++) {
			generate(s, prompt, 5, 48, ds[i], &sp, &a);
			verified += belt_session_stats(s)->n_verify;
			moved += belt_session_stats(s)->n_moved;
			generate(s, prompt, 5, 48, ds[i], &sp, &b);
			ck_assert_msg(!memcmp(a.id, b.id, sizeof a.id), "seed %llu: two runs differ",
				      (unsigned long long)seed);
			bool same = !memcmp(a.id, plain.id, sizeof a.id);
			ck_assert_msg(same || !exact_backend(),
				      "seed %llu, drafter %d: the draws differ from plain sampling's",
				      (unsigned long long)seed, i);
			identical += same;
		}
	}
	ck_assert_uint_gt(verified, 0);
	/* the test drafter's second branches held somewhere: sampled trees */
	ck_assert_uint_gt(moved, 0);
	printf("draft sampled %s: 20 seeds x 3 drafters, each run twice alike; %u of 60 the same 48 draws as without drafts%s (%llu passes, %llu tokens off a tree's first chain)\n",
	       getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu", identical,
	       exact_backend() ? "" : " (not asserted: this backend's rows differ in the last bits)",
	       (unsigned long long)verified, (unsigned long long)moved);
	for (int i = 0; i < 3; i++)
		belt_drafter_free(ds[i]);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* The distribution: the token at each of SAMPLED_TOKENS positions over
 * N_SEEDS seeds with drafts against N_SEEDS other seeds without; Pearson's
 * two-sample chi-square over the tokens seen at least 10 times in all,
 * the rest pooled, at p > 0.001 per position (the seeds are fixed, so the
 * test is deterministic; a sampler that ignored the target's
 * probabilities on drafted rows fails it by far). */
#define N_SEEDS 300
START_TEST(sampled_chi_square)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	int32_t nv = belt_model_n_vocab(m);
	struct belt_session *s = session(m, 256);
	struct belt_drafter *d = drafter(m, "test", "4,tree");
	const int32_t prompt[] = {1, 403, 407, 261, 378};
	uint32_t *cnt = calloc((size_t)2 * SAMPLED_TOKENS * (size_t)nv, sizeof *cnt);
	ck_assert(cnt);
	static struct ids out;
	for (int side = 0; side < 2; side++)
		for (uint64_t i = 0; i < N_SEEDS; i++) {
			struct belt_sampling sp;
			sampling(&sp, 1000 + 2 * i + (uint64_t)side);
			generate(s, prompt, 5, SAMPLED_TOKENS, side ? d : NULL, &sp, &out);
			for (int p = 0; p < SAMPLED_TOKENS; p++)
				cnt[((size_t)side * SAMPLED_TOKENS + (size_t)p) * nv + out.id[p]]++;
		}
	double worst = 0;
	for (int p = 0; p < SAMPLED_TOKENS; p++) {
		const uint32_t *a = cnt + (size_t)p * nv, *b = cnt + ((size_t)SAMPLED_TOKENS + p) * nv;
		double chi = 0, pa = 0, pb = 0;
		int df = -1;
		for (int32_t v = 0; v < nv; v++) {
			if (a[v] + b[v] >= 10) {
				/* equal sample sizes: (a - b)^2 / (a + b) */
				chi += (double)((int64_t)a[v] - b[v]) * ((int64_t)a[v] - b[v]) /
				       (a[v] + b[v]);
				df++;
			} else {
				pa += a[v];
				pb += b[v];
			}
		}
		if (pa + pb > 0) {
			chi += (pa - pb) * (pa - pb) / (pa + pb);
			df++;
		}
		/* Wilson-Hilferty: chi2_df > df (1 - 2/(9df) + z sqrt(2/(9df)))^3
		 * with probability 0.001 at z = 3.09 */
		double lim = df < 1 ? 10.83
				    : df * pow(1 - 2.0 / (9 * df) + 3.09 * sqrt(2.0 / (9 * df)), 3);
		ck_assert_msg(chi < lim, "position %d: chi-square %.1f over %d degrees of freedom, limit %.1f",
			      p, chi, df, lim);
		if (chi / lim > worst)
			worst = chi / lim;
	}
	printf("draft chi-square %s: %d positions x %d seeds each way, worst statistic at %.2f of its p = 0.001 limit\n",
	       getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu", SAMPLED_TOKENS,
	       N_SEEDS, worst);
	free(cnt);
	belt_drafter_free(d);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* A copy of the side file at heads with each head given its own output
 * projection (medusa.{k}.output): the target's own (file's output.weight,
 * else token_embd.weight), its rows turned by one token where roll (row r
 * is the target's row r + 1: each head's guess i becomes i - 1), or with
 * the shape wrong where bad. Written to a temporary file, path. */
static void medusa_own_file(const char *heads, const char *model_file, bool roll, bool bad,
			    char *path, size_t pathsz)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf *hg = belt_gguf_open(heads, err, sizeof err);
	struct belt_gguf *mg = belt_gguf_open(shared_path(model_file), err, sizeof err);
	ck_assert_msg(hg && mg, "%s", err);
	const struct belt_gguf_tensor *out = belt_gguf_find_tensor(mg, "output.weight");
	if (!out)
		out = belt_gguf_find_tensor(mg, "token_embd.weight");
	ck_assert(out);
	int64_t k = 0, n = 0;
	ck_assert(belt_gguf_get_int(hg, "medusa.head_count", &k, err, sizeof err) == 1 &&
		  belt_gguf_get_int(hg, "medusa.embedding_length", &n, err, sizeof err) == 1);
	uint64_t row = out->size / (uint64_t)out->ne[1];
	uint8_t *w = malloc(out->size);
	ck_assert(w);
	for (int64_t r = 0; r < out->ne[1]; r++)
		memcpy(w + r * row, (const uint8_t *)out->data + ((r + roll) % out->ne[1]) * row,
		       row);
	struct belt_gguf_writer *g = belt_gguf_writer_new();
	ck_assert(!belt_gguf_writer_str(g, "general.architecture", "medusa") &&
		  !belt_gguf_writer_u32(g, "medusa.head_count", (uint32_t)k) &&
		  !belt_gguf_writer_u32(g, "medusa.embedding_length", (uint32_t)n));
	for (int64_t i = 0; i < k; i++) {
		char wn[32], bn[32], on[32];
		snprintf(wn, sizeof wn, "medusa.%d.weight", (int)i);
		snprintf(bn, sizeof bn, "medusa.%d.bias", (int)i);
		snprintf(on, sizeof on, "medusa.%d.output", (int)i);
		const struct belt_gguf_tensor *wt = belt_gguf_find_tensor(hg, wn),
					      *bt = belt_gguf_find_tensor(hg, bn);
		ck_assert(wt && bt);
		/* bad: one row fewer than the vocabulary */
		const int64_t one[2] = {out->ne[0], out->ne[1] - (bad && i == k - 1)};
		ck_assert(!belt_gguf_writer_tensor(g, wn, wt->type, 2, wt->ne, wt->data) &&
			  !belt_gguf_writer_tensor(g, bn, bt->type, 1, bt->ne, bt->data) &&
			  !belt_gguf_writer_tensor(g, on, out->type, 2, one, w));
	}
	temp_file("belt-medusa-own", path, pathsz);
	ck_assert_msg(belt_gguf_writer_write(g, path, err, sizeof err) == 0, "%s", err);
	belt_gguf_writer_free(g);
	belt_gguf_close(hg);
	belt_gguf_close(mg);
	free(w);
}

/* Heads of their own output projection: given the target's own, the
 * drafts are those of the heads read through the target's (the same
 * passes, drafts and acceptances, the tap's logits computed alike); given
 * the target's rows turned by one token, other drafts, and greedy output
 * still that of plain decoding; a projection of the wrong shape is
 * refused with the file and the tensor named. pycoder29M Q8_0 with the
 * trained heads (a Q8_0 projection: the tap's matvec of a quantized
 * weight of its own). */
START_TEST(medusa_own_output)
{
	const char *file = "pycoder29M.q8_0.gguf";
	char rel[64];
	snprintf(rel, sizeof rel, "models/%s", file);
	struct belt_model *m = ref_load_model(file);
	struct belt_session *s = session(m, 1024);
	char heads[4096], own[4096], rolled[4096], bad[4096], opts[4200];
	bool tmp;
	medusa_file(m, "pycoder29M", heads, sizeof heads, &tmp);
	medusa_own_file(heads, rel, false, false, own, sizeof own);
	medusa_own_file(heads, rel, true, false, rolled, sizeof rolled);
	medusa_own_file(heads, rel, false, true, bad, sizeof bad);
	struct belt_drafter *ds[3];
	const char *paths[3] = {heads, own, rolled};
	for (int i = 0; i < 3; i++) {
		snprintf(opts, sizeof opts, "heads=%s", paths[i]);
		ds[i] = drafter(m, "medusa", opts);
	}
	snprintf(opts, sizeof opts, "heads=%s", bad);
	struct belt_drafter *d;
	char err[BELT_ERR_SIZE];
	ck_assert_int_eq(belt_drafter_new(m, "medusa", opts, &d, err, sizeof err), -1);
	ck_assert_msg(strstr(err, bad) && strstr(err, ".output"), "%s", err);
	if (tmp)
		unlink(heads);
	unlink(own);
	unlink(rolled);
	unlink(bad);
	const char *names[3] = {"target's", "own copy", "own rolled"};
	struct tally t[3] = {{0}};
	static const char *const prompts[] = {
		"def fibonacci(n):\n", "import os\nimport sys\n\ndef main():\n",
		"class Stack:\n    def __init__(self):\n"};
	for (size_t p = 0; p < sizeof prompts / sizeof *prompts; p++)
		check_prompt(m, s, ds, names, 3, file, prompts[p], 96, t);
	for (int i = 0; i < 3; i++)
		printf("draft %s medusa heads, %s projection: %llu passes, %llu drafted, %llu accepted\n",
		       file, names[i], (unsigned long long)t[i].verify,
		       (unsigned long long)t[i].drafted, (unsigned long long)t[i].accepted);
	/* (a few tokens, BELT_DRAFT_TOKENS, may accept none) */
	ck_assert_msg(t[0].accepted > 0 || getenv("BELT_DRAFT_TOKENS"),
		      "no draft of the trained heads was accepted");
	ck_assert_msg(t[1].verify == t[0].verify && t[1].drafted == t[0].drafted &&
			      t[1].accepted == t[0].accepted && t[1].moved == t[0].moved,
		      "own copy of the projection: %llu passes, %llu drafted, %llu accepted against "
		      "%llu, %llu, %llu",
		      (unsigned long long)t[1].verify, (unsigned long long)t[1].drafted,
		      (unsigned long long)t[1].accepted, (unsigned long long)t[0].verify,
		      (unsigned long long)t[0].drafted, (unsigned long long)t[0].accepted);
	ck_assert_msg(t[2].accepted != t[0].accepted || t[2].drafted != t[0].drafted ||
			      !t[0].accepted,
		      "the rolled projection drafted as the target's");
	for (int i = 0; i < 3; i++)
		belt_drafter_free(ds[i]);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* Bad drafter names and options are errors naming them. */
START_TEST(bad_drafters)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	struct belt_drafter *d;
	char err[BELT_ERR_SIZE];
	ck_assert_int_eq(belt_drafter_new(m, "nosuch", NULL, &d, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nosuch"), "%s", err);
	const char *bad[] = {"min=0", "max=99", "min=3,max=2", "size=4", "min=", "min=2;max=3"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_int_eq(belt_drafter_new(m, "ngram", bad[i], &d, err, sizeof err), -1);
		ck_assert_msg(strstr(err, "ngram") && strstr(err, bad[i]), "%s: %s", bad[i], err);
	}
	/* a tree whose node names itself as its parent: refused, named */
	struct belt_session *s = session(m, 256);
	d = drafter(m, "test", "4,badtree");
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = 32;
	gp.drafter = d;
	gp.draft_unpaced = true;
	const int32_t prompt[] = {1, 403, 407, 261, 378};
	struct ids out = {0};
	ck_assert_int_eq(belt_generate(s, prompt, 5, &gp, collect, &out, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "test") && strstr(err, "parent is 1"), "%s", err);
	belt_drafter_free(d);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("draft");
	TCase *g = tcase_create("greedy");
	tcase_set_timeout(g, 0); /* no limit: CI bounds the run */
	tcase_add_test(g, greedy_stories_f32);
	tcase_add_test(g, greedy_stories_f16);
	tcase_add_test(g, greedy_stories_ggml_org);
	tcase_add_test(g, greedy_aidreams_f32);
	tcase_add_test(g, greedy_aidreams_f16);
	tcase_add_test(g, greedy_pycoder_f16);
	tcase_add_test(g, greedy_pycoder_q8_0);
	tcase_add_test(g, greedy_pycoder_q4_0);
	tcase_add_test(g, greedy_pycoder_q4_k_m);
	suite_add_tcase(s, g);
	TCase *sm = tcase_create("sampled");
	tcase_set_timeout(sm, 0);
	tcase_add_test(sm, sampled_same_draws);
	tcase_add_test(sm, sampled_chi_square);
	tcase_add_test(sm, bad_drafters);
	tcase_add_test(sm, ngram_tree);
	tcase_add_test(sm, medusa_own_output);
	suite_add_tcase(s, sm);
	return s;
}

int main(void)
{
	/* the test drafter lives with the test plugins */
	if (!ref_use_test_plugins("check_draft"))
		return EXIT_FAILURE;
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
