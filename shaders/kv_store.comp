#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// kv_store: row r's k and v (n values each) into cache slot at_slot(r),
// rows a z layer each.
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer K { float k[]; };
layout(binding = 1) readonly buffer V { float v[]; };
layout(binding = 2) writeonly buffer KC { float kc[]; };
layout(binding = 3) writeonly buffer VC { float vc[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	uint src = row_in(r) * n + i, dst = at_slot(0u, r) * n + i;
	kc[pc.o[2] + dst] = k[pc.o[0] + src];
	vc[pc.o[3] + dst] = v[pc.o[1] + src];
}
