// matmul_load.glsl: how the batched matrix products (matmul.comp,
// matmul_cm.comp) read a step of BK = 16 columns of a weight row and of a
// row of x, and convert the weights to floats. The includer defines BK
// (16), the TYPE_ macro and the bindings w16, w4, wf, wf4, x, x4.
// A thread's weight row of a step as loaded (converted when staged): its
// BK values, or (Q8_0, Q4_0) the block's quants that hold them and the
// block's scale.
#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
// the IQ4 codebook as floats: a shared load per weight, not selects
shared float iq4_sh[16];
#define KQ_IQ4_TABLE iq4_sh
#endif
#include "quants.glsl"
#if defined(TYPE_F32) || defined(KQ_BLOCK)
struct WR { vec4 v[4]; };
#elif defined(TYPE_F16) || defined(TYPE_BF16)
struct WR { uvec4 q[2]; };
#elif defined(TYPE_Q8_0)
struct WR { uvec4 q; uint d; };
#define BW 17u // 16-bit words per GGUF block
#elif defined(TYPE_Q4_0)
struct WR { uvec4 q; uint d; };
#define BW 9u
#else
#error "matmul.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0, TYPE_Q4_0 or a type of quants.glsl"
#endif

// how W is read; passed by value (private globals are slow on lavapipe)
struct WS {
	uint wo, k, m;
	bool al; // 16-byte loads of whole steps (F32, F16, BF16)
};

WR load_w(WS s, uint row, uint k0)
{
	WR w;
#if defined(TYPE_F32)
	[[unroll]] for (uint i = 0; i < 4u; i++)
		w.v[i] = vec4(0.0);
	if (row >= s.m || k0 >= s.k)
		return w;
	uint i = s.wo + row * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		[[unroll]] for (uint u = 0; u < 4u; u++)
			w.v[u] = wf4[i / 4u + u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e++)
			w.v[e / 4u][e % 4u] = k0 + e < s.k ? wf[i + e] : 0.0;
	}
#elif defined(KQ_BLOCK)
	// dequantized here: a step (BK = 16) is one run of a block
	[[unroll]] for (uint i = 0; i < 4u; i++)
		w.v[i] = vec4(0.0);
	if (row >= s.m || k0 >= s.k)
		return w;
	float v[16];
	kq_group16(s.wo + (row * (s.k / KQ_BLOCK) + k0 / KQ_BLOCK) * KQ_WORDS, (k0 % KQ_BLOCK) / 16u, v);
	[[unroll]] for (uint e = 0; e < BK; e++)
		w.v[e / 4u][e % 4u] = v[e];
#elif defined(TYPE_F16) || defined(TYPE_BF16)
	w.q[0] = uvec4(0u);
	w.q[1] = uvec4(0u);
	if (row >= s.m || k0 >= s.k)
		return w;
	uint i = s.wo + row * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		w.q[0] = w4[i / 8u];
		w.q[1] = w4[i / 8u + 1u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e += 2u) {
			uint lo = k0 + e < s.k ? uint(w16[i + e]) : 0u;
			uint hi = k0 + e + 1u < s.k ? uint(w16[i + e + 1u]) : 0u;
			w.q[e / 8u][(e / 2u) % 4u] = lo | hi << 16;
		}
	}
#else
	w.q = uvec4(0u);
	w.d = 0u;
	if (row >= s.m || k0 >= s.k)
		return w;
	uint blk = row * (s.k / 32u) + k0 / 32u, h = (k0 / 16u) % 2u;
#if defined(REPACK) && defined(TYPE_Q8_0)
	w.q = w4[s.wo / 8u + blk * 2u + h]; // quants 16 h .. 16 h + 15
	w.d = uint(w16[s.wo + pc.aux[1] + blk]);
#elif defined(REPACK)
	w.q = w4[s.wo / 8u + blk]; // all 32 (h picks the nibbles)
	w.d = uint(w16[s.wo + pc.aux[1] + blk]);
#else
	uint b = s.wo + blk * BW, q = b + 1u;
#if defined(TYPE_Q8_0)
	q += 8u * h;
#endif
	uint u[8];
	[[unroll]] for (uint e = 0; e < 8u; e++)
		u[e] = uint(w16[q + e]);
	w.q = uvec4(u[0] | u[1] << 16, u[2] | u[3] << 16, u[4] | u[5] << 16,
		    u[6] | u[7] << 16);
	w.d = uint(w16[b]);
#endif
#endif
	return w;
}

// A thread's weights of step k0 as loaded, converted to floats.
void conv_w(WR w, uint k0, out float v[BK])
{
#if defined(TYPE_F32) || defined(KQ_BLOCK)
	[[unroll]] for (uint e = 0; e < BK; e++)
		v[e] = w.v[e / 4u][e % 4u];
#elif defined(TYPE_F16)
	[[unroll]] for (uint e = 0; e < BK; e += 2u) {
		vec2 f = unpackHalf2x16(w.q[e / 8u][(e / 2u) % 4u]);
		v[e] = f.x;
		v[e + 1u] = f.y;
	}
#elif defined(TYPE_BF16)
	[[unroll]] for (uint e = 0; e < BK; e += 2u) {
		uint u = w.q[e / 8u][(e / 2u) % 4u];
		v[e] = uintBitsToFloat(u << 16);
		v[e + 1u] = uintBitsToFloat(u & 0xffff0000u);
	}
#elif defined(TYPE_Q8_0)
	float d = half_f(w.d);
	[[unroll]] for (uint e = 0; e < BK; e++) {
		int q = int(w.q[e / 4u] << (24u - 8u * (e % 4u))) >> 24;
		v[e] = d * float(q);
	}
#else
	// byte i holds element i (low nibble) and 16 + i (high): the step's
	// half of the block is one or the other
	float d = half_f(w.d);
	uint sh = 4u * ((k0 / 16u) % 2u);
	[[unroll]] for (uint e = 0; e < BK; e++) {
		uint n = (w.q[e / 4u] >> (8u * (e % 4u) + sh)) & 15u;
		v[e] = d * float(int(n) - 8);
	}
#endif
}

// A thread's row of x in a step: BK values, zeros past the run's rows and k.
struct XS {
	uint xo, k, rend;
	bool al;
};

void load_x(XS s, uint row, uint k0, out vec4 v[4])
{
	[[unroll]] for (uint u = 0; u < 4u; u++)
		v[u] = vec4(0.0);
	if (row >= s.rend)
		return;
	uint i = s.xo + row_in(row) * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		[[unroll]] for (uint u = 0; u < 4u; u++)
			v[u] = x4[i / 4u + u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e++)
			v[e / 4u][e % 4u] = k0 + e < s.k ? x[i + e] : 0.0;
	}
}

