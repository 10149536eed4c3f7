/* Check suite for the CPU backend (plugins/backend-cpu).
 *
 * Every kernel runs through the backend's ops, as the module built in
 * plugins/ provides them (buffers, a hand-built
 * belt_table, prepare, run, read back) and is compared with a naive
 * reference written here in double precision; quantized blocks are decoded
 * here from the byte layout in doc/ops.md, independently of the backend.
 * Each test runs for every configuration: the portable path, the AVX2 and
 * the AVX-512 paths (where the CPU has them), with 1, 2 and 3 threads.
 *
 * Tolerances, by what is compared:
 *  - matvec F32/F16/BF16, and Q8_0/Q4_0 on the portable (float) path:
 *    |y - ref| <= 1e-5 * sum_j |W[r][j] x[j]|  (float accumulation).
 *  - matvec Q8_0/Q4_0/Q4_K/Q6_K on the AVX2/AVX-512 paths, which quantize
 *    x to int8 per block of 32 (scale amax/127 rounded to fp16, as ggml's
 *    Q8_0): each x[j] is off by at most amax_block(j) * (1/254 + 1/2048),
 *    so |y - ref| <= sum_j |W[r][j]| * that + 1e-5 * sum_j |W[r][j] x[j]|.
 *    The other types (Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q5_K, IQ4_XS)
 *    alike, against quant_ref.h's floats (ggml's dequantization); the
 *    batched product against decode's matvec: 1e-5 * sum_j |W[r][j] x[j]|.
 *    BELT_TEST_REPORT=1 CK_FORK=no prints the worst error seen per type.
 *  - end to end, each ../shared/models/quant file against llama.cpp's
 *    logits on its dequantized weights: see test_quant_base_logits.
 *  - embed: bit-exact with the dequantized row; add: bit-exact.
 *  - rmsnorm, silu_mul, attention: 1e-5 relative (plus 1e-6 absolute).
 *  - rope: 2e-6 * (1 + pos) absolute on inputs in [-1, 1] (float angle).
 *  - silu: 1e-6 relative; top_k: ids exactly, probabilities 1e-5
 *    relative (silu_topk_check.h).
 *  - threads: results with 2 and 3 threads are bit-identical to 1 thread.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ltdl.h>
#include <sys/mman.h>

#include "belt/backend.h"
#include "belt/belt.h"
#include "belt/error.h"
#include "belt/plugin.h"
#include "belt/types.h"
#include "cmd.h"
#include "copy_check.h"
#include "mask_check.h"
#include "silu_topk_check.h"
#include "kquant_ref.h"
#include "quant_ref.h"
#include "ref.h"

/* The backend under test: the real module, loaded through the registry
 * from $BELT_PLUGIN_PATH (set by make check to the build's plugins/). */
static const struct belt_backend_ops *B;

/* ---- configurations ---- */

struct config {
	const char *isa;
	int n_threads;
};

static const struct config configs[] = {
	{"generic", 1}, {"generic", 2}, {"generic", 3},
	{"avx2", 1},	{"avx2", 2},	{"avx2", 3},
	{"avx512", 1},	{"avx512", 2},	{"avx512", 3},
};
#define N_CONFIGS ((int)(sizeof configs / sizeof configs[0]))

static char err[BELT_ERR_SIZE];

/* A backend context for configuration i, or NULL when this CPU lacks its
 * instruction set or BELT_TEST_ISA names another. */
static void *open_config(int i)
{
	/* BELT_TEST_ISA: this instruction set's configurations only (the
	 * memcheck stage runs two processes side by side; the contract
	 * case's tests open the generic set, so run that one's with it) */
	const char *only = getenv("BELT_TEST_ISA");
	if (only && *only && strcmp(only, configs[i].isa))
		return NULL;
	setenv("BELT_CPU_ISA", configs[i].isa, 1);
	struct belt_backend_options opt = {.n_threads = configs[i].n_threads,
					   .device = -1};
	void *ctx = NULL;
	int rc = B->create(&opt, &ctx, err, sizeof err);
	unsetenv("BELT_CPU_ISA");
	if (rc) {
		ck_assert_msg(strcmp(configs[i].isa, "generic") != 0,
			      "create: %s", err);
		return NULL;
	}
	return ctx;
}

static bool quantizes_x(int i)
{
	return strcmp(configs[i].isa, "generic") != 0;
}

/* ---- random numbers (fixed seed) ---- */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
	rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}

static uint32_t rng_u32(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* uniform in [-1, 1) */
static float rng_f(void)
{
	return (float)((double)rng_u32() / 2147483648.0 - 1.0);
}

static void fill(float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = rng_f();
}

/* ---- buffers and commands ---- */

static struct belt_buffer *buf_new(void *ctx, uint64_t size)
{
	struct belt_buffer *b = NULL;
	ck_assert_msg(B->buffer_create(ctx, BELT_BUFFER_SCRATCH, size, &b, err,
				       sizeof err) == 0,
		      "buffer_create: %s", err);
	return b;
}

static struct belt_buffer *buf_from(void *ctx, const void *data,
				    uint64_t size)
{
	struct belt_buffer *b = buf_new(ctx, size);
	ck_assert_msg(B->buffer_write(ctx, b, 0, data, size, err,
				      sizeof err) == 0,
		      "buffer_write: %s", err);
	return b;
}

static void buf_get(void *ctx, struct belt_buffer *b, uint64_t off,
		    void *dst, uint64_t size)
{
	ck_assert_msg(B->buffer_read(ctx, b, off, dst, size, err,
				     sizeof err) == 0,
		      "buffer_read: %s", err);
}

static void buf_put(void *ctx, struct belt_buffer *b, uint64_t off,
		    const void *src, uint64_t size)
{
	ck_assert_msg(B->buffer_write(ctx, b, off, src, size, err,
				      sizeof err) == 0,
		      "buffer_write: %s", err);
}

static struct belt_cmd cmd_new(void *ctx, const char *op, int wtype,
			       const char *label)
{
	struct belt_cmd c;
	memset(&c, 0, sizeof c);
	c.kernel = B->kernel_find(ctx, op, "default", wtype);
	ck_assert_msg(c.kernel != NULL, "no kernel %s for type %d", op, wtype);
	c.label = label;
	c.layer = -1;
	c.patch = op_patch(op);
	return c;
}

static void prepare(void *ctx, struct belt_table *t)
{
	ck_assert_msg(B->table_prepare(ctx, t, err, sizeof err) == 0,
		      "table_prepare: %s", err);
}

static void run(void *ctx, struct belt_table *t, uint32_t pos, uint32_t n,
		uint32_t flags)
{
	ck_assert_msg(B->table_run(ctx, t, pos, n, flags, err, sizeof err) ==
			      0,
		      "table_run: %s", err);
}

/* ---- weights: random rows of each type, decoded independently ---- */

static const int wtypes[] = {BELT_TYPE_F32,  BELT_TYPE_F16,  BELT_TYPE_BF16,
			     BELT_TYPE_Q8_0, BELT_TYPE_Q4_0, BELT_TYPE_Q4_K,
			     BELT_TYPE_Q6_K, BELT_TYPE_Q4_1, BELT_TYPE_Q5_0,
			     BELT_TYPE_Q5_1, BELT_TYPE_IQ4_NL, BELT_TYPE_Q2_K,
			     BELT_TYPE_Q3_K, BELT_TYPE_Q5_K, BELT_TYPE_IQ4_XS};
#define N_WTYPES 15

/* The types decoded by quant_ref.h here (the others by the formulas
 * below, as before it existed). */
static bool via_quant_ref(int t)
{
	return t != BELT_TYPE_F32 && t != BELT_TYPE_F16 && t != BELT_TYPE_BF16 &&
	       t != BELT_TYPE_Q8_0 && t != BELT_TYPE_Q4_0 && t != BELT_TYPE_Q4_K &&
	       t != BELT_TYPE_Q6_K;
}

/* Where a block of type t keeps its fp16 scales (block_scales for the
 * first types): the first at byte *at, returns how many. */
static int scales_at(int t, size_t *at)
{
	switch (t) {
	case BELT_TYPE_Q4_1: case BELT_TYPE_Q5_1: case BELT_TYPE_Q5_K:
		*at = 0;
		return 2; /* d, m (dmin) */
	case BELT_TYPE_Q5_0: case BELT_TYPE_IQ4_NL: case BELT_TYPE_IQ4_XS:
		*at = 0;
		return 1;
	case BELT_TYPE_Q2_K:
		*at = 80;
		return 2;
	case BELT_TYPE_Q3_K:
		*at = 108;
		return 1;
	default:
		return block_scales(t, at);
	}
}

static bool is_quant(int t)
{
	return belt_type_block(t) > 1;
}

/* The smallest row length > 1 of whole blocks: 32 for Q8_0/Q4_0, 256 for
 * the K-quants, 1 for float types. */
static int blk_of(int t)
{
	return (int)belt_type_block(t);
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

/* m rows of k random weights of type t. */
static uint8_t *weights_new(int t, int k, int m, size_t *row_bytes)
{
	size_t rb = belt_type_row_bytes(t, (uint64_t)k);
	ck_assert_uint_gt(rb, 0);
	uint8_t *w = malloc(rb * (size_t)m);
	ck_assert_ptr_nonnull(w);
	for (int r = 0; r < m; r++) {
		uint8_t *row = w + rb * (size_t)r;
		for (int j = 0; j < k; j++) {
			float v = rng_f();
			uint16_t h;
			switch (t) {
			case BELT_TYPE_F32:
				memcpy(row + 4 * j, &v, 4);
				break;
			case BELT_TYPE_F16:
				h = belt_f32_to_fp16(v);
				memcpy(row + 2 * j, &h, 2);
				break;
			case BELT_TYPE_BF16:
				h = belt_f32_to_bf16(v);
				memcpy(row + 2 * j, &h, 2);
				break;
			}
		}
		if (is_quant(t)) {
			size_t bb = belt_type_block_bytes(t);
			for (int b = 0; b < k / blk_of(t); b++) {
				uint8_t *blk = row + bb * (size_t)b;
				for (size_t j = 0; j < bb; j++)
					blk[j] = (uint8_t)rng_u32();
				/* the fp16 scales: d (and a min's) */
				float big = blk_of(t) == 32 ? 0.05f : 0.005f;
				size_t at;
				int n = scales_at(t, &at);
				for (int i = 0; i < n; i++, at += 2) {
					uint16_t d = belt_f32_to_fp16(
						big * (0.02f + rng_f() + 1.0f));
					blk[at] = (uint8_t)d;
					blk[at + 1] = (uint8_t)(d >> 8);
				}
			}
		}
	}
	*row_bytes = rb;
	return w;
}

/* Element j of a row of type t, from the byte layout in doc/ops.md (the
 * K-quants: ggml's block_q4_K and block_q6_K). */
static double weight_at(int t, const uint8_t *row, int j)
{
	float f;
	const uint8_t *blk;
	switch (t) {
	case BELT_TYPE_F32:
		memcpy(&f, row + 4 * j, 4);
		return f;
	case BELT_TYPE_F16:
		return belt_fp16_to_f32(rd16(row + 2 * j));
	case BELT_TYPE_BF16:
		return belt_bf16_to_f32(rd16(row + 2 * j));
	case BELT_TYPE_Q8_0:
		blk = row + 34 * (j / 32);
		return (double)belt_fp16_to_f32(rd16(blk)) *
		       (int8_t)blk[2 + j % 32];
	case BELT_TYPE_Q4_0: {
		blk = row + 18 * (j / 32);
		int e = j % 32;
		int q = e < 16 ? (blk[2 + e] & 15) : (blk[2 + e - 16] >> 4);
		return (double)belt_fp16_to_f32(rd16(blk)) * (q - 8);
	}
	case BELT_TYPE_Q4_K:
	case BELT_TYPE_Q6_K: {
		float f;
		return kq_weight(t, row, j, &f);
	}
	}
	if (via_quant_ref(t)) {
		/* ggml's float, the value a dequantize-then-F32 path uses */
		int bk = blk_of(t);
		float blk_f[256];
		ck_assert_int_eq(quant_ref_row(t, row + belt_type_block_bytes(t) * (size_t)(j / bk),
					       (size_t)bk, blk_f), 0);
		return blk_f[j % bk];
	}
	ck_abort_msg("weight type %d", t);
	return 0;
}

/* Same, as the float the backend must produce for embed (d * q in float). */
static float weight_at_f(int t, const uint8_t *row, int j)
{
	const uint8_t *blk;
	switch (t) {
	case BELT_TYPE_Q8_0:
		blk = row + 34 * (j / 32);
		return belt_fp16_to_f32(rd16(blk)) *
		       (float)(int8_t)blk[2 + j % 32];
	case BELT_TYPE_Q4_0: {
		blk = row + 18 * (j / 32);
		int e = j % 32;
		int q = e < 16 ? (blk[2 + e] & 15) : (blk[2 + e - 16] >> 4);
		return belt_fp16_to_f32(rd16(blk)) * (float)(q - 8);
	}
	case BELT_TYPE_Q4_K:
	case BELT_TYPE_Q6_K: {
		float f;
		kq_weight(t, row, j, &f);
		return f;
	}
	default:
		return (float)weight_at(t, row, j);
	}
}

/* Row r's k weights into out, as weight_at gives them. */
static void row_ref(int t, const uint8_t *row, int k, double *out)
{
	if (!via_quant_ref(t)) {
		for (int j = 0; j < k; j++)
			out[j] = weight_at(t, row, j);
		return;
	}
	float *f = malloc((size_t)k * sizeof *f);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(quant_ref_row(t, row, (size_t)k, f), 0);
	for (int j = 0; j < k; j++)
		out[j] = f[j];
	free(f);
}

/* The largest |y - ref| / sum_j |W[r][j] x[j]| seen per type and path
 * (decode with float x, decode with int8 x, batched against decode),
 * printed at the end when BELT_TEST_REPORT is set: the measured side of
 * the tolerances in the header. */
static double worst[BELT_TYPE_COUNT][3];

static void note_err(int t, int path, double err, double mag)
{
	double rel = err / (mag + 1e-30);
	if (rel > worst[t][path])
		worst[t][path] = rel;
}

static void report_worst(void)
{
	if (!getenv("BELT_TEST_REPORT"))
		return;
	for (int i = 0; i < N_WTYPES; i++)
		fprintf(stderr, "%-7s max |y - ref| / sum|w x|: float x %.2e, int8 x %.2e, "
			"batched vs decode %.2e\n",
			belt_type_name(wtypes[i]), worst[wtypes[i]][0], worst[wtypes[i]][1],
			worst[wtypes[i]][2]);
}

/* ---- matvec ---- */

/* y = W x through the backend: one matvec command. */
static void backend_matvec(void *ctx, int t, const uint8_t *w,
			   size_t row_bytes, const float *x, int k, int m,
			   float *y)
{
	struct belt_buffer *bw = buf_from(ctx, w, row_bytes * (size_t)m);
	struct belt_buffer *bx = buf_from(ctx, x, (uint64_t)k * 4);
	struct belt_buffer *by = buf_new(ctx, (uint64_t)m * 4);
	struct belt_cmd c = cmd_new(ctx, "matvec", t, "test.matvec");
	bind(&c, bw, 0, row_bytes * (size_t)m, t);
	c.bind[0].ne[0] = k;
	c.bind[0].ne[1] = m;
	bind(&c, bx, 0, (uint64_t)k * 4, BELT_TYPE_F32);
	bind(&c, by, 0, (uint64_t)m * 4, BELT_TYPE_F32);
	pi(&c, k);
	pi(&c, m);
	struct belt_table tab;
	table_init(&tab, &c, 1, 1, NULL, 0);
	prepare(ctx, &tab);
	run(ctx, &tab, 0, 1, 0);
	buf_get(ctx, by, 0, y, (uint64_t)m * 4);
	B->table_release(ctx, &tab);
	ck_assert_ptr_null(tab.priv);
	B->buffer_destroy(ctx, bw);
	B->buffer_destroy(ctx, bx);
	B->buffer_destroy(ctx, by);
}

static void check_matvec(int cfg, void *ctx, int t, int k, int m)
{
	size_t rb;
	uint8_t *w = weights_new(t, k, m, &rb);
	float *x = malloc((size_t)k * 4), *y = malloc((size_t)m * 4);
	fill(x, (size_t)k);
	backend_matvec(ctx, t, w, rb, x, k, m, y);
	bool qx = is_quant(t) && quantizes_x(cfg);
	/* how far quantizing x may move each element */
	double *xerr = calloc((size_t)k, sizeof *xerr);
	for (int b = 0; qx && b < k / 32; b++) {
		double amax = 0;
		for (int i = 32 * b; i < 32 * b + 32; i++)
			amax = fmax(amax, fabs(x[i]));
		for (int i = 32 * b; i < 32 * b + 32; i++)
			xerr[i] = amax * (1 / 254.0 + 1 / 2048.0);
	}
	double *wr = malloc((size_t)k * sizeof *wr);
	for (int r = 0; r < m; r++) {
		const uint8_t *row = w + rb * (size_t)r;
		double ref = 0, mag = 0, qerr = 0;
		row_ref(t, row, k, wr);
		for (int j = 0; j < k; j++) {
			double wj = wr[j];
			ref += wj * x[j];
			mag += fabs(wj * x[j]);
			qerr += fabs(wj) * xerr[j];
		}
		double tol = 1e-5 * mag + qerr + 1e-30;
		note_err(t, qx, fabs(y[r] - ref), mag);
		ck_assert_msg(fabs(y[r] - ref) <= tol,
			      "%s/%d threads: matvec %s k=%d m=%d row %d: %.9g vs "
			      "%.9g (tol %.3g)",
			      configs[cfg].isa, configs[cfg].n_threads,
			      belt_type_name(t), k, m, r, y[r], ref, tol);
	}
	free(wr);
	free(xerr);
	free(w);
	free(x);
	free(y);
}

START_TEST(test_matvec_float)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	static const int sizes[][2] = {{1, 1},	 {7, 3},     {8, 5},
				       {33, 17}, {100, 1},   {515, 67},
				       {512, 96}, {4096, 40}, {1, 200}};
	rng_seed(1);
	for (int t = 0; t < 3; t++)
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			check_matvec(_i, ctx, wtypes[t], sizes[s][0],
				     sizes[s][1]);
	B->destroy(ctx);
}
END_TEST

START_TEST(test_matvec_quant)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	/* row lengths in blocks: k = 32 and 4096 for Q8_0/Q4_0, 256 and
	 * 4096 for the K-quants */
	static const int sizes[][2] = {{1, 1},	{1, 17},  {2, 5},
				       {3, 33}, {16, 64}, {128, 19}};
	rng_seed(2);
	for (int t = 3; t < N_WTYPES; t++) {
		int bk = blk_of(wtypes[t]);
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
			int k = sizes[s][0] * bk;
			if (k <= 4096)
				check_matvec(_i, ctx, wtypes[t], k, sizes[s][1]);
		}
	}
	B->destroy(ctx);
}
END_TEST

/* Y = W X through the backend: one matvec command of a batched table of
 * n rows (a matrix product), X and Y a row per token. */
static void backend_matmul(void *ctx, int t, const uint8_t *w, size_t row_bytes,
			   const float *x, int k, int m, uint32_t n, float *y)
{
	struct belt_buffer *bw = buf_from(ctx, w, row_bytes * (size_t)m);
	struct belt_buffer *bx = buf_from(ctx, x, (uint64_t)n * k * 4);
	struct belt_buffer *by = buf_new(ctx, (uint64_t)n * m * 4);
	struct belt_cmd c = cmd_new(ctx, "matvec", t, "test.matmul");
	bind(&c, bw, 0, row_bytes * (size_t)m, t);
	c.bind[0].ne[0] = k;
	c.bind[0].ne[1] = m;
	bind(&c, bx, 0, (uint64_t)n * k * 4, BELT_TYPE_F32);
	c.bind[1].ne[0] = k;
	c.bind[1].ne[1] = n;
	bind(&c, by, 0, (uint64_t)n * m * 4, BELT_TYPE_F32);
	c.bind[2].ne[0] = m;
	c.bind[2].ne[1] = n;
	pi(&c, k);
	pi(&c, m);
	struct belt_table tab;
	table_init(&tab, &c, 1, n, NULL, 0);
	tab.rows = n;
	prepare(ctx, &tab);
	run(ctx, &tab, 0, n, 0);
	buf_get(ctx, by, 0, y, (uint64_t)n * m * 4);
	B->table_release(ctx, &tab);
	B->buffer_destroy(ctx, bw);
	B->buffer_destroy(ctx, bx);
	B->buffer_destroy(ctx, by);
}

/* A batched pass's matrix product gives each row what decode's matvec
 * gives it, x quantized alike: only the order of the float sums differs
 * (so within 1e-5 of the sum of |w x|). Shapes cover token and row tails
 * of every block size the kernels use. */
START_TEST(test_matmul_quant)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	static const int shapes[][3] = {/* blocks of k, m, rows */
					{1, 1, 2},   {1, 17, 5},  {2, 33, 7},
					{9, 64, 4},  {8, 65, 13}, {48, 100, 9},
					{16, 96, 64}};
	rng_seed(7);
	for (int t = 3; t < N_WTYPES; t++) {
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
			int k = shapes[s][0] * blk_of(wtypes[t]), m = shapes[s][1];
			uint32_t n = (uint32_t)shapes[s][2];
			if (k > 4096)
				continue;
			size_t rb;
			uint8_t *w = weights_new(wtypes[t], k, m, &rb);
			float *x = malloc((size_t)n * k * 4), *y = malloc((size_t)n * m * 4);
			float *y1 = malloc((size_t)m * 4);
			fill(x, (size_t)n * k);
			backend_matmul(ctx, wtypes[t], w, rb, x, k, m, n, y);
			double *wd = malloc((size_t)m * k * sizeof *wd);
			for (int r = 0; r < m; r++)
				row_ref(wtypes[t], w + rb * (size_t)r, k, wd + (size_t)r * k);
			for (uint32_t row = 0; row < n; row++) {
				backend_matvec(ctx, wtypes[t], w, rb, x + (size_t)row * k, k, m, y1);
				for (int r = 0; r < m; r++) {
					double mag = 0;
					for (int j = 0; j < k; j++)
						mag += fabs(wd[(size_t)r * k + j] *
							    x[(size_t)row * k + j]);
					float got = y[(size_t)row * m + r];
					note_err(wtypes[t], 2, fabs(got - y1[r]), mag);
					ck_assert_msg(fabs(got - y1[r]) <= 1e-5 * mag + 1e-30,
						      "%s/%d threads: matmul %s k=%d m=%d rows %u: "
						      "row %u, %d: %.9g vs matvec %.9g",
						      configs[_i].isa, configs[_i].n_threads,
						      belt_type_name(wtypes[t]), k, m, n, row, r, got,
						      y1[r]);
				}
			}
			free(wd);
			free(w);
			free(x);
			free(y);
			free(y1);
		}
	}
	B->destroy(ctx);
}
END_TEST

/* The quantized path keeps signs right at the int8 extremes. */
START_TEST(test_matvec_quant_extremes)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(3);
	int k = 64, m = 4;
	size_t rb;
	uint8_t *w = weights_new(BELT_TYPE_Q8_0, k, m, &rb);
	for (int r = 0; r < m; r++)
		for (int b = 0; b < 2; b++)
			for (int j = 0; j < 32; j++)
				w[rb * r + 34 * b + 2 + j] =
					(uint8_t)(r & 1 ? -128 : 127);
	float x[64];
	for (int j = 0; j < k; j++)
		x[j] = j % 2 ? -1.0f : 1.0f;
	x[3] = -1e-3f;
	float y[4];
	backend_matvec(ctx, BELT_TYPE_Q8_0, w, rb, x, k, m, y);
	for (int r = 0; r < m; r++) {
		double ref = 0;
		for (int j = 0; j < k; j++)
			ref += weight_at(BELT_TYPE_Q8_0, w + rb * r, j) * x[j];
		ck_assert_msg(fabs(y[r] - ref) < 0.02 * fabs(ref) + 0.5,
			      "row %d: %g vs %g", r, y[r], ref);
	}
	free(w);
	B->destroy(ctx);
}
END_TEST

/* 2 and 3 threads give the same bits as 1, on each instruction set. */
START_TEST(test_matvec_threads_identical)
{
	int base = 3 * _i;
	const char *isa = configs[base].isa;
	void *ctx[3];
	for (int n = 0; n < 3; n++) {
		ctx[n] = open_config(base + n);
		if (!ctx[n])
			return;
	}
	rng_seed(4);
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		int k = 512, m = 1000 + 13 * ti;
		size_t rb;
		uint8_t *w = weights_new(t, k, m, &rb);
		float x[512], y[3][1200]; /* m < 1200 */
		fill(x, 512);
		for (int n = 0; n < 3; n++)
			backend_matvec(ctx[n], t, w, rb, x, k, m, y[n]);
		ck_assert_msg(!memcmp(y[0], y[1], (size_t)m * 4) &&
				      !memcmp(y[0], y[2], (size_t)m * 4),
			      "%s %s: threads differ", isa, belt_type_name(t));
		free(w);
	}
	for (int n = 0; n < 3; n++)
		B->destroy(ctx[n]);
}
END_TEST

/* Weights wrapped in place from read-only memory (as the core wraps the
 * mmapped GGUF): kernels only read them. */
START_TEST(test_matvec_wrapped_readonly)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(5);
	int m = 50;
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		int k = blk_of(t) > 32 ? 256 : 96;
		size_t rb;
		uint8_t *w = weights_new(t, k, m, &rb);
		size_t bytes = rb * (size_t)m;
		uint8_t *ro = mmap(NULL, bytes + 3, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert_ptr_ne(ro, MAP_FAILED);
		/* at an odd offset: no alignment is assumed for weights */
		size_t off = (t == BELT_TYPE_F32) ? 0 : 2;
		memcpy(ro + off, w, bytes);
		ck_assert_int_eq(mprotect(ro, bytes + 3, PROT_READ), 0);
		struct belt_buffer *bw = NULL;
		ck_assert_msg(B->buffer_wrap(ctx, ro, bytes + off, &bw, err,
					     sizeof err) == 0,
			      "wrap: %s", err);
		float x[256], y[50], y2[50];
		fill(x, (size_t)k);
		struct belt_buffer *bx = buf_from(ctx, x, (uint64_t)k * 4);
		struct belt_buffer *by = buf_new(ctx, sizeof y);
		struct belt_cmd c = cmd_new(ctx, "matvec", t, "wrapped");
		bind(&c, bw, off, bytes, t);
		bind(&c, bx, 0, (uint64_t)k * 4, BELT_TYPE_F32);
		bind(&c, by, 0, sizeof y, BELT_TYPE_F32);
		pi(&c, k);
		pi(&c, m);
		struct belt_table tab;
		table_init(&tab, &c, 1, 1, NULL, 0);
		prepare(ctx, &tab);
		run(ctx, &tab, 0, 1, 0);
		buf_get(ctx, by, 0, y, sizeof y);
		backend_matvec(ctx, t, w, rb, x, k, m, y2);
		ck_assert(!memcmp(y, y2, sizeof y));
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bw);
		B->buffer_destroy(ctx, bx);
		B->buffer_destroy(ctx, by);
		munmap(ro, bytes + 3);
		free(w);
	}
	B->destroy(ctx);
}
END_TEST

/* ---- embed ---- */

START_TEST(test_embed)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(6);
	const int vocab = 10, n_ctx = 8;
	int32_t ids[9] = {3, 0, 9, -1, 10, 7, 1000000, 9, 0};
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		int n = is_quant(t) ? 2 * blk_of(t) : 37;
		size_t rb;
		uint8_t *w = weights_new(t, n, vocab, &rb);
		struct belt_buffer *bw = buf_from(ctx, w, rb * vocab);
		struct belt_buffer *bids = buf_from(ctx, ids, sizeof ids);
		struct belt_buffer *out = buf_new(ctx, (uint64_t)n * 4);
		struct belt_cmd c = cmd_new(ctx, "embed", t, "token_embd");
		c.patch = BELT_PATCH_TOKEN_OFFSET;
		bind(&c, bw, 0, rb * vocab, t);
		c.bind[0].ne[0] = n;
		c.bind[0].ne[1] = vocab;
		bind(&c, bids, 0, sizeof ids, BELT_TYPE_I32);
		bind(&c, out, 0, (uint64_t)n * 4, BELT_TYPE_F32);
		pi(&c, n);
		struct belt_table tab;
		table_init(&tab, &c, 1, n_ctx, bids, 0);
		prepare(ctx, &tab);
		for (int pos = 0; pos < n_ctx; pos++) {
			float o[512], poison = 12345.0f;
			for (int j = 0; j < n; j++) /* out of range must zero */
				buf_put(ctx, out, 4 * j, &poison, 4);
			run(ctx, &tab, pos, 1, 0);
			buf_get(ctx, out, 0, o, (uint64_t)n * 4);
			int id = ids[pos];
			for (int j = 0; j < n; j++) {
				float want = (id >= 0 && id < vocab)
						     ? weight_at_f(t, w + rb * id, j)
						     : 0.0f;
				ck_assert_msg(o[j] == want,
					      "%s pos %d id %d elt %d: %g vs %g",
					      belt_type_name(t), pos, id, j, o[j],
					      want);
			}
		}
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bw);
		B->buffer_destroy(ctx, bids);
		B->buffer_destroy(ctx, out);
		free(w);
	}
	B->destroy(ctx);
}
END_TEST

/* ---- rmsnorm, silu_mul, add ---- */

static void close_rel(double got, double want, double rel, const char *what,
		      int i)
{
	ck_assert_msg(fabs(got - want) <= rel * fabs(want) + 1e-6,
		      "%s[%d]: %.9g vs %.9g", what, i, got, want);
}

START_TEST(test_rmsnorm)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(7);
	static const int ns[] = {1, 7, 64, 512, 1001};
	for (size_t s = 0; s < 5; s++)
		for (int alias = 0; alias < 2; alias++) {
			int n = ns[s];
			float *x = malloc((size_t)n * 4), *g = malloc((size_t)n * 4),
			      *o = malloc((size_t)n * 4);
			fill(x, (size_t)n);
			fill(g, (size_t)n);
			struct belt_buffer *bx = buf_from(ctx, x, (uint64_t)n * 4);
			struct belt_buffer *bg = buf_from(ctx, g, (uint64_t)n * 4);
			struct belt_buffer *bo = alias ? bx : buf_new(ctx, (uint64_t)n * 4);
			struct belt_cmd c = cmd_new(ctx, "rmsnorm", BELT_TYPE_F16,
						    "attn_norm");
			bind(&c, bx, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&c, bg, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&c, bo, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			pi(&c, n);
			pf(&c, 1e-5f);
			struct belt_table tab;
			table_init(&tab, &c, 1, 4, NULL, 0);
			prepare(ctx, &tab);
			run(ctx, &tab, 0, 1, 0);
			buf_get(ctx, bo, 0, o, (uint64_t)n * 4);
			double ss = 0;
			for (int i = 0; i < n; i++)
				ss += (double)x[i] * x[i];
			double scale = 1.0 / sqrt(ss / n + 1e-5);
			for (int i = 0; i < n; i++)
				close_rel(o[i], g[i] * x[i] * scale, 1e-5,
					  "rmsnorm", i);
			B->table_release(ctx, &tab);
			B->buffer_destroy(ctx, bx);
			B->buffer_destroy(ctx, bg);
			if (!alias)
				B->buffer_destroy(ctx, bo);
			free(x);
			free(g);
			free(o);
		}
	B->destroy(ctx);
}
END_TEST

static void check_binary(void *ctx, const char *op, int n, int alias)
{
	float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4),
	      *o = malloc((size_t)n * 4);
	fill(a, (size_t)n);
	fill(b, (size_t)n);
	for (int i = 0; i < n; i++)
		a[i] *= 12.0f; /* silu over [-12, 12] */
	/* a and b live in one buffer at offsets; out aliases a or not */
	struct belt_buffer *buf = buf_new(ctx, (uint64_t)n * 12);
	buf_put(ctx, buf, 0, a, (uint64_t)n * 4);
	buf_put(ctx, buf, (uint64_t)n * 4, b, (uint64_t)n * 4);
	struct belt_cmd c = cmd_new(ctx, op, BELT_TYPE_ANY, op);
	bind(&c, buf, 0, (uint64_t)n * 4, BELT_TYPE_F32);
	bind(&c, buf, (uint64_t)n * 4, (uint64_t)n * 4, BELT_TYPE_F32);
	uint64_t out_off = alias ? 0 : (uint64_t)n * 8;
	bind(&c, buf, out_off, (uint64_t)n * 4, BELT_TYPE_F32);
	pi(&c, n);
	struct belt_table tab;
	table_init(&tab, &c, 1, 4, NULL, 0);
	prepare(ctx, &tab);
	run(ctx, &tab, 0, 1, 0);
	buf_get(ctx, buf, out_off, o, (uint64_t)n * 4);
	for (int i = 0; i < n; i++) {
		if (!strcmp(op, "add")) {
			ck_assert_msg(o[i] == a[i] + b[i], "add[%d]", i);
		} else {
			double g = a[i];
			close_rel(o[i], g / (1.0 + exp(-g)) * b[i], 1e-5,
				  "silu_mul", i);
		}
	}
	B->table_release(ctx, &tab);
	B->buffer_destroy(ctx, buf);
	free(a);
	free(b);
	free(o);
}

START_TEST(test_elementwise)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(8);
	static const int ns[] = {1, 17, 100, 1536, 4099};
	for (size_t s = 0; s < 5; s++)
		for (int alias = 0; alias < 2; alias++) {
			check_binary(ctx, "add", ns[s], alias);
			check_binary(ctx, "silu_mul", ns[s], alias);
		}
	B->destroy(ctx);
}
END_TEST

/* ---- rope_kv ---- */

START_TEST(test_rope_kv)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(9);
	const int n_head = 4, n_head_kv = 2, head_dim = 16, n_ctx = 1100;
	const int q_n = n_head * head_dim, kv_n = n_head_kv * head_dim;
	static const int rope_dims[] = {16, 8, 2, 0};
	static const int positions[] = {0, 1, 7, 100, 1099, 3};
	for (int rd = 0; rd < 4; rd++) {
		int rope_dim = rope_dims[rd];
		float base = rd == 1 ? 500000.0f : 10000.0f;
		struct belt_buffer *bq = buf_new(ctx, q_n * 4);
		struct belt_buffer *bk = buf_new(ctx, kv_n * 4);
		struct belt_buffer *bv = buf_new(ctx, kv_n * 4);
		/* both caches in one KV buffer, as a layer slice each */
		uint64_t cache = (uint64_t)n_ctx * kv_n * 4;
		struct belt_buffer *kv = buf_new(ctx, 2 * cache);
		struct belt_cmd c = cmd_new(ctx, "rope_kv", BELT_TYPE_ANY,
					    "blk.0.rope");
		c.patch = BELT_PATCH_POSITION;
		bind(&c, bq, 0, q_n * 4, BELT_TYPE_F32);
		bind(&c, bk, 0, kv_n * 4, BELT_TYPE_F32);
		bind(&c, bv, 0, kv_n * 4, BELT_TYPE_F32);
		bind(&c, kv, 0, cache, BELT_TYPE_F32);
		bind(&c, kv, cache, cache, BELT_TYPE_F32);
		pi(&c, n_head);
		pi(&c, n_head_kv);
		pi(&c, head_dim);
		pi(&c, rope_dim);
		pf(&c, base);
		struct belt_table tab;
		table_init(&tab, &c, 1, n_ctx, NULL, 0);
		prepare(ctx, &tab);
		for (int pi_ = 0; pi_ < 6; pi_++) {
			int pos = positions[pi_];
			float q[64], k[32], v[32], qo[64], ko[32], kc[32], vc[32];
			fill(q, q_n);
			fill(k, kv_n);
			fill(v, kv_n);
			buf_put(ctx, bq, 0, q, sizeof q);
			buf_put(ctx, bk, 0, k, sizeof k);
			buf_put(ctx, bv, 0, v, sizeof v);
			run(ctx, &tab, pos, 1, 0);
			buf_get(ctx, bq, 0, qo, sizeof qo);
			buf_get(ctx, bk, 0, ko, sizeof ko);
			buf_get(ctx, kv, (uint64_t)pos * kv_n * 4, kc, sizeof kc);
			buf_get(ctx, kv, cache + (uint64_t)pos * kv_n * 4, vc,
				sizeof vc);
			ck_assert(!memcmp(kc, ko, sizeof kc));
			ck_assert(!memcmp(vc, v, sizeof vc));
			double tol = 2e-6 * (1 + pos);
			for (int which = 0; which < 2; which++) {
				const float *in = which ? k : q;
				const float *out = which ? ko : qo;
				int heads = which ? n_head_kv : n_head;
				for (int h = 0; h < heads; h++)
					for (int i = 0; i < head_dim; i += 2) {
						int e = h * head_dim + i;
						double x0 = in[e], x1 = in[e + 1];
						double r0 = x0, r1 = x1;
						if (i < rope_dim) {
							double a = pos * pow(base, -(double)i / rope_dim);
							r0 = x0 * cos(a) - x1 * sin(a);
							r1 = x0 * sin(a) + x1 * cos(a);
						} else {
							ck_assert(out[e] == in[e] && out[e + 1] == in[e + 1]);
						}
						ck_assert_msg(fabs(out[e] - r0) <= tol &&
								      fabs(out[e + 1] - r1) <= tol,
							      "rope_dim %d pos %d %s[%d]: "
							      "(%g, %g) vs (%g, %g)",
							      rope_dim, pos, which ? "k" : "q", e,
							      out[e], out[e + 1], r0, r1);
					}
			}
		}
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bq);
		B->buffer_destroy(ctx, bk);
		B->buffer_destroy(ctx, bv);
		B->buffer_destroy(ctx, kv);
	}
	B->destroy(ctx);
}
END_TEST

/* ---- attention ---- */

static void attention_ref(const float *q, const float *kc, const float *vc,
			  int n_head, int n_head_kv, int head_dim, int n_kv,
			  double scale, double *out)
{
	int kv_dim = n_head_kv * head_dim, group = n_head / n_head_kv;
	double s[256];
	for (int h = 0; h < n_head; h++) {
		int kh = h / group;
		double max = -INFINITY, sum = 0;
		for (int t = 0; t < n_kv; t++) {
			double d = 0;
			for (int i = 0; i < head_dim; i++)
				d += (double)q[h * head_dim + i] *
				     kc[t * kv_dim + kh * head_dim + i];
			s[t] = d * scale;
			max = fmax(max, s[t]);
		}
		for (int t = 0; t < n_kv; t++)
			sum += s[t] = exp(s[t] - max);
		for (int i = 0; i < head_dim; i++) {
			double o = 0;
			for (int t = 0; t < n_kv; t++)
				o += s[t] / sum * vc[t * kv_dim + kh * head_dim + i];
			out[h * head_dim + i] = o;
		}
	}
}

START_TEST(test_attention_gqa)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(10);
	const int n_head = 8;
	static const int kv_heads[] = {8, 4, 2, 1};
	/* head_dim: a vector tail; one register block; two; a block and
	 * a tail */
	static const int dims[][2] = {{20, 40}, {64, 70}, {128, 19}, {168, 11}};
	for (int g = 0; g < 4 * 4; g++) {
		int n_head_kv = kv_heads[g % 4];
		int head_dim = dims[g / 4][0], n_ctx = dims[g / 4][1];
		int q_n = n_head * head_dim, kv_dim = n_head_kv * head_dim;
		float *kc = malloc((size_t)n_ctx * kv_dim * 4);
		float *vc = malloc((size_t)n_ctx * kv_dim * 4);
		fill(kc, (size_t)n_ctx * kv_dim);
		fill(vc, (size_t)n_ctx * kv_dim);
		for (int i = 0; i < n_ctx * kv_dim; i++)
			kc[i] *= 3.0f; /* peakier softmax */
		struct belt_buffer *bq = buf_new(ctx, q_n * 4);
		struct belt_buffer *bk = buf_from(ctx, kc, (uint64_t)n_ctx * kv_dim * 4);
		struct belt_buffer *bv = buf_from(ctx, vc, (uint64_t)n_ctx * kv_dim * 4);
		struct belt_buffer *bo = buf_new(ctx, q_n * 4);
		struct belt_buffer *ba = buf_new(ctx, (uint64_t)n_head * n_ctx * 4);
		struct belt_cmd c = cmd_new(ctx, "attention", BELT_TYPE_ANY,
					    "blk.0.attn");
		c.patch = BELT_PATCH_KV_LEN;
		bind(&c, bq, 0, q_n * 4, BELT_TYPE_F32);
		bind(&c, bk, 0, (uint64_t)n_ctx * kv_dim * 4, BELT_TYPE_F32);
		bind(&c, bv, 0, (uint64_t)n_ctx * kv_dim * 4, BELT_TYPE_F32);
		bind(&c, bo, 0, q_n * 4, BELT_TYPE_F32);
		bind(&c, ba, 0, (uint64_t)n_head * n_ctx * 4, BELT_TYPE_F32);
		float scale = 1.0f / sqrtf((float)head_dim);
		pi(&c, n_head);
		pi(&c, n_head_kv);
		pi(&c, head_dim);
		pi(&c, n_ctx);
		pf(&c, scale);
		struct belt_table tab;
		table_init(&tab, &c, 1, n_ctx, NULL, 0);
		prepare(ctx, &tab);
		float q[8 * 168], o[8 * 168];
		double ref[8 * 168];
		fill(q, q_n);
		buf_put(ctx, bq, 0, q, q_n * 4);
		for (int pos = 0; pos < n_ctx; pos++) {
			run(ctx, &tab, pos, 1, 0);
			buf_get(ctx, bo, 0, o, q_n * 4);
			attention_ref(q, kc, vc, n_head, n_head_kv, head_dim,
				      pos + 1, scale, ref);
			for (int i = 0; i < q_n; i++)
				close_rel(o[i], ref[i], 1e-5, "attention", i);
		}
		/* a run of all positions at once ends where stepping did */
		float o2[8 * 168];
		run(ctx, &tab, 0, n_ctx, 0);
		buf_get(ctx, bo, 0, o2, q_n * 4);
		ck_assert(!memcmp(o, o2, q_n * 4));
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bq);
		B->buffer_destroy(ctx, bk);
		B->buffer_destroy(ctx, bv);
		B->buffer_destroy(ctx, bo);
		B->buffer_destroy(ctx, ba);
		free(kc);
		free(vc);
	}
	B->destroy(ctx);
}
END_TEST

/* ---- buffer_copy: a tree's accepted cache entries moved ---- */

START_TEST(test_buffer_copy)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	check_buffer_copy(B, ctx);
	B->destroy(ctx);
}
END_TEST

/* ---- logit_mask: a grammar's mask before argmax ---- */

START_TEST(test_logit_mask)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	check_logit_mask(B, ctx);
	B->destroy(ctx);
}
END_TEST

/* ---- argmax ---- */

START_TEST(test_argmax)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	rng_seed(11);
	static const int ns[] = {1, 7, 8, 33, 1000, 32000};
	for (int s = 0; s < 6; s++) {
		int n = ns[s];
		float *l = malloc((size_t)n * 4);
		struct belt_buffer *bl = buf_new(ctx, (uint64_t)n * 4);
		int32_t ids[5] = {-7, -7, -7, -7, -7};
		struct belt_buffer *bids = buf_from(ctx, ids, sizeof ids);
		struct belt_cmd c = cmd_new(ctx, "argmax", BELT_TYPE_ANY,
					    "output.argmax");
		c.patch = BELT_PATCH_ARGMAX_OUTPUT;
		c.head = true;
		bind(&c, bl, 0, (uint64_t)n * 4, BELT_TYPE_F32);
		bind(&c, bids, 0, sizeof ids, BELT_TYPE_I32);
		pi(&c, n);
		struct belt_table tab;
		table_init(&tab, &c, 1, 4, bids, 0);
		prepare(ctx, &tab);
		for (int trial = 0; trial < 4; trial++) {
			int want;
			fill(l, (size_t)n);
			if (trial == 0) { /* a tie: the lowest index wins */
				want = n / 3;
				l[want] = 5.0f;
				l[n - 1] = 5.0f;
			} else if (trial == 1) { /* all equal */
				for (int i = 0; i < n; i++)
					l[i] = -2.5f;
				want = 0;
			} else if (trial == 2) { /* the last one */
				want = n - 1;
				l[want] = 2.0f;
			} else { /* all negative, tie near the end */
				for (int i = 0; i < n; i++)
					l[i] = -10.0f - fabsf(l[i]);
				want = n > 1 ? n - 2 : 0;
				l[want] = -1.0f;
				l[n - 1] = -1.0f;
			}
			buf_put(ctx, bl, 0, l, (uint64_t)n * 4);
			run(ctx, &tab, trial, 1, 0);
			buf_get(ctx, bids, 0, ids, sizeof ids);
			ck_assert_msg(ids[trial + 1] == want,
				      "n %d trial %d: %d, want %d", n, trial,
				      ids[trial + 1], want);
		}
		ck_assert_int_eq(ids[0], -7);
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bl);
		B->buffer_destroy(ctx, bids);
		free(l);
	}
	B->destroy(ctx);
}
END_TEST

/* ---- silu, top_k: Medusa draft heads' ops (silu_topk_check.h) ---- */

START_TEST(test_silu)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	check_silu(B, ctx);
	B->destroy(ctx);
}
END_TEST

START_TEST(test_top_k)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	check_top_k(B, ctx);
	B->destroy(ctx);
}
END_TEST

START_TEST(test_top_k_errors)
{
	void *ctx = open_config(0);
	check_top_k_errors(B, ctx);
	B->destroy(ctx);
}
END_TEST

/* ---- tables: head skipping, runs of positions, a chained model ---- */

/* cmd: out = a + b, all one-float bindings. */
static struct belt_cmd add1(void *ctx, struct belt_buffer *buf, int a, int b,
			    int out, bool head)
{
	struct belt_cmd c = cmd_new(ctx, "add", BELT_TYPE_ANY, "count");
	bind(&c, buf, 4 * a, 4, BELT_TYPE_F32);
	bind(&c, buf, 4 * b, 4, BELT_TYPE_F32);
	bind(&c, buf, 4 * out, 4, BELT_TYPE_F32);
	pi(&c, 1);
	c.head = head;
	return c;
}

START_TEST(test_head_last_only)
{
	void *ctx = open_config(_i);
	if (!ctx)
		return;
	/* counters: [0] per position, [1] per head run, [2] = 1 */
	float init[4] = {0, 0, 1, 0};
	struct belt_buffer *buf = buf_from(ctx, init, sizeof init);
	struct belt_cmd cmds[3] = {
		add1(ctx, buf, 0, 2, 0, false),
		add1(ctx, buf, 1, 2, 1, true),
		add1(ctx, buf, 3, 0, 3, true), /* [3] += [0]: reads the body */
	};
	struct belt_table tab;
	table_init(&tab, cmds, 3, 64, NULL, 0);
	prepare(ctx, &tab);
	float v[4];
	run(ctx, &tab, 0, 5, BELT_RUN_HEAD_LAST_ONLY);
	buf_get(ctx, buf, 0, v, sizeof v);
	ck_assert(v[0] == 5 && v[1] == 1 && v[3] == 5);
	run(ctx, &tab, 5, 3, 0);
	buf_get(ctx, buf, 0, v, sizeof v);
	ck_assert(v[0] == 8 && v[1] == 4 && v[3] == 5 + 6 + 7 + 8);
	run(ctx, &tab, 8, 1, BELT_RUN_HEAD_LAST_ONLY);
	buf_get(ctx, buf, 0, v, sizeof v);
	ck_assert(v[0] == 9 && v[1] == 5 && v[3] == 26 + 9);
	run(ctx, &tab, 9, 0, BELT_RUN_HEAD_LAST_ONLY); /* nothing */
	buf_get(ctx, buf, 0, v, sizeof v);
	ck_assert(v[0] == 9 && v[1] == 5);
	B->table_release(ctx, &tab);
	B->buffer_destroy(ctx, buf);
	B->destroy(ctx);
}
END_TEST

/* A small greedy model: embed -> rmsnorm -> matvec (q, k, v) -> rope_kv ->
 * attention -> matvec -> add -> rmsnorm -> matvecs gate/up -> silu_mul ->
 * matvec down -> add -> rmsnorm (head) -> matvec logits (head) -> argmax
 * (head). Each position's argmax feeds the next position's embed, so a run
 * of n positions in one call must give the tokens n single steps give,
 * for every configuration and weight type. */
struct mini {
	struct belt_buffer *w, *ids, *act, *kv;
	struct belt_cmd cmds[18];
	struct belt_table tab;
};

enum { M_DIM = 64, M_FF = 96, M_VOCAB = 50, M_CTX = 24, M_HEADS = 4,
       M_KVH = 2, M_HD = 16 };

static void mini_build(void *ctx, struct mini *m, int t, const uint8_t *wts,
		       size_t wbytes, const size_t *woff)
{
	memset(m, 0, sizeof *m);
	int32_t ids[M_CTX + 1] = {7};
	m->w = buf_from(ctx, wts, wbytes);
	m->ids = buf_from(ctx, ids, sizeof ids);
	/* activations: x, xb, q, k, v, att_out, hb, hb2, logits, att, norm w */
	enum { X = 0, XB = 64, Q = 128, K = 192, V = 224, AO = 256, HB = 320,
	       HB2 = 416, LOG = 512, ATT = 562, NW = 562 + M_HEADS * M_CTX };
	m->act = buf_new(ctx, (NW + M_DIM) * 4);
	float nw[M_DIM];
	for (int i = 0; i < M_DIM; i++)
		nw[i] = 1.0f + 0.01f * i;
	buf_put(ctx, m->act, NW * 4, nw, sizeof nw);
	uint64_t cache = (uint64_t)M_CTX * M_KVH * M_HD * 4;
	m->kv = buf_new(ctx, 2 * cache);
	int n = 0;
	struct belt_cmd *c;
#define ACT(off, len) bind(c, m->act, (uint64_t)(off) * 4, (uint64_t)(len) * 4, BELT_TYPE_F32)
#define MATVEC(wi, k_, m_, in, out, lbl)                                          \
	c = &m->cmds[n++];                                                        \
	*c = cmd_new(ctx, "matvec", t, lbl);                                      \
	bind(c, m->w, woff[wi], woff[wi + 1] - woff[wi], t);                      \
	ACT(in, k_);                                                              \
	ACT(out, m_);                                                             \
	pi(c, k_);                                                                \
	pi(c, m_)
#define NORM(in, out, lbl)                                                        \
	c = &m->cmds[n++];                                                        \
	*c = cmd_new(ctx, "rmsnorm", BELT_TYPE_ANY, lbl);                         \
	ACT(in, M_DIM);                                                           \
	ACT(NW, M_DIM);                                                           \
	ACT(out, M_DIM);                                                          \
	pi(c, M_DIM);                                                             \
	pf(c, 1e-5f)
#define BINARY(op, a, b, out, len, lbl)                                           \
	c = &m->cmds[n++];                                                        \
	*c = cmd_new(ctx, op, BELT_TYPE_ANY, lbl);                                \
	ACT(a, len);                                                              \
	ACT(b, len);                                                              \
	ACT(out, len);                                                            \
	pi(c, len)

	c = &m->cmds[n++];
	*c = cmd_new(ctx, "embed", t, "token_embd");
	bind(c, m->w, woff[0], woff[1] - woff[0], t);
	bind(c, m->ids, 0, sizeof ids, BELT_TYPE_I32);
	ACT(X, M_DIM);
	pi(c, M_DIM);
	NORM(X, XB, "attn_norm");
	MATVEC(1, M_DIM, M_DIM, XB, Q, "wq");
	MATVEC(2, M_DIM, M_KVH * M_HD, XB, K, "wk");
	MATVEC(3, M_DIM, M_KVH * M_HD, XB, V, "wv");
	c = &m->cmds[n++];
	*c = cmd_new(ctx, "rope_kv", BELT_TYPE_ANY, "rope");
	ACT(Q, M_DIM);
	ACT(K, M_KVH * M_HD);
	ACT(V, M_KVH * M_HD);
	bind(c, m->kv, 0, cache, BELT_TYPE_F32);
	bind(c, m->kv, cache, cache, BELT_TYPE_F32);
	pi(c, M_HEADS);
	pi(c, M_KVH);
	pi(c, M_HD);
	pi(c, M_HD);
	pf(c, 10000.0f);
	c = &m->cmds[n++];
	*c = cmd_new(ctx, "attention", BELT_TYPE_ANY, "attn");
	ACT(Q, M_DIM);
	bind(c, m->kv, 0, cache, BELT_TYPE_F32);
	bind(c, m->kv, cache, cache, BELT_TYPE_F32);
	ACT(AO, M_DIM);
	ACT(ATT, M_HEADS * M_CTX);
	pi(c, M_HEADS);
	pi(c, M_KVH);
	pi(c, M_HD);
	pi(c, M_CTX);
	pf(c, 0.25f);
	MATVEC(4, M_DIM, M_DIM, AO, XB, "wo");
	BINARY("add", X, XB, X, M_DIM, "res1");
	NORM(X, XB, "ffn_norm");
	MATVEC(5, M_DIM, M_FF, XB, HB, "gate");
	MATVEC(6, M_DIM, M_FF, XB, HB2, "up");
	BINARY("silu_mul", HB, HB2, HB, M_FF, "silu");
	MATVEC(7, M_FF, M_DIM, HB, XB, "down");
	BINARY("add", X, XB, X, M_DIM, "res2");
	NORM(X, X, "output_norm");
	c->head = true;
	MATVEC(0, M_DIM, M_VOCAB, X, LOG, "output");
	c->head = true;
	c = &m->cmds[n++];
	*c = cmd_new(ctx, "argmax", BELT_TYPE_ANY, "argmax");
	ACT(LOG, M_VOCAB);
	bind(c, m->ids, 0, sizeof ids, BELT_TYPE_I32);
	pi(c, M_VOCAB);
	c->head = true;
	ck_assert_int_eq(n, 18);
	table_init(&m->tab, m->cmds, 18, M_CTX, m->ids, 0);
	prepare(ctx, &m->tab);
#undef ACT
#undef MATVEC
#undef NORM
#undef BINARY
}

static void mini_free(void *ctx, struct mini *m)
{
	B->table_release(ctx, &m->tab);
	B->buffer_destroy(ctx, m->w);
	B->buffer_destroy(ctx, m->ids);
	B->buffer_destroy(ctx, m->act);
	B->buffer_destroy(ctx, m->kv);
}

START_TEST(test_chained_model)
{
	rng_seed(12);
	/* weights: tied embedding/output, wq, wk, wv, wo, gate, up, down */
	static const int shape[8][2] = {
		{M_DIM, M_VOCAB}, {M_DIM, M_DIM}, {M_DIM, M_KVH * M_HD},
		{M_DIM, M_KVH * M_HD}, {M_DIM, M_DIM}, {M_DIM, M_FF},
		{M_DIM, M_FF}, {M_FF, M_DIM}};
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		if (blk_of(t) > 32) /* dims 64 and 96: not whole K-quant blocks */
			continue;
		size_t woff[9] = {0};
		uint8_t *parts[8];
		for (int i = 0; i < 8; i++) {
			size_t rb;
			parts[i] = weights_new(t, shape[i][0], shape[i][1], &rb);
			woff[i + 1] = woff[i] + rb * shape[i][1];
		}
		uint8_t *wts = malloc(woff[8]);
		for (int i = 0; i < 8; i++) {
			memcpy(wts + woff[i], parts[i], woff[i + 1] - woff[i]);
			free(parts[i]);
		}
		int32_t first[M_CTX + 1] = {0};
		for (int cfg = 0; cfg < N_CONFIGS; cfg++) {
			void *ctx = open_config(cfg);
			if (!ctx)
				continue;
			int32_t step[M_CTX + 1], chain[M_CTX + 1];
			struct mini m;
			mini_build(ctx, &m, t, wts, woff[8], woff);
			for (uint32_t p = 0; p < M_CTX - 1; p++)
				run(ctx, &m.tab, p, 1, BELT_RUN_HEAD_LAST_ONLY);
			buf_get(ctx, m.ids, 0, step, sizeof step);
			run(ctx, &m.tab, 0, M_CTX - 1, 0);
			buf_get(ctx, m.ids, 0, chain, sizeof chain);
			ck_assert_msg(!memcmp(step, chain, sizeof step),
				      "%s %s/%d: chained run differs from steps",
				      belt_type_name(t), configs[cfg].isa,
				      configs[cfg].n_threads);
			/* all thread counts of one ISA agree exactly */
			if (configs[cfg].n_threads == 1)
				memcpy(first, step, sizeof step);
			else
				ck_assert_msg(!memcmp(first, step, sizeof step),
					      "%s %s/%d: tokens differ from 1 "
					      "thread",
					      belt_type_name(t), configs[cfg].isa,
					      configs[cfg].n_threads);
			int distinct = 0;
			for (int i = 1; i < M_CTX; i++)
				distinct += step[i] != step[i - 1];
			ck_assert_int_gt(distinct, 0); /* not a stuck loop */
			/* prefill with HEAD_LAST_ONLY writes only the last id */
			int32_t ids[M_CTX + 1];
			for (int i = 0; i <= M_CTX; i++)
				ids[i] = i == 0 ? 7 : -1;
			buf_put(ctx, m.ids, 0, ids, sizeof ids);
			run(ctx, &m.tab, 0, 5, BELT_RUN_HEAD_LAST_ONLY);
			buf_get(ctx, m.ids, 0, ids, sizeof ids);
			ck_assert(ids[1] == -1 && ids[4] == -1 && ids[5] >= 0);
			mini_free(ctx, &m);
			B->destroy(ctx);
		}
		free(wts);
	}
}
END_TEST

/* Work big enough to be cut into many chunks that threads claim: a
 * residual MLP x += W2 silu(W1 x) * (W1 x), then rmsnorm, over a run of 6
 * positions. Every thread count gives the same bits; tables are released
 * and prepared between runs while workers may still be finishing. */
static void mlp_run(void *ctx, int t, const uint8_t *w1, size_t rb1,
		    const uint8_t *w2, size_t rb2, const float *x0, int dim,
		    int hid, float *out)
{
	struct belt_buffer *bw1 = buf_from(ctx, w1, rb1 * hid);
	struct belt_buffer *bw2 = buf_from(ctx, w2, rb2 * dim);
	/* act: x [dim], h [hid], g [hid], norm w [dim] */
	struct belt_buffer *act = buf_new(ctx, (uint64_t)(3 * dim + 2 * hid) * 4);
	buf_put(ctx, act, 0, x0, (uint64_t)dim * 4);
	float *ones = malloc((size_t)dim * 4);
	for (int i = 0; i < dim; i++)
		ones[i] = 1.0f;
	uint64_t X = 0, H = (uint64_t)dim * 4, G = H + (uint64_t)hid * 4,
		 NW = G + (uint64_t)hid * 4, XN = NW + (uint64_t)dim * 4;
	buf_put(ctx, act, NW, ones, (uint64_t)dim * 4);
	free(ones);
	struct belt_cmd c[5];
	c[0] = cmd_new(ctx, "rmsnorm", BELT_TYPE_ANY, "norm");
	bind(&c[0], act, X, (uint64_t)dim * 4, BELT_TYPE_F32);
	bind(&c[0], act, NW, (uint64_t)dim * 4, BELT_TYPE_F32);
	bind(&c[0], act, XN, (uint64_t)dim * 4, BELT_TYPE_F32);
	pi(&c[0], dim);
	pf(&c[0], 1e-5f);
	c[1] = cmd_new(ctx, "matvec", t, "w1");
	bind(&c[1], bw1, 0, rb1 * hid, t);
	bind(&c[1], act, XN, (uint64_t)dim * 4, BELT_TYPE_F32);
	bind(&c[1], act, H, (uint64_t)hid * 4, BELT_TYPE_F32);
	pi(&c[1], dim);
	pi(&c[1], hid);
	c[2] = cmd_new(ctx, "silu_mul", BELT_TYPE_ANY, "silu");
	bind(&c[2], act, H, (uint64_t)hid * 4, BELT_TYPE_F32);
	bind(&c[2], act, H, (uint64_t)hid * 4, BELT_TYPE_F32);
	bind(&c[2], act, G, (uint64_t)hid * 4, BELT_TYPE_F32);
	pi(&c[2], hid);
	c[3] = cmd_new(ctx, "matvec", t, "w2");
	bind(&c[3], bw2, 0, rb2 * dim, t);
	bind(&c[3], act, G, (uint64_t)hid * 4, BELT_TYPE_F32);
	bind(&c[3], act, XN, (uint64_t)dim * 4, BELT_TYPE_F32);
	pi(&c[3], hid);
	pi(&c[3], dim);
	c[4] = cmd_new(ctx, "add", BELT_TYPE_ANY, "res");
	bind(&c[4], act, X, (uint64_t)dim * 4, BELT_TYPE_F32);
	bind(&c[4], act, XN, (uint64_t)dim * 4, BELT_TYPE_F32);
	bind(&c[4], act, X, (uint64_t)dim * 4, BELT_TYPE_F32);
	pi(&c[4], dim);
	struct belt_table tab;
	table_init(&tab, c, 5, 64, NULL, 0);
	for (int round = 0; round < 3; round++) {
		prepare(ctx, &tab);
		run(ctx, &tab, 2 * round, 2, 0);
		B->table_release(ctx, &tab);
	}
	buf_get(ctx, act, 0, out, (uint64_t)dim * 4);
	B->buffer_destroy(ctx, bw1);
	B->buffer_destroy(ctx, bw2);
	B->buffer_destroy(ctx, act);
}

START_TEST(test_many_chunks)
{
	const int dim = 256, hid = 2048;
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		rng_seed(13 + ti);
		size_t rb1, rb2;
		uint8_t *w1 = weights_new(t, dim, hid, &rb1);
		uint8_t *w2 = weights_new(t, hid, dim, &rb2);
		float x0[256], first[256], out[256];
		fill(x0, dim);
		for (int cfg = 0; cfg < N_CONFIGS; cfg++) {
			void *ctx = open_config(cfg);
			if (!ctx)
				continue;
			mlp_run(ctx, t, w1, rb1, w2, rb2, x0, dim, hid, out);
			if (configs[cfg].n_threads == 1)
				memcpy(first, out, sizeof out);
			else
				ck_assert_msg(!memcmp(first, out, sizeof out),
					      "%s %s/%d: differs from 1 thread",
					      belt_type_name(t), configs[cfg].isa,
					      configs[cfg].n_threads);
			B->destroy(ctx);
		}
		free(w1);
		free(w2);
	}
}
END_TEST

/* ---- end to end: llama.cpp's logits on the quant-base files ---- */

/* Each file of ../shared/models/quant (README.md there) holds every matrix
 * in one type (two hold the default K mixes); llama.cpp's teacher-forced
 * logits on an F32 copy of its exactly dequantized weights ("deq") are
 * what an engine that dequantizes exactly and multiplies in F32 must give.
 * The generic path does (x in F32): max |difference| 1e-3, the README's
 * guidance (measured: at most 2.8e-5, batched or token by token, every
 * file). The avx2/avx512 paths round x to int8 per block of 32 as ggml
 * does, which moves logits about as much as llama.cpp's own 8-bit
 * activations move them (the README's stock vs deq: max 0.37-0.82, mean
 * 0.04-0.08): max 1.0 and mean 0.08 for every file (measured: max 0.34 to
 * 0.58, mean 0.038 to 0.046; doc/cpu.md has them per type). */
static const char *const quant_base[] = {"q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
					 "q4_0", "q4_1", "q5_0", "q5_1", "q8_0",
					 "iq4_nl", "iq4_xs", "q4_k_m", "q5_k_m"};
#define N_QUANT_BASE ((int)(sizeof quant_base / sizeof quant_base[0]))
#define QB_POS 64
#define QB_VOCAB 512

/* The 64 teacher-forced ids of the deq record of quant-base.<type>. */
static void quant_base_ids(const char *type, int32_t *ids)
{
	FILE *fp = fopen(shared_path("models/quant/references.jsonl"), "rb");
	ck_assert_msg(fp, "%s: cannot open", shared_path("models/quant/references.jsonl"));
	char file[64], *line = NULL;
	size_t cap = 0;
	snprintf(file, sizeof file, "\"file\": \"quant-base.%s.gguf\"", type);
	bool found = false;
	while (!found && getline(&line, &cap, fp) > 0) {
		if (!strstr(line, file) || !strstr(line, "\"llama_cpp_build\": \"deq\"") ||
		    !strstr(line, "\"kind\": \"teacher_forced\""))
			continue;
		const char *p = strstr(line, "\"prompt_ids\": [");
		ck_assert_ptr_nonnull(p);
		p += strlen("\"prompt_ids\": [");
		for (int i = 0; i < QB_POS; i++) {
			char *end;
			ids[i] = (int32_t)strtol(p, &end, 10);
			ck_assert_msg(end != p, "%s: prompt_ids %d", type, i);
			p = end + 1;
		}
		found = true;
	}
	free(line);
	fclose(fp);
	ck_assert_msg(found, "references.jsonl: no deq teacher_forced record for %s", type);
}

/* Max and mean |logits - ref| over the 64 positions, evaluated on
 * instruction set isa (NULL: the best) in one batched call or token by
 * token; false when this CPU lacks isa. */
static bool quant_base_diff(const char *type, const char *isa, bool batched,
			    const int32_t *ids, const float *ref, double *max, double *mean)
{
	char rel[128], e[BELT_ERR_SIZE];
	snprintf(rel, sizeof rel, "models/quant/quant-base.%s.gguf", type);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = shared_path(rel);
	mp.backend = "cpu";
	mp.n_threads = 2;
	if (isa)
		setenv("BELT_CPU_ISA", isa, 1);
	struct belt_model *m;
	int rc = belt_model_load(&mp, &m, e, sizeof e);
	unsetenv("BELT_CPU_ISA");
	if (rc && isa && strcmp(isa, "generic") && strstr(e, isa))
		return false;
	ck_assert_msg(rc == 0, "%s", e);
	ck_assert_int_eq(belt_model_n_vocab(m), QB_VOCAB);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 128;
	/* the references' K/V cache (models/quant/README.md) */
	sp.type_k = sp.type_v = BELT_TYPE_F32;
	struct belt_session *s;
	ck_assert_msg(belt_session_create(m, &sp, &s, e, sizeof e) == 0, "%s", e);
	float *lg = malloc(sizeof(float) * QB_POS * QB_VOCAB);
	ck_assert_ptr_nonnull(lg);
	if (batched)
		ck_assert_msg(belt_session_eval_all(s, ids, QB_POS, 0, lg, e, sizeof e) == 0, "%s", e);
	else
		for (uint32_t pos = 0; pos < QB_POS; pos++)
			ck_assert_msg(belt_session_eval(s, &ids[pos], 1, pos,
							lg + (size_t)pos * QB_VOCAB, e, sizeof e) == 0,
				      "%s", e);
	*max = *mean = 0;
	for (size_t i = 0; i < (size_t)QB_POS * QB_VOCAB; i++) {
		double d = fabs((double)lg[i] - ref[i]);
		*max = fmax(*max, d);
		*mean += d / (QB_POS * QB_VOCAB);
	}
	free(lg);
	belt_session_free(s);
	belt_model_free(m);
	return true;
}

START_TEST(test_quant_base_logits)
{
	const char *type = quant_base[_i];
	int32_t ids[QB_POS];
	quant_base_ids(type, ids);
	char rel[128];
	snprintf(rel, sizeof rel, "models/quant/logits.quant-base.%s.deq.f32", type);
	float *ref = malloc(sizeof(float) * QB_POS * QB_VOCAB);
	FILE *fp = fopen(shared_path(rel), "rb");
	ck_assert_msg(fp, "%s: cannot open", shared_path(rel));
	ck_assert_uint_eq(fread(ref, sizeof(float), QB_POS * QB_VOCAB, fp), QB_POS * QB_VOCAB);
	fclose(fp);
	static const struct {
		const char *isa; /* NULL: the best this CPU has */
		bool batched;
		double max, mean;
	} runs[] = {
		{"generic", true, 1e-3, 1e-4},
		{"generic", false, 1e-3, 1e-4},
		{"avx2", false, 1.0, 0.08},
		{NULL, true, 1.0, 0.08},
		{NULL, false, 1.0, 0.08},
	};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		double max, mean;
		if (!quant_base_diff(type, runs[r].isa, runs[r].batched, ids, ref, &max, &mean))
			continue;
		printf("quant-base.%-7s %-8s %-7s vs deq: max %.3g mean %.3g\n", type,
		       runs[r].isa ? runs[r].isa : "best", runs[r].batched ? "batched" : "decode",
		       max, mean);
		ck_assert_msg(max <= runs[r].max && mean <= runs[r].mean,
			      "quant-base.%s %s %s: max %g mean %g, tolerances %g %g", type,
			      runs[r].isa ? runs[r].isa : "best", runs[r].batched ? "batched" : "decode",
			      max, mean, runs[r].max, runs[r].mean);
	}
	free(ref);
}
END_TEST

/* ---- lookup and errors ---- */

START_TEST(test_kernel_find)
{
	void *ctx = open_config(0);
	static const char *ops[] = {"rmsnorm", "rope_kv", "attention",
				    "silu_mul", "add", "argmax"};
	for (int i = 0; i < N_WTYPES; i++) {
		const struct belt_kernel *k =
			B->kernel_find(ctx, "matvec", NULL, wtypes[i]);
		ck_assert_ptr_nonnull(k);
		ck_assert_str_eq(k->params, "k:i m:i");
		ck_assert_int_eq(k->n_bind, 3);
		k = B->kernel_find(ctx, "embed", "", wtypes[i]);
		ck_assert_ptr_nonnull(k);
		ck_assert_str_eq(k->params, "n:i");
		ck_assert_str_eq(k->variant, "default");
	}
	for (int i = 0; i < 6; i++) {
		ck_assert_ptr_nonnull(B->kernel_find(ctx, ops[i], NULL, BELT_TYPE_F32));
		ck_assert_ptr_nonnull(B->kernel_find(ctx, ops[i], "default", BELT_TYPE_Q4_K));
		ck_assert_ptr_nonnull(B->kernel_find(ctx, ops[i], "default", BELT_TYPE_ANY));
	}
	ck_assert_str_eq(B->kernel_find(ctx, "rmsnorm", NULL, 0)->params,
			 "n:i eps:f");
	ck_assert_str_eq(B->kernel_find(ctx, "rope_kv", NULL, 0)->params,
			 "n_head:i n_head_kv:i head_dim:i rope_dim:i base:f");
	ck_assert_str_eq(B->kernel_find(ctx, "attention", NULL, 0)->params,
			 "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f");
	ck_assert_ptr_null(B->kernel_find(ctx, "matvec", NULL, BELT_TYPE_IQ2_XXS));
	ck_assert_ptr_null(B->kernel_find(ctx, "matvec", "fast", BELT_TYPE_F32));
	ck_assert_ptr_null(B->kernel_find(ctx, "conv2d", NULL, BELT_TYPE_F32));
	ck_assert_ptr_null(B->kernel_find(ctx, NULL, NULL, BELT_TYPE_F32));
	ck_assert_int_eq(B->abi, BELT_BACKEND_ABI);
	ck_assert_str_eq(B->name, "cpu");
	B->destroy(ctx);
}
END_TEST

START_TEST(test_errors)
{
	void *ctx = open_config(0);
	struct belt_buffer *b = buf_new(ctx, 100);
	char tmp[8];
	ck_assert_int_eq(B->buffer_read(ctx, b, 96, tmp, 8, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "96") && strstr(err, "100"), "%s", err);
	ck_assert_int_eq(B->buffer_write(ctx, b, UINT64_MAX - 2, tmp, 8, err,
					 sizeof err),
			 -1);
	ck_assert_int_eq(B->buffer_read(ctx, b, 92, tmp, 8, err, sizeof err), 0);
	ck_assert_int_eq(B->buffer_read(ctx, b, 100, tmp, 0, err, sizeof err), 0);

	struct belt_buffer *big = NULL;
	ck_assert_int_eq(B->buffer_create(ctx, BELT_BUFFER_KV, UINT64_MAX / 2,
					  &big, err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "bytes"), "%s", err);
	ck_assert_int_eq(B->buffer_create(ctx, BELT_BUFFER_KV, 1ull << 46, &big,
					  err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "70368744177664 bytes"), "%s", err);

	/* a binding past the end of its buffer names the command */
	struct belt_cmd c = cmd_new(ctx, "add", BELT_TYPE_ANY, "blk.3.res");
	bind(&c, b, 0, 40, BELT_TYPE_F32);
	bind(&c, b, 40, 40, BELT_TYPE_F32);
	bind(&c, b, 80, 40, BELT_TYPE_F32);
	pi(&c, 10);
	struct belt_table tab;
	table_init(&tab, &c, 1, 4, NULL, 0);
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.3.res") && strstr(err, "outside"), "%s",
		      err);
	ck_assert_ptr_null(tab.priv);

	/* a binding too small for its params */
	c.bind[2].offset = 60;
	c.n_bind = 3;
	c.param[0].i = 15;
	c.bind[2].size = 40;
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.3.res") && strstr(err, "needs 60"), "%s",
		      err);

	/* wrong param count, wrong weight type */
	c.param[0].i = 10;
	c.n_param = 2;
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "params"), "%s", err);
	struct belt_cmd mv = cmd_new(ctx, "matvec", BELT_TYPE_F16, "blk.0.wq");
	bind(&mv, b, 0, 32, BELT_TYPE_F32);
	bind(&mv, b, 32, 16, BELT_TYPE_F32);
	bind(&mv, b, 48, 8, BELT_TYPE_F32);
	pi(&mv, 4);
	pi(&mv, 2);
	table_init(&tab, &mv, 1, 4, NULL, 0);
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.0.wq") && strstr(err, "f16"), "%s", err);
	mv.bind[0].type = BELT_TYPE_F16;
	prepare(ctx, &tab);
	B->table_release(ctx, &tab);
	/* quantized rows must be whole blocks */
	struct belt_cmd mq = cmd_new(ctx, "matvec", BELT_TYPE_Q8_0, "blk.0.wk");
	bind(&mq, b, 0, 34, BELT_TYPE_Q8_0);
	bind(&mq, b, 36, 64, BELT_TYPE_F32);
	bind(&mq, b, 36, 4, BELT_TYPE_F32);
	pi(&mq, 16);
	pi(&mq, 1);
	table_init(&tab, &mq, 1, 4, NULL, 0);
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.0.wk") && strstr(err, "block"), "%s",
		      err);

	/* positions beyond what the buffers hold */
	int32_t ids[3] = {0};
	struct belt_buffer *bids = buf_from(ctx, ids, sizeof ids);
	struct belt_cmd am = cmd_new(ctx, "argmax", BELT_TYPE_ANY, "argmax");
	bind(&am, b, 0, 40, BELT_TYPE_F32);
	bind(&am, bids, 0, sizeof ids, BELT_TYPE_I32);
	pi(&am, 10);
	table_init(&tab, &am, 1, 100, bids, 0);
	prepare(ctx, &tab);
	run(ctx, &tab, 0, 2, 0);
	ck_assert_int_eq(B->table_run(ctx, &tab, 1, 2, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "positions"), "%s", err);
	B->table_release(ctx, &tab);
	ck_assert_int_eq(B->table_run(ctx, &tab, 0, 1, 0, err, sizeof err), -1);

	/* a kernel from elsewhere */
	struct belt_kernel alien = *am.kernel;
	am.kernel = &alien;
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel"), "%s", err);

	/* an unknown instruction set is an error, not a silent fallback */
	setenv("BELT_CPU_ISA", "avx9000", 1);
	void *bad = NULL;
	struct belt_backend_options opt = {.n_threads = 1, .device = -1};
	ck_assert_int_eq(B->create(&opt, &bad, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "avx9000"), "%s", err);
	unsetenv("BELT_CPU_ISA");

	/* belt.yaml's backends.cpu settings: isa from the file, the
	 * environment over it, an unknown key refused by name */
	struct belt_setting set[] = {{"isa", "avx9001"}};
	opt.settings = set;
	opt.n_settings = 1;
	ck_assert_int_eq(B->create(&opt, &bad, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "avx9001") && strstr(err, "backends.cpu.isa"), "%s", err);
	setenv("BELT_CPU_ISA", "generic", 1);
	ck_assert_msg(B->create(&opt, &bad, err, sizeof err) == 0, "%s", err);
	B->destroy(bad);
	unsetenv("BELT_CPU_ISA");
	set[0] = (struct belt_setting){"threads", "4"};
	ck_assert_int_eq(B->create(&opt, &bad, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "unknown setting 'threads'"), "%s", err);
	opt.settings = NULL;
	opt.n_settings = 0;

	/* one device: index 1 is an error naming it, 0 is the host */
	opt.device = 1;
	ck_assert_int_eq(B->create(&opt, &bad, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "device 1") && strstr(err, "one device"), "%s", err);
	opt.device = 0;
	ck_assert_int_eq(B->create(&opt, &bad, err, sizeof err), 0);
	B->destroy(bad);

	B->buffer_destroy(ctx, b);
	B->buffer_destroy(ctx, bids);
	B->buffer_destroy(ctx, NULL);
	B->destroy(ctx);
	B->destroy(NULL);
}
END_TEST

/* list_devices without create(): the host, with the ISA path create()
 * takes; a count when there is no buffer. */
START_TEST(test_list_devices)
{
	char buf[512];
	ck_assert_ptr_nonnull(B->list_devices);
	ck_assert_int_eq(B->list_devices(NULL, 0, err, sizeof err), 1);
	ck_assert_int_eq(B->list_devices(buf, sizeof buf, err, sizeof err), 1);
	ck_assert_msg(!strncmp(buf, "0: ", 3) && strstr(buf, "cores, ISA path ") &&
			      strstr(buf, " (default)\n"),
		      "%s", buf);
	setenv("BELT_CPU_ISA", "generic", 1);
	ck_assert_int_eq(B->list_devices(buf, sizeof buf, err, sizeof err), 1);
	ck_assert_msg(strstr(buf, "ISA path generic from BELT_CPU_ISA"), "%s", buf);
	/* cut to the buffer, still NUL-terminated */
	ck_assert_int_eq(B->list_devices(buf, 8, err, sizeof err), 1);
	ck_assert_uint_eq(strlen(buf), 7);
	setenv("BELT_CPU_ISA", "avx9000", 1);
	ck_assert_int_eq(B->list_devices(buf, sizeof buf, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "avx9000"), "%s", err);
	unsetenv("BELT_CPU_ISA");
}
END_TEST

/* Default options: one thread per core; create/destroy repeatedly. */
START_TEST(test_create_default)
{
	for (int i = 0; i < 20; i++) {
		void *ctx = NULL;
		struct belt_backend_options opt = {.n_threads = 0, .device = -1};
		ck_assert_msg(B->create(i % 2 ? &opt : NULL, &ctx, err,
					sizeof err) == 0,
			      "%s", err);
		float init[4] = {0, 0, 1, 0};
		struct belt_buffer *buf = buf_from(ctx, init, sizeof init);
		struct belt_cmd cmds[1] = {add1(ctx, buf, 0, 2, 0, false)};
		struct belt_table tab;
		table_init(&tab, cmds, 1, 64, NULL, 0);
		prepare(ctx, &tab);
		run(ctx, &tab, 0, 3, 0);
		buf_get(ctx, buf, 0, init, 4);
		ck_assert(init[0] == 3);
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, buf);
		B->destroy(ctx);
	}
}
END_TEST

/* The module itself: found with lt_dlopenext on the plugin path
 * ($BELT_PLUGIN_PATH first), its descriptor right, and belt_plugin_entry
 * its only export. */
START_TEST(test_module)
{
	const char *path = belt_plugin_path();
	ck_assert_int_eq(lt_dlinit(), 0);
	ck_assert_int_eq(lt_dlsetsearchpath(path), 0);
	lt_dlhandle h = lt_dlopenext("backend-cpu");
	ck_assert_msg(h != NULL, "lt_dlopenext(backend-cpu) in %s: %s", path,
		      lt_dlerror());
	belt_plugin_entry_fn entry;
	*(void **)&entry = lt_dlsym(h, BELT_PLUGIN_ENTRY_SYMBOL);
	ck_assert_ptr_nonnull(entry);
	const struct belt_plugin *p = entry();
	ck_assert_int_eq(p->abi, BELT_PLUGIN_ABI);
	ck_assert_str_eq(p->name, "backend-cpu");
	ck_assert_ptr_nonnull(p->description);
	ck_assert_ptr_nonnull(p->register_features);
	ck_assert_ptr_null(lt_dlsym(h, "cpu_backend_ops"));
	ck_assert_ptr_null(lt_dlsym(h, "cpu_kernels"));
	ck_assert_ptr_null(lt_dlsym(h, "cpu_pool_create"));
	lt_dlclose(h);
	lt_dlexit();
	/* the registry's copy is the same backend */
	const struct belt_backend_ops *ops = belt_backend_get("cpu", err,
							      sizeof err);
	ck_assert_msg(ops == B, "belt_backend_get: %s", err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("backend-cpu");
	TCase *tc = tcase_create("kernels");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tc, test_matvec_float, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_matvec_quant, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_matvec_quant_extremes, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_matmul_quant, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_matvec_threads_identical, 0,
			    N_CONFIGS / 3);
	tcase_add_loop_test(tc, test_matvec_wrapped_readonly, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_embed, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_rmsnorm, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_elementwise, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_rope_kv, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_attention_gqa, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_argmax, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_logit_mask, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_buffer_copy, 0, N_CONFIGS);
	tcase_add_loop_test(tc, test_head_last_only, 0, N_CONFIGS);
	tcase_add_test(tc, test_chained_model);
	tcase_add_test(tc, test_many_chunks);
	suite_add_tcase(s, tc);
	/* a case of their own, to run alone (CK_RUN_CASE=silu_top_k) */
	TCase *tk = tcase_create("silu_top_k");
	tcase_set_timeout(tk, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tk, test_silu, 0, N_CONFIGS);
	tcase_add_loop_test(tk, test_top_k, 0, N_CONFIGS);
	tcase_add_test(tk, test_top_k_errors);
	suite_add_tcase(s, tk);
	TCase *tq = tcase_create("quant_base");
	tcase_set_timeout(tq, 0);
	tcase_add_loop_test(tq, test_quant_base_logits, 0, N_QUANT_BASE);
	suite_add_tcase(s, tq);
	TCase *te = tcase_create("contract");
	tcase_add_test(te, test_module);
	tcase_add_test(te, test_kernel_find);
	tcase_add_test(te, test_errors);
	tcase_add_test(te, test_create_default);
	tcase_add_test(te, test_list_devices);
	suite_add_tcase(s, te);
	return s;
}

int main(void)
{
	B = belt_backend_get("cpu", err, sizeof err);
	if (!B) {
		fprintf(stderr, "check_backend_cpu: %s\n", err);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	report_worst(); /* with CK_FORK=no: the tests ran in this process */
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
