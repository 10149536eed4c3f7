/* The quantizer of each type, and the targets belt quantize accepts with
 * the general.file_type llama.cpp writes for each. */
#include <strings.h>

#include "belt/quant.h"
#include "quant/quant_priv.h"

static const quant_row_fn quantizers[BELT_TYPE_COUNT] = {
	[BELT_TYPE_Q4_0] = quant_q4_0,
	[BELT_TYPE_Q4_1] = quant_q4_1,
	[BELT_TYPE_Q5_0] = quant_q5_0,
	[BELT_TYPE_Q5_1] = quant_q5_1,
	[BELT_TYPE_Q8_0] = quant_q8_0,
	[BELT_TYPE_Q2_K] = quant_q2_k,
	[BELT_TYPE_Q3_K] = quant_q3_k,
	[BELT_TYPE_Q4_K] = quant_q4_k,
	[BELT_TYPE_Q5_K] = quant_q5_k,
	[BELT_TYPE_Q6_K] = quant_q6_k,
	[BELT_TYPE_IQ4_NL] = quant_iq4_nl,
	[BELT_TYPE_IQ4_XS] = quant_iq4_xs,
};

bool belt_quant_supported(int t)
{
	return t >= 0 && t < BELT_TYPE_COUNT && quantizers[t];
}

int belt_quantize_row(int t, const float *x, void *dst, int64_t n)
{
	if (!belt_quant_supported(t) || n < 0 || n % (int64_t)belt_type_block(t))
		return -1;
	quantizers[t](x, dst, n);
	return 0;
}

/* llama.cpp's llama_ftype numbers. Q3_K, Q4_K and Q5_K are the _S mixes
 * (llama-quantize's bare Q4_K means Q4_K_M: belt names that one in full). */
static const struct belt_quant_target targets[] = {
	{"Q4_0", BELT_TYPE_Q4_0, 2},	 {"Q4_1", BELT_TYPE_Q4_1, 3},
	{"Q5_0", BELT_TYPE_Q5_0, 8},	 {"Q5_1", BELT_TYPE_Q5_1, 9},
	{"Q8_0", BELT_TYPE_Q8_0, 7},	 {"Q2_K", BELT_TYPE_Q2_K, 10},
	{"Q3_K", BELT_TYPE_Q3_K, 11},	 {"Q4_K", BELT_TYPE_Q4_K, 14},
	{"Q5_K", BELT_TYPE_Q5_K, 16},	 {"Q6_K", BELT_TYPE_Q6_K, 18},
	{"IQ4_NL", BELT_TYPE_IQ4_NL, 25}, {"IQ4_XS", BELT_TYPE_IQ4_XS, 30},
	{"Q4_K_M", BELT_TYPE_Q4_K, 15},	 {"Q5_K_M", BELT_TYPE_Q5_K, 17},
	{"Q3_K_S", BELT_TYPE_Q3_K, 11},	 {"Q4_K_S", BELT_TYPE_Q4_K, 14},
	{"Q5_K_S", BELT_TYPE_Q5_K, 16},
};

const struct belt_quant_target *belt_quant_target_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof targets / sizeof *targets; i++)
		if (!strcasecmp(name, targets[i].name))
			return &targets[i];
	return NULL;
}

const char *belt_quant_target_names(void)
{
	return "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, "
	       "Q4_K_M, Q5_K_M, Q3_K_S, Q4_K_S, Q5_K_S";
}
