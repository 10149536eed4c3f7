/* Grammars in the decode loop: the tokens the grammar allows mask each
 * position's logits before the pick (the "logits" insertion point of
 * belt/grammar.h), on the device (the chain's logit_mask) or on the host;
 * tokens it forces run as one batch (doc/grammars.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

bool belt_session_grammar_none(const uint32_t *mask, int32_t n)
{
	for (int32_t w = 0; w < (n + 31) / 32; w++)
		if (mask[w])
			return false;
	return true;
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

/* What g allows after the tokens it has accepted, into s->grammar_mask:
 * once per position, for the check before its pass and for its pick. */
void belt_session_grammar_allowed(struct belt_session *s, struct belt_grammar *g)
{
	if (g)
		g->ops->allowed(g->state, s->grammar_mask, s->m->n_vocab);
}

/* The grammar's mask (s->grammar_mask) into the buffer the chain's
 * logit_mask reads, for the next run's pick. */
int belt_session_upload_mask(struct belt_session *s, char *err, size_t errsz)
{
	return s->m->be->buffer_write(s->m->be_ctx, s->mask_buf, 0, s->grammar_mask,
				      ((uint64_t)s->m->n_vocab + 31) / 32 * 4, err, errsz);
}

/* The token after position pos, once its run is done: picked on the host
 * (belt_session_host_next), or on the device by the masked chain, whose
 * pick the grammar then takes (1: the grammar allows no token; the run
 * picked among none). */
int belt_session_pick(struct belt_session *s, const struct belt_sampler_ops *so,
		const struct belt_sampling *sp, struct belt_grammar *g, bool device_pick,
		uint32_t pos, char *err, size_t errsz)
{
	if (!device_pick)
		return belt_session_host_next(s, so, sp, g, pos, err, errsz);
	int32_t id;
	if (belt_session_grammar_none(s->grammar_mask, s->m->n_vocab))
		return 1;
	if (s->m->be->buffer_read(s->m->be_ctx, s->token_ids, (uint64_t)(pos + 1) * 4, &id, 4,
				  err, errsz))
		return -1;
	if (id < 0 || id >= s->m->n_vocab)
		return belt_errf(err, errsz, "the device picked token %d: expected 0 .. %d", id,
				 s->m->n_vocab - 1);
	if (g->ops->accept(g->state, id, err, errsz))
		return belt_err_prefix(err, errsz, "grammar (the device's pick)");
	s->ids[pos + 1] = id;
	return 0;
}

/* With a grammar, from position pos (ids[pos] taken, not run, its mask in
 * s->grammar_mask): the tokens the grammar forces next (one allowed token
 * each) are taken without logits, as one-token decoding takes them, then
 * run with ids[pos] as one batch, whose last row's logits pick the token
 * after them. *pos ends at the last token taken; 0 when no token was
 * forced (nothing ran), 1 when some were (*go as emit left it), -1. */
int belt_session_forced(struct belt_session *s, struct belt_grammar *g,
		  const struct belt_generate_params *gp, struct belt_table *t, bool device_pick,
		  struct belt_tok_stream *ts, belt_token_fn fn, void *ud, uint32_t *pos, bool *go,
		  char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	uint32_t p = *pos, k = 0;
	int32_t id;
	while (*go && p + k + 1 < s->n_ctx &&
	       (id = belt_session_grammar_forced(s->grammar_mask, m->n_vocab)) >= 0 &&
	       !(gp->stop_at_eog && belt_tok_is_eog(m->tok, id))) {
		if (g->ops->accept(g->state, id, err, errsz))
			return belt_err_prefix(err, errsz, "grammar");
		s->ids[p + ++k] = id;
		*go = belt_session_emit(s, ts, id, gp, fn, ud);
		belt_session_grammar_allowed(s, g);
	}
	if (k == 0)
		return 0;
	/* positions p .. p + k - 1 run, and p + k too where more follows */
	if ((device_pick && belt_session_upload_mask(s, err, errsz)) ||
	    belt_session_prefill(s, t, s->ids + p, *go ? k + 1 : k, p, err, errsz))
		return -1;
	s->stats.n_forced += k;
	*pos = p + k;
	return 1;
}
