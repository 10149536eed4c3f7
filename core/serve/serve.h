/* core/serve: `belt serve`, an OpenAI-compatible HTTP server over the
 * public libbelt API (doc/serve.md). One file per concern: the lifecycle
 * (server.c), the HTTP glue (http.c), request parsing (request.c),
 * prompts (prompt.c), response_format grammars (format.c), jobs (job.c),
 * stop strings (stop.c), the slot scheduler (sched.c), the OpenAI
 * response and chunk objects (openai.c) and the web page (page.c). */
#ifndef BELT_SERVE_H
#define BELT_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "belt/template.h"

/* What `belt serve` was given. */
struct serve_config {
	const char *model, *backend, *host, *api_key, *chat_template;
	const char *kernels;
	int port;	   /* 0: any free port (the log line names it) */
	int parallel;	   /* slots */
	uint32_t n_ctx;	   /* per slot; 0: the model's training context */
	int threads;	   /* <= 0: one per core */
	int device;	   /* < 0: the backend's choice */
	uint32_t chunk;	   /* tokens per backend run and per turn of a slot */
	size_t max_body;   /* bytes of a request body */
	int max_conns;	   /* connections at once */
	/* a full context shifts (keeping keep prompt tokens besides BOS; -1:
	 * the whole prompt) rather than ending the answer */
	bool context_shift;
	long keep;
};

/* An HTTP error as OpenAI writes it: {"error": {"message", "type",
 * "param", "code"}}. */
struct serve_error {
	int status;	  /* 400, 401, 404, 413, 500, 503 */
	const char *type; /* "invalid_request_error", "server_error", ... */
	char param[64];	  /* the request field ("" for none: null) */
	char code[48];	  /* "" for none: null */
	char msg[512];
};
/* Fill e (status, type invalid_request_error unless status >= 500,
 * param, printf message); returns -1. */
int serve_err(struct serve_error *e, int status, const char *param, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Stop strings: text is held back while its end could begin one, and a
 * stop string is never emitted (stop.c). */
struct serve_stop {
	char **strs;
	size_t n;
	char *held; /* text not emitted yet */
	size_t n_held, cap;
};
typedef void (*serve_emit_fn)(void *ud, const char *text, size_t len);
/* Take the n strings (copies them); 0, or -1 out of memory. */
int serve_stop_init(struct serve_stop *st, const char *const *strs, size_t n);
void serve_stop_free(struct serve_stop *st);
/* Add text; emit what can no longer be part of a stop string. Returns 1
 * when a stop string is complete (the text before it emitted, the rest
 * dropped), 0 otherwise, -1 out of memory. */
int serve_stop_feed(struct serve_stop *st, const char *text, size_t len, serve_emit_fn emit,
		    void *ud);
/* At the end of generation: emit what is held. */
void serve_stop_flush(struct serve_stop *st, serve_emit_fn emit, void *ud);

enum serve_kind { SERVE_CHAT, SERVE_COMPLETION };

/* One request, validated: everything the slot needs to run it. */
struct serve_params {
	enum serve_kind kind;
	bool stream, include_usage;
	/* llama.cpp's cache_prompt (default true): the slot's cache may
	 * serve the prompt's beginning; false: it runs whole */
	bool cache_prompt;
	uint32_t max_tokens; /* 0: until the context is full */
	struct belt_sampling samp;
	char **stop;
	size_t n_stop;
	int32_t *ids; /* the prompt's tokens */
	size_t n_ids;
	struct belt_grammar *grammar; /* NULL: none */
};
void serve_params_free(struct serve_params *p);

/* A request in flight, shared by its connection and its slot; freed when
 * both have let go (serve_job_unref). */
struct serve_job {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* signalled when text grows or the job ends */
	int refs;
	struct serve_params p;
	char id[48];
	int64_t created;
	struct serve_stop stop;
	char *text; /* what the answer is so far (stop strings removed) */
	size_t len, cap;
	bool done;
	const char *finish;    /* "stop" or "length" once done */
	struct serve_error err; /* err.status != 0: it failed */
	uint32_t n_prompt, n_completion;
	double t_start, t_end; /* monotonic seconds: queued, done */
	atomic_bool cancel;    /* the client left, or the server stops */
	struct serve_job *next; /* in the scheduler's queue */
};
/* A job for p (taken over, zeroed); NULL out of memory. One reference. */
struct serve_job *serve_job_new(struct serve_params *p);
void serve_job_ref(struct serve_job *j);
void serve_job_unref(struct serve_job *j);
/* Append generated text (the slot, through the stop strings). */
void serve_job_emit(void *job, const char *text, size_t len);
/* End it: finish reason and counts, or an error (e->status != 0). */
void serve_job_finish(struct serve_job *j, const char *finish, uint32_t n_prompt,
		      uint32_t n_completion, const struct serve_error *e);
double serve_now(void);

/* The slots: --parallel sessions over one model, each run by its own
 * thread, of which one at a time holds the model (sched.c). */
struct serve_sched;
int serve_sched_new(struct belt_model *m, const struct belt_session_params *sp, int n_slots,
		    struct serve_sched **out, char *err, size_t errsz);
/* Shift full contexts as cfg->context_shift and cfg->keep say (before
 * any request). */
void serve_sched_context_shift(struct serve_sched *s, bool shift, long keep);
/* Queue j (a reference is taken); -1 once the scheduler stops. */
int serve_sched_submit(struct serve_sched *s, struct serve_job *j);
/* The context of each slot's session. */
uint32_t serve_sched_n_ctx(const struct serve_sched *s);
/* Slots busy and requests waiting. */
void serve_sched_load(struct serve_sched *s, int *busy, int *queued);
/* Refuse what is queued (503), cancel what runs, join the threads. */
void serve_sched_stop(struct serve_sched *s);
void serve_sched_free(struct serve_sched *s);

/* What request parsing needs of the server. */
struct serve_model {
	const struct belt_tokenizer *tok;
	const struct belt_template *tpl; /* NULL: chat is refused */
	const char *tpl_name;		 /* its file, or "tokenizer.chat_template" */
	const char *bos_text, *eos_text;
	uint32_t n_ctx; /* of each slot */
	bool grammars;	/* the gbnf grammar plugin is loaded */
	bool sampler;	/* the gumbel sampler plugin is loaded */
};

/* Parse and check a request body of kind into p; -1 with e (request.c). */
int serve_request_parse(const struct serve_model *sm, enum serve_kind kind, const char *body,
			size_t len, struct serve_params *p, struct serve_error *e);
/* The chat messages (checked) rendered by the template (prompt.c). */
int serve_prompt_chat(const struct serve_model *sm, const json_t *messages, char **text,
		      size_t *len, struct serve_error *e);
/* Tokenize text: control-token text parsed, BOS first where the model
 * wants it and the text does not begin with it; param names the field. */
int serve_prompt_tokens(const struct serve_model *sm, const char *text, size_t len,
			const char *param, struct serve_params *p, struct serve_error *e);
/* response_format into p->grammar (format.c). */
int serve_format_grammar(const struct serve_model *sm, const json_t *rf, struct serve_params *p,
			 struct serve_error *e);

/* The OpenAI objects (openai.c); each returns a new reference. */
json_t *serve_error_json(const struct serve_error *e);
/* The whole answer of a finished job (locked by the caller). */
json_t *serve_response_json(const struct serve_job *j, const char *model);
/* One streamed chunk: text (a chat delta, or a completion's text), or
 * the final chunk with finish set; role: the chat's first chunk. */
json_t *serve_chunk_json(const struct serve_job *j, const char *model, const char *text,
			 size_t len, const char *finish, bool role);
/* The closing chunk of stream_options.include_usage: no choices, usage. */
json_t *serve_usage_chunk_json(const struct serve_job *j, const char *model);
json_t *serve_usage_json(const struct serve_job *j);

/* The chat page served at / (page.c). */
extern const char serve_page_html[];

/* The HTTP side (http.c). */
struct serve_http;
struct serve_http_ctx {
	const struct serve_config *cfg;
	const struct serve_model *sm;
	struct serve_sched *sched;
	const char *model_name;
	int64_t created; /* when the model was loaded, for /v1/models */
	atomic_bool stopping;
};
/* Listen on cfg's host and port; *port gets the port bound. */
int serve_http_start(struct serve_http_ctx *ctx, struct serve_http **out, int *port, char *err,
		     size_t errsz);
/* Stop accepting connections (requests in flight go on). */
void serve_http_quiesce(struct serve_http *h);
/* Wait until the requests in flight have been answered (their jobs are
 * done), at most seconds. */
void serve_http_drain(struct serve_http *h, double seconds);
/* Close every connection and free. */
void serve_http_stop(struct serve_http *h);

/* Load everything, serve until SIGINT or SIGTERM, clean up: the exit
 * status, messages on stderr (server.c). */
int serve_run(const struct serve_config *cfg);
/* A line on stderr: "belt serve: ...". */
void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
