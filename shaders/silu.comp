#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// silu: x = x / (1 + e^-x) in place, rows a z layer each. e^-x as exp_rr
// computes it, not a bare exp: that is exp2(y log2(e)) on most devices,
// whose product rounds y by up to 2.6e-6 relative near |y| = 88, and the
// CPU backend's expf, within an ulp, must agree within 1e-6.
layout(local_size_x = 128) in;
layout(binding = 0) buffer X { float x[]; };

// e^y = 2^n e^r, n = round(y / ln 2), r = y - n ln 2 exact with ln 2 in
// two parts (Cody and Waite: n ln2_hi has at most 24 bits). y clamped to
// [-87, 89]: below, 1 + e^y is 1 in float all the same; above, e^y
// overflows to inf, as expf's does.
float exp_rr(float y)
{
	y = clamp(y, -87.0, 89.0);
	float n = round(y * 1.44269504);
	precise float r = (y - n * 0.693145752) - n * 1.42860677e-6;
	int e = int(n);
	// 2^e as two normal floats: e lies in [-126, 129]
	float s0 = uintBitsToFloat(uint(e / 2 + 127) << 23);
	float s1 = uintBitsToFloat(uint(e - e / 2 + 127) << 23);
	return exp(r) * s0 * s1;
}

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	i += pc.o[0] + row_in(r) * n;
	float v = x[i];
	x[i] = v / (1.0 + exp_rr(-v));
}
