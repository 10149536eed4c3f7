/* A group of sessions (continuous batching): n_seq sessions whose KV
 * caches are the sequences of one allocation, each layer's slice holding
 * sequence 0's positions, then sequence 1's, and so on. The group's own
 * session holds that cache and a batched table of sequences
 * (belt_table.seqs): a pass of it runs one token of each of several
 * sessions, each row at its own position over its own sequence.
 *
 * The sessions' belt_generate calls may overlap, each in its own thread.
 * The turn (a ticket lock: first come, first served, so that a session
 * that lets it go and asks again queues behind the others) gives the
 * backend to one session at a time; a session holds it while it
 * generates, but for its token callbacks and its shared decode steps. A
 * session decoding (greedy, or sampled where the backend has the
 * sampler's chain ops; not with a grammar or drafts) posts its token
 * (under the group's mutex) and waits;
 * the last of the decoding sessions to post (or the last to stop
 * decoding) takes the turn, runs the pass for them all and hands each its
 * next token (a sampled row draws from the pass's logits on the host),
 * while the others decode theirs, call their callbacks and post again.
 * Where no posted row is drawn on the host, the pass runs on for up to
 * chunk steps in a row: each row's argmax is its next token, at its next
 * position, for as long as its session may take tokens (its n_predict,
 * its context) and has not picked an end-of-generation token; a session
 * then takes the tokens decoded ahead without posting, and those it does
 * not take (it stopped) leave cache entries past its end, which the
 * session does not count as its. A session that is the only one decoding
 * runs its own chain, chunk tokens a submission, with the turn. The
 * sessions share one set of scratch buffers, as only one uses the backend
 * at a time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/session.h"

/* rows of the group's table: at least this many, so that a backend's
 * few-row passes are recorded for it (the Vulkan backend records them for
 * tables of more than 16 rows) */
#define GROUP_MIN_ROWS 32

struct belt_group {
	struct belt_model *m;
	struct belt_session *own; /* every sequence's cache; the table of sequences */
	uint32_t n_seq, n_ctx;	  /* sequences; positions of each */
	struct belt_session **members; /* [n_seq], NULL where none was made */
	/* under mu, held briefly: the turns and what follows */
	pthread_mutex_t mu;
	pthread_cond_t turn_cv; /* the turn moved on */
	pthread_cond_t pass_cv; /* a pass ended */
	uint64_t next, serving; /* the turns: taken, now served */
	uint32_t n_dec;	     /* sessions between belt_group_enter and leave */
	uint32_t n_posted;   /* of those, waiting for the next pass */
	uint64_t gen;	     /* passes run */
	bool running;	     /* a pass of the posted rows is under way */
	uint64_t n_pass, n_rows; /* passes and their rows, in all */
	double pass_s;	     /* seconds they took */
	struct belt_session **rows; /* [n_seq]: the sessions posted, in order */
	uint32_t *seq_pos, *seq_base; /* [n_seq]: the next pass's rows */
	int32_t *tok, *out;	      /* [n_seq] */
	bool *want;		      /* [n_seq]: the row's logits are drawn from */
	/* [n_seq], by posted row: its position and first slot, how many
	 * steps its session may take (>= 1), whether an end-of-generation
	 * token ends it; the posted rows still running (steps ahead) */
	uint32_t *post_pos, *post_base, *post_left, *live;
	bool *post_eog;
	float *logits;		      /* [n_seq][n_vocab]: read where one is */
	/* the sessions' shared scratch (belt_group_scratch) */
	struct group_scratch {
		const char *name;
		uint64_t bytes;
		struct belt_buffer *buf;
	} *scratch;
	unsigned n_scratch, cap_scratch;
	char err[BELT_ERR_SIZE];
};

int belt_group_new(struct belt_model *m, const struct belt_session_params *p, uint32_t n_seq,
		   struct belt_group **out, char *err, size_t errsz)
{
	*out = NULL;
	if (m->be->abi < 4)
		return belt_errf(err, errsz,
				 "a group of sessions: backend '%s' (ABI %u) runs no tables of "
				 "sequences (ABI 4)",
				 m->be->name, m->be->abi);
	struct belt_session_params def;
	if (!p) {
		belt_session_params_default(&def);
		p = &def;
	}
	uint32_t n_ctx = p->n_ctx ? p->n_ctx : belt_model_n_ctx_train(m);
	if (n_seq < 1 || n_seq > 256 || (uint64_t)n_seq * n_ctx > (1u << 24))
		return belt_errf(err, errsz,
				 "a group of %u sessions of %u positions: expected 1 .. 256 "
				 "sessions, %u positions in all at most",
				 n_seq, n_ctx, 1u << 24);
	struct belt_group *g = calloc(1, sizeof *g);
	if (!g)
		return belt_errf(err, errsz, "group: out of memory");
	g->m = m;
	g->n_seq = n_seq;
	g->n_ctx = n_ctx;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->turn_cv, NULL);
	pthread_cond_init(&g->pass_cv, NULL);
	g->members = calloc(n_seq, sizeof *g->members);
	g->rows = calloc(n_seq, sizeof *g->rows);
	g->seq_pos = calloc(n_seq, sizeof *g->seq_pos);
	g->seq_base = calloc(n_seq, sizeof *g->seq_base);
	g->tok = calloc(n_seq, sizeof *g->tok);
	g->out = calloc(n_seq, sizeof *g->out);
	g->want = calloc(n_seq, sizeof *g->want);
	g->post_pos = calloc(n_seq, sizeof *g->post_pos);
	g->post_base = calloc(n_seq, sizeof *g->post_base);
	g->post_left = calloc(n_seq, sizeof *g->post_left);
	g->live = calloc(n_seq, sizeof *g->live);
	g->post_eog = calloc(n_seq, sizeof *g->post_eog);
	g->logits = malloc((size_t)n_seq * (size_t)m->n_vocab * sizeof *g->logits);
	if (!g->members || !g->rows || !g->seq_pos || !g->seq_base || !g->tok || !g->out ||
	    !g->want || !g->post_pos || !g->post_base || !g->post_left || !g->live ||
	    !g->post_eog || !g->logits) {
		belt_group_free(g);
		return belt_errf(err, errsz, "group: out of memory");
	}
	/* the own session: p's run sizes, which its sequences' rings are
	 * laid out for (belt_group_ahead) */
	struct belt_session_params gp = *p;
	gp.n_ctx = n_seq * n_ctx;
	uint32_t rows = n_seq < GROUP_MIN_ROWS ? GROUP_MIN_ROWS : n_seq;
	if (rows > gp.n_ctx)
		rows = gp.n_ctx;
	if (belt_session_make(m, &gp, NULL, n_seq, rows < 2 ? 2 : rows, &g->own, err, errsz)) {
		belt_group_free(g);
		return belt_err_prefix(err, errsz, "group");
	}
	if (!g->own->batch.n_cmds) {
		belt_group_free(g);
		return belt_errf(err, errsz, "a group of sessions: backend '%s' runs no batched tables",
				 m->be->name);
	}
	struct belt_table *t = &g->own->batch;
	t->seq_pos = g->seq_pos;
	t->seq_base = g->seq_base;
	*out = g;
	return 0;
}

int belt_group_session(struct belt_group *g, uint32_t seq, const struct belt_session_params *p,
		       struct belt_session **out, char *err, size_t errsz)
{
	*out = NULL;
	if (seq >= g->n_seq)
		return belt_errf(err, errsz, "group session %u: expected 0 .. %u", seq, g->n_seq - 1);
	if (g->members[seq])
		return belt_errf(err, errsz, "group session %u exists already", seq);
	struct belt_session_params sp;
	if (p)
		sp = *p;
	else
		belt_session_params_default(&sp);
	sp.n_ctx = g->n_ctx;
	sp.type_k = g->own->type_k;
	sp.type_v = g->own->type_v;
	sp.swa_full = !g->own->ring; /* the group's layout */
	if (belt_session_make(g->m, &sp, g, seq, 0, out, err, errsz))
		return -1;
	g->members[seq] = *out;
	return 0;
}

void belt_group_free(struct belt_group *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; g->members && i < g->n_seq; i++)
		if (g->members[i]) {
			g->members[i]->group = NULL; /* its cache is gone */
			belt_session_free(g->members[i]);
		}
	for (unsigned i = 0; i < g->n_scratch; i++)
		g->m->be->buffer_destroy(g->m->be_ctx, g->scratch[i].buf);
	free(g->scratch);
	belt_session_free(g->own);
	free(g->members);
	free(g->rows);
	free(g->seq_pos);
	free(g->seq_base);
	free(g->tok);
	free(g->out);
	free(g->want);
	free(g->post_pos);
	free(g->post_base);
	free(g->post_left);
	free(g->live);
	free(g->post_eog);
	free(g->logits);
	pthread_cond_destroy(&g->turn_cv);
	pthread_cond_destroy(&g->pass_cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void belt_group_forget(struct belt_group *g, struct belt_session *s)
{
	if (g && s->seq < g->n_seq && g->members[s->seq] == s)
		g->members[s->seq] = NULL;
}

int belt_group_scratch(struct belt_group *g, const char *name, enum belt_buffer_usage usage,
		       uint64_t bytes, struct belt_buffer **out, char *err, size_t errsz)
{
	for (unsigned i = 0; i < g->n_scratch; i++)
		if (!strcmp(g->scratch[i].name, name) && g->scratch[i].bytes == bytes) {
			*out = g->scratch[i].buf;
			return 0;
		}
	if (g->n_scratch == g->cap_scratch) {
		unsigned cap = g->cap_scratch ? 2 * g->cap_scratch : 16;
		struct group_scratch *a = realloc(g->scratch, cap * sizeof *a);
		if (!a)
			return belt_errf(err, errsz, "group: out of memory");
		g->scratch = a;
		g->cap_scratch = cap;
	}
	if (g->m->be->buffer_create(g->m->be_ctx, usage, bytes, out, err, errsz)) {
		char what[160];
		snprintf(what, sizeof what, "scratch buffer '%s' (%llu bytes) of the group's sessions",
			 name, (unsigned long long)bytes);
		return belt_err_prefix(err, errsz, what);
	}
	g->scratch[g->n_scratch++] = (struct group_scratch){name, bytes, *out};
	return 0;
}

bool belt_group_scratch_made(const struct belt_group *g)
{
	return g->n_scratch > 0;
}

int belt_group_kv(struct belt_group *g, uint32_t seq, struct dispatch_buffer *sb, char *err,
		  size_t errsz)
{
	const struct belt_session *o = g->own;
	for (unsigned i = 0; i < o->n_bufs; i++) {
		const struct dispatch_buffer *gb = &o->bufs[i];
		if (!gb->kv || strcmp(gb->name, sb->name))
			continue;
		if (gb->type != sb->type || gb->layer_bytes != sb->layer_bytes * g->n_seq)
			return belt_errf(err, errsz,
					 "KV cache '%s': %llu bytes a layer for %u sequences, not %u "
					 "times a sequence's %llu: its size is not per position",
					 sb->name, (unsigned long long)gb->layer_bytes, g->n_seq,
					 g->n_seq, (unsigned long long)sb->layer_bytes);
		/* layer l of sequence seq is the seq-th of its n_seq equal
		 * parts: the whole context, or a sliding-window layer's ring
		 * (the same window and run sizes laid both out) */
		for (uint32_t l = 0; l < g->m->n_layer; l++) {
			const struct dispatch_kv_layer *gl = &gb->layers[l];
			struct dispatch_kv_layer *ml = &sb->layers[l];
			if (gl->slots != ml->slots * g->n_seq || gl->bytes != ml->bytes * g->n_seq)
				return belt_errf(err, errsz,
						 "KV cache '%s' layer %u: %u slots for %u sequences, "
						 "not %u times a sequence's %u",
						 sb->name, l, gl->slots, g->n_seq, g->n_seq, ml->slots);
			ml->buf = gl->buf;
			ml->offset = gl->offset + (uint64_t)seq * ml->bytes;
		}
		sb->shared = true;
		return 0;
	}
	return belt_errf(err, errsz, "KV cache '%s': the group has none", sb->name);
}

uint32_t belt_group_ahead(const struct belt_group *g)
{
	return g->own->ahead;
}

void belt_group_lock(struct belt_group *g)
{
	pthread_mutex_lock(&g->mu);
	for (uint64_t turn = g->next++; turn != g->serving;)
		pthread_cond_wait(&g->turn_cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

void belt_group_unlock(struct belt_group *g)
{
	pthread_mutex_lock(&g->mu);
	g->serving++;
	pthread_cond_broadcast(&g->turn_cv);
	pthread_mutex_unlock(&g->mu);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One pass of the rows in g->seq_pos, seq_base and tok[0 .. n): their
 * argmaxes into g->out (and their logits into g->logits with want). */
static int pass(struct belt_group *g, uint32_t n, bool want)
{
	struct belt_model *m = g->m;
	struct belt_session *o = g->own;
	int rc = m->be->buffer_write(m->be_ctx, o->token_ids, 0, g->tok, (uint64_t)n * 4, g->err,
				     sizeof g->err);
	if (!rc)
		rc = m->be->table_run(m->be_ctx, &o->batch, 0, n, 0, g->err, sizeof g->err);
	if (!rc)
		rc = m->be->buffer_read(m->be_ctx, o->row_ids, 0, g->out, (uint64_t)n * 4, g->err,
					sizeof g->err);
	/* rows drawn on the host: the pass's logits, every row's */
	if (!rc && want)
		rc = m->be->buffer_read(m->be_ctx, o->logits->buf, 0, g->logits,
					(uint64_t)n * (uint64_t)m->n_vocab * 4, g->err, sizeof g->err);
	return rc;
}

/* The passes for the posted rows, with the turn, g->running set: the
 * first for them all, then, where none is drawn on the host, the steps
 * ahead for the rows whose sessions may take more, each session's ids
 * written past its posted position (its thread waits for pass_cv). */
static void run_pass(struct belt_group *g)
{
	uint32_t n = g->n_posted;
	double t0 = now();
	bool want = false;
	uint32_t steps = 1;
	for (uint32_t r = 0; r < n; r++) {
		want |= g->want[r];
		g->post_pos[r] = g->seq_pos[r];
		g->post_base[r] = g->seq_base[r];
		if (g->post_left[r] > steps)
			steps = g->post_left[r];
	}
	int rc = pass(g, n, want);
	uint64_t passes = 1, rows = n;
	for (uint32_t r = 0; r < n; r++) {
		g->rows[r]->group_out = rc ? -1 : g->out[r];
		g->rows[r]->group_row = r;
		g->rows[r]->group_to = g->post_pos[r] + 1;
	}
	/* steps ahead: live[0 .. n_live) the posted rows still running */
	uint32_t n_live = 0;
	for (uint32_t r = 0; !rc && !want && r < n; r++) {
		g->rows[r]->ids[g->post_pos[r] + 1] = g->out[r]; /* the next step's token */
		if (g->post_left[r] > 1 && !(g->post_eog[r] && belt_tok_is_eog(g->m->tok, g->out[r])))
			g->live[n_live++] = r;
	}
	for (uint32_t j = 1; j < steps && n_live; j++) {
		for (uint32_t i = 0; i < n_live; i++) {
			uint32_t r = g->live[i];
			struct belt_session *s = g->rows[r];
			g->tok[i] = s->ids[g->post_pos[r] + j];
			g->seq_pos[i] = g->post_pos[r] + j;
			g->seq_base[i] = g->post_base[r];
		}
		if (pass(g, n_live, false))
			break; /* the tokens decoded so far stand; the next post reports it */
		passes++;
		rows += n_live;
		uint32_t k = 0;
		for (uint32_t i = 0; i < n_live; i++) {
			uint32_t r = g->live[i];
			struct belt_session *s = g->rows[r];
			int32_t id = g->out[i];
			s->ids[g->post_pos[r] + j + 1] = id;
			s->group_to = g->post_pos[r] + j + 1;
			if (j + 1 < g->post_left[r] && !(g->post_eog[r] && belt_tok_is_eog(g->m->tok, id)))
				g->live[k++] = r;
		}
		n_live = k;
	}
	pthread_mutex_lock(&g->mu);
	g->n_pass += passes;
	g->n_rows += rows;
	g->pass_s += now() - t0;
	g->n_posted = 0;
	g->running = false;
	g->gen++;
	pthread_cond_broadcast(&g->pass_cv);
	pthread_mutex_unlock(&g->mu);
}

void belt_group_enter(struct belt_session *s)
{
	struct belt_group *g = s->group;
	pthread_mutex_lock(&g->mu);
	g->n_dec++;
	pthread_mutex_unlock(&g->mu);
	s->group_to = 0;
	/* greedy steps take the turn only to run a pass or a chain */
	s->holds_turn = false;
	belt_group_unlock(g);
}

int belt_group_leave(struct belt_session *s, uint32_t pos, char *err, size_t errsz)
{
	struct belt_group *g = s->group;
	s->group_to = 0; /* what it did not take of the steps ahead */
	pthread_mutex_lock(&g->mu);
	g->n_dec--;
	/* the others may all be waiting for this one */
	bool run = g->n_posted && g->n_posted == g->n_dec && !g->running;
	if (run)
		g->running = true;
	pthread_mutex_unlock(&g->mu);
	belt_group_lock(g);
	s->holds_turn = true;
	if (run)
		run_pass(g);
	return belt_group_sync(s, pos, err, errsz);
}

int belt_group_sync(struct belt_session *s, uint32_t pos, char *err, size_t errsz)
{
	if (s->group_from > pos)
		return 0;
	/* the ids the group's passes decoded, where this session's own
	 * tables read them (a chain's embedding reads token_ids[pos]) */
	uint32_t from = s->group_from;
	s->group_from = UINT32_MAX;
	return s->m->be->buffer_write(s->m->be_ctx, s->token_ids, (uint64_t)from * 4,
				      &s->ids[from], (uint64_t)(pos + 1 - from) * 4, err, errsz);
}

int belt_group_step(struct belt_session *s, uint32_t pos, uint32_t left, bool stop_eog,
		    const struct belt_sampler_ops *so, const struct belt_sampling *sp, char *err,
		    size_t errsz)
{
	struct belt_group *g = s->group;
	if (pos < s->group_to) {
		/* decoded ahead by the passes that ran for its last post */
		s->stats.n_grouped++;
		s->stats.n_grouped_ahead++;
		if (s->group_from > pos + 1)
			s->group_from = pos + 1;
		return 1;
	}
	pthread_mutex_lock(&g->mu);
	while (g->running) /* its rows are being read */
		pthread_cond_wait(&g->pass_cv, &g->mu);
	if (g->n_dec < 2 && !g->n_posted) {
		pthread_mutex_unlock(&g->mu);
		return 0;
	}
	uint32_t r = g->n_posted++;
	g->rows[r] = s;
	g->tok[r] = s->ids[pos];
	g->seq_pos[r] = pos;
	g->seq_base[r] = s->seq * g->n_ctx;
	g->want[r] = so != NULL;
	g->post_left[r] = left ? left : 1;
	g->post_eog[r] = stop_eog;
	if (g->n_posted == g->n_dec) {
		g->running = true;
		pthread_mutex_unlock(&g->mu);
		belt_group_lock(g);
		run_pass(g);
		belt_group_unlock(g);
	} else {
		for (uint64_t gen = g->gen; g->gen == gen;)
			pthread_cond_wait(&g->pass_cv, &g->mu);
		pthread_mutex_unlock(&g->mu);
	}
	if (s->group_out < 0)
		return belt_errf(err, errsz, "group pass: %s", g->err);
	if (so) {
		/* the row's logits stay until the next pass, which waits for
		 * this session to post again */
		int32_t n_vocab = g->m->n_vocab;
		int32_t id = so->sample(sp, g->logits + (size_t)s->group_row * (size_t)n_vocab,
					n_vocab, s->ids, pos + 1, pos, s->sample_work);
		if (id < 0 || id >= n_vocab)
			return belt_errf(err, errsz, "sampler %s returned token %d", so->name, id);
		s->group_out = id;
	}
	s->ids[pos + 1] = s->group_out;
	s->stats.n_grouped++;
	if (s->group_from > pos + 1)
		s->group_from = pos + 1;
	return 1;
}

uint32_t belt_group_decoding(const struct belt_group *g)
{
	struct belt_group *w = (struct belt_group *)g;
	pthread_mutex_lock(&w->mu);
	uint32_t n = g->n_dec;
	pthread_mutex_unlock(&w->mu);
	return n;
}

void belt_group_stats(const struct belt_group *g, uint64_t *passes, uint64_t *rows,
		      double *seconds)
{
	struct belt_group *w = (struct belt_group *)g;
	pthread_mutex_lock(&w->mu);
	*passes = g->n_pass;
	*rows = g->n_rows;
	*seconds = g->pass_s;
	pthread_mutex_unlock(&w->mu);
}
