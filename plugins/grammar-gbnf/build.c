/* Building rules for the parser: buffers of elements, rules made of
 * them, and repetition turned into rules, so that the matcher only ever
 * meets characters, references and ends. Every element, in a rule or
 * still in a buffer, counts against GB_MAX_ELEMS: "a"{100000}{100000}
 * is refused as it grows, never built. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

/* Room for need elements of size bytes in *v (capacity *cap), doubling
 * from 16. */
bool gb_grow(void **v, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return true;
	uint32_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(*v, (size_t)c * size);
	if (!q)
		return false;
	*v = q;
	*cap = c;
	return true;
}

int gb_seq_push(struct gb_grammar *g, struct gb_seq *s, uint32_t e)
{
	if (g->n_elems + g->pending >= GB_MAX_ELEMS)
		return GB_TOO_BIG;
	if (!gb_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
		return GB_NOMEM;
	s->v[s->n++] = e;
	g->pending++;
	return 0;
}

void gb_seq_free(struct gb_grammar *g, struct gb_seq *s)
{
	g->pending -= s->n;
	free(s->v);
	*s = (struct gb_seq){0};
}

int gb_rule_new(struct gb_grammar *g, uint32_t origin, uint32_t name, uint32_t name_len,
		uint32_t ref, uint32_t *id)
{
	if (!gb_grow((void **)&g->rules, &g->cap_rules, g->n_rules + 1, sizeof *g->rules))
		return GB_NOMEM;
	*id = g->n_rules++;
	/* a generated rule is defined where its named rule is */
	g->rules[*id] = (struct gb_rule){.origin = origin == GB_NONE ? *id : origin,
					 .name = name, .name_len = name_len,
					 .def = origin == GB_NONE ? GB_NONE : g->rules[origin].def,
					 .ref = ref};
	return 0;
}

int gb_rule_define(struct gb_grammar *g, uint32_t id, const uint32_t *e, uint32_t n,
		   const uint32_t *start, uint32_t n_alts)
{
	if (!gb_grow((void **)&g->elems, &g->cap_elems, g->n_elems + n, sizeof *g->elems) ||
	    !gb_grow((void **)&g->alts, &g->cap_alts, g->n_alts + n_alts, sizeof *g->alts))
		return GB_NOMEM;
	memcpy(g->elems + g->n_elems, e, n * sizeof *e);
	for (uint32_t k = 0; k < n_alts; k++)
		g->alts[g->n_alts + k] = g->n_elems + start[k];
	g->rules[id].alt = g->n_alts;
	g->rules[id].n_alts = n_alts;
	g->n_elems += n;
	g->n_alts += n_alts;
	return 0;
}

/* Define a rule made for a repetition, within the budget. */
static int generated(struct gb_grammar *g, uint32_t id, const uint32_t *e, uint32_t n,
		     const uint32_t *start, uint32_t n_alts)
{
	if (g->n_elems + g->pending + n > GB_MAX_ELEMS)
		return GB_TOO_BIG;
	return gb_rule_define(g, id, e, n, start, n_alts);
}

static int new_rule(struct gb_grammar *g, uint32_t origin, uint32_t *id)
{
	const struct gb_rule *o = &g->rules[origin];
	return gb_rule_new(g, origin, o->name, o->name_len, o->def, id);
}

int gb_repeat(struct gb_grammar *g, struct gb_seq *s, uint32_t last, uint32_t min, uint32_t max,
	      uint32_t origin)
{
	uint32_t k = s->n - last, id;
	if (k == 0)
		return 0; /* ""* : nothing repeated is nothing */
	uint32_t x = s->v[last];
	int rc;
	if (k > 1) { /* several elements: repeat a rule of them */
		uint32_t *e = malloc((k + 1) * sizeof *e), start = 0;
		if (!e)
			return GB_NOMEM;
		memcpy(e, s->v + last, k * sizeof *e);
		e[k] = GB_END;
		rc = new_rule(g, origin, &id);
		rc = rc ? rc : generated(g, id, e, k + 1, &start, 1);
		free(e);
		if (rc)
			return rc;
		x = GB_ELEM(GB_REF, id);
	}
	g->pending -= k;
	s->n = last;
	for (uint32_t i = 0; i < min; i++)
		if ((rc = gb_seq_push(g, s, x)))
			return rc;
	if (max == GB_NONE) { /* x* : R ::= x R | "" (right recursion: no stack grows) */
		if ((rc = new_rule(g, origin, &id)))
			return rc;
		uint32_t e[4] = {x, GB_ELEM(GB_REF, id), GB_END, GB_END}, start[2] = {0, 3};
		if ((rc = generated(g, id, e, 4, start, 2)))
			return rc;
		return gb_seq_push(g, s, GB_ELEM(GB_REF, id));
	}
	/* x{0,j}: O1 ::= x | "" ; Oj ::= x O(j-1) | "" : n - m rules, whatever x is */
	uint32_t prev = GB_NONE;
	for (uint32_t j = min; j < max; j++) {
		uint32_t e[4] = {x, GB_END, GB_END, GB_END}, start[2] = {0, 2};
		if (prev != GB_NONE) {
			e[1] = GB_ELEM(GB_REF, prev);
			start[1] = 3;
		}
		if ((rc = new_rule(g, origin, &id)) ||
		    (rc = generated(g, id, e, prev == GB_NONE ? 3 : 4, start, 2)))
			return rc;
		prev = id;
	}
	return prev == GB_NONE ? 0 : gb_seq_push(g, s, GB_ELEM(GB_REF, prev));
}
