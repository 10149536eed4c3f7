#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// kv_store: row r's k and v (n values each) into cache slot at_slot(r) in
// the caches' types (kv.glsl), rows a z layer each, a thread per value; a
// Q8_0 block (32 threads, n a multiple of 32) finds its scale from its
// threads' values in shared memory, its even threads storing two quants.
#define WG 128
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer K { float k[]; };
layout(binding = 1) readonly buffer V { float v[]; };
#define KV_K_BINDING 2
#define KV_V_BINDING 3
#define KV_WRITE
#include "kv.glsl"

shared vec2 kv_sh[WG]; // Q8_0: each thread's k and v

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z(), l = gl_LocalInvocationID.x;
	uint i = wg_id() * WG + l;
	if (r >= row_end())
		return;
	bool live = i < n;
	uint src = row_in(r) * n + i, dst = at_slot(0u, r) * n + i;
	vec2 x = live ? vec2(k[pc.o[0] + src], v[pc.o[1] + src]) : vec2(0.0);
	if (live && KV_K != KV_Q8_0)
		k_store(pc.o[2], dst, x.x);
	if (live && KV_V != KV_Q8_0)
		v_store(pc.o[3], dst, x.y);
	if (KV_K != KV_Q8_0 && KV_V != KV_Q8_0)
		return;
	kv_sh[l] = x;
	barrier();
	if (!live || (l & 1u) != 0u)
		return;
	uint l0 = l & ~31u;
	vec2 m = vec2(0.0);
	for (uint j = 0; j < 32u; j++)
		m = max(m, abs(kv_sh[l0 + j]));
	vec2 y = kv_sh[l + 1u];
	if (KV_K == KV_Q8_0)
		q8_store_k(pc.o[2], dst, vec2(x.x, y.x), kv_q8_scale(m.x));
	if (KV_V == KV_Q8_0)
		q8_store_v(pc.o[3], dst, vec2(x.y, y.y), kv_q8_scale(m.y));
}
