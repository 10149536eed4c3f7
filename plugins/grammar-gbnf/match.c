/* A compiled grammar's state: the stacks now and at the start, the mask
 * for the next token, accept, reset. The mask is computed when a token is
 * accepted (and at compile for the start), where memory may still be
 * taken, so that allowed() only copies it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "gbnf.h"

static int vec_reserve(struct gb_vec *v, uint32_t n)
{
	if (n <= v->cap)
		return 0;
	uint32_t *p = realloc(v->v, n * sizeof *p);
	if (!p)
		return -1;
	v->v = p;
	v->cap = n;
	return 0;
}

static int vec_copy(struct gb_vec *to, const struct gb_vec *from)
{
	to->n = 0;
	for (uint32_t i = 0; i < from->n; i++)
		if (gb_vec_push(to, from->v[i]))
			return -1;
	return 0;
}

/* The message for a failed step, walk or expansion. */
static int failed(struct gb_matcher *m, char *err, size_t errsz)
{
	if (m->st.too_many)
		return belt_errf(err, errsz, "the grammar is too ambiguous to follow here: more than "
				 "%u stacks at once, or an expansion past its bound", GB_MAX_STACKS);
	return belt_errf(err, errsz, "out of memory");
}

static bool has_end(const struct gb_vec *set, const struct gb_utf8 *part)
{
	if (part->need)
		return false;
	for (uint32_t i = 0; i < set->n; i++)
		if (set->v[i] == 0)
			return true;
	return false;
}

int gb_matcher_init(struct gb_matcher *m, char *err, size_t errsz)
{
	m->words = ((uint32_t)m->trie.n_tok + 31) / 32;
	size_t wb = (size_t)m->words * sizeof(uint32_t) + 4;
	m->mask = malloc(wb);
	m->next_mask = malloc(wb);
	m->start_mask = malloc(wb);
	m->level = malloc(((size_t)m->trie.max_len + 2) * sizeof *m->level);
	m->whole = calloc(m->g.n_classes + 1, sizeof *m->whole);
	if (gb_stacks_init(&m->st, &m->g) || !m->mask || !m->next_mask || !m->start_mask ||
	    !m->level || !m->whole || gb_stacks_start(&m->st, &m->start.v, &m->start.n, &m->start.cap) ||
	    /* cur, a and b trade places in accept(); reset() copies start
	     * into whichever is cur without allocating */
	    vec_reserve(&m->cur, m->start.n + 1) || vec_reserve(&m->a, m->start.n + 1) ||
	    vec_reserve(&m->b, m->start.n + 1) || gb_walk_prepare(m) ||
	    gb_walk(m, m->start.v, m->start.n, &m->start_part, m->start_mask))
		return failed(m, err, errsz);
	m->start_complete = has_end(&m->start, &m->start_part);
	bool any = false;
	for (uint32_t i = 0; i < m->words && !any; i++)
		any = m->start_mask[i] != 0;
	if (!any && !m->start_complete)
		return belt_errf(err, errsz, "no token of the vocabulary can begin a sentence of this grammar");
	gb_matcher_reset(m);
	return 0;
}

void gb_matcher_free(struct gb_matcher *m)
{
	for (uint32_t c = 0; m->whole && c < m->g.n_classes; c++) {
		free(m->whole[c].nodes);
		free(m->whole[c].covered);
		free(m->whole[c].tokens);
	}
	free(m->whole);
	gb_grammar_free(&m->g);
	gb_stacks_free(&m->st);
	gb_trie_free(&m->trie);
	free(m->mask);
	free(m->next_mask);
	free(m->start_mask);
	free(m->cur.v);
	free(m->start.v);
	free(m->a.v);
	free(m->b.v);
	free(m->walk.v);
	free(m->key.v);
	free(m->level);
	for (int i = 0; i < GB_CACHED; i++) {
		free(m->cache[i].key);
		free(m->cache[i].mask);
	}
}

void gb_matcher_reset(struct gb_matcher *m)
{
	memcpy(m->cur.v, m->start.v, m->start.n * sizeof *m->start.v);
	m->cur.n = m->start.n;
	memcpy(m->mask, m->start_mask, (size_t)m->words * sizeof *m->mask);
	m->part = m->start_part;
	m->complete = m->start_complete;
	m->ended = false;
}

/* Token id's bytes for a message: printable ASCII as is, others \xNN. */
static const char *show(const struct gb_trie *t, int32_t id, char *buf, size_t cap)
{
	const unsigned char *b = (const unsigned char *)t->bytes + t->off[id];
	uint32_t len = t->off[id + 1] - t->off[id];
	size_t n = 0;
	for (uint32_t i = 0; i < len && n + 8 < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\' &&
						       b[i] != '"' ? "%c" : "\\x%02x", b[i]);
	buf[n] = 0;
	return buf;
}

int gb_matcher_accept(struct gb_matcher *m, int32_t id, char *err, size_t errsz)
{
	const struct gb_trie *t = &m->trie;
	char buf[96];
	if (id < 0 || id >= t->n_tok)
		return belt_errf(err, errsz, "token %d is outside the vocabulary (0 .. %d)", id,
				 t->n_tok - 1);
	if (m->ended)
		return belt_errf(err, errsz, "token %d after the end-of-generation token: the grammar has ended",
				 id);
	if (t->eog[id / 32] >> (id % 32) & 1) {
		if (!m->complete)
			return belt_errf(err, errsz, "end-of-generation token %d is not allowed here: "
					 "the text so far is not a whole sentence of the grammar", id);
		m->ended = true;
		m->cur.n = 0;
		memset(m->mask, 0, (size_t)m->words * sizeof *m->mask);
		return 0;
	}
	uint32_t len = t->off[id + 1] - t->off[id];
	if (len == 0)
		return belt_errf(err, errsz, "token %d has no text (a control token): the grammar "
				 "does not allow it", id);
	m->st.too_many = false;
	if (m->st.n > m->st.gc_at) {
		uint32_t *sets[2] = {m->cur.v, m->start.v}, lens[2] = {m->cur.n, m->start.n};
		gb_stacks_compact(&m->st, sets, lens, 2);
		for (int i = 0; i < GB_CACHED; i++) /* the stack ids are new */
			m->cache[i].used = 0;
	}
	struct gb_utf8 p = m->part, q;
	if (vec_copy(&m->a, &m->cur))
		return belt_errf(err, errsz, "out of memory");
	for (uint32_t i = 0; i < len; i++) {
		m->b.n = 0;
		if (gb_step(m, &m->a, 0, m->a.n, &p, (unsigned char)t->bytes[t->off[id] + i], &m->b, &q))
			return failed(m, err, errsz);
		if (!m->b.n)
			return belt_errf(err, errsz, "token %d (\"%s\") is not allowed here by the grammar",
					 id, show(t, id, buf, sizeof buf));
		struct gb_vec x = m->a;
		m->a = m->b;
		m->b = x;
		p = q;
	}
	if (gb_mask_of(m, m->a.v, m->a.n, &p, m->next_mask))
		return failed(m, err, errsz);
	struct gb_vec x = m->cur;
	m->cur = m->a;
	m->a = x;
	uint32_t *mk = m->mask;
	m->mask = m->next_mask;
	m->next_mask = mk;
	m->part = p;
	m->complete = has_end(&m->cur, &p);
	return 0;
}
