/* belt/types.h: tensor element types as GGUF numbers them, and their sizes. */
#ifndef BELT_TYPES_H
#define BELT_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* GGUF/ggml tensor type ids; values are the on-disk numbers. */
enum belt_type {
	BELT_TYPE_F32 = 0,
	BELT_TYPE_F16 = 1,
	BELT_TYPE_Q4_0 = 2,
	BELT_TYPE_Q4_1 = 3,
	BELT_TYPE_Q5_0 = 6,
	BELT_TYPE_Q5_1 = 7,
	BELT_TYPE_Q8_0 = 8,
	BELT_TYPE_Q8_1 = 9,
	BELT_TYPE_Q2_K = 10,
	BELT_TYPE_Q3_K = 11,
	BELT_TYPE_Q4_K = 12,
	BELT_TYPE_Q5_K = 13,
	BELT_TYPE_Q6_K = 14,
	BELT_TYPE_Q8_K = 15,
	BELT_TYPE_IQ2_XXS = 16,
	BELT_TYPE_IQ2_XS = 17,
	BELT_TYPE_IQ3_XXS = 18,
	BELT_TYPE_IQ1_S = 19,
	BELT_TYPE_IQ4_NL = 20,
	BELT_TYPE_IQ3_S = 21,
	BELT_TYPE_IQ2_S = 22,
	BELT_TYPE_IQ4_XS = 23,
	BELT_TYPE_I8 = 24,
	BELT_TYPE_I16 = 25,
	BELT_TYPE_I32 = 26,
	BELT_TYPE_I64 = 27,
	BELT_TYPE_F64 = 28,
	BELT_TYPE_IQ1_M = 29,
	BELT_TYPE_BF16 = 30,
	BELT_TYPE_TQ1_0 = 34,
	BELT_TYPE_TQ2_0 = 35,
	BELT_TYPE_MXFP4 = 39,
	BELT_TYPE_COUNT = 40,
	/* Not a storage type: a kernel that accepts any weight type. */
	BELT_TYPE_ANY = -1
};

/* Q8_0: 32 int8 weights sharing one fp16 scale: w = d * q. */
#define BELT_QK8_0 32
struct belt_block_q8_0 {
	uint16_t d;
	int8_t qs[BELT_QK8_0];
};

/* Q4_0: 32 4-bit weights, one fp16 scale: w = d * (q - 8); low nibbles
 * hold elements 0..15, high nibbles 16..31. */
#define BELT_QK4_0 32
struct belt_block_q4_0 {
	uint16_t d;
	uint8_t qs[BELT_QK4_0 / 2];
};

/* True if t is a type id GGUF defines (sizes known), whether or not any
 * backend computes with it. */
int belt_type_known(int t);
/* Short name ("f16", "q8_0"); "?" for an unknown id. */
const char *belt_type_name(int t);
/* Elements per block (1 for plain types); 0 for an unknown id. */
size_t belt_type_block(int t);
/* Bytes per block; 0 for an unknown id. */
size_t belt_type_block_bytes(int t);
/* Bytes of a row of n elements, or 0 if n is not a whole number of blocks
 * or the type is unknown. */
size_t belt_type_row_bytes(int t, uint64_t n);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float belt_fp16_to_f32(uint16_t h);
uint16_t belt_f32_to_fp16(float f);
float belt_bf16_to_f32(uint16_t h);
uint16_t belt_f32_to_bf16(float f);

#endif
