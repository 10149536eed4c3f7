/* llama.cpp reference sets: records, logits and the checks (llref.h). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "llref.h"
#include "ref.h"

#define N_GREEDY 48 /* tokens of each greedy record */

/* references.jsonl of dir, read once per process (each test forks) */
static json_t *records(const char *dir)
{
	static json_t *recs;
	static char loaded[256];
	if (recs && !strcmp(loaded, dir))
		return recs;
	json_decref(recs);
	char rel[300];
	snprintf(rel, sizeof rel, "%s/references.jsonl", dir);
	FILE *fp = fopen(shared_path(rel), "rb");
	ck_assert_msg(fp, "cannot open %s", shared_path(rel));
	recs = json_array();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	for (int n = 1; (len = getline(&line, &cap, fp)) > 0; n++) {
		json_error_t je;
		json_t *r = json_loadb(line, (size_t)len, 0, &je);
		ck_assert_msg(r, "%s:%d: %s", rel, n, je.text);
		json_array_append_new(recs, r);
	}
	free(line);
	fclose(fp);
	snprintf(loaded, sizeof loaded, "%s", dir);
	return recs;
}

static const char *str_of(json_t *r, const char *key)
{
	const char *s = json_string_value(json_object_get(r, key));
	return s ? s : "";
}

/* the idx-th record of the case's model and build of this kind */
static json_t *record(const struct llref_case *c, const char *kind, int idx)
{
	size_t i;
	json_t *r;
	int want = idx;
	json_array_foreach(records(c->dir), i, r)
	{
		if (!strcmp(str_of(r, "model"), c->stem) && !strcmp(str_of(r, "llama_cpp_build"), c->build) &&
		    !strcmp(str_of(r, "kind"), kind) && idx-- == 0)
			return r;
	}
	ck_abort_msg("%s/references.jsonl: no %s record %d for %s (%s)", c->dir, kind, want, c->stem,
		     c->build);
	return NULL;
}

static int32_t *ids_of(json_t *arr, size_t *n)
{
	*n = json_array_size(arr);
	int32_t *ids = malloc(*n * sizeof *ids + 1);
	ck_assert(ids);
	for (size_t i = 0; i < *n; i++)
		ids[i] = (int32_t)json_integer_value(json_array_get(arr, i));
	return ids;
}

static float *read_logits(const char *dir, const char *file, size_t n)
{
	char rel[300];
	snprintf(rel, sizeof rel, "%s/%s", dir, file);
	FILE *fp = fopen(shared_path(rel), "rb");
	ck_assert_msg(fp, "cannot open %s", shared_path(rel));
	float *v = malloc(n * sizeof *v);
	ck_assert(v);
	ck_assert_msg(fread(v, sizeof *v, n, fp) == n, "%s: short file", rel);
	fclose(fp);
	return v;
}

static struct belt_model *load(const struct llref_case *c)
{
	char rel[300];
	snprintf(rel, sizeof rel, "%s/%s", c->dir, c->gguf);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = shared_path(rel);
	mp.n_threads = 2;
	if (getenv("BELT_TEST_BACKEND"))
		mp.backend = getenv("BELT_TEST_BACKEND");
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	return m;
}

void (*llref_session_tweak)(struct belt_session_params *sp);

static struct belt_session *session(struct belt_model *m)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	/* the references' K/V cache (models/quant/README.md, arch/README.md) */
	sp.type_k = sp.type_v = BELT_TYPE_F32;
	if (llref_session_tweak)
		llref_session_tweak(&sp);
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

static void check_diff(const struct llref_case *c, const char *path, const char *ref,
		       const float *a, const float *b, size_t n, struct llref_tol t)
{
	double max = 0, mean = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);
		max = e > max ? e : max;
		mean += e;
	}
	mean /= (double)n;
	printf("%-22s %-12s %-7s vs %-26s max %.3g mean %.3g (tolerance max %g", c->gguf, t.what,
	       path, ref, max, mean, t.max);
	if (t.exact)
		printf(")\n");
	else
		printf(", mean %g)\n", t.mean);
	ck_assert_msg(max <= t.max, "%s %s %s vs %s: max |difference| %g over %g", c->gguf, t.what,
		      path, ref, max, t.max);
	ck_assert_msg(t.exact || mean <= t.mean, "%s %s %s vs %s: mean |difference| %g over %g",
		      c->gguf, t.what, path, ref, mean, t.mean);
}

static void teacher_forced(const struct llref_case *c, bool do_batched, bool do_decode,
			   struct llref_tol tol_batched, struct llref_tol tol_decode);

void llref_teacher_forced(const struct llref_case *c, struct llref_tol tol_batched,
			  struct llref_tol tol_decode)
{
	teacher_forced(c, true, true, tol_batched, tol_decode);
}

void llref_teacher_forced_path(const struct llref_case *c, bool batched, struct llref_tol tol)
{
	teacher_forced(c, batched, !batched, tol, tol);
}

static void teacher_forced(const struct llref_case *c, bool do_batched, bool do_decode,
			   struct llref_tol tol_batched, struct llref_tol tol_decode)
{
	json_t *r = record(c, "teacher_forced", 0);
	size_t n;
	int32_t *ids = ids_of(json_object_get(r, "ids_fed"), &n);
	ck_assert_uint_gt(n, 0);
	struct belt_model *m = load(c);
	size_t n_vocab = (size_t)belt_model_n_vocab(m), total = n * n_vocab;
	float *ref = read_logits(c->dir, c->logits, total);
	float *ref2 = c->logits2 ? read_logits(c->dir, c->logits2, total) : NULL;
	float *ours = malloc(total * sizeof *ours);
	ck_assert(ours);
	char err[BELT_ERR_SIZE];

	struct belt_session *s;
	if (do_batched) {
		s = session(m);
		ck_assert_msg(belt_session_eval_all(s, ids, n, 0, ours, err, sizeof err) == 0, "%s",
			      err);
		check_diff(c, "batched", c->logits, ours, ref, total, tol_batched);
		if (ref2 && !tol_batched.exact)
			check_diff(c, "batched", c->logits2, ours, ref2, total, tol_batched);
		belt_session_free(s);
	}
	if (do_decode) {
		s = session(m);
		for (size_t p = 0; p < n; p++)
			ck_assert_msg(belt_session_eval(s, &ids[p], 1, (uint32_t)p, ours + p * n_vocab,
							err, sizeof err) == 0,
				      "%s", err);
		check_diff(c, "decode", c->logits, ours, ref, total, tol_decode);
		if (ref2 && !tol_decode.exact)
			check_diff(c, "decode", c->logits2, ours, ref2, total, tol_decode);
		belt_session_free(s);
	}
	belt_model_free(m);
	free(ours);
	free(ref2);
	free(ref);
	free(ids);
}

struct collect {
	int32_t ids[N_GREEDY];
	size_t n;
};

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text, (void)len;
	struct collect *c = ud;
	if (id >= 0 && c->n < N_GREEDY)
		c->ids[c->n++] = id;
	return true;
}

void llref_greedy(const struct llref_case *c, struct llref_tol t)
{
	struct belt_model *m = load(c);
	struct belt_session *s = session(m);
	size_t agreed = 0, required = 0;
	for (int k = 0; k < 6; k++) {
		json_t *r = record(c, "greedy", k);
		size_t n_prompt, n_gen;
		int32_t *prompt = ids_of(json_object_get(r, "prompt_ids"), &n_prompt);
		int32_t *gen = ids_of(json_object_get(r, "generated"), &n_gen);
		ck_assert_uint_eq(n_gen, N_GREEDY);
		size_t need = (size_t)json_integer_value(json_object_get(r, "stable_prefix"));
		if (!t.exact) {
			json_t *margins = json_object_get(r, "margins");
			need = 0;
			while (need < n_gen &&
			       json_number_value(json_array_get(margins, need)) > 2 * t.max)
				need++;
		}
		struct belt_generate_params gp;
		belt_generate_params_default(&gp);
		gp.n_predict = N_GREEDY;
		gp.stop_at_eog = false;
		struct collect got = {.n = 0};
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_generate(s, prompt, n_prompt, &gp, collect, &got, err, sizeof err) == 0,
			      "%s", err);
		ck_assert_uint_eq(got.n, N_GREEDY);
		size_t same = 0;
		while (same < n_gen && got.ids[same] == gen[same])
			same++;
		ck_assert_msg(same >= need,
			      "%s %s: greedy prompt %d differs at token %zu (ours %d, llama.cpp %d), "
			      "required prefix %zu",
			      c->gguf, t.what, k, same, same < n_gen ? got.ids[same] : -1,
			      same < n_gen ? gen[same] : -1, need);
		agreed += same;
		required += need;
		free(prompt);
		free(gen);
	}
	printf("%-22s %-12s greedy: %zu of %d ids as llama.cpp's %s run before the first "
	       "difference (%zu required)\n",
	       c->gguf, t.what, agreed, 6 * N_GREEDY, c->build, required);
	belt_session_free(s);
	belt_model_free(m);
}
