/* End-to-end: every file of $BELT_SHARED_DIR/models/quant (a small llama
 * quantized by llama.cpp to each GGUF type, see its README.md) against
 * llama.cpp's outputs there, on the backend of $BELT_TEST_BACKEND (cpu
 * when unset).
 *
 * Two references per file: "deq" (llama.cpp on an F32 copy of the file's
 * exactly dequantized weights) and "stock" (llama.cpp on the file, which
 * rounds activations to 8 bits before its integer products). A path that
 * multiplies in float (Vulkan, the CPU's generic set) must meet the deq
 * logits within 1e-3 at every one of 64 teacher-forced positions and its
 * greedy ids the deq records' over their stable prefix. A path that rounds
 * x to int8 per block of 32 like the CPU's avx2/avx512 sets is held to the
 * README's stock tolerances against both references (legacy types: max
 * 1.0, mean 0.08; K types and IQ4_XS: max 1.5, mean 0.15) and its greedy
 * ids to the deq ids for as long as the deq margins exceed that max.
 * Teacher-forced logits come both from one batched pass (eval_all) and
 * from one token at a time (decode). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "ref.h"

#define N_TF 64	    /* teacher-forced positions */
#define N_GREEDY 48 /* tokens of each greedy record */

/* the files: stem after "quant-base.", K-type (Q8_K activations in
 * ggml), and whether Vulkan's decode matvec takes x as int8 for its type
 * (doc/vulkan.md, on devices with integer dot products, lavapipe too) */
static const struct {
	const char *name;
	bool k_type, vk_int8;
} files[] = {
	{"f32", false, false},	  {"q8_0", false, true},   {"q4_0", false, true},
	{"q4_1", false, false},	  {"q5_0", false, false},  {"q5_1", false, false},
	{"iq4_nl", false, false}, {"iq4_xs", true, false}, {"q2_k", true, false},
	{"q3_k", true, false},	  {"q4_k", true, false},   {"q5_k", true, false},
	{"q6_k", true, false},	  {"q4_k_m", true, false}, {"q5_k_m", true, false},
};
#define N_FILES (sizeof files / sizeof files[0])

struct tier {
	const char *what;
	bool exact;	 /* float activations: deq within 1e-3 */
	double max, mean; /* otherwise, against both references */
};

static bool generic_isa;

/* the tier of file f's batched passes (decode false) or one-token decode */
static struct tier tier_of(int f, bool decode)
{
	const char *be = getenv("BELT_TEST_BACKEND");
	bool vulkan = be && !strcmp(be, "vulkan");
	bool int8 = vulkan ? decode && files[f].vk_int8 : !generic_isa;
	if (!int8 || !strcmp(files[f].name, "f32"))
		return (struct tier){vulkan ? "vulkan" : generic_isa ? "cpu generic" : "cpu", true,
				     1e-3, 0};
	return (struct tier){vulkan ? "vulkan int8" : "cpu int8", false, files[f].k_type ? 1.5 : 1.0,
			     files[f].k_type ? 0.15 : 0.08};
}

static json_t *records;

/* references.jsonl, once per process (each test forks from it) */
static void load_records(void)
{
	if (records)
		return;
	FILE *fp = fopen(shared_path("models/quant/references.jsonl"), "rb");
	ck_assert_msg(fp, "cannot open %s", shared_path("models/quant/references.jsonl"));
	records = json_array();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	for (int n = 1; (len = getline(&line, &cap, fp)) > 0; n++) {
		json_error_t je;
		json_t *r = json_loadb(line, (size_t)len, 0, &je);
		ck_assert_msg(r, "references.jsonl:%d: %s", n, je.text);
		json_array_append_new(records, r);
	}
	free(line);
	fclose(fp);
}

/* the idx-th record of file stem, build ("stock"/"deq") and kind */
static json_t *record(const char *stem, const char *build, const char *kind, int idx)
{
	size_t i;
	json_t *r;
	json_array_foreach(records, i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "model")), stem) &&
		    !strcmp(json_string_value(json_object_get(r, "llama_cpp_build")), build) &&
		    !strcmp(json_string_value(json_object_get(r, "kind")), kind) && idx-- == 0)
			return r;
	}
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

static float *read_logits(const char *file, size_t n)
{
	char rel[256];
	snprintf(rel, sizeof rel, "models/quant/%s", file);
	FILE *fp = fopen(shared_path(rel), "rb");
	ck_assert_msg(fp, "cannot open %s", shared_path(rel));
	float *v = malloc(n * sizeof *v);
	ck_assert(v);
	ck_assert_msg(fread(v, sizeof *v, n, fp) == n, "%s: short file", rel);
	fclose(fp);
	return v;
}

static struct belt_model *load(int f)
{
	char rel[256];
	snprintf(rel, sizeof rel, "models/quant/quant-base.%s.gguf", files[f].name);
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

static struct belt_session *session(struct belt_model *m)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

struct diff {
	double max, mean;
};

static struct diff compare(const float *a, const float *b, size_t n)
{
	struct diff d = {0, 0};
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);
		d.max = e > d.max ? e : d.max;
		d.mean += e;
	}
	d.mean /= (double)n;
	return d;
}

static void check_diff(int f, const char *path, const char *ref, struct diff d, struct tier t)
{
	printf("quant %-7s %-12s %-7s vs %-5s max %.3g mean %.3g (tolerance max %g%s)\n",
	       files[f].name, t.what, path, ref, d.max, d.mean, t.max, t.exact ? "" : ", mean");
	ck_assert_msg(d.max <= t.max, "%s %s %s vs %s: max |difference| %g over %g", files[f].name,
		      t.what, path, ref, d.max, t.max);
	ck_assert_msg(t.exact || d.mean <= t.mean, "%s %s %s vs %s: mean |difference| %g over %g",
		      files[f].name, t.what, path, ref, d.mean, t.mean);
}

/* 64 teacher-forced positions, batched and one by one, against deq (and
 * stock for the int8 tier). */
static void check_teacher_forced(int f)
{
	load_records();
	char stem[64], file[128];
	snprintf(stem, sizeof stem, "quant-base.%s", files[f].name);
	bool base = !strcmp(files[f].name, "f32");
	json_t *r = record(stem, base ? "stock" : "deq", "teacher_forced", 0);
	ck_assert_msg(r, "%s: no teacher-forced record", stem);
	size_t n;
	int32_t *ids = ids_of(json_object_get(r, "ids_fed"), &n);
	ck_assert_uint_eq(n, N_TF);
	struct belt_model *m = load(f);
	size_t n_vocab = (size_t)belt_model_n_vocab(m), total = N_TF * n_vocab;
	snprintf(file, sizeof file, "logits.%s.%s", stem, base ? "f32" : "deq.f32");
	float *deq = read_logits(file, total);
	snprintf(file, sizeof file, "logits.%s.f32", stem);
	float *stock = read_logits(file, total);
	float *ours = malloc(total * sizeof *ours);
	ck_assert(ours);
	struct tier t = tier_of(f, false);
	char err[BELT_ERR_SIZE];

	struct belt_session *s = session(m);
	ck_assert_msg(belt_session_eval_all(s, ids, N_TF, 0, ours, err, sizeof err) == 0, "%s", err);
	check_diff(f, "batched", "deq", compare(ours, deq, total), t);
	if (!t.exact)
		check_diff(f, "batched", "stock", compare(ours, stock, total), t);
	belt_session_free(s);

	t = tier_of(f, true);
	s = session(m);
	for (size_t p = 0; p < N_TF; p++)
		ck_assert_msg(belt_session_eval(s, &ids[p], 1, (uint32_t)p, ours + p * n_vocab, err,
						sizeof err) == 0,
			      "%s", err);
	check_diff(f, "decode", "deq", compare(ours, deq, total), t);
	if (!t.exact)
		check_diff(f, "decode", "stock", compare(ours, stock, total), t);
	belt_session_free(s);
	belt_model_free(m);
	free(ours);
	free(stock);
	free(deq);
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

/* The 6 greedy records: ids identical to deq's over its stable prefix
 * (exact tier) or while deq's margins exceed the tier's max. */
static void check_greedy(int f)
{
	load_records();
	char stem[64];
	snprintf(stem, sizeof stem, "quant-base.%s", files[f].name);
	bool base = !strcmp(files[f].name, "f32");
	struct tier t = tier_of(f, true);
	struct belt_model *m = load(f);
	struct belt_session *s = session(m);
	size_t agreed = 0, required = 0;
	for (int k = 0; k < 6; k++) {
		json_t *r = record(stem, base ? "stock" : "deq", "greedy", k);
		ck_assert_msg(r, "%s: greedy record %d missing", stem, k);
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
		struct collect c = {.n = 0};
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_generate(s, prompt, n_prompt, &gp, collect, &c, err, sizeof err) == 0,
			      "%s", err);
		ck_assert_uint_eq(c.n, N_GREEDY);
		size_t same = 0;
		while (same < n_gen && c.ids[same] == gen[same])
			same++;
		ck_assert_msg(same >= need,
			      "%s %s: greedy prompt %d differs at token %zu (ours %d, llama.cpp %d), "
			      "required prefix %zu",
			      stem, t.what, k, same, same < n_gen ? c.ids[same] : -1,
			      same < n_gen ? gen[same] : -1, need);
		agreed += same;
		required += need;
		free(prompt);
		free(gen);
	}
	printf("quant %-7s %-12s greedy: %zu of 288 ids as llama.cpp's %s run before the first "
	       "difference (%zu required)\n",
	       files[f].name, t.what, agreed, base ? "stock" : "deq", required);
	belt_session_free(s);
	belt_model_free(m);
}

START_TEST(teacher_forced) { check_teacher_forced(_i); }
END_TEST

START_TEST(greedy) { check_greedy(_i); }
END_TEST

/* the CPU backend with its generic set: float x, the exact tier */
START_TEST(teacher_forced_generic)
{
	setenv("BELT_CPU_ISA", "generic", 1);
	generic_isa = true;
	check_teacher_forced(_i);
}
END_TEST

START_TEST(greedy_generic)
{
	setenv("BELT_CPU_ISA", "generic", 1);
	generic_isa = true;
	check_greedy(_i);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("quant");
	TCase *tc = tcase_create("quant-base");
	tcase_set_timeout(tc, 0);
	tcase_add_loop_test(tc, teacher_forced, 0, (int)N_FILES);
	tcase_add_loop_test(tc, greedy, 0, (int)N_FILES);
	const char *be = getenv("BELT_TEST_BACKEND");
	if (!be || !strcmp(be, "cpu")) {
		tcase_add_loop_test(tc, teacher_forced_generic, 0, (int)N_FILES);
		tcase_add_loop_test(tc, greedy_generic, 0, (int)N_FILES);
	}
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	json_decref(records);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
