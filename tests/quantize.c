/* belt quantize (core/quant): every type's round trip through the
 * independent dequantizer of tests/quant_ref.h, byte equality with the
 * files llama.cpp's llama-quantize made ($BELT_SHARED_DIR/models/quant),
 * the mix rules on synthetic shapes, and the CLI under misuse and
 * malformed input. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/quant.h"
#include "quant_ref.h"
#include "ref.h"
#include "synth/synth.h"

static char dir[256];

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int n;
	char *out = buf[n++ & 7];
	snprintf(out, sizeof buf[0], "%s/%s", dir, name);
	return out;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/belt-quantize-XXXXXX");
	ck_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- round trip ---- */

static uint64_t rng = 88172645463325252ull;

static double uniform01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
	return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

/* n values like trained weights: Gaussian, a scale per 32 that varies by
 * e^(0.5 N), and one value in 64 five times larger. */
static void weights(float *x, int n)
{
	float s = 1.0f;
	for (int i = 0; i < n; i++) {
		if (i % 32 == 0)
			s = (float)exp(0.5 * gauss());
		x[i] = (float)(gauss() * s * (uniform01() < 1.0 / 64 ? 5.0 : 1.0));
	}
}

/* Each type and the relative RMS error its round trip must stay under on
 * weights() (measured, rounded up by about a fifth; doc/quantize.md). */
static const struct {
	enum belt_type t;
	double max_rel_rms;
} types[] = {
	{BELT_TYPE_Q4_0, 0.15},	 {BELT_TYPE_Q4_1, 0.12},   {BELT_TYPE_Q5_0, 0.077},
	{BELT_TYPE_Q5_1, 0.057}, {BELT_TYPE_Q8_0, 0.01},   {BELT_TYPE_Q2_K, 0.45},
	{BELT_TYPE_Q3_K, 0.24},	 {BELT_TYPE_Q4_K, 0.11},   {BELT_TYPE_Q5_K, 0.056},
	{BELT_TYPE_Q6_K, 0.031}, {BELT_TYPE_IQ4_NL, 0.12}, {BELT_TYPE_IQ4_XS, 0.125},
};
#define N_TYPES (int)(sizeof types / sizeof *types)
#define ROW 4096

static double rel_rms(const float *x, const float *y, int n)
{
	double e = 0, s = 0;
	for (int i = 0; i < n; i++) {
		e += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
		s += (double)x[i] * x[i];
	}
	return s > 0 ? sqrt(e / s) : sqrt(e);
}

/* Quantize x and decode it with quant_ref.h into y. */
static void round_trip(enum belt_type t, const float *x, float *y, int n)
{
	static uint8_t q[ROW * 4];
	ck_assert_uint_le(belt_type_row_bytes(t, (uint64_t)n), sizeof q);
	ck_assert_int_eq(belt_quantize_row(t, x, q, n), 0);
	ck_assert_int_eq(quant_ref_row(t, q, (size_t)n, y), 0);
}

START_TEST(round_trip_error)
{
	enum belt_type t = types[_i].t;
	static float x[ROW], y[ROW];
	for (int rep = 0; rep < 8; rep++) {
		weights(x, ROW);
		round_trip(t, x, y, ROW);
		double e = rel_rms(x, y, ROW);
		ck_assert_msg(e < types[_i].max_rel_rms, "%s: relative RMS error %.4f, bound %.4f",
			      belt_type_name(t), e, types[_i].max_rel_rms);
		if (getenv("BELT_QUANT_VERBOSE"))
			fprintf(stderr, "%-7s rel rms %.4f\n", belt_type_name(t), e);
	}
}
END_TEST

/* Zeros give zeros; a constant block is near-exact; values below ggml's
 * group threshold (1e-15) quantize as zero; a lone outlier stays close. */
START_TEST(round_trip_edges)
{
	enum belt_type t = types[_i].t;
	static float x[ROW], y[ROW];
	memset(x, 0, sizeof x);
	round_trip(t, x, y, ROW);
	for (int i = 0; i < ROW; i++)
		ck_assert_msg(y[i] == 0.0f, "%s: zero row gives %g at %d", belt_type_name(t), y[i], i);
	for (int i = 0; i < ROW; i++)
		x[i] = 0.75f;
	round_trip(t, x, y, ROW);
	ck_assert_msg(rel_rms(x, y, ROW) < 0.02, "%s: constant row error %.4f", belt_type_name(t),
		      rel_rms(x, y, ROW));
	for (int i = 0; i < ROW; i++)
		x[i] = (i % 3 - 1) * 1e-17f;
	round_trip(t, x, y, ROW);
	for (int i = 0; i < ROW; i++)
		ck_assert_msg(fabsf(y[i]) < 1e-15f, "%s: tiny row gives %g", belt_type_name(t), y[i]);
	weights(x, ROW);
	x[100] = 1000.0f;
	round_trip(t, x, y, ROW);
	ck_assert_msg(fabsf(y[100] - 1000.0f) < 1000.0f * 4 * types[_i].max_rel_rms,
		      "%s: outlier 1000 comes back as %g", belt_type_name(t), y[100]);
}
END_TEST

/* Q8_0 and Q4_0 with an exact bound per value: half a step (d/2, d the
 * block's scale after fp16 rounding), Q4_0's clipped top level a step. */
START_TEST(round_trip_per_value)
{
	static float x[ROW], y[ROW];
	static uint8_t q[ROW * 4];
	weights(x, ROW);
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_Q8_0, x, q, ROW), 0);
	quant_ref_row(BELT_TYPE_Q8_0, q, ROW, y);
	for (int i = 0; i < ROW; i++) {
		float d = qr_h(q + 34 * (i / 32));
		/* the levels use the scale before its fp16 rounding (2^-11) */
		ck_assert_msg(fabsf(x[i] - y[i]) <= d * (0.5f + 128.0f / 2048) + 1e-6f,
			      "q8_0 value %d", i);
	}
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_Q4_0, x, q, ROW), 0);
	quant_ref_row(BELT_TYPE_Q4_0, q, ROW, y);
	for (int i = 0; i < ROW; i++) {
		float d = fabsf(qr_h(q + 18 * (i / 32)));
		ck_assert_msg(fabsf(x[i] - y[i]) <= d * 1.01f + 1e-6f, "q4_0 value %d", i);
	}
}
END_TEST

START_TEST(row_arguments)
{
	float x[256] = {0};
	uint8_t q[512];
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_Q4_K, x, q, 32), -1);
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_F16, x, q, 32), -1);
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_Q8_K, x, q, 256), -1);
	ck_assert_int_eq(belt_quantize_row(-1, x, q, 32), -1);
	ck_assert_int_eq(belt_quantize_row(BELT_TYPE_COUNT, x, q, 32), -1);
	ck_assert(belt_quant_target_find("q4_k_m") == belt_quant_target_find("Q4_K_M"));
	ck_assert_ptr_null(belt_quant_target_find("Q4_K_L"));
	ck_assert_ptr_null(belt_quant_target_find(NULL));
}
END_TEST

/* ---- byte equality with llama-quantize ---- */

/* -1 if the files hold the same bytes, else the first offset that differs
 * (or the shorter length). */
static long first_difference(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	ck_assert_msg(fa && fb, "cannot open %s or %s", a, b);
	long off = 0, diff = -1;
	int ca, cb;
	do {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb) {
			diff = off;
			break;
		}
		off++;
	} while (ca != EOF);
	fclose(fa);
	fclose(fb);
	return diff;
}

static void quantize_ok(const char *in, const char *out, const char *target, bool pure,
			int threads)
{
	struct belt_quantize_params p = {.in = in, .out = out,
					 .target = belt_quant_target_find(target), .pure = pure,
					 .n_threads = threads};
	ck_assert_ptr_nonnull(p.target);
	char err[BELT_ERR_SIZE] = "";
	ck_assert_msg(belt_quantize_file(&p, NULL, err, sizeof err) == 0, "%s: %s", target, err);
}

static void expect_same(const char *src, const char *target, bool pure, const char *ref,
			int threads)
{
	char in[1024], want[1024];
	snprintf(in, sizeof in, "%s", shared_path(src));
	snprintf(want, sizeof want, "%s", shared_path(ref));
	const char *out = tmp("out.gguf");
	quantize_ok(in, out, target, pure, threads);
	long d = first_difference(out, want);
	ck_assert_msg(d < 0, "%s %s%s: differs from %s at byte %ld", src, target,
		      pure ? " --pure" : "", ref, d);
	unlink(out);
}

/* The 12 single-type files of quant-base, made with llama-quantize --pure
 * (Q3_K_S, Q4_K_S, Q5_K_S for the K types: belt's Q3_K, Q4_K, Q5_K). */
static const char *const pure_files[][2] = {
	{"Q4_0", "q4_0"}, {"Q4_1", "q4_1"}, {"Q5_0", "q5_0"},	  {"Q5_1", "q5_1"},
	{"Q8_0", "q8_0"}, {"Q2_K", "q2_k"}, {"Q3_K", "q3_k"},	  {"Q4_K", "q4_k"},
	{"Q5_K", "q5_k"}, {"Q6_K", "q6_k"}, {"IQ4_NL", "iq4_nl"}, {"IQ4_XS", "iq4_xs"},
};

START_TEST(same_bytes_pure)
{
	char ref[256];
	snprintf(ref, sizeof ref, "models/quant/quant-base.%s.gguf", pure_files[_i][1]);
	expect_same("models/quant/quant-base.f32.gguf", pure_files[_i][0], true, ref, 2);
}
END_TEST

START_TEST(same_bytes_mixes)
{
	expect_same("models/quant/quant-base.f32.gguf", "Q4_K_M", false,
		    "models/quant/quant-base.q4_k_m.gguf", 2);
	expect_same("models/quant/quant-base.f32.gguf", "Q5_K_M", false,
		    "models/quant/quant-base.q5_k_m.gguf", 1);
}
END_TEST

/* The real model from F16, default mixes (token_embd is tied: Q6_K). */
START_TEST(same_bytes_pycoder)
{
	static const char *const f[][2] = {{"Q4_0", "models/pycoder29M.q4_0.gguf"},
					   {"Q8_0", "models/pycoder29M.q8_0.gguf"},
					   {"Q4_K_M", "models/pycoder29M.q4_k_m.gguf"},
					   {"Q5_K_M", "models/quant/pycoder29M.q5_k_m.gguf"}};
	expect_same("models/pycoder29M.f16.gguf", f[_i][0], false, f[_i][1], 2);
}
END_TEST

/* The bytes do not depend on the thread count. */
START_TEST(threads_same_bytes)
{
	expect_same("models/quant/quant-base.f32.gguf", "Q4_K", true,
		    "models/quant/quant-base.q4_k.gguf", 7);
	expect_same("models/quant/quant-base.f32.gguf", "IQ4_XS", true,
		    "models/quant/quant-base.iq4_xs.gguf", 1);
}
END_TEST

/* ---- mix rules and fallbacks on synthetic shapes ---- */

static void synth(const char *path, struct synth_shape *s)
{
	char err[BELT_ERR_SIZE];
	ck_assert_msg(synth_write(s, path, err, sizeof err) == 0, "%s", err);
}

static enum belt_type type_of(const struct belt_gguf *g, const char *name)
{
	const struct belt_gguf_tensor *t = belt_gguf_find_tensor(g, name);
	ck_assert_msg(t != NULL, "no tensor %s", name);
	return t->type;
}

static void layer_name(char *buf, size_t n, int l, const char *what)
{
	snprintf(buf, n, "blk.%d.%s.weight", l, what);
}

/* 8 layers: Q4_K_M and Q5_K_M give attn_v and ffn_down of layers 0, 3, 6
 * and 7 (llama.cpp's use_more_bits) Q6_K; Q4_K_S gives attn_v of layers
 * 0-3 and ffn_down of layer 0 Q5_K; Q2_K gives attn_v, ffn_down and
 * attn_output Q3_K. Output is Q6_K in all; a tied token_embd too. */
START_TEST(mix_rules)
{
	struct synth_shape s;
	synth_default(&s);
	s.n_embd = 256;
	s.n_ff = 512;
	s.n_layer = 8;
	s.tied = _i == 1;
	const char *in = tmp("in.gguf"), *out = tmp("mix.gguf");
	synth(in, &s);
	static const struct {
		const char *target;
		enum belt_type base, v, down, o;
		unsigned v_layers, down_layers; /* bit l: promoted in layer l */
	} mixes[] = {
		{"Q4_K_M", BELT_TYPE_Q4_K, BELT_TYPE_Q6_K, BELT_TYPE_Q6_K, BELT_TYPE_Q4_K, 0xc9, 0xc9},
		{"Q5_K_M", BELT_TYPE_Q5_K, BELT_TYPE_Q6_K, BELT_TYPE_Q6_K, BELT_TYPE_Q5_K, 0xc9, 0xc9},
		{"Q4_K_S", BELT_TYPE_Q4_K, BELT_TYPE_Q5_K, BELT_TYPE_Q5_K, BELT_TYPE_Q4_K, 0x0f, 0x01},
		{"Q2_K", BELT_TYPE_Q2_K, BELT_TYPE_Q3_K, BELT_TYPE_Q3_K, BELT_TYPE_Q3_K, 0xff, 0xff},
		{"IQ4_XS", BELT_TYPE_IQ4_XS, BELT_TYPE_IQ4_XS, BELT_TYPE_Q5_K, BELT_TYPE_IQ4_XS, 0, 0x01},
	};
	for (size_t m = 0; m < sizeof mixes / sizeof *mixes; m++) {
		quantize_ok(in, out, mixes[m].target, false, 2);
		char err[BELT_ERR_SIZE], name[64];
		struct belt_gguf *g = belt_gguf_open(out, err, sizeof err);
		ck_assert_msg(g != NULL, "%s", err);
		ck_assert_int_eq(type_of(g, "token_embd.weight"), s.tied ? BELT_TYPE_Q6_K : mixes[m].base);
		if (!s.tied)
			ck_assert_int_eq(type_of(g, "output.weight"), BELT_TYPE_Q6_K);
		ck_assert_int_eq(type_of(g, "output_norm.weight"), BELT_TYPE_F32);
		for (int l = 0; l < 8; l++) {
			layer_name(name, sizeof name, l, "attn_v");
			ck_assert_msg(type_of(g, name) == ((mixes[m].v_layers >> l) & 1 ? mixes[m].v : mixes[m].base),
				      "%s %s: %s", mixes[m].target, name, belt_type_name(type_of(g, name)));
			layer_name(name, sizeof name, l, "ffn_down");
			ck_assert_msg(type_of(g, name) == ((mixes[m].down_layers >> l) & 1 ? mixes[m].down : mixes[m].base),
				      "%s %s: %s", mixes[m].target, name, belt_type_name(type_of(g, name)));
			layer_name(name, sizeof name, l, "attn_output");
			ck_assert_int_eq(type_of(g, name), mixes[m].o);
			layer_name(name, sizeof name, l, "attn_q");
			ck_assert_int_eq(type_of(g, name), mixes[m].base);
			layer_name(name, sizeof name, l, "attn_norm");
			ck_assert_int_eq(type_of(g, name), BELT_TYPE_F32);
		}
		const struct belt_gguf_kv *ft = belt_gguf_find(g, "general.file_type");
		ck_assert_ptr_nonnull(ft);
		ck_assert_uint_eq(ft->v.u64, belt_quant_target_find(mixes[m].target)->file_type);
		belt_gguf_close(g);
	}
}
END_TEST

static int n_warnings;

static void count_warning(void *ud, const char *msg)
{
	(void)ud;
	ck_assert(strstr(msg, "tensor '") && strstr(msg, "written as"));
	n_warnings++;
}

/* Rows of 64 take no 256 block: Q4_K falls back to Q5_0 (output to Q8_0);
 * rows of 48 take no 32 block: F16, as llama-quantize does. */
START_TEST(fallback_types)
{
	struct synth_shape s;
	synth_default(&s);
	s.n_embd = _i ? 48 : 64;
	s.n_ff = 96;
	const char *in = tmp("in.gguf"), *out = tmp("fb.gguf");
	synth(in, &s);
	struct belt_quantize_params p = {.in = in, .out = out, .n_threads = 2,
					 .target = belt_quant_target_find(_i ? "Q4_0" : "Q4_K"),
					 .warn = count_warning};
	char err[BELT_ERR_SIZE];
	n_warnings = 0;
	ck_assert_msg(belt_quantize_file(&p, NULL, err, sizeof err) == 0, "%s", err);
	struct belt_gguf *g = belt_gguf_open(out, err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	enum belt_type mat = _i ? BELT_TYPE_F16 : BELT_TYPE_Q5_0;
	ck_assert_int_eq(type_of(g, "output.weight"), _i ? BELT_TYPE_F16 : BELT_TYPE_Q8_0);
	ck_assert_int_eq(type_of(g, "token_embd.weight"), mat);
	ck_assert_int_eq(type_of(g, "blk.0.attn_q.weight"), mat);
	ck_assert_int_eq(type_of(g, "blk.1.ffn_down.weight"), _i ? BELT_TYPE_Q4_0 : BELT_TYPE_Q5_0);
	/* Q4_K: token_embd and 7 matrices a layer; Q4_0: also output, but
	 * not ffn_down (rows of 96) */
	ck_assert_int_eq(n_warnings, _i ? 2 + 6 * 2 : 1 + 7 * 2);
	belt_gguf_close(g);
}
END_TEST

/* ---- bad input ---- */

static uint8_t *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *b = malloc(*n);
	ck_assert(b && fread(b, 1, *n, f) == *n);
	fclose(f);
	return b;
}

static void write_all(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert(f && fwrite(b, 1, n, f) == n);
	fclose(f);
}

/* A NaN or an infinity in a weight is an error naming the tensor and row,
 * not a block of garbage. */
START_TEST(non_finite_weight)
{
	struct synth_shape s;
	synth_default(&s);
	const char *in = tmp("in.gguf");
	synth(in, &s);
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(in, err, sizeof err);
	ck_assert_ptr_nonnull(g);
	const struct belt_gguf_tensor *t = belt_gguf_find_tensor(g, "blk.1.ffn_up.weight");
	size_t at = (size_t)(g->data_offset + t->offset + 3 * 64 * 4 + 8);
	belt_gguf_close(g);
	size_t n;
	uint8_t *b = read_all(in, &n);
	float bad = _i ? INFINITY : NAN;
	memcpy(b + at, &bad, 4);
	write_all(in, b, n);
	free(b);
	struct belt_quantize_params p = {.in = in, .out = tmp("out.gguf"), .n_threads = 2,
					 .target = belt_quant_target_find("Q8_0")};
	ck_assert_int_eq(belt_quantize_file(&p, NULL, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.1.ffn_up.weight") && strstr(err, "row 3") &&
			      strstr(err, "NaN or infinite"), "%s", err);
	ck_assert_int_ne(access(p.out, F_OK), 0);
}
END_TEST

/* Deterministic mutations of a small model's header and tensor table, and
 * truncations: each run ends in a result or a message, never a crash. */
START_TEST(malformed_inputs)
{
	struct synth_shape s;
	synth_default(&s);
	const char *in = tmp("in.gguf"), *bad = tmp("bad.gguf"), *out = tmp("out.gguf");
	synth(in, &s);
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(in, err, sizeof err);
	ck_assert_ptr_nonnull(g);
	size_t data = (size_t)g->data_offset;
	belt_gguf_close(g);
	size_t n;
	uint8_t *orig = read_all(in, &n), *b = malloc(n);
	ck_assert_ptr_nonnull(b);
	uint64_t r = 12345;
	int failed = 0;
	for (int it = 0; it < 300; it++) {
		memcpy(b, orig, n);
		size_t len = n;
		for (int k = 0; k < 1 + it % 4; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly the tensor table just before the data */
			size_t span = it % 3 ? 1500 : data;
			size_t pos = data - 1 - (size_t)((r >> 33) % span);
			b[pos] = (uint8_t)(it % 5 == 0 ? 0xff : r >> 24);
		}
		if (it % 7 == 0)
			len = (size_t)((r >> 20) % n);
		write_all(bad, b, len);
		struct belt_quantize_params p = {.in = bad, .out = out, .n_threads = 2,
						 .target = belt_quant_target_find(it % 2 ? "Q4_0" : "Q4_K_M")};
		err[0] = 0;
		if (belt_quantize_file(&p, NULL, err, sizeof err)) {
			ck_assert_msg(err[0] && !strchr(err, '\n'), "iteration %d: message '%s'", it, err);
			failed++;
		}
	}
	ck_assert_int_gt(failed, 100);
	free(b);
	free(orig);
}
END_TEST

/* ---- the command line ---- */

struct result {
	int status;
	char err[8192];
};

static const char *belt_bin(void)
{
	const char *b = getenv("BELT_BIN");
	return b ? b : "./belt";
}

static void run(struct result *r, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "'%s' quantize %s >/dev/null 2>'%s'", belt_bin(), args,
		 tmp("stderr"));
	int st = system(cmd);
	ck_assert(WIFEXITED(st));
	r->status = WEXITSTATUS(st);
	FILE *f = fopen(tmp("stderr"), "rb");
	size_t k = f ? fread(r->err, 1, sizeof r->err - 1, f) : 0;
	r->err[k] = 0;
	if (f)
		fclose(f);
}

static void expect_error(const struct result *r, int code, const char *want)
{
	ck_assert_msg(r->status == code, "exit %d, expected %d; stderr: %s", r->status, code, r->err);
	char *nl = strchr(r->err, '\n');
	ck_assert_msg(nl && nl[1] == 0, "expected one line, got: %s", r->err);
	ck_assert_msg(!strncmp(r->err, "belt quantize: ", 15), "no prefix: %s", r->err);
	ck_assert_msg(strstr(r->err, want), "expected '%s' in: %s", want, r->err);
}

START_TEST(cli_misuse)
{
	struct result r;
	char f32[1024], q4[1024];
	snprintf(f32, sizeof f32, "%s", shared_path("models/quant/quant-base.f32.gguf"));
	snprintf(q4, sizeof q4, "%s", shared_path("models/quant/quant-base.q4_0.gguf"));
	char out[1024];
	snprintf(out, sizeof out, "%s", tmp("o.gguf"));
	run(&r, "'%s' '%s' Q7_K", f32, out);
	expect_error(&r, 2, "unknown type 'Q7_K': expected one of Q4_0");
	run(&r, "'%s/missing.gguf' '%s' Q4_0", dir, out);
	expect_error(&r, 1, "missing.gguf: cannot open");
	run(&r, "'%s' '%s' Q4_0", q4, out);
	expect_error(&r, 1, "is already q4_0: belt quantize reads F32, F16 or BF16");
	run(&r, "'%s' '%s/no/such/dir/o.gguf' Q4_0", f32, dir);
	expect_error(&r, 1, "cannot create");
	run(&r, "'%s' '%s' Q4_0 0", f32, out);
	expect_error(&r, 2, "THREADS: expected an integer in 1..64");
	run(&r, "'%s' '%s'", f32, out);
	expect_error(&r, 2, "expected IN.gguf OUT.gguf TYPE [THREADS], got 2 arguments");
	run(&r, "--bogus '%s' '%s' Q4_0", f32, out);
	expect_error(&r, 2, "unknown option '--bogus'");
	write_all(tmp("junk.gguf"), (const uint8_t *)"GGUF\3\0\0\0junk", 12);
	run(&r, "'%s' '%s' Q4_0", tmp("junk.gguf"), out);
	expect_error(&r, 1, "junk.gguf");
	ck_assert_int_ne(access(out, F_OK), 0);
	/* and one that works: a one-line summary, the reference's bytes */
	run(&r, "--pure '%s' '%s' q8_0 2", f32, out);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "39 tensors (30 quantized)") && strchr(r.err, '\n')[1] == 0,
		      "%s", r.err);
	ck_assert_int_lt(first_difference(out, shared_path("models/quant/quant-base.q8_0.gguf")), 0);
}
END_TEST

/* belt info: bytes and bits per weight per type, and of the matrices
 * and all tensors, as the reference README's inventory gives them. */
START_TEST(info_bits_per_weight)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "'%s' info -m '%s' >'%s' 2>&1", belt_bin(),
		 shared_path("models/quant/quant-base.q4_k_m.gguf"), tmp("info"));
	ck_assert_int_eq(system(cmd), 0);
	static char text[1 << 16];
	FILE *f = fopen(tmp("info"), "rb");
	ck_assert_ptr_nonnull(f);
	text[fread(text, 1, sizeof text - 1, f)] = 0;
	fclose(f);
	ck_assert_msg(strstr(text, "bits per weight: 4.8570 (matrices), 4.8753 (all)"), "%s", text);
	ck_assert_msg(strstr(text, "q6_k       5 tensors       0.46 MiB       483840 bytes   6.5625 bpw"),
		      "%s", text);
	ck_assert_msg(strstr(text, "q4_k      25 tensors       1.51 MiB      1585152 bytes   4.5000 bpw"),
		      "%s", text);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("quantize");
	TCase *tc = tcase_create("rows");
	tcase_add_loop_test(tc, round_trip_error, 0, N_TYPES);
	tcase_add_loop_test(tc, round_trip_edges, 0, N_TYPES);
	tcase_add_test(tc, round_trip_per_value);
	tcase_add_test(tc, row_arguments);
	suite_add_tcase(s, tc);
	tc = tcase_create("llama.cpp bytes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, same_bytes_pure, 0, (int)(sizeof pure_files / sizeof *pure_files));
	tcase_add_test(tc, same_bytes_mixes);
	tcase_add_loop_test(tc, same_bytes_pycoder, 0, 4);
	tcase_add_test(tc, threads_same_bytes);
	suite_add_tcase(s, tc);
	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, mix_rules, 0, 2);
	tcase_add_loop_test(tc, fallback_types, 0, 2);
	tcase_add_loop_test(tc, non_finite_weight, 0, 2);
	tcase_add_test(tc, malformed_inputs);
	tcase_add_test(tc, cli_misuse);
	tcase_add_test(tc, info_bits_per_weight);
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
