/* Sampled chain decode: the session's dispatch table with the sampler's
 * GPU commands inserted just before the argmax, so that each token is
 * drawn on the device and a run of tokens needs no host work in between,
 * as in greedy decoding. Built and prepared on first use, again only when
 * the sampling settings change; none when the backend lacks the ops (the
 * caller then draws on the host). For constrained decoding a logit_mask
 * command comes first, reading the grammar's mask that the host writes
 * before each run: the pick is made on the device and only its id comes
 * back. */
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

#define MAX_SAMPLER_CMDS 8
/* the binding slot of the grammar's mask (beside enum belt_sampler_slot) */
#define SLOT_MASK 255

/* Index of the command that writes the next token id, or -1. */
static int find_argmax(const struct belt_table *t)
{
	int at = -1;
	for (uint32_t i = 0; i < t->n_cmds; i++)
		if (t->cmds[i].patch == BELT_PATCH_ARGMAX_OUTPUT) {
			if (at >= 0)
				return -1; /* two: no single place to insert */
			at = (int)i;
		}
	return at;
}

void belt_session_chain_release(struct belt_session *s)
{
	struct belt_model *m = s->m;
	if (s->chain.priv)
		m->be->table_release(m->be_ctx, &s->chain);
	s->chain.priv = NULL;
	free(s->chain.cmds);
	s->chain.cmds = NULL;
	if (s->chain_scratch)
		m->be->buffer_destroy(m->be_ctx, s->chain_scratch);
	s->chain_scratch = NULL;
	if (s->mask_buf)
		m->be->buffer_destroy(m->be_ctx, s->mask_buf);
	s->mask_buf = NULL;
	s->chain_ready = false;
}

/* The binding a command slot stands for. */
static int slot_binding(struct belt_session *s, const struct belt_binding *logits,
			uint8_t slot, uint64_t scratch_bytes, struct belt_binding *out,
			char *err, size_t errsz)
{
	switch (slot) {
	case BELT_SLOT_LOGITS:
		*out = *logits;
		return 0;
	case BELT_SLOT_TOKEN_IDS:
		*out = (struct belt_binding){.buf = s->token_ids, .size = (uint64_t)(s->n_ctx + 1) * 4,
					     .type = BELT_TYPE_I32, .ne = {s->n_ctx + 1, 1}};
		return 0;
	case BELT_SLOT_SCRATCH:
		if (!s->chain_scratch)
			return belt_errf(err, errsz, "sampler: a command binds scratch but asked for none");
		*out = (struct belt_binding){.buf = s->chain_scratch, .size = scratch_bytes,
					     .type = BELT_TYPE_F32, .ne = {(int64_t)(scratch_bytes / 4), 1}};
		return 0;
	case SLOT_MASK: {
		uint64_t words = ((uint64_t)s->m->n_vocab + 31) / 32;
		*out = (struct belt_binding){.buf = s->mask_buf, .size = words * 4,
					     .type = BELT_TYPE_I32, .ne = {(int64_t)words, 1}};
		return 0;
	}
	}
	return belt_errf(err, errsz, "sampler: unknown binding slot %u", slot);
}

/* Fill s->chain: the table with cmds[0..n) before the argmax at `at`. */
static int build(struct belt_session *s, const struct belt_sampler_cmd *sc, int n,
		 const struct belt_kernel *const *kern, int at, uint64_t scratch_bytes,
		 char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	const struct belt_table *t = &s->table;
	if (scratch_bytes &&
	    m->be->buffer_create(m->be_ctx, BELT_BUFFER_SCRATCH, scratch_bytes, &s->chain_scratch,
				 err, errsz))
		return belt_err_prefix(err, errsz, "sampler scratch");
	if (s->chain_masked &&
	    m->be->buffer_create(m->be_ctx, BELT_BUFFER_IO, ((uint64_t)m->n_vocab + 31) / 32 * 4,
				 &s->mask_buf, err, errsz))
		return belt_err_prefix(err, errsz, "grammar mask");
	struct belt_cmd *cmds = calloc(t->n_cmds + (size_t)n, sizeof *cmds);
	if (!cmds)
		return belt_errf(err, errsz, "sampler: out of memory for the chain table");
	memcpy(cmds, t->cmds, (size_t)at * sizeof *cmds);
	memcpy(cmds + at + n, t->cmds + at, (t->n_cmds - (size_t)at) * sizeof *cmds);
	const struct belt_binding *logits = &t->cmds[at].bind[0];
	for (int i = 0; i < n; i++) {
		struct belt_cmd *c = &cmds[at + i];
		*c = (struct belt_cmd){.kernel = kern[i], .patch = sc[i].patch, .n_bind = sc[i].n_bind,
				       .n_param = sc[i].n_param, .head = true, .layer = -1,
				       .label = kern[i]->op};
		memcpy(c->param, sc[i].param, sizeof c->param);
		for (unsigned b = 0; b < sc[i].n_bind; b++)
			if (slot_binding(s, logits, sc[i].slot[b], scratch_bytes, &c->bind[b], err,
					 errsz)) {
				free(cmds);
				return -1;
			}
	}
	s->chain = *t;
	s->chain.cmds = cmds;
	s->chain.n_cmds = t->n_cmds + (uint32_t)n;
	s->chain.priv = NULL;
	/* the mask, first of the inserted commands, is written by the host
	 * between positions (gated.c) */
	s->chain.gate = s->chain_masked ? (uint32_t)at : 0;
	if (m->be->table_prepare(m->be_ctx, &s->chain, err, errsz)) {
		s->chain.priv = NULL;
		return belt_err_prefix(err, errsz, m->be->name);
	}
	return 0;
}

int belt_session_chain(struct belt_session *s, const struct belt_sampler_ops *so,
		       const struct belt_sampling *sp, bool masked, struct belt_table **out,
		       char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	struct belt_sampling greedy;
	if (!sp || !so) {
		belt_sampling_default(&greedy);
		greedy.temp = 0.0f;
		sp = &greedy;
	}
	*out = NULL;
	if (s->chain_ready && s->chain_masked == masked &&
	    !memcmp(&s->chain_params, sp, sizeof *sp)) {
		*out = &s->chain;
		return 0;
	}
	belt_session_chain_release(s);
	struct belt_sampler_cmd sc[MAX_SAMPLER_CMDS + 1];
	const struct belt_kernel *kern[MAX_SAMPLER_CMDS + 1];
	uint64_t scratch_bytes = 0;
	int n = 0;
	if (masked) {
		sc[0] = (struct belt_sampler_cmd){.op = "logit_mask", .n_bind = 2,
						  .slot = {BELT_SLOT_LOGITS, SLOT_MASK}, .n_param = 1,
						  .param = {{.i = m->n_vocab}}};
		n = 1;
	}
	if (!belt_sampling_greedy(sp)) {
		int k = so->chain_commands(sp, m->n_vocab, sc + n, MAX_SAMPLER_CMDS, &scratch_bytes,
					   err, errsz);
		if (k < 0)
			return belt_err_prefix(err, errsz, so->name);
		if (k == 0)
			return 0;
		n += k;
	}
	int at = find_argmax(&s->table);
	if (n == 0 || at < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (!(kern[i] = m->be->kernel_find(m->be_ctx, sc[i].op, "default", BELT_TYPE_ANY)))
			return 0; /* the backend cannot: draw on the host */
	s->chain_masked = masked;
	if (build(s, sc, n, kern, at, scratch_bytes, err, errsz)) {
		belt_session_chain_release(s);
		return -1;
	}
	memcpy(&s->chain_params, sp, sizeof *sp);
	s->chain_ready = true;
	*out = &s->chain;
	return 0;
}
