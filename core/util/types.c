/* Tensor type table (block sizes as GGUF defines them) and float16/bfloat16
 * conversions. */
#include <string.h>

#include "belt/types.h"

struct type_info {
	const char *name;
	unsigned block;
	unsigned bytes;
};

static const struct type_info types[BELT_TYPE_COUNT] = {
	[BELT_TYPE_F32] = {"f32", 1, 4},
	[BELT_TYPE_F16] = {"f16", 1, 2},
	[BELT_TYPE_Q4_0] = {"q4_0", 32, 18},
	[BELT_TYPE_Q4_1] = {"q4_1", 32, 20},
	[BELT_TYPE_Q5_0] = {"q5_0", 32, 22},
	[BELT_TYPE_Q5_1] = {"q5_1", 32, 24},
	[BELT_TYPE_Q8_0] = {"q8_0", 32, 34},
	[BELT_TYPE_Q8_1] = {"q8_1", 32, 36},
	[BELT_TYPE_Q2_K] = {"q2_k", 256, 84},
	[BELT_TYPE_Q3_K] = {"q3_k", 256, 110},
	[BELT_TYPE_Q4_K] = {"q4_k", 256, 144},
	[BELT_TYPE_Q5_K] = {"q5_k", 256, 176},
	[BELT_TYPE_Q6_K] = {"q6_k", 256, 210},
	[BELT_TYPE_Q8_K] = {"q8_k", 256, 292},
	[BELT_TYPE_IQ2_XXS] = {"iq2_xxs", 256, 66},
	[BELT_TYPE_IQ2_XS] = {"iq2_xs", 256, 74},
	[BELT_TYPE_IQ3_XXS] = {"iq3_xxs", 256, 98},
	[BELT_TYPE_IQ1_S] = {"iq1_s", 256, 50},
	[BELT_TYPE_IQ4_NL] = {"iq4_nl", 32, 18},
	[BELT_TYPE_IQ3_S] = {"iq3_s", 256, 110},
	[BELT_TYPE_IQ2_S] = {"iq2_s", 256, 82},
	[BELT_TYPE_IQ4_XS] = {"iq4_xs", 256, 136},
	[BELT_TYPE_I8] = {"i8", 1, 1},
	[BELT_TYPE_I16] = {"i16", 1, 2},
	[BELT_TYPE_I32] = {"i32", 1, 4},
	[BELT_TYPE_I64] = {"i64", 1, 8},
	[BELT_TYPE_F64] = {"f64", 1, 8},
	[BELT_TYPE_IQ1_M] = {"iq1_m", 256, 56},
	[BELT_TYPE_BF16] = {"bf16", 1, 2},
	[BELT_TYPE_TQ1_0] = {"tq1_0", 256, 54},
	[BELT_TYPE_TQ2_0] = {"tq2_0", 256, 66},
	[BELT_TYPE_MXFP4] = {"mxfp4", 32, 17},
};

int belt_type_known(int t)
{
	return t >= 0 && t < BELT_TYPE_COUNT && types[t].name != NULL;
}

const char *belt_type_name(int t)
{
	return belt_type_known(t) ? types[t].name : "?";
}

size_t belt_type_block(int t)
{
	return belt_type_known(t) ? types[t].block : 0;
}

size_t belt_type_block_bytes(int t)
{
	return belt_type_known(t) ? types[t].bytes : 0;
}

size_t belt_type_row_bytes(int t, uint64_t n)
{
	if (!belt_type_known(t) || n % types[t].block)
		return 0;
	return (size_t)(n / types[t].block) * types[t].bytes;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

float belt_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	if (exp == 0x1f) /* inf / nan */
		return bits_f32(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		/* zero or subnormal: man * 2^-24 */
		float v = (float)man * (1.0f / 16777216.0f);
		return sign ? -v : v;
	}
	return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t belt_f32_to_fp16(float f)
{
	uint32_t u = f32_bits(f);
	uint32_t sign = (u >> 16) & 0x8000;
	uint32_t a = u & 0x7fffffffu;
	if (a >= 0x7f800000u) /* inf or nan */
		return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
	if (a >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
		return (uint16_t)(sign | 0x7c00);
	if (a < 0x38800000u) {
		/* result is subnormal or zero: round a * 2^24 to an integer */
		float v = bits_f32(a) * 16777216.0f;
		uint32_t m = (uint32_t)v;
		float rem = v - (float)m;
		if (rem > 0.5f || (rem == 0.5f && (m & 1)))
			m++;
		return (uint16_t)(sign | m);
	}
	/* normal: rebias and round the 13 dropped bits to nearest even */
	uint32_t r = a - 0x38000000u;
	uint32_t half = r >> 13;
	uint32_t rest = r & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
		half++;
	return (uint16_t)(sign | half);
}

float belt_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

uint16_t belt_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* nan stays nan */
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}
