/* One byte read by a set of stacks: the stacks that can read it as (part
 * of) a character of their class stay, those that complete a character
 * go on to what follows them (deduplicated by marks, stacks.c), and the
 * part of a character read so far is carried in a gb_utf8 (gbnf.h). All
 * stacks of a set have read the same bytes, so one gb_utf8 serves the
 * whole set. Only valid UTF-8 is read. */
#include <stdlib.h>

#include "gbnf.h"

int gb_vec_push(struct gb_vec *v, uint32_t x)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		uint32_t *p = realloc(v->v, cap * sizeof *p);
		if (!p)
			return -1;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

int gb_step(struct gb_matcher *m, struct gb_vec *in, uint32_t at, uint32_t n,
		const struct gb_utf8 *p, unsigned char b, struct gb_vec *out, struct gb_utf8 *q)
{
	struct gb_stacks *st = &m->st;
	const struct gb_grammar *g = &m->g;
	uint32_t first = out->n;
	*q = *p;
	if (p->need ? !gb_utf8_next(q, b) : !gb_utf8_first(b, q))
		return 0;
	uint32_t stamp = gb_stacks_new_stamp(st);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = in->v[at + i];
		if (f == 0)
			continue; /* the sentence ended: nothing more to read */
		const struct gb_class *c = &g->classes[gb_stacks_class(st, f)];
		if (p->need == 0 ? !(c->first[b / 32] >> (b % 32) & 1)
				 : !gb_class_meets(g, gb_stacks_class(st, f), q->lo, q->hi))
			continue;
		if (q->need) { /* inside a character: the stack waits for its end */
			if (gb_vec_push(out, f))
				return -1;
			continue;
		}
		const uint32_t *next;
		uint32_t k;
		if (gb_stacks_succ(st, f, &next, &k))
			return -1;
		for (uint32_t j = 0; j < k; j++) {
			uint32_t x = next[j];
			if (st->mark[x] != stamp) {
				st->mark[x] = stamp;
				if (gb_vec_push(out, x))
					return -1;
			}
		}
		if (out->n - first > GB_MAX_STACKS) {
			st->too_many = true;
			return -1;
		}
	}
	return 0;
}
