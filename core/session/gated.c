/* Constrained decode with the mask computed while the layers run: a gated
 * run (belt/backend.h table_run_gated) of the masked chain table, whose
 * logit_mask command and what follows it wait for the host. Between two
 * positions the host takes the token the device picked, lets the grammar
 * accept it (which computes the next mask) and writes the mask, while the
 * device already runs the next position's layers; only the head waits
 * (doc/grammars.md). */
#include "session/session.h"

/* What gate() works on between the positions of one gated run. */
struct gated {
	struct belt_session *s;
	struct belt_grammar *g;
	const struct belt_generate_params *gp;
	struct belt_tok_stream *ts;
	belt_token_fn fn;
	void *ud;
	uint32_t pos;	/* the run's first position */
	uint32_t taken; /* the tokens after pos taken so far */
	bool go;	/* as the last emit left it */
	bool failed;	/* an error, in err */
	char *err;
	size_t errsz;
};

/* Take the token the device picked at position c->pos + i - 1: read,
 * accepted by the grammar (its next mask computed), handed to the caller. */
static int take(struct gated *c, uint32_t i)
{
	struct belt_session *s = c->s;
	uint32_t p = c->pos + i;
	int rc = belt_session_pick(s, NULL, NULL, c->g, true, p - 1, c->err, c->errsz);
	if (rc) /* 1: the run picked among none, which gate() never lets run */
		return rc < 0 ? -1 : belt_errf(c->err, c->errsz, "grammar: a pick without a mask");
	c->taken = i;
	c->go = belt_session_emit(s, c->ts, s->ids[p], c->gp, c->fn, c->ud);
	return 0;
}

/* Before position c->pos + i's head: for i > 0 take the token before it;
 * then its mask to the device (0), or BELT_GATE_STOP where generation
 * ends, or the grammar ends or allows no token (generate.c's loop says
 * which). A forced token is picked by the position already under way
 * (BELT_GATE_LAST): the loop then runs the tokens it forces after it as a
 * batch. */
static int gate(void *ud, uint32_t i)
{
	struct gated *c = ud;
	struct belt_session *s = c->s;
	int go = 0;
	if (i > 0) {
		if (take(c, i)) {
			c->failed = true;
			return BELT_GATE_STOP;
		}
		if (!c->go)
			return BELT_GATE_STOP;
		belt_session_grammar_allowed(s, c->g);
		int32_t n = s->m->n_vocab;
		if (belt_session_grammar_none(s->grammar_mask, n) ||
		    (c->gp->stop_at_eog &&
		     belt_session_grammar_only_eog(s->grammar_mask, s->m->tok, n)))
			return BELT_GATE_STOP;
		if (belt_session_grammar_forced(s->grammar_mask, n) >= 0)
			go = BELT_GATE_LAST;
	}
	if (belt_session_upload_mask(s, c->err, c->errsz)) {
		c->failed = true;
		return BELT_GATE_STOP;
	}
	return go;
}

/* Positions pos .. pos + n - 1 of t, gate() before each one's head: the
 * backend's gated run, or one position at a time where it has none. */
static int run_gated(struct gated *c, struct belt_table *t, uint32_t n)
{
	struct belt_model *m = c->s->m;
	if (m->be->abi >= 5 && m->be->table_run_gated)
		return m->be->table_run_gated(m->be_ctx, t, c->pos, n, gate, c, c->err, c->errsz);
	for (uint32_t i = 0; i < n; i++) {
		int r = gate(c, i);
		if (r == BELT_GATE_STOP)
			return (int)i;
		if (m->be->table_run(m->be_ctx, t, c->pos + i, 1, 0, c->err, c->errsz))
			return -1;
		if (r == BELT_GATE_LAST)
			return (int)i + 1;
	}
	return (int)n;
}

int belt_session_gated(struct belt_session *s, struct belt_grammar *g,
		       const struct belt_generate_params *gp, struct belt_table *t,
		       struct belt_tok_stream *ts, belt_token_fn fn, void *ud, uint32_t *pos,
		       bool *go, char *err, size_t errsz)
{
	uint32_t n = s->n_ctx - *pos;
	if (n > s->chunk)
		n = s->chunk;
	if (gp->n_predict && n > gp->n_predict - s->stats.n_generated)
		n = gp->n_predict - s->stats.n_generated;
	struct gated c = {.s = s, .g = g, .gp = gp, .ts = ts, .fn = fn, .ud = ud, .pos = *pos,
			  .go = *go, .err = err, .errsz = errsz};
	/* the session keeps a group's turn through the run's callbacks: the
	 * backend is busy with it meanwhile */
	bool turn = s->holds_turn;
	s->holds_turn = false;
	int k = run_gated(&c, t, n);
	s->holds_turn = turn;
	if (k < 0 || c.failed)
		return -1;
	/* the last position run, when gate() did not follow it */
	if ((uint32_t)k > c.taken && c.go && take(&c, (uint32_t)k))
		return -1;
	*pos += c.taken;
	*go = c.go;
	return 0;
}
