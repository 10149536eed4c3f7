/* Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and
 * Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC11, 2011): ten
 * rounds of two 32x32->64 multiplications whose high halves are xored
 * with the other words and the round key; the key is bumped by a Weyl
 * sequence between rounds. A pure function of (counter, key), so any
 * token's noise can be computed on its own, on the CPU or a GPU. */
#ifndef BELT_SAMPLER_PHILOX_H
#define BELT_SAMPLER_PHILOX_H

#include <stdint.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* out = Philox4x32-10(ctr, key). */
static inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
				 uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		if (r) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
		uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
		uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		c1 = (uint32_t)p1;
		c3 = (uint32_t)p0;
		c0 = n0;
		c2 = n2;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

#endif
