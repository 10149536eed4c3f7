/* Speculative decode (doc/drafting.md): the drafter proposes a chain of
 * tokens to follow the last one; the batched table runs the last token
 * and the proposal as rows of one pass, and each row's pick (the argmax,
 * or the sampler's draw for that position) is what one-token decoding
 * would have picked there. The proposal holds up to the first row whose
 * pick differs from the next proposed token; that pick is the correction
 * and comes free. Row r's cache slot is pos + r, so the slots of the
 * accepted rows are already those plain decoding writes; the rejected
 * rows' slots lie past the new position and are written again before
 * any row reads them. Where the backend copies buffers, a proposal may
 * be a tree: the pass runs it with each row attending to its ancestors,
 * the longest path whose every token is its parent's pick holds, and the
 * entries of that path's rows that are not in their position's slot are
 * moved there (kv_move.c). A sampler draws with noise keyed by seed and
 * position (doc/samplers.md), so sampled output equals plain sampled
 * output too, not only in distribution. Where the drafter has nothing,
 * positions run as plain chains, longer the longer it stays silent; and
 * where drafting costs more time per token than plain chains (struct
 * pace), plain chains run until the next try. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/sampler.h"
#include "session/session.h"

#define DRAFT_MAX_DEFAULT 8

void belt_drafter_free(struct belt_drafter *d)
{
	if (!d)
		return;
	d->ops->free(d->ctx);
	free(d);
}

void belt_session_speculate_release(struct belt_session *s)
{
	free(s->draft_nodes);
	free(s->draft_rows);
	free(s->draft_out);
	free(s->draft_logits);
	free(s->draft_parent);
	free(s->draft_path);
	free(s->draft_from);
	free(s->draft_to);
	free(s->draft_copies);
	s->draft_nodes = NULL;
	s->draft_rows = s->draft_out = s->draft_parent = s->draft_path = NULL;
	s->draft_from = s->draft_to = NULL;
	s->draft_copies = NULL;
	s->draft_logits = NULL;
	s->draft_logit_rows = 0;
}

/* The arrays for proposals of up to max tokens (max + 1 rows). */
static int setup(struct belt_session *s, uint32_t max, bool sampled, char *err, size_t errsz)
{
	size_t n = s->n_ubatch;
	if (!s->draft_nodes) {
		s->draft_nodes = malloc(n * sizeof *s->draft_nodes);
		s->draft_rows = malloc(n * sizeof *s->draft_rows);
		s->draft_out = malloc(n * sizeof *s->draft_out);
	}
	if (!s->draft_path)
		s->draft_path = malloc(n * sizeof *s->draft_path);
	if (!s->draft_parent && belt_session_kv_movable(s)) {
		s->draft_parent = malloc(n * sizeof *s->draft_parent);
		s->draft_from = malloc(n * sizeof *s->draft_from);
		s->draft_to = malloc(n * sizeof *s->draft_to);
		s->draft_copies = malloc(n * belt_session_kv_regions(s) * sizeof *s->draft_copies);
		if (!s->draft_parent || !s->draft_from || !s->draft_to || !s->draft_copies)
			return belt_errf(err, errsz, "drafting: out of memory for trees of %zu rows",
					 n);
	}
	if (sampled && s->draft_logit_rows < max + 1) {
		free(s->draft_logits);
		s->draft_logits = malloc((size_t)(max + 1) * (size_t)s->m->n_vocab * sizeof(float));
		s->draft_logit_rows = s->draft_logits ? max + 1 : 0;
	}
	if (!s->draft_nodes || !s->draft_rows || !s->draft_out || !s->draft_path ||
	    (sampled && !s->draft_logits))
		return belt_errf(err, errsz, "drafting: out of memory for %u rows", max + 1);
	return 0;
}

/* Run n positions from pos without drafts, as belt_generate's loops do:
 * a chain through t (its own pick), or one position per run with the
 * pick on the host by so; s->ids[pos + 1 .. pos + n] get the tokens. */
static int plain(struct belt_session *s, struct belt_table *t, const struct belt_sampler_ops *so,
		 const struct belt_generate_params *gp, uint32_t pos, uint32_t n, char *err,
		 size_t errsz)
{
	struct belt_model *m = s->m;
	/* a rejected draft may sit in token_ids[pos] */
	if (m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)pos * 4, &s->ids[pos], 4, err,
				errsz))
		return -1;
	if (so) {
		for (uint32_t i = 0; i < n; i++)
			if (m->be->table_run(m->be_ctx, t, pos + i, 1, 0, err, errsz) ||
			    belt_session_host_next(s, so, gp->sampling, NULL, pos + i, err, errsz))
				return -1;
		return 0;
	}
	uint32_t flags = gp->stop_at_eog ? BELT_RUN_STOP_AT_EOG : 0;
	if (m->be->table_run(m->be_ctx, t, pos, n, flags, err, errsz))
		return -1;
	return m->be->buffer_read(m->be_ctx, s->token_ids, (uint64_t)(pos + 1) * 4,
				  &s->ids[pos + 1], (uint64_t)n * 4, err, errsz);
}

/* The first row after cur that continues it with token t (a chain:
 * parent NULL, row cur + 1), or n. */
static uint32_t child(const int32_t *rows, const int32_t *parent, uint32_t n, uint32_t cur,
		      int32_t t)
{
	uint32_t c = cur + 1;
	if (!parent)
		return c < n && rows[c] == t ? c : n;
	while (c < n && !(parent[c] == (int32_t)cur && rows[c] == t))
		c++;
	return c;
}

/* Check rows[0..n) at pos in one pass, a chain (parent NULL) or the tree
 * parent gives (row r continuing row parent[r]). From row 0, the path
 * goes to the child whose token is its row's pick (the pass's argmax, or
 * drawn by so on the host from the row's logits, the path's tokens as
 * the history its penalties read) while there is one: path[0..d] gets
 * its rows, s->ids its tokens and the last row's pick, and the entries
 * of its rows out of their positions' slots are moved there. Returns d,
 * the drafts that held. */
static int verify(struct belt_session *s, const struct belt_sampler_ops *so,
		  const struct belt_sampling *sp, const int32_t *rows, const int32_t *parent,
		  uint32_t n, uint32_t pos, int32_t *out, int32_t *path, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	size_t nv = (size_t)m->n_vocab;
	if (!so) {
		if (belt_session_verify_rows(s, rows, parent, n, pos, out, err, errsz))
			return -1;
	} else {
		s->batch.parent = parent;
		int rc = m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)pos * 4, rows,
					     (uint64_t)n * 4, err, errsz) ||
			 m->be->table_run(m->be_ctx, &s->batch, pos, n, parent ? BELT_RUN_TREE : 0,
					  err, errsz) ||
			 m->be->buffer_read(m->be_ctx, s->logits->buf, 0, s->draft_logits,
					    (uint64_t)n * nv * 4, err, errsz);
		s->batch.parent = NULL;
		if (rc)
			return -1;
	}
	uint32_t d = 0, cur = 0, moves = 0;
	path[0] = 0;
	for (;;) {
		if (so) {
			s->ids[pos + d] = rows[cur];
			out[cur] = so->sample(sp, s->draft_logits + cur * nv, m->n_vocab, s->ids,
					      pos + d + 1, pos + d, s->sample_work);
			if (out[cur] < 0 || out[cur] >= m->n_vocab)
				return belt_errf(err, errsz, "sampler %s returned token %d",
						 so->name, out[cur]);
		}
		uint32_t c = child(rows, parent, n, cur, out[cur]);
		if (c == n)
			break;
		path[++d] = (int32_t)c;
		cur = c;
	}
	for (uint32_t i = 1; i <= d; i++) {
		s->ids[pos + i] = rows[path[i]];
		if (path[i] != (int32_t)i) {
			s->draft_from[moves] = pos + (uint32_t)path[i];
			s->draft_to[moves++] = pos + i;
		}
	}
	s->ids[pos + d + 1] = out[cur];
	if (moves && belt_session_kv_move(s, s->draft_from, s->draft_to, moves, s->draft_copies,
					  err, errsz))
		return -1;
	s->stats.n_moved += moves;
	return (int)d;
}

/* What drafting costs against plain decoding, measured as it runs and
 * kept with the drafter (struct belt_pace): host seconds per new token of
 * the verification passes and of plain chains of `chunk` positions
 * (moving averages). Where drafts cost more than they save (a slow
 * verification pass, drafts that hold too little), decoding goes on as
 * plain chains and tries one proposal again after a gap of tokens: at
 * least 20 times the plain tokens the failed pass's extra time would have
 * decoded (so tries cost at most ~5%), and twice the last gap while tries
 * keep failing, up to GAP_MAX. A try is judged on its own pass. */
#define GAP_FIRST 32
#define GAP_MAX 4096

/* The gap after a pass that cost `extra` seconds more than plain decoding
 * of its tokens. */
static uint32_t next_gap(const struct belt_pace *p, double extra)
{
	double g = 20.0 * extra / p->plain, twice = 2.0 * (p->gap ? p->gap : GAP_FIRST / 2);
	if (g < twice)
		g = twice;
	return g > GAP_MAX ? GAP_MAX : (uint32_t)g;
}

static void average(double *avg, double v)
{
	*avg = *avg > 0 ? 0.75 * *avg + 0.25 * v : v;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int belt_session_speculate(struct belt_session *s, const struct belt_generate_params *gp,
			   const struct belt_sampler_ops *so, const struct belt_sampler_ops *so_idle,
			   struct belt_table *t, struct belt_tok_stream *ts, uint32_t *pos_io,
			   belt_token_fn fn, void *ud, bool *go, char *err, size_t errsz)
{
	struct belt_drafter *d = gp->drafter;
	uint32_t max = gp->draft_max ? gp->draft_max : DRAFT_MAX_DEFAULT;
	if (max > s->n_ubatch - 1)
		max = s->n_ubatch - 1;
	if (setup(s, max, so != NULL, err, errsz) || belt_session_tap_setup(s, d, err, errsz))
		return -1;
	uint32_t pos = *pos_io, idle = 1;
	/* where the hidden state of pos lies: the one-row table's last
	 * position (prefill's last token, a chain's), or a pass's row */
	bool tap_batch = false;
	uint32_t tap_row = 0;
	struct belt_pace *pc = &d->pace;
	/* drafting found dearer before: plain tokens until the next try */
	uint32_t until = pc->plain > 0 && pc->draft > pc->plain ? pc->gap : 0;
	while (*go && pos < s->n_ctx) {
		/* drafts must fit the context and what is left to generate */
		uint32_t room = s->n_ctx - 1 - pos, k = max;
		if (k > room)
			k = room;
		if (gp->n_predict && k > gp->n_predict - s->stats.n_generated - 1)
			k = gp->n_predict - s->stats.n_generated - 1;
		/* plain chains first, to know what drafts must beat; then, with
		 * drafting found dearer, no proposal until the gap is run */
		bool paused = !gp->draft_unpaced && (until > 0 || pc->plain == 0);
		double t0 = now();
		const float *hidden = NULL;
		int got = 0, tap_rc = 0;
		if (k && !paused && !s->tap_none &&
		    !(hidden = belt_session_tap_run(s, tap_batch, tap_row, err, errsz, &tap_rc)) &&
		    tap_rc < 0)
			return belt_err_prefix(err, errsz, "draft tap");
		if (k && !paused)
			got = d->ops->propose(d->ctx, s->ids, pos + 1, hidden, s->draft_nodes, (int)k,
					      err, errsz);
		if (got < 0)
			return belt_err_prefix(err, errsz, d->ops->name);
		/* a chain: the nodes up to the first that branches; where
		 * cache entries can move, the whole tree */
		bool trees = s->draft_parent != NULL, chain = true;
		uint32_t n = 0;
		for (; n < (uint32_t)got && n < k; n++) {
			const struct belt_draft_node *nd = &s->draft_nodes[n];
			if (nd->parent != (int32_t)n - 1) {
				if (!trees)
					break;
				if (nd->parent < -1 || nd->parent >= (int32_t)n)
					return belt_errf(err, errsz,
							 "%s: proposed node %u's parent is %d: expected "
							 "-1 .. %u",
							 d->ops->name, n, nd->parent, n - 1 + (n == 0));
				chain = false;
			}
			if (nd->token < 0 || nd->token >= s->m->n_vocab)
				return belt_errf(err, errsz, "%s: proposed token %d: expected 0 .. %d",
						 d->ops->name, nd->token, s->m->n_vocab - 1);
		}
		uint32_t add; /* new tokens, in s->ids[pos + 1 ..] */
		if (n == 0) {
			uint32_t want = paused || pc->plain == 0 ? s->chunk : idle;
			add = s->n_ctx - pos < want ? s->n_ctx - pos : want;
			if (gp->n_predict && add > gp->n_predict - s->stats.n_generated)
				add = gp->n_predict - s->stats.n_generated;
			if (plain(s, t, so_idle, gp, pos, add, err, errsz))
				return -1;
			tap_batch = false;
			tap_row = 0;
			double spent = now() - t0;
			if (add == want && want == s->chunk && !hidden)
				average(&pc->plain, spent / add);
			idle = idle * 2 <= s->chunk ? idle * 2 : s->chunk;
			until = until > add ? until - add : 0;
			/* a tap that ran for no proposal is a try that lost */
			if (hidden && pc->plain > 0 && spent > add * pc->plain) {
				pc->draft = spent / add;
				pc->gap = next_gap(pc, spent - add * pc->plain);
				until = pc->gap;
			}
		} else {
			s->draft_rows[0] = s->ids[pos];
			for (uint32_t i = 0; i < n; i++)
				s->draft_rows[i + 1] = s->draft_nodes[i].token;
			if (!chain) {
				s->draft_parent[0] = -1;
				for (uint32_t i = 0; i < n; i++)
					s->draft_parent[i + 1] = s->draft_nodes[i].parent + 1;
			}
			int held = verify(s, so, gp->sampling, s->draft_rows,
					  chain ? NULL : s->draft_parent, n + 1, pos, s->draft_out,
					  s->draft_path, err, errsz);
			if (held < 0)
				return -1;
			tap_batch = true;
			tap_row = (uint32_t)s->draft_path[held];
			/* the path's nodes (its rows less the first) */
			int32_t *path = s->draft_rows; /* the rows are spent */
			for (int i = 0; i < held; i++)
				path[i] = s->draft_path[i + 1] - 1;
			d->ops->accept(d->ctx, path, held);
			s->stats.n_verify++;
			s->stats.n_drafted += n;
			s->stats.n_accepted += (uint32_t)held;
			add = (uint32_t)held + 1;
			double spent = now() - t0;
			/* a try after a pause is judged on its own pass */
			if (pc->plain > 0 && pc->draft > pc->plain)
				pc->draft = spent / add;
			else
				average(&pc->draft, spent / add);
			idle = 1;
			if (pc->plain > 0 && pc->draft > pc->plain) {
				pc->gap = next_gap(pc, spent - add * pc->plain);
				until = pc->gap;
			} else {
				pc->gap = 0;
			}
		}
		/* pos ends at the last token taken: rows past it are stale */
		uint32_t i = 0;
		while (*go && i < add)
			*go = belt_session_emit(s, ts, s->ids[pos + ++i], gp, fn, ud);
		pos += i;
	}
	*pos_io = pos;
	return 0;
}
