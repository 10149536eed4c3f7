/* The vocabulary as a trie of token bytes (what each token adds to the
 * text: belt_tok_bytes), built once per compiled grammar. Tokens are
 * sorted by their bytes and the trie is laid out depth first from that
 * order, so a node's children follow it and each token's node is reached
 * by a walk that leaves a whole subtree at its first byte no stack can
 * read. Tokens with identical bytes (a byte token and a one-byte piece)
 * share their node. End-of-generation tokens and tokens with no text are
 * not in it: the grammar allows the former where it may end, the latter
 * never. */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "gbnf.h"

struct entry {
	const char *p;
	uint32_t len;
	int32_t id;
};

static int by_bytes(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void gb_trie_free(struct gb_trie *t)
{
	free(t->node);
	free(t->ids);
	free(t->bytes);
	free(t->off);
	free(t->eog);
	*t = (struct gb_trie){0};
}

int gb_trie_build(struct gb_trie *t, const struct belt_tokenizer *tok, char *err, size_t errsz)
{
	int32_t n = belt_tok_n_vocab(tok);
	*t = (struct gb_trie){.n_tok = n > 0 ? n : 0};
	uint32_t nt = (uint32_t)t->n_tok;
	size_t total = 0;
	uint32_t n_entries = 0;
	for (int32_t id = 0; id < n; id++) {
		size_t len;
		belt_tok_bytes(tok, id, &len);
		if (len && !belt_tok_is_eog(tok, id)) {
			total += len;
			n_entries++;
		}
	}
	if (total >= UINT32_MAX / 2)
		return belt_errf(err, errsz, "grammar: the vocabulary's text is too large");
	t->off = malloc(((size_t)nt + 1) * sizeof *t->off);
	t->eog = calloc(nt / 32 + 1, sizeof *t->eog);
	t->bytes = malloc(total + 1);
	t->ids = malloc((size_t)n_entries * sizeof *t->ids + 1);
	t->node = malloc((total + 1) * sizeof *t->node);
	struct entry *e = malloc((size_t)n_entries * sizeof *e + 1);
	uint32_t *path = NULL;
	if (!t->off || !t->eog || !t->bytes || !t->ids || !t->node || !e)
		goto oom;
	uint32_t o = 0, k = 0;
	for (int32_t id = 0; id < n; id++) {
		size_t len;
		const char *b = belt_tok_bytes(tok, id, &len);
		t->off[id] = o;
		if (belt_tok_is_eog(tok, id)) {
			t->eog[id / 32] |= 1u << (id % 32);
		} else if (len) {
			memcpy(t->bytes + o, b, len);
			e[k++] = (struct entry){t->bytes + o, (uint32_t)len, id};
			o += (uint32_t)len;
			if (len > t->max_len)
				t->max_len = (uint32_t)len;
		}
	}
	t->off[nt] = o;
	qsort(e, n_entries, sizeof *e, by_bytes);
	if (!(path = malloc(((size_t)t->max_len + 1) * sizeof *path)))
		goto oom;
	/* path[d]: the node of the last entry's first d bytes */
	t->node[0] = (struct gb_node){0};
	t->n_node = 1;
	path[0] = 0;
	uint32_t depth = 0;
	for (uint32_t i = 0; i < n_entries; i++) {
		uint32_t common = 0;
		if (i)
			while (common < depth && common < e[i].len &&
			       e[i - 1].p[common] == e[i].p[common])
				common++;
		for (; depth > common; depth--)
			t->node[path[depth]].end = t->n_node;
		for (; depth < e[i].len; depth++) {
			/* entry i is the first with this prefix */
			t->node[t->n_node] = (struct gb_node){.byte = (uint8_t)e[i].p[depth], .ids = i};
			path[depth + 1] = t->n_node++;
		}
		t->node[path[depth]].n_ids++; /* equal bytes sort together, first */
		t->ids[i] = e[i].id;
	}
	for (; depth > 0; depth--)
		t->node[path[depth]].end = t->n_node;
	t->node[0].end = t->n_node;
	t->n_entries = n_entries;
	struct gb_node *small = realloc(t->node, (size_t)t->n_node * sizeof *small);
	if (small)
		t->node = small;
	free(path);
	free(e);
	return 0;
oom:
	free(path);
	free(e);
	gb_trie_free(t);
	return belt_errf(err, errsz, "grammar: out of memory for the vocabulary's trie");
}
