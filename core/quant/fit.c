/* The searches for a group's scale (and min) that the K-quants run per 16
 * or 32 values, as ggml's make_qx_quants, make_q3_quants and
 * make_qkx2_quants do them, in the same float operations and order. */
#include <math.h>

#include "quant/quant_priv.h"

/* Index of the value of largest magnitude (the first of ties), or -1 if
 * all are below QUANT_EPS. */
static int absmax_at(int n, const float *x)
{
	float amax = 0.0f;
	int at = 0;
	for (int i = 0; i < n; i++)
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			at = i;
		}
	return amax < QUANT_EPS ? -1 : at;
}

static int sym_level(float iscale, float x, int nmax)
{
	return quant_clamp(quant_nearest(iscale * x), -nmax, nmax - 1);
}

/* sum w x l and sum w l^2 with w = x^2, at this iscale. */
static void sym_sums(int n, int nmax, const float *x, float iscale, float *sumlx, float *suml2)
{
	*sumlx = *suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		float l = (float)sym_level(iscale, x[i], nmax);
		float w = x[i] * x[i];
		*sumlx += w * x[i] * l;
		*suml2 += w * l * l;
	}
}

float quant_fit_sym(int n, int nmax, const float *x, int8_t *L)
{
	int at = absmax_at(n, x);
	if (at < 0) {
		memset(L, 0, (size_t)n);
		return 0.0f;
	}
	float max = x[at];
	float iscale = (float)-nmax / max, sumlx, suml2;
	for (int i = 0; i < n; i++)
		L[i] = (int8_t)(sym_level(iscale, x[i], nmax) + nmax);
	sym_sums(n, nmax, x, iscale, &sumlx, &suml2);
	float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
	float best = scale * sumlx;
	for (int is = -9; is <= 9; is++) {
		if (is == 0)
			continue;
		iscale = -((float)nmax + 0.1f * (float)is) / max;
		sym_sums(n, nmax, x, iscale, &sumlx, &suml2);
		if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
			for (int i = 0; i < n; i++)
				L[i] = (int8_t)(sym_level(iscale, x[i], nmax) + nmax);
			scale = sumlx / suml2;
			best = scale * sumlx;
		}
	}
	return scale;
}

float quant_fit_q3(int n, int nmax, const float *x, int8_t *L)
{
	int at = absmax_at(n, x);
	if (at < 0) {
		memset(L, 0, (size_t)n);
		return 0.0f;
	}
	float iscale = (float)-nmax / x[at];
	float sumlx = 0.0f, suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		int l = sym_level(iscale, x[i], nmax);
		L[i] = (int8_t)l;
		float w = x[i] * x[i];
		sumlx += w * x[i] * (float)l;
		suml2 += w * (float)l * (float)l;
	}
	/* move one level at a time while that raises sumlx^2 / suml2 */
	for (int itry = 0; itry < 5; itry++) {
		int changed = 0;
		for (int i = 0; i < n; i++) {
			float w = x[i] * x[i];
			float slx = sumlx - w * x[i] * (float)L[i];
			if (!(slx > 0.0f))
				continue;
			float sl2 = suml2 - w * (float)L[i] * (float)L[i];
			int nl = quant_clamp(quant_nearest(x[i] * sl2 / slx), -nmax, nmax - 1);
			if (nl == L[i])
				continue;
			slx += w * x[i] * (float)nl;
			sl2 += w * (float)nl * (float)nl;
			if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
				L[i] = (int8_t)nl;
				sumlx = slx;
				suml2 = sl2;
				changed++;
			}
		}
		if (!changed)
			break;
	}
	for (int i = 0; i < n; i++)
		L[i] = (int8_t)(L[i] + nmax);
	return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

static float affine_error(int n, const float *x, const float *w, const uint8_t *L, float scale,
			  float min, int mad)
{
	float err = 0.0f;
	for (int i = 0; i < n; i++) {
		float diff = scale * (float)L[i] + min - x[i];
		diff = mad ? fabsf(diff) : diff * diff;
		err += w[i] * diff;
	}
	return err;
}

float quant_fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
		       float *neg_min, float rmin, float rdelta, int nstep, int mad)
{
	float min = x[0], max = x[0];
	float sum_w = w[0], sum_x = sum_w * x[0];
	for (int i = 1; i < n; i++) {
		if (x[i] < min)
			min = x[i];
		if (x[i] > max)
			max = x[i];
		sum_w += w[i];
		sum_x += w[i] * x[i];
	}
	if (min > 0.0f)
		min = 0.0f;
	if (max == min) {
		memset(L, 0, (size_t)n);
		*neg_min = -min;
		return 0.0f;
	}
	float iscale = (float)nmax / (max - min);
	float scale = 1.0f / iscale;
	for (int i = 0; i < n; i++)
		L[i] = (uint8_t)quant_clamp(quant_nearest(iscale * (x[i] - min)), 0, nmax);
	float best = affine_error(n, x, w, L, scale, min, mad);
	uint8_t Laux[32];
	for (int is = 0; is <= nstep; is++) {
		iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
		float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
		for (int i = 0; i < n; i++) {
			int l = quant_clamp(quant_nearest(iscale * (x[i] - min)), 0, nmax);
			Laux[i] = (uint8_t)l;
			sum_l += w[i] * (float)l;
			sum_l2 += w[i] * (float)l * (float)l;
			sum_xl += w[i] * (float)l * x[i];
		}
		float D = sum_w * sum_l2 - sum_l * sum_l;
		if (!(D > 0.0f))
			continue;
		float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
		float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
		if (this_min > 0.0f) {
			this_min = 0.0f;
			this_scale = sum_xl / sum_l2;
		}
		float err = affine_error(n, x, w, Laux, this_scale, this_min, mad);
		if (err < best) {
			memcpy(L, Laux, (size_t)n);
			best = err;
			scale = this_scale;
			min = this_min;
		}
	}
	*neg_min = -min;
	return scale;
}
