/* End-to-end: the architectures beyond Llama 1/2 against llama.cpp, on
 * the small files of $BELT_SHARED_DIR/models/arch (its README.md says what
 * each exercises), on the backend of $BELT_TEST_BACKEND (cpu when unset):
 * teacher-forced logits at 64 positions, from one batched pass and one
 * token at a time, within the tolerances below of llama.cpp's, and greedy
 * ids equal to llama.cpp's over each record's stable prefix. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include "belt/arch.h"
#include "belt/belt.h"
#include "belt/quant.h"
#include "llref.h"
#include "plugin/registry.h"
#include "ref.h"
#include "synth/synth.h"

/* Each file, the llama.cpp build whose outputs it is held to, and the
 * tolerance the reference README suggests from its measured spreads:
 * qwen2*, phi3 1e-4 (measured <= 1.1e-5), llama3-rope and qwen3moe 2e-4
 * (4.6e-5, 5.3e-5),
 * gemma against llama.cpp with GELU in float ("gelu-exact"; stock ggml
 * looks GELU up in an fp16 table) 2e-4 (6.7e-5). gemma2.q8_0: a path
 * that keeps x in float against the F32 copy of its dequantized weights
 * (2e-4); one that rounds x to int8 per block of 32 as ggml's CPU does
 * against llama.cpp on the file, where one activation's rounding flipped
 * by a float-order difference moves logits by tenths (the AVX2 rows meet
 * it to 9e-6, the AVX-512 batched product differs by 0.2), so under the
 * quant README's tolerance for such paths (max 1.5, mean 0.08). Vulkan's
 * int8 decode rounds x its own way (rmsnorm fused into the matvec): it is
 * held to the spread the README measured between this model's int8 and
 * float activations (max 3.4, mean 0.23), and its float decode
 * (BELT_VK_Q8X=0, the test's second loop) to the deq reference. */
static const struct {
	const char *gguf, *stem, *build, *logits;
	double tol;
	bool q8; /* Q8_0 weights: the reference depends on x's rounding */
} models[] = {
	{"llama3-rope.gguf", "llama3-rope", "stock", "logits.llama3-rope.f32", 2e-4, false},
	{"qwen2-same.gguf", "qwen2-same", "stock", "logits.qwen2-same.f32", 1e-4, false},
	{"qwen2.gguf", "qwen2", "stock", "logits.qwen2.f32", 1e-4, false},
	{"phi3-same.gguf", "phi3-same", "stock", "logits.phi3-same.f32", 1e-4, false},
	{"qwen3.gguf", "qwen3", "stock", "logits.qwen3.f32", 1e-4, false},
	{"qwen3moe.gguf", "qwen3moe", "stock", "logits.qwen3moe.f32", 2e-4, false},
	{"gemma2.gguf", "gemma2", "gelu-exact", "logits.gemma2.gelu-exact.f32", 2e-4, false},
	{"gemma3.gguf", "gemma3", "gelu-exact", "logits.gemma3.gelu-exact.f32", 2e-4, false},
	{"gemma2.q8_0.gguf", "gemma2.q8_0", "deq-gelu-exact",
	 "logits.gemma2.q8_0.deq-gelu-exact.f32", 2e-4, true},
};
#define N_MODELS (int)(sizeof models / sizeof models[0])

/* Whether this run's decode rounds x to int8 for Q8_0 weights: the CPU's
 * avx2/avx512 sets, and Vulkan where the device has integer dot products
 * (lavapipe and the H100 do; BELT_VK_Q8X=0 turns it off). */
static bool int8_decode(void)
{
	const char *be = getenv("BELT_TEST_BACKEND"), *isa = getenv("BELT_CPU_ISA");
	const char *q8x = getenv("BELT_VK_Q8X");
	if (be && !strcmp(be, "vulkan"))
		return !(q8x && !strcmp(q8x, "0"));
	return !(isa && !strcmp(isa, "generic"));
}

/* and its batched passes: the CPU's avx2/avx512 sets (doc/cpu.md: the
 * batched product rounds x as decode does); Vulkan's keep x in float */
static bool int8_batched(void)
{
	const char *be = getenv("BELT_TEST_BACKEND"), *isa = getenv("BELT_CPU_ISA");
	return !(be && !strcmp(be, "vulkan")) && !(isa && !strcmp(isa, "generic"));
}

static struct llref_case case_of(int i, bool int8)
{
	if (models[i].q8 && int8)
		return (struct llref_case){"models/arch", models[i].gguf, models[i].stem, "gelu-exact",
					   "logits.gemma2.q8_0.gelu-exact.f32", NULL};
	return (struct llref_case){"models/arch", models[i].gguf, models[i].stem, models[i].build,
				   models[i].logits, NULL};
}

static struct llref_tol tol(int i, bool int8)
{
	const char *be = getenv("BELT_TEST_BACKEND");
	bool vulkan = be && !strcmp(be, "vulkan");
	if (models[i].q8 && int8)
		return (struct llref_tol){"int8 x", false, vulkan ? 3.4 : 1.5, vulkan ? 0.23 : 0.08};
	return (struct llref_tol){be ? be : "cpu", true, models[i].tol, 0};
}

START_TEST(teacher_forced)
{
	bool ib = int8_batched(), id = int8_decode();
	if (models[_i].q8 && ib != id) {
		/* the two paths meet different references */
		struct llref_case cb = case_of(_i, ib), cd = case_of(_i, id);
		llref_teacher_forced_path(&cb, true, tol(_i, ib));
		llref_teacher_forced_path(&cd, false, tol(_i, id));
		return;
	}
	struct llref_case c = case_of(_i, id);
	llref_teacher_forced(&c, tol(_i, id), tol(_i, id));
}
END_TEST

/* the Q8_0 file with x kept in float on either backend: the deq reference */
START_TEST(teacher_forced_float)
{
	setenv("BELT_VK_Q8X", "0", 1);
	setenv("BELT_CPU_ISA", "generic", 1);
	for (int i = 0; i < N_MODELS; i++)
		if (models[i].q8) {
			struct llref_case c = case_of(i, false);
			llref_teacher_forced(&c, tol(i, false), tol(i, false));
		}
}
END_TEST

/* models/arch's file gguf on the backend of $BELT_TEST_BACKEND (the
 * CPU's when unset). */
static struct belt_model *arch_model(const char *gguf)
{
	char rel[300], err[BELT_ERR_SIZE];
	snprintf(rel, sizeof rel, "models/arch/%s", gguf);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = shared_path(rel);
	if (getenv("BELT_TEST_BACKEND"))
		mp.backend = getenv("BELT_TEST_BACKEND");
	struct belt_model *m;
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	return m;
}

/* Sliding-window layers' caches as rings that wrap: passes of 4 rows and
 * decode submissions of 4 tokens make the gemma files' window of 8 a
 * ring of 32 slots, which the 64 teacher-forced positions go round
 * twice (the global layers keep the 256 positions of the context). */
static void small_runs(struct belt_session_params *sp)
{
	sp->n_ctx = 256;
	sp->n_ubatch = 4;
	sp->chunk = 4;
}

/* gemma2 (4 layers, 0 and 2 local), gemma3 (7, all but 5 local) */
static const struct {
	int model;
	uint64_t n_layer, n_local;
} ring_models[] = {{6, 4, 2}, {7, 7, 6}};

START_TEST(ring)
{
	int i = ring_models[_i].model;
	ck_assert(strstr(models[i].gguf, "gemma"));
	/* the cache: 32 slots a local layer against 256 */
	char err[BELT_ERR_SIZE];
	struct belt_model *m = arch_model(models[i].gguf);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	small_runs(&sp);
	uint64_t bytes[2];
	for (int full = 0; full < 2; full++) {
		sp.swa_full = full;
		struct belt_session *s;
		ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
		bytes[full] = belt_session_kv_bytes(s);
		belt_session_free(s);
	}
	uint64_t nl = ring_models[_i].n_layer, loc = ring_models[_i].n_local;
	ck_assert_msg(bytes[0] * nl * 256 == bytes[1] * ((nl - loc) * 256 + loc * 32),
		      "%s: KV cache of %llu bytes with rings, %llu without", models[i].gguf,
		      (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
	belt_model_free(m);
	llref_session_tweak = small_runs;
	struct llref_case c = case_of(i, false);
	llref_teacher_forced(&c, tol(i, false), tol(i, false));
	llref_greedy(&c, tol(i, false));
}
END_TEST

static double max_diff(const float *a, const float *b, size_t n)
{
	double max = 0;
	for (size_t i = 0; i < n; i++)
		max = fmax(max, fabs((double)a[i] - b[i]));
	return max;
}

/* With rings, a run may not start where the local layers' caches no
 * longer hold the window before it: a clear error, not wrong logits;
 * from 0, near the end, or with swa_full it runs. */
START_TEST(ring_resume)
{
	char err[BELT_ERR_SIZE];
	struct belt_model *m = arch_model("gemma3.gguf");
	int32_t ids[64];
	for (int i = 0; i < 64; i++)
		ids[i] = 1 + (i * 37) % 200;
	size_t nv = (size_t)belt_model_n_vocab(m);
	float *a = malloc(nv * sizeof *a), *b = malloc(nv * sizeof *b);
	ck_assert(a && b);
	for (int full = 0; full < 2; full++) {
		struct belt_session_params sp;
		belt_session_params_default(&sp);
		small_runs(&sp);
		sp.swa_full = full;
		struct belt_session *s;
		ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(belt_session_eval(s, ids, 64, 0, a, err, sizeof err) == 0, "%s", err);
		/* the window of 8 and 3 rows ahead in 32 slots: back to 43 */
		int rc = belt_session_eval(s, ids + 20, 1, 20, b, err, sizeof err);
		if (full) {
			ck_assert_msg(rc == 0, "%s", err);
		} else {
			ck_assert_int_ne(rc, 0);
			ck_assert_msg(strstr(err, "position 20") && strstr(err, "sliding-window") &&
					      strstr(err, "swa_full"),
				      "%s", err);
		}
		ck_assert_msg(belt_session_eval(s, ids + 50, 14, 50, b, err, sizeof err) == 0, "%s",
			      err);
		ck_assert_msg(max_diff(a, b, nv) < 1e-4, "position 63 again: %g", max_diff(a, b, nv));
		ck_assert_msg(belt_session_eval(s, ids, 64, 0, b, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(max_diff(a, b, nv) < 1e-4, "from 0 again: %g", max_diff(a, b, nv));
		belt_session_free(s);
	}
	free(a);
	free(b);
	belt_model_free(m);
}
END_TEST

struct ids {
	int32_t id[160];
	size_t n;
};

static bool take(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text, (void)len;
	struct ids *c = ud;
	if (id >= 0 && c->n < 160)
		c->id[c->n++] = id;
	return true;
}

/* A context shift with rings: the kept tokens no longer have their
 * window in the local layers' rings, so they run again from position 0;
 * the text is the one a session keeping whole caches writes. gemma3, a
 * context of 48 (local layers: rings of 32), 150 greedy tokens. */
START_TEST(ring_shift)
{
	char err[BELT_ERR_SIZE];
	struct belt_model *m = arch_model("gemma3.gguf");
	static const int32_t prompt[] = {1, 403, 407, 261, 378, 315};
	struct ids got[2] = {{.n = 0}, {.n = 0}};
	uint32_t shifts[2];
	uint64_t bytes[2];
	for (int full = 0; full < 2; full++) {
		struct belt_session_params sp;
		belt_session_params_default(&sp);
		sp.type_k = sp.type_v = BELT_TYPE_F32;
		sp.n_ctx = 48;
		sp.n_ubatch = 4;
		sp.chunk = 4;
		sp.swa_full = full;
		struct belt_session *s;
		ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
		bytes[full] = belt_session_kv_bytes(s);
		struct belt_generate_params gp;
		belt_generate_params_default(&gp);
		gp.n_predict = 150;
		gp.stop_at_eog = false;
		gp.context_shift = true;
		gp.n_keep = 4;
		ck_assert_msg(belt_generate(s, prompt, 6, &gp, take, &got[full], err, sizeof err) == 0,
			      "%s", err);
		shifts[full] = belt_session_stats(s)->n_shifts;
		belt_session_free(s);
	}
	ck_assert_msg(bytes[0] < bytes[1], "rings: %llu bytes, whole: %llu",
		      (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
	ck_assert_uint_eq(got[0].n, 150);
	ck_assert_uint_eq(got[1].n, 150);
	ck_assert_uint_ge(shifts[0], 2);
	ck_assert_uint_eq(shifts[0], shifts[1]);
	size_t same = 0;
	while (same < 150 && got[0].id[same] == got[1].id[same])
		same++;
	ck_assert_msg(same == 150, "with rings the text differs at token %zu (%d against %d)", same,
		      same < 150 ? got[0].id[same] : -1, same < 150 ? got[1].id[same] : -1);
	belt_model_free(m);
}
END_TEST

/* A file name for this process in $TMPDIR (else /tmp): belt-PID-STEM.gguf,
 * STEM as printf formats it. */
static void tmp_gguf(char *out, size_t n, const char *fmt, ...)
{
	char stem[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(stem, sizeof stem, fmt, ap);
	va_end(ap);
	const char *tmp = getenv("TMPDIR");
	snprintf(out, n, "%s/belt-%d-%s.gguf", tmp && *tmp ? tmp : "/tmp", (int)getpid(), stem);
}

/* Logits of a synthetic llama at 12 positions, one token at a time;
 * arch: general.architecture (NULL: llama; any other name: llama's
 * tensors and keys under that name). */
static void synth_logits_of(const char *arch, const char *scaling, float factor, float *out,
			    size_t n_vocab)
{
	struct synth_shape sh;
	synth_default(&sh);
	sh.arch = arch;
	sh.rope_scaling = scaling;
	sh.rope_factor = factor;
	char path[512], err[BELT_ERR_SIZE];
	tmp_gguf(path, sizeof path, "archs-%s-%s", arch ? arch : "llama", scaling ? scaling : "none");
	ck_assert_msg(synth_write(&sh, path, err, sizeof err) == 0, "%s", err);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	mp.n_threads = 2;
	if (getenv("BELT_TEST_BACKEND"))
		mp.backend = getenv("BELT_TEST_BACKEND");
	struct belt_model *m;
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq((size_t)belt_model_n_vocab(m), n_vocab);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.type_k = sp.type_v = BELT_TYPE_F32; /* a scaling's effect, not the cache's */
	struct belt_session *s;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	for (uint32_t p = 0; p < 12; p++) {
		int32_t id = (int32_t)(5 + 17 * p % 250);
		ck_assert_msg(belt_session_eval(s, &id, 1, p, out + p * n_vocab, err, sizeof err) == 0,
			      "%s", err);
	}
	belt_session_free(s);
	belt_model_free(m);
	unlink(path);
}

static void synth_logits(const char *scaling, float factor, float *out, size_t n_vocab)
{
	synth_logits_of(NULL, scaling, factor, out, n_vocab);
}

/* An architecture registered by the program itself (no module arch-NAME
 * on the plugin path, no NAME.yaml on the arch path) is found when a
 * model names it: llama's description under another name gives llama's
 * logits bit for bit. */
START_TEST(registered_arch)
{
	static char yaml[16384];
	/* llama.yaml in the arch path's first folder, else the source tree's */
	char file[4096];
	const char *ap = getenv("BELT_ARCH_PATH");
	if (ap && *ap)
		snprintf(file, sizeof file, "%.*s/llama.yaml", (int)strcspn(ap, ":"), ap);
	else
		snprintf(file, sizeof file, "%s/llama.yaml", BELT_SRC_ARCH_DIR);
	FILE *f = fopen(file, "rb");
	ck_assert_msg(f, "%s: cannot open", file);
	size_t n = fread(yaml, 1, sizeof yaml - 1, f);
	fclose(f);
	ck_assert(n > 0 && n < sizeof yaml - 1);
	yaml[n] = 0;
	char *a = strstr(yaml, "\narch: llama\n");
	ck_assert_msg(a, "llama.yaml: no line 'arch: llama'");
	memmove(a + 15, a + 12, strlen(a + 12) + 1); /* "llama" -> "llamareg" */
	memcpy(a + 7, "llamareg", 8);
	static struct belt_arch_ops ops = {.abi = BELT_ARCH_ABI, .name = "llamareg",
					   .source = "registered llamareg.yaml"};
	ops.yaml = yaml;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_registry_add_arch(belt_registry_global(), &ops, err, sizeof err) == 0,
		      "%s", err);
	size_t nv = 300, sz = 12 * nv;
	float *plain = malloc(sz * sizeof *plain), *reg = malloc(sz * sizeof *reg);
	ck_assert(plain && reg);
	synth_logits(NULL, 0, plain, nv);
	synth_logits_of("llamareg", NULL, 0, reg, nv);
	ck_assert_msg(!memcmp(plain, reg, sz * sizeof *plain),
		      "the registered architecture's logits differ from llama's");
	free(plain);
	free(reg);
	/* and an unknown one's error lists it among those supported */
	struct synth_shape sh;
	synth_default(&sh);
	sh.arch = "nosucharch";
	char path[512];
	tmp_gguf(path, sizeof path, "archs-nosucharch");
	ck_assert_msg(synth_write(&sh, path, err, sizeof err) == 0, "%s", err);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	struct belt_model *m = NULL;
	ck_assert_int_ne(belt_model_load(&mp, &m, err, sizeof err), 0);
	unlink(path);
	ck_assert_msg(strstr(err, "unknown architecture 'nosucharch'") && strstr(err, "llamareg"),
		      "%s", err);
}
END_TEST

/* Linear rope scaling (no llama.cpp reference here): factor 1 is the
 * unscaled model bit for bit; factor 2 keeps position 0 (no rotation)
 * and changes every later one. The scaled rotation itself is the same
 * float formula as rope_ff's, which check_archs holds to llama.cpp. */
START_TEST(rope_linear)
{
	size_t nv = 300, n = 12 * nv;
	float *plain = malloc(n * sizeof *plain), *one = malloc(n * sizeof *one),
	      *two = malloc(n * sizeof *two);
	ck_assert(plain && one && two);
	synth_logits(NULL, 0, plain, nv);
	synth_logits("linear", 1, one, nv);
	synth_logits("none", 2, two, nv);
	ck_assert_msg(!memcmp(plain, one, n * sizeof *plain), "linear factor 1 changed the logits");
	ck_assert_msg(!memcmp(plain, two, n * sizeof *plain), "type none with a factor changed them");
	synth_logits("linear", 2, two, nv);
	ck_assert_msg(!memcmp(plain, two, nv * sizeof *plain), "factor 2 changed position 0");
	for (size_t p = 1; p < 12; p++) {
		double d = 0;
		for (size_t v = 0; v < nv; v++)
			d = fmax(d, fabs((double)two[p * nv + v] - plain[p * nv + v]));
		ck_assert_msg(d > 1e-4, "factor 2 left position %zu unchanged (max %g)", p, d);
	}
	free(plain);
	free(one);
	free(two);
}
END_TEST

/* Teacher-forced logits of path (n_vocab each, n positions) on backend:
 * one batched pass, or (decode) one token at a time. */
static void tf_logits(const char *path, const char *backend, const int32_t *ids, size_t n,
		      bool decode, float *out)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	mp.n_threads = 2;
	mp.backend = backend;
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	size_t n_vocab = (size_t)belt_model_n_vocab(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	/* llama.cpp's references ran with an F32 K/V cache (arch/README.md) */
	sp.type_k = sp.type_v = BELT_TYPE_F32;
	struct belt_session *s;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	if (decode)
		for (size_t p = 0; p < n; p++)
			ck_assert_msg(belt_session_eval(s, &ids[p], 1, (uint32_t)p, out + p * n_vocab,
							err, sizeof err) == 0,
				      "%s", err);
	else
		ck_assert_msg(belt_session_eval_all(s, ids, n, 0, out, err, sizeof err) == 0, "%s",
			      err);
	belt_session_free(s);
	belt_model_free(m);
}


/* qwen3moe with quantized experts (no llama.cpp reference exists): belt
 * quantize writes it, and Vulkan's moe_matvec of each type meets the
 * CPU's (both with x in float) within 1e-3; a run where the backends
 * chose different experts would differ by about 20 (the README's
 * variants). Run with BELT_TEST_BACKEND=vulkan (archs-vulkan.sh). */
static const char *const moe_types[] = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};

START_TEST(moe_quantized)
{
	setenv("BELT_VK_Q8X", "0", 1);
	setenv("BELT_CPU_ISA", "generic", 1);
	char out[512], err[BELT_ERR_SIZE];
	tmp_gguf(out, sizeof out, "moe-%s", moe_types[_i]);
	struct belt_quantize_params qp = {.in = shared_path("models/arch/qwen3moe.gguf"), .out = out,
					  .target = belt_quant_target_find(moe_types[_i]),
					  .pure = true, .n_threads = 2};
	ck_assert_ptr_nonnull(qp.target);
	struct belt_quantize_stats st;
	ck_assert_msg(belt_quantize_file(&qp, &st, err, sizeof err) == 0, "%s", err);
	int32_t ids[64];
	for (int i = 0; i < 64; i++)
		ids[i] = i ? 3 + (i * 37) % 500 : 1;
	size_t n = 64 * 512;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	ck_assert(a && b);
	tf_logits(out, "cpu", ids, 64, false, a);
	tf_logits(out, "vulkan", ids, 64, false, b);
	double max = max_diff(a, b, n);
	printf("qwen3moe %-7s experts: vulkan vs cpu, float x, 64 positions batched: max %.3g "
	       "(tolerance 1e-3)\n", moe_types[_i], max);
	ck_assert_msg(max <= 1e-3, "qwen3moe %s: vulkan and cpu differ by %g", moe_types[_i], max);
	free(a);
	free(b);
	unlink(out);
}
END_TEST

/* Synthetic files of belt-synth's layouts (no llama.cpp reference): the
 * Vulkan backend's logits, batched and one token at a time, equal the
 * CPU's batched ones, x in float on both, within 1e-4 (float order only; a run where the backends picked
 * different experts would differ by whole units). qwen3moe at a larger
 * shape than the shipped file's: 32 experts of 256, 4 used per token, in
 * F32, Q8_0 and Q4_K. The K-quants in other layouts put matvec_fused's
 * K-quant units through its fusions: NEOX rope and biases (qwen2 Q4_K),
 * gelu gating and the post-norms' adds (gemma2 Q5_K), views of fused
 * tensors converted to the GPU layout (phi3 Q6_K), head norms (qwen3
 * IQ4_XS). */
static const struct {
	const char *arch, *type;
} synth_cases[] = {
	{"qwen2", "f32"},    {"qwen3", "f32"},	  {"phi3", "f32"},     {"gemma2", "f32"},
	{"gemma3", "f32"},   {"qwen3moe", "f32"}, {"qwen3moe", "q8_0"}, {"qwen3moe", "q4_k"},
	{"qwen2", "q4_k"},   {"gemma2", "q5_k"},  {"phi3", "q6_k"},	{"qwen3", "iq4_xs"},
};

START_TEST(synthetic_vulkan_vs_cpu)
{
	setenv("BELT_VK_Q8X", "0", 1);
	setenv("BELT_CPU_ISA", "generic", 1);
	struct synth_shape sh;
	synth_default(&sh);
	sh.arch = synth_cases[_i].arch;
	sh.n_embd = 256;
	sh.n_head = 4;
	sh.n_head_kv = 2;
	sh.n_ff = 512;
	sh.n_layer = 3;
	sh.n_vocab = 512;
	sh.n_ctx = 256;
	sh.n_expert = 32;
	sh.n_expert_used = 4;
	sh.n_ff_exp = 256;
	sh.seed = 7;
	sh.wtype = BELT_TYPE_F32;
	for (int t = 0; t < BELT_TYPE_COUNT; t++)
		if (belt_type_name(t) && !strcasecmp(belt_type_name(t), synth_cases[_i].type))
			sh.wtype = (enum belt_type)t;
	char path[512], err[BELT_ERR_SIZE];
	tmp_gguf(path, sizeof path, "synth-%s-%s", sh.arch, synth_cases[_i].type);
	ck_assert_msg(synth_write(&sh, path, err, sizeof err) == 0, "%s", err);
	int32_t ids[64];
	for (int i = 0; i < 64; i++)
		ids[i] = i ? 3 + (i * 37) % 500 : 1;
	size_t n = 64 * (size_t)sh.n_vocab;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	ck_assert(a && b);
	float *c = malloc(n * sizeof *c);
	ck_assert(c);
	tf_logits(path, "cpu", ids, 64, false, a);
	tf_logits(path, "vulkan", ids, 64, false, b);
	tf_logits(path, "vulkan", ids, 64, true, c);
	double mag = 0;
	for (size_t i = 0; i < n; i++)
		mag = fmax(mag, fabs((double)a[i]));
	double batched = max_diff(a, b, n), decode = max_diff(a, c, n);
	printf("synthetic %-8s %-5s: vulkan vs cpu, float x, 64 positions: batched max %.3g, "
	       "decode max %.3g (tolerance 1e-4; largest logit %.3g)\n", sh.arch,
	       synth_cases[_i].type, batched, decode, mag);
	ck_assert_msg(mag > 0.1, "synthetic %s: logits near zero, the comparison means nothing",
		      sh.arch);
	ck_assert_msg(batched <= 1e-4 && decode <= 1e-4,
		      "synthetic %s %s: vulkan and cpu differ by %g (batched), %g (decode)", sh.arch,
		      synth_cases[_i].type, batched, decode);
	/* the types whose decode takes x as int8 (where the device can): that
	 * path too, against the same float logits, within the rounding of x
	 * to int8 (a wrong scale or row would be off by the logits' size):
	 * 2% of the largest logit; not qwen3moe, whose router may then pick
	 * other experts */
	const char *t = synth_cases[_i].type;
	if (strcmp(sh.arch, "qwen3moe") &&
	    (!strcmp(t, "q4_k") || !strcmp(t, "q5_k") || !strcmp(t, "q6_k"))) {
		unsetenv("BELT_VK_Q8X");
		tf_logits(path, "vulkan", ids, 64, true, c);
		setenv("BELT_VK_Q8X", "0", 1);
		double int8 = max_diff(a, c, n), tol = 0.02 * mag;
		printf("synthetic %-8s %-5s: vulkan decode with int8 x where it has it: max %.3g "
		       "(tolerance %.3g)\n", sh.arch, t, int8, tol);
		ck_assert_msg(int8 <= tol, "synthetic %s %s: int8 x decode differs by %g", sh.arch,
			      t, int8);
	}
	free(c);
	free(a);
	free(b);
	unlink(path);
}
END_TEST

/* belt_session_cost (what belt bench's bandwidth line divides by) counts
 * the experts a token uses, not the whole stack: synth's default qwen3moe
 * (64 wide, 2 layers, kv 32, head 16, 8 experts of 32, 2 used, vocab
 * 300, F32) reads an embedding row, per layer its norms, q/k/v/o, the
 * router and 3 x 2 expert matrices, then the head. */
START_TEST(moe_cost)
{
	struct synth_shape sh;
	synth_default(&sh);
	sh.arch = "qwen3moe";
	char path[512], err[BELT_ERR_SIZE];
	tmp_gguf(path, sizeof path, "moecost");
	ck_assert_msg(synth_write(&sh, path, err, sizeof err) == 0, "%s", err);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	struct belt_model *m;
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	struct belt_session *s;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	uint32_t cmds;
	uint64_t bytes;
	belt_session_cost(s, &cmds, &bytes);
	const uint64_t E = 64, KV = 32, HD = 16, FFE = 32, NE = 8, NU = 2, V = 300;
	uint64_t layer = E + E * E + 2 * E * KV + 2 * HD + E * E + E + E * NE + 3 * NU * E * FFE;
	uint64_t want = 4 * (E + 2 * layer + E + E * V);
	ck_assert_msg(bytes == want, "weight bytes per token %llu, expected %llu (all experts: %llu)",
		      (unsigned long long)bytes, (unsigned long long)want,
		      (unsigned long long)(want + 4 * 2 * 3 * (NE - NU) * E * FFE));
	belt_session_free(s);
	belt_model_free(m);
	unlink(path);
}
END_TEST

START_TEST(greedy)
{
	struct llref_case c = case_of(_i, int8_decode());
	llref_greedy(&c, tol(_i, int8_decode()));
}
END_TEST

int main(void)
{
	/* The references' tolerances hold for float activations
	 * (models/arch/README.md); the Vulkan backend's batched products on
	 * matrix units round x to float16 (doc/vulkan.md), so these
	 * comparisons run its plain shaders. check_backend_vulkan holds the
	 * matrix units to their own bounds. */
	setenv("BELT_VK_COOPMAT", "0", 1);
	Suite *su = suite_create("archs");
	TCase *tc = tcase_create("models/arch");
	tcase_set_timeout(tc, 0);
	tcase_add_loop_test(tc, teacher_forced, 0, N_MODELS);
	tcase_add_loop_test(tc, greedy, 0, N_MODELS);
	tcase_add_test(tc, teacher_forced_float);
	tcase_add_loop_test(tc, ring, 0, (int)(sizeof ring_models / sizeof ring_models[0]));
	tcase_add_test(tc, ring_resume);
	tcase_add_test(tc, ring_shift);
	suite_add_tcase(su, tc);
	/* belt-synth's files: no llama.cpp reference (CK_RUN_CASE=synthetic) */
	TCase *ts = tcase_create("synthetic");
	tcase_set_timeout(ts, 0);
	tcase_add_test(ts, rope_linear);
	tcase_add_test(ts, registered_arch);
	tcase_add_test(ts, moe_cost);
	const char *be = getenv("BELT_TEST_BACKEND");
	if (be && !strcmp(be, "vulkan")) {
		tcase_add_loop_test(ts, moe_quantized, 0,
				    (int)(sizeof moe_types / sizeof moe_types[0]));
		tcase_add_loop_test(ts, synthetic_vulkan_vs_cpu, 0,
				    (int)(sizeof synth_cases / sizeof synth_cases[0]));
	}
	suite_add_tcase(su, ts);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
