/* Character classes: every literal character, [...] class and '.' is a
 * set of code points kept as sorted disjoint ranges (a negated class is
 * complemented once, here, so matching never thinks about negation).
 * Equal classes are stored once: a grammar of long literals reuses its
 * few characters. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

static int by_lo(const void *a, const void *b)
{
	const struct gb_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uint32_t hash_ranges(const struct gb_range *r, uint32_t n)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ r[i].lo) * 16777619u;
		h = (h ^ r[i].hi) * 16777619u;
	}
	return h ^ n;
}

/* The first-byte bits of class c (struct gb_class). */
static void first_bytes(const struct gb_grammar *g, uint32_t c, uint32_t first[8])
{
	memset(first, 0, 8 * sizeof *first);
	for (unsigned b = 0; b < 256; b++) {
		struct gb_utf8 p;
		if (gb_utf8_first((unsigned char)b, &p) && gb_class_meets(g, c, p.lo, p.hi))
			first[b / 32] |= 1u << (b % 32);
	}
}

/* Where class r[0..n) is in the map, or the free slot it would go. */
static uint32_t *find(const struct gb_grammar *g, const struct gb_range *r, uint32_t n)
{
	for (uint32_t i = hash_ranges(r, n) & g->class_map_mask;; i = (i + 1) & g->class_map_mask) {
		uint32_t *slot = &g->class_map[i];
		if (!*slot)
			return slot;
		const struct gb_class *c = &g->classes[*slot - 1];
		if (c->n == n && !memcmp(&g->ranges[c->off], r, n * sizeof *r))
			return slot;
	}
}

static int map_grow(struct gb_grammar *g)
{
	uint32_t cap = g->class_map ? (g->class_map_mask + 1) * 2 : 64;
	uint32_t *m = calloc(cap, sizeof *m);
	if (!m)
		return -1;
	uint32_t *old = g->class_map;
	g->class_map = m;
	g->class_map_mask = cap - 1;
	for (uint32_t c = 0; c < g->n_classes; c++)
		*find(g, &g->ranges[g->classes[c].off], g->classes[c].n) = c + 1;
	free(old);
	return 0;
}

int gb_class_add(struct gb_grammar *g, struct gb_range *r, uint32_t n, bool negate, uint32_t *id)
{
	if (n) /* r may be NULL for [^] */
		qsort(r, n, sizeof *r, by_lo);
	uint32_t k = 0; /* merge in place: overlapping or touching ranges */
	for (uint32_t i = 0; i < n; i++) {
		if (k && r[i].lo <= r[k - 1].hi + 1) {
			if (r[i].hi > r[k - 1].hi)
				r[k - 1].hi = r[i].hi;
		} else {
			r[k++] = r[i];
		}
	}
	if (!gb_grow((void **)&g->ranges, &g->cap_ranges, g->n_ranges + k + 1, sizeof *g->ranges))
		return -1;
	struct gb_range *out = &g->ranges[g->n_ranges];
	uint32_t m = 0;
	if (negate) {
		uint32_t next = 0; /* the first code point not yet placed */
		for (uint32_t i = 0; i < k; i++) {
			if (r[i].lo > next)
				out[m++] = (struct gb_range){next, r[i].lo - 1};
			next = r[i].hi + 1;
		}
		if (next <= GB_MAX_CP)
			out[m++] = (struct gb_range){next, GB_MAX_CP};
	} else {
		for (m = 0; m < k; m++)
			out[m] = r[m];
	}
	if ((g->n_classes + 1) * 2 > (g->class_map ? g->class_map_mask + 1 : 0) && map_grow(g))
		return -1;
	uint32_t *slot = find(g, out, m);
	if (*slot) {
		*id = *slot - 1;
		return 0;
	}
	if (!gb_grow((void **)&g->classes, &g->cap_classes, g->n_classes + 1, sizeof *g->classes))
		return -1;
	*id = g->n_classes;
	g->classes[*id] = (struct gb_class){.off = g->n_ranges, .n = m};
	g->n_classes++;
	g->n_ranges += m;
	*slot = *id + 1;
	first_bytes(g, *id, g->classes[*id].first);
	return 0;
}

/* The first range of class c whose hi is at least cp, or the end. */
static const struct gb_range *lower(const struct gb_grammar *g, uint32_t c, uint32_t cp)
{
	const struct gb_range *r = &g->ranges[g->classes[c].off];
	uint32_t lo = 0, hi = g->classes[c].n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r[mid].hi < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r + lo;
}

bool gb_class_has(const struct gb_grammar *g, uint32_t c, uint32_t cp)
{
	return gb_class_meets(g, c, cp, cp);
}

bool gb_class_meets(const struct gb_grammar *g, uint32_t c, uint32_t lo, uint32_t hi)
{
	const struct gb_range *r = lower(g, c, lo);
	return r < &g->ranges[g->classes[c].off + g->classes[c].n] && r->lo <= hi;
}
