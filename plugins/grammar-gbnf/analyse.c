/* What a parsed grammar must be before it runs: every rule referenced is
 * defined, there is a root, no rule can begin with itself through a rule
 * it must come back from (left recursion: the stacks would grow without
 * reading a character), and root matches some finite string.
 *
 * Left recursion is found on the left-corner graph: an edge A -> B for
 * each B that some alternative of A can begin with (B after nullable
 * elements only), marked when B is not the alternative's last element
 * (expanding it keeps a frame to come back to). A strongly connected
 * component holding a marked edge is left recursion. A cycle of unmarked
 * edges only (A ::= B | "a" ; B ::= A, or x* over an x that may be empty)
 * adds no frames, and the expansion in stacks.c meets each of its
 * (position, stack) pairs once: those grammars run. */
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

struct graph {
	uint32_t *first; /* rule u's edges: first[u] .. first[u + 1] */
	uint32_t *to;
	bool *push;
};

static int oom(char *err, size_t errsz, const char *text, size_t len)
{
	return gb_fail(err, errsz, text, len, 0, "out of memory");
}

/* The rules that derive the empty string (chars false) or some string
 * (chars true: a character of a non-empty class counts), into out. */
static int derive(const struct gb_grammar *g, bool chars, bool *out)
{
	uint32_t na = g->n_alts, nr = g->n_rules;
	uint32_t *alt_rule = malloc(na * sizeof *alt_rule + 1), *need = calloc(na + 1, sizeof *need);
	uint32_t *occ_first = calloc(nr + 1, sizeof *occ_first), *queue = malloc(nr * sizeof *queue + 1);
	bool *dead = calloc(na + 1, sizeof *dead);
	uint32_t *occ = NULL;
	int rc = -1;
	if (!alt_rule || !need || !occ_first || !queue || !dead)
		goto out;
	uint32_t n_refs = 0;
	for (uint32_t r = 0; r < nr; r++)
		for (uint32_t a = g->rules[r].alt; a < g->rules[r].alt + g->rules[r].n_alts; a++) {
			alt_rule[a] = r;
			for (uint32_t p = g->alts[a]; g->elems[p] != GB_END; p++) {
				uint32_t e = g->elems[p];
				if (GB_KIND(e) == GB_REF) {
					need[a]++;
					occ_first[GB_VALUE(e)]++;
					n_refs++;
				} else if (!chars || g->classes[GB_VALUE(e)].n == 0) {
					dead[a] = true;
				}
			}
		}
	if (!(occ = malloc(n_refs * sizeof *occ + 1)))
		goto out;
	for (uint32_t r = 0, sum = 0; r <= nr; r++) { /* counts -> ends */
		sum += occ_first[r];
		occ_first[r] = sum;
	}
	for (uint32_t a = 0; a < na; a++)
		for (uint32_t p = g->alts[a]; g->elems[p] != GB_END; p++)
			if (GB_KIND(g->elems[p]) == GB_REF)
				occ[--occ_first[GB_VALUE(g->elems[p])]] = a;
	uint32_t head = 0, tail = 0;
	memset(out, 0, nr * sizeof *out);
	for (uint32_t a = 0; a < na; a++)
		if (!dead[a] && !need[a] && !out[alt_rule[a]]) {
			out[alt_rule[a]] = true;
			queue[tail++] = alt_rule[a];
		}
	while (head < tail) {
		uint32_t r = queue[head++];
		for (uint32_t i = occ_first[r]; i < occ_first[r + 1]; i++) {
			uint32_t a = occ[i];
			if (--need[a] == 0 && !dead[a] && !out[alt_rule[a]]) {
				out[alt_rule[a]] = true;
				queue[tail++] = alt_rule[a];
			}
		}
	}
	rc = 0;
out:
	free(alt_rule);
	free(need);
	free(occ_first);
	free(queue);
	free(dead);
	free(occ);
	return rc;
}

static int left_corners(const struct gb_grammar *g, const bool *nullable, struct graph *gr)
{
	uint32_t nr = g->n_rules, n = 0;
	gr->first = malloc((nr + 1) * sizeof *gr->first);
	gr->to = malloc(((size_t)g->n_elems + 1) * sizeof *gr->to);
	gr->push = malloc(((size_t)g->n_elems + 1) * sizeof *gr->push);
	if (!gr->first || !gr->to || !gr->push)
		return -1;
	for (uint32_t r = 0; r < nr; r++) {
		gr->first[r] = n;
		for (uint32_t a = g->rules[r].alt; a < g->rules[r].alt + g->rules[r].n_alts; a++)
			for (uint32_t p = g->alts[a]; GB_KIND(g->elems[p]) == GB_REF; p++) {
				uint32_t v = GB_VALUE(g->elems[p]);
				gr->to[n] = v;
				gr->push[n++] = g->elems[p + 1] != GB_END;
				if (!nullable[v])
					break;
			}
	}
	gr->first[nr] = n;
	return 0;
}

/* Tarjan's strongly connected components, without recursion (a grammar
 * may chain thousands of rules): comp[v] for every rule. */
static int components(const struct gb_grammar *g, const struct graph *gr, uint32_t *comp)
{
	uint32_t nr = g->n_rules, next = 0, n_comp = 0, sp = 0, cp = 0;
	uint32_t *index = malloc(nr * sizeof *index + 1), *low = malloc(nr * sizeof *low + 1);
	uint32_t *stack = malloc(nr * sizeof *stack + 1), *call = malloc(nr * sizeof *call + 1);
	uint32_t *edge = malloc(nr * sizeof *edge + 1);
	bool *on = calloc(nr + 1, sizeof *on);
	int rc = -1;
	if (!index || !low || !stack || !call || !edge || !on)
		goto out;
	for (uint32_t v = 0; v < nr; v++)
		index[v] = GB_NONE;
	for (uint32_t root = 0; root < nr; root++) {
		if (index[root] != GB_NONE)
			continue;
		index[root] = low[root] = next++;
		stack[sp++] = root;
		on[root] = true;
		call[cp] = root;
		edge[cp++] = gr->first[root];
		while (cp) {
			uint32_t v = call[cp - 1];
			if (edge[cp - 1] < gr->first[v + 1]) {
				uint32_t w = gr->to[edge[cp - 1]++];
				if (index[w] == GB_NONE) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					on[w] = true;
					call[cp] = w;
					edge[cp++] = gr->first[w];
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			cp--;
			if (low[v] == index[v]) {
				uint32_t w;
				do {
					w = stack[--sp];
					on[w] = false;
					comp[w] = n_comp;
				} while (w != v);
				n_comp++;
			}
			if (cp && low[v] < low[call[cp - 1]])
				low[call[cp - 1]] = low[v];
		}
	}
	rc = 0;
out:
	free(index);
	free(low);
	free(stack);
	free(call);
	free(edge);
	free(on);
	return rc;
}

/* Append "name" of rule r's origin to buf[*n..cap), unless it is the
 * last one written. */
static void name_to(const struct gb_grammar *g, const char *text, uint32_t r, uint32_t *last,
		    char *buf, size_t cap, size_t *n)
{
	const struct gb_rule *o = &g->rules[g->rules[r].origin];
	if (g->rules[r].origin == *last || *n + 8 >= cap)
		return;
	*last = g->rules[r].origin;
	size_t k = o->name_len;
	if (*n + k + 8 >= cap)
		k = cap - *n - 8;
	if (*n) {
		memcpy(buf + *n, " -> ", 4);
		*n += 4;
	}
	memcpy(buf + *n, text + o->name, k);
	*n += k;
	buf[*n] = 0;
}

/* The message for left recursion through edge u -> v: a path back from
 * v to u inside their component. */
static int left_recursion(const struct gb_grammar *g, const struct graph *gr, const uint32_t *comp,
			  uint32_t u, uint32_t v, const char *text, size_t len, char *err,
			  size_t errsz)
{
	uint32_t nr = g->n_rules;
	uint32_t *from = malloc(nr * sizeof *from + 1), *queue = malloc(nr * sizeof *queue + 1);
	if (!from || !queue) {
		free(from);
		free(queue);
		return oom(err, errsz, text, len);
	}
	for (uint32_t i = 0; i < nr; i++)
		from[i] = GB_NONE;
	uint32_t head = 0, tail = 0;
	from[v] = v;
	queue[tail++] = v;
	while (head < tail && from[u] == GB_NONE) {
		uint32_t x = queue[head++];
		for (uint32_t e = gr->first[x]; e < gr->first[x + 1]; e++) {
			uint32_t y = gr->to[e];
			if (comp[y] == comp[u] && from[y] == GB_NONE) {
				from[y] = x;
				queue[tail++] = y;
			}
		}
	}
	/* the path v .. u, backwards in queue's room */
	uint32_t n_path = 0;
	for (uint32_t x = u;; x = from[x]) {
		queue[n_path++] = x;
		if (x == v || n_path == nr)
			break;
	}
	char path[256];
	size_t n = 0;
	uint32_t last = GB_NONE;
	path[0] = 0;
	name_to(g, text, u, &last, path, sizeof path, &n);
	while (n_path)
		name_to(g, text, queue[--n_path], &last, path, sizeof path, &n);
	if (last != g->rules[u].origin) { /* close the cycle on the rule it began with */
		last = GB_NONE;
		name_to(g, text, u, &last, path, sizeof path, &n);
	} else if (!strstr(path, " -> ")) { /* a rule that begins with itself */
		last = GB_NONE;
		name_to(g, text, u, &last, path, sizeof path, &n);
	}
	free(from);
	free(queue);
	const struct gb_rule *o = &g->rules[g->rules[u].origin];
	return gb_fail(err, errsz, text, len, o->def,
		       "rule '%.*s' is left-recursive: %s can come round again before a character "
		       "is read (write it with repetition, as in sum ::= term (\"+\" term)*)",
		       (int)(o->name_len > 64 ? 64 : o->name_len), text + o->name, path);
}

static int check_left_recursion(const struct gb_grammar *g, const bool *nullable,
				const char *text, size_t len, char *err, size_t errsz)
{
	struct graph gr = {0};
	uint32_t *comp = malloc(g->n_rules * sizeof *comp + 1);
	int rc = -1;
	if (!comp || left_corners(g, nullable, &gr) || components(g, &gr, comp)) {
		rc = oom(err, errsz, text, len);
		goto out;
	}
	rc = 0;
	for (uint32_t u = 0; u < g->n_rules && !rc; u++)
		for (uint32_t e = gr.first[u]; e < gr.first[u + 1]; e++)
			if (gr.push[e] && comp[gr.to[e]] == comp[u]) {
				rc = left_recursion(g, &gr, comp, u, gr.to[e], text, len, err, errsz);
				break;
			}
out:
	free(comp);
	free(gr.first);
	free(gr.to);
	free(gr.push);
	return rc;
}

int gb_analyse(struct gb_grammar *g, const char *text, size_t len, char *err, size_t errsz)
{
	uint32_t undefined = GB_NONE;
	for (uint32_t r = 0; r < g->n_rules; r++)
		if (g->rules[r].def == GB_NONE &&
		    (undefined == GB_NONE || g->rules[r].ref < g->rules[undefined].ref))
			undefined = r;
	if (undefined != GB_NONE) {
		const struct gb_rule *r = &g->rules[undefined];
		return gb_fail(err, errsz, text, len, r->ref,
			       "undefined rule '%.*s': expected a definition '%.*s ::= ...'",
			       (int)(r->name_len > 64 ? 64 : r->name_len), text + r->name,
			       (int)(r->name_len > 64 ? 64 : r->name_len), text + r->name);
	}
	if (g->root == GB_NONE)
		return gb_fail(err, errsz, text, len, g->rules[0].def,
			       "no rule 'root': expected one, where sentences begin (the first rule "
			       "here is '%.*s')",
			       (int)(g->rules[0].name_len > 64 ? 64 : g->rules[0].name_len),
			       text + g->rules[0].name);
	bool *nullable = malloc(g->n_rules * sizeof *nullable + 1);
	bool *finite = malloc(g->n_rules * sizeof *finite + 1);
	int rc = -1;
	if (!nullable || !finite || derive(g, false, nullable) || derive(g, true, finite)) {
		rc = oom(err, errsz, text, len);
		goto out;
	}
	if ((rc = check_left_recursion(g, nullable, text, len, err, errsz)))
		goto out;
	if (!finite[g->root]) {
		rc = gb_fail(err, errsz, text, len, g->rules[g->root].def,
			     "rule 'root' matches no string: expected an alternative that can end "
			     "(not only endless recursion or classes that match nothing)");
		goto out;
	}
	if (g->n_elems + 2 > g->cap_elems) {
		uint32_t *e = realloc(g->elems, ((size_t)g->n_elems + 2) * sizeof *e);
		if (!e) {
			rc = oom(err, errsz, text, len);
			goto out;
		}
		g->elems = e;
		g->cap_elems = g->n_elems + 2;
	}
	g->start = g->n_elems;
	g->elems[g->n_elems++] = GB_ELEM(GB_REF, g->root);
	g->elems[g->n_elems++] = GB_END;
out:
	free(nullable);
	free(finite);
	return rc;
}
