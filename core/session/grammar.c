/* Grammars in the decode loop: the logits of each position are masked by
 * the tokens the grammar allows before the pick (the "logits" insertion
 * point of belt/grammar.h), on the host. */
#include <math.h>
#include <stdlib.h>

#include "session/session.h"

void belt_grammar_free(struct belt_grammar *g)
{
	if (!g)
		return;
	g->ops->free(g->state);
	free(g);
}

uint32_t belt_session_grammar_mask(struct belt_grammar *g, float *logits, int32_t n,
				   uint32_t *mask, int32_t *only)
{
	g->ops->allowed(g->state, mask, n);
	uint32_t count = 0;
	for (int32_t w = 0; w < (n + 31) / 32; w++) {
		uint32_t bits = mask[w];
		if (bits == UINT32_MAX) {
			count += 32;
			*only = w * 32;
			continue;
		}
		for (int32_t i = w * 32; i < w * 32 + 32 && i < n; i++, bits >>= 1)
			if (bits & 1) {
				count++;
				*only = i;
			} else if (logits) {
				logits[i] = -INFINITY;
			}
	}
	return count;
}

bool belt_session_grammar_only_eog(struct belt_grammar *g, const struct belt_tokenizer *tok,
				   int32_t n, uint32_t *mask)
{
	int32_t only = -1;
	g->ops->allowed(g->state, mask, n);
	bool any = false;
	for (int32_t w = 0; w < (n + 31) / 32; w++)
		for (uint32_t bits = mask[w]; bits; bits &= bits - 1) {
			only = w * 32 + __builtin_ctz(bits);
			if (!belt_tok_is_eog(tok, only))
				return false;
			any = true;
		}
	return any;
}
