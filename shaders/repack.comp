#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// repack: GGUF Q8_0/Q4_0 blocks (a half scale, then 32 int8 or 16 bytes of
// nibbles) into the backend's GPU layout: every block's quants, in block
// order, then every block's scale. Q6_K (128 bytes of low nibbles, 64 of
// high pairs, 16 scale bytes, d): every block's 192 quant bytes, then
// every block's scales, then every block's d. One thread per block; src is
// a copy of the range that dst overwrites. Built once per type.
// bindings: 0 src, 1 dst; params: p0 blocks
#if defined(TYPE_Q8_0)
#define BW 17u // 16-bit words per block
#elif defined(TYPE_Q4_0)
#define BW 9u
#elif defined(TYPE_Q6_K)
#define BW 105u
#else
#error "repack.comp: define TYPE_Q8_0, TYPE_Q4_0 or TYPE_Q6_K"
#endif
#define QW (BW - 1u)
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer S { uint16_t s[]; };
layout(binding = 1) writeonly buffer D { uint16_t d[]; };

void main()
{
	uint nb = pc.p[0];
	uint j = wg_id() * 128 + gl_LocalInvocationID.x;
	if (j >= nb)
		return;
	uint sb = pc.o[0] + j * BW, db = pc.o[1];
#if defined(TYPE_Q6_K)
	[[unroll]] for (uint i = 0; i < 96u; i++)
		d[db + j * 96u + i] = s[sb + i];
	[[unroll]] for (uint i = 0; i < 8u; i++)
		d[db + nb * 96u + j * 8u + i] = s[sb + 96u + i];
	d[db + nb * 104u + j] = s[sb + 104u];
	return;
#endif
	d[db + nb * QW + j] = s[sb];
	[[unroll]] for (uint i = 0; i < QW; i++)
		d[db + j * QW + i] = s[sb + 1 + i];
}
