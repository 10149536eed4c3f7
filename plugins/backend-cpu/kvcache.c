/* The KV cache in its element type: a position's row of n values as F32,
 * F16 or Q8_0 blocks (llama.cpp's layout), written from floats and read
 * back as floats. */
#include <math.h>
#include <string.h>

#include "belt/quant.h"
#include "cpu.h"

void cpu_kv_put(int type, void *cache, size_t slot, size_t n, const float *src)
{
	size_t rb = belt_type_row_bytes(type, n);
	char *row = (char *)cache + slot * rb;
	if (type == BELT_TYPE_F32) {
		memcpy(row, src, n * sizeof(float));
	} else if (type == BELT_TYPE_F16) {
		uint16_t *h = (uint16_t *)row;
		for (size_t i = 0; i < n; i++)
			h[i] = belt_f32_to_fp16(src[i]);
	} else {
		belt_quantize_row(BELT_TYPE_Q8_0, src, row, (int64_t)n);
	}
}

const float *cpu_kv_get(int type, const void *cache, size_t slot, size_t n, size_t off,
			size_t len, cpu_f16_fn f16, float *tmp)
{
	const char *row = (const char *)cache + slot * belt_type_row_bytes(type, n);
	if (type == BELT_TYPE_F32)
		return (const float *)row + off;
	if (type == BELT_TYPE_F16) {
		f16((const uint16_t *)row + off, tmp, (int)len);
		return tmp;
	}
	const struct belt_block_q8_0 *b = (const struct belt_block_q8_0 *)row + off / BELT_QK8_0;
	for (size_t j = 0; j < len / BELT_QK8_0; j++, b++) {
		float d = belt_fp16_to_f32(b->d);
		for (int i = 0; i < BELT_QK8_0; i++)
			tmp[j * BELT_QK8_0 + i] = d * (float)b->qs[i];
	}
	return tmp;
}

/* q . (element off.. of row slot), hd values, without copying them. */
static float kv_dot(int type, const void *cache, size_t slot, size_t n, size_t off, int hd,
		    const float *q)
{
	const char *row = (const char *)cache + slot * belt_type_row_bytes(type, n);
	float s = 0.0f;
	if (type == BELT_TYPE_F32) {
		const float *k = (const float *)row + off;
		for (int i = 0; i < hd; i++)
			s += q[i] * k[i];
	} else if (type == BELT_TYPE_F16) {
		const uint16_t *k = (const uint16_t *)row + off;
		for (int i = 0; i < hd; i++)
			s += q[i] * cpu_fp16(k[i]);
	} else {
		const struct belt_block_q8_0 *b =
			(const struct belt_block_q8_0 *)row + off / BELT_QK8_0;
		/* eight sums side by side: a vector's lanes, in any ISA */
		for (int j = 0; j < hd / BELT_QK8_0; j++, b++, q += BELT_QK8_0) {
			float a[8] = {0};
			for (int i = 0; i < BELT_QK8_0; i += 8)
				for (int l = 0; l < 8; l++)
					a[l] += q[i + l] * (float)b->qs[i + l];
			s += cpu_fp16(b->d) * (((a[0] + a[1]) + (a[2] + a[3])) +
					       ((a[4] + a[5]) + (a[6] + a[7])));
		}
	}
	return s;
}

/* out += p * (element off.. of row slot), hd values. */
static void kv_axpy(int type, const void *cache, size_t slot, size_t n, size_t off, int hd,
		    float p, float *out)
{
	const char *row = (const char *)cache + slot * belt_type_row_bytes(type, n);
	if (type == BELT_TYPE_F32) {
		const float *v = (const float *)row + off;
		for (int i = 0; i < hd; i++)
			out[i] += p * v[i];
	} else if (type == BELT_TYPE_F16) {
		const uint16_t *v = (const uint16_t *)row + off;
		for (int i = 0; i < hd; i++)
			out[i] += p * cpu_fp16(v[i]);
	} else {
		const struct belt_block_q8_0 *b =
			(const struct belt_block_q8_0 *)row + off / BELT_QK8_0;
		for (int j = 0; j < hd / BELT_QK8_0; j++, b++, out += BELT_QK8_0) {
			float pd = p * cpu_fp16(b->d);
			for (int i = 0; i < BELT_QK8_0; i++)
				out[i] += pd * (float)b->qs[i];
		}
	}
}

void cpu_attend_kv(const struct cpu_cmd *c, const float *q, size_t kv_off, uint32_t first,
		   uint32_t n_kv, float *att, float *out, int64_t base, const uint32_t *tail)
{
	int hd = c->prm[2].i;
	size_t kv_dim = (size_t)c->prm[1].i * hd;
	float scale = c->prm[4].f, mx = -INFINITY;
	for (uint32_t t = 0; t < n_kv; t++) {
		att[t] = kv_dot(c->kv_type[0], c->p[1], first + CPU_ATT_SLOT(t), kv_dim, kv_off, hd,
				q) *
			 scale;
		mx = att[t] > mx ? att[t] : mx;
	}
	float sum = n_kv ? c->exp_sum(att, n_kv, mx) : 1.0f;
	memset(out, 0, (size_t)hd * sizeof *out);
	for (uint32_t t = 0; t < n_kv; t++)
		kv_axpy(c->kv_type[1], c->p[2], first + CPU_ATT_SLOT(t), kv_dim, kv_off, hd,
			att[t] / sum, out);
}
