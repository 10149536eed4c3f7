/* A request in flight: its settings, the answer as it grows, how it
 * ended. Its connection and its slot each hold a reference. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

int serve_err(struct serve_error *e, int status, const char *param, const char *fmt, ...)
{
	e->status = status;
	e->type = status >= 500 ? "server_error" : "invalid_request_error";
	snprintf(e->param, sizeof e->param, "%s", param ? param : "");
	e->code[0] = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

double serve_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void serve_params_free(struct serve_params *p)
{
	for (size_t i = 0; i < p->n_stop; i++)
		free(p->stop[i]);
	free(p->stop);
	free(p->ids);
	belt_grammar_free(p->grammar);
	*p = (struct serve_params){0};
}

struct serve_job *serve_job_new(struct serve_params *p)
{
	struct serve_job *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	if (serve_stop_init(&j->stop, (const char *const *)p->stop, p->n_stop)) {
		free(j);
		return NULL;
	}
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->refs = 1;
	j->p = *p;
	*p = (struct serve_params){0};
	atomic_init(&j->cancel, false);
	/* "chatcmpl-" or "cmpl-" and 24 letters and digits, as OpenAI's */
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static atomic_uint_fast64_t counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec ^
		     (atomic_fetch_add(&counter, 1) + 1) * 0xbf58476d1ce4e5b9u;
	int n = snprintf(j->id, sizeof j->id, "%s", j->p.kind == SERVE_CHAT ? "chatcmpl-" : "cmpl-");
	for (int i = 0; i < 24; i++) {
		x ^= x >> 31;
		x *= 0x94d049bb133111ebu;
		x ^= x >> 29;
		j->id[n + i] = alnum[x % 62];
	}
	j->id[n + 24] = 0;
	j->created = (int64_t)ts.tv_sec;
	j->t_start = serve_now();
	return j;
}

void serve_job_ref(struct serve_job *j)
{
	pthread_mutex_lock(&j->mu);
	j->refs++;
	pthread_mutex_unlock(&j->mu);
}

void serve_job_unref(struct serve_job *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	int left = --j->refs;
	pthread_mutex_unlock(&j->mu);
	if (left)
		return;
	serve_params_free(&j->p);
	serve_stop_free(&j->stop);
	free(j->text);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

void serve_job_emit(void *job, const char *text, size_t len)
{
	struct serve_job *j = job;
	pthread_mutex_lock(&j->mu);
	if (j->len + len + 1 > j->cap) {
		size_t cap = (j->len + len + 1) * 2;
		char *t = realloc(j->text, cap);
		if (!t) { /* the answer cannot grow: end it as an error */
			serve_err(&j->err, 500, NULL, "out of memory for the answer");
			pthread_mutex_unlock(&j->mu);
			atomic_store(&j->cancel, true);
			return;
		}
		j->text = t;
		j->cap = cap;
	}
	memcpy(j->text + j->len, text, len);
	j->len += len;
	j->text[j->len] = 0;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

void serve_job_finish(struct serve_job *j, const char *finish, uint32_t n_prompt,
		      uint32_t n_completion, const struct serve_error *e)
{
	pthread_mutex_lock(&j->mu);
	j->done = true;
	j->finish = finish;
	j->n_prompt = n_prompt;
	j->n_completion = n_completion;
	if (e)
		j->err = *e;
	j->t_end = serve_now();
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}
