/* The merge queue of the encoders (see mergeheap.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "tokenizer/mergeheap.h"

static bool before(const struct tok_cand *a, const struct tok_cand *b)
{
	return a->key < b->key || (a->key == b->key && a->left < b->left);
}

int tok_mergeheap_push(struct tok_mergeheap *h, struct tok_cand p)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct tok_cand *v = realloc(h->v, cap * sizeof *v);
		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i > 0 && before(&p, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = p;
	return 0;
}

struct tok_cand tok_mergeheap_pop(struct tok_mergeheap *h)
{
	struct tok_cand top = h->v[0], last = h->v[--h->n];
	size_t i = 0, n = h->n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (n > 0)
		h->v[i] = last;
	return top;
}
