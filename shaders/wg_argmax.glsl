// Drawing a token: the subgroup's and the workgroup's best (value, index)
// pair and the end-of-generation check after it. Shared by argmax.comp
// and sample_threshold.comp -DARGMAX.

// one pair per subgroup (at least 4 lanes: at most 64 subgroups)
shared float best_v[64];
shared uint best_i[64];

// Whether (v, i) beats (cv, ci): the larger value, the lower index on
// ties; index 0xffffffff is no candidate.
bool better(float v, uint i, float cv, uint ci)
{
	return i != 0xffffffffu &&
	       (ci == 0xffffffffu || v > cv || (v == cv && i < ci));
}

// Every lane's pair in, the subgroup's best out, in every lane: its
// largest value, then its lowest index with that value.
void sg_argmax(inout float v, inout uint i)
{
	bool ok = i != 0xffffffffu;
	float mv = subgroupMax(ok ? v : uintBitsToFloat(0xff800000u));
	i = subgroupMin(ok && v == mv ? i : 0xffffffffu);
	v = mv;
}

// Every thread's pair in, the workgroup's best out, in every thread: each
// subgroup's best, then the best of those. Call it again only after a
// barrier.
void wg_argmax(inout float v, inout uint i)
{
	sg_argmax(v, i);
	if (subgroupElect()) {
		best_v[gl_SubgroupID] = v;
		best_i[gl_SubgroupID] = i;
	}
	barrier();
	v = best_v[0];
	i = best_i[0];
	for (uint q = 1; q < gl_NumSubgroups; q++)
		if (better(best_v[q], best_i[q], v, i)) {
			v = best_v[q];
			i = best_i[q];
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
