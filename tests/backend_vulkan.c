/* Check suite for the Vulkan backend (plugins/backend-vulkan), run against
 * the CPU backend: both modules are loaded through the registry, each
 * kernel runs on small hand-built tables on both, and results are compared
 * with each other and with references computed here in double precision
 * from the byte layouts in doc/ops.md. The CPU backend runs its portable
 * path (BELT_CPU_ISA=generic: float dot products, no int8 activations).
 * CI runs this on Mesa's lavapipe.
 *
 * Tolerances, by what is compared:
 *  - matvec, all types: |y - ref| <= 2e-5 * sum_j |W[r][j] x[j]| + 1e-6
 *    against the double reference and against the CPU backend (float
 *    accumulation in another order; the quantized types are dequantized
 *    in float on both, so no int8 activation error). Except Q4_0 on a
 *    device with int8 dot products (x as int8, as the CPU's AVX2 path
 *    quantizes it): the same bound against a double reference from the
 *    int8 x (plus one quant off by one, for devices whose division is
 *    not exactly rounded), and against the float reference and the CPU
 *    that bound plus x's quantization error, 0.57 * d * sum |W[r][j]|
 *    per block of scale d (half a step, plus d's fp16 rounding times
 *    127 steps: 2^-11 * 127 = 0.062 of a step).
 *  - Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q5_K, IQ4_XS (quants.glsl):
 *    matvec and the batched product against tests/quant_ref.h's floats
 *    summed in double, |y - ref| <= 2e-5 * sum_j (|w_j| + |o_j|) |x_j| +
 *    1e-6, o_j the weight's offset (Q4_1, Q5_1: m; Q2_K, Q5_K: dmin times
 *    the sub-block's min; else 0), which the backend applies once per
 *    sub-block to a float sum of x (lavapipe: at most 2.9e-7 of that
 *    sum); embed bit-exact with quant_ref.h.
 *  - embed: bit-exact with the CPU backend; add: bit-exact.
 *  - rmsnorm, silu_mul: 1e-5 relative (+1e-6 absolute) to the CPU backend.
 *  - silu: 1e-6 relative to the double reference and to the CPU backend;
 *    top_k: ids exactly, probabilities 1e-5 relative (silu_topk_check.h).
 *  - rope_kv: 1e-5 absolute to the CPU backend (same float angle, sin/cos
 *    to float accuracy), caches hold exactly the rotated k and v.
 *  - attention: 1e-5 relative (+1e-6) to the double reference.
 *  - chained model and real models: the same greedy token ids; logits
 *    within 1e-3 (absolute + relative to |logit|), with F32 caches.
 *  - KV caches (kv): stores within one F16 step, Q8_0 within 0.57 of a
 *    block's step of the values (the CPU's bytes llama.cpp's encoding
 *    exactly); attention over F16 and Q8_0 caches as over F32 ones, 1e-5
 *    relative (+1e-6) to the double reference over the cached values.
 *  - batched tables: the matvec's tiled product per row as matvec against
 *    the double reference (also split over ranges of rows past lavapipe's
 *    128 MiB descriptor range); the chained model's rows (logits, x)
 *    within 1e-3 * (1 + the row's largest |value|) of the same table run
 *    one position at a time, and the same argmax where the reference's
 *    best two logits are further apart than twice that (both paths with
 *    float x: BELT_VK_Q8X=0); a tree's rows likewise against the one-row
 *    path along each row's ancestors; patch none: exact (embed copies,
 *    rope at 0 is the identity, attention zeros).
 *  - settings (belt.yaml backends: vulkan:): fuse 0 as BELT_VK_FUSE=0,
 *    bit-exact; the variables override the file; unknown keys and bad
 *    values refused, named.
 *  - BELT_VK_VALIDATION=fatal: zero validation-layer messages (the backend
 *    fails the run, or aborts in destroy, on any).
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
#include "belt/quant.h"
#include "belt/types.h"
#include "cmd.h"
#include "copy_check.h"
#include "mask_check.h"
#include "silu_topk_check.h"
#include "gated_check.h"
#include "kquant_ref.h"
#include "quant_ref.h"

static const struct belt_backend_ops *V, *C; /* vulkan, cpu */
static char err[BELT_ERR_SIZE];

struct be {
	const struct belt_backend_ops *B;
	void *ctx;
	bool int8_x; /* cpu: Q4_0/Q8_0 matvecs with x as int8 (avx2, avx512) */
	bool cm; /* vulkan: batched products on matrix units (vk_coopmat_on) */
	bool cm8; /* and Q4_0/Q8_0 ones in int8 (vk_coopmat_int8_on) */
};
static bool vk_coopmat_on(void);
static bool vk_coopmat_int8_on(void);

static struct be open_vk(void)
{
	struct belt_backend_options opt = {.n_threads = 1, .device = -1};
	struct be b = {.B = V};
	ck_assert_msg(V->create(&opt, &b.ctx, err, sizeof err) == 0,
		      "vulkan create: %s", err);
	b.cm = vk_coopmat_on();
	b.cm8 = vk_coopmat_int8_on();
	return b;
}

/* The Vulkan backend with environment variable var set to value while it
 * reads its settings. */
static struct be open_vk_set(const char *var, const char *value)
{
	setenv(var, value, 1);
	struct be b = open_vk();
	unsetenv(var);
	return b;
}

static struct be open_cpu(void)
{
	setenv("BELT_CPU_ISA", "generic", 1);
	struct belt_backend_options opt = {.n_threads = 2, .device = -1};
	struct be b = {.B = C};
	ck_assert_msg(C->create(&opt, &b.ctx, err, sizeof err) == 0,
		      "cpu create: %s", err);
	unsetenv("BELT_CPU_ISA");
	return b;
}

/* The CPU backend on ISA path isa (int8 x for Q4_0 and Q8_0 on avx2 and
 * avx512);
 * false, with a note, where this CPU cannot run it. */
static bool open_cpu_isa(const char *isa, struct be *b)
{
	setenv("BELT_CPU_ISA", isa, 1);
	struct belt_backend_options opt = {.n_threads = 2, .device = -1};
	b->B = C;
	b->int8_x = true;
	int rc = C->create(&opt, &b->ctx, err, sizeof err);
	unsetenv("BELT_CPU_ISA");
	if (rc)
		fprintf(stderr, "skipping the cpu's %s path: %s\n", isa, err);
	return rc == 0;
}

static void be_close(struct be *b)
{
	b->B->destroy(b->ctx);
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

static struct belt_buffer *buf_new(struct be *b, uint64_t size)
{
	struct belt_buffer *r = NULL;
	ck_assert_msg(b->B->buffer_create(b->ctx, BELT_BUFFER_SCRATCH, size,
					  &r, err, sizeof err) == 0,
		      "%s buffer_create: %s", b->B->name, err);
	return r;
}

static void buf_put(struct be *b, struct belt_buffer *buf, uint64_t off,
		    const void *src, uint64_t size)
{
	ck_assert_msg(b->B->buffer_write(b->ctx, buf, off, src, size, err,
					 sizeof err) == 0,
		      "%s buffer_write: %s", b->B->name, err);
}

static struct belt_buffer *buf_from(struct be *b, const void *data,
				    uint64_t size)
{
	struct belt_buffer *r = buf_new(b, size);
	buf_put(b, r, 0, data, size);
	return r;
}

static void buf_get(struct be *b, struct belt_buffer *buf, uint64_t off,
		    void *dst, uint64_t size)
{
	ck_assert_msg(b->B->buffer_read(b->ctx, buf, off, dst, size, err,
					sizeof err) == 0,
		      "%s buffer_read: %s", b->B->name, err);
}

static void buf_free(struct be *b, struct belt_buffer *buf)
{
	b->B->buffer_destroy(b->ctx, buf);
}

static struct belt_cmd cmd_variant(struct be *b, const char *op,
				   const char *variant, int wtype,
				   const char *label)
{
	struct belt_cmd c;
	memset(&c, 0, sizeof c);
	c.kernel = b->B->kernel_find(b->ctx, op, variant, wtype);
	ck_assert_msg(c.kernel != NULL, "%s: no kernel %s/%s for type %d",
		      b->B->name, op, variant, wtype);
	c.label = label;
	c.layer = -1;
	c.patch = op_patch(op);
	return c;
}

static struct belt_cmd cmd_new(struct be *b, const char *op, int wtype,
			       const char *label)
{
	struct belt_cmd c;
	memset(&c, 0, sizeof c);
	c.kernel = b->B->kernel_find(b->ctx, op, "default", wtype);
	ck_assert_msg(c.kernel != NULL, "%s: no kernel %s for type %d",
		      b->B->name, op, wtype);
	c.label = label;
	c.layer = -1;
	return c;
}

static void prepare(struct be *b, struct belt_table *t)
{
	ck_assert_msg(b->B->table_prepare(b->ctx, t, err, sizeof err) == 0,
		      "%s table_prepare: %s", b->B->name, err);
}

static void run(struct be *b, struct belt_table *t, uint32_t pos, uint32_t n,
		uint32_t flags)
{
	ck_assert_msg(b->B->table_run(b->ctx, t, pos, n, flags, err,
				      sizeof err) == 0,
		      "%s table_run: %s", b->B->name, err);
}

/* ---- weights ---- */

static const int wtypes[] = {BELT_TYPE_F32, BELT_TYPE_F16, BELT_TYPE_BF16,
			     BELT_TYPE_Q8_0, BELT_TYPE_Q4_0};
#define N_WTYPES 5

static bool is_quant(int t)
{
	return belt_type_block(t) > 1;
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
		if (is_quant(t)) {
			size_t bb = belt_type_block_bytes(t);
			for (int b = 0; b < k / 32; b++) {
				uint8_t *blk = row + bb * (size_t)b;
				for (size_t j = 0; j < bb; j++)
					blk[j] = (uint8_t)rng_u32();
				uint16_t d = belt_f32_to_fp16(
					0.05f * (0.02f + rng_f() + 1.0f));
				blk[0] = (uint8_t)d;
				blk[1] = (uint8_t)(d >> 8);
			}
			continue;
		}
		for (int j = 0; j < k; j++) {
			float v = rng_f();
			uint16_t h;
			if (t == BELT_TYPE_F32) {
				memcpy(row + 4 * j, &v, 4);
			} else {
				h = t == BELT_TYPE_F16 ? belt_f32_to_fp16(v)
						       : belt_f32_to_bf16(v);
				memcpy(row + 2 * j, &h, 2);
			}
		}
	}
	*row_bytes = rb;
	return w;
}

/* Element j of a row of type t, from the byte layout in doc/ops.md. */
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
	}
	ck_abort_msg("weight type %d", t);
	return 0;
}

/* ---- matvec ---- */

static double worst_matvec[N_WTYPES];

/* Whether the Vulkan backend's default device lists feature (as `belt
 * info` prints its devices), unless variable env is 0. */
static bool vk_default_has(const char *env, const char *feature)
{
	const char *e = getenv(env);
	if (e && !strcmp(e, "0"))
		return false;
	char buf[8192];
	ck_assert_int_gt(V->list_devices(buf, sizeof buf, err, sizeof err), 0);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, "(default)"))
			return strstr(line, feature) != NULL;
	return false;
}

/* Whether the Vulkan backend runs Q4_0 and Q8_0 matvecs with x as int8:
 * its default device has int8 dot products and BELT_VK_Q8X is not 0. */
static bool vk_q8x(void)
{
	return vk_default_has("BELT_VK_Q8X", "int8 dot products");
}

/* Whether the default device runs batched products on matrix units
 * (matmul_cm.comp), unless BELT_VK_COOPMAT is 0. */
static bool vk_coopmat_on(void)
{
	return vk_default_has("BELT_VK_COOPMAT", "cooperative matrices");
}

/* Whether it runs those of Q4_0 and Q8_0 weights in int8 there
 * (matmul_q8cm.comp), unless BELT_VK_COOPMAT or BELT_VK_COOPMAT_INT8 is 0. */
static bool vk_coopmat_int8_on(void)
{
	const char *e = getenv("BELT_VK_COOPMAT_INT8");
	return (!e || strcmp(e, "0")) &&
	       vk_default_has("BELT_VK_COOPMAT", "cooperative matrices (float16, int8)");
}

/* On a device with int8 matrix products (be.cm8), a few-row pass of at
 * least this many rows runs its Q4_0 and Q8_0 matvecs on them (setting
 * few_mma; 0: never) */
static uint32_t few_mma_from(void)
{
	const char *e = getenv("BELT_VK_FEW_MMA");
	return e && *e ? (uint32_t)atoi(e) : 14;
}

/* x as matvec_fused's int8 variants of the K-quants stage it (Q4_K,
 * Q5_K, Q6_K on a device with int8 dot products): per 16 consecutive
 * values, d = amax / 127 and q = round-to-nearest-even(x * 127 / amax),
 * in float; xq[j] = d * q[j]. */
static void xq16(const float *x, int k, float *xq)
{
	for (int g = 0; g < k; g += 16) {
		float amax = 0.0f;
		for (int i = 0; i < 16; i++)
			amax = fmaxf(amax, fabsf(x[g + i]));
		float id = amax > 0.0f ? 127.0f / amax : 0.0f, d = amax / 127.0f;
		for (int i = 0; i < 16; i++)
			xq[g + i] = d * nearbyintf(x[g + i] * id);
	}
}

/* Whether a one-row matvec of K-quant type t (aligned) runs with x as
 * int8 on this device: Q4_K, Q5_K and Q6_K (Q4_0 and Q8_0 too, per 32:
 * vk_q8x's tests; IQ4_XS keeps float x). */
static bool kq_int8(int t)
{
	return (t == BELT_TYPE_Q4_K || t == BELT_TYPE_Q5_K || t == BELT_TYPE_Q6_K) && vk_q8x();
}

/* x as the CPU backend's quantize_x makes it (block of 32: d = amax / 127
 * rounded to fp16, q = round-to-nearest-even(x * 127 / amax)): xq[j] =
 * d * q[j], and dq[j] the block's d. */
static void quantize_x(const float *x, int k, double *xq, double *dq)
{
	for (int b = 0; b < k / 32; b++) {
		float amax = 0;
		for (int j = 32 * b; j < 32 * b + 32; j++)
			amax = fmaxf(amax, fabsf(x[j]));
		float d = belt_fp16_to_f32(belt_f32_to_fp16(amax / 127.0f));
		float id = amax > 0 ? 127.0f / amax : 0.0f;
		for (int j = 32 * b; j < 32 * b + 32; j++) {
			xq[j] = (double)d * nearbyintf(x[j] * id);
			dq[j] = d;
		}
	}
}

/* y = W x through backend b, W at byte offset woff and x at xoff of their
 * buffers. */
static void backend_matvec(struct be *b, int t, const uint8_t *w,
			   size_t row_bytes, const float *x, int k, int m,
			   uint64_t woff, uint64_t xoff, float *y)
{
	uint64_t wbytes = row_bytes * (size_t)m;
	struct belt_buffer *bw = buf_new(b, woff + wbytes);
	buf_put(b, bw, woff, w, wbytes);
	struct belt_buffer *bx = buf_new(b, xoff + (uint64_t)k * 4);
	buf_put(b, bx, xoff, x, (uint64_t)k * 4);
	struct belt_buffer *by = buf_new(b, (uint64_t)m * 4);
	struct belt_cmd c = cmd_new(b, "matvec", t, "test.matvec");
	bind(&c, bw, woff, wbytes, t);
	c.bind[0].ne[0] = k;
	c.bind[0].ne[1] = m;
	bind(&c, bx, xoff, (uint64_t)k * 4, BELT_TYPE_F32);
	bind(&c, by, 0, (uint64_t)m * 4, BELT_TYPE_F32);
	pi(&c, k);
	pi(&c, m);
	struct belt_table tab;
	table_init(&tab, &c, 1, 1, NULL, 1);
	prepare(b, &tab);
	run(b, &tab, 0, 1, 0);
	buf_get(b, by, 0, y, (uint64_t)m * 4);
	b->B->table_release(b->ctx, &tab);
	ck_assert_ptr_null(tab.priv);
	buf_free(b, bw);
	buf_free(b, bx);
	buf_free(b, by);
}

static void check_matvec(struct be *vk, struct be *cpu, int ti, int k, int m,
			 uint64_t woff, uint64_t xoff)
{
	int t = wtypes[ti];
	size_t rb;
	uint8_t *w = weights_new(t, k, m, &rb);
	float *x = malloc((size_t)k * 4), *y = malloc((size_t)m * 4),
	      *yc = malloc((size_t)m * 4);
	fill(x, (size_t)k);
	backend_matvec(vk, t, w, rb, x, k, m, woff, xoff, y);
	backend_matvec(cpu, t, w, rb, x, k, m, 0, 0, yc);
	/* Q4_0 and Q8_0 in matvec_fused (16-byte aligned weights) with x as
	 * int8 */
	bool xq = (t == BELT_TYPE_Q4_0 || t == BELT_TYPE_Q8_0) &&
		  woff % 16 == 0 && vk_q8x();
	double *xqv = malloc((size_t)k * sizeof *xqv),
	       *dq = malloc((size_t)k * sizeof *dq);
	if (xq)
		quantize_x(x, k, xqv, dq);
	for (int r = 0; r < m; r++) {
		const uint8_t *row = w + rb * (size_t)r;
		double ref = 0, mag = 0, refq = 0, magq = 0, qerr = 0,
		       flip = 0;
		for (int j = 0; j < k; j++) {
			double wj = weight_at(t, row, j);
			ref += wj * x[j];
			mag += fabs(wj * x[j]);
			if (xq) {
				refq += wj * xqv[j];
				magq += fabs(wj * xqv[j]);
				qerr += 0.57 * dq[j] * fabs(wj);
				flip = fmax(flip, dq[j] * fabs(wj));
			}
		}
		double tol = 2e-5 * mag + 1e-6;
		double e = fabs(y[r] - ref);
		if (xq) {
			double tq = 2e-5 * magq + 1e-6 + flip;
			ck_assert_msg(fabs(y[r] - refq) <= tq,
				      "matvec %s, int8 x, k=%d m=%d row %d: "
				      "%.9g vs int8-x ref %.9g (tol %.3g)",
				      belt_type_name(t), k, m, r, y[r], refq, tq);
			tol += qerr;
			e = fabs(y[r] - refq);
		}
		if (mag > 0 && e / mag > worst_matvec[ti])
			worst_matvec[ti] = e / mag;
		ck_assert_msg(fabs(y[r] - ref) <= tol && fabs(y[r] - yc[r]) <= tol,
			      "matvec %s k=%d m=%d off %d/%d row %d: %.9g vs "
			      "ref %.9g, cpu %.9g (tol %.3g)",
			      belt_type_name(t), k, m, (int)woff, (int)xoff, r,
			      y[r], ref, yc[r], tol);
	}
	free(xqv);
	free(dq);
	free(w);
	free(x);
	free(y);
	free(yc);
}

START_TEST(test_matvec)
{
	struct be vk = open_vk(), cpu = open_cpu();
	int t = wtypes[_i];
	rng_seed(1 + _i);
	if (!is_quant(t)) {
		static const int sizes[][2] = {
			{1, 1},	   {7, 3},    {8, 5},	  {33, 17}, {100, 1},
			{515, 67}, {512, 96}, {4096, 40}, {1, 200}, {64, 1001}};
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			check_matvec(&vk, &cpu, _i, sizes[s][0], sizes[s][1],
				     0, 0);
		/* offsets that rule out the 16-byte loads */
		check_matvec(&vk, &cpu, _i, 256, 9, t == BELT_TYPE_F32 ? 4 : 2,
			     0);
		check_matvec(&vk, &cpu, _i, 256, 9, 0, 4);
		check_matvec(&vk, &cpu, _i, 256, 9, 48, 36);
	} else {
		static const int sizes[][2] = {{1, 1},	{1, 17},  {2, 5},
					       {3, 33}, {16, 64}, {128, 19},
					       {5, 301}};
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			check_matvec(&vk, &cpu, _i, 32 * sizes[s][0],
				     sizes[s][1], 0, 0);
		check_matvec(&vk, &cpu, _i, 64, 7, 2, 4);
		check_matvec(&vk, &cpu, _i, 96, 7, 18, 20);
		/* x staged in 3 tiles (the last partial) */
		setenv("BELT_VK_MV_TILE", "2048", 1);
		struct be vt = open_vk();
		unsetenv("BELT_VK_MV_TILE");
		check_matvec(&vt, &cpu, _i, 32 * 160, 70, 0, 0);
		be_close(&vt);
	}
	if (t == BELT_TYPE_Q4_0 || t == BELT_TYPE_Q8_0) {
		/* the float path, for devices without int8 dot products */
		setenv("BELT_VK_Q8X", "0", 1);
		struct be vf = open_vk();
		check_matvec(&vf, &cpu, _i, 32 * 128, 19, 0, 0);
		check_matvec(&vf, &cpu, _i, 32 * 5, 301, 0, 0);
		be_close(&vf);
		unsetenv("BELT_VK_Q8X");
	}
	fprintf(stderr, "vulkan matvec %s: worst |y - ref| / sum|w x| = %.3g\n",
		belt_type_name(t), worst_matvec[_i]);
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* The embed command of a test: rows of n of type t in bw (vocab rows of
 * rb bytes), ids in bids (ids_bytes), out to bo. */
static struct belt_cmd embed_cmd(struct be *b, int t, struct belt_buffer *bw, size_t rb,
				 int vocab, int n, struct belt_buffer *bids, uint64_t ids_bytes,
				 struct belt_buffer *bo)
{
	struct belt_cmd c = cmd_new(b, "embed", t, "token_embd");
	c.patch = BELT_PATCH_TOKEN_OFFSET;
	bind(&c, bw, 0, rb * vocab, t);
	c.bind[0].ne[0] = n;
	c.bind[0].ne[1] = vocab;
	bind(&c, bids, 0, ids_bytes, BELT_TYPE_I32);
	bind(&c, bo, 0, (uint64_t)n * 4, BELT_TYPE_F32);
	pi(&c, n);
	return c;
}

/* ---- K-quants (Q4_K, Q6_K) in GGUF's layout ---- */

static const int ktypes[] = {BELT_TYPE_Q4_K, BELT_TYPE_Q6_K};

/* m rows of k (a multiple of 256) random K-quant weights: random bytes,
 * fp16 scales (d, and Q4_K's dmin) of a sensible size. */
static uint8_t *kweights_new(int t, int k, int m, size_t *row_bytes)
{
	size_t rb = belt_type_row_bytes(t, (uint64_t)k), bb = belt_type_block_bytes(t);
	ck_assert_uint_gt(rb, 0);
	uint8_t *w = malloc(rb * (size_t)m);
	ck_assert_ptr_nonnull(w);
	for (size_t b = 0; b < rb * (size_t)m / bb; b++) {
		uint8_t *blk = w + bb * b;
		for (size_t j = 0; j < bb; j++)
			blk[j] = (uint8_t)rng_u32();
		size_t at;
		int n = block_scales(t, &at);
		for (int i = 0; i < n; i++, at += 2) {
			uint16_t d = belt_f32_to_fp16(0.005f * (0.02f + rng_f() + 1.0f));
			blk[at] = (uint8_t)d;
			blk[at + 1] = (uint8_t)(d >> 8);
		}
	}
	*row_bytes = rb;
	return w;
}

/* y rows = W x rows through a batched table of rows rows on backend b,
 * one pass of its first n (rows 1: the one-row table, decode's matvec). */
static void backend_matmul_pass(struct be *b, int t, const uint8_t *w, size_t rb,
				const float *x, int k, int m, uint32_t rows, uint32_t n,
				float *y)
{
	struct belt_buffer *bw = buf_from(b, w, rb * (size_t)m);
	struct belt_buffer *bx = buf_from(b, x, (uint64_t)rows * k * 4);
	struct belt_buffer *by = buf_new(b, (uint64_t)rows * m * 4);
	struct belt_cmd c = cmd_new(b, "matvec", t, "test.matmul");
	bind(&c, bw, 0, rb * (size_t)m, t);
	c.bind[0].ne[0] = k;
	c.bind[0].ne[1] = m;
	bind(&c, bx, 0, (uint64_t)rows * k * 4, BELT_TYPE_F32);
	c.bind[1].ne[0] = k;
	c.bind[1].ne[1] = rows;
	bind(&c, by, 0, (uint64_t)rows * m * 4, BELT_TYPE_F32);
	c.bind[2].ne[0] = m;
	c.bind[2].ne[1] = rows;
	pi(&c, k);
	pi(&c, m);
	struct belt_table tab;
	table_init(&tab, &c, 1, rows, NULL, rows > 1 ? 0 : 1);
	tab.rows = rows > 1 ? rows : 0;
	prepare(b, &tab);
	run(b, &tab, 0, n, 0);
	buf_get(b, by, 0, y, (uint64_t)n * m * 4);
	b->B->table_release(b->ctx, &tab);
	buf_free(b, bw);
	buf_free(b, bx);
	buf_free(b, by);
}

static void backend_matmul(struct be *b, int t, const uint8_t *w, size_t rb, const float *x,
			   int k, int m, uint32_t n, float *y)
{
	backend_matmul_pass(b, t, w, rb, x, k, m, n, n, y);
}

/* A pass of n <= 16 rows of a table of 17 (the few-row pass, on
 * matvec_fused): each row bit for bit the one-row table's. k of 16
 * super-blocks spans several of the tiles of x the pass stages. */
static void kquant_few_rows(struct be *vk, int t)
{
	int k = 4096, m = 20;
	size_t rb;
	uint8_t *w = kweights_new(t, k, m, &rb);
	float *x = malloc((size_t)17 * k * 4), *y = malloc((size_t)17 * m * 4);
	float *one = malloc((size_t)m * 4);
	ck_assert(x && y && one);
	fill(x, (size_t)17 * k);
	static const uint32_t ns[] = {16, 9, 2};
	for (int p = 0; p < 3; p++) {
		backend_matmul_pass(vk, t, w, rb, x, k, m, 17, ns[p], y);
		for (uint32_t row = 0; row < ns[p]; row++) {
			backend_matmul(vk, t, w, rb, x + (size_t)row * k, k, m, 1, one);
			for (int r = 0; r < m; r++)
				ck_assert_msg(y[(size_t)row * m + r] == one[r],
					      "%s few-row pass of %u: row %u, %d: %.9g vs one-row %.9g",
					      belt_type_name(t), ns[p], row, r,
					      y[(size_t)row * m + r], one[r]);
		}
	}
	free(w);
	free(x);
	free(y);
	free(one);
}

/* matvec and the batched product of K-quant weights against the weights
 * decoded here, in double: within 2e-5 of sum |w x| (float sums in
 * another order; the weights are exact). Shapes: one to 16 super-blocks,
 * rows that fill a workgroup partly, passes that fill a tile partly. */
static void kquant_matvec_cases(struct be *vkp, int t, double rel_batched)
{
	struct be vk = *vkp;
	static const int shapes[][3] = {/* super-blocks of k, m, rows */
					{1, 1, 1},  {1, 17, 1}, {2, 64, 1}, {5, 301, 1},
					{16, 70, 1}, {1, 3, 2},  {2, 65, 7}, {4, 130, 70}};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int k = 256 * shapes[s][0], m = shapes[s][1];
		uint32_t n = (uint32_t)shapes[s][2];
		size_t rb;
		uint8_t *w = kweights_new(t, k, m, &rb);
		float *x = malloc((size_t)n * k * 4), *y = malloc((size_t)n * m * 4);
		fill(x, (size_t)n * k);
		backend_matmul(&vk, t, w, rb, x, k, m, n, y);
		/* the one-row table's matvec takes x as int8 where it can */
		float *xr = malloc((size_t)n * k * 4);
		if (n == 1 && kq_int8(t))
			xq16(x, k, xr);
		else
			memcpy(xr, x, (size_t)n * k * 4);
		for (uint32_t row = 0; row < n; row++)
			for (int r = 0; r < m; r++) {
				double ref = 0, mag = 0;
				for (int j = 0; j < k; j++) {
					float f;
					double wj = kq_weight(t, w + rb * (size_t)r, j, &f);
					ref += wj * xr[(size_t)row * k + j];
					mag += fabs(wj * x[(size_t)row * k + j]);
				}
				float got = y[(size_t)row * m + r];
				double rel = n > 1 ? rel_batched : 2e-5;
				ck_assert_msg(fabs(got - ref) <= rel * mag + 1e-6,
					      "%s k=%d m=%d rows %u: row %u, %d: %.9g vs ref %.9g",
					      belt_type_name(t), k, m, n, row, r, got, ref);
			}
		free(w);
		free(x);
		free(xr);
		free(y);
	}
	kquant_few_rows(&vk, t);
}

/* Run cases(vk, t, rel) on the path the device takes (the matrix units
 * where it has them: rel 1e-3 for batched products, whose x and weights
 * are rounded to float16) and, on such a device, on their other tiles
 * (BELT_VK_MM_TILE) and on the plain shaders (BELT_VK_COOPMAT=0, rel
 * 2e-5) too. */
static void on_both_paths(void (*cases)(struct be *, int, double), int t)
{
	static bool said;
	bool cm = vk_coopmat_on();
	struct be vk = open_vk();
	cases(&vk, t, cm ? 1e-3 : 2e-5);
	be_close(&vk);
	if (!cm) {
		if (!said)
			printf("batched products on matrix units not tested: the "
			       "default device has no VK_NV_cooperative_matrix "
			       "with 16 x 16 x 16 float16 products, or "
			       "BELT_VK_COOPMAT=0\n");
		said = true;
		return;
	}
	/* the other tiles, which the sizes here do not choose */
	static const char *const tiles[] = {"128x128x64x32", "128x64x32x32",
					    "128x128x32x32", "64x64x32x16",
					    "256x32x64x32"};
	bool int8 = vk_coopmat_int8_on();
	static bool said8;
	if (!int8 && !said8)
		printf("batched int8 products on matrix units not tested: the "
		       "default device has no 16 x 16 x 32 int8 ones, or "
		       "BELT_VK_COOPMAT_INT8=0\n");
	said8 = true;
	for (int i = 0; i < 5; i++) {
		/* Q4_0 and Q8_0 in float16 too, where int8 is the default */
		setenv("BELT_VK_MM_TILE", tiles[i], 1);
		setenv("BELT_VK_COOPMAT_INT8", "0", 1);
		vk = open_vk();
		unsetenv("BELT_VK_MM_TILE");
		unsetenv("BELT_VK_COOPMAT_INT8");
		cases(&vk, t, 1e-3);
		be_close(&vk);
	}
	/* the int8 products' other tiles (these sizes take the small one) */
	static const char *const qtiles[] = {"128x128x32x32", "128x128x64x16",
					     "128x64x32x32", "64x128x32x32"};
	for (int i = 0; int8 && i < 4; i++) {
		setenv("BELT_VK_MQ_TILE", qtiles[i], 1);
		vk = open_vk();
		unsetenv("BELT_VK_MQ_TILE");
		cases(&vk, t, 1e-3);
		be_close(&vk);
	}
	setenv("BELT_VK_COOPMAT", "0", 1);
	vk = open_vk();
	unsetenv("BELT_VK_COOPMAT");
	cases(&vk, t, 2e-5);
	be_close(&vk);
}

START_TEST(test_kquant_matvec)
{
	rng_seed(40 + _i);
	on_both_paths(kquant_matvec_cases, ktypes[_i]);
}
END_TEST

/* embed of K-quant rows: the floats ggml's dequantization gives, exactly
 * (the CPU backend's too); ids out of range give zeros. */
START_TEST(test_kquant_embed)
{
	struct be vk = open_vk();
	int t = ktypes[_i];
	rng_seed(50 + _i);
	const int vocab = 6, n = 512;
	int32_t ids[5] = {3, 0, 5, -1, 6};
	size_t rb;
	uint8_t *w = kweights_new(t, n, vocab, &rb);
	struct belt_buffer *bw = buf_from(&vk, w, rb * vocab);
	struct belt_buffer *bids = buf_from(&vk, ids, sizeof ids);
	struct belt_buffer *bo = buf_new(&vk, (uint64_t)n * 4);
	struct belt_cmd c = embed_cmd(&vk, t, bw, rb, vocab, n, bids, sizeof ids, bo);
	struct belt_table tab;
	table_init(&tab, &c, 1, 5, bids, 1);
	prepare(&vk, &tab);
	float out[512];
	for (uint32_t p = 0; p < 5; p++) {
		run(&vk, &tab, p, 1, 0);
		buf_get(&vk, bo, 0, out, sizeof out);
		for (int j = 0; j < n; j++) {
			float f = 0.0f;
			if (ids[p] >= 0 && ids[p] < vocab)
				kq_weight(t, w + rb * (size_t)ids[p], j, &f);
			ck_assert_msg(out[j] == f, "embed %s id %d [%d]: %.9g vs %.9g",
				      belt_type_name(t), ids[p], j, out[j], f);
		}
	}
	vk.B->table_release(vk.ctx, &tab);
	buf_free(&vk, bw);
	buf_free(&vk, bids);
	buf_free(&vk, bo);
	free(w);
	be_close(&vk);
}
END_TEST

/* ---- the other block types (quants.glsl) in GGUF's layout ---- */

static const int qtypes[] = {BELT_TYPE_Q4_1, BELT_TYPE_Q5_0, BELT_TYPE_Q5_1,
			     BELT_TYPE_IQ4_NL, BELT_TYPE_Q2_K, BELT_TYPE_Q3_K,
			     BELT_TYPE_Q5_K, BELT_TYPE_IQ4_XS};
#define N_QTYPES (int)(sizeof qtypes / sizeof qtypes[0])

/* Where a block of type t keeps its fp16 scales: the first at byte *at,
 * returns how many (d, and the min's scale where the type has one). */
static int qblock_scales(int t, size_t *at)
{
	*at = t == BELT_TYPE_Q2_K ? 80 : t == BELT_TYPE_Q3_K ? 108 : 0;
	return t == BELT_TYPE_Q4_1 || t == BELT_TYPE_Q5_1 || t == BELT_TYPE_Q2_K ||
			       t == BELT_TYPE_Q5_K
		       ? 2
		       : 1;
}

/* |the offset| of weight e of block blk, for the types whose weights are
 * a scaled quant plus an offset (Q4_1, Q5_1: m; Q2_K, Q5_K: dmin times
 * the sub-block's min), else 0: the backend applies it to a sum of x, so
 * its rounding scales with it, not with the weight. */
static double qoffset(int t, const uint8_t *blk, int e)
{
	switch (t) {
	case BELT_TYPE_Q4_1:
	case BELT_TYPE_Q5_1:
		return fabs(belt_fp16_to_f32(kq_rd16(blk + 2)));
	case BELT_TYPE_Q2_K:
		return fabs(belt_fp16_to_f32(kq_rd16(blk + 82))) * (blk[e / 16] >> 4);
	case BELT_TYPE_Q5_K: {
		int sc, m;
		qr_scale_min_k4(blk + 4, e / 32, &sc, &m);
		return fabs(belt_fp16_to_f32(kq_rd16(blk + 2))) * m;
	}
	default:
		return 0;
	}
}

/* m rows of k random weights of type t: random bytes, fp16 scales of a
 * sensible size (Q4_1's and Q5_1's m negative, as a block's minimum). */
static uint8_t *qweights_new(int t, int k, int m, size_t *row_bytes)
{
	size_t rb = belt_type_row_bytes(t, (uint64_t)k), bb = belt_type_block_bytes(t);
	ck_assert_uint_gt(rb, 0);
	uint8_t *w = malloc(rb * (size_t)m);
	ck_assert_ptr_nonnull(w);
	for (size_t b = 0; b < rb * (size_t)m / bb; b++) {
		uint8_t *blk = w + bb * b;
		for (size_t j = 0; j < bb; j++)
			blk[j] = (uint8_t)rng_u32();
		size_t at;
		int n = qblock_scales(t, &at);
		for (int i = 0; i < n; i++, at += 2) {
			float v = 0.005f * (0.02f + rng_f() + 1.0f);
			if (i == 1 && (t == BELT_TYPE_Q4_1 || t == BELT_TYPE_Q5_1))
				v *= -8.0f;
			uint16_t d = belt_f32_to_fp16(v);
			blk[at] = (uint8_t)d;
			blk[at + 1] = (uint8_t)(d >> 8);
		}
	}
	*row_bytes = rb;
	return w;
}

/* matvec (one-row table) and the batched product of each type against
 * quant_ref.h's dequantization, summed in double: |y - ref| <= 2e-5 *
 * sum_j (|w_j| + |o_j|) |x_j| + 1e-6 for every type, o_j the weight's
 * offset (qoffset: the backend sums q x and x per sub-block and applies
 * the scale and the offset once, in float). Shapes: one block to 16
 * super-blocks (32-blocks: 3 blocks too, k not a multiple of 256), rows
 * that fill a workgroup partly, passes that fill a tile partly, and
 * bindings at offsets off their alignment. */
static void quant_matvec_cases(struct be *vkp, int t, double rel_batched)
{
	struct be vk = *vkp;
	static const int shapes[][3] = {/* k, m, rows */
					{256, 1, 1},	{256, 17, 1}, {512, 64, 1},
					{1280, 301, 1}, {4096, 70, 1}, {256, 3, 2},
					{512, 65, 7},	{1024, 130, 70}, {96, 33, 1},
					{96, 33, 5}};
	double worst[2] = {0, 0}; /* one-row table, batched */
	/* the last two: W 2 bytes and x one float past their bindings'
	 * alignment (16-bit words at odd offsets, x without vec4 loads) */
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] + 2; s++) {
		bool shifted = s >= sizeof shapes / sizeof shapes[0];
		int k = shifted ? 512 : shapes[s][0], m = shifted ? 19 : shapes[s][1];
		uint32_t n = shifted ? 1 : (uint32_t)shapes[s][2];
		if (k % (int)belt_type_block(t))
			continue;
		size_t rb, bb = belt_type_block_bytes(t), qb = belt_type_block(t);
		uint8_t *w = qweights_new(t, k, m, &rb);
		float *x = malloc((size_t)n * k * 4), *y = malloc((size_t)n * m * 4);
		float *wr = malloc((size_t)k * 4);
		double *off = malloc((size_t)k * sizeof *off);
		fill(x, (size_t)n * k);
		if (shifted)
			backend_matvec(&vk, t, w, rb, x, k, m, s % 2 ? 2 : 6, s % 2 ? 4 : 12, y);
		else
			backend_matmul(&vk, t, w, rb, x, k, m, n, y);
		/* the one-row table's matvec (16-byte aligned) takes x as
		 * int8 where it can */
		float *xr = malloc((size_t)n * k * 4);
		if (!shifted && n == 1 && kq_int8(t))
			xq16(x, k, xr);
		else
			memcpy(xr, x, (size_t)n * k * 4);
		for (int r = 0; r < m; r++) {
			const uint8_t *row = w + rb * (size_t)r;
			ck_assert_int_eq(quant_ref_row(t, row, (size_t)k, wr), 0);
			for (int j = 0; j < k; j++)
				off[j] = qoffset(t, row + bb * (j / qb), j % (int)qb);
			for (uint32_t p = 0; p < n; p++) {
				const float *xp = x + (size_t)p * k, *xrp = xr + (size_t)p * k;
				double ref = 0, mag = 0;
				for (int j = 0; j < k; j++) {
					ref += (double)wr[j] * xrp[j];
					mag += (fabs(wr[j]) + off[j]) * fabs(xp[j]);
				}
				double got = y[(size_t)p * m + r], e = fabs(got - ref);
				if (e / (mag + 1e-30) > worst[n > 1])
					worst[n > 1] = e / (mag + 1e-30);
				ck_assert_msg(e <= (n > 1 ? rel_batched : 2e-5) * mag + 1e-6,
					      "%s k=%d m=%d rows %u: row %u, %d: %.9g vs ref %.9g",
					      belt_type_name(t), k, m, n, p, r, got, ref);
			}
		}
		free(w);
		free(x);
		free(xr);
		free(y);
		free(wr);
		free(off);
	}
	fprintf(stderr,
		"vulkan %s: worst |y - ref| / sum (|w| + |o|) |x|: matvec %.3g, batched %.3g%s\n",
		belt_type_name(t), worst[0], worst[1],
		rel_batched > 2e-5 ? " (matrix units)" : "");
}

START_TEST(test_quant_matvec)
{
	rng_seed(60 + _i);
	on_both_paths(quant_matvec_cases, qtypes[_i]);
}
END_TEST

/* ---- mixtures of experts ---- */

static void bind_rows(struct belt_cmd *c, struct belt_buffer *buf, uint64_t off, int n,
		      uint32_t rows);

/* moe_route, moe_matvec, silu-free moe_matvec_slots and moe_combine on
 * backend b over n rows (a one-row table for n = 1), a run of the first
 * n_run of them: out[n][m2]. With w0 (k x k of type t, rows of rb1 bytes
 * as w1's), a matvec of x first into a buffer of its own, for a batched
 * table of more than 16 rows to have a pass of few rows (the Vulkan
 * backend records one where a matvec has its few-row kernel). */
static void backend_moe_run(struct be *b, int t, const uint8_t *w1, size_t rb1, const uint8_t *w2,
			    size_t rb2, const float *logits, const float *x, int E, int U, int k,
			    int m, uint32_t n, uint32_t n_run, const uint8_t *w0, float *ids,
			    float *out)
{
	struct belt_buffer *bw1 = buf_from(b, w1, rb1 * (size_t)m * E);
	struct belt_buffer *bw2 = buf_from(b, w2, rb2 * (size_t)k * E);
	struct belt_buffer *bl = buf_from(b, logits, (uint64_t)n * E * 4);
	struct belt_buffer *bx = buf_from(b, x, (uint64_t)n * k * 4);
	struct belt_buffer *bi = buf_new(b, (uint64_t)n * U * 4), *bwt = buf_new(b, (uint64_t)n * U * 4);
	struct belt_buffer *bh = buf_new(b, (uint64_t)n * U * m * 4);
	struct belt_buffer *by = buf_new(b, (uint64_t)n * U * k * 4), *bo = buf_new(b, (uint64_t)n * k * 4);
	struct belt_cmd c[5];
	struct belt_buffer *bw0 = w0 ? buf_from(b, w0, rb1 * (size_t)k) : NULL;
	struct belt_buffer *bz = w0 ? buf_new(b, (uint64_t)n * k * 4) : NULL;
	if (w0) {
		c[4] = cmd_new(b, "matvec", t, "test.lead");
		bind(&c[4], bw0, 0, rb1 * (size_t)k, t);
		c[4].bind[0].ne[0] = k;
		c[4].bind[0].ne[1] = k;
		bind_rows(&c[4], bx, 0, k, n);
		bind_rows(&c[4], bz, 0, k, n);
		pi(&c[4], k);
		pi(&c[4], k);
	}
	c[0] = cmd_new(b, "moe_route", BELT_TYPE_ANY, "test.route");
	bind_rows(&c[0], bl, 0, E, n);
	bind_rows(&c[0], bi, 0, U, n);
	bind_rows(&c[0], bwt, 0, U, n);
	pi(&c[0], E);
	pi(&c[0], U);
	/* h_j = W1[e_j] x (m of k), then y_j = W2[e_j] h_j (k of m) */
	for (int i = 1; i <= 2; i++) {
		c[i] = cmd_new(b, i == 1 ? "moe_matvec" : "moe_matvec_slots", t, "test.moe");
		bind(&c[i], i == 1 ? bw1 : bw2, 0, (i == 1 ? rb1 * (size_t)m : rb2 * (size_t)k) * E, t);
		c[i].bind[0].ne[0] = i == 1 ? k : m;
		c[i].bind[0].ne[1] = (i == 1 ? m : k) * E;
		bind_rows(&c[i], i == 1 ? bx : bh, 0, i == 1 ? k : U * m, n);
		bind_rows(&c[i], bi, 0, U, n);
		bind_rows(&c[i], i == 1 ? bh : by, 0, U * (i == 1 ? m : k), n);
		pi(&c[i], i == 1 ? k : m);
		pi(&c[i], i == 1 ? m : k);
		pi(&c[i], E);
		pi(&c[i], U);
	}
	c[3] = cmd_new(b, "moe_combine", BELT_TYPE_ANY, "test.combine");
	bind_rows(&c[3], by, 0, U * k, n);
	bind_rows(&c[3], bwt, 0, U, n);
	bind_rows(&c[3], bo, 0, k, n);
	pi(&c[3], k);
	pi(&c[3], U);
	struct belt_cmd all_c[5];
	int nc = 0;
	if (w0)
		all_c[nc++] = c[4];
	for (int i = 0; i < 4; i++)
		all_c[nc++] = c[i];
	struct belt_table tab;
	table_init(&tab, all_c, (uint32_t)nc, n, NULL, n > 1 ? 0 : 1);
	tab.rows = n > 1 ? n : 0;
	prepare(b, &tab);
	run(b, &tab, 0, n_run, 0);
	buf_get(b, bo, 0, out, (uint64_t)n * k * 4);
	buf_get(b, bi, 0, ids, (uint64_t)n * U * 4);
	b->B->table_release(b->ctx, &tab);
	struct belt_buffer *all[] = {bw1, bw2, bl, bx, bi, bwt, bh, by, bo, bw0, bz};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (all[i])
			buf_free(b, all[i]);
}

static void backend_moe(struct be *b, int t, const uint8_t *w1, size_t rb1, const uint8_t *w2,
			size_t rb2, const float *logits, const float *x, int E, int U, int k, int m,
			uint32_t n, float *ids, float *out)
{
	backend_moe_run(b, t, w1, rb1, w2, rb2, logits, x, E, U, k, m, n, n, NULL, ids, out);
}

/* A run of few rows (at most VK_FEW_ROWS, 16) of a batched table of more
 * (the Vulkan backend's few-row pass, which a verification of drafts or a
 * group's pass takes) with more experts than that: its rows' ids and
 * outputs are those of a run of all rows, bit for bit (each row's sums
 * are its own). */
START_TEST(test_moe_few)
{
	struct be vk = open_vk();
	int t = _i ? BELT_TYPE_Q8_0 : BELT_TYPE_F32;
	rng_seed(95 + _i);
	const int E = 32, U = 2, k = 64, m = 128;
	const uint32_t n = 40, few = 9;
	size_t rb1, rb2;
	uint8_t *w1 = weights_new(t, k, m * E, &rb1), *w2 = weights_new(t, m, k * E, &rb2);
	size_t rb0;
	uint8_t *w0 = weights_new(t, k, k, &rb0);
	float *lg = malloc((size_t)n * E * 4), *x = malloc((size_t)n * k * 4);
	float *out = malloc((size_t)n * k * 4), *ids = malloc((size_t)n * U * 4);
	float *fout = malloc((size_t)n * k * 4), *fids = malloc((size_t)n * U * 4);
	ck_assert(lg && x && out && ids && fout && fids);
	fill(lg, (size_t)n * E);
	fill(x, (size_t)n * k);
	backend_moe_run(&vk, t, w1, rb1, w2, rb2, lg, x, E, U, k, m, n, n, w0, ids, out);
	backend_moe_run(&vk, t, w1, rb1, w2, rb2, lg, x, E, U, k, m, n, few, w0, fids, fout);
	ck_assert_msg(!memcmp(fids, ids, (size_t)few * U * 4), "%s: the few rows' experts differ",
		      belt_type_name(t));
	ck_assert_msg(!memcmp(fout, out, (size_t)few * k * 4),
		      "%s: a run of %u of %u rows differs from the run of all", belt_type_name(t), few,
		      n);
	free(lg);
	free(x);
	free(out);
	free(ids);
	free(fout);
	free(fids);
	free(w0);
	free(w1);
	free(w2);
	be_close(&vk);
}
END_TEST

/* The MoE ops on both backends against a dense computation in double of
 * the same experts (softmax over all, the top U by probability, lowest
 * index first, weights renormalized; each chosen expert's two products):
 * the ids exactly, out within 2e-5 of its magnitude (x in float: Vulkan,
 * and the CPU's F32 rows), 2e-3 (Vulkan's batched products grouped by
 * expert on the matrix units: x and W in float16) or 1e-2 (the CPU's int8
 * x of quantized rows: x and h each rounded to 8 bits), on one row and on
 * batched passes of 5 and 150 rows; Vulkan's grouped products elsewhere
 * equal its row-by-row kernel bit for bit. */
static const int moe_types[] = {BELT_TYPE_F32, BELT_TYPE_Q8_0, BELT_TYPE_Q5_K, BELT_TYPE_IQ4_NL};

START_TEST(test_moe)
{
	struct be vk = open_vk(), cpu = open_cpu();
	int t = moe_types[_i];
	rng_seed(90 + _i);
	const int E = 8, U = 3, k = 256, m = 512;
	size_t rb1, rb2;
	/* weights_new makes F32 and Q8_0, qweights_new the block types */
	bool plain = t == BELT_TYPE_F32 || t == BELT_TYPE_Q8_0;
	uint8_t *w1 = plain ? weights_new(t, k, m * E, &rb1) : qweights_new(t, k, m * E, &rb1);
	uint8_t *w2 = plain ? weights_new(t, m, k * E, &rb2) : qweights_new(t, m, k * E, &rb2);
	double *hv = malloc((size_t)U * m * sizeof *hv), *hm = malloc((size_t)U * m * sizeof *hm);
	ck_assert(hv && hm);
	float *d1 = malloc((size_t)m * E * k * 4), *d2 = malloc((size_t)k * E * m * 4);
	ck_assert(d1 && d2);
	for (int r = 0; r < m * E; r++)
		ck_assert_int_eq(quant_ref_row(t, w1 + rb1 * (size_t)r, (size_t)k, d1 + (size_t)r * k), 0);
	for (int r = 0; r < k * E; r++)
		ck_assert_int_eq(quant_ref_row(t, w2 + rb2 * (size_t)r, (size_t)m, d2 + (size_t)r * m), 0);
	/* 150 rows: an expert has more than a tile of them (64 on the
	 * matrix units) */
	static const uint32_t rows[] = {1, 5, 150};
	for (int ri = 0; ri < 3; ri++) {
		uint32_t n = rows[ri];
		float *lg = malloc((size_t)n * E * 4), *x = malloc((size_t)n * k * 4);
		float *out = malloc((size_t)n * k * 4), *ids = malloc((size_t)n * U * 4);
		fill(lg, (size_t)n * E);
		fill(x, (size_t)n * k);
		/* ties: the lowest index first among equal probabilities (row
		 * 0 all equal; row 1 of the batched passes, pairs) */
		for (int e = 0; e < E; e++) {
			lg[e] = 0.25f;
			if (n > 1)
				lg[E + e] = (float)(e / 2) * 0.125f;
		}
		for (int bi = 0; bi < 2; bi++) {
			struct be *b = bi ? &cpu : &vk;
			backend_moe(b, t, w1, rb1, w2, rb2, lg, x, E, U, k, m, n, ids, out);
			/* on the matrix units (F32 has no variant there) the
			 * grouped products round x and W to float16 */
			bool cm = !bi && n > 1 && vk.cm && t != BELT_TYPE_F32;
			if (!bi && n > 1 && !cm) {
				/* the pass's products grouped by expert (the default)
				 * give what row by row gives, bit for bit */
				float *flat = malloc((size_t)n * k * 4), *fids = malloc((size_t)n * U * 4);
				ck_assert(flat && fids);
				setenv("BELT_VK_MOE_GROUPED", "0", 1);
				struct be rows_vk = open_vk();
				unsetenv("BELT_VK_MOE_GROUPED");
				backend_moe(&rows_vk, t, w1, rb1, w2, rb2, lg, x, E, U, k, m, n, fids, flat);
				be_close(&rows_vk);
				ck_assert_msg(!memcmp(flat, out, (size_t)n * k * 4),
					      "%s: grouped by expert differs from row by row",
					      belt_type_name(t));
				free(flat);
				free(fids);
			}
			bool int8 = bi && t != BELT_TYPE_F32;
			for (uint32_t p = 0; p < n; p++) {
				const float *l = lg + (size_t)p * E, *xp = x + (size_t)p * k;
				double pr[8], mx = -1e30, sum = 0, tot = 0, wt[8];
				int sel[8];
				for (int e = 0; e < E; e++)
					mx = l[e] > mx ? l[e] : mx;
				for (int e = 0; e < E; e++)
					sum += pr[e] = exp(l[e] - mx);
				bool used[8] = {false};
				for (int j = 0; j < U; j++) {
					int best = -1;
					for (int e = 0; e < E; e++)
						if (!used[e] && (best < 0 || pr[e] > pr[best]))
							best = e;
					used[best] = true;
					sel[j] = best;
					tot += pr[best] / sum;
				}
				for (int j = 0; j < U; j++) {
					wt[j] = pr[sel[j]] / sum / tot;
					ck_assert_msg((int)ids[p * U + j] == sel[j], "%s %s row %u slot %d: expert %g, want %d",
						      b->B->name, belt_type_name(t), p, j, ids[p * U + j], sel[j]);
				}
				for (int j = 0; j < U; j++)
					for (int h = 0; h < m; h++) {
						const float *r1 = d1 + ((size_t)sel[j] * m + h) * k;
						double v = 0, a = 0;
						for (int q = 0; q < k; q++) {
							v += (double)r1[q] * xp[q];
							a += fabs(r1[q] * xp[q]);
						}
						hv[j * m + h] = v;
						hm[j * m + h] = a;
					}
				for (int o = 0; o < k; o++) {
					double ref = 0, mag = 0;
					for (int j = 0; j < U; j++) {
						const float *r2 = d2 + ((size_t)sel[j] * k + o) * m;
						for (int h = 0; h < m; h++) {
							ref += wt[j] * r2[h] * hv[j * m + h];
							mag += wt[j] * fabs(r2[h]) * hm[j * m + h];
						}
					}
					double got = out[(size_t)p * k + o];
					ck_assert_msg(fabs(got - ref) <= (int8 ? 1e-2 : cm ? 2e-3 : 2e-5) * mag + 1e-6,
						      "%s %s rows %u: row %u out %d: %.9g vs %.9g (mag %g)",
						      b->B->name, belt_type_name(t), n, p, o, got, ref, mag);
				}
			}
		}
		free(lg);
		free(x);
		free(out);
		free(ids);
	}
	free(d1);
	free(d2);
	free(hv);
	free(hm);
	free(w1);
	free(w2);
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* embed of each type: quant_ref.h's floats (ggml's), exactly; ids out of
 * range give zeros. */
START_TEST(test_quant_embed)
{
	struct be vk = open_vk();
	int t = qtypes[_i];
	rng_seed(70 + _i);
	const int vocab = 6, n = 512;
	int32_t ids[5] = {3, 0, 5, -1, 6};
	size_t rb;
	uint8_t *w = qweights_new(t, n, vocab, &rb);
	struct belt_buffer *bw = buf_from(&vk, w, rb * vocab);
	struct belt_buffer *bids = buf_from(&vk, ids, sizeof ids);
	struct belt_buffer *bo = buf_new(&vk, (uint64_t)n * 4);
	struct belt_cmd c = embed_cmd(&vk, t, bw, rb, vocab, n, bids, sizeof ids, bo);
	struct belt_table tab;
	table_init(&tab, &c, 1, 5, bids, 1);
	prepare(&vk, &tab);
	float out[512], ref[512];
	for (uint32_t p = 0; p < 5; p++) {
		run(&vk, &tab, p, 1, 0);
		buf_get(&vk, bo, 0, out, sizeof out);
		if (ids[p] >= 0 && ids[p] < vocab)
			ck_assert_int_eq(quant_ref_row(t, w + rb * (size_t)ids[p], n, ref), 0);
		else
			memset(ref, 0, sizeof ref);
		for (int j = 0; j < n; j++)
			ck_assert_msg(!memcmp(&out[j], &ref[j], 4),
				      "embed %s id %d [%d]: %.9g vs %.9g", belt_type_name(t),
				      ids[p], j, out[j], ref[j]);
	}
	vk.B->table_release(vk.ctx, &tab);
	buf_free(&vk, bw);
	buf_free(&vk, bids);
	buf_free(&vk, bo);
	free(w);
	be_close(&vk);
}
END_TEST

/* ---- embed: bit-exact with the CPU backend ---- */

START_TEST(test_embed)
{
	struct be be2[2] = {open_vk(), open_cpu()};
	rng_seed(6);
	const int vocab = 10, n_ctx = 8;
	int32_t ids[9] = {3, 0, 9, -1, 10, 7, 1000000, 9, 0};
	for (int ti = 0; ti < N_WTYPES; ti++) {
		int t = wtypes[ti];
		int n = is_quant(t) ? 5 * 32 : 131;
		size_t rb;
		uint8_t *w = weights_new(t, n, vocab, &rb);
		float out[2][8][160];
		for (int bi = 0; bi < 2; bi++) {
			struct be *b = &be2[bi];
			struct belt_buffer *bw = buf_from(b, w, rb * vocab);
			struct belt_buffer *bids = buf_from(b, ids, sizeof ids);
			struct belt_buffer *bo = buf_new(b, (uint64_t)n * 4);
			struct belt_cmd c = embed_cmd(b, t, bw, rb, vocab, n, bids, sizeof ids, bo);
			struct belt_table tab;
			table_init(&tab, &c, 1, n_ctx, bids, 4);
			prepare(b, &tab);
			for (int pos = 0; pos < n_ctx; pos++) {
				float poison[160];
				for (int j = 0; j < n; j++)
					poison[j] = 12345.0f;
				buf_put(b, bo, 0, poison, (uint64_t)n * 4);
				run(b, &tab, pos, 1, 0);
				buf_get(b, bo, 0, out[bi][pos], (uint64_t)n * 4);
			}
			b->B->table_release(b->ctx, &tab);
			buf_free(b, bw);
			buf_free(b, bids);
			buf_free(b, bo);
		}
		for (int pos = 0; pos < n_ctx; pos++)
			for (int j = 0; j < n; j++)
				ck_assert_msg(!memcmp(&out[0][pos][j],
						      &out[1][pos][j], 4),
					      "embed %s pos %d elt %d: %g vs "
					      "cpu %g",
					      belt_type_name(t), pos, j,
					      out[0][pos][j], out[1][pos][j]);
		free(w);
	}
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

/* ---- rmsnorm, silu_mul, add ---- */

static void close_rel(double got, double want, double rel, const char *what,
		      int i)
{
	ck_assert_msg(fabs(got - want) <= rel * fabs(want) + 1e-6,
		      "%s[%d]: %.9g vs %.9g", what, i, got, want);
}

/* op over a and b (both n floats) on backend b; out aliases a or not. */
static void run_n3(struct be *b, const char *op, const float *a,
		   const float *x2, int n, bool alias, float eps, float *o)
{
	struct belt_buffer *buf = buf_new(b, (uint64_t)n * 12);
	buf_put(b, buf, 0, a, (uint64_t)n * 4);
	buf_put(b, buf, (uint64_t)n * 4, x2, (uint64_t)n * 4);
	struct belt_cmd c = cmd_new(b, op, BELT_TYPE_ANY, op);
	bind(&c, buf, 0, (uint64_t)n * 4, BELT_TYPE_F32);
	bind(&c, buf, (uint64_t)n * 4, (uint64_t)n * 4, BELT_TYPE_F32);
	uint64_t out_off = alias ? 0 : (uint64_t)n * 8;
	bind(&c, buf, out_off, (uint64_t)n * 4, BELT_TYPE_F32);
	pi(&c, n);
	if (!strcmp(op, "rmsnorm"))
		pf(&c, eps);
	struct belt_table tab;
	table_init(&tab, &c, 1, 4, NULL, 2);
	prepare(b, &tab);
	run(b, &tab, 0, 1, 0);
	buf_get(b, buf, out_off, o, (uint64_t)n * 4);
	b->B->table_release(b->ctx, &tab);
	buf_free(b, buf);
}

START_TEST(test_elementwise)
{
	struct be vk = open_vk(), cpu = open_cpu();
	rng_seed(8);
	static const int ns[] = {1, 7, 17, 100, 1001, 1536, 4099};
	static const char *ops[] = {"add", "silu_mul", "rmsnorm"};
	for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
		for (int op = 0; op < 3; op++)
			for (int alias = 0; alias < 2; alias++) {
				int n = ns[s];
				float *a = malloc((size_t)n * 4),
				      *b = malloc((size_t)n * 4),
				      *o = malloc((size_t)n * 4),
				      *oc = malloc((size_t)n * 4);
				fill(a, (size_t)n);
				fill(b, (size_t)n);
				for (int i = 0; i < n; i++)
					a[i] *= 12.0f;
				run_n3(&vk, ops[op], a, b, n, alias, 1e-5f, o);
				run_n3(&cpu, ops[op], a, b, n, alias, 1e-5f, oc);
				for (int i = 0; i < n; i++) {
					if (op == 0)
						ck_assert_msg(o[i] == oc[i] &&
								      o[i] == a[i] + b[i],
							      "add[%d]", i);
					else
						close_rel(o[i], oc[i], 1e-5,
							  ops[op], i);
				}
				free(a);
				free(b);
				free(o);
				free(oc);
			}
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* ---- rope_kv ---- */

START_TEST(test_rope_kv)
{
	struct be be2[2] = {open_vk(), open_cpu()};
	const int n_head = 4, n_head_kv = 2, head_dim = 16, n_ctx = 1100;
	const int q_n = n_head * head_dim, kv_n = n_head_kv * head_dim;
	static const int rope_dims[] = {16, 8, 2, 0};
	static const int positions[] = {0, 1, 7, 100, 1099, 3};
	for (int rd = 0; rd < 4; rd++) {
		int rope_dim = rope_dims[rd];
		float base = rd == 1 ? 500000.0f : 10000.0f;
		float qo[2][6][64], ko[2][6][32], kc[2][6][32], vc[2][6][32];
		float vin[6][32];
		for (int bi = 0; bi < 2; bi++) {
			struct be *b = &be2[bi];
			rng_seed(9 + rd);
			struct belt_buffer *bq = buf_new(b, q_n * 4);
			struct belt_buffer *bk = buf_new(b, kv_n * 4);
			struct belt_buffer *bv = buf_new(b, kv_n * 4);
			uint64_t cache = (uint64_t)n_ctx * kv_n * 4;
			struct belt_buffer *kv = buf_new(b, 2 * cache);
			struct belt_cmd c = cmd_new(b, "rope_kv", BELT_TYPE_ANY,
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
			table_init(&tab, &c, 1, n_ctx, NULL, 1);
			prepare(b, &tab);
			for (int p = 0; p < 6; p++) {
				int pos = positions[p];
				float q[64], k[32];
				fill(q, q_n);
				fill(k, kv_n);
				fill(vin[p], kv_n);
				buf_put(b, bq, 0, q, sizeof q);
				buf_put(b, bk, 0, k, sizeof k);
				buf_put(b, bv, 0, vin[p], sizeof vin[p]);
				run(b, &tab, pos, 1, 0);
				buf_get(b, bq, 0, qo[bi][p], sizeof qo[bi][p]);
				buf_get(b, bk, 0, ko[bi][p], sizeof ko[bi][p]);
				buf_get(b, kv, (uint64_t)pos * kv_n * 4,
					kc[bi][p], sizeof kc[bi][p]);
				buf_get(b, kv, cache + (uint64_t)pos * kv_n * 4,
					vc[bi][p], sizeof vc[bi][p]);
			}
			b->B->table_release(b->ctx, &tab);
			buf_free(b, bq);
			buf_free(b, bk);
			buf_free(b, bv);
			buf_free(b, kv);
		}
		for (int p = 0; p < 6; p++) {
			ck_assert(!memcmp(kc[0][p], ko[0][p], sizeof kc[0][p]));
			ck_assert(!memcmp(vc[0][p], vin[p], sizeof vc[0][p]));
			for (int e = 0; e < q_n; e++)
				ck_assert_msg(fabsf(qo[0][p][e] - qo[1][p][e]) <= 1e-5f,
					      "rope_dim %d pos %d q[%d]: %g vs "
					      "cpu %g",
					      rope_dim, positions[p], e,
					      qo[0][p][e], qo[1][p][e]);
			for (int e = 0; e < kv_n; e++)
				ck_assert_msg(fabsf(ko[0][p][e] - ko[1][p][e]) <= 1e-5f,
					      "rope_dim %d pos %d k[%d]: %g vs "
					      "cpu %g",
					      rope_dim, positions[p], e,
					      ko[0][p][e], ko[1][p][e]);
		}
	}
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

/* ---- attention ---- */

/* The double reference of one row's attention (q: n_head heads) over the
 * cache rows t < n_kv that vis[t] says (vis NULL: all of them), its scores
 * soft-capped where cap > 0 (attention_ext). */
static void attention_cap_ref(const float *q, const float *kc, const float *vc,
			      int n_head, int n_head_kv, int head_dim, int n_kv,
			      const bool *vis, double scale, double cap, double *out)
{
	int kv_dim = n_head_kv * head_dim, group = n_head / n_head_kv;
	double *s = malloc((size_t)n_kv * sizeof *s);
	for (int h = 0; h < n_head; h++) {
		int kh = h / group;
		double max = -INFINITY, sum = 0;
		for (int t = 0; t < n_kv; t++) {
			double d = 0;
			for (int i = 0; i < head_dim; i++)
				d += (double)q[h * head_dim + i] *
				     kc[t * kv_dim + kh * head_dim + i];
			s[t] = d * scale;
			if (cap > 0)
				s[t] = cap * tanh(s[t] / cap);
			if (!vis || vis[t])
				max = fmax(max, s[t]);
		}
		for (int t = 0; t < n_kv; t++)
			sum += s[t] = !vis || vis[t] ? exp(s[t] - max) : 0;
		for (int i = 0; i < head_dim; i++) {
			double o = 0;
			for (int t = 0; t < n_kv; t++)
				o += s[t] / sum * vc[t * kv_dim + kh * head_dim + i];
			out[h * head_dim + i] = o;
		}
	}
	free(s);
}

static void attention_vis_ref(const float *q, const float *kc, const float *vc,
			      int n_head, int n_head_kv, int head_dim, int n_kv,
			      const bool *vis, double scale, double *out)
{
	attention_cap_ref(q, kc, vc, n_head, n_head_kv, head_dim, n_kv, vis, scale, 0, out);
}

/* ... over every cache row t < n_kv. */
static void attention_ref(const float *q, const float *kc, const float *vc,
			  int n_head, int n_head_kv, int head_dim, int n_kv,
			  double scale, double *out)
{
	attention_vis_ref(q, kc, vc, n_head, n_head_kv, head_dim, n_kv, NULL, scale, out);
}

/* Every variant (_i: default; split_kv as configured by default: chunks
 * of 256 positions or more, at most 8 per head; split_kv in at most 3
 * chunks of 32 or more; split_kv in one chunk, whose scores past 2048
 * positions go to the att buffer; split_gqa as configured, in at most 3
 * chunks of 32 or more, and asked for one chunk, which it cannot always
 * give: at most 4096 / group scores fit its shared memory; default and
 * split_kv without attention.comp's path for runs of at most 256
 * positions, att_short 0). split_gqa runs as split_kv where the head is
 * not whole pieces of 8 in a power of two (head_dim 80, 12) or group x
 * head_dim exceeds 1024 (256 x 8). */
START_TEST(test_attention_gqa)
{
	static const char *const variants[] = {"default", "split_kv", "split_kv",
					       "split_kv", "split_gqa", "split_gqa",
					       "split_gqa", "default", "split_kv"};
	static const char *const splits[] = {NULL, NULL, "3", "1", NULL, "3", "1", NULL, "3"};
	if (splits[_i]) {
		setenv("BELT_VK_ATT_SPLITS", splits[_i], 1);
		setenv("BELT_VK_ATT_CHUNK", "32", 1);
	}
	if (_i >= 7)
		setenv("BELT_VK_ATT_SHORT", "0", 1);
	struct be vk = open_vk();
	unsetenv("BELT_VK_ATT_SPLITS");
	unsetenv("BELT_VK_ATT_CHUNK");
	unsetenv("BELT_VK_ATT_SHORT");
	const char *variant = variants[_i];
	rng_seed(10);
	const int n_head = 8;
	static const int kv_heads[] = {8, 4, 2, 1};
	/* (head_dim, n_ctx); 2100 positions: past the 2048 whose scores
	 * the default variant keeps in shared memory */
	static const int dims[][2] = {{8, 40},	{64, 300}, {80, 20}, {256, 9},
				      {12, 17}, {128, 520}, {64, 2100}};
	for (int g = 0; g < 4 * 7; g++) {
		int n_head_kv = kv_heads[g % 4];
		int head_dim = dims[g / 4][0], n_ctx = dims[g / 4][1];
		int q_n = n_head * head_dim, kv_dim = n_head_kv * head_dim;
		float *q = malloc((size_t)q_n * 4);
		float *kc = malloc((size_t)n_ctx * kv_dim * 4);
		float *vc = malloc((size_t)n_ctx * kv_dim * 4);
		float *o = malloc((size_t)q_n * 4);
		double *ref = malloc((size_t)q_n * sizeof *ref);
		fill(q, (size_t)q_n);
		fill(kc, (size_t)n_ctx * kv_dim);
		fill(vc, (size_t)n_ctx * kv_dim);
		for (int i = 0; i < q_n; i++)
			q[i] *= 3.0f;
		struct belt_buffer *bq = buf_from(&vk, q, (uint64_t)q_n * 4);
		struct belt_buffer *bk = buf_from(&vk, kc, (uint64_t)n_ctx * kv_dim * 4);
		struct belt_buffer *bv = buf_from(&vk, vc, (uint64_t)n_ctx * kv_dim * 4);
		struct belt_buffer *bo = buf_new(&vk, (uint64_t)q_n * 4);
		struct belt_buffer *ba = buf_new(&vk, (uint64_t)n_head * n_ctx * 4);
		struct belt_cmd c = cmd_variant(&vk, "attention", variant,
						BELT_TYPE_ANY, "attn");
		c.patch = BELT_PATCH_KV_LEN;
		bind(&c, bq, 0, (uint64_t)q_n * 4, BELT_TYPE_F32);
		bind(&c, bk, 0, (uint64_t)n_ctx * kv_dim * 4, BELT_TYPE_F32);
		bind(&c, bv, 0, (uint64_t)n_ctx * kv_dim * 4, BELT_TYPE_F32);
		bind(&c, bo, 0, (uint64_t)q_n * 4, BELT_TYPE_F32);
		bind(&c, ba, 0, (uint64_t)n_head * n_ctx * 4, BELT_TYPE_F32);
		float scale = 1.0f / sqrtf((float)head_dim);
		pi(&c, n_head);
		pi(&c, n_head_kv);
		pi(&c, head_dim);
		pi(&c, n_ctx);
		pf(&c, scale);
		struct belt_table tab;
		table_init(&tab, &c, 1, n_ctx, NULL, 3);
		prepare(&vk, &tab);
		/* and (split_kv) a run of 3 whose tokens see 511, 512 and
		 * 513 positions: the slots before att_gqa_from's 512 and
		 * after it; then a token that sees 301 again, in two chunks
		 * of split_kv's kernel after the long-context kernel ran (as
		 * a new conversation on a session that held a long one) */
		int poss[] = {0, 1, n_ctx / 2, n_ctx - 1, 512, 300};
		for (int pp = 0; pp < (n_ctx > 513 ? 6 : 4); pp++) {
			int pos = poss[pp];
			/* a run of 3 ending at pos where it fits: the output
			 * is the last position's */
			if (pos >= 2)
				run(&vk, &tab, pos - 2, 3, 0);
			else
				run(&vk, &tab, pos, 1, 0);
			buf_get(&vk, bo, 0, o, (uint64_t)q_n * 4);
			attention_ref(q, kc, vc, n_head, n_head_kv, head_dim,
				      pos + 1, scale, ref);
			for (int i = 0; i < q_n; i++)
				ck_assert_msg(fabs(o[i] - ref[i]) <=
						      1e-5 * fabs(ref[i]) + 1e-6,
					      "attention %s hd %d kv %d pos %d "
					      "[%d]: %.9g vs %.9g",
					      variant, head_dim, n_head_kv, pos, i, o[i],
					      ref[i]);
		}
		vk.B->table_release(vk.ctx, &tab);
		buf_free(&vk, bq);
		buf_free(&vk, bk);
		buf_free(&vk, bv);
		buf_free(&vk, bo);
		buf_free(&vk, ba);
		free(q);
		free(kc);
		free(vc);
		free(o);
		free(ref);
	}
	be_close(&vk);
}
END_TEST

/* ---- buffer_copy: a tree's accepted cache entries moved ---- */

START_TEST(test_buffer_copy)
{
	struct be vk = open_vk();
	check_buffer_copy(V, vk.ctx);
	be_close(&vk);
}
END_TEST

/* ---- logit_mask: a grammar's mask before argmax ---- */

START_TEST(test_logit_mask)
{
	struct be vk = open_vk();
	check_logit_mask(V, vk.ctx);
	be_close(&vk);
}
END_TEST

/* The host between positions: gated runs of a masked table. */
START_TEST(test_gated_run)
{
	struct be vk = open_vk();
	check_gated_run(V, vk.ctx);
	be_close(&vk);
}
END_TEST

/* ---- argmax ---- */

START_TEST(test_argmax)
{
	struct be vk = open_vk();
	static const int ns[] = {1, 7, 1000, 100003};
	for (int s = 0; s < 4; s++) {
		int n = ns[s];
		float *l = malloc((size_t)n * 4);
		rng_seed(11 + s);
		for (int tie = 0; tie < 3; tie++) {
			fill(l, (size_t)n);
			int want = 0;
			if (tie == 1 && n > 1) { /* two equal maxima */
				want = n / 3;
				l[want] = 2.0f;
				l[n - 1] = 2.0f;
			} else if (tie == 2) { /* all equal */
				for (int i = 0; i < n; i++)
					l[i] = -INFINITY;
			} else {
				for (int i = 1; i < n; i++)
					if (l[i] > l[want])
						want = i;
			}
			int32_t ids[6] = {0};
			struct belt_buffer *bl = buf_from(&vk, l, (uint64_t)n * 4);
			struct belt_buffer *bids = buf_from(&vk, ids, sizeof ids);
			struct belt_cmd c = cmd_new(&vk, "argmax", BELT_TYPE_ANY,
						    "argmax");
			c.patch = BELT_PATCH_ARGMAX_OUTPUT;
			bind(&c, bl, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&c, bids, 0, sizeof ids, BELT_TYPE_I32);
			pi(&c, n);
			struct belt_table tab;
			table_init(&tab, &c, 1, 5, bids, 2);
			prepare(&vk, &tab);
			run(&vk, &tab, 3, 2, 0);
			buf_get(&vk, bids, 0, ids, sizeof ids);
			ck_assert_msg(ids[4] == want && ids[5] == want &&
					      ids[3] == 0,
				      "argmax n=%d tie %d: %d %d, want %d", n,
				      tie, ids[4], ids[5], want);
			vk.B->table_release(vk.ctx, &tab);
			buf_free(&vk, bl);
			buf_free(&vk, bids);
		}
		free(l);
	}
	be_close(&vk);
}
END_TEST

/* ---- runs: head skipping, max_run, base positions ---- */

/* out[o] += in[1]: one add over single floats of buf. */
static struct belt_cmd add1(struct be *b, struct belt_buffer *buf, int out,
			    bool head)
{
	struct belt_cmd c = cmd_new(b, "add", BELT_TYPE_ANY, head ? "head" : "body");
	bind(&c, buf, (uint64_t)out * 16, 4, BELT_TYPE_F32);
	bind(&c, buf, 32, 4, BELT_TYPE_F32);
	bind(&c, buf, (uint64_t)out * 16, 4, BELT_TYPE_F32);
	pi(&c, 1);
	c.head = head;
	return c;
}

/* Early exit: with BELT_RUN_STOP_AT_EOG, the tokens of a run after one
 * whose argmax is an end-of-generation id do nothing; _i 0: by
 * conditional rendering where the device has it (lavapipe does), 1: by
 * the shaders' reads of the stop word (cond_stop 0). */
START_TEST(test_stop_at_eog)
{
	if (_i == 1)
		setenv("BELT_VK_COND_STOP", "0", 1);
	struct be vk = open_vk();
	unsetenv("BELT_VK_COND_STOP");
	float logits[9] = {0, 1, 2, 3, 4, 9, 5, 6, 7}; /* argmax 5 */
	for (int c = 0; c < 4; c++) {
		bool stop = c != 1;	    /* 1: the flag off */
		int32_t eog = c == 2 ? 7 : 5; /* 2: argmax is not an eog */
		float init[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
		struct belt_buffer *buf = buf_from(&vk, init, sizeof init);
		struct belt_buffer *bl = buf_from(&vk, logits, sizeof logits);
		int32_t ids[6] = {0};
		struct belt_buffer *bids = buf_from(&vk, ids, sizeof ids);
		struct belt_cmd cmds[2] = {add1(&vk, buf, 0, false),
					   cmd_new(&vk, "argmax", BELT_TYPE_ANY,
						   "argmax")};
		cmds[1].patch = BELT_PATCH_ARGMAX_OUTPUT;
		bind(&cmds[1], bl, 0, sizeof logits, BELT_TYPE_F32);
		bind(&cmds[1], bids, 0, sizeof ids, BELT_TYPE_I32);
		pi(&cmds[1], 9);
		struct belt_table tab;
		table_init(&tab, cmds, 2, 5, bids, 4);
		tab.eog[0] = 3;
		tab.eog[1] = eog;
		tab.n_eog = 2;
		prepare(&vk, &tab);
		uint32_t flags = stop ? BELT_RUN_STOP_AT_EOG : 0;
		run(&vk, &tab, 0, 4, flags);
		float out;
		buf_get(&vk, buf, 0, &out, 4);
		buf_get(&vk, bids, 0, ids, sizeof ids);
		bool early = stop && eog == 5;
		ck_assert_msg(out == (early ? 1.0f : 4.0f),
			      "case %d: the body ran %g times", c, out);
		ck_assert_int_eq(ids[1], 5);
		ck_assert_int_eq(ids[4], early ? 0 : 5);
		if (c == 3) { /* the next run starts afresh */
			run(&vk, &tab, 1, 2, flags);
			buf_get(&vk, buf, 0, &out, 4);
			ck_assert_msg(out == 2.0f, "second run: %g", out);
		}
		vk.B->table_release(vk.ctx, &tab);
		buf_free(&vk, buf);
		buf_free(&vk, bl);
		buf_free(&vk, bids);
	}
	be_close(&vk);
}
END_TEST

START_TEST(test_head_last_only)
{
	struct be vk = open_vk();
	float init[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1}; /* [0], [4], one at [8] */
	struct belt_buffer *buf = buf_from(&vk, init, sizeof init);
	struct belt_cmd cmds[3] = {add1(&vk, buf, 0, false),
				   add1(&vk, buf, 1, true),
				   add1(&vk, buf, 0, false)};
	struct belt_table tab;
	table_init(&tab, cmds, 3, 64, NULL, 8);
	prepare(&vk, &tab);
	run(&vk, &tab, 0, 5, BELT_RUN_HEAD_LAST_ONLY); /* body 10, head 1 */
	run(&vk, &tab, 5, 3, 0);		       /* body 6, head 3 */
	run(&vk, &tab, 8, 8, BELT_RUN_HEAD_LAST_ONLY); /* body 16, head 1 */
	run(&vk, &tab, 16, 1, BELT_RUN_HEAD_LAST_ONLY); /* body 2, head 1 */
	float got[9];
	buf_get(&vk, buf, 0, got, sizeof got);
	ck_assert_msg(got[0] == 34 && got[4] == 6, "body %g head %g", got[0],
		      got[4]);
	/* more than max_run, beyond n_ctx */
	ck_assert_int_eq(vk.B->table_run(vk.ctx, &tab, 0, 9, 0, err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "max_run"), "%s", err);
	ck_assert_int_eq(vk.B->table_run(vk.ctx, &tab, 60, 5, 0, err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "positions"), "%s", err);
	ck_assert_int_eq(vk.B->table_run(vk.ctx, &tab, 0, 0, 0, err, sizeof err),
			 0);
	vk.B->table_release(vk.ctx, &tab);
	/* max_run 0 means 16 */
	table_init(&tab, cmds, 3, 64, NULL, 0);
	prepare(&vk, &tab);
	run(&vk, &tab, 0, 16, 0);
	ck_assert_int_eq(vk.B->table_run(vk.ctx, &tab, 0, 17, 0, err, sizeof err),
			 -1);
	vk.B->table_release(vk.ctx, &tab);
	buf_free(&vk, buf);
	be_close(&vk);
}
END_TEST

/* A small chained model on backend b: embed -> rmsnorm -> q, k, v ->
 * rope_kv -> attention -> o -> add -> rmsnorm -> gate, up -> silu_mul ->
 * down -> add; head: rmsnorm -> logits -> argmax. Prefill the prompt with
 * HEAD_LAST_ONLY in runs of max_run, then generate in runs of max_run from
 * the base position after it (the last run partial). */
#define CM_DIM 64
#define CM_HID 96
#define CM_VOCAB 97
#define CM_NH 4
#define CM_NKV 2
#define CM_HD 16
#define CM_CTX 41
#define CM_PROMPT 11

struct chain_out {
	int32_t ids[CM_CTX + 1];
	float logits_prefill[CM_VOCAB];
	float x_last[CM_DIM];
};

/* With post norms, Gemma 2's: the attention's and the FFN's outputs
 * through an rmsnorm (in place) before each residual add, which the
 * backend fuses into the matvec before it (matvec_fused's TAIL). */
static bool chain_post_norms;
/* With Qwen2's biases: a bias_add of each of q, k and v after their
 * matvecs, which the backend adds in matvec_fused's rope epilogue
 * (BIAS). */
static bool chain_qkv_bias;

/* vt: the weight type of the v matrix (wt for all in one type) */
static void chain_model(struct be *b, int wt, int vt, uint32_t max_run,
			struct chain_out *out)
{
	rng_seed(21 + wt);
	const int D = CM_DIM, H = CM_HID, NV = CM_VOCAB, KV = CM_NKV * CM_HD;
	size_t rb_e, rb_q, rb_k, rb_o, rb_g, rb_d, rb_l;
	uint8_t *we = weights_new(wt, D, NV, &rb_e);
	uint8_t *wq = weights_new(wt, D, D, &rb_q);
	uint8_t *wk = weights_new(wt, D, KV, &rb_k);
	size_t rb_v;
	uint8_t *wv = weights_new(vt, D, KV, &rb_v);
	uint8_t *wo = weights_new(wt, D, D, &rb_o);
	uint8_t *wg = weights_new(wt, D, H, &rb_g);
	uint8_t *wu = weights_new(wt, D, H, &rb_g);
	uint8_t *wd = weights_new(wt, H, D, &rb_d);
	uint8_t *wl = weights_new(wt, D, NV, &rb_l);
	float norm[CM_DIM];
	for (int i = 0; i < D; i++)
		norm[i] = 1.0f + 0.5f * rng_f();
	struct {
		const uint8_t *w;
		size_t bytes;
	} ws[9] = {{we, rb_e * NV}, {wq, rb_q * D}, {wk, rb_k * KV},
		   {wv, rb_v * KV}, {wo, rb_o * D},  {wg, rb_g * H},
		   {wu, rb_g * H},  {wd, rb_d * D},  {wl, rb_l * NV}};
	/* all weights in one buffer at 32-byte aligned offsets, as GGUF */
	uint64_t off[10] = {0};
	for (int i = 0; i < 9; i++)
		off[i + 1] = (off[i] + ws[i].bytes + 31) / 32 * 32;
	struct belt_buffer *W = buf_new(b, off[9] + D * 4);
	for (int i = 0; i < 9; i++)
		buf_put(b, W, off[i], ws[i].w, ws[i].bytes);
	buf_put(b, W, off[9], norm, D * 4);
	/* activations in one scratch buffer */
	enum { X, XB, Q, K, V_, AO, HB, HB2, N_ACT };
	static const int act_n[N_ACT] = {CM_DIM, CM_DIM, CM_DIM, CM_NKV * CM_HD,
					 CM_NKV * CM_HD, CM_DIM, CM_HID, CM_HID};
	uint64_t ao[N_ACT + 1] = {0};
	for (int i = 0; i < N_ACT; i++)
		ao[i + 1] = ao[i] + (uint64_t)act_n[i] * 4;
	struct belt_buffer *A = buf_new(b, ao[N_ACT]);
	struct belt_buffer *att = buf_new(b, (uint64_t)CM_NH * CM_CTX * 4);
	uint64_t cache = (uint64_t)CM_CTX * KV * 4;
	struct belt_buffer *KVb = buf_new(b, 2 * cache);
	struct belt_buffer *logits = NULL;
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO, NV * 4, &logits,
				      err, sizeof err) == 0);
	struct belt_buffer *ids = NULL;
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO, (CM_CTX + 1) * 4,
				      &ids, err, sizeof err) == 0);
	int32_t prompt[CM_PROMPT];
	for (int i = 0; i < CM_PROMPT; i++)
		prompt[i] = (int32_t)(rng_u32() % NV);
	buf_put(b, ids, 0, prompt, sizeof prompt);

	struct belt_cmd c[32];
	int n = 0;
#define ACT(i) A, ao[i], (uint64_t)act_n[i] * 4, BELT_TYPE_F32
#define MATVEC(wi, in, outb, k_, m_, lbl)                                  \
	do {                                                               \
		int mt_ = (wi) == 3 ? vt : wt;                             \
		c[n] = cmd_new(b, "matvec", mt_, lbl);                     \
		bind(&c[n], W, off[wi], ws[wi].bytes, mt_);                \
		bind(&c[n], ACT(in));                                      \
		bind(&c[n], ACT(outb));                                    \
		pi(&c[n], k_);                                             \
		pi(&c[n], m_);                                             \
		n++;                                                       \
	} while (0)
	c[n] = cmd_new(b, "embed", wt, "embed");
	c[n].patch = BELT_PATCH_TOKEN_OFFSET;
	bind(&c[n], W, off[0], ws[0].bytes, wt);
	c[n].bind[0].ne[0] = D;
	c[n].bind[0].ne[1] = NV;
	bind(&c[n], ids, 0, (CM_CTX + 1) * 4, BELT_TYPE_I32);
	bind(&c[n], ACT(X));
	pi(&c[n], D);
	n++;
	c[n] = cmd_new(b, "rmsnorm", BELT_TYPE_ANY, "attn_norm");
	bind(&c[n], ACT(X));
	bind(&c[n], W, off[9], D * 4, BELT_TYPE_F32);
	bind(&c[n], ACT(XB));
	pi(&c[n], D);
	pf(&c[n], 1e-5f);
	n++;
	MATVEC(1, XB, Q, D, D, "wq");
	MATVEC(2, XB, K, D, KV, "wk");
	MATVEC(3, XB, V_, D, KV, "wv");
	for (int s = 0; chain_qkv_bias && s < 3; s++) {
		/* the norm's weights as biases, k's and v's from different
		 * ends of them */
		static const char *lbl[3] = {"q_bias", "k_bias", "v_bias"};
		int dst = s == 0 ? Q : s == 1 ? K : V_, nb = s == 0 ? D : KV;
		c[n] = cmd_new(b, "bias_add", BELT_TYPE_ANY, lbl[s]);
		bind(&c[n], ACT(dst));
		bind(&c[n], W, off[9] + (s == 2 ? (uint64_t)(D - KV) * 4 : 0),
		     (uint64_t)nb * 4, BELT_TYPE_F32);
		pi(&c[n], nb);
		n++;
	}
	c[n] = cmd_new(b, "rope_kv", BELT_TYPE_ANY, "rope");
	c[n].patch = BELT_PATCH_POSITION;
	bind(&c[n], ACT(Q));
	bind(&c[n], ACT(K));
	bind(&c[n], ACT(V_));
	bind(&c[n], KVb, 0, cache, BELT_TYPE_F32);
	bind(&c[n], KVb, cache, cache, BELT_TYPE_F32);
	pi(&c[n], CM_NH);
	pi(&c[n], CM_NKV);
	pi(&c[n], CM_HD);
	pi(&c[n], CM_HD);
	pf(&c[n], 10000.0f);
	n++;
	c[n] = cmd_new(b, "attention", BELT_TYPE_ANY, "attn");
	c[n].patch = BELT_PATCH_KV_LEN;
	bind(&c[n], ACT(Q));
	bind(&c[n], KVb, 0, cache, BELT_TYPE_F32);
	bind(&c[n], KVb, cache, cache, BELT_TYPE_F32);
	bind(&c[n], ACT(AO));
	bind(&c[n], att, 0, (uint64_t)CM_NH * CM_CTX * 4, BELT_TYPE_F32);
	pi(&c[n], CM_NH);
	pi(&c[n], CM_NKV);
	pi(&c[n], CM_HD);
	pi(&c[n], CM_CTX);
	pf(&c[n], 0.25f);
	n++;
	MATVEC(4, AO, XB, D, D, "wo");
#define POST_NORM(lbl)                                                         \
	do {                                                                   \
		if (chain_post_norms) {                                        \
			c[n] = cmd_new(b, "rmsnorm", BELT_TYPE_ANY, lbl);      \
			bind(&c[n], ACT(XB));                                  \
			bind(&c[n], W, off[9], D * 4, BELT_TYPE_F32);          \
			bind(&c[n], ACT(XB));                                  \
			pi(&c[n], D);                                          \
			pf(&c[n], 1e-5f);                                      \
			n++;                                                   \
		}                                                              \
	} while (0)
	POST_NORM("post_attn_norm");
	int res1 = n;
	c[n] = cmd_new(b, "add", BELT_TYPE_ANY, "res1");
	bind(&c[n], ACT(X));
	bind(&c[n], ACT(XB));
	bind(&c[n], ACT(X));
	pi(&c[n], D);
	n++;
	c[n] = c[1]; /* ffn_norm */
	c[n].label = "ffn_norm";
	n++;
	MATVEC(5, XB, HB, D, H, "gate");
	MATVEC(6, XB, HB2, D, H, "up");
	c[n] = cmd_new(b, "silu_mul", BELT_TYPE_ANY, "silu");
	bind(&c[n], ACT(HB));
	bind(&c[n], ACT(HB2));
	bind(&c[n], ACT(HB));
	pi(&c[n], H);
	n++;
	MATVEC(7, HB, XB, H, D, "down");
	POST_NORM("post_ffw_norm");
	c[n] = c[res1]; /* res2: x += xb */
	c[n].label = "res2";
	n++;
	c[n] = cmd_new(b, "rmsnorm", BELT_TYPE_ANY, "out_norm");
	bind(&c[n], ACT(X));
	bind(&c[n], W, off[9], D * 4, BELT_TYPE_F32);
	bind(&c[n], ACT(XB));
	pi(&c[n], D);
	pf(&c[n], 1e-5f);
	c[n].head = true;
	n++;
	c[n] = cmd_new(b, "matvec", wt, "output");
	bind(&c[n], W, off[8], ws[8].bytes, wt);
	bind(&c[n], ACT(XB));
	bind(&c[n], logits, 0, NV * 4, BELT_TYPE_F32);
	pi(&c[n], D);
	pi(&c[n], NV);
	c[n].head = true;
	n++;
	c[n] = cmd_new(b, "argmax", BELT_TYPE_ANY, "argmax");
	c[n].patch = BELT_PATCH_ARGMAX_OUTPUT;
	bind(&c[n], logits, 0, NV * 4, BELT_TYPE_F32);
	bind(&c[n], ids, 0, (CM_CTX + 1) * 4, BELT_TYPE_I32);
	pi(&c[n], NV);
	c[n].head = true;
	n++;
#undef ACT
#undef MATVEC
#undef POST_NORM
	struct belt_table tab;
	table_init(&tab, c, (uint32_t)n, CM_CTX, ids, max_run);
	prepare(b, &tab);
	for (uint32_t done = 0; done < CM_PROMPT;) {
		uint32_t r = CM_PROMPT - done;
		if (r > max_run)
			r = max_run;
		run(b, &tab, done, r, BELT_RUN_HEAD_LAST_ONLY);
		done += r;
	}
	buf_get(b, logits, 0, out->logits_prefill, sizeof out->logits_prefill);
	for (uint32_t pos = CM_PROMPT; pos < CM_CTX;) {
		uint32_t r = CM_CTX - pos;
		if (r > max_run)
			r = max_run;
		run(b, &tab, pos, r, 0);
		pos += r;
	}
	buf_get(b, ids, 0, out->ids, sizeof out->ids);
	buf_get(b, A, ao[X], out->x_last, sizeof out->x_last);
	b->B->table_release(b->ctx, &tab);
	buf_free(b, W);
	buf_free(b, A);
	buf_free(b, att);
	buf_free(b, KVb);
	buf_free(b, logits);
	buf_free(b, ids);
	uint8_t *all[9] = {we, wq, wk, wv, wo, wg, wu, wd, wl};
	for (int i = 0; i < 9; i++)
		free(all[i]);
}

/* The chain on vk against cpu. Q4_0 and Q8_0 with x as int8: against the CPU's
 * AVX2 path instead (x quantized the same way; skipped where the CPU
 * lacks AVX2), with vk unfused (the NORM fusion quantizes x before the
 * norm's scale, so its fp16 block scales round otherwise). This chain's
 * random Q4_0 weights amplify x's quantization error beyond any useful
 * bound: the CPU's AVX2 and float paths differ by 11% of the largest
 * prefill logit and 29% in x at the last position, and may pick other
 * tokens (measured). */
static void check_chain(struct be *vk, struct be *cpu, int wt,
			uint32_t max_run)
{
	struct chain_out ov, oc;
	struct be c8 = {0};
	bool q8x = (wt == BELT_TYPE_Q4_0 || wt == BELT_TYPE_Q8_0) && vk_q8x() &&
		   !cpu->int8_x;
	if (q8x) {
		if (!open_cpu_isa("avx2", &c8))
			return;
		cpu = &c8;
		setenv("BELT_VK_FUSE", "0", 1);
	}
	chain_model(vk, wt, wt, max_run, &ov);
	if (q8x)
		unsetenv("BELT_VK_FUSE");
	chain_model(cpu, wt, wt, max_run, &oc);
	if (q8x)
		be_close(&c8);
	for (int i = 0; i < CM_VOCAB; i++)
		ck_assert_msg(fabsf(ov.logits_prefill[i] - oc.logits_prefill[i]) <=
				      1e-3f * (1 + fabsf(oc.logits_prefill[i])),
			      "chain %s: prefill logit %d: %g vs cpu %g",
			      belt_type_name(wt), i, ov.logits_prefill[i],
			      oc.logits_prefill[i]);
	for (int i = 0; i <= CM_CTX; i++)
		ck_assert_msg(ov.ids[i] == oc.ids[i],
			      "chain %s max_run %u: token %d: %d vs cpu %d",
			      belt_type_name(wt), max_run, i, ov.ids[i],
			      oc.ids[i]);
	for (int i = 0; i < CM_DIM; i++)
		ck_assert_msg(fabsf(ov.x_last[i] - oc.x_last[i]) <=
				      1e-3f * (1 + fabsf(oc.x_last[i])),
			      "chain %s: x[%d]: %g vs cpu %g",
			      belt_type_name(wt), i, ov.x_last[i], oc.x_last[i]);
}

/* Loop index N_WTYPES, N_WTYPES + 1: Q4_0, Q8_0 on the float path
 * (BELT_VK_Q8X=0). */
static int loop_wtype(int i)
{
	if (i < N_WTYPES)
		return wtypes[i];
	setenv("BELT_VK_Q8X", "0", 1);
	return i == N_WTYPES ? BELT_TYPE_Q4_0 : BELT_TYPE_Q8_0;
}

START_TEST(test_chained_model)
{
	int wt = loop_wtype(_i);
	struct be vk = open_vk(), cpu = open_cpu();
	static const uint32_t runs[] = {1, 4, 16, 4, 4};
	for (int r = 0; r < 5; r++) {
		chain_post_norms = r == 3; /* Gemma's post norms, fused */
		chain_qkv_bias = r == 4;   /* Qwen2's biases, fused */
		check_chain(&vk, &cpu, wt, runs[r]);
	}
	chain_post_norms = chain_qkv_bias = false;
	be_close(&cpu);
	be_close(&vk);
	unsetenv("BELT_VK_Q8X");
}
END_TEST

/* A fused run of the chained model (of) against the unfused one (ou):
 * the same token ids, and (unless ids_only) the prefill logits and the
 * last x within 1e-3 relative. */
static void check_fused(const struct chain_out *of, const struct chain_out *ou,
			const char *what, bool ids_only)
{
	for (int i = 0; i <= CM_CTX; i++)
		ck_assert_msg(of->ids[i] == ou->ids[i], "fused %s: token %d: %d vs unfused %d", what,
			      i, of->ids[i], ou->ids[i]);
	for (int i = 0; i < CM_VOCAB && !ids_only; i++)
		ck_assert_msg(fabsf(of->logits_prefill[i] - ou->logits_prefill[i]) <=
				      1e-3f * fmaxf(1.0f, fabsf(ou->logits_prefill[i])),
			      "fused %s: logit %d: %.9g vs unfused %.9g", what, i,
			      of->logits_prefill[i], ou->logits_prefill[i]);
	for (int i = 0; i < CM_DIM && !ids_only; i++)
		ck_assert_msg(fabsf(of->x_last[i] - ou->x_last[i]) <=
				      1e-3f * fmaxf(1.0f, fabsf(ou->x_last[i])),
			      "fused %s: x[%d]: %.9g vs unfused %.9g", what, i, of->x_last[i],
			      ou->x_last[i]);
}

/* chain_model (weights wt, n_run tokens a run) on a backend opened with
 * the n variables var set to val, unset again once it is open. */
static void chain_model_with(const char *const *var, const char *const *val, int n, int wt,
			     uint32_t n_run, struct chain_out *o)
{
	for (int i = 0; i < n; i++)
		setenv(var[i], val[i], 1);
	struct be b = open_vk();
	for (int i = 0; i < n; i++)
		unsetenv(var[i]);
	chain_model(&b, wt, wt, n_run, o);
	be_close(&b);
}

/* Fusion (the default) against BELT_VK_FUSE=0, the table as the core
 * built it: in the chained model the backend fuses attn_norm + q/k/v +
 * rope_kv, wo + res1, ffn_norm + gate/up + silu_mul and down + res2. The
 * same token ids, and logits and x within 1e-3 relative: the same bound
 * as against the CPU above, since fused and unfused sum in different
 * orders through a chain of layers and tokens (the H100 measured 1.9e-4
 * on x). Run 2 and 3 fuse with two subgroups per row (KS 2, every
 * matvec), the default for F16 and Q8_0 on GPUs but not on lavapipe;
 * runs 4 and 5 (5 with KS 2) add Gemma's post norms: the first fused
 * into ffn_norm + gate/up (PEND) and copied back by down, the second
 * into down (TAIL), as the head's norm cannot take it; run 6 with
 * defer_norms 0: both in the matvec before them (TAIL); runs 7 and 8
 * add Qwen2's q/k/v biases (BIAS); run 9 the post norms with
 * pend_one_pass 0 (PEND's pass over y first, which this chain's short
 * rows do not otherwise take); run 10 the post norms with 2 row groups
 * a subgroup in the dispatches with a norm and 4 in the others
 * (mv_blocks, mv_blocks_plain: the default takes 2 on long rows only);
 * run 11 the same without the post norms, also for Q4_0 and Q8_0 with x
 * as int8 (the default there for a head of 65536 rows or more). */
START_TEST(test_fused)
{
	int wt = loop_wtype(_i);
	struct be vk = open_vk();
	/* Q4_0 and Q8_0 with x as int8: the NORM fusion rounds x's fp16
	 * block scales from x before the norm's scale, which this chain
	 * amplifies (as in check_chain: 6.8% of the largest logit, 32% in x,
	 * measured on Q4_0), so token ids only here; test_q8x_fused checks
	 * each flag exactly */
	bool ids_only = (wt == BELT_TYPE_Q4_0 || wt == BELT_TYPE_Q8_0) && vk_q8x();
	static const uint32_t runs[] = {1, 4, 1, 4, 1, 4, 4, 1, 4, 4, 4, 4};
	for (int r = 0; r < 12; r++) {
		struct chain_out of, ou;
		/* runs 4 to 6: Gemma's post norms (5 with the k-split), 7
		 * and 8 Qwen2's biases; not with x as int8, where this
		 * chain's ids part between the fused and unfused tables with
		 * post norms, or biases, even without their fusion (measured:
		 * Q4_0 with biases, token 14): loop indices N_WTYPES and + 1
		 * check Q4_0 and Q8_0 with them on the float path; 11: 4 row
		 * groups a subgroup without a norm (the default for a
		 * vocabulary's head on Q4_0 with x as int8), every type */
		if (r >= 4 && r < 11 && ids_only)
			continue;
		chain_post_norms = (r >= 4 && r <= 6) || r == 9 || r == 10;
		chain_qkv_bias = r == 7 || r == 8;
		setenv("BELT_VK_FUSE", "0", 1);
		chain_model(&vk, wt, wt, runs[r], &ou);
		unsetenv("BELT_VK_FUSE");
		if (r < 2 || r == 4 || r == 7) {
			chain_model(&vk, wt, wt, runs[r], &of);
		} else if (r == 10 || r == 11) {
			static const char *const var[] = {"BELT_VK_MV_BLOCKS",
							  "BELT_VK_MV_BLOCKS_PLAIN"};
			static const char *const val[] = {"2", "4"};
			chain_model_with(var, val, 2, wt, runs[r], &of);
		} else if (r == 6 || r == 9) {
			const char *var = r == 6 ? "BELT_VK_DEFER_NORMS" : "BELT_VK_PEND_ONE_PASS";
			const char *val = "0";
			chain_model_with(&var, &val, 1, wt, runs[r], &of);
		} else {
			static const char *const var[] = {"BELT_VK_MV_KSPLIT", "BELT_VK_MV_KSPLIT_K"};
			static const char *const val[] = {"2", "0"};
			chain_model_with(var, val, 2, wt, runs[r], &of);
		}
		check_fused(&of, &ou, belt_type_name(wt), ids_only);
	}
	chain_post_norms = chain_qkv_bias = false;
	be_close(&vk);
	unsetenv("BELT_VK_Q8X");
}
END_TEST

/* q and k of one weight type, v of another (llama.cpp's mixes: Q4_K_M's
 * attn_v in Q6_K, IQ4_XS's in Q5_K): attn_norm is fused into both the
 * q/k dispatch and the v one (fusion.c, norm_next), rope_kv left alone.
 * In float (BELT_VK_Q8X=0), against the unfused table within test_fused's
 * bounds. */
START_TEST(test_fused_mixed)
{
	setenv("BELT_VK_Q8X", "0", 1);
	struct be vk = open_vk();
	static const uint32_t runs[] = {1, 4};
	for (int r = 0; r < 2; r++) {
		struct chain_out of, ou;
		setenv("BELT_VK_FUSE", "0", 1);
		chain_model(&vk, BELT_TYPE_Q8_0, BELT_TYPE_F16, runs[r], &ou);
		unsetenv("BELT_VK_FUSE");
		chain_model(&vk, BELT_TYPE_Q8_0, BELT_TYPE_F16, runs[r], &of);
		check_fused(&of, &ou, "q8_0 with v f16", false);
	}
	be_close(&vk);
	unsetenv("BELT_VK_Q8X");
}
END_TEST

/* create() with belt.yaml settings (backends: vulkan:): rc, and b. */
static int open_vk_settings(const struct belt_setting *set, uint32_t n,
			    struct be *b)
{
	struct belt_backend_options opt = {.n_threads = 1, .device = -1,
					   .settings = set, .n_settings = n};
	b->B = V;
	b->int8_x = false;
	return V->create(&opt, &b->ctx, err, sizeof err);
}

static bool same_chain(const struct chain_out *a, const struct chain_out *b)
{
	return !memcmp(a, b, sizeof *a);
}

/* Settings from belt.yaml: fuse 0 runs the chained model exactly as
 * BELT_VK_FUSE=0 does (test_fused's unfused reference), the variable
 * overrides the file (fuse 0 in the file, BELT_VK_FUSE=1: the fused run;
 * a bad value in the file under a good variable is not read), an unknown
 * key is refused naming it, a bad value naming the key and what it
 * takes. */
START_TEST(test_settings)
{
	int wt = BELT_TYPE_F32;
	struct chain_out fused, unfused, got;
	struct be vk = open_vk();
	chain_model(&vk, wt, wt, 4, &fused);
	setenv("BELT_VK_FUSE", "0", 1);
	chain_model(&vk, wt, wt, 4, &unfused);
	unsetenv("BELT_VK_FUSE");
	be_close(&vk);

	static const struct belt_setting fuse0[] = {{"fuse", "0"}};
	struct be vs;
	ck_assert_msg(open_vk_settings(fuse0, 1, &vs) == 0, "fuse 0: %s", err);
	chain_model(&vs, wt, wt, 4, &got);
	ck_assert_msg(same_chain(&got, &unfused),
		      "fuse: 0 differs from BELT_VK_FUSE=0");
	setenv("BELT_VK_FUSE", "1", 1);
	chain_model(&vs, wt, wt, 4, &got);
	unsetenv("BELT_VK_FUSE");
	ck_assert_msg(same_chain(&got, &fused),
		      "BELT_VK_FUSE=1 over fuse: 0 differs from the fused run");
	be_close(&vs);

	static const struct belt_setting rows_bad[] = {{"mv_rows", "9"}};
	setenv("BELT_VK_MV_ROWS", "2", 1);
	int rc = open_vk_settings(rows_bad, 1, &vs);
	unsetenv("BELT_VK_MV_ROWS");
	ck_assert_msg(rc == 0, "BELT_VK_MV_ROWS=2 over mv_rows: 9: %s", err);
	be_close(&vs);

	static const struct belt_setting unknown[] = {{"fuse", "1"},
						      {"fusion", "0"}};
	ck_assert_int_eq(open_vk_settings(unknown, 2, &vs), -1);
	ck_assert_msg(strstr(err, "backends.vulkan") && strstr(err, "'fusion'"),
		      "%s", err);

	static const struct {
		const char *key, *value, *expect;
	} bad[] = {
		{"fuse", "yes", "0 or 1"},
		{"validation", "2", "fatal"},
		{"q8x", "q4_1", "q8_0"},
		{"mv_rows", "9", "1 to 8"},
		{"mv_wg", "96", "power of two"},
		{"mv_tile", "3000", "multiple of 2048"},
		{"mv_ksplit", "3", "1, 2 or 4"},
		{"mv_ksplit_k", "-1", ">= 0"},
		{"mv_blocks", "5", "1 to 4"},
		{"mv_blocks_plain", "0", "1 to 4"},
		{"coopmat", "on", "0 or 1"},
		{"mm_tile", "128x128x48x32", "BMxBNxWMxWN"},
		{"mm_tile", "128x128", "BMxBNxWMxWN"},
		{"mm_tile", "128x128x16x16", "at most 16 subgroups"},
		{"att_chunk", "16", "32 to"},
		{"att_splits", "0", "1 to 1024"},
		{"few_xg", "-1", ">= 0"},
		{"few_wg", "96", "power of two"},
		{"few_unroll", "3", "2 or 4"},
		{"few_mma", "17", "0 to 16"},
		{"few_mma_sg", "8", "0 to 4"},
		{"att_seqs", "yes", "0 or 1"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct belt_setting one = {bad[i].key, bad[i].value};
		/* the key's variable (BELT_VK_VALIDATION under a validation
		 * run) would override the file: set aside */
		char env[32], keep[64] = "";
		snprintf(env, sizeof env, "BELT_VK_%s", bad[i].key);
		for (char *c = env; *c; c++)
			*c = *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
		const char *e = getenv(env);
		if (e)
			snprintf(keep, sizeof keep, "%s", e);
		unsetenv(env);
		rc = open_vk_settings(&one, 1, &vs);
		if (*keep)
			setenv(env, keep, 1);
		ck_assert_int_eq(rc, -1);
		char key[64];
		snprintf(key, sizeof key, "backends.vulkan.%s:", bad[i].key);
		ck_assert_msg(strstr(err, key) && strstr(err, bad[i].expect),
			      "%s: %s", bad[i].key, err);
	}
	/* a bad variable: named, at create and (fuse, profile) at prepare */
	setenv("BELT_VK_STAGING", "on", 1);
	rc = open_vk_settings(NULL, 0, &vs);
	unsetenv("BELT_VK_STAGING");
	ck_assert_int_eq(rc, -1);
	ck_assert_msg(strstr(err, "BELT_VK_STAGING=on"), "%s", err);
}
END_TEST

/* Q4_0 and Q8_0 with x as int8: each fused flag against BELT_VK_FUSE=0, to float
 * rounding (1e-5 relative). x is +-2 and the rmsnorm's eps 0, so that the
 * norm's scale is exactly 1/2 and the NORM fusion (x quantized before the
 * scale) makes the quants and the (halved) fp16 block scales of the
 * unfused rmsnorm then matvec. One table: norm + q, k, v (three
 * segments), norm + gate, up + silu_mul (SWIGLU), matvec + add (ADD);
 * rows of 4608 (three tiles at BELT_VK_MV_TILE=2048), row counts not a
 * multiple of a workgroup's. ROPE is checked by test_fused (its epilogue
 * works on the reduced sums, whatever the type). */
#define QF_K 4608
#define QF_M 70
#define QF_M2 38
enum { QF_Q, QF_KK, QF_V, QF_G, QF_R, QF_N };
static const int qf_n[QF_N] = {QF_M, QF_M2, QF_M2, QF_M, QF_M};

static void q8x_table(struct be *b, int wt, float out[QF_N][QF_M])
{
	rng_seed(77);
	const int K = QF_K, M = QF_M, M2 = QF_M2;
	enum { WQ, WK, WV, WG, WU, WO, NW };
	static const int rows[NW] = {QF_M, QF_M2, QF_M2, QF_M, QF_M, QF_M};
	uint8_t *w[NW];
	size_t rb = 0;
	uint64_t off[NW + 1] = {0};
	for (int i = 0; i < NW; i++) {
		w[i] = weights_new(wt, K, rows[i], &rb);
		off[i + 1] = off[i] + (rb * (size_t)rows[i] + 31) / 32 * 32;
	}
	float *x = malloc((size_t)K * 4), *nw = malloc((size_t)K * 4),
	      r0[QF_M];
	for (int j = 0; j < K; j++) {
		x[j] = rng_u32() & 1 ? 2.0f : -2.0f;
		nw[j] = 1.0f + 0.5f * rng_f();
	}
	fill(r0, QF_M);
	struct belt_buffer *W = buf_new(b, off[NW] + (uint64_t)K * 4);
	for (int i = 0; i < NW; i++)
		buf_put(b, W, off[i], w[i], rb * (size_t)rows[i]);
	buf_put(b, W, off[NW], nw, (uint64_t)K * 4);
	enum { X, XB, Q, KK, V_, G, U, R, N_ACT };
	const int act_n[N_ACT] = {K, K, M, M2, M2, M, M, M};
	uint64_t ao[N_ACT + 1] = {0};
	for (int i = 0; i < N_ACT; i++)
		ao[i + 1] = ao[i] + (uint64_t)act_n[i] * 4;
	struct belt_buffer *A = buf_new(b, ao[N_ACT]);
	buf_put(b, A, ao[X], x, (uint64_t)K * 4);
	buf_put(b, A, ao[R], r0, sizeof r0);
	struct belt_cmd c[16];
	int n = 0;
#define ACT(i) A, ao[i], (uint64_t)act_n[i] * 4, BELT_TYPE_F32
#define NORM()                                                             \
	do {                                                               \
		c[n] = cmd_new(b, "rmsnorm", BELT_TYPE_ANY, "norm");       \
		bind(&c[n], ACT(X));                                       \
		bind(&c[n], W, off[NW], (uint64_t)K * 4, BELT_TYPE_F32);   \
		bind(&c[n], ACT(XB));                                      \
		pi(&c[n], K);                                              \
		pf(&c[n], 0.0f);                                           \
		n++;                                                       \
	} while (0)
#define MV(wi, in, o)                                                      \
	do {                                                               \
		c[n] = cmd_new(b, "matvec", wt, "mv");                     \
		bind(&c[n], W, off[wi], rb * (size_t)rows[wi], wt);        \
		bind(&c[n], ACT(in));                                      \
		bind(&c[n], ACT(o));                                       \
		pi(&c[n], K);                                              \
		pi(&c[n], rows[wi]);                                       \
		n++;                                                       \
	} while (0)
	NORM();
	MV(WQ, XB, Q);
	MV(WK, XB, KK);
	MV(WV, XB, V_);
	NORM();
	MV(WG, XB, G);
	MV(WU, XB, U);
	c[n] = cmd_new(b, "silu_mul", BELT_TYPE_ANY, "silu");
	bind(&c[n], ACT(G));
	bind(&c[n], ACT(U));
	bind(&c[n], ACT(G));
	pi(&c[n], M);
	n++;
	MV(WO, X, U);
	c[n] = cmd_new(b, "add", BELT_TYPE_ANY, "res");
	bind(&c[n], ACT(R));
	bind(&c[n], ACT(U));
	bind(&c[n], ACT(R));
	pi(&c[n], M);
	n++;
	/* XB and U rewritten: dead after their readers, so fusable */
	NORM();
	MV(WO, X, U);
#undef ACT
#undef NORM
#undef MV
	struct belt_table tab;
	table_init(&tab, c, (uint32_t)n, 1, NULL, 1);
	prepare(b, &tab);
	run(b, &tab, 0, 1, 0);
	static const int from[QF_N] = {Q, KK, V_, G, R};
	for (int i = 0; i < QF_N; i++)
		buf_get(b, A, ao[from[i]], out[i], (uint64_t)qf_n[i] * 4);
	b->B->table_release(b->ctx, &tab);
	buf_free(b, W);
	buf_free(b, A);
	for (int i = 0; i < NW; i++)
		free(w[i]);
	free(x);
	free(nw);
}

START_TEST(test_q8x_fused)
{
	if (!vk_q8x()) {
		fprintf(stderr, "skipping test_q8x_fused: no int8 dot products\n");
		return;
	}
	/* the defaults; x in tiles; 2 rows per subgroup and 2 subgroups
	 * per row; 4 units loaded at once */
	static const char *env[][6] = {
		{NULL},
		{"BELT_VK_MV_TILE", "2048"},
		{"BELT_VK_MV_ROWS", "2", "BELT_VK_MV_KSPLIT", "2",
		 "BELT_VK_MV_KSPLIT_K", "0"},
		{"BELT_VK_MV_UNROLL", "4"},
	};
	for (size_t e = 0; e < sizeof env / sizeof env[0]; e++) {
		for (int i = 0; i < 6 && env[e][i]; i += 2)
			setenv(env[e][i], env[e][i + 1], 1);
		struct be vk = open_vk();
		for (int i = 0; i < 6 && env[e][i]; i += 2)
			unsetenv(env[e][i]);
		float of[QF_N][QF_M], ou[QF_N][QF_M];
		for (int t = 0; t < 2; t++) {
			int wt = t ? BELT_TYPE_Q8_0 : BELT_TYPE_Q4_0;
			q8x_table(&vk, wt, of);
			setenv("BELT_VK_FUSE", "0", 1);
			q8x_table(&vk, wt, ou);
			unsetenv("BELT_VK_FUSE");
			static const char *name[QF_N] = {"q", "k", "v", "silu",
							 "add"};
			for (int i = 0; i < QF_N; i++)
				for (int r = 0; r < qf_n[i]; r++)
					ck_assert_msg(fabsf(of[i][r] - ou[i][r]) <=
							      1e-5f * fmaxf(1.0f, fabsf(ou[i][r])),
						      "q8x fused %s (env %zu) %s row %d: "
						      "%.9g vs unfused %.9g",
						      belt_type_name(wt), e, name[i], r,
						      of[i][r], ou[i][r]);
		}
		be_close(&vk);
	}
}
END_TEST

/* Device buffers that are not mapped: writes and reads go through the
 * staging buffer. */
START_TEST(test_staging)
{
	setenv("BELT_VK_STAGING", "1", 1);
	struct be vk = open_vk(), cpu = open_cpu();
	unsetenv("BELT_VK_STAGING");
	rng_seed(30);
	float data[1000], back[1000];
	fill(data, 1000);
	struct belt_buffer *b = buf_new(&vk, sizeof data);
	buf_get(&vk, b, 0, back, sizeof back);
	for (int i = 0; i < 1000; i++)
		ck_assert(back[i] == 0.0f); /* zeroed */
	buf_put(&vk, b, 12, data, 400);
	buf_get(&vk, b, 8, back, 408);
	ck_assert(back[0] == 0.0f && !memcmp(back + 1, data, 400));
	buf_free(&vk, b);
	check_matvec(&vk, &cpu, 3, 256, 33, 0, 0);
	check_chain(&vk, &cpu, BELT_TYPE_F16, 4);
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_errors)
{
	struct be vk = open_vk();
	struct belt_buffer *b = buf_new(&vk, 100);
	char tmp[8];
	ck_assert_int_eq(vk.B->buffer_read(vk.ctx, b, 96, tmp, 8, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "96") && strstr(err, "100"), "%s", err);
	ck_assert_int_eq(vk.B->buffer_write(vk.ctx, b, UINT64_MAX - 2, tmp, 8,
					    err, sizeof err),
			 -1);
	struct belt_buffer *big = NULL;
	ck_assert_int_eq(vk.B->buffer_create(vk.ctx, BELT_BUFFER_KV, 1ull << 46,
					     &big, err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "KV cache") && strstr(err, "70368744177664"),
		      "%s", err);

	/* outside the buffer, too small, misaligned */
	struct belt_cmd c = cmd_new(&vk, "add", BELT_TYPE_ANY, "blk.3.res");
	bind(&c, b, 0, 40, BELT_TYPE_F32);
	bind(&c, b, 40, 40, BELT_TYPE_F32);
	bind(&c, b, 80, 40, BELT_TYPE_F32);
	pi(&c, 10);
	struct belt_table tab;
	table_init(&tab, &c, 1, 4, NULL, 4);
	ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.3.res") && strstr(err, "outside"), "%s",
		      err);
	ck_assert_ptr_null(tab.priv);
	c.bind[2].offset = 60;
	c.param[0].i = 15;
	ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.3.res") && strstr(err, "needs 60"), "%s",
		      err);
	c.param[0].i = 10;
	c.bind[1].offset = 41;
	ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "blk.3.res") && strstr(err, "multiple"), "%s",
		      err);
	c.bind[1].offset = 44; /* not 16-aligned: fine */
	prepare(&vk, &tab);
	vk.B->table_release(vk.ctx, &tab);
	c.n_param = 2;
	ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "params"), "%s", err);
	c.n_param = 1;
	/* a kernel from elsewhere */
	struct belt_kernel alien = *c.kernel;
	c.kernel = &alien;
	ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel"), "%s", err);

	/* a binding beyond maxStorageBufferRange (lavapipe: 128 MiB) names
	 * the command; devices with a larger range just prepare it */
	uint64_t huge = (128ull << 20) + 4096;
	struct belt_buffer *hb = NULL;
	if (vk.B->buffer_create(vk.ctx, BELT_BUFFER_WEIGHTS, huge, &hb, err,
				sizeof err) == 0) {
		struct belt_cmd mv = cmd_new(&vk, "matvec", BELT_TYPE_F32,
					     "output.weight");
		bind(&mv, hb, 0, huge - 64, BELT_TYPE_F32);
		bind(&mv, b, 0, 16, BELT_TYPE_F32);
		bind(&mv, b, 16, 16, BELT_TYPE_F32);
		pi(&mv, 4);
		pi(&mv, 4);
		table_init(&tab, &mv, 1, 4, NULL, 4);
		if (vk.B->table_prepare(vk.ctx, &tab, err, sizeof err) == 0)
			vk.B->table_release(vk.ctx, &tab);
		else
			ck_assert_msg(strstr(err, "output.weight") &&
					      strstr(err, "maxStorageBufferRange"),
				      "%s", err);
		buf_free(&vk, hb);
	}
	ck_assert_int_eq(vk.B->table_run(vk.ctx, &tab, 0, 1, 0, err, sizeof err), -1);
	buf_free(&vk, b);
	vk.B->buffer_destroy(vk.ctx, NULL);
	be_close(&vk);
	V->destroy(NULL);

	/* a device index that does not exist */
	struct belt_backend_options opt = {.device = 99};
	void *bad = NULL;
	ck_assert_int_eq(V->create(&opt, &bad, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "99"), "%s", err);
}
END_TEST

START_TEST(test_kernel_find)
{
	struct be vk = open_vk(), cpu = open_cpu();
	static const char *ops[] = {"embed", "matvec", "rmsnorm", "rope_kv",
				    "attention", "silu_mul", "add", "argmax"};
	for (int o = 0; o < 8; o++)
		for (int i = 0; i < N_WTYPES; i++) {
			const struct belt_kernel *kv =
				V->kernel_find(vk.ctx, ops[o], NULL, wtypes[i]);
			const struct belt_kernel *kc =
				C->kernel_find(cpu.ctx, ops[o], "", wtypes[i]);
			ck_assert_ptr_nonnull(kv);
			ck_assert_ptr_nonnull(kc);
			ck_assert_str_eq(kv->op, kc->op);
			ck_assert_str_eq(kv->variant, "default");
			ck_assert_str_eq(kv->params, kc->params);
			ck_assert_int_eq(kv->wtype, kc->wtype);
			ck_assert_int_eq(kv->n_bind, kc->n_bind);
		}
	ck_assert_ptr_null(V->kernel_find(vk.ctx, "matvec", NULL, BELT_TYPE_IQ2_XXS));
	ck_assert_ptr_null(V->kernel_find(vk.ctx, "matvec", "fast", BELT_TYPE_F32));
	ck_assert_ptr_null(V->kernel_find(vk.ctx, NULL, NULL, BELT_TYPE_F32));
	ck_assert_str_eq(V->name, "vulkan");
	ck_assert(V->abi >= BELT_BACKEND_ABI_MIN && V->abi <= BELT_BACKEND_ABI);
	ck_assert_ptr_null(V->buffer_wrap);
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* ---- silu, top_k: Medusa draft heads' ops (silu_topk_check.h) ---- */

/* silu against the double reference, and the two backends within 1e-6
 * relative of each other (the shader reduces e^-x's argument as expf
 * does, not exp2(-x log2(e))) */
START_TEST(test_silu)
{
	struct be vk = open_vk(), cpu = open_cpu();
	check_silu(V, vk.ctx);
	enum { N = 301 };
	float x[3 * N], a[3 * N], c[3 * N];
	for (uint32_t r = 0; r < 3; r++)
		silu_values(x + r * N, N, 40 + r);
	silu_run(V, vk.ctx, x, N, 3, a);
	silu_run(C, cpu.ctx, x, N, 3, c);
	for (int i = 0; i < 3 * N; i++)
		silu_close(a[i], c[i], "vulkan against cpu", i, x[i]);
	be_close(&vk);
	be_close(&cpu);
}
END_TEST

/* top_k against the double reference, then the time of a run of a
 * vocabulary's 32000 logits with k 8 (a workgroup per row: quick on
 * lavapipe too), reported. */
START_TEST(test_top_k)
{
	struct be vk = open_vk();
	check_top_k(V, vk.ctx);
	const int n = 32000, k = 8, reps = 20;
	float *l = malloc((size_t)n * 4);
	ck_assert(l);
	top_k_vocab(l, n, 11);
	struct belt_buffer *bl = stk_buf(V, vk.ctx, STK_OFF + (uint64_t)n * 4);
	struct belt_buffer *bo = stk_buf(V, vk.ctx, STK_OFF + (uint64_t)k * 8);
	stk_put(V, vk.ctx, bl, l, (uint64_t)n * 4);
	struct belt_cmd c = stk_cmd(V, vk.ctx, "top_k", "medusa.0.top_k");
	stk_bind(&c, bl, n, 1);
	stk_bind(&c, bo, 2 * k, 1);
	pi(&c, n);
	pi(&c, k);
	struct belt_table tab;
	stk_run(V, vk.ctx, &c, 1, &tab);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < reps; i++)
		run(&vk, &tab, 0, 1, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "vulkan top_k of %d logits, k %d: %.3f ms a run\n", n, k,
		((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) /
			reps);
	V->table_release(vk.ctx, &tab);
	buf_free(&vk, bl);
	buf_free(&vk, bo);
	free(l);
	be_close(&vk);
}
END_TEST

START_TEST(test_top_k_errors)
{
	struct be vk = open_vk();
	check_top_k_errors(V, vk.ctx);
	be_close(&vk);
}
END_TEST

/* ---- batched tables ---- */

/* Bind `rows` rows of n floats at off of buf (an activation binding). */
static void bind_rows(struct belt_cmd *c, struct belt_buffer *buf, uint64_t off,
		      int n, uint32_t rows)
{
	bind(c, buf, off, (uint64_t)n * 4 * rows, BELT_TYPE_F32);
	c->bind[c->n_bind - 1].ne[0] = n;
	c->bind[c->n_bind - 1].ne[1] = rows;
}

/* A batched table's matvec: W (wbytes at offset woff of bw, k x m of
 * type t) times rows rows of x in bx, into by. */
static struct belt_cmd matvec_rows_cmd(struct be *vk, int t, const char *label,
				       struct belt_buffer *bw, uint64_t woff, uint64_t wbytes,
				       int k, int m, struct belt_buffer *bx,
				       struct belt_buffer *by, uint32_t rows)
{
	struct belt_cmd c = cmd_new(vk, "matvec", t, label);
	bind(&c, bw, woff, wbytes, t);
	c.bind[0].ne[0] = k;
	c.bind[0].ne[1] = m;
	bind_rows(&c, bx, 0, k, rows);
	bind_rows(&c, by, 0, m, rows);
	pi(&c, k);
	pi(&c, m);
	return c;
}

/* A batched table's op of rows of n values: out = op(a, b). */
static struct belt_cmd rows_op_cmd(struct be *vk, const char *op, struct belt_buffer *a,
				   struct belt_buffer *b, struct belt_buffer *out, int n,
				   uint32_t rows)
{
	struct belt_cmd c = cmd_new(vk, op, BELT_TYPE_ANY, op);
	bind_rows(&c, a, 0, n, rows);
	bind_rows(&c, b, 0, n, rows);
	bind_rows(&c, out, 0, n, rows);
	pi(&c, n);
	return c;
}

/* A batched table over cmds: rows rows, row outputs row_ids. */
static void table_rows(struct belt_table *t, struct belt_cmd *cmds, uint32_t n,
		       uint32_t n_ctx, struct belt_buffer *ids, uint32_t rows,
		       struct belt_buffer *row_ids)
{
	table_init(t, cmds, n, n_ctx, ids, rows);
	t->rows = rows;
	t->row_ids = rows > 1 ? row_ids : NULL;
}

/* y = W x for rows of x (double), row r of the result in y[r * m]. */
static void matmul_ref(int t, const uint8_t *w, size_t rb, const float *x,
		       int k, int m, int rows, double *y, double *mag)
{
	for (int r = 0; r < rows; r++)
		for (int i = 0; i < m; i++) {
			double s = 0, a = 0;
			for (int j = 0; j < k; j++) {
				double p = weight_at(t, w + rb * (size_t)i, j) *
					   x[(size_t)r * k + j];
				s += p;
				a += fabs(p);
			}
			y[(size_t)r * m + i] = s;
			mag[(size_t)r * m + i] = a;
		}
}

/* matmul_ref for the int8 products on the matrix units (matmul_q8cm.comp):
 * x as they stage it, per block of 32 values d = amax / 127 and q =
 * round(x * (127 / amax)) in float, y the sums of w q d; slack[i] adds
 * |w d| for each value whose x * 127 / amax lies within 1e-4 of a
 * rounding tie, where the device's division may round the other way. */
static void matmul_ref_q8(int t, const uint8_t *w, size_t rb, const float *x,
			  int k, int m, int rows, double *y, double *slack)
{
	float *xq = malloc((size_t)k * sizeof *xq);
	double *dq = malloc((size_t)k * sizeof *dq); /* d at near-ties, else 0 */
	ck_assert(xq && dq);
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * k;
		for (int g = 0; g < k; g += 32) {
			float amax = 0.0f;
			for (int j = g; j < g + 32; j++)
				amax = fmaxf(amax, fabsf(xr[j]));
			float id = amax > 0.0f ? 127.0f / amax : 0.0f, d = amax / 127.0f;
			for (int j = g; j < g + 32; j++) {
				float v = xr[j] * id;
				xq[j] = d * nearbyintf(v);
				dq[j] = fabs(v - truncf(v) - copysignf(0.5f, v)) < 1e-4 ? d : 0;
			}
		}
		for (int i = 0; i < m; i++) {
			double s = 0, sl = 0;
			for (int j = 0; j < k; j++) {
				double wj = weight_at(t, w + rb * (size_t)i, j);
				s += wj * xq[j];
				sl += fabs(wj) * dq[j];
			}
			y[(size_t)r * m + i] = s;
			slack[(size_t)r * m + i] = sl;
		}
	}
	free(xq);
	free(dq);
}

/* A batched table's matvec (the tiled product): every row of a pass
 * within rel * sum|w x| + 1e-6 of the double reference (2e-5 for float
 * products, accumulated in another order than the one-row matvec's; on
 * the matrix units x and the weights are rounded to float16 first, 2^-11
 * of each value at most, so 1e-3); runs of n <
 * rows leave the other rows alone, as do the head's under
 * HEAD_LAST_ONLY but for the last row and under SKIP_HEAD. Weights at an
 * offset that the GPU layout cannot take (GGUF layout) and at one that
 * it takes (converted at prepare). */
/* y[r] for each x row of a one-row table's matvec (the decode kernels:
 * matvec_fused where it takes the weights), into one[rows][m]. */
static void matvec_rows_one(struct be *vk, int t, struct belt_buffer *bw, uint64_t woff,
			    uint64_t wbytes, struct belt_buffer *bx, int k, int m, uint32_t rows,
			    float *one)
{
	struct belt_buffer *by = buf_new(vk, (uint64_t)m * 4);
	for (uint32_t r = 0; r < rows; r++) {
		struct belt_cmd c = cmd_new(vk, "matvec", t, "blk.0.ffn_up");
		bind(&c, bw, woff, wbytes, t);
		c.bind[0].ne[0] = k;
		c.bind[0].ne[1] = m;
		bind_rows(&c, bx, (uint64_t)r * k * 4, k, 1);
		bind_rows(&c, by, 0, m, 1);
		pi(&c, k);
		pi(&c, m);
		struct belt_table tab;
		table_rows(&tab, &c, 1, 256, NULL, 1, NULL);
		prepare(vk, &tab);
		run(vk, &tab, 7, 1, 0);
		buf_get(vk, by, 0, one + (size_t)r * m, (uint64_t)m * 4);
		vk->B->table_release(vk->ctx, &tab);
	}
	buf_free(vk, by);
}

static void check_matmul(struct be *vk, int t, int k, int m, uint32_t rows,
			 uint64_t woff, double rel)
{
	size_t rb;
	uint8_t *w = weights_new(t, k, m, &rb);
	float *x = malloc((size_t)rows * k * 4), *y = malloc((size_t)rows * m * 4);
	double *ref = malloc((size_t)rows * m * sizeof *ref);
	double *mag = malloc((size_t)rows * m * sizeof *mag);
	fill(x, (size_t)rows * k);
	matmul_ref(t, w, rb, x, k, m, (int)rows, ref, mag);
	/* Q4_0 and Q8_0 on the int8 matrix units: against x as they round
	 * it, within 2e-5 of sum |w x| (float sums of exact int32 ones) and
	 * the slack of near-ties */
	bool q8 = vk->cm8 && k % 32 == 0 && (t == BELT_TYPE_Q4_0 || t == BELT_TYPE_Q8_0);
	double *slack = calloc((size_t)rows * m, sizeof *slack);
	ck_assert(slack);
	double *fref = malloc((size_t)rows * m * sizeof *fref); /* x in float */
	ck_assert(fref);
	memcpy(fref, ref, (size_t)rows * m * sizeof *fref);
	if (q8)
		matmul_ref_q8(t, w, rb, x, k, m, (int)rows, ref, slack);
	uint64_t wbytes = rb * (size_t)m;
	struct belt_buffer *bw = buf_new(vk, woff + wbytes);
	buf_put(vk, bw, woff, w, wbytes);
	struct belt_buffer *bx = buf_from(vk, x, (uint64_t)rows * k * 4);
	struct belt_buffer *by = buf_new(vk, (uint64_t)rows * m * 4);
	struct belt_cmd c = matvec_rows_cmd(vk, t, "blk.0.ffn_up", bw, woff, wbytes, k, m, bx, by,
					    rows);
	struct belt_table tab;
	table_rows(&tab, &c, 1, 256, NULL, rows, NULL);
	prepare(vk, &tab);
	/* a pass of at most VK_FEW_ROWS (16) rows of a larger table runs the
	 * one-row table's kernel where it has one (backend setting few_rows,
	 * matvec_fused: x as int8 on devices that take it; with few_shared,
	 * several rows a workgroup, each weight loaded once for them): such
	 * passes must equal the one-row table exactly, row by row */
	float *one = malloc((size_t)rows * m * 4);
	ck_assert(one);
	/* where the backend takes matvec_fused (fusion.c vk_fusable_matvec):
	 * k a multiple of 8, the weights where 16-byte loads reach them (here
	 * at offset 0: Q8_0 and Q4_0 then in the GPU layout), the K-quants'
	 * k a multiple of 256 */
	bool kq = t != BELT_TYPE_F32 && t != BELT_TYPE_F16 && t != BELT_TYPE_BF16 &&
		  t != BELT_TYPE_Q8_0 && t != BELT_TYPE_Q4_0;
	bool fused = k % 8 == 0 && woff == 0 && (!kq || k % 256 == 0);
	matvec_rows_one(vk, t, bw, woff, wbytes, bx, k, m, rows, one);
	/* passes of n rows: each leaves rows n.. as they were (16: the
	 * few-row pass on the matrix units, where the device has them) */
	uint32_t cm_from = vk->cm8 ? few_mma_from() : 0;
	uint32_t ns[5] = {rows, rows / 2 + 1, 1, rows > 16 ? 16 : 1, rows};
	for (int p = 0; p < 5; p++) {
		uint32_t n = ns[p];
		float *poison = malloc((size_t)rows * m * 4);
		for (size_t i = 0; i < (size_t)rows * m; i++)
			poison[i] = 1e30f;
		buf_put(vk, by, 0, poison, (uint64_t)rows * m * 4);
		free(poison);
		/* the last pass: the command as a head, its last row only */
		c.head = p == 4;
		if (p == 4) {
			vk->B->table_release(vk->ctx, &tab);
			prepare(vk, &tab);
		}
		run(vk, &tab, 7, n, p == 4 ? BELT_RUN_HEAD_LAST_ONLY : 0);
		buf_get(vk, by, 0, y, (uint64_t)rows * m * 4);
		for (uint32_t r = 0; r < rows; r++)
			for (int i = 0; i < m; i++) {
				size_t at = (size_t)r * m + (size_t)i;
				bool ran = r < n && (p < 4 || r == n - 1);
				if (!ran) {
					ck_assert_msg(y[at] == 1e30f,
						      "matmul %s k=%d m=%d rows %u n %u: "
						      "row %u written",
						      belt_type_name(t), k, m, rows, n, r);
					continue;
				}
				/* the few-row pass: bit for bit the one-row table's
				 * where it runs matvec_fused; on the int8 matrix
				 * units (matvec_few_cm.comp, setting few_mma) the
				 * same blocks' terms added in another order */
				bool few = rows > 16 && n <= 16;
				bool few_cm = few && fused && q8 && cm_from && n >= cm_from;
				double tol = few_cm	   ? 1e-5 * mag[at] + 1e-6
					     : few && fused ? 0.0
					     : q8	   ? 2e-5 * mag[at] + slack[at] + 1e-6
							   : rel * mag[at] + 1e-6;
				/* (a few-row pass that matvec_fused cannot take
				 * runs the batched kernel) */
				bool vs_one = few && (fused || !q8);
				double want = vs_one ? one[at] : ref[at];
				ck_assert_msg(fabs(y[at] - want) <= tol,
					      "matmul %s k=%d m=%d off %d rows %u n %u: "
					      "row %u y[%d] %.9g vs %s %.9g (tol %.3g; x in "
					      "float %.9g, sum |w x| %.4g)",
					      belt_type_name(t), k, m, (int)woff, rows,
					      n, r, i, y[at], vs_one ? "one-row" : "ref", want, tol,
					      fref[at], mag[at]);
			}
	}
	/* SKIP_HEAD: nothing */
	buf_get(vk, by, 0, y, 4);
	float keep = y[0];
	run(vk, &tab, 0, rows, BELT_RUN_SKIP_HEAD);
	buf_get(vk, by, 0, y, 4);
	ck_assert(y[0] == keep);
	vk->B->table_release(vk->ctx, &tab);
	buf_free(vk, bw);
	buf_free(vk, bx);
	buf_free(vk, by);
	free(one);
	free(w);
	free(x);
	free(y);
	free(ref);
	free(mag);
	free(slack);
	free(fref);
}

/* F32 has no matrix-unit variant: float products on every device */
static void batched_matvec_cases(struct be *vk, int t, double rel)
{
	if (t == BELT_TYPE_F32)
		rel = 2e-5;
	if (!is_quant(t)) {
		/* tails of k (not a multiple of the 32-column step) and m */
		check_matmul(vk, t, 100, 67, 65, 0, rel);
		check_matmul(vk, t, 7, 3, 2, 0, rel);
		check_matmul(vk, t, 256, 130, 33, 0, rel);
		check_matmul(vk, t, 64, 64, 7, t == BELT_TYPE_F32 ? 4 : 2, rel);
	} else {
		check_matmul(vk, t, 96, 67, 65, 0, rel);  /* the GPU layout */
		check_matmul(vk, t, 96, 67, 65, 2, rel);  /* GGUF's */
		check_matmul(vk, t, 32, 1, 2, 0, rel);
		check_matmul(vk, t, 160, 130, 33, 18, rel);
	}
	/* several tiles each way, a partial last one */
	check_matmul(vk, t, 288, 300, 150, 0, rel);
	/* x over several of the few-row pass's tiles (shared memory holds
	 * fewer values of x a row when it holds several rows) */
	check_matmul(vk, t, 4096, 20, 17, 0, rel);
}

START_TEST(test_batched_matvec)
{
	rng_seed(50 + _i);
	on_both_paths(batched_matvec_cases, wtypes[_i]);
	/* the few-row pass one row of it a workgroup (few_shared 0 and
	 * few_xg 0: matvec_fused's main with BAT 1, which decode's leaves
	 * out) */
	setenv("BELT_VK_FEW_SHARED", "0", 1);
	setenv("BELT_VK_FEW_XG", "0", 1);
	struct be v1 = open_vk();
	unsetenv("BELT_VK_FEW_SHARED");
	unsetenv("BELT_VK_FEW_XG");
	check_matmul(&v1, wtypes[_i], 288, 300, 150, 0,
		     vk_coopmat_on() && wtypes[_i] != BELT_TYPE_F32 ? 1e-3 : 2e-5);
	be_close(&v1);
	if (_i || !vk_coopmat_on())
		return;
	/* a tile that needs more shared memory than the device has: an
	 * error at prepare naming the setting (F16: mm_tile; Q4_0 on the
	 * int8 products: mq_tile) */
	for (int q = 0; q < (vk_coopmat_int8_on() ? 2 : 1); q++) {
		int wt = q ? BELT_TYPE_Q4_0 : BELT_TYPE_F16;
		const char *key = q ? "mq_tile" : "mm_tile";
		const char *env = q ? "BELT_VK_MQ_TILE" : "BELT_VK_MM_TILE";
		setenv(env, "256x128x64x64", 1);
		struct be vk = open_vk();
		unsetenv(env);
		size_t rb;
		uint8_t *w = weights_new(wt, 64, 256, &rb);
		struct belt_buffer *bw = buf_from(&vk, w, rb * 256);
		struct belt_buffer *bx = buf_new(&vk, 64 * 4 * 8), *by = buf_new(&vk, 256 * 4 * 8);
		struct belt_cmd c = cmd_new(&vk, "matvec", wt, "blk.0.ffn_up");
		bind(&c, bw, 0, rb * 256, wt);
		c.bind[0].ne[0] = 64;
		c.bind[0].ne[1] = 256;
		bind_rows(&c, bx, 0, 64, 8);
		bind_rows(&c, by, 0, 256, 8);
		pi(&c, 64);
		pi(&c, 256);
		struct belt_table tab;
		table_rows(&tab, &c, 1, 256, NULL, 8, NULL);
		ck_assert_int_eq(vk.B->table_prepare(vk.ctx, &tab, err, sizeof err), -1);
		ck_assert_msg(strstr(err, "shared memory") && strstr(err, key), "%s", err);
		buf_free(&vk, bw);
		buf_free(&vk, bx);
		buf_free(&vk, by);
		free(w);
		be_close(&vk);
	}
}
END_TEST

/* The chained model of chain_model over activation buffers of BC_ROWS
 * rows, as a batched table or a one-row table (row 0 of each). */
#define BC_ROWS 65
#define BC_CTX 200
enum { BC_X, BC_XB, BC_Q, BC_K, BC_V, BC_AO, BC_HB, BC_HB2, BC_N };
static const int bc_n[BC_N] = {CM_DIM, CM_DIM, CM_DIM, CM_NKV * CM_HD,
			       CM_NKV * CM_HD, CM_DIM, CM_HID, CM_HID};

struct bchain {
	int wt;
	struct belt_buffer *W, *A, *att, *KV, *logits, *ids, *row_ids;
	uint64_t off[10], wbytes[9], ao[BC_N + 1], cache;
	struct belt_cmd c[24];
	int n_cmds;
};

static void bchain_open(struct be *b, int wt, struct bchain *bc)
{
	memset(bc, 0, sizeof *bc);
	bc->wt = wt;
	rng_seed(41 + wt);
	const int D = CM_DIM, H = CM_HID, NV = CM_VOCAB, KV = CM_NKV * CM_HD;
	static const int shape[9][2] = {{D, NV}, {D, D}, {D, KV}, {D, KV}, {D, D},
					{D, H},	 {D, H}, {H, D},  {D, NV}};
	uint8_t *w[9];
	for (int i = 0; i < 9; i++) {
		size_t rb;
		w[i] = weights_new(wt, shape[i][0], shape[i][1], &rb);
		bc->wbytes[i] = rb * (size_t)shape[i][1];
		bc->off[i + 1] = (bc->off[i] + bc->wbytes[i] + 31) / 32 * 32;
	}
	float norm[CM_DIM];
	for (int i = 0; i < D; i++)
		norm[i] = 1.0f + 0.5f * rng_f();
	bc->W = buf_new(b, bc->off[9] + D * 4);
	for (int i = 0; i < 9; i++) {
		buf_put(b, bc->W, bc->off[i], w[i], bc->wbytes[i]);
		free(w[i]);
	}
	buf_put(b, bc->W, bc->off[9], norm, D * 4);
	for (int i = 0; i < BC_N; i++)
		bc->ao[i + 1] = bc->ao[i] + (uint64_t)bc_n[i] * 4 * BC_ROWS;
	bc->A = buf_new(b, bc->ao[BC_N]);
	bc->att = buf_new(b, (uint64_t)CM_NH * BC_CTX * 4);
	bc->cache = (uint64_t)BC_CTX * KV * 4;
	bc->KV = buf_new(b, 2 * bc->cache);
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO,
				      (uint64_t)NV * 4 * BC_ROWS, &bc->logits,
				      err, sizeof err) == 0);
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO, (BC_CTX + 1) * 4,
				      &bc->ids, err, sizeof err) == 0);
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO, BC_ROWS * 4,
				      &bc->row_ids, err, sizeof err) == 0);
}

static void bchain_close(struct be *b, struct bchain *bc)
{
	struct belt_buffer *all[] = {bc->W, bc->A, bc->att, bc->KV,
				     bc->logits, bc->ids, bc->row_ids};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		buf_free(b, all[i]);
}

/* The table's commands over `rows` rows (1: a one-row table). */
static void bchain_table(struct be *b, struct bchain *bc, uint32_t rows,
			 struct belt_table *tab)
{
	const int D = CM_DIM, H = CM_HID, NV = CM_VOCAB, KV = CM_NKV * CM_HD;
	int wt = bc->wt, n = 0;
	struct belt_cmd *c = bc->c;
#define ACT(i) bc->A, bc->ao[i], bc_n[i], rows
#define MATVEC(wi, in, outb, k_, m_, lbl)                                  \
	do {                                                               \
		c[n] = cmd_new(b, "matvec", wt, lbl);                      \
		bind(&c[n], bc->W, bc->off[wi], bc->wbytes[wi], wt);       \
		bind_rows(&c[n], ACT(in));                                 \
		bind_rows(&c[n], ACT(outb));                               \
		pi(&c[n], k_);                                             \
		pi(&c[n], m_);                                             \
		n++;                                                       \
	} while (0)
#define NORM(lbl, in, head_)                                               \
	do {                                                               \
		c[n] = cmd_new(b, "rmsnorm", BELT_TYPE_ANY, lbl);          \
		bind_rows(&c[n], ACT(in));                                 \
		bind(&c[n], bc->W, bc->off[9], D * 4, BELT_TYPE_F32);      \
		bind_rows(&c[n], ACT(BC_XB));                              \
		pi(&c[n], D);                                              \
		pf(&c[n], 1e-5f);                                          \
		c[n].head = head_;                                         \
		n++;                                                       \
	} while (0)
#define ADD(lbl, o, a, b_, n_)                                              \
	do {                                                               \
		c[n] = cmd_new(b, "add", BELT_TYPE_ANY, lbl);              \
		bind_rows(&c[n], ACT(a));                                  \
		bind_rows(&c[n], ACT(b_));                                 \
		bind_rows(&c[n], ACT(o));                                  \
		pi(&c[n], n_);                                             \
		n++;                                                       \
	} while (0)
	c[n] = cmd_new(b, "embed", wt, "embed");
	c[n].patch = BELT_PATCH_TOKEN_OFFSET;
	bind(&c[n], bc->W, bc->off[0], bc->wbytes[0], wt);
	c[n].bind[0].ne[0] = D;
	c[n].bind[0].ne[1] = NV;
	bind(&c[n], bc->ids, 0, (BC_CTX + 1) * 4, BELT_TYPE_I32);
	bind_rows(&c[n], ACT(BC_X));
	pi(&c[n], D);
	n++;
	NORM("attn_norm", BC_X, false);
	MATVEC(1, BC_XB, BC_Q, D, D, "wq");
	MATVEC(2, BC_XB, BC_K, D, KV, "wk");
	MATVEC(3, BC_XB, BC_V, D, KV, "wv");
	c[n] = cmd_new(b, "rope_kv", BELT_TYPE_ANY, "rope");
	c[n].patch = BELT_PATCH_POSITION;
	bind_rows(&c[n], ACT(BC_Q));
	bind_rows(&c[n], ACT(BC_K));
	bind_rows(&c[n], ACT(BC_V));
	bind(&c[n], bc->KV, 0, bc->cache, BELT_TYPE_F32);
	bind(&c[n], bc->KV, bc->cache, bc->cache, BELT_TYPE_F32);
	pi(&c[n], CM_NH);
	pi(&c[n], CM_NKV);
	pi(&c[n], CM_HD);
	pi(&c[n], CM_HD);
	pf(&c[n], 10000.0f);
	n++;
	c[n] = cmd_new(b, "attention", BELT_TYPE_ANY, "attn");
	c[n].patch = BELT_PATCH_KV_LEN;
	bind_rows(&c[n], ACT(BC_Q));
	bind(&c[n], bc->KV, 0, bc->cache, BELT_TYPE_F32);
	bind(&c[n], bc->KV, bc->cache, bc->cache, BELT_TYPE_F32);
	bind_rows(&c[n], ACT(BC_AO));
	bind(&c[n], bc->att, 0, (uint64_t)CM_NH * BC_CTX * 4, BELT_TYPE_F32);
	pi(&c[n], CM_NH);
	pi(&c[n], CM_NKV);
	pi(&c[n], CM_HD);
	pi(&c[n], BC_CTX);
	pf(&c[n], 0.25f);
	n++;
	MATVEC(4, BC_AO, BC_XB, D, D, "wo");
	ADD("res1", BC_X, BC_X, BC_XB, D);
	NORM("ffn_norm", BC_X, false);
	MATVEC(5, BC_XB, BC_HB, D, H, "gate");
	MATVEC(6, BC_XB, BC_HB2, D, H, "up");
	c[n] = cmd_new(b, "silu_mul", BELT_TYPE_ANY, "silu");
	bind_rows(&c[n], ACT(BC_HB));
	bind_rows(&c[n], ACT(BC_HB2));
	bind_rows(&c[n], ACT(BC_HB));
	pi(&c[n], H);
	n++;
	MATVEC(7, BC_HB, BC_XB, H, D, "down");
	ADD("res2", BC_X, BC_X, BC_XB, D);
	NORM("out_norm", BC_X, true);
	c[n] = cmd_new(b, "matvec", wt, "output");
	bind(&c[n], bc->W, bc->off[8], bc->wbytes[8], wt);
	bind_rows(&c[n], ACT(BC_XB));
	bind_rows(&c[n], bc->logits, 0, NV, rows);
	pi(&c[n], D);
	pi(&c[n], NV);
	c[n].head = true;
	n++;
	c[n] = cmd_new(b, "argmax", BELT_TYPE_ANY, "argmax");
	c[n].patch = BELT_PATCH_ARGMAX_OUTPUT;
	bind_rows(&c[n], bc->logits, 0, NV, rows);
	if (rows > 1)
		bind(&c[n], bc->row_ids, 0, (uint64_t)rows * 4, BELT_TYPE_I32);
	else
		bind(&c[n], bc->ids, 0, (BC_CTX + 1) * 4, BELT_TYPE_I32);
	pi(&c[n], NV);
	c[n].head = true;
	n++;
#undef ACT
#undef MATVEC
#undef NORM
#undef ADD
	bc->n_cmds = n;
	table_rows(tab, c, (uint32_t)n, BC_CTX, bc->ids, rows, bc->row_ids);
	prepare(b, tab);
}

/* Per position of the one-row reference, or per row of a pass. */
struct bc_out {
	float logits[CM_VOCAB];
	float x[CM_DIM];
	int32_t id;
};

/* The one-row table at position pos for token tok (after the positions
 * before it): its logits, x and argmax. */
static void bc_one(struct be *b, struct bchain *bc, struct belt_table *one,
		   uint32_t pos, int32_t tok, struct bc_out *o)
{
	buf_put(b, bc->ids, (uint64_t)pos * 4, &tok, 4);
	run(b, one, pos, 1, 0);
	buf_get(b, bc->logits, 0, o->logits, sizeof o->logits);
	buf_get(b, bc->A, bc->ao[BC_X], o->x, sizeof o->x);
	buf_get(b, bc->ids, (uint64_t)(pos + 1) * 4, &o->id, 4);
}

/* Row r of the last pass. */
static void bc_row(struct be *b, struct bchain *bc, uint32_t r, struct bc_out *o)
{
	buf_get(b, bc->logits, (uint64_t)r * CM_VOCAB * 4, o->logits, sizeof o->logits);
	buf_get(b, bc->A, bc->ao[BC_X] + (uint64_t)r * CM_DIM * 4, o->x, sizeof o->x);
	buf_get(b, bc->row_ids, (uint64_t)r * 4, &o->id, 4);
}

/* got (a pass's row) against want (the one-row path): logits and x
 * within 1e-3 of 1 + the largest |value| of the reference's (the errors
 * of float sums in another order scale with the terms, which this
 * chain's random weights make large next to some results; measured: 2.5e-5
 * at worst, Q8_0); the same argmax unless the reference's two best
 * logits are closer than twice that. */
/* the largest |v[i]| */
static float amax(const float *v, int n)
{
	float m = 0;
	for (int i = 0; i < n; i++)
		m = fmaxf(m, fabsf(v[i]));
	return m;
}

/* bc_compare's bound for vk's batched products: 1e-3 for float products.
 * On matrix units x and the weights are rounded to float16 at every
 * product (2^-11 of each value), and this chain (random weights, sharp
 * attention) amplifies that from layer to layer and position to position
 * (measured on the H100: 6% on one element of x at position 28), so there
 * the bound is on the relative RMS difference of the logits and of x:
 * 0.1, where a row computed from another row's or position's inputs
 * differs by about 1.4 (the worst seen is printed). */
static float bc_tol(const struct be *vk)
{
	return vk->cm ? 0.1f : 1e-3f;
}

static double bc_worst_rms; /* matrix units: the worst relative RMS */

/* |a - b| / |b|, as 2-norms */
static double rel_rms(const float *a, const float *b, int n)
{
	double d = 0, r = 0;
	for (int i = 0; i < n; i++) {
		d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
		r += (double)b[i] * b[i];
	}
	return sqrt(d / (r + 1e-30));
}

static void bc_compare(const struct bc_out *got, const struct bc_out *want,
		       const char *what, int wt, uint32_t pos, float tol)
{
	if (tol > 1e-3f) {
		double rl = rel_rms(got->logits, want->logits, CM_VOCAB);
		double rx = rel_rms(got->x, want->x, CM_DIM);
		bc_worst_rms = fmax(bc_worst_rms, fmax(rl, rx));
		ck_assert_msg(rl <= tol && rx <= tol,
			      "%s %s pos %u: relative RMS from the one-row path: "
			      "logits %.3g, x %.3g (matrix units)",
			      what, belt_type_name(wt), pos, rl, rx);
		return;
	}
	float lm = amax(want->logits, CM_VOCAB), xm = amax(want->x, CM_DIM);
	for (int i = 0; i < CM_VOCAB; i++)
		ck_assert_msg(fabsf(got->logits[i] - want->logits[i]) <= tol * (1 + lm),
			      "%s %s pos %u: logit %d: %.9g vs one-row %.9g", what,
			      belt_type_name(wt), pos, i, got->logits[i],
			      want->logits[i]);
	for (int i = 0; i < CM_DIM; i++)
		ck_assert_msg(fabsf(got->x[i] - want->x[i]) <= tol * (1 + xm),
			      "%s %s pos %u: x[%d]: %.9g vs one-row %.9g", what,
			      belt_type_name(wt), pos, i, got->x[i], want->x[i]);
	float best = -INFINITY, second = -INFINITY;
	for (int i = 0; i < CM_VOCAB; i++) {
		float v = want->logits[i];
		if (v > best) {
			second = best;
			best = v;
		} else if (v > second) {
			second = v;
		}
	}
	if (best - second > 2 * tol * (1 + lm))
		ck_assert_msg(got->id == want->id,
			      "%s %s pos %u: argmax %d vs one-row %d", what,
			      belt_type_name(wt), pos, got->id, want->id);
}

/* A batched table against the same table run one position at a time:
 * passes of 1, 2, 7, 33 and 65 rows in a table of 65 (and of 7, 2), the
 * head for every row; then HEAD_LAST_ONLY (only the last row's logits
 * and row output written) and SKIP_HEAD (none). Q4_0 and Q8_0 with float
 * x on both paths (BELT_VK_Q8X=0: the one-row matvecs would otherwise
 * take x as int8, the batched product does not). */
static void check_batched(struct be *vkp, int wt)
{
	struct be vk = *vkp;
	struct bchain bc;
	bchain_open(&vk, wt, &bc);
	struct belt_table one, batch;
	static const uint32_t table_rows_[3] = {BC_ROWS, 7, 2};
	static const uint32_t passes[3][6] = {
		{1, 2, 7, 33, 65, 0}, {7, 2, 1, 5, 0, 0}, {2, 1, 2, 0, 0, 0}};
	int32_t tok[BC_CTX];
	for (int i = 0; i < BC_CTX; i++)
		tok[i] = (int32_t)(rng_u32() % CM_VOCAB);
	/* the reference: the one-row table over the first 120 positions */
	enum { NREF = 120 };
	struct bc_out *ref = calloc(NREF, sizeof *ref), got;
	bchain_table(&vk, &bc, 1, &one);
	for (uint32_t p = 0; p < NREF; p++)
		bc_one(&vk, &bc, &one, p, tok[p], &ref[p]);
	vk.B->table_release(vk.ctx, &one);
	for (int ti = 0; ti < 3; ti++) {
		uint32_t rows = table_rows_[ti];
		bchain_table(&vk, &bc, rows, &batch);
		buf_put(&vk, bc.ids, 0, tok, sizeof tok);
		uint32_t pos = 0;
		for (int p = 0; p < 6 && passes[ti][p]; p++) {
			uint32_t n = passes[ti][p];
			run(&vk, &batch, pos, n, 0);
			for (uint32_t r = 0; r < n; r++) {
				bc_row(&vk, &bc, r, &got);
				bc_compare(&got, &ref[pos + r], "batched", wt, pos + r,
					   bc_tol(&vk));
			}
			pos += n;
		}
		/* the head for the last row only, then for none */
		uint32_t n = rows < 5 ? rows : 5;
		float poison[CM_VOCAB * 5];
		int32_t pid[5] = {-7, -7, -7, -7, -7};
		for (int i = 0; i < CM_VOCAB * 5; i++)
			poison[i] = 1e30f;
		for (int f = 0; f < 2; f++) {
			buf_put(&vk, bc.logits, 0, poison, (uint64_t)n * CM_VOCAB * 4);
			buf_put(&vk, bc.row_ids, 0, pid, (uint64_t)n * 4);
			pos -= n;
			run(&vk, &batch, pos, n,
			    f ? BELT_RUN_SKIP_HEAD : BELT_RUN_HEAD_LAST_ONLY);
			for (uint32_t r = 0; r < n; r++) {
				bc_row(&vk, &bc, r, &got);
				if (!f && r == n - 1) {
					bc_compare(&got, &ref[pos + r], "head_last", wt,
						   pos + r, bc_tol(&vk));
					continue;
				}
				ck_assert_msg(got.logits[0] == 1e30f && got.id == -7,
					      "%s %s rows %u: row %u's head ran",
					      f ? "skip_head" : "head_last",
					      belt_type_name(wt), rows, r);
				/* the body ran for every row */
				float xm = amax(ref[pos + r].x, CM_DIM);
				for (int i = 0; i < CM_DIM; i++)
					ck_assert(fabsf(got.x[i] - ref[pos + r].x[i]) <=
						  bc_tol(&vk) * (1 + xm));
			}
			pos += n;
		}
		vk.B->table_release(vk.ctx, &batch);
	}
	free(ref);
	if (vk.cm)
		fprintf(stderr, "batched %s on matrix units: worst relative RMS "
			"from the one-row path %.3g\n", belt_type_name(wt), bc_worst_rms);
	bchain_close(&vk, &bc);
}

/* on_both_paths' cases: the tolerances follow vk->cm */
static void batched_cases(struct be *vk, int t, double rel)
{
	(void)rel;
	check_batched(vk, t);
}

/* both on the matrix units (where the device has them) and on the plain
 * shaders, with float x in the one-row table's matvecs */
START_TEST(test_batched)
{
	/* x in float on both paths: the chain amplifies its rounding
	 * (the int8 products are held to their own reference by
	 * test_batched_matvec) */
	setenv("BELT_VK_Q8X", "0", 1);
	setenv("BELT_VK_COOPMAT_INT8", "0", 1);
	on_both_paths(batched_cases, wtypes[_i]);
	unsetenv("BELT_VK_Q8X");
	unsetenv("BELT_VK_COOPMAT_INT8");
}
END_TEST

/* A tree of drafted rows (BELT_RUN_TREE): each row's argmax and logits
 * are those of the one-row path that runs the row's ancestors and then
 * the row, each at its depth after the cached prefix. Two trees, the
 * second past a step of the attention's positions. */
static void check_tree(struct be *vkp, int wt)
{
	struct be vk = *vkp;
	struct bchain bc;
	bchain_open(&vk, wt, &bc);
	static const int32_t par[2][9] = {{-1, 0, 0, 1, 2, -1, -1, -1, -1},
					  {-1, 0, 1, 0, 3, 2, -1, 6, 1}};
	static const uint32_t nrows[2] = {5, 9}, prefix[2] = {6, 29};
	for (int tr = 0; tr < 2; tr++) {
		uint32_t P = prefix[tr], n = nrows[tr];
		int32_t tok[64];
		for (int i = 0; i < 64; i++)
			tok[i] = (int32_t)(rng_u32() % CM_VOCAB);
		struct belt_table one, batch;
		bchain_table(&vk, &bc, BC_ROWS, &batch);
		buf_put(&vk, bc.ids, 0, tok, (P + n) * 4);
		run(&vk, &batch, 0, P, BELT_RUN_SKIP_HEAD);
		batch.parent = par[tr];
		run(&vk, &batch, P, n, BELT_RUN_TREE);
		batch.parent = NULL;
		struct bc_out got[9], want;
		for (uint32_t r = 0; r < n; r++)
			bc_row(&vk, &bc, r, &got[r]);
		vk.B->table_release(vk.ctx, &batch);
		bchain_table(&vk, &bc, 1, &one);
		for (uint32_t r = 0; r < n; r++) {
			int32_t path[9];
			int d = 0;
			for (int32_t a = (int32_t)r; a >= 0; a = par[tr][a])
				path[d++] = a;
			for (int i = 0; i < d; i++) /* root first */
				bc_one(&vk, &bc, &one, P + (uint32_t)i,
				       tok[P + (uint32_t)path[d - 1 - i]], &want);
			bc_compare(&got[r], &want, "tree", wt, P + r, bc_tol(&vk));
		}
		vk.B->table_release(vk.ctx, &one);
		/* a parent after its row is refused */
		bchain_table(&vk, &bc, BC_ROWS, &batch);
		int32_t bad[3] = {-1, 2, 0};
		batch.parent = bad;
		ck_assert_int_eq(vk.B->table_run(vk.ctx, &batch, P, 3, BELT_RUN_TREE,
						 err, sizeof err),
				 -1);
		ck_assert_msg(strstr(err, "parent"), "%s", err);
		vk.B->table_release(vk.ctx, &batch);
	}
	if (vk.cm)
		fprintf(stderr, "tree %s on matrix units: worst relative RMS from "
			"the one-row path %.3g\n", belt_type_name(wt), bc_worst_rms);
	bchain_close(&vk, &bc);
}

static void tree_cases(struct be *vk, int t, double rel)
{
	(void)rel;
	check_tree(vk, t);
}

START_TEST(test_tree)
{
	/* x in float on both paths: the chain amplifies its rounding
	 * (the int8 products are held to their own reference by
	 * test_batched_matvec) */
	setenv("BELT_VK_Q8X", "0", 1);
	setenv("BELT_VK_COOPMAT_INT8", "0", 1);
	on_both_paths(tree_cases, wtypes[_i]);
	unsetenv("BELT_VK_Q8X");
	unsetenv("BELT_VK_COOPMAT_INT8");
}
END_TEST

/* Patches drive the kernels' per-row values: with patch none, embed reads
 * token_ids[0], rope_kv rotates at position 0 (q and k unchanged) and
 * writes cache slot 0, attention sees no positions (zeros, as the CPU
 * backend); with their patches, the run's positions. In a one-row table
 * and in a batched one. */
START_TEST(test_patch_none)
{
	struct be vk = open_vk();
	rng_seed(60);
	const int NH = 2, HD = 8, QN = NH * HD, NV = 5, D = 16, CTX = 12;
	const uint32_t R = 3, pos = 5;
	float we[5 * 16], q[3 * 16], k[3 * 16], v[3 * 16];
	fill(we, sizeof we / 4);
	fill(q, sizeof q / 4);
	fill(v, sizeof v / 4);
	for (int r = 0; r < 3; r++) /* equal rows: all write slot 0 */
		for (int i = 0; i < QN; i++)
			k[r * QN + i] = (float)(i + 1) * 0.25f;
	int32_t ids[13] = {3, 1, 4, 1, 0, 2, 4, 3, 2, 1, 0, 4, 2};
	for (int pt = 0; pt < 2; pt++) /* 0: none, 1: the ops' patches */
		for (uint32_t rows = 1; rows <= R; rows += R - 1) {
			struct belt_buffer *bw = buf_from(&vk, we, sizeof we);
			struct belt_buffer *bid = buf_from(&vk, ids, sizeof ids);
			struct belt_buffer *bo = buf_new(&vk, (uint64_t)R * D * 4);
			struct belt_buffer *bq = buf_from(&vk, q, sizeof q);
			struct belt_buffer *bk = buf_from(&vk, k, sizeof k);
			struct belt_buffer *bv = buf_from(&vk, v, sizeof v);
			struct belt_buffer *ba = buf_new(&vk, (uint64_t)R * QN * 4);
			uint64_t cache = (uint64_t)CTX * QN * 4;
			struct belt_buffer *kv = buf_new(&vk, 2 * cache);
			struct belt_buffer *att = buf_new(&vk, (uint64_t)NH * CTX * 4);
			struct belt_cmd c[3];
			c[0] = cmd_new(&vk, "embed", BELT_TYPE_F32, "embed");
			bind(&c[0], bw, 0, sizeof we, BELT_TYPE_F32);
			c[0].bind[0].ne[0] = D;
			c[0].bind[0].ne[1] = NV;
			bind(&c[0], bid, 0, sizeof ids, BELT_TYPE_I32);
			bind_rows(&c[0], bo, 0, D, rows);
			pi(&c[0], D);
			c[1] = cmd_new(&vk, "rope_kv", BELT_TYPE_ANY, "rope");
			bind_rows(&c[1], bq, 0, QN, rows);
			bind_rows(&c[1], bk, 0, QN, rows);
			bind_rows(&c[1], bv, 0, QN, rows);
			bind(&c[1], kv, 0, cache, BELT_TYPE_F32);
			bind(&c[1], kv, cache, cache, BELT_TYPE_F32);
			pi(&c[1], NH);
			pi(&c[1], NH);
			pi(&c[1], HD);
			pi(&c[1], HD);
			pf(&c[1], 10000.0f);
			c[2] = cmd_new(&vk, "attention", BELT_TYPE_ANY, "attn");
			bind_rows(&c[2], bq, 0, QN, rows);
			bind(&c[2], kv, 0, cache, BELT_TYPE_F32);
			bind(&c[2], kv, cache, cache, BELT_TYPE_F32);
			bind_rows(&c[2], ba, 0, QN, rows);
			bind(&c[2], att, 0, (uint64_t)NH * CTX * 4, BELT_TYPE_F32);
			pi(&c[2], NH);
			pi(&c[2], NH);
			pi(&c[2], HD);
			pi(&c[2], CTX);
			pf(&c[2], 0.5f);
			for (int i = 0; i < 3; i++)
				c[i].patch = pt ? op_patch(c[i].kernel->op) : BELT_PATCH_NONE;
			struct belt_table tab;
			table_rows(&tab, c, 3, CTX, bid, rows, NULL);
			prepare(&vk, &tab);
			run(&vk, &tab, pos, rows, 0);
			float o[3 * 16], qo[3 * 16], kc[12 * 16], ao[3 * 16];
			buf_get(&vk, bo, 0, o, (uint64_t)rows * D * 4);
			buf_get(&vk, bq, 0, qo, (uint64_t)rows * QN * 4);
			buf_get(&vk, kv, 0, kc, cache);
			buf_get(&vk, ba, 0, ao, (uint64_t)rows * QN * 4);
			for (uint32_t r = 0; r < rows; r++) {
				/* one-row runs of several positions: the last */
				uint32_t at = rows > 1 ? pos + r : pos + rows - 1;
				int32_t id = pt ? ids[at] : ids[0];
				ck_assert_msg(!memcmp(&o[r * D], &we[id * D], D * 4),
					      "patch %d rows %u: embed row %u", pt,
					      rows, r);
				bool same = !memcmp(&qo[r * QN], &q[r * QN], QN * 4);
				ck_assert_msg(same == !pt,
					      "patch %d rows %u: q row %u %s", pt,
					      rows, r, same ? "not rotated" : "rotated");
				uint32_t slot = pt ? at : 0;
				ck_assert_msg(!memcmp(&kc[slot * QN], &k[r * QN], QN * 4) || pt,
					      "patch none rows %u: cache slot 0", rows);
				bool zero = true;
				for (int i = 0; i < QN; i++)
					zero &= ao[r * QN + i] == 0.0f;
				ck_assert_msg(zero == !pt,
					      "patch %d rows %u: attention row %u %s", pt,
					      rows, r, zero ? "zeros" : "not zeros");
			}
			if (!pt) /* nothing at the run's slots */
				for (uint32_t s = pos; s < pos + rows; s++)
					for (int i = 0; i < QN; i++)
						ck_assert(kc[s * QN + i] == 0.0f);
			vk.B->table_release(vk.ctx, &tab);
			struct belt_buffer *all[] = {bw, bid, bo, bq, bk, bv, ba, kv, att};
			for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
				buf_free(&vk, all[i]);
		}
	be_close(&vk);
}
END_TEST

/* A batched command whose row bindings exceed one descriptor range on
 * lavapipe (maxStorageBufferRange 128 MiB): the head's matvec and argmax
 * over 65 rows of 540,000 logits (140 MB) run as dispatches over ranges of
 * rows. Every row's argmax, and a sample of its logits, against the
 * double reference; a partial pass and the last row's head alone. */
/* A batched table of cmds[0..nc) over rows rows, one pass of its first
 * n rows at position 3, then bytes of buffer from into out. */
static void pass_get(struct be *vk, struct belt_cmd *cmds, uint32_t nc, uint32_t rows,
		     uint32_t n, struct belt_buffer *from, float *out, uint64_t bytes)
{
	struct belt_table tab;
	table_rows(&tab, cmds, nc, 256, NULL, rows, NULL);
	prepare(vk, &tab);
	run(vk, &tab, 3, n, 0);
	buf_get(vk, from, 0, out, bytes);
	vk->B->table_release(vk->ctx, &tab);
}

/* gate, up, silu_mul (or gelu_mul), down of one x in a batched pass, y = the down
 * product's rows (n rows run): on the int8 matrix units the down
 * product's quantize_rows computes silu_mul's out itself and the pass
 * leaves silu_mul out (the mq_glu setting, backend.c glu_source), but
 * for a few-row pass, whose down product reads out. */
static void glu_chain(struct be *vk, int t, const char *glu, const uint8_t *const w[3],
		      size_t rb_k, size_t rb_f, const float *x, int k, int f, uint32_t rows,
		      uint32_t n, float *y)
{
	struct belt_buffer *bw[3], *bx = buf_from(vk, x, (uint64_t)rows * k * 4);
	struct belt_buffer *bg = buf_new(vk, (uint64_t)rows * f * 4);
	struct belt_buffer *bu = buf_new(vk, (uint64_t)rows * f * 4);
	struct belt_buffer *by = buf_new(vk, (uint64_t)rows * k * 4);
	struct belt_cmd c[4];
	for (int h = 0; h < 3; h++) {
		uint64_t bytes = h < 2 ? rb_k * (size_t)f : rb_f * (size_t)k;
		bw[h] = buf_from(vk, w[h], bytes);
		c[h < 2 ? h : 3] = matvec_rows_cmd(vk, t, h == 0 ? "gate" : h == 1 ? "up" : "down",
						   bw[h], 0, bytes, h < 2 ? k : f, h < 2 ? f : k,
						   h < 2 ? bx : bg, h == 0 ? bg : h == 1 ? bu : by, rows);
	}
	c[2] = rows_op_cmd(vk, glu, bg, bu, bg, f, rows);
	pass_get(vk, c, 4, rows, n, by, y, (uint64_t)n * k * 4);
	for (int h = 0; h < 3; h++)
		buf_free(vk, bw[h]);
	buf_free(vk, bx);
	buf_free(vk, bg);
	buf_free(vk, bu);
	buf_free(vk, by);
}

/* The down product's x computed by its quantize_rows equals silu_mul's
 * and gelu_mul's: the same y, bit for bit, with mq_glu on and off, in
 * whole passes, passes of some rows and few-row passes (Q4_0, Q8_0; of
 * 14 rows on the int8 matrix units where the device has them, few_mma);
 * and with the few-row kernels reading x as int8 from memory for every
 * k (few_xg 32: their quantize_rows computes the silu_mul then). */
START_TEST(test_glu_pre)
{
	static const int types[2] = {BELT_TYPE_Q4_0, BELT_TYPE_Q8_0};
	int t = types[_i % 2];
	const char *glu = _i < 2 ? "silu_mul" : "gelu_mul";
	rng_seed(90 + _i);
	const int k = 128, f = 352;
	const uint32_t rows = 40;
	size_t rb_k, rb_f;
	uint8_t *w[3];
	w[0] = weights_new(t, k, f, &rb_k);
	w[1] = weights_new(t, k, f, &rb_k);
	w[2] = weights_new(t, f, k, &rb_f);
	float *x = malloc((size_t)rows * k * 4);
	float *y[3] = {malloc((size_t)rows * k * 4), malloc((size_t)rows * k * 4),
		       malloc((size_t)rows * k * 4)};
	ck_assert(x && y[0] && y[1] && y[2]);
	fill(x, (size_t)rows * k);
	const uint32_t ns[4] = {rows, 21, 5, 14};
	for (int p = 0; p < 4; p++) {
		for (int g = 0; g < 3; g++) {
			struct be vk = g == 1 ? open_vk()
				       : g	  ? open_vk_set("BELT_VK_FEW_XG", "32")
						  : open_vk_set("BELT_VK_MQ_GLU", "0");
			glu_chain(&vk, t, glu, (const uint8_t *const *)w, rb_k, rb_f, x, k, f,
				  rows, ns[p], y[g]);
			be_close(&vk);
		}
		for (size_t i = 0; i < (size_t)ns[p] * k; i++)
			for (int g = 1; g < 3; g++)
				ck_assert_msg(y[0][i] == y[g][i],
					      "%s %s in quantize_rows%s, pass of %u rows: y[%zu] "
					      "%.9g, %.9g with it run",
					      belt_type_name(t), glu, g == 2 ? " (few_xg 32)" : "",
					      ns[p], i, y[g][i], y[0][i]);
	}
	for (int h = 0; h < 3; h++)
		free(w[h]);
	free(x);
	for (int g = 0; g < 3; g++)
		free(y[g]);
}
END_TEST

/* r += W x for n rows of a batched pass (llama's residual adds): on the
 * int8 matrix units the product adds into r itself and the pass leaves
 * the add out (the mq_add setting, backend.c add_sink), but for a
 * few-row pass that runs the product's few-row kernel. r after the
 * pass into out. */
static void add_chain(struct be *vk, int t, const uint8_t *w, size_t rb, const float *x,
		      const float *r, int k, int m, uint32_t rows, uint32_t n, float *out)
{
	struct belt_buffer *bw = buf_from(vk, w, rb * (size_t)m);
	struct belt_buffer *bx = buf_from(vk, x, (uint64_t)rows * k * 4);
	struct belt_buffer *by = buf_new(vk, (uint64_t)rows * m * 4);
	struct belt_buffer *br = buf_from(vk, r, (uint64_t)rows * m * 4);
	struct belt_buffer *bz = buf_new(vk, (uint64_t)rows * m * 4);
	struct belt_cmd c[3];
	c[0] = matvec_rows_cmd(vk, t, "wo", bw, 0, rb * (size_t)m, k, m, bx, by, rows);
	c[1] = rows_op_cmd(vk, "add", br, by, br, m, rows);
	/* y overwritten before the product writes it again: dead after the
	 * add, which the product may then do */
	c[2] = rows_op_cmd(vk, "add", bz, bz, by, m, rows);
	pass_get(vk, c, 3, rows, n, br, out, (uint64_t)rows * m * 4);
	buf_free(vk, bw);
	buf_free(vk, bx);
	buf_free(vk, by);
	buf_free(vk, br);
	buf_free(vk, bz);
}

/* The add done by the product equals the add run: r bit for bit with
 * mq_add on and off, in whole passes, passes of some rows (the rows past
 * them as they were) and few-row passes (Q4_0, Q8_0; of 14 rows on the
 * int8 matrix units where the device has them, few_mma); and by the
 * few-row kernel reading x as int8 from memory (few_xg 32). */
START_TEST(test_add_sink)
{
	static const int types[2] = {BELT_TYPE_Q4_0, BELT_TYPE_Q8_0};
	int t = types[_i];
	rng_seed(95 + _i);
	const int k = 160, m = 200;
	const uint32_t rows = 40;
	size_t rb;
	uint8_t *w = weights_new(t, k, m, &rb);
	float *x = malloc((size_t)rows * k * 4), *r = malloc((size_t)rows * m * 4);
	float *out[3] = {malloc((size_t)rows * m * 4), malloc((size_t)rows * m * 4),
			 malloc((size_t)rows * m * 4)};
	ck_assert(x && r && out[0] && out[1] && out[2]);
	fill(x, (size_t)rows * k);
	fill(r, (size_t)rows * m);
	const uint32_t ns[4] = {rows, 21, 5, 14};
	for (int p = 0; p < 4; p++) {
		for (int g = 0; g < 3; g++) {
			struct be vk = g == 1 ? open_vk()
				       : g	  ? open_vk_set("BELT_VK_FEW_XG", "32")
						  : open_vk_set("BELT_VK_MQ_ADD", "0");
			add_chain(&vk, t, w, rb, x, r, k, m, rows, ns[p], out[g]);
			be_close(&vk);
		}
		for (size_t i = 0; i < (size_t)rows * m; i++)
			for (int g = 1; g < 3; g++) {
				ck_assert_msg(out[0][i] == out[g][i],
					      "%s add in the product%s, pass of %u rows: r[%zu] "
					      "%.9g, %.9g with the add run",
					      belt_type_name(t), g == 2 ? " (few_xg 32)" : "", ns[p],
					      i, out[g][i], out[0][i]);
				if (i >= (size_t)ns[p] * m)
					ck_assert(out[g][i] == r[i]);
			}
	}
	free(w);
	free(x);
	free(r);
	for (int g = 0; g < 3; g++)
		free(out[g]);
}
END_TEST

/* rmsnorm of x into xn, two matvecs of xn (llama's q and k), then an
 * add that overwrites xn (so that nothing reads it after them): a
 * batched pass of n of rows rows, the two products' rows into yq, yk. */
static void norm_chain_xg(struct be *vk, int t, const uint8_t *wq, const uint8_t *wk, size_t rb,
			  const float *nw, const float *x, int k, int mq, int mk, uint32_t rows,
			  uint32_t n, float *yq, float *yk)
{
	struct belt_buffer *bq = buf_from(vk, wq, rb * (size_t)mq);
	struct belt_buffer *bk = buf_from(vk, wk, rb * (size_t)mk);
	struct belt_buffer *bn = buf_from(vk, nw, (uint64_t)k * 4);
	struct belt_buffer *bx = buf_from(vk, x, (uint64_t)rows * k * 4);
	struct belt_buffer *bxn = buf_new(vk, (uint64_t)rows * k * 4);
	struct belt_buffer *byq = buf_new(vk, (uint64_t)rows * mq * 4);
	struct belt_buffer *byk = buf_new(vk, (uint64_t)rows * mk * 4);
	struct belt_cmd c[4];
	c[0] = cmd_new(vk, "rmsnorm", BELT_TYPE_ANY, "attn_norm");
	bind_rows(&c[0], bx, 0, k, rows);
	bind(&c[0], bn, 0, (uint64_t)k * 4, BELT_TYPE_F32);
	bind_rows(&c[0], bxn, 0, k, rows);
	pi(&c[0], k);
	pf(&c[0], 1e-5f);
	c[1] = matvec_rows_cmd(vk, t, "wq", bq, 0, rb * (size_t)mq, k, mq, bxn, byq, rows);
	c[2] = matvec_rows_cmd(vk, t, "wk", bk, 0, rb * (size_t)mk, k, mk, bxn, byk, rows);
	c[3] = rows_op_cmd(vk, "add", bx, bx, bxn, k, rows);
	struct belt_table tab;
	table_rows(&tab, c, 4, 256, NULL, rows, NULL);
	prepare(vk, &tab);
	run(vk, &tab, 3, n, 0);
	buf_get(vk, byq, 0, yq, (uint64_t)n * mq * 4);
	buf_get(vk, byk, 0, yk, (uint64_t)n * mk * 4);
	vk->B->table_release(vk->ctx, &tab);
	struct belt_buffer *all[] = {bq, bk, bn, bx, bxn, byq, byk};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		buf_free(vk, all[i]);
}

/* A few-row pass whose products read x as int8 from memory (few_xg),
 * their quantize_rows computing the rmsnorm before them (which the pass
 * then leaves out): yq and yk bit for bit those of the pass that runs the
 * rmsnorm and stages x in shared memory (few_xg 0); rows of 4160 (two of
 * rmsnorm's chunks of 4096, a partial workgroup of quantize_rows). */
START_TEST(test_norm_xg)
{
	static const int types[2] = {BELT_TYPE_Q4_0, BELT_TYPE_Q8_0};
	int t = types[_i];
	rng_seed(97 + _i);
	const int k = 4160, mq = 72, mk = 40;
	const uint32_t rows = 24;
	size_t rb;
	uint8_t *wq = weights_new(t, k, mq, &rb), *wk = weights_new(t, k, mk, &rb);
	float *nw = malloc((size_t)k * 4), *x = malloc((size_t)rows * k * 4);
	float *yq[2] = {malloc((size_t)rows * mq * 4), malloc((size_t)rows * mq * 4)};
	float *yk[2] = {malloc((size_t)rows * mk * 4), malloc((size_t)rows * mk * 4)};
	ck_assert(nw && x && yq[0] && yq[1] && yk[0] && yk[1]);
	fill(nw, (size_t)k);
	fill(x, (size_t)rows * k);
	const uint32_t ns[2] = {5, 16};
	for (int p = 0; p < 2; p++) {
		for (int g = 0; g < 2; g++) {
			/* matvec_fused's XG kernel (the matrix units' sums
			 * are not bit for bit the staged path's) */
			setenv("BELT_VK_FEW_MMA", "0", 1);
			struct be vk = open_vk_set("BELT_VK_FEW_XG", g ? "32" : "0");
			unsetenv("BELT_VK_FEW_MMA");
			norm_chain_xg(&vk, t, wq, wk, rb, nw, x, k, mq, mk, rows, ns[p], yq[g],
				      yk[g]);
			be_close(&vk);
		}
		for (size_t i = 0; i < (size_t)ns[p] * mq; i++)
			ck_assert_msg(yq[0][i] == yq[1][i],
				      "%s rmsnorm in quantize_rows, pass of %u rows: q[%zu] %.9g, "
				      "%.9g with it run",
				      belt_type_name(t), ns[p], i, yq[1][i], yq[0][i]);
		for (size_t i = 0; i < (size_t)ns[p] * mk; i++)
			ck_assert_msg(yk[0][i] == yk[1][i],
				      "%s rmsnorm in quantize_rows, pass of %u rows: k[%zu] %.9g, "
				      "%.9g with it run",
				      belt_type_name(t), ns[p], i, yk[1][i], yk[0][i]);
	}
	free(wq);
	free(wk);
	free(nw);
	free(x);
	for (int g = 0; g < 2; g++) {
		free(yq[g]);
		free(yk[g]);
	}
}
END_TEST

/* Gemma's norms as the backend fuses them (fusion.c): embed then scale,
 * rmsnorm of y then its add into r then rmsnorm of r (rmsnorm.comp -DADD
 * -DNORM2, in place or into a buffer of its own) in a one-row table or a
 * batched table of rows rows, token by token from position 0 (one-row)
 * or one pass of them: r and the last norm's out after the last token. */
enum { NF_N = 96, NF_VOCAB = 7, NF_ROWS = 5 };
static void norm_chain(struct be *b, int et, const uint8_t *emb, size_t erb, const float *w12,
		       uint32_t rows, bool in_place, float *r_out, float *o_out)
{
	const int n = NF_N;
	const uint32_t T = NF_ROWS; /* tokens (one-row) or rows of the pass */
	uint64_t wn = (erb * NF_VOCAB + 31) / 32 * 32; /* the norms' weights */
	struct belt_buffer *bw = buf_new(b, wn + 2 * n * 4);
	buf_put(b, bw, 0, emb, erb * NF_VOCAB);
	buf_put(b, bw, wn, w12, 2 * n * 4);
	int32_t tok[NF_ROWS + 1] = {3, 0, 6, 2, 5, 1};
	struct belt_buffer *ids = NULL;
	ck_assert(b->B->buffer_create(b->ctx, BELT_BUFFER_IO, sizeof tok, &ids, err,
				      sizeof err) == 0);
	buf_put(b, ids, 0, tok, sizeof tok);
	struct belt_buffer *br = buf_new(b, (uint64_t)rows * n * 4);
	struct belt_buffer *by = buf_new(b, (uint64_t)rows * n * 4);
	struct belt_buffer *bo = buf_new(b, (uint64_t)rows * n * 4);
	struct belt_cmd c[6];
	c[0] = cmd_variant(b, "embed", "default", et, "embed");
	bind(&c[0], bw, 0, erb * NF_VOCAB, et);
	c[0].bind[0].ne[0] = n;
	c[0].bind[0].ne[1] = NF_VOCAB;
	bind(&c[0], ids, 0, sizeof tok, BELT_TYPE_I32);
	bind_rows(&c[0], br, 0, n, rows);
	pi(&c[0], n);
	c[1] = cmd_new(b, "scale", BELT_TYPE_ANY, "scale");
	bind_rows(&c[1], br, 0, n, rows);
	pi(&c[1], n);
	pf(&c[1], sqrtf((float)n));
	/* y from r, its post-norm in place, the add, the output norm */
	struct belt_buffer *src[4] = {br, by, br, br}, *dst[4] = {by, by, br, in_place ? br : bo};
	for (int i = 2; i < 6; i++) {
		bool add = i == 4;
		c[i] = cmd_new(b, add ? "add" : "rmsnorm", BELT_TYPE_ANY, add ? "add" : "norm");
		bind_rows(&c[i], src[i - 2], 0, n, rows);
		if (add)
			bind_rows(&c[i], by, 0, n, rows);
		else
			bind(&c[i], bw, wn + (i == 5 ? (uint64_t)n * 4 : 0), (uint64_t)n * 4,
			     BELT_TYPE_F32);
		bind_rows(&c[i], dst[i - 2], 0, n, rows);
		pi(&c[i], n);
		if (!add)
			pf(&c[i], 1e-6f);
	}
	struct belt_table tab;
	if (rows > 1)
		table_rows(&tab, c, 6, 16, ids, rows, NULL);
	else
		table_init(&tab, c, 6, 16, ids, T);
	prepare(b, &tab);
	run(b, &tab, 0, T, 0);
	uint64_t last = (uint64_t)(rows > 1 ? rows - 1 : 0) * n * 4;
	buf_get(b, br, last, r_out, (uint64_t)n * 4);
	buf_get(b, in_place ? br : bo, last, o_out, (uint64_t)n * 4);
	b->B->table_release(b->ctx, &tab);
	struct belt_buffer *all[] = {bw, ids, br, by, bo};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		buf_free(b, all[i]);
}

/* Those fused against the same commands unfused (BELT_VK_FUSE=0), F32
 * and Q4_0 embeddings: within 1e-6 relative (the norms' sums of squares
 * are the same loops, but another build of them may contract them into
 * other fused multiply-adds). */
START_TEST(test_norm_fusions)
{
	static const int types[2] = {BELT_TYPE_F32, BELT_TYPE_Q4_0};
	int et = types[_i];
	rng_seed(110 + _i);
	size_t erb;
	uint8_t *emb = weights_new(et, NF_N, NF_VOCAB, &erb);
	float w12[2 * NF_N];
	for (int i = 0; i < 2 * NF_N; i++)
		w12[i] = 0.5f + rng_f();
	/* one-row out, one-row in place, batched out, batched in place */
	for (int v = 0; v < 4; v++) {
		uint32_t rows = v >= 2 ? NF_ROWS : 1;
		float r[2][NF_N], o[2][NF_N];
		for (int g = 0; g < 2; g++) {
			struct be vk = g ? open_vk() : open_vk_set("BELT_VK_FUSE", "0");
			norm_chain(&vk, et, emb, erb, w12, rows, v % 2 == 1, r[g], o[g]);
			be_close(&vk);
		}
		for (int i = 0; i < NF_N; i++) {
			ck_assert_msg(fabsf(r[1][i] - r[0][i]) <= 1e-6f * fmaxf(1.0f, fabsf(r[0][i])),
				      "%s norms (variant %d): r[%d] %.9g fused, %.9g unfused",
				      belt_type_name(et), v, i, r[1][i], r[0][i]);
			ck_assert_msg(fabsf(o[1][i] - o[0][i]) <= 1e-6f * fmaxf(1.0f, fabsf(o[0][i])),
				      "%s norms (variant %d): out[%d] %.9g fused, %.9g unfused",
				      belt_type_name(et), v, i, o[1][i], o[0][i]);
		}
	}
	free(emb);
}
END_TEST

START_TEST(test_batched_split)
{
	struct be vk = open_vk();
	rng_seed(70);
	const int K = 32, M = 540000, NT = BC_ROWS;
	size_t rb;
	uint8_t *w = weights_new(BELT_TYPE_Q4_0, K, M, &rb);
	float *x = malloc((size_t)NT * K * 4);
	fill(x, (size_t)NT * K);
	float *wd = malloc((size_t)M * K * 4); /* W, decoded */
	for (int i = 0; i < M; i++)
		for (int j = 0; j < K; j++)
			wd[(size_t)i * K + j] =
				(float)weight_at(BELT_TYPE_Q4_0, w + rb * (size_t)i, j);
	double wmax = 0; /* the largest |w| */
	for (size_t i = 0; i < (size_t)M * K; i++)
		wmax = fmax(wmax, fabs(wd[i]));
	/* the reference's argmax per row (double sums) */
	int32_t want[BC_ROWS];
	double gap[BC_ROWS], magmax[BC_ROWS];
	for (int r = 0; r < NT; r++) {
		double best = -INFINITY, second = -INFINITY;
		magmax[r] = 0;
		for (int i = 0; i < M; i++) {
			double s = 0, mag = 0;
			for (int j = 0; j < K; j++) {
				double t = (double)wd[(size_t)i * K + j] * x[(size_t)r * K + j];
				s += t;
				mag += fabs(t);
			}
			magmax[r] = fmax(magmax[r], mag);
			if (s > best) {
				second = best;
				best = s;
				want[r] = i;
			} else if (s > second) {
				second = s;
			}
		}
		gap[r] = best - second;
	}
	struct belt_buffer *bw = buf_from(&vk, w, rb * M);
	struct belt_buffer *bx = buf_from(&vk, x, (uint64_t)NT * K * 4);
	struct belt_buffer *by = NULL, *ids = NULL;
	ck_assert(vk.B->buffer_create(vk.ctx, BELT_BUFFER_IO, (uint64_t)NT * M * 4,
				      &by, err, sizeof err) == 0);
	ck_assert(vk.B->buffer_create(vk.ctx, BELT_BUFFER_IO, NT * 4, &ids, err,
				      sizeof err) == 0);
	struct belt_cmd c[2];
	c[0] = cmd_new(&vk, "matvec", BELT_TYPE_Q4_0, "output");
	bind(&c[0], bw, 0, rb * M, BELT_TYPE_Q4_0);
	bind_rows(&c[0], bx, 0, K, NT);
	bind_rows(&c[0], by, 0, M, NT);
	pi(&c[0], K);
	pi(&c[0], M);
	c[1] = cmd_new(&vk, "argmax", BELT_TYPE_ANY, "argmax");
	c[1].patch = BELT_PATCH_ARGMAX_OUTPUT;
	bind_rows(&c[1], by, 0, M, NT);
	bind(&c[1], ids, 0, NT * 4, BELT_TYPE_I32);
	pi(&c[1], M);
	c[0].head = c[1].head = true;
	struct belt_table tab;
	table_rows(&tab, c, 2, 128, NULL, NT, ids);
	prepare(&vk, &tab);
	float *y = malloc((size_t)M * 4);
	for (int p = 0; p < 2; p++) {
		uint32_t n = p ? 40 : NT;
		int32_t got[BC_ROWS];
		for (int r = 0; r < NT; r++)
			got[r] = -7;
		buf_put(&vk, ids, 0, got, (uint64_t)NT * 4);
		run(&vk, &tab, 0, n, p ? BELT_RUN_HEAD_LAST_ONLY : 0);
		buf_get(&vk, ids, 0, got, (uint64_t)NT * 4);
		for (uint32_t r = 0; r < (uint32_t)NT; r++) {
			bool ran = r < n && (!p || r == n - 1);
			if (!ran) {
				ck_assert_int_eq(got[r], -7);
				continue;
			}
			buf_get(&vk, by, (uint64_t)r * M * 4, y, (uint64_t)M * 4);
			/* the argmax where no row's error can reorder the best two */
			double rel = vk.cm ? 1e-3 : 2e-5;
			/* the int8 products: x rounded to int8 per block of
			 * 32 (here the row), half a step of amax / 127 each */
			double xstep = 0;
			if (vk.cm8)
				for (int j = 0; j < K; j++)
					xstep = fmax(xstep, fabs(x[(size_t)r * K + j]) / 127);
			if (gap[r] > 2 * (rel * magmax[r] + 0.5 * xstep * K * wmax + 1e-6))
				ck_assert_msg(got[r] == want[r], "split: row %u argmax %d, want %d",
					      r, got[r], want[r]);
			for (int i = r % 997; i < M; i += 997) {
				double s = 0, mag = 0, wsum = 0;
				for (int j = 0; j < K; j++) {
					double t = (double)wd[(size_t)i * K + j] *
						   x[(size_t)r * K + j];
					s += t;
					mag += fabs(t);
					wsum += fabs(wd[(size_t)i * K + j]);
				}
				ck_assert_msg(fabs(y[i] - s) <= rel * mag + 0.5 * xstep * wsum + 1e-6,
					      "split: row %u y[%d] %.9g vs %.9g", r, i, y[i], s);
			}
		}
	}
	vk.B->table_release(vk.ctx, &tab);
	buf_free(&vk, bw);
	buf_free(&vk, bx);
	buf_free(&vk, by);
	buf_free(&vk, ids);
	free(w);
	free(wd);
	free(x);
	free(y);
	be_close(&vk);
}
END_TEST

/* ---- real models through the public API ---- */

static char model_path[1024];

static bool find_model(const char *name)
{
	const char *dir = getenv("BELT_SHARED_DIR");
	snprintf(model_path, sizeof model_path, "%s/models/%s",
		 dir && *dir ? dir : "../shared", name);
	FILE *f = fopen(model_path, "rb");
	if (f)
		fclose(f);
	return f != NULL;
}

struct gen {
	int32_t ids[80];
	int n;
};

static bool on_token(void *ud, int32_t token, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct gen *g = ud;
	if (token >= 0 && g->n < 80)
		g->ids[g->n++] = token;
	return true;
}

#define N_EVAL 6

/* Greedy ids for 64 tokens, and the logits after each of the first N_EVAL
 * prompt positions (session_eval one at a time) and after all of it. */
static void model_run(const char *backend, const char *file, struct gen *g,
		      float **logits, int32_t *n_vocab)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = model_path;
	mp.backend = backend;
	mp.n_threads = 2;
	struct belt_model *m = NULL;
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0,
		      "%s on %s: %s", file, backend, err);
	int32_t nv = belt_model_n_vocab(m);
	*n_vocab = nv;
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 128;
	/* F32 caches: the backends' k and v, about 1e-6 apart, could round
	 * to neighbouring F16 values (the batch and golden suites check the
	 * default F16 caches with their tolerances) */
	sp.type_k = sp.type_v = BELT_TYPE_F32;
	struct belt_session *s = NULL;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0,
		      "%s", err);
	int32_t prompt[N_EVAL + 3];
	for (int i = 0; i < N_EVAL + 3; i++)
		prompt[i] = (int32_t)((1 + 37 * i * i + 11 * i) % nv);
	float *lg = malloc((size_t)nv * (N_EVAL + 1) * 4);
	for (int i = 0; i < N_EVAL; i++)
		ck_assert_msg(belt_session_eval(s, &prompt[i], 1, (uint32_t)i,
						lg + (size_t)nv * i, err,
						sizeof err) == 0,
			      "%s", err);
	/* the rest in one run of three (a partial chunk, base pos > 0) */
	ck_assert_msg(belt_session_eval(s, &prompt[N_EVAL], 3, N_EVAL,
					lg + (size_t)nv * N_EVAL, err,
					sizeof err) == 0,
		      "%s", err);
	*logits = lg;
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = 64;
	gp.stop_at_eog = false;
	g->n = 0;
	ck_assert_msg(belt_generate(s, prompt, 5, &gp, on_token, g, err,
				    sizeof err) == 0,
		      "%s", err);
	belt_session_free(s);
	belt_model_free(m);
}

static void check_model(const char *file)
{
	if (!find_model(file)) {
		fprintf(stderr, "skipping %s: not found\n", model_path);
		return;
	}
	struct gen gv, gc;
	float *lv, *lc;
	int32_t nv;
	model_run("vulkan", file, &gv, &lv, &nv);
	model_run("cpu", file, &gc, &lc, &nv);
	double worst = 0;
	for (size_t i = 0; i < (size_t)nv * (N_EVAL + 1); i++) {
		double e = fabs(lv[i] - lc[i]);
		if (e > worst)
			worst = e;
		ck_assert_msg(e <= 1e-3 * (1 + fabs(lc[i])),
			      "%s: logit %zu of position %zu: %g vs cpu %g",
			      file, i % nv, i / nv, lv[i], lc[i]);
	}
	ck_assert_int_eq(gv.n, 64);
	ck_assert_int_eq(gc.n, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_msg(gv.ids[i] == gc.ids[i],
			      "%s: generated token %d: %d vs cpu %d", file, i,
			      gv.ids[i], gc.ids[i]);
	fprintf(stderr, "vulkan %s: 64 greedy tokens equal the cpu's; worst "
		"logit difference %.3g\n", file, worst);
	free(lv);
	free(lc);
}

START_TEST(test_model_stories)
{
	check_model("stories260K.f32.gguf");
}
END_TEST

START_TEST(test_model_pycoder)
{
	check_model("pycoder29M.f16.gguf");
}
END_TEST

/* With the validation layer: no message at all (the backend fails a run
 * on any, and aborts in destroy when it saw one). */
/* ---- typed KV caches (F16, Q8_0) ---- */

/* The K and V cache types of the typed-cache tests. */
static const int kv_types[][2] = {{BELT_TYPE_F16, BELT_TYPE_F16},
				  {BELT_TYPE_Q8_0, BELT_TYPE_Q8_0},
				  {BELT_TYPE_Q8_0, BELT_TYPE_F16},
				  {BELT_TYPE_F32, BELT_TYPE_Q8_0}};
#define N_KV_TYPES 4

/* A row of n values as a cache of type t holds it (llama.cpp's encoding:
 * ggml's fp16 conversion, quantize_row_q8_0_ref). */
static void kv_encode(int t, const float *x, size_t n, uint8_t *out)
{
	if (t == BELT_TYPE_F32) {
		memcpy(out, x, n * 4);
	} else if (t == BELT_TYPE_F16) {
		for (size_t i = 0; i < n; i++) {
			uint16_t h = belt_f32_to_fp16(x[i]);
			memcpy(out + 2 * i, &h, 2);
		}
	} else {
		ck_assert_int_eq(belt_quantize_row(t, x, out, (int64_t)n), 0);
	}
}

static void kv_decode(int t, const uint8_t *in, size_t n, float *out)
{
	if (t == BELT_TYPE_F32) {
		memcpy(out, in, n * 4);
	} else if (t == BELT_TYPE_F16) {
		for (size_t i = 0; i < n; i++)
			out[i] = belt_fp16_to_f32(rd16(in + 2 * i));
	} else {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *blk = in + i / 32 * 34;
			out[i] = belt_fp16_to_f32(rd16(blk)) * (float)(int8_t)blk[2 + i % 32];
		}
	}
}

/* Cache row got (type t, n values) holds x: exactly kv_encode's bytes
 * (exact), else (the GPU, whose fp16 conversion and division may round
 * otherwise) F16 within one fp16 step of x, Q8_0 with each block's scale
 * within one fp16 step of amax / 127 and each value within 0.57 of a
 * step (half a step, plus the scale's rounding times 127 steps). */
static void kv_row_check(int t, const uint8_t *got, const float *x, size_t n, bool exact,
			 const char *what)
{
	size_t rb = belt_type_row_bytes(t, n);
	uint8_t *want = malloc(rb);
	float *dec = malloc(n * sizeof *dec);
	kv_encode(t, x, n, want);
	kv_decode(t, got, n, dec);
	if (exact || t == BELT_TYPE_F32)
		ck_assert_msg(!memcmp(got, want, rb), "%s: the %s cache row is not kv_encode's",
			      what, belt_type_name(t));
	for (size_t i = 0; i < n && t == BELT_TYPE_F16; i++)
		ck_assert_msg(fabsf(dec[i] - x[i]) <= fabsf(x[i]) * 0x1p-10f + 0x1p-24f,
			      "%s: f16 cache [%zu] %.9g, stored %.9g", what, i, dec[i], x[i]);
	for (size_t b = 0; b < n / 32 && t == BELT_TYPE_Q8_0; b++) {
		float amax = 0.0f;
		for (int i = 0; i < 32; i++)
			amax = fmaxf(amax, fabsf(x[b * 32 + i]));
		float d = amax / 127.0f, dg = belt_fp16_to_f32(rd16(got + 34 * b));
		ck_assert_msg(fabsf(dg - d) <= d * 0x1p-10f, "%s: q8_0 block %zu scale %.9g, amax/127 %.9g",
			      what, b, dg, d);
		for (int i = 0; i < 32; i++)
			ck_assert_msg(fabsf(dec[b * 32 + i] - x[b * 32 + i]) <= 0.57f * d,
				      "%s: q8_0 cache [%zu] %.9g, stored %.9g (step %.9g)", what,
				      b * 32 + i, dec[b * 32 + i], x[b * 32 + i], d);
	}
	free(want);
	free(dec);
}

/* rope_kv and kv_store into caches of the types of kv_types[_i], on both
 * backends: each slot written holds the rotated k and the v (checked by
 * kv_row_check; a block of zeros gets scale 0). */
START_TEST(test_kv_write)
{
	int kt = kv_types[_i][0], vt = kv_types[_i][1];
	enum { NH = 4, NKV = 2, HD = 32, CTX = 40, QN = NH * HD, KVN = NKV * HD };
	static const int positions[] = {0, 1, 17, 39};
	struct be be2[2] = {open_vk(), open_cpu()};
	uint64_t krow = belt_type_row_bytes(kt, KVN), vrow = belt_type_row_bytes(vt, KVN);
	uint64_t voff = (krow * CTX + 255) / 256 * 256;
	for (int bi = 0; bi < 2; bi++) {
		struct be *b = &be2[bi];
		for (int op = 0; op < 2; op++) {
			rng_seed(40 + (uint64_t)op);
			struct belt_buffer *bq = buf_new(b, QN * 4), *bk = buf_new(b, KVN * 4);
			struct belt_buffer *bv = buf_new(b, KVN * 4);
			struct belt_buffer *kv = buf_new(b, voff + vrow * CTX);
			struct belt_cmd c = cmd_new(b, op ? "kv_store" : "rope_kv", BELT_TYPE_ANY,
						    "blk.0.kv");
			c.patch = BELT_PATCH_POSITION;
			if (!op)
				bind(&c, bq, 0, QN * 4, BELT_TYPE_F32);
			bind(&c, bk, 0, KVN * 4, BELT_TYPE_F32);
			bind(&c, bv, 0, KVN * 4, BELT_TYPE_F32);
			bind(&c, kv, 0, krow * CTX, kt);
			bind(&c, kv, voff, vrow * CTX, vt);
			if (op) {
				pi(&c, KVN);
			} else {
				pi(&c, NH);
				pi(&c, NKV);
				pi(&c, HD);
				pi(&c, HD);
				pf(&c, 10000.0f);
			}
			struct belt_table tab;
			table_init(&tab, &c, 1, CTX, NULL, 1);
			prepare(b, &tab);
			for (int p = 0; p < 4; p++) {
				float q[QN], k[KVN], v[KVN];
				uint8_t kr[KVN * 4], vr[KVN * 4];
				fill(q, QN);
				fill(k, KVN);
				fill(v, KVN);
				if (p == 1)
					memset(v + 32, 0, 32 * sizeof *v);
				buf_put(b, bq, 0, q, sizeof q);
				buf_put(b, bk, 0, k, sizeof k);
				buf_put(b, bv, 0, v, sizeof v);
				run(b, &tab, (uint32_t)positions[p], 1, 0);
				buf_get(b, bk, 0, k, sizeof k); /* rotated in place */
				buf_get(b, kv, krow * (uint64_t)positions[p], kr, krow);
				buf_get(b, kv, voff + vrow * (uint64_t)positions[p], vr, vrow);
				char what[96];
				snprintf(what, sizeof what, "%s %s k %s v %s pos %d", b->B->name,
					 c.kernel->op, belt_type_name(kt), belt_type_name(vt),
					 positions[p]);
				kv_row_check(kt, kr, k, KVN, bi == 1, what);
				kv_row_check(vt, vr, v, KVN, bi == 1, what);
			}
			b->B->table_release(b->ctx, &tab);
			buf_free(b, bq);
			buf_free(b, bk);
			buf_free(b, bv);
			buf_free(b, kv);
		}
	}
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

/* One attention command over typed caches kc, vc (bytes of CTX rows) on b:
 * op (attention or attention_ext: its softcap cap and window), variant,
 * rows rows at pos (parent: a tree run of them, else causal), out
 * [rows][n_head * hd]. */
/* The caches kc, vc hold slots positions (a ring where fewer than ctx:
 * position p in slot p mod slots). */
static void kv_attend_ext(struct be *b, const char *op, const char *variant, const int *types,
			  const uint8_t *kc, const uint8_t *vc, const float *q, int n_head,
			  int n_kv, int hd, int ctx, int slots, uint32_t rows, uint32_t pos,
			  const int32_t *parent, float cap, int window, float *out)
{
	int qn = n_head * hd, kvn = n_kv * hd;
	uint64_t kb = belt_type_row_bytes(types[0], (uint64_t)kvn) * slots;
	uint64_t vb = belt_type_row_bytes(types[1], (uint64_t)kvn) * slots;
	struct belt_buffer *bq = buf_from(b, q, (uint64_t)qn * 4 * rows);
	struct belt_buffer *bk = buf_from(b, kc, kb), *bv = buf_from(b, vc, vb);
	struct belt_buffer *bo = buf_new(b, (uint64_t)qn * 4 * rows);
	struct belt_buffer *ba = buf_new(b, (uint64_t)n_head * ctx * 4);
	struct belt_cmd c = cmd_variant(b, op, variant, BELT_TYPE_ANY, "attn");
	c.patch = BELT_PATCH_KV_LEN;
	bind_rows(&c, bq, 0, qn, rows);
	bind(&c, bk, 0, kb, types[0]);
	bind(&c, bv, 0, vb, types[1]);
	bind_rows(&c, bo, 0, qn, rows);
	bind(&c, ba, 0, (uint64_t)n_head * ctx * 4, BELT_TYPE_F32);
	pi(&c, n_head);
	pi(&c, n_kv);
	pi(&c, hd);
	pi(&c, ctx);
	pf(&c, 1.0f / sqrtf((float)hd));
	if (!strcmp(op, "attention_ext")) {
		pf(&c, cap);
		pi(&c, window);
	}
	struct belt_table tab;
	table_rows(&tab, &c, 1, (uint32_t)ctx, NULL, rows, NULL);
	prepare(b, &tab);
	tab.parent = parent;
	run(b, &tab, pos, rows, parent ? BELT_RUN_TREE : 0);
	tab.parent = NULL;
	buf_get(b, bo, 0, out, (uint64_t)qn * 4 * rows);
	b->B->table_release(b->ctx, &tab);
	buf_free(b, bq);
	buf_free(b, bk);
	buf_free(b, bv);
	buf_free(b, bo);
	buf_free(b, ba);
}

static void kv_attend(struct be *b, const char *op, const char *variant, const int *types,
		      const uint8_t *kc, const uint8_t *vc, const float *q, int n_head,
		      int n_kv, int hd, int ctx, uint32_t rows, uint32_t pos,
		      const int32_t *parent, float *out)
{
	kv_attend_ext(b, op, variant, types, kc, vc, q, n_head, n_kv, hd, ctx, ctx, rows, pos,
		      parent, 0.0f, 0, out);
}

/* Rows r of a batched pass at pos, causal (parent NULL) or a tree: the
 * positions row r sees, into vis[0 .. pos + r]. */
static int rows_visible(const int32_t *parent, uint32_t pos, uint32_t r, bool *vis)
{
	int n = (int)(pos + r + 1);
	for (int t = 0; t < n; t++)
		vis[t] = !parent || t < (int)pos;
	for (int32_t a = (int32_t)r; parent && a >= 0; a = parent[a])
		vis[pos + (uint32_t)a] = true;
	return n;
}

/* Row r's depth in the run (parent NULL: r). */
static uint32_t row_depth_of(const int32_t *parent, uint32_t r)
{
	uint32_t d = 0;
	for (int32_t a = parent ? parent[r] : (int32_t)r - 1; a >= 0;
	     a = parent ? parent[a] : a - 1)
		d++;
	return d;
}

/* ... and of those, the ones within window positions of its query
 * (attention_ext: a key at p_k is seen from p iff p - p_k < window). */
static int rows_visible_window(const int32_t *parent, uint32_t pos, uint32_t r, int window,
			       bool *vis)
{
	int n = rows_visible(parent, pos, r, vis);
	uint32_t qpos = pos + row_depth_of(parent, r);
	for (int t = 0; t < n; t++) {
		uint32_t kpos = (uint32_t)t < pos ? (uint32_t)t
						  : pos + row_depth_of(parent, (uint32_t)t - pos);
		if (vis[t] && qpos - kpos >= (uint32_t)window)
			vis[t] = false;
	}
	return n;
}

/* Batched attention over F16 caches (the default cache type) on the
 * matrix units where the device has them (attention_rows_cm.comp), and on
 * the plain shaders (BELT_VK_COOPMAT=0); attention, and attention_ext
 * with its scores soft-capped and a window of 40 (also from caches that
 * are rings of 96 slots, as sliding-window layers keep): head_dim 64 and 128, 1, 4 and 8
 * query heads per kv head, a causal pass of 37 rows after 0 and after 203
 * positions and a tree of 9 rows, against the double reference over the
 * cached values. The matrix units take q and the weights rounded to
 * float16 (2^-11 each): within 3e-3 of the largest |v|; the plain shader
 * within 1e-5 relative (+1e-6). */
START_TEST(test_attention_rows_cm)
{
	static const int shapes[][3] = {{64, 8, 8}, {64, 8, 2}, {128, 8, 1}, {128, 32, 4}};
	static const int32_t tree[9] = {-1, 0, 1, 0, 3, 2, -1, 6, 1};
	static const int f16s[2] = {BELT_TYPE_F16, BELT_TYPE_F16};
	enum { CTX = 300, ROWS = 37, RING = 96 };
	bool cm = vk_coopmat_on();
	if (!cm)
		printf("batched attention on matrix units not tested: the default device has "
		       "no VK_NV_cooperative_matrix with 16 x 16 x 16 float16 products, or "
		       "BELT_VK_COOPMAT=0\n");
	rng_seed(60);
	for (int path = cm ? 0 : 1; path < 2; path++) {
		if (path == 1)
			setenv("BELT_VK_COOPMAT", "0", 1);
		struct be vk = open_vk();
		unsetenv("BELT_VK_COOPMAT");
		for (int s = 0; s < 4; s++) {
			int hd = shapes[s][0], nh = shapes[s][1], nkv = shapes[s][2];
			int qn = nh * hd, kvn = nkv * hd;
			float *kf = malloc(sizeof(float) * CTX * kvn), *vf = malloc(sizeof(float) * CTX * kvn);
			uint16_t *kc = malloc(sizeof(uint16_t) * CTX * kvn), *vc = malloc(sizeof(uint16_t) * CTX * kvn);
			uint16_t *kr = malloc(sizeof(uint16_t) * RING * kvn), *vr = malloc(sizeof(uint16_t) * RING * kvn);
			float *q = malloc(sizeof(float) * ROWS * qn), *out = malloc(sizeof(float) * ROWS * qn);
			double *ref = malloc(sizeof(double) * qn);
			bool vis[CTX];
			fill(kf, (size_t)CTX * kvn);
			fill(vf, (size_t)CTX * kvn);
			fill(q, (size_t)ROWS * qn);
			for (int i = 0; i < ROWS * qn; i++)
				q[i] *= 3.0f;
			kv_encode(BELT_TYPE_F16, kf, (size_t)CTX * kvn, (uint8_t *)kc);
			kv_encode(BELT_TYPE_F16, vf, (size_t)CTX * kvn, (uint8_t *)vc);
			kv_decode(BELT_TYPE_F16, (uint8_t *)kc, (size_t)CTX * kvn, kf);
			kv_decode(BELT_TYPE_F16, (uint8_t *)vc, (size_t)CTX * kvn, vf);
			double vmax = 0;
			for (int i = 0; i < CTX * kvn; i++)
				vmax = fmax(vmax, fabs(vf[i]));
			static const uint32_t poss[3] = {0, 203, 203};
			for (int run_i = 0; run_i < 3; run_i++) {
				const int32_t *par = run_i == 2 ? tree : NULL;
				uint32_t pos = poss[run_i], rows = par ? 9 : ROWS;
				/* attention, then attention_ext soft-capped at 3 (the
				 * scores reach 5 or so here) within 40 positions, then
				 * that from caches that are rings of 96 slots (the
				 * window and the pass's rows: as a session makes a
				 * sliding-window layer's, position p in slot p mod 96) */
				for (int ext = 0; ext < 3; ext++) {
					float cap = ext ? 3.0f : 0.0f;
					int window = ext ? 40 : 0, slots = ext == 2 ? RING : CTX;
					const uint16_t *kb = kc, *vb = vc;
					if (ext == 2) {
						if (pos == 0)
							continue;
						for (uint32_t p = pos + rows - RING; p < pos + rows; p++) {
							memcpy(kr + (p % RING) * kvn, kc + p * kvn, 2 * (size_t)kvn);
							memcpy(vr + (p % RING) * kvn, vc + p * kvn, 2 * (size_t)kvn);
						}
						kb = kr, vb = vr;
					}
					kv_attend_ext(&vk, ext ? "attention_ext" : "attention", "default",
						      f16s, (const uint8_t *)kb, (const uint8_t *)vb, q,
						      nh, nkv, hd, CTX, slots, rows, pos, par, cap, window, out);
					for (uint32_t r = 0; r < rows; r++) {
						int n = ext ? rows_visible_window(par, pos, r, window, vis)
							    : rows_visible(par, pos, r, vis);
						attention_cap_ref(q + r * qn, kf, vf, nh, nkv, hd, n, vis,
								  1.0 / sqrt(hd), cap, ref);
						for (int i = 0; i < qn; i++) {
							double tol = path == 0 ? 3e-3 * vmax
									       : 1e-5 * fabs(ref[i]) + 1e-6;
							ck_assert_msg(fabs(out[r * qn + i] - ref[i]) <= tol,
								      "%s %s hd %d heads %d/%d pos %u%s row %u [%d]: %.9g vs %.9g",
								      path == 0 ? "matrix units" : "plain",
								      ext == 2 ? "attention_ext (rings)" : ext ? "attention_ext" : "attention", hd, nh,
								      nkv, pos, par ? " tree" : "", r, i,
								      out[r * qn + i], ref[i]);
						}
					}
				}
			}
			free(kf);
			free(vf);
			free(kc);
			free(vc);
			free(kr);
			free(vr);
			free(q);
			free(out);
			free(ref);
		}
		be_close(&vk);
	}
}
END_TEST

/* attention_ext (softcap 3, window 40) from caches that are rings of 96
 * slots, as a session keeps a sliding-window layer's (position p in slot
 * p mod 96), of the types of kv_types[_i], on the CPU backend and
 * Vulkan's plain shaders: one row (decode) after 203 and 250 positions
 * (its window wrapping in the ring and not), a causal pass of 37 rows
 * and a tree of 9 after 203; within 1e-5 relative (+1e-6) of the double
 * reference over the values the caches hold. */
START_TEST(test_kv_ring)
{
	enum { NH = 8, NKV = 2, HD = 64, CTX = 300, QN = NH * HD, KVN = NKV * HD, RING = 96,
	       ROWS = 37 };
	static const int32_t tree[9] = {-1, 0, 1, 0, 3, 2, -1, 6, 1};
	const int *types = kv_types[_i];
	setenv("BELT_VK_COOPMAT", "0", 1);
	struct be be2[2] = {open_vk(), open_cpu()};
	unsetenv("BELT_VK_COOPMAT");
	rng_seed(70);
	size_t kr = belt_type_row_bytes(types[0], KVN), vr = belt_type_row_bytes(types[1], KVN);
	float *kf = malloc(sizeof(float) * CTX * KVN), *vf = malloc(sizeof(float) * CTX * KVN);
	uint8_t *kc = malloc(kr * CTX), *vc = malloc(vr * CTX);
	uint8_t *kring = malloc(kr * RING), *vring = malloc(vr * RING);
	float *q = malloc(sizeof(float) * ROWS * QN), *out = malloc(sizeof(float) * ROWS * QN);
	double ref[QN];
	bool vis[CTX];
	ck_assert(kf && vf && kc && vc && kring && vring && q && out);
	fill(kf, (size_t)CTX * KVN);
	fill(vf, (size_t)CTX * KVN);
	fill(q, (size_t)ROWS * QN);
	for (int i = 0; i < ROWS * QN; i++)
		q[i] *= 3.0f;
	kv_encode(types[0], kf, (size_t)CTX * KVN, kc);
	kv_encode(types[1], vf, (size_t)CTX * KVN, vc);
	kv_decode(types[0], kc, (size_t)CTX * KVN, kf);
	kv_decode(types[1], vc, (size_t)CTX * KVN, vf);
	static const struct {
		uint32_t pos, rows;
		bool tree;
	} runs[] = {{203, 1, false}, {250, 1, false}, {203, ROWS, false}, {203, 9, true}};
	for (int bi = 0; bi < 2; bi++)
		for (int ri = 0; ri < 4; ri++) {
			uint32_t pos = runs[ri].pos, rows = runs[ri].rows;
			const int32_t *par = runs[ri].tree ? tree : NULL;
			for (uint32_t p = pos + rows - RING; p < pos + rows; p++) {
				memcpy(kring + (p % RING) * kr, kc + p * kr, kr);
				memcpy(vring + (p % RING) * vr, vc + p * vr, vr);
			}
			kv_attend_ext(&be2[bi], "attention_ext", "default", types, kring, vring, q, NH,
				      NKV, HD, CTX, RING, rows, pos, par, 3.0f, 40, out);
			for (uint32_t r = 0; r < rows; r++) {
				int n = rows_visible_window(par, pos, r, 40, vis);
				attention_cap_ref(q + r * QN, kf, vf, NH, NKV, HD, n, vis, 1.0 / sqrt(HD),
						  3.0, ref);
				for (int i = 0; i < QN; i++)
					ck_assert_msg(fabs(out[r * QN + i] - ref[i]) <= 1e-5 * fabs(ref[i]) + 1e-6,
						      "%s K %s V %s pos %u rows %u%s row %u [%d]: %.9g vs %.9g",
						      be2[bi].B->name, belt_type_name(types[0]),
						      belt_type_name(types[1]), pos, rows, par ? " tree" : "",
						      r, i, out[r * QN + i], ref[i]);
			}
		}
	free(kf);
	free(vf);
	free(kc);
	free(vc);
	free(kring);
	free(vring);
	free(q);
	free(out);
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

/* Attention (default, split_kv, attention_ext; one row and a batched pass
 * of 3) reading caches of the types of kv_types[_i], on both backends:
 * within 1e-5 relative (+1e-6) of the double reference over the values
 * the caches hold (kv_decode's). */
START_TEST(test_kv_attention)
{
	enum { NH = 8, NKV = 2, HD = 64, CTX = 300, QN = NH * HD, KVN = NKV * HD, R = 3 };
	const int *types = kv_types[_i];
	/* the CPU's portable path and, where the CPU has it, its AVX2 one
	 * (its own decode attention over F16 caches); Vulkan's plain shaders
	 * (batched attention on the matrix units rounds q to float16: its
	 * own test, test_attention_rows_cm) */
	setenv("BELT_VK_COOPMAT", "0", 1);
	struct be be2[3] = {open_vk(), open_cpu()};
	unsetenv("BELT_VK_COOPMAT");
	int nbe = open_cpu_isa("avx2", &be2[2]) ? 3 : 2;
	rng_seed(50);
	float *kf = malloc(sizeof(float) * CTX * KVN), *vf = malloc(sizeof(float) * CTX * KVN);
	uint8_t *kc = malloc((size_t)CTX * KVN * 4), *vc = malloc((size_t)CTX * KVN * 4);
	fill(kf, (size_t)CTX * KVN);
	fill(vf, (size_t)CTX * KVN);
	kv_encode(types[0], kf, (size_t)CTX * KVN, kc);
	kv_encode(types[1], vf, (size_t)CTX * KVN, vc);
	kv_decode(types[0], kc, (size_t)CTX * KVN, kf);
	kv_decode(types[1], vc, (size_t)CTX * KVN, vf);
	float q[R * QN], out[R * QN];
	double ref[QN];
	fill(q, R * QN);
	for (int i = 0; i < R * QN; i++)
		q[i] *= 3.0f;
	static const char *const ops[][2] = {{"attention", "default"},
					     {"attention", "split_kv"},
					     {"attention", "split_gqa"},
					     {"attention_ext", "default"}};
	static const uint32_t poss[] = {5, CTX - R};
	for (int bi = 0; bi < nbe; bi++)
		for (int o = 0; o < 4; o++)
			for (uint32_t rows = 1; rows <= R; rows += R - 1)
				for (int pp = 0; pp < 2; pp++) {
					uint32_t pos = poss[pp];
					kv_attend(&be2[bi], ops[o][0], ops[o][1], types, kc, vc, q, NH,
						  NKV, HD, CTX, rows, pos, NULL, out);
					for (uint32_t r = 0; r < rows; r++) {
						attention_ref(q + r * QN, kf, vf, NH, NKV, HD,
							      (int)(pos + r + 1), 1.0 / sqrt(HD), ref);
						for (int i = 0; i < QN; i++)
							ck_assert_msg(fabs(out[r * QN + i] - ref[i]) <=
									      1e-5 * fabs(ref[i]) + 1e-6,
								      "%s %s/%s k %s v %s rows %u pos %u row %u [%d]: %.9g vs %.9g",
								      be2[bi].B->name, ops[o][0], ops[o][1],
								      belt_type_name(types[0]),
								      belt_type_name(types[1]), rows, pos, r,
								      i, out[r * QN + i], ref[i]);
					}
				}
	free(kf);
	free(vf);
	free(kc);
	free(vc);
	for (int bi = 0; bi < nbe; bi++)
		be_close(&be2[bi]);
}
END_TEST

/* A cache of a type caches do not hold, and a Q8_0 cache whose heads are
 * not whole blocks, are refused by both backends, named. */
START_TEST(test_kv_errors)
{
	struct be be2[2] = {open_vk(), open_cpu()};
	static const struct {
		int type, hd;
		const char *says;
	} cases[] = {{BELT_TYPE_Q4_0, 32, "caches hold f32, f16 or q8_0"},
		     {BELT_TYPE_Q8_0, 16, "a multiple of 32"}};
	for (int bi = 0; bi < 2; bi++)
		for (int i = 0; i < 2; i++) {
			struct be *b = &be2[bi];
			int hd = cases[i].hd, n = 3 * hd; /* 3 kv heads */
			struct belt_buffer *bq = buf_new(b, (uint64_t)n * 4);
			struct belt_buffer *kv = buf_new(b, (uint64_t)n * 64);
			struct belt_cmd c = cmd_new(b, "kv_store", BELT_TYPE_ANY, "blk.0.kv");
			c.patch = BELT_PATCH_POSITION;
			bind(&c, bq, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&c, bq, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&c, kv, 0, (uint64_t)n * 32, cases[i].type);
			bind(&c, kv, (uint64_t)n * 32, (uint64_t)n * 32, cases[i].type);
			pi(&c, n);
			struct belt_cmd a = cmd_new(b, "attention", BELT_TYPE_ANY, "blk.0.attn");
			a.patch = BELT_PATCH_KV_LEN;
			bind(&a, bq, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&a, kv, 0, (uint64_t)n * 32, cases[i].type);
			bind(&a, kv, (uint64_t)n * 32, (uint64_t)n * 32, cases[i].type);
			bind(&a, bq, 0, (uint64_t)n * 4, BELT_TYPE_F32);
			bind(&a, kv, 0, (uint64_t)n * 64, BELT_TYPE_F32);
			pi(&a, 3);
			pi(&a, 3);
			pi(&a, hd);
			pi(&a, 4);
			pf(&a, 1.0f);
			struct belt_cmd *cs[2] = {&c, &a};
			for (int j = 0; j < 2; j++) {
				struct belt_table tab;
				table_init(&tab, cs[j], 1, 4, NULL, 1);
				ck_assert_msg(b->B->table_prepare(b->ctx, &tab, err, sizeof err) != 0,
					      "%s %s: a %s cache was taken", b->B->name,
					      cs[j]->kernel->op, belt_type_name(cases[i].type));
				ck_assert_msg(strstr(err, cases[i].says) && strstr(err, "k_cache"),
					      "%s: %s", b->B->name, err);
			}
			buf_free(b, bq);
			buf_free(b, kv);
		}
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

/* A table of sequences (backend ABI 6) whose seq_ctx does not divide its
 * positions or whose caches do not split into its parts is refused by
 * table_prepare, and a run's row outside its part (seq_base not a
 * multiple of seq_ctx, seq_pos not below it) by table_run, on both
 * backends, with a message that says what was expected. */
START_TEST(test_seq_errors)
{
	struct be be2[2] = {open_vk(), open_cpu()};
	enum { N = 32, ROWS = 2, CTX = 12 }; /* seq_ctx 4: three parts */
	static const struct {
		uint32_t seq_ctx, slots; /* the table's, the caches' */
		const char *says;	 /* from table_prepare (NULL: none) */
	} prep[] = {{0, CTX, "expected a divisor"},
		    {5, CTX, "expected a divisor"},
		    {4, 10, "expected 3 equal parts"},
		    {4, CTX, NULL}};
	for (int bi = 0; bi < 2; bi++)
		for (size_t i = 0; i < sizeof prep / sizeof prep[0]; i++) {
			struct be *b = &be2[bi];
			struct belt_buffer *kv = buf_new(b, (uint64_t)2 * CTX * N * 4);
			struct belt_buffer *x = buf_new(b, (uint64_t)ROWS * N * 4);
			struct belt_cmd c = cmd_new(b, "kv_store", BELT_TYPE_ANY, "blk.0.kv");
			c.patch = BELT_PATCH_POSITION;
			bind_rows(&c, x, 0, N, ROWS);
			bind_rows(&c, x, 0, N, ROWS);
			uint64_t cache = (uint64_t)prep[i].slots * N * 4;
			bind(&c, kv, 0, cache, BELT_TYPE_F32);
			bind(&c, kv, (uint64_t)CTX * N * 4, cache, BELT_TYPE_F32);
			pi(&c, N);
			struct belt_table tab;
			table_rows(&tab, &c, 1, CTX, NULL, ROWS, NULL);
			uint32_t pos[ROWS] = {0, 0}, base[ROWS] = {0, 4};
			tab.seqs = true;
			tab.seq_ctx = prep[i].seq_ctx;
			tab.seq_pos = pos;
			tab.seq_base = base;
			int rc = b->B->table_prepare(b->ctx, &tab, err, sizeof err);
			if (prep[i].says) {
				ck_assert_msg(rc != 0, "%s: seq_ctx %u, caches of %u: prepared",
					      b->B->name, prep[i].seq_ctx, prep[i].slots);
				ck_assert_msg(strstr(err, prep[i].says), "%s: %s", b->B->name, err);
			} else {
				ck_assert_msg(rc == 0, "%s: %s", b->B->name, err);
				run(b, &tab, 0, ROWS, 0);
				/* a row outside its part: the base, then the position */
				static const uint32_t bad[2][2] = {{2, 0}, {4, 4}};
				for (int k = 0; k < 2; k++) {
					base[1] = bad[k][0];
					pos[1] = bad[k][1];
					ck_assert_msg(b->B->table_run(b->ctx, &tab, 0, ROWS, 0, err,
								      sizeof err) != 0,
						      "%s: row at %u + %u ran", b->B->name, base[1],
						      pos[1]);
					ck_assert_msg(strstr(err, "row 1 at slot") &&
							      strstr(err, "positions of a sequence"),
						      "%s: %s", b->B->name, err);
				}
				b->B->table_release(b->ctx, &tab);
			}
			buf_free(b, kv);
			buf_free(b, x);
		}
	be_close(&be2[0]);
	be_close(&be2[1]);
}
END_TEST

START_TEST(test_validation)
{
	setenv("BELT_VK_VALIDATION", "fatal", 1);
	struct belt_backend_options opt = {.n_threads = 1, .device = -1};
	void *probe = NULL;
	if (V->create(&opt, &probe, err, sizeof err)) {
		/* machines without the layer (the GPU box) skip this */
		ck_assert_msg(strstr(err, "not installed"), "%s", err);
		fprintf(stderr, "skipping validation: %s\n", err);
		unsetenv("BELT_VK_VALIDATION");
		return;
	}
	V->destroy(probe);
	struct be vk = open_vk(), cpu = open_cpu();
	for (int t = 0; t < N_WTYPES; t++)
		check_matvec(&vk, &cpu, t, 64, 9, 0, 0);
	check_matvec(&vk, &cpu, 1, 256, 9, 2, 4);
	check_chain(&vk, &cpu, BELT_TYPE_Q4_0, 4);
	check_chain(&vk, &cpu, BELT_TYPE_BF16, 16);
	chain_post_norms = true; /* PEND, COPY, rmsnorm + add + rmsnorm */
	check_chain(&vk, &cpu, BELT_TYPE_BF16, 4);
	chain_post_norms = false;
	chain_qkv_bias = true; /* the biases in the rope epilogue */
	check_chain(&vk, &cpu, BELT_TYPE_BF16, 4);
	chain_qkv_bias = false;
	{ /* embed + scale, the norms' forms, one-row and batched */
		size_t erb;
		uint8_t *emb = weights_new(BELT_TYPE_Q4_0, NF_N, NF_VOCAB, &erb);
		float w12[2 * NF_N], r[NF_N], o[NF_N];
		fill(w12, 2 * NF_N);
		for (int v = 0; v < 4; v++)
			norm_chain(&vk, BELT_TYPE_Q4_0, emb, erb, w12, v >= 2 ? NF_ROWS : 1,
				   v % 2 == 1, r, o);
		free(emb);
	}
	/* batched tables: the tiled product (both Q4_0 layouts), passes
	 * with and without the head, a tree */
	check_matmul(&vk, BELT_TYPE_Q4_0, 96, 67, 65, 0, vk.cm ? 1e-3 : 2e-5);
	check_matmul(&vk, BELT_TYPE_Q8_0, 96, 67, 33, 2, vk.cm ? 1e-3 : 2e-5);
	check_batched(&vk, BELT_TYPE_F16);
	check_tree(&vk, BELT_TYPE_F32);
	if (vk_q8x()) { /* the int8 x variant with each fused flag */
		float o[QF_N][QF_M];
		q8x_table(&vk, BELT_TYPE_Q4_0, o);
		q8x_table(&vk, BELT_TYPE_Q8_0, o);
	}
	/* the block types of quants.glsl: matvec and the tiled product */
	for (int i = 0; i < N_QTYPES; i++) {
		size_t rb;
		uint8_t *w = qweights_new(qtypes[i], 256, 9, &rb);
		float x[3 * 256], y[3 * 9];
		fill(x, 3 * 256);
		backend_matmul(&vk, qtypes[i], w, rb, x, 256, 9, 1, y);
		backend_matmul(&vk, qtypes[i], w, rb, x, 256, 9, 3, y);
		free(w);
	}
	be_close(&vk);
	setenv("BELT_VK_STAGING", "1", 1);
	vk = open_vk();
	check_chain(&vk, &cpu, BELT_TYPE_Q8_0, 4);
	be_close(&vk);
	unsetenv("BELT_VK_STAGING");
	be_close(&cpu);
	check_model("stories260K.f32.gguf");
	unsetenv("BELT_VK_VALIDATION");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("backend-vulkan");
	TCase *tc = tcase_create("kernels");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tc, test_matvec, 0, N_WTYPES);
	tcase_add_test(tc, test_embed);
	tcase_add_test(tc, test_elementwise);
	tcase_add_test(tc, test_rope_kv);
	tcase_add_loop_test(tc, test_attention_gqa, 0, 9);
	tcase_add_loop_test(tc, test_stop_at_eog, 0, 2);
	tcase_add_loop_test(tc, test_kquant_matvec, 0, 2);
	tcase_add_loop_test(tc, test_kquant_embed, 0, 2);
	tcase_add_test(tc, test_argmax);
	tcase_add_test(tc, test_logit_mask);
	tcase_add_test(tc, test_buffer_copy);
	tcase_add_test(tc, test_gated_run);
	tcase_add_test(tc, test_head_last_only);
	tcase_add_loop_test(tc, test_chained_model, 0, N_WTYPES + 2);
	tcase_add_loop_test(tc, test_fused, 0, N_WTYPES + 2);
	tcase_add_test(tc, test_fused_mixed);
	tcase_add_test(tc, test_q8x_fused);
	tcase_add_loop_test(tc, test_norm_fusions, 0, 2);
	tcase_add_test(tc, test_staging);
	tcase_add_test(tc, test_settings);
	suite_add_tcase(s, tc);
	/* a case of their own, to run alone (CK_RUN_CASE=silu_top_k) */
	TCase *ts = tcase_create("silu_top_k");
	tcase_set_timeout(ts, 0); /* no limit: CI bounds the run */
	tcase_add_test(ts, test_silu);
	tcase_add_test(ts, test_top_k);
	tcase_add_test(ts, test_top_k_errors);
	suite_add_tcase(s, ts);
	TCase *tq = tcase_create("quants");
	tcase_add_loop_test(tq, test_moe, 0, (int)(sizeof moe_types / sizeof moe_types[0]));
	tcase_add_loop_test(tq, test_moe_few, 0, 2);
	tcase_set_timeout(tq, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tq, test_quant_matvec, 0, N_QTYPES);
	tcase_add_loop_test(tq, test_quant_embed, 0, N_QTYPES);
	suite_add_tcase(s, tq);
	TCase *tb = tcase_create("batched");
	tcase_set_timeout(tb, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tb, test_batched_matvec, 0, N_WTYPES);
	tcase_add_loop_test(tb, test_batched, 0, N_WTYPES);
	tcase_add_loop_test(tb, test_tree, 0, N_WTYPES);
	tcase_add_test(tb, test_patch_none);
	tcase_add_test(tb, test_batched_split);
	tcase_add_loop_test(tb, test_glu_pre, 0, 4);
	tcase_add_loop_test(tb, test_add_sink, 0, 2);
	tcase_add_loop_test(tb, test_norm_xg, 0, 2);
	suite_add_tcase(s, tb);
	TCase *tk = tcase_create("kv");
	tcase_set_timeout(tk, 0); /* no limit: CI bounds the run */
	tcase_add_loop_test(tk, test_kv_write, 0, N_KV_TYPES);
	tcase_add_loop_test(tk, test_kv_attention, 0, N_KV_TYPES);
	tcase_add_loop_test(tk, test_kv_ring, 0, N_KV_TYPES);
	tcase_add_test(tk, test_kv_errors);
	tcase_add_test(tk, test_seq_errors);
	tcase_add_test(tk, test_attention_rows_cm);
	suite_add_tcase(s, tk);
	TCase *te = tcase_create("contract");
	tcase_add_test(te, test_kernel_find);
	tcase_add_test(te, test_errors);
	suite_add_tcase(s, te);
	TCase *tm = tcase_create("models");
	tcase_set_timeout(tm, 0); /* no limit: CI bounds the run */
	tcase_add_test(tm, test_model_stories);
	tcase_add_test(tm, test_model_pycoder);
	tcase_add_test(tm, test_validation);
	suite_add_tcase(s, tm);
	return s;
}

int main(void)
{
	V = belt_backend_get("vulkan", err, sizeof err);
	if (!V) {
		fprintf(stderr, "check_backend_vulkan: %s\n", err);
		return EXIT_FAILURE;
	}
	C = belt_backend_get("cpu", err, sizeof err);
	if (!C) {
		fprintf(stderr, "check_backend_vulkan: %s\n", err);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
