#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// repack: GGUF Q8_0/Q4_0 blocks (a half scale, then 32 int8 or 16 bytes of
// nibbles) into the backend's GPU layout: every block's quants, in block
// order, then every block's scale. One thread per block; src is a copy of
// the range that dst overwrites. Built once per type.
// bindings: 0 src, 1 dst; params: p0 blocks
#if defined(TYPE_Q8_0)
#define BW 17u // 16-bit words per block
#elif defined(TYPE_Q4_0)
#define BW 9u
#else
#error "repack.comp: define TYPE_Q8_0 or TYPE_Q4_0"
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
	d[db + nb * QW + j] = s[sb];
	[[unroll]] for (uint i = 0; i < QW; i++)
		d[db + j * QW + i] = s[sb + 1 + i];
}
