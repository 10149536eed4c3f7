/* The masks of the last GB_CACHED sets of stacks: generation keeps coming
 * back to the same stacks (every token inside a string, a number, a list
 * item), whose mask is then a copy. A set is known by its stack ids
 * (hash-consing made equal stacks equal ids) and the part of a character
 * it has read. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

/* The cache's key for the stacks set[0..n) with part: the part, then the
 * stack ids sorted (hash-consing made equal stacks equal ids). */
static int make_key(struct gb_matcher *m, const uint32_t *set, uint32_t n, const struct gb_utf8 *p)
{
	struct gb_vec *k = &m->key;
	struct gb_utf8 none = {0};
	k->n = 0;
	if (!p->need) /* between characters: the last one read makes no difference */
		p = &none;
	if (gb_vec_push(k, p->value) || gb_vec_push(k, p->lo) || gb_vec_push(k, p->hi) ||
	    gb_vec_push(k, (uint32_t)p->need | (uint32_t)p->nlo << 8 | (uint32_t)p->nhi << 16))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (gb_vec_push(k, set[i]))
			return -1;
		for (uint32_t j = k->n - 1; j > 4 && k->v[j - 1] > k->v[j]; j--) {
			uint32_t x = k->v[j];
			k->v[j] = k->v[j - 1];
			k->v[j - 1] = x;
		}
	}
	return 0;
}

int gb_mask_of(struct gb_matcher *m, const uint32_t *set, uint32_t n, const struct gb_utf8 *p,
		   uint32_t *mask)
{
	size_t bytes = (size_t)m->words * sizeof *mask;
	if (make_key(m, set, n, p))
		return -1;
	const struct gb_vec *k = &m->key;
	struct gb_cached *old = &m->cache[0];
	m->clock++;
	for (int i = 0; i < GB_CACHED; i++) {
		struct gb_cached *c = &m->cache[i];
		if (c->used && c->n_key == k->n && !memcmp(c->key, k->v, k->n * sizeof *k->v)) {
			memcpy(mask, c->mask, bytes);
			c->used = m->clock;
			return 0;
		}
		if (c->used < old->used)
			old = c;
	}
	if (gb_walk(m, set, n, p, mask))
		return -1;
	if (old->cap_key < k->n) {
		uint32_t *key = realloc(old->key, k->n * sizeof *key);
		if (!key)
			return 0; /* not kept: no harm */
		old->key = key;
		old->cap_key = k->n;
	}
	if (!old->mask && !(old->mask = malloc(bytes)))
		return 0;
	memcpy(old->key, k->v, k->n * sizeof *k->v);
	memcpy(old->mask, mask, bytes);
	old->n_key = k->n;
	old->used = m->clock;
	return 0;
}
