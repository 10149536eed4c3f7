/* The decode loop: prefill the prompt from its first token the KV cache
 * does not hold (s->n_kv), then chain decode, `chunk` tokens per backend
 * run. The argmax of the token at position p writes
 * token_ids[p + 1], which the next position's embedding reads, so a run of
 * n positions needs no host work in between. Sampled decode is a chain
 * too where the backend has the sampler's ops (chain.c: the sampler's
 * commands run before the argmax); elsewhere it runs one position per
 * backend call and draws each token on the host with the sampler plugin's
 * CPU function. A grammar takes that host path on every backend, greedy
 * or sampled: its mask needs the token before, so no run of positions
 * can go ahead without the host (grammar.c). Nothing here allocates per
 * token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/sampler.h"
#include "session/session.h"

void belt_generate_params_default(struct belt_generate_params *p)
{
	*p = (struct belt_generate_params){.n_predict = 0, .stop_at_eog = true};
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check_prompt(struct belt_session *s, const int32_t *ids, size_t n,
			uint32_t pos, char *err, size_t errsz)
{
	if (n == 0)
		return belt_errf(err, errsz, "empty prompt: at least one token (e.g. BOS) is needed");
	if (pos + n > s->n_ctx)
		return belt_errf(err, errsz, "prompt of %zu tokens at position %u does not fit the context of %u",
				 n, pos, s->n_ctx);
	if (!belt_session_resumable(s, pos))
		return belt_errf(err, errsz,
				 "position %u: the sliding-window layers' caches no longer hold the "
				 "window before it (the session reached position %u: a run may start "
				 "at 0 or from %u on); evaluate from 0, or keep them whole (swa_full, "
				 "--swa-full)",
				 pos, s->kv_top, s->kv_top - s->kv_rewind);
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= s->m->n_vocab)
			return belt_errf(err, errsz, "token %zu of the prompt is id %d: expected 0 .. %d",
					 i, ids[i], s->m->n_vocab - 1);
	return 0;
}

/* Before a run that writes cache slots from pos on: what the cache holds
 * from pos on is no longer known (also when the run fails). */
void belt_session_kv_from(struct belt_session *s, uint32_t pos)
{
	if (s->n_kv > pos)
		s->n_kv = pos;
	if (pos == 0)
		s->kv_top = 0;
}

bool belt_session_resumable(const struct belt_session *s, uint32_t pos)
{
	return pos == 0 || (uint64_t)pos + s->kv_rewind >= s->kv_top;
}

void belt_session_kv_written(struct belt_session *s, uint32_t n)
{
	if (n > s->kv_top)
		s->kv_top = n;
}

/* The cache holds the first n positions. */
static void kv_reached(struct belt_session *s, uint32_t n)
{
	s->n_kv = n;
	belt_session_kv_written(s, n);
}

/* After tokens[0..n) ran in order at pos: they extend the prefix the
 * cache holds where it reaches pos (after a gap it stays as it is). */
static void kv_ran(struct belt_session *s, const int32_t *tokens, size_t n, uint32_t pos)
{
	if (s->n_kv != pos)
		return;
	memmove(s->ids + pos, tokens, n * sizeof *tokens);
	kv_reached(s, pos + (uint32_t)n);
}

/* How many of the prompt's first tokens the cache holds already: the
 * common prefix with ids[0 .. n_kv), short of the last token, which runs
 * again for the logits that pick the first new token. */
static uint32_t reusable(const struct belt_session *s, const int32_t *prompt, size_t n)
{
	uint32_t k = 0;
	while (k < s->n_kv && k + 1 < n && prompt[k] == s->ids[k])
		k++;
	/* sliding-window layers' rings may not reach back that far */
	return belt_session_resumable(s, k) ? k : 0;
}

/* Run n tokens already in token_ids[pos ..) through the batched table,
 * n_ubatch rows per pass; flags as table_run's (no head, or every row's). */
static int run_batched(struct belt_session *s, uint32_t pos, size_t n, uint32_t flags,
		       float *logits, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	size_t row_bytes = (size_t)m->n_vocab * 4;
	for (size_t done = 0; done < n;) {
		uint32_t run = n - done < s->n_ubatch ? (uint32_t)(n - done) : s->n_ubatch;
		if (m->be->table_run(m->be_ctx, &s->batch, pos + (uint32_t)done, run, flags, err,
				     errsz))
			return -1;
		if (logits && m->be->buffer_read(m->be_ctx, s->logits->buf, 0,
						 logits + done * (size_t)m->n_vocab,
						 (uint64_t)run * row_bytes, err, errsz))
			return -1;
		done += run;
	}
	return 0;
}

/* Write the prompt into token_ids and run it: all but its last token
 * through the batched table (a pass per micro-batch, no head), the last
 * through t, whose head leaves the first new token in token_ids[pos + n]
 * and its logits in the logits buffer's first row. Without a batched
 * table, t runs every position, in runs of at most max_run. */
int belt_session_prefill(struct belt_session *s, struct belt_table *t, const int32_t *ids,
			 size_t n, uint32_t pos, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (check_prompt(s, ids, n, pos, err, errsz))
		return -1;
	belt_session_kv_from(s, pos);
	if (m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)pos * 4, ids, n * 4, err, errsz))
		return -1;
	uint32_t done = 0;
	if (s->batch.n_cmds && n > 1) {
		if (run_batched(s, pos, n - 1, BELT_RUN_SKIP_HEAD, NULL, err, errsz))
			return -1;
		done = (uint32_t)n - 1;
	}
	while (done < n) {
		uint32_t run = (uint32_t)n - done;
		if (run > t->max_run)
			run = t->max_run;
		/* only the last run's head may write token_ids[pos + n]: an
		 * earlier one would overwrite the prompt token after it */
		uint32_t flags = done + run == n ? BELT_RUN_HEAD_LAST_ONLY : BELT_RUN_SKIP_HEAD;
		if (m->be->table_run(m->be_ctx, t, pos + done, run, flags, err, errsz))
			return -1;
		done += run;
	}
	kv_ran(s, ids, n, pos);
	return 0;
}

int belt_session_eval(struct belt_session *s, const int32_t *tokens, size_t n,
		      uint32_t pos, float *logits, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (belt_session_prefill(s, &s->table, tokens, n, pos, err, errsz))
		return -1;
	if (logits)
		return m->be->buffer_read(m->be_ctx, s->logits->buf, 0, logits,
					  (uint64_t)m->n_vocab * 4, err, errsz);
	return 0;
}

/* What eval_all and eval_hidden do first: check the tokens, forget the
 * cache from pos on and write them into token_ids. */
static int eval_begin(struct belt_session *s, const int32_t *tokens, size_t n, uint32_t pos,
		      char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (check_prompt(s, tokens, n, pos, err, errsz))
		return -1;
	belt_session_kv_from(s, pos);
	return m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)pos * 4, tokens, n * 4, err,
				   errsz);
}

int belt_session_eval_all(struct belt_session *s, const int32_t *tokens, size_t n,
			  uint32_t pos, float *logits, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (eval_begin(s, tokens, n, pos, err, errsz))
		return -1;
	if (s->batch.n_cmds) {
		if (run_batched(s, pos, n, 0, logits, err, errsz))
			return -1;
		kv_ran(s, tokens, n, pos);
		return 0;
	}
	/* one position at a time; the head's argmax writes the next slot,
	 * which the next position then overwrites with the given token */
	for (size_t i = 0; i < n; i++) {
		if ((i > 0 && m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)(pos + i) * 4,
						  &tokens[i], 4, err, errsz)) ||
		    m->be->table_run(m->be_ctx, &s->table, pos + (uint32_t)i, 1, 0, err, errsz) ||
		    (logits && m->be->buffer_read(m->be_ctx, s->logits->buf, 0,
						  logits + i * (size_t)m->n_vocab,
						  (uint64_t)m->n_vocab * 4, err, errsz)))
			return -1;
	}
	kv_ran(s, tokens, n, pos);
	return 0;
}

int belt_session_eval_hidden(struct belt_session *s, const int32_t *tokens, size_t n,
			     uint32_t pos, float *hidden, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	bool batch = s->batch.n_cmds > 0;
	struct belt_copy c;
	if (!belt_session_tap_source(s, batch, 0, &c))
		return belt_errf(err, errsz, "hidden states: architecture '%s' has no final norm "
				 "that its head's matvec reads", m->arch->name);
	if (eval_begin(s, tokens, n, pos, err, errsz))
		return -1;
	size_t step = batch ? s->n_ubatch : 1;
	for (size_t done = 0; done < n; done += step) {
		uint32_t run = n - done < step ? (uint32_t)(n - done) : (uint32_t)step;
		if ((!batch && done > 0 &&
		     m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)(pos + done) * 4,
					 &tokens[done], 4, err, errsz)) ||
		    m->be->table_run(m->be_ctx, batch ? &s->batch : &s->table, pos + (uint32_t)done,
				     run, 0, err, errsz) ||
		    m->be->buffer_read(m->be_ctx, c.src, c.src_off, hidden + done * (c.size / 4),
				       (uint64_t)run * c.size, err, errsz))
			return -1;
	}
	kv_ran(s, tokens, n, pos);
	return 0;
}

int belt_session_tokens(struct belt_session *s, uint32_t pos, size_t n, int32_t *out,
			char *err, size_t errsz)
{
	if (pos > s->n_ctx || n > (size_t)s->n_ctx + 1 - pos)
		return belt_errf(err, errsz, "tokens %u .. %zu: the context holds %u", pos,
				 pos + n, s->n_ctx + 1);
	return s->m->be->buffer_read(s->m->be_ctx, s->token_ids, (uint64_t)pos * 4, out,
				     (uint64_t)n * 4, err, errsz);
}

/* The checks of belt_session_verify, before anything runs. */
static int verify_check(struct belt_session *s, const int32_t *tokens, const int32_t *parent,
			size_t n, uint32_t pos, char *err, size_t errsz)
{
	if (!s->batch.n_cmds)
		return belt_errf(err, errsz, "verify: backend '%s' runs no batched tables",
				 s->m->be->name);
	if (n > s->n_ubatch)
		return belt_errf(err, errsz, "verify: %zu tokens, more than the %u rows of a pass",
				 n, s->n_ubatch);
	if (check_prompt(s, tokens, n, pos, err, errsz))
		return -1;
	for (size_t r = 0; parent && r < n; r++)
		if (parent[r] < -1 || parent[r] >= (int32_t)r)
			return belt_errf(err, errsz,
					 "verify: parent of row %zu is %d: expected -1 .. %zu", r,
					 parent[r], r - 1 + (r == 0));
	return 0;
}

/* The pass of belt_session_verify, after its checks. */
static int verify_run(struct belt_session *s, const int32_t *tokens, const int32_t *parent,
		      size_t n, uint32_t pos, int32_t *out, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)pos * 4, tokens, n * 4, err,
				errsz))
		return -1;
	s->batch.parent = parent;
	int rc = m->be->table_run(m->be_ctx, &s->batch, pos, (uint32_t)n,
				  parent ? BELT_RUN_TREE : 0, err, errsz);
	s->batch.parent = NULL;
	if (rc)
		return -1;
	return m->be->buffer_read(m->be_ctx, s->row_ids, 0, out, (uint64_t)n * 4, err, errsz);
}

int belt_session_verify(struct belt_session *s, const int32_t *tokens, const int32_t *parent,
			size_t n, uint32_t pos, int32_t *out, char *err, size_t errsz)
{
	if (verify_check(s, tokens, parent, n, pos, err, errsz))
		return -1;
	belt_session_kv_from(s, pos);
	if (verify_run(s, tokens, parent, n, pos, out, err, errsz))
		return -1;
	/* the rows that form a chain from the first sit at their positions:
	 * a tree's others are in slots that are not theirs */
	size_t chain = 0;
	while (chain < n && (!parent || parent[chain] == (int32_t)chain - 1))
		chain++;
	kv_ran(s, tokens, chain, pos);
	return 0;
}

int belt_session_verify_rows(struct belt_session *s, const int32_t *tokens,
			     const int32_t *parent, size_t n, uint32_t pos, int32_t *out,
			     char *err, size_t errsz)
{
	if (verify_check(s, tokens, parent, n, pos, err, errsz))
		return -1;
	return verify_run(s, tokens, parent, n, pos, out, err, errsz);
}

bool belt_session_emit(struct belt_session *s, struct belt_tok_stream *ts, int32_t id,
		       const struct belt_generate_params *gp, belt_token_fn fn, void *ud)
{
	if (gp->stop_at_eog && belt_tok_is_eog(s->m->tok, id)) {
		s->stats.stop = BELT_STOP_EOG;
		return false;
	}
	s->stats.n_generated++;
	size_t len = belt_tok_decode(s->m->tok, ts, id, s->text, s->text_cap);
	/* a group's other sessions use the backend meanwhile */
	bool turn = fn && s->group && s->holds_turn;
	if (turn)
		belt_group_unlock(s->group);
	bool more = !fn || fn(ud, id, s->text, len);
	if (turn)
		belt_group_lock(s->group);
	if (!more) {
		s->stats.stop = BELT_STOP_CALLBACK;
		return false;
	}
	if (gp->n_predict && s->stats.n_generated >= gp->n_predict) {
		s->stats.stop = BELT_STOP_N_PREDICT;
		return false;
	}
	return true;
}

/* Made once per session. */
int belt_session_host_setup(struct belt_session *s, const struct belt_sampler_ops *so,
			    const struct belt_grammar *g, char *err, size_t errsz)
{
	int32_t n = s->m->n_vocab;
	size_t ws = so ? so->work_size(n) : 0;
	if (!s->logits_host)
		s->logits_host = malloc((size_t)n * sizeof *s->logits_host);
	if (g && !s->grammar_mask)
		s->grammar_mask = malloc(((size_t)n + 31) / 32 * sizeof *s->grammar_mask);
	if (ws > s->sample_work_size) {
		free(s->sample_work);
		s->sample_work = malloc(ws);
		s->sample_work_size = s->sample_work ? ws : 0;
	}
	if (!s->logits_host || (ws && !s->sample_work) || (g && !s->grammar_mask))
		return belt_errf(err, errsz, "sampling: out of memory for %d logits", n);
	return 0;
}

/* The argmax, lowest index on ties, as the backends' argmax. */
static int32_t argmax(const float *l, int32_t n)
{
	int32_t best = 0;
	for (int32_t i = 1; i < n; i++)
		if (l[i] > l[best])
			best = i;
	return best;
}

/* The grammar's mask is s->grammar_mask, written by grammar_allowed. */
int belt_session_host_next(struct belt_session *s, const struct belt_sampler_ops *so,
			   const struct belt_sampling *sp, struct belt_grammar *g, uint32_t pos,
			   char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	if (m->be->buffer_read(m->be_ctx, s->logits->buf, 0, s->logits_host,
			       (uint64_t)m->n_vocab * 4, err, errsz))
		return -1;
	int32_t id = -1;
	uint32_t allowed = g ? belt_session_grammar_mask(s->grammar_mask, s->logits_host,
							  m->n_vocab, &id) : 2;
	if (allowed == 0)
		return 1;
	if (allowed > 1) /* one allowed token is taken as it is */
		id = so ? so->sample(sp, s->logits_host, m->n_vocab, s->ids, pos + 1, pos,
				     s->sample_work)
			: argmax(s->logits_host, m->n_vocab);
	if (id < 0 || id >= m->n_vocab)
		return belt_errf(err, errsz, "sampler %s returned token %d", so ? so->name : "argmax",
				 id);
	if (g && g->ops->accept(g->state, id, err, errsz))
		return belt_err_prefix(err, errsz, "grammar");
	s->ids[pos + 1] = id;
	return m->be->buffer_write(m->be_ctx, s->token_ids, (uint64_t)(pos + 1) * 4, &id, 4,
				   err, errsz);
}

/* Decode from pos (s->ids[pos], not yet run) through t, chunk tokens a
 * run, or, grouped, a step at a time in the group's passes while others
 * decode too (drawn by so with gp->sampling where so is set); stops as
 * belt_generate does, *pos where it stopped, *go whether only the
 * context's end stopped it. */
static int decode_chain(struct belt_session *s, const struct belt_generate_params *gp,
			struct belt_table *t, bool grouped, const struct belt_sampler_ops *so,
			struct belt_tok_stream *ts,
			uint32_t *at, belt_token_fn fn, void *ud, bool *go, char *err,
			size_t errsz)
{
	struct belt_model *m = s->m;
	uint32_t pos = *at;
	while (*go && pos < s->n_ctx) {
		/* the steps a run from pos may take */
		uint32_t n = s->n_ctx - pos;
		if (n > s->chunk)
			n = s->chunk;
		if (gp->n_predict && n > gp->n_predict - s->stats.n_generated)
			n = gp->n_predict - s->stats.n_generated;
		int g = grouped ? belt_group_step(s, pos, n, gp->stop_at_eog, so, gp->sampling, err,
						  errsz)
				: 0;
		if (g < 0)
			return -1;
		if (g) {
			pos++;
			*go = belt_session_emit(s, ts, s->ids[pos], gp, fn, ud);
			*at = pos;
			continue;
		}
		uint32_t flags = gp->stop_at_eog ? BELT_RUN_STOP_AT_EOG : 0;
		/* a group's session alone: its chain, with the turn */
		if (grouped)
			belt_group_lock(s->group);
		int rc = (grouped && belt_group_sync(s, pos, err, errsz)) ||
			 m->be->table_run(m->be_ctx, t, pos, n, flags, err, errsz) ||
			 m->be->buffer_read(m->be_ctx, s->token_ids, (uint64_t)(pos + 1) * 4,
					    &s->ids[pos + 1], (uint64_t)n * 4, err, errsz);
		if (grouped)
			belt_group_unlock(s->group);
		if (rc)
			return -1;
		/* pos ends at the last token taken, a stop token included */
		uint32_t i = 0;
		while (*go && i < n)
			*go = belt_session_emit(s, ts, s->ids[pos + ++i], gp, fn, ud);
		pos += i;
		*at = pos;
	}
	return 0;
}

static int generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
		    const struct belt_generate_params *gp, const struct belt_sampler_ops *sampler,
		    belt_token_fn fn, void *ud, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	struct belt_generate_params def;
	if (!gp) {
		belt_generate_params_default(&def);
		gp = &def;
	}
	const struct belt_sampling *sp = gp->sampling;
	const struct belt_sampler_ops *so = NULL; /* set: draw on the host */
	struct belt_grammar *g = gp->grammar;
	struct belt_table *t = &s->table;
	if (sp && belt_sampling_check(sp, err, errsz))
		return -1;
	bool sampled = sp && !belt_sampling_greedy(sp);
	if (sampled && !(so = sampler))
		return belt_errf(err, errsz, "sampled decoding: no sampler given");
	/* the pick on the device where the backend can: the sampler's chain
	 * commands, after the grammar's mask where there is a grammar */
	struct belt_table *ct = NULL;
	if ((sampled || g) && belt_session_chain(s, so, sp, g != NULL, &ct, err, errsz))
		return -1;
	bool device_pick = ct && g; /* the grammar's mask on the device */
	if (ct) {
		t = ct;
		so = NULL;
	}
	bool host = so || g; /* each token known to the host before the next */
	if (host && belt_session_host_setup(s, so, g, err, errsz))
		return -1;
	/* drafts are checked with the pick on the host when sampled */
	bool draft = gp->drafter && !g && s->batch.n_cmds;
	const struct belt_sampler_ops *so_verify = draft && sp && !belt_sampling_greedy(sp)
							   ? sampler : NULL;
	if (so_verify && belt_session_host_setup(s, so_verify, NULL, err, errsz))
		return -1;
	if (g)
		g->ops->reset(g->state);
	struct belt_tok_stream ts;
	belt_tok_stream_init(&ts, false);
	double t0 = now();
	/* the prompt runs from its first token the cache does not hold */
	if (check_prompt(s, prompt, n_prompt, 0, err, errsz))
		return -1;
	uint32_t k = reusable(s, prompt, n_prompt);
	belt_session_grammar_allowed(s, g);
	if (device_pick && belt_session_upload_mask(s, err, errsz))
		return -1;
	if (belt_session_prefill(s, t, prompt + k, n_prompt - k, k, err, errsz))
		return -1;
	memcpy(s->ids, prompt, n_prompt * sizeof *prompt);
	int rc = host ? belt_session_pick(s, so, sp, g, device_pick, (uint32_t)n_prompt - 1, err, errsz)
		      : m->be->buffer_read(m->be_ctx, s->token_ids, n_prompt * 4, &s->ids[n_prompt],
					   4, err, errsz);
	if (rc < 0)
		return -1;
	double t1 = now();
	s->stats.n_prompt = (uint32_t)n_prompt;
	s->stats.n_prompt_reused = k;
	s->stats.prefill_s = t1 - t0;
	bool go = rc == 0 && belt_session_emit(s, &ts, s->ids[n_prompt], gp, fn, ud);
	/* The token at position pos is in s->ids[pos]; feeding it yields pos+1. */
	uint32_t pos = (uint32_t)n_prompt;
	/* until generation ends, or the context is full and not shifted */
	for (bool again = true; again;) {
		if (go && draft && belt_session_speculate(s, gp, so_verify, so, t, &ts, &pos, fn, ud, &go,
							  err, errsz))
			return -1;
		while (go && host && pos < s->n_ctx) {
			/* a grammar that allows only the end needs no more logits */
			belt_session_grammar_allowed(s, g);
			if (g && gp->stop_at_eog &&
			    belt_session_grammar_only_eog(s->grammar_mask, m->tok, m->n_vocab)) {
				s->stats.stop = BELT_STOP_EOG;
				go = false;
				break;
			}
			/* tokens the grammar forces run as a batch with pos; the
			 * last one's logits pick the next */
			int f = g ? belt_session_forced(s, g, gp, t, device_pick, &ts, fn, ud, &pos, &go, err, errsz)
				  : 0;
			if (f < 0)
				return -1;
			if (f && !go)
				break;
			if (f && belt_session_grammar_only_eog(s->grammar_mask, m->tok, m->n_vocab) &&
			    gp->stop_at_eog) {
				s->stats.stop = BELT_STOP_EOG;
				go = false;
				break;
			}
			/* a position whose pick has no token to pick from is
			 * not run */
			if (!f && g && belt_session_grammar_none(s->grammar_mask, m->n_vocab)) {
				rc = 1;
				go = false;
				break;
			}
			/* picked on the device: positions run while the host
			 * takes each pick and writes the next mask */
			if (!f && device_pick) {
				if (belt_session_gated(s, g, gp, t, &ts, fn, ud, &pos, &go, err, errsz))
					return -1;
				continue;
			}
			if ((!f && m->be->table_run(m->be_ctx, t, pos, 1, 0, err, errsz)) ||
			    (rc = belt_session_pick(s, so, sp, g, device_pick, pos, err, errsz)) < 0)
				return -1;
			pos++;
			go = rc == 0 && belt_session_emit(s, &ts, s->ids[pos], gp, fn, ud);
		}
		if (rc > 0)
			s->stats.stop = BELT_STOP_GRAMMAR;
		if (go && !host) {
			/* a group's session decodes in the group's passes
			 * while others decode too: greedy, or sampled (then
			 * drawn on the host from the pass's logits), not with
			 * drafts */
			bool grouped = s->group && !draft && (t == &s->table || (sampled && t == ct));
			if (grouped && sampled && belt_session_host_setup(s, sampler, NULL, err, errsz))
				return -1;
			if (grouped)
				belt_group_enter(s);
			rc = decode_chain(s, gp, t, grouped, sampled ? sampler : NULL, &ts, &pos, fn, ud,
					  &go, err, errsz);
			if (grouped && belt_group_leave(s, pos, err, errsz))
				rc = -1;
			if (rc)
				return -1;
		}
		/* both loops end with go set only when the context is full */
		again = go && gp->context_shift;
		if (again) {
			if ((rc = belt_session_shift(s, gp, t, host, so, g, device_pick, &pos, err, errsz)) < 0)
				return -1;
			if (rc > 0)
				s->stats.stop = BELT_STOP_GRAMMAR;
			go = rc == 0 && belt_session_emit(s, &ts, s->ids[pos], gp, fn, ud);
		}
	}
	if (go)
		s->stats.stop = BELT_STOP_CONTEXT_FULL;
	/* every position before the last token ran with the ids up to it */
	kv_reached(s, pos);
	size_t tail = belt_tok_flush(&ts, s->text, s->text_cap);
	if (tail && fn)
		fn(ud, -1, s->text, tail);
	s->stats.decode_s = now() - t1;
	return 0;
}

int belt_session_generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
			  const struct belt_generate_params *gp,
			  const struct belt_sampler_ops *sampler, belt_token_fn fn, void *ud,
			  char *err, size_t errsz)
{
	memset(&s->stats, 0, sizeof s->stats);
	/* a group's sessions take turns with the backend (group.c) */
	if (s->group) {
		belt_group_lock(s->group);
		s->holds_turn = true;
	}
	int rc = generate(s, prompt, n_prompt, gp, sampler, fn, ud, err, errsz);
	if (s->group) {
		s->holds_turn = false;
		belt_group_unlock(s->group);
	}
	if (rc)
		s->stats.stop = BELT_STOP_ERROR;
	return rc;
}
