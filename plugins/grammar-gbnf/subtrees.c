/* Subtrees of the trie that a looping stack reads whole. A stack that
 * comes back to itself after each character of its class (the x* of a
 * class: the inside of a string, a run of digits, a line of text) allows
 * every token made of characters of that class, so where the mask's walk
 * meets such a stack at a node whose tokens below are all such
 * characters, it allows them at once instead of reading them byte by
 * byte: inside a JSON string, all but the few subtrees holding a quote, a
 * backslash or a control character.
 *
 * Its bit for node x is computed once per class, over the whole trie:
 * every byte below node x continues a character of the class (or ends a
 * token inside one that can still be), reading from the root, so it
 * holds at a node the walk reaches at a character boundary, from a state
 * that had read no part of a character. At the root the tokens made of
 * the class's characters are one mask (an OR of words, not a walk). */
#include <stdlib.h>

#include "gbnf.h"

static bool has(const uint32_t *bits, uint32_t i)
{
	return bits[i / 32] >> (i % 32) & 1;
}

int gb_subtrees_whole(const struct gb_trie *t, const struct gb_grammar *g, uint32_t c,
		      struct gb_whole *out)
{
	size_t words = t->n_node / 32 + 1;
	uint32_t *ok = calloc(words, sizeof *ok), *whole = calloc(words, sizeof *whole);
	uint32_t *path = calloc(words, sizeof *path);
	uint32_t *tokens = calloc((size_t)t->n_tok / 32 + 1, sizeof *tokens);
	struct at {
		uint32_t end;
		struct gb_utf8 part;
		bool path; /* every byte from the root reads so */
	} *stack = malloc(((size_t)t->max_len + 2) * sizeof *stack);
	if (!ok || !whole || !path || !tokens || !stack) {
		free(ok);
		free(whole);
		free(path);
		free(tokens);
		free(stack);
		return -1;
	}
	/* ok[y]: node y's byte reads as part of a character of the class */
	uint32_t sp = 1;
	stack[0] = (struct at){.end = t->node[0].end, .path = true};
	for (uint32_t y = 1; y < t->n_node; y++) {
		while (stack[sp - 1].end <= y)
			sp--;
		const struct gb_utf8 *p = &stack[sp - 1].part;
		struct gb_utf8 q = *p;
		unsigned char b = t->node[y].byte;
		bool good = p->need ? gb_utf8_next(&q, b) : gb_utf8_first(b, &q);
		good = good && (q.need ? gb_class_meets(g, c, q.lo, q.hi) : gb_class_has(g, c, q.value));
		if (good)
			ok[y / 32] |= 1u << (y % 32);
		else
			q = (struct gb_utf8){0}; /* nothing below is reached through it */
		bool on = good && stack[sp - 1].path;
		if (on)
			path[y / 32] |= 1u << (y % 32);
		for (uint32_t i = 0; on && i < t->node[y].n_ids; i++) {
			uint32_t id = (uint32_t)t->ids[t->node[y].ids + i];
			tokens[id / 32] |= 1u << (id % 32);
		}
		stack[sp++] = (struct at){t->node[y].end, q, on};
	}
	/* children before parents */
	for (uint32_t x = t->n_node; x-- > 0;) {
		bool w = true;
		for (uint32_t y = x + 1; y < t->node[x].end && w; y = t->node[y].end)
			w = has(ok, y) && has(whole, y);
		if (w)
			whole[x / 32] |= 1u << (x % 32);
	}
	/* covered: the path to x reads so, and all below it */
	for (uint32_t x = 1; x < t->n_node; x++)
		if (!has(path, x) || !has(whole, x))
			path[x / 32] &= ~(1u << (x % 32));
	free(ok);
	free(stack);
	*out = (struct gb_whole){whole, path, tokens};
	return 0;
}
