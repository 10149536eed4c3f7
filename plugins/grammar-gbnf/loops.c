/* The classes that may loop on themselves, found at compile so that
 * their whole-subtree tables (subtrees.c) are made then, not by the first
 * token that meets such a loop (inside a JSON string: a pass over the
 * whole trie, milliseconds with a 128K vocabulary).
 *
 * A character element at position e loops when, from the position after
 * it, e can be reached again without reading a character: through rule
 * references (into any alternative of the rule) and alternatives' ends
 * (back to the position after any reference to the rule). Returning to
 * every caller, not only the one on the stack, finds more loops than the
 * matcher will meet; a wrong guess costs only a table at compile. Each
 * search visits at most SEARCH_MAX positions, so a huge grammar costs
 * little here and its loops are tabled when first met, as before. */
#include <stdlib.h>

#include "gbnf.h"

#define SEARCH_MAX 4096u
#define VISITS_MAX (1u << 22) /* all searches together */

struct finder {
	const struct gb_grammar *g;
	uint32_t *owner;	  /* [n_elems]: the rule of each element */
	uint32_t *ref_at, *refs; /* positions of each rule's references:
				  * refs[ref_at[r] .. ref_at[r + 1]) */
	uint32_t *seen, stamp;	  /* [n_elems]: visited in search stamp */
	uint32_t *queue;	  /* [SEARCH_MAX] */
	uint32_t visits;	  /* so far, all searches */
};

static int finder_init(struct finder *f, const struct gb_grammar *g)
{
	uint32_t ne = g->n_elems, nr = g->n_rules;
	f->g = g;
	f->stamp = 0;
	f->visits = 0;
	f->owner = malloc((size_t)ne * sizeof *f->owner);
	f->ref_at = calloc((size_t)nr + 1, sizeof *f->ref_at);
	f->refs = malloc((size_t)ne * sizeof *f->refs);
	f->seen = calloc(ne, sizeof *f->seen);
	f->queue = malloc(SEARCH_MAX * sizeof *f->queue);
	if (!f->owner || !f->ref_at || !f->refs || !f->seen || !f->queue)
		return -1;
	for (uint32_t p = 0; p < ne; p++)
		f->owner[p] = GB_NONE; /* the start's elements: in no rule */
	for (uint32_t r = 0; r < nr; r++)
		for (uint32_t a = 0; a < g->rules[r].n_alts; a++)
			for (uint32_t p = g->alts[g->rules[r].alt + a];; p++) {
				f->owner[p] = r;
				if (g->elems[p] == GB_END)
					break;
				if (GB_KIND(g->elems[p]) == GB_REF)
					f->ref_at[GB_VALUE(g->elems[p]) + 1]++;
			}
	for (uint32_t r = 0; r < nr; r++)
		f->ref_at[r + 1] += f->ref_at[r];
	uint32_t *fill = calloc((size_t)nr, sizeof *fill);
	if (!fill)
		return -1;
	for (uint32_t r = 0; r < nr; r++)
		for (uint32_t a = 0; a < g->rules[r].n_alts; a++)
			for (uint32_t p = g->alts[g->rules[r].alt + a]; g->elems[p] != GB_END; p++)
				if (GB_KIND(g->elems[p]) == GB_REF) {
					uint32_t to = GB_VALUE(g->elems[p]);
					f->refs[f->ref_at[to] + fill[to]++] = p;
				}
	free(fill);
	return 0;
}

static void finder_free(struct finder *f)
{
	free(f->owner);
	free(f->ref_at);
	free(f->refs);
	free(f->seen);
	free(f->queue);
}

/* Whether position e (a character) is reached again from e + 1 without
 * reading a character, within SEARCH_MAX positions. */
static bool loops(struct finder *f, uint32_t e)
{
	const struct gb_grammar *g = f->g;
	uint32_t n = 0, head = 0, stamp = ++f->stamp;
#define VISIT(p)                                                               \
	do {                                                                   \
		uint32_t p_ = (p);                                             \
		if (f->seen[p_] != stamp) {                                    \
			if (n == SEARCH_MAX || ++f->visits > VISITS_MAX)       \
				return false;                                  \
			f->seen[p_] = stamp;                                   \
			f->queue[n++] = p_;                                    \
		}                                                              \
	} while (0)
	VISIT(e + 1);
	while (head < n) {
		uint32_t p = f->queue[head++], el = g->elems[p];
		if (p == e)
			return true;
		if (el == GB_END && f->owner[p] != GB_NONE) {
			uint32_t r = f->owner[p];
			for (uint32_t i = f->ref_at[r]; i < f->ref_at[r + 1]; i++)
				VISIT(f->refs[i] + 1);
		} else if (GB_KIND(el) == GB_REF) {
			const struct gb_rule *to = &g->rules[GB_VALUE(el)];
			for (uint32_t a = 0; a < to->n_alts; a++)
				VISIT(g->alts[to->alt + a]);
		}
	}
#undef VISIT
	return false;
}

int gb_loops_find(const struct gb_grammar *g, bool *looping)
{
	struct finder f;
	int rc = finder_init(&f, g);
	for (uint32_t p = 0; rc == 0 && p < g->n_elems; p++) {
		uint32_t el = g->elems[p];
		if (el != GB_END && GB_KIND(el) == GB_CHAR && f.owner[p] != GB_NONE &&
		    !looping[GB_VALUE(el)] && loops(&f, p))
			looping[GB_VALUE(el)] = true;
	}
	finder_free(&f);
	return rc;
}
