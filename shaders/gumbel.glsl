// Gumbel noise of the sampler (doc/samplers.md, step 4), bit for bit the
// CPU sampler's up to log: g = -log(-log(u)), u from the first word of
// Philox4x32-10 (plugins/sampler-gumbel/philox.h) with counter
// (i, pos, 0, 0) and key (k0, k1). Shared by sample_gumbel.comp and the
// backend's gumbel+argmax fusion (argmax.comp -DGUMBEL).

uint philox_x0(uint c0, uint c1, uint k0, uint k1)
{
	uint c2 = 0u, c3 = 0u;
	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k0 += 0x9E3779B9u;
			k1 += 0xBB67AE85u;
		}
		uint hi0, lo0, hi1, lo1;
		umulExtended(0xD2511F53u, c0, hi0, lo0);
		umulExtended(0xCD9E8D57u, c2, hi1, lo1);
		c0 = hi1 ^ c1 ^ k0;
		c2 = hi0 ^ c3 ^ k1;
		c1 = lo1;
		c3 = lo0;
	}
	return c0;
}

// v * inv_temp + g_i, each step rounded (no fused multiply-add)
float gumbel_perturb(float v, float inv_temp, uint i, uint pos, uint k0, uint k1)
{
	uint x = philox_x0(i, pos, k0, k1);
	precise float u = (float(x >> 9) + 0.5) * (1.0 / 8388608.0);
	precise float g = -log(-log(u));
	precise float s = v * inv_temp;
	s = s + g;
	return s;
}
