#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// logit_mask (doc/ops.md): logits of the tokens whose bit of the mask is
// clear become -inf, so that the sampler's ops or argmax after it pick
// among the tokens a grammar allows. The host writes the mask (bit
// i % 32 of word i / 32 for token i) before the run. A thread per logit.
// bindings: 0 logits, 1 mask; params: n.
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) buffer L { float l[]; };
layout(binding = 1) readonly buffer M { uint mask[]; };

void main()
{
	STOP_CHECK();
	uint i = gl_GlobalInvocationID.x, n = pc.p[0];
	if (i < n && (mask[pc.o[1] + i / 32u] >> (i % 32u) & 1u) == 0u)
		l[pc.o[0] + i] = uintBitsToFloat(0xff800000u); // -inf
}
