#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// embed: out = dequant(W row token_ids[at_token(r)]) for each row r of
// the pass (a z layer each); an id outside [0, rows) gives zeros. Built
// once per weight type (-DTYPE_F32 ...). Values are exactly the CPU
// backend's: d * q in float, halves converted exactly.
// With -DREPACK, Q8_0/Q4_0 weights are in the GPU layout (repack.comp):
// block b's quants at b * 16 (or 8) words, its scale at aux1 + b.
// p2 1: each value times the float p1 as well, as scale.comp multiplies
// it (the backend's fusion of a scale of the rows just embedded: Gemma's
// sqrt(n_embd)).
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer W32 { uint w32[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 1) readonly buffer Ids { int ids[]; };
layout(binding = 2) writeonly buffer O { float o[]; };
layout(binding = 2) writeonly buffer OU { uint ou[]; };
#include "quants.glsl"

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint j = wg_id() * 128 + gl_LocalInvocationID.x;
	if (j >= n || r >= row_end())
		return;
	int id = ids[pc.o[1] + at_token(r)];
	uint oo = pc.o[2] + row_in(r) * n;
	if (id < 0 || uint(id) >= pc.aux[0]) {
		o[oo + j] = 0.0;
		return;
	}
	uint row = uint(id);
	uint wo = pc.o[0];
	precise float v;
#if defined(TYPE_F32)
	if (pc.p[2] == 0u) {
		ou[oo + j] = w32[wo + row * n + j]; // bit-exact copy
		return;
	}
	v = uintBitsToFloat(w32[wo + row * n + j]);
#elif defined(TYPE_F16)
	v = half_f(uint(w16[wo + row * n + j]));
#elif defined(TYPE_BF16)
	v = bf16_f(uint(w16[wo + row * n + j]));
#elif defined(TYPE_Q8_0) && defined(REPACK)
	uint b = row * (n / 32) + j / 32, e = j % 32;
	uint u = uint(w16[wo + b * 16 + e / 2]);
	int q = (e & 1) != 0 ? int(u << 16) >> 24 : int(u << 24) >> 24;
	v = half_f(uint(w16[wo + pc.aux[1] + b])) * float(q);
#elif defined(TYPE_Q4_0) && defined(REPACK)
	uint b = row * (n / 32) + j / 32;
	uint e = j % 32, c = e & 15;
	uint u = uint(w16[wo + b * 8 + c / 2]);
	uint byte = (c & 1) != 0 ? u >> 8 : u & 255u;
	int q = int(e < 16 ? byte & 15u : byte >> 4) - 8;
	v = half_f(uint(w16[wo + pc.aux[1] + b])) * float(q);
#elif defined(KQ_BLOCK)
	v = kq_at(wo + (row * (n / KQ_BLOCK) + j / KQ_BLOCK) * KQ_WORDS, j % KQ_BLOCK);
#elif defined(TYPE_Q8_0)
	uint b = wo + (row * (n / 32) + j / 32) * 17;
	uint e = j % 32;
	uint u = uint(w16[b + 1 + e / 2]);
	int q = (e & 1) != 0 ? int(u << 16) >> 24 : int(u << 24) >> 24;
	v = half_f(uint(w16[b])) * float(q);
#elif defined(TYPE_Q4_0)
	uint b = wo + (row * (n / 32) + j / 32) * 9;
	uint e = j % 32, c = e & 15;
	uint u = uint(w16[b + 1 + c / 2]);
	uint byte = (c & 1) != 0 ? u >> 8 : u & 255u;
	int q = int(e < 16 ? byte & 15u : byte >> 4) - 8;
	v = half_f(uint(w16[b])) * float(q);
#else
#error "embed.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0, TYPE_Q4_0 or a type of quants.glsl"
#endif
	if (pc.p[2] != 0u)
		v *= pflt(1);
	o[oo + j] = v;
}
