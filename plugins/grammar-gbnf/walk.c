/* The mask: one depth-first walk of the vocabulary's trie carrying the
 * set of stacks (deduplicated at each node, so an ambiguous grammar costs
 * its number of distinct stacks, not its number of parses): a subtree is
 * left at the first byte no stack can read, and a node reached with a
 * non-empty set allows its tokens. Where a stack that loops on its class
 * meets a subtree its class reads whole (subtrees.c), the subtree's
 * tokens are allowed without a walk. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

static void allow(uint32_t *mask, int32_t id)
{
	mask[(uint32_t)id / 32] |= 1u << ((uint32_t)id % 32);
}

/* The whole-subtree tables of class c, made when first needed. */
static const struct gb_whole *whole_of(struct gb_matcher *m, uint32_t c)
{
	if (!m->whole[c].nodes && gb_subtrees_whole(&m->trie, &m->g, c, &m->whole[c]))
		return NULL;
	return &m->whole[c];
}

/* Tables made at compile at most: each is a pass over the trie, and a
 * grammar of many looping classes gets the rest when they are met. */
#define PREPARED_MAX 16

int gb_walk_prepare(struct gb_matcher *m)
{
	bool *looping = calloc(m->g.n_classes + 1, sizeof *looping);
	int rc = looping ? gb_loops_find(&m->g, looping) : -1;
	uint32_t made = 0;
	for (uint32_t c = 0; rc == 0 && c < m->g.n_classes && made < PREPARED_MAX; c++) {
		if (!looping[c])
			continue;
		if (!whole_of(m, c))
			rc = -1;
		made++;
	}
	free(looping);
	return rc;
}

/* Sets larger than this are read byte by byte: finding which of their
 * stacks loop would cost more than it saves (a loop keeps a set small). */
#define WHOLE_MAX_SET 16

/* Whether a looping stack of set[0..n) reads every token below node x (at
 * a character boundary) whole; if so they are allowed. -1 when out of
 * memory. */
static int whole_below(struct gb_matcher *m, uint32_t x, const uint32_t *set, uint32_t n,
		       uint32_t *mask)
{
	const struct gb_trie *t = &m->trie;
	for (uint32_t i = 0; i < n && n <= WHOLE_MAX_SET; i++) {
		bool loops;
		if (!set[i])
			continue;
		if (gb_stacks_loops(&m->st, set[i], &loops))
			return -1;
		if (!loops)
			continue;
		const struct gb_whole *w = whole_of(m, gb_stacks_class(&m->st, set[i]));
		if (!w)
			return -1;
		if (!(w->nodes[x / 32] >> (x % 32) & 1))
			continue;
		const struct gb_node *d = &t->node[x];
		uint32_t end = d->end < t->n_node ? t->node[d->end].ids : t->n_entries;
		for (uint32_t k = d->ids + d->n_ids; k < end; k++)
			allow(mask, t->ids[k]);
		return 1;
	}
	return 0;
}

#define ROOT_CLASSES 4

/* The stacks of the root set[0..n) that loop: their classes' tokens are
 * allowed at once (an OR of words); *n_roots of their tables go to
 * roots, so that the walk can leave out every node below which all
 * tokens are already in. 1 when one of them reads every token. */
static int root_loops(struct gb_matcher *m, const uint32_t *set, uint32_t n, uint32_t *mask,
		      const struct gb_whole **roots, int *n_roots)
{
	*n_roots = 0;
	for (uint32_t i = 0; i < n && n <= WHOLE_MAX_SET; i++) {
		bool loops;
		if (gb_stacks_loops(&m->st, set[i], &loops))
			return -1;
		if (!loops)
			continue;
		const struct gb_whole *w = whole_of(m, gb_stacks_class(&m->st, set[i]));
		if (!w)
			return -1;
		for (uint32_t k = 0; k < m->words; k++)
			mask[k] |= w->tokens[k];
		if (w->nodes[0] & 1)
			return 1;
		if (*n_roots < ROOT_CLASSES)
			roots[(*n_roots)++] = w;
	}
	return 0;
}

int gb_walk(struct gb_matcher *m, const uint32_t *set, uint32_t n, const struct gb_utf8 *part,
		uint32_t *mask)
{
	const struct gb_trie *t = &m->trie;
	struct gb_vec *w = &m->walk;
	memset(mask, 0, (size_t)m->words * sizeof *mask);
	w->n = 0;
	bool ends = false;
	for (uint32_t i = 0; i < n; i++) {
		if (set[i] == 0)
			ends = true;
		else if (gb_vec_push(w, set[i]))
			return -1;
	}
	if (ends && part->need == 0)
		for (uint32_t i = 0; i < m->words; i++)
			mask[i] |= t->eog[i];
	if (!w->n)
		return 0;
	/* whole subtrees are known from a character boundary at the root */
	bool boundary = part->need == 0;
	const struct gb_whole *roots[ROOT_CLASSES];
	int n_roots = 0, whole = boundary ? root_loops(m, w->v, w->n, mask, roots, &n_roots) : 0;
	if (whole)
		return whole < 0 ? -1 : 0;
	m->level[0] = (struct gb_level){.node = 0, .child = 1, .set = 0, .n = w->n, .part = *part};
	int depth = 0;
	while (depth >= 0) {
		struct gb_level *l = &m->level[depth];
		if (l->child >= t->node[l->node].end) {
			w->n = l->set;
			depth--;
			continue;
		}
		const struct gb_node *c = &t->node[l->child];
		uint32_t node = l->child, at = w->n;
		l->child = c->end;
		bool covered = false; /* all its tokens are in a root class's */
		for (int r = 0; r < n_roots && !covered; r++)
			covered = roots[r]->covered[node / 32] >> (node % 32) & 1;
		if (covered)
			continue;
		struct gb_utf8 q;
		if (gb_step(m, w, l->set, l->n, &l->part, c->byte, w, &q))
			return -1;
		if (w->n == at)
			continue; /* no stack reads this byte: the subtree is out */
		for (uint32_t i = 0; i < c->n_ids; i++)
			allow(mask, t->ids[c->ids + i]);
		whole = c->end > node + 1 && boundary && !q.need ?
				whole_below(m, node, w->v + at, w->n - at, mask) : 0;
		if (whole < 0)
			return -1;
		if (c->end > node + 1 && !whole)
			m->level[++depth] = (struct gb_level){node, node + 1, at, w->n - at, q};
		else
			w->n = at;
	}
	return 0;
}
