/* Context shift (belt_generate_params.context_shift; doc/chat.md): a
 * full context keeps its first n_keep tokens, drops half of the rest and
 * runs the remainder again from n_keep, as a prompt. */
#include <string.h>

#include "session/session.h"

uint32_t belt_keep_tokens(const struct belt_tokenizer *tok, const int32_t *prompt, size_t n,
			  long keep)
{
	if (keep < 0 || (size_t)keep >= n)
		return (uint32_t)n;
	return (uint32_t)keep + (prompt[0] == belt_tok_bos(tok));
}

/* The context is full at pos (s->ids[0 .. pos], the last not yet run):
 * keep the first n_keep tokens, drop half of those after them, run the
 * rest again from n_keep (their last, the pending token, through t's
 * head) and pick the next token, as after a prompt. *pos becomes the
 * position of the pending token + 1; returns as belt_session_host_next
 * (1: the grammar allows nothing). */
int belt_session_shift(struct belt_session *s, const struct belt_generate_params *gp,
		 struct belt_table *t, bool host, const struct belt_sampler_ops *so,
		 struct belt_grammar *g, bool device_pick, uint32_t *pos, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	uint32_t keep = gp->n_keep < s->n_ctx / 2 ? gp->n_keep : s->n_ctx / 2;
	uint32_t drop = (*pos - keep) / 2 ? (*pos - keep) / 2 : 1;
	uint32_t n = *pos + 1 - drop; /* tokens left, the pending one included */
	memmove(s->ids + keep, s->ids + keep + drop, (size_t)(n - keep) * sizeof *s->ids);
	/* sliding-window layers' rings no longer hold what precedes keep
	 * (the decode reached *pos): the kept tokens run again too */
	belt_session_kv_written(s, *pos);
	if (!belt_session_resumable(s, keep))
		keep = 0;
	belt_session_kv_from(s, keep);
	belt_session_grammar_allowed(s, g);
	if (device_pick && belt_session_upload_mask(s, err, errsz))
		return -1;
	if (belt_session_prefill(s, t, s->ids + keep, n - keep, keep, err, errsz))
		return -1;
	s->stats.n_shifts++;
	*pos = n;
	if (!host)
		return m->be->buffer_read(m->be_ctx, s->token_ids, (uint64_t)n * 4, &s->ids[n], 4,
					  err, errsz);
	return belt_session_pick(s, so, gp->sampling, g, device_pick, n - 1, err, errsz);
}
