/* The slots: --parallel sessions of one group over one loaded model. A
 * request waits in a queue until a slot is free, then goes to the free
 * slot whose last tokens share the longest beginning with its prompt (the
 * session keeps them in its KV cache). Each slot has a thread that calls
 * belt_generate; the group (core/session/group.c) gives the backend to
 * one slot at a time, in turn, and runs the decode steps (greedy, or
 * sampled without a grammar) of the slots decoding at the same time as one
 * pass (continuous batching). */
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

struct slot {
	struct serve_sched *sc;
	int index;
	pthread_t tid;
	bool started;
	struct belt_session *s;
	struct serve_job *job; /* assigned (under sc->mu) */
	/* the tokens its session was last given: the prompt, then the answer */
	int32_t *hist;
	size_t n_hist, cap_hist;
	bool stopped;	 /* a stop string ended it */
};

struct serve_sched {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* any change: a job assigned, stopping */
	struct belt_group *group; /* the slots' sessions */
	struct slot *slots;
	int n;
	struct serve_job *head, *tail; /* the queue */
	int n_queued;
	bool stopping;
	bool shift; /* context shift, keeping keep prompt tokens (-1: all) */
	long keep;
	const struct belt_tokenizer *tok; /* the model's (its BOS is kept besides keep) */
};

static bool on_token(void *ud, int32_t id, const char *text, size_t len)
{
	struct slot *sl = ud;
	struct serve_job *j = sl->job;
	if (id >= 0 && sl->n_hist < sl->cap_hist)
		sl->hist[sl->n_hist++] = id;
	if (len && !sl->stopped) {
		int r = serve_stop_feed(&j->stop, text, len, serve_job_emit, j);
		if (r < 0) {
			pthread_mutex_lock(&j->mu);
			serve_err(&j->err, 500, NULL, "out of memory for the stop strings");
			pthread_mutex_unlock(&j->mu);
			return false;
		}
		if (r > 0) {
			sl->stopped = true;
			return false;
		}
	}
	return !atomic_load(&j->cancel);
}

static size_t common_prefix(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
	size_t i = 0;
	while (i < na && i < nb && a[i] == b[i])
		i++;
	return i;
}

/* Under mu: give queued jobs to free slots, in order, each to the free
 * slot whose tokens share the longest beginning with its prompt. */
static void assign(struct serve_sched *sc)
{
	while (sc->head) {
		struct serve_job *j = sc->head;
		int best = -1;
		size_t best_len = 0;
		for (int i = 0; i < sc->n; i++) {
			struct slot *sl = &sc->slots[i];
			if (sl->job)
				continue;
			size_t k = common_prefix(sl->hist, sl->n_hist, j->p.ids, j->p.n_ids);
			if (best < 0 || k > best_len) {
				best = i;
				best_len = k;
			}
		}
		if (best < 0)
			break;
		sc->head = j->next;
		if (!sc->head)
			sc->tail = NULL;
		sc->n_queued--;
		j->next = NULL;
		sc->slots[best].job = j;
	}
	pthread_cond_broadcast(&sc->cv);
}

static const char *finish_reason(enum belt_stop stop)
{
	switch (stop) {
	case BELT_STOP_N_PREDICT:
	case BELT_STOP_CONTEXT_FULL:
		return "length";
	default:
		return "stop";
	}
}

static void run(struct slot *sl, struct serve_job *j)
{
	struct serve_error e = {0};
	if (atomic_load(&j->cancel)) {
		serve_job_finish(j, "stop", (uint32_t)j->p.n_ids, 0, NULL);
		return;
	}
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = j->p.max_tokens;
	gp.sampling = &j->p.samp;
	gp.grammar = j->p.grammar;
	/* as belt run --keep: besides BOS; with a shift an answer without
	 * max_tokens still ends, after a context's worth of tokens */
	struct serve_sched *sc = sl->sc;
	gp.context_shift = sc->shift;
	gp.n_keep = belt_keep_tokens(sc->tok, j->p.ids, j->p.n_ids, sc->keep);
	if (gp.context_shift && !gp.n_predict)
		gp.n_predict = belt_session_n_ctx(sl->s);
	if (!j->p.cache_prompt)
		belt_session_reset(sl->s);
	size_t n = j->p.n_ids < sl->cap_hist ? j->p.n_ids : sl->cap_hist;
	memcpy(sl->hist, j->p.ids, n * sizeof *sl->hist);
	sl->n_hist = n;
	sl->stopped = false;
	char err[BELT_ERR_SIZE];
	int rc = belt_generate(sl->s, j->p.ids, j->p.n_ids, &gp, on_token, sl, err, sizeof err);
	const struct belt_stats *st = belt_session_stats(sl->s);
	/* after a shift the cache holds the kept tokens and a tail that the
	 * slot's record no longer follows: keep only what is sure */
	if (st->n_shifts && sl->n_hist > gp.n_keep)
		sl->n_hist = gp.n_keep;
	if (rc) {
		serve_err(&e, 500, NULL, "generation failed: %s", err);
		sl->n_hist = 0; /* what the KV cache holds is not known */
	} else if (!sl->stopped) {
		serve_stop_flush(&j->stop, serve_job_emit, j);
	}
	if (st->stop == BELT_STOP_CALLBACK && !sl->stopped) {
		pthread_mutex_lock(&j->mu);
		int status = j->err.status; /* 503: the server stops; 500: memory ran out */
		pthread_mutex_unlock(&j->mu);
		serve_log("slot %d: cancelled after %u tokens (%s)", sl->index, st->n_generated,
			  status == 503 ? "the server stops" : status ? "an error" : "the client left");
	}
	serve_job_finish(j, sl->stopped ? "stop" : finish_reason(st->stop), (uint32_t)j->p.n_ids,
			 st->n_generated, rc ? &e : NULL);
}

static void *slot_main(void *arg)
{
	struct slot *sl = arg;
	struct serve_sched *sc = sl->sc;
	pthread_mutex_lock(&sc->mu);
	for (;;) {
		while (!sl->job && !sc->stopping)
			pthread_cond_wait(&sc->cv, &sc->mu);
		struct serve_job *j = sl->job;
		if (!j)
			break;
		pthread_mutex_unlock(&sc->mu);
		run(sl, j);
		pthread_mutex_lock(&sc->mu);
		sl->job = NULL;
		serve_job_unref(j);
		if (!sc->stopping)
			assign(sc);
	}
	pthread_mutex_unlock(&sc->mu);
	return NULL;
}

int serve_sched_new(struct belt_model *m, const struct belt_session_params *sp, int n_slots,
		    struct serve_sched **out, char *err, size_t errsz)
{
	*out = NULL;
	struct serve_sched *sc = calloc(1, sizeof *sc);
	if (!sc || !(sc->slots = calloc((size_t)n_slots, sizeof *sc->slots))) {
		free(sc);
		return belt_errf(err, errsz, "out of memory for %d slots", n_slots);
	}
	pthread_mutex_init(&sc->mu, NULL);
	pthread_cond_init(&sc->cv, NULL);
	sc->n = n_slots;
	sc->tok = belt_model_tokenizer(m);
	if (belt_group_new(m, sp, (uint32_t)n_slots, &sc->group, err, errsz)) {
		serve_sched_free(sc);
		return belt_err_prefix(err, errsz, "slots");
	}
	for (int i = 0; i < n_slots; i++) {
		struct slot *sl = &sc->slots[i];
		sl->sc = sc;
		sl->index = i;
		if (belt_group_session(sc->group, (uint32_t)i, sp, &sl->s, err, errsz)) {
			serve_sched_free(sc);
			return belt_err_prefix(err, errsz, "slot session");
		}
		sl->cap_hist = (size_t)belt_session_n_ctx(sl->s) + 1;
		if (!(sl->hist = malloc(sl->cap_hist * sizeof *sl->hist))) {
			serve_sched_free(sc);
			return belt_errf(err, errsz, "out of memory for slot %d", i);
		}
	}
	for (int i = 0; i < n_slots; i++) {
		if (pthread_create(&sc->slots[i].tid, NULL, slot_main, &sc->slots[i])) {
			serve_sched_stop(sc);
			serve_sched_free(sc);
			return belt_errf(err, errsz, "cannot start the thread of slot %d", i);
		}
		sc->slots[i].started = true;
	}
	*out = sc;
	return 0;
}

void serve_sched_context_shift(struct serve_sched *sc, bool shift, long keep)
{
	sc->shift = shift;
	sc->keep = keep;
}

int serve_sched_submit(struct serve_sched *sc, struct serve_job *j)
{
	pthread_mutex_lock(&sc->mu);
	if (sc->stopping) {
		pthread_mutex_unlock(&sc->mu);
		return -1;
	}
	serve_job_ref(j);
	if (sc->tail)
		sc->tail->next = j;
	else
		sc->head = j;
	sc->tail = j;
	sc->n_queued++;
	assign(sc);
	pthread_mutex_unlock(&sc->mu);
	return 0;
}

uint32_t serve_sched_n_ctx(const struct serve_sched *sc)
{
	return belt_session_n_ctx(sc->slots[0].s);
}

void serve_sched_load(struct serve_sched *sc, int *busy, int *queued)
{
	pthread_mutex_lock(&sc->mu);
	*busy = 0;
	for (int i = 0; i < sc->n; i++)
		*busy += sc->slots[i].job != NULL;
	*queued = sc->n_queued;
	pthread_mutex_unlock(&sc->mu);
}

void serve_sched_stop(struct serve_sched *sc)
{
	struct serve_error e;
	serve_err(&e, 503, NULL, "the server is shutting down");
	pthread_mutex_lock(&sc->mu);
	sc->stopping = true;
	while (sc->head) {
		struct serve_job *j = sc->head;
		sc->head = j->next;
		serve_job_finish(j, "stop", 0, 0, &e);
		serve_job_unref(j);
	}
	sc->tail = NULL;
	sc->n_queued = 0;
	for (int i = 0; i < sc->n; i++) {
		struct serve_job *j = sc->slots[i].job;
		if (!j)
			continue;
		pthread_mutex_lock(&j->mu);
		if (!j->done)
			j->err = e;
		pthread_mutex_unlock(&j->mu);
		atomic_store(&j->cancel, true);
	}
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
	for (int i = 0; i < sc->n; i++)
		if (sc->slots[i].started) {
			pthread_join(sc->slots[i].tid, NULL);
			sc->slots[i].started = false;
		}
	uint64_t passes, rows;
	double secs;
	belt_group_stats(sc->group, &passes, &rows, &secs);
	if (passes)
		serve_log("slots: %llu decode steps shared %llu passes (%.1f slots, %.2f ms a pass)",
			  (unsigned long long)rows, (unsigned long long)passes,
			  (double)rows / (double)passes, secs * 1e3 / (double)passes);
}

void serve_sched_free(struct serve_sched *sc)
{
	if (!sc)
		return;
	for (int i = 0; i < sc->n; i++)
		free(sc->slots[i].hist);
	belt_group_free(sc->group); /* and the slots' sessions */
	free(sc->slots);
	pthread_cond_destroy(&sc->cv);
	pthread_mutex_destroy(&sc->mu);
	free(sc);
}
