/* Parse stacks as hash-consed frames (gbnf.h): a stack is the id of its
 * top frame, equal stacks have equal ids, and stacks share their bottoms,
 * so a set of stacks is a short list of integers and deduplicating it is
 * one mark per id.
 *
 * What follows a top frame once its character is read depends on that
 * frame alone, so it is computed once (expand) and remembered: reading a
 * character is then a lookup. Expansion walks from the element after the
 * character: a rule reference pushes a frame for where to come back
 * (none when the reference ends its alternative: x* and other right
 * recursion run in constant stack), an alternative's end pops one, a
 * character is a new top. Each (position, stack) pair is taken once per
 * expansion, so ambiguity and empty loops do not multiply the work;
 * analyse.c has refused the grammars whose expansion would not end. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

#define GC_MIN (1u << 16)
#define EXPAND_MAX (1u << 16) /* (position, stack) pairs in one expansion */

static uint32_t hash2(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static uint32_t *slot_of(struct gb_stacks *s, uint32_t pos, uint32_t parent)
{
	for (uint32_t i = hash2(pos, parent) & s->slot_mask;; i = (i + 1) & s->slot_mask) {
		uint32_t *slot = &s->slot[i];
		if (!*slot || (s->f[*slot].pos == pos && s->f[*slot].parent == parent))
			return slot;
	}
}

static int rehash(struct gb_stacks *s, uint32_t cap)
{
	uint32_t *slot = calloc(cap, sizeof *slot);
	if (!slot)
		return -1;
	free(s->slot);
	s->slot = slot;
	s->slot_mask = cap - 1;
	for (uint32_t i = 1; i < s->n; i++)
		*slot_of(s, s->f[i].pos, s->f[i].parent) = i;
	return 0;
}

/* The frame (pos, parent), made if new. */
static int intern(struct gb_stacks *s, uint32_t pos, uint32_t parent, uint32_t *id)
{
	uint32_t *slot = slot_of(s, pos, parent);
	if (*slot) {
		*id = *slot;
		return 0;
	}
	if ((s->n + 1) * 2 > s->slot_mask + 1) {
		if (rehash(s, (s->slot_mask + 1) * 2))
			return -1;
		slot = slot_of(s, pos, parent);
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap * 2;
		struct gb_frame *f = realloc(s->f, cap * sizeof *f);
		if (f)
			s->f = f;
		uint32_t *at = f ? realloc(s->succ_at, cap * sizeof *at) : NULL;
		if (at)
			s->succ_at = at;
		uint32_t *sn = at ? realloc(s->succ_n, cap * sizeof *sn) : NULL;
		if (sn)
			s->succ_n = sn;
		uint32_t *mark = sn ? realloc(s->mark, cap * sizeof *mark) : NULL;
		if (mark)
			s->mark = mark;
		uint8_t *loops = mark ? realloc(s->loops, cap * sizeof *loops) : NULL;
		if (!loops)
			return -1;
		s->loops = loops;
		s->cap = cap;
	}
	*id = s->n++;
	s->f[*id] = (struct gb_frame){pos, parent};
	s->succ_at[*id] = GB_NONE;
	s->succ_n[*id] = 0;
	s->mark[*id] = 0;
	s->loops[*id] = 0;
	*slot = *id;
	return 0;
}

int gb_stacks_init(struct gb_stacks *s, const struct gb_grammar *g)
{
	*s = (struct gb_stacks){.g = g, .cap = 1024, .gc_at = GC_MIN};
	s->f = malloc(s->cap * sizeof *s->f);
	s->succ_at = malloc(s->cap * sizeof *s->succ_at);
	s->succ_n = malloc(s->cap * sizeof *s->succ_n);
	s->mark = calloc(s->cap, sizeof *s->mark);
	s->loops = calloc(s->cap, sizeof *s->loops);
	if (!s->f || !s->succ_at || !s->succ_n || !s->mark || !s->loops || rehash(s, 2048))
		return -1;
	s->f[0] = (struct gb_frame){GB_NONE, 0}; /* the empty stack */
	s->succ_at[0] = GB_NONE;
	s->succ_n[0] = 0;
	s->loops[0] = 1;
	s->n = 1;
	return 0;
}

void gb_stacks_free(struct gb_stacks *s)
{
	free(s->f);
	free(s->slot);
	free(s->succ_at);
	free(s->succ_n);
	free(s->succ);
	free(s->mark);
	free(s->loops);
	free(s->work);
	free(s->seen);
	*s = (struct gb_stacks){0};
}

/* Whether (pos, parent) is new to this expansion (and now seen). */
static int see(struct gb_stacks *s, uint32_t pos, uint32_t parent, bool *fresh)
{
	if ((s->seen_n + 1) * 2 > (s->seen ? s->seen_mask + 1 : 0)) {
		uint32_t cap = s->seen ? (s->seen_mask + 1) * 2 : 256;
		uint64_t *old = s->seen, *t = malloc(cap * sizeof *t);
		uint32_t old_cap = s->seen ? s->seen_mask + 1 : 0;
		if (!t)
			return -1;
		memset(t, 0xff, cap * sizeof *t);
		s->seen = t;
		s->seen_mask = cap - 1;
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i] != UINT64_MAX) {
				uint32_t j = hash2((uint32_t)(old[i] >> 32), (uint32_t)old[i]) & s->seen_mask;
				while (t[j] != UINT64_MAX)
					j = (j + 1) & s->seen_mask;
				t[j] = old[i];
			}
		free(old);
	}
	uint64_t key = (uint64_t)pos << 32 | parent;
	for (uint32_t i = hash2(pos, parent) & s->seen_mask;; i = (i + 1) & s->seen_mask) {
		if (s->seen[i] == key) {
			*fresh = false;
			return 0;
		}
		if (s->seen[i] == UINT64_MAX) {
			s->seen[i] = key;
			s->seen_n++;
			*fresh = true;
			return 0;
		}
	}
}

static int out_push(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
	if (!gb_grow((void **)v, cap, *n + 1, sizeof **v))
		return -1;
	(*v)[(*n)++] = x;
	return 0;
}

/* The stacks that (pos, parent) stands for once its references are
 * expanded and its ends popped: each a top frame, or 0 (the sentence may
 * end), appended to v once each. */
static int expand(struct gb_stacks *s, uint32_t pos, uint32_t parent, uint32_t **v, uint32_t *n,
		  uint32_t *cap)
{
	const struct gb_grammar *g = s->g;
	if (s->seen_n) { /* forget the last expansion's pairs */
		if (s->seen_mask >= 4096 && s->seen_mask / 8 > s->seen_n) {
			free(s->seen); /* one big expansion: clearing it each time would cost */
			s->seen = NULL;
		} else {
			memset(s->seen, 0xff, ((size_t)s->seen_mask + 1) * sizeof *s->seen);
		}
		s->seen_n = 0;
	}
	uint32_t n_work = 0, taken = 0, first = *n;
	bool ends = false;
	if (!gb_grow((void **)&s->work, &s->cap_work, 1, sizeof *s->work))
		return -1;
	s->work[n_work++] = (struct gb_frame){pos, parent};
	while (n_work) {
		struct gb_frame w = s->work[--n_work];
		bool fresh;
		if (see(s, w.pos, w.parent, &fresh))
			return -1;
		if (!fresh)
			continue;
		if (++taken > EXPAND_MAX || *n - first > GB_MAX_STACKS) {
			s->too_many = true;
			return -1;
		}
		uint32_t e = g->elems[w.pos], id;
		if (e == GB_END) {
			if (w.parent == 0) {
				if (!ends && out_push(v, n, cap, 0))
					return -1;
				ends = true;
			} else {
				const struct gb_frame *up = &s->f[w.parent];
				s->work[n_work++] = *up; /* room: the item just taken */
			}
		} else if (GB_KIND(e) == GB_CHAR) {
			if (intern(s, w.pos, w.parent, &id) || out_push(v, n, cap, id))
				return -1;
		} else {
			const struct gb_rule *r = &g->rules[GB_VALUE(e)];
			uint32_t ret = w.parent; /* a reference that ends its alternative returns nowhere */
			if (g->elems[w.pos + 1] != GB_END && intern(s, w.pos + 1, w.parent, &ret))
				return -1;
			if (!gb_grow((void **)&s->work, &s->cap_work, n_work + r->n_alts, sizeof *s->work))
				return -1;
			for (uint32_t a = r->n_alts; a-- > 0;) /* the first alternative first */
				s->work[n_work++] = (struct gb_frame){g->alts[r->alt + a], ret};
		}
	}
	return 0;
}

int gb_stacks_start(struct gb_stacks *s, uint32_t **out, uint32_t *n, uint32_t *cap)
{
	return expand(s, s->g->start, 0, out, n, cap);
}

int gb_stacks_succ(struct gb_stacks *s, uint32_t f, const uint32_t **list, uint32_t *n)
{
	if (s->succ_at[f] == GB_NONE) {
		uint32_t at = s->n_succ;
		if (expand(s, s->f[f].pos + 1, s->f[f].parent, &s->succ, &s->n_succ, &s->cap_succ)) {
			s->n_succ = at;
			return -1;
		}
		s->succ_at[f] = at;
		s->succ_n[f] = s->n_succ - at;
	}
	*list = s->succ + s->succ_at[f];
	*n = s->succ_n[f];
	return 0;
}

int gb_stacks_loops(struct gb_stacks *s, uint32_t f, bool *loops)
{
	if (!s->loops[f]) {
		const uint32_t *next;
		uint32_t n;
		if (gb_stacks_succ(s, f, &next, &n))
			return -1;
		s->loops[f] = 1;
		for (uint32_t i = 0; i < n; i++)
			if (next[i] == f)
				s->loops[f] = 2;
	}
	*loops = s->loops[f] == 2;
	return 0;
}

uint32_t gb_stacks_new_stamp(struct gb_stacks *s)
{
	if (++s->stamp == 0) { /* wrapped: no frame may hold the new one */
		memset(s->mark, 0, (size_t)s->cap * sizeof *s->mark);
		s->stamp = 1;
	}
	return s->stamp;
}

void gb_stacks_compact(struct gb_stacks *s, uint32_t **sets, const uint32_t *lens, int n_sets)
{
	uint32_t old_n = s->n, nn = 1;
	uint32_t *remap = malloc(old_n * sizeof *remap), *chain = malloc(old_n * sizeof *chain);
	struct gb_frame *nf = malloc(old_n * sizeof *nf);
	if (!remap || !chain || !nf)
		goto out;
	for (uint32_t i = 0; i < old_n; i++)
		remap[i] = GB_NONE;
	remap[0] = 0;
	nf[0] = s->f[0];
	/* a live stack's frames, bottom first, so each parent is numbered
	 * before its children */
	for (int k = 0; k < n_sets; k++)
		for (uint32_t i = 0; i < lens[k]; i++) {
			uint32_t depth = 0;
			for (uint32_t x = sets[k][i]; remap[x] == GB_NONE; x = s->f[x].parent)
				chain[depth++] = x;
			while (depth) {
				uint32_t x = chain[--depth];
				nf[nn] = (struct gb_frame){s->f[x].pos, remap[s->f[x].parent]};
				remap[x] = nn++;
			}
		}
	memcpy(s->f, nf, nn * sizeof *nf);
	s->n = nn;
	for (uint32_t i = 0; i < nn; i++) {
		s->succ_at[i] = GB_NONE;
		s->succ_n[i] = 0;
		s->loops[i] = i ? 0 : 1;
	}
	s->n_succ = 0;
	memset(s->mark, 0, (size_t)s->cap * sizeof *s->mark);
	s->stamp = 0;
	memset(s->slot, 0, ((size_t)s->slot_mask + 1) * sizeof *s->slot);
	for (uint32_t i = 1; i < nn; i++)
		*slot_of(s, s->f[i].pos, s->f[i].parent) = i;
	for (int k = 0; k < n_sets; k++)
		for (uint32_t i = 0; i < lens[k]; i++)
			sets[k][i] = remap[sets[k][i]];
	s->gc_at = nn * 4 > GC_MIN ? nn * 4 : GC_MIN;
out:
	free(remap);
	free(chain);
	free(nf);
}
