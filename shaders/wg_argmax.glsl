// Drawing a token: the workgroup's best (value, index) pair and the
// end-of-generation check after it. Shared by argmax.comp and
// sample_threshold.comp -DARGMAX, which define WG before including it.

shared float best_v[WG];
shared uint best_i[WG];

// Whether (v, i) beats (cv, ci): the larger value, the lower index on
// ties; index 0xffffffff is no candidate.
bool better(float v, uint i, float cv, uint ci)
{
	return i != 0xffffffffu &&
	       (ci == 0xffffffffu || v > cv || (v == cv && i < ci));
}

// Every thread's pair in; the best lands in best_v[0], best_i[0], which
// every thread may read after. Call it again only after a barrier.
void wg_argmax(float v, uint i)
{
	uint tid = gl_LocalInvocationID.x;
	best_v[tid] = v;
	best_i[tid] = i;
	barrier();
	[[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
		if (tid < s && better(best_v[tid + s], best_i[tid + s], best_v[tid],
				      best_i[tid])) {
			best_v[tid] = best_v[tid + s];
			best_i[tid] = best_i[tid + s];
		}
		barrier();
	}
}

// With early exit on (meta stop_on), a drawn end-of-generation id (p7 of
// them in p8..p15) sets the stop word: the run's later commands return at
// once.
void stop_if_eog(uint tok)
{
	if (meta.stop_on != 0u)
		for (uint e = 0; e < min(pc.p[7], 8u); e++)
			if (tok == pc.p[8 + e])
				worku[0] = 1u;
}
