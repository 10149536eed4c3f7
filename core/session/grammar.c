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

uint32_t belt_session_grammar_mask(const uint32_t *mask, float *logits, int32_t n,
				   int32_t *only)
{
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

int32_t belt_session_grammar_forced(const uint32_t *mask, int32_t n)
{
	int32_t id = -1;
	for (int32_t w = 0; w < (n + 31) / 32; w++) {
		if (!mask[w])
			continue;
		if (id >= 0 || (mask[w] & (mask[w] - 1)))
			return -1;
		id = w * 32 + __builtin_ctz(mask[w]);
	}
	return id < n ? id : -1;
}

bool belt_session_grammar_only_eog(const uint32_t *mask, const struct belt_tokenizer *tok,
				   int32_t n)
{
	bool any = false;
	for (int32_t w = 0; w < (n + 31) / 32; w++)
		for (uint32_t bits = mask[w]; bits; bits &= bits - 1) {
			if (!belt_tok_is_eog(tok, w * 32 + __builtin_ctz(bits)))
				return false;
			any = true;
		}
	return any;
}
