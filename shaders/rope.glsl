// Rotary embedding's sines and cosines, shared by rope_kv.comp and
// matvec_fused.comp's rope epilogue (which must rotate exactly as
// rope_kv does).

// sin and cos to float accuracy for any angle the positions reach: a
// Cody-Waite reduction by pi/2 and cephes' polynomials, since GLSL's
// sin/cos need only be good to 2^-11 on [-pi, pi].
vec2 sincos_f(float a)
{
	precise float kq = round(a * 0.63661977236758134);
	precise float r = ((a - kq * 1.5703125) - kq * 4.837512969970703125e-4)
			  - kq * 7.54978995489188216e-8;
	float z = r * r;
	float s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
	float c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z
		   + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
	int qd = int(kq) & 3;
	if (qd == 0) return vec2(s, c);
	if (qd == 1) return vec2(c, -s);
	if (qd == 2) return vec2(-s, -c);
	return vec2(-c, s);
}
