/* The body of /v1/chat/completions and /v1/completions: JSON, each known
 * field checked for its type and range (400 naming it), unknown fields
 * ignored as OpenAI's API ignores them; fields belt cannot honour
 * (n > 1, logprobs, tools, echo, ...) are refused rather than ignored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

/* Stop strings: at most this many, each of at most this many bytes. */
#define MAX_STOP 16
#define MAX_STOP_LEN 1024

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* A field that is absent or null keeps its default: 0. */
static int get_bool(const json_t *o, const char *key, bool *out, struct serve_error *e)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return serve_err(e, 400, key, "'%s' must be a boolean, not %s", key, json_kind(v));
	*out = json_is_true(v);
	return 0;
}

static int get_number(const json_t *o, const char *key, double min, double max, float *out,
		      struct serve_error *e)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return serve_err(e, 400, key, "'%s' must be a number, not %s", key, json_kind(v));
	double d = json_number_value(v);
	if (!(d >= min && d <= max))
		return serve_err(e, 400, key, "'%s' is %g: expected %g to %g", key, d, min, max);
	*out = (float)d;
	return 0;
}

static int get_int(const json_t *o, const char *key, json_int_t min, json_int_t max,
		   json_int_t *out, struct serve_error *e)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return serve_err(e, 400, key, "'%s' must be an integer, not %s", key, json_kind(v));
	json_int_t i = json_integer_value(v);
	if (i < min || i > max)
		return serve_err(e, 400, key, "'%s' is %lld: expected %lld to %lld", key,
				 (long long)i, (long long)min, (long long)max);
	*out = i;
	return 0;
}

/* "stop": a string or a list of strings, none empty. */
static int get_stop(const json_t *o, struct serve_params *p, struct serve_error *e)
{
	const json_t *v = json_object_get(o, "stop");
	if (!v || json_is_null(v))
		return 0;
	size_t n = json_is_string(v) ? 1 : json_is_array(v) ? json_array_size(v) : 0;
	if (!json_is_string(v) && !json_is_array(v))
		return serve_err(e, 400, "stop", "'stop' must be a string or a list of strings, not %s",
				 json_kind(v));
	if (n > MAX_STOP)
		return serve_err(e, 400, "stop", "'stop' has %zu strings: at most %d", n, MAX_STOP);
	if (n && !(p->stop = calloc(n, sizeof *p->stop)))
		return serve_err(e, 500, NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_is_string(v) ? v : json_array_get(v, i);
		if (!json_is_string(s))
			return serve_err(e, 400, "stop", "'stop[%zu]' must be a string, not %s", i,
					 json_kind(s));
		size_t len = json_string_length(s);
		if (len == 0 || len > MAX_STOP_LEN)
			return serve_err(e, 400, "stop", "'stop[%zu]' has %zu bytes: expected 1 to %d",
					 i, len, MAX_STOP_LEN);
		if (memchr(json_string_value(s), 0, len))
			return serve_err(e, 400, "stop", "'stop[%zu]' holds a NUL character", i);
		if (!(p->stop[i] = strdup(json_string_value(s))))
			return serve_err(e, 500, NULL, "out of memory");
		p->n_stop = i + 1;
	}
	return 0;
}

/* Fields that would change the answer in ways belt does not do. */
static int refuse_unsupported(const json_t *o, struct serve_error *e)
{
	const json_t *v;
	json_int_t n = 1;
	if (get_int(o, "n", 1, 1, &n, e))
		return serve_err(e, 400, "n", "'n' must be 1: one choice per request");
	if ((v = json_object_get(o, "logprobs")) && !json_is_null(v) && !json_is_false(v))
		return serve_err(e, 400, "logprobs", "'logprobs' is not supported");
	for (const char *const *k = (const char *const[]){"tools", "functions", NULL}; *k; k++)
		if ((v = json_object_get(o, *k)) && !json_is_null(v) &&
		    !(json_is_array(v) && json_array_size(v) == 0))
			return serve_err(e, 400, *k, "'%s' (tool calls) is not supported", *k);
	if ((v = json_object_get(o, "echo")) && json_is_true(v))
		return serve_err(e, 400, "echo", "'echo' is not supported");
	if ((v = json_object_get(o, "suffix")) && !json_is_null(v) &&
	    !(json_is_string(v) && json_string_length(v) == 0))
		return serve_err(e, 400, "suffix", "'suffix' is not supported");
	json_int_t best_of = 1;
	if (get_int(o, "best_of", 1, 1, &best_of, e))
		return serve_err(e, 400, "best_of", "'best_of' must be 1");
	return 0;
}

/* The sampling fields over llama.cpp's defaults (those of belt run
 * --temp 0.8); a request without "seed" gets one of its own. */
static int get_sampling(const json_t *o, struct belt_sampling *s, struct serve_error *e)
{
	belt_sampling_default(s);
	json_int_t top_k = s->top_k, seed = -1;
	if (get_number(o, "temperature", 0, 100, &s->temp, e) ||
	    get_number(o, "top_p", 0, 1, &s->top_p, e) ||
	    get_number(o, "min_p", 0, 1, &s->min_p, e) ||
	    get_int(o, "top_k", 0, INT32_MAX, &top_k, e) ||
	    get_number(o, "presence_penalty", -2, 2, &s->presence_penalty, e) ||
	    get_number(o, "frequency_penalty", -2, 2, &s->frequency_penalty, e) ||
	    get_number(o, "repeat_penalty", 0, 100, &s->repeat_penalty, e) ||
	    get_int(o, "seed", INT64_MIN, INT64_MAX, &seed, e))
		return -1;
	if (s->top_p <= 0)
		return serve_err(e, 400, "top_p", "'top_p' must be above 0");
	if (s->repeat_penalty <= 0)
		return serve_err(e, 400, "repeat_penalty", "'repeat_penalty' must be above 0");
	s->top_k = (int32_t)top_k;
	if (json_object_get(o, "seed") && !json_is_null(json_object_get(o, "seed"))) {
		s->seed = (uint64_t)seed;
	} else {
		static atomic_uint_fast64_t counter;
		s->seed = (uint64_t)(serve_now() * 1e9) ^
			  (atomic_fetch_add(&counter, 1) + 1) * 0x9e3779b97f4a7c15u;
	}
	char err[BELT_ERR_SIZE];
	if (belt_sampling_check(s, err, sizeof err))
		return serve_err(e, 400, NULL, "sampling settings: %s", err);
	return 0;
}

/* "prompt": a string, a list of one string, or a list of token ids. */
static int completion_prompt(const struct serve_model *sm, const json_t *v,
			     struct serve_params *p, struct serve_error *e)
{
	if (!v)
		return serve_err(e, 400, "prompt", "'prompt' is required");
	if (json_is_array(v) && json_array_size(v) == 1 && json_is_string(json_array_get(v, 0)))
		v = json_array_get(v, 0);
	if (json_is_string(v))
		return serve_prompt_tokens(sm, json_string_value(v), json_string_length(v), "prompt",
					   p, e);
	size_t n = json_is_array(v) ? json_array_size(v) : 0;
	if (!n || !json_is_integer(json_array_get(v, 0)))
		return serve_err(e, 400, "prompt",
				 "'prompt' must be a string, a list of one string or a list of "
				 "token ids, not %s", json_is_array(v) && n ? "that list" : json_kind(v));
	if (n >= sm->n_ctx)
		return serve_err(e, 400, "prompt",
				 "'prompt' is %zu tokens: the context holds %u and the answer needs one", n,
				 sm->n_ctx);
	if (!(p->ids = malloc(n * sizeof *p->ids)))
		return serve_err(e, 500, NULL, "out of memory");
	int32_t n_vocab = belt_tok_n_vocab(sm->tok);
	for (size_t i = 0; i < n; i++) {
		const json_t *t = json_array_get(v, i);
		if (!json_is_integer(t) || json_integer_value(t) < 0 ||
		    json_integer_value(t) >= n_vocab)
			return serve_err(e, 400, "prompt", "'prompt[%zu]' must be a token id 0 to %d", i,
					 n_vocab - 1);
		p->ids[i] = (int32_t)json_integer_value(t);
	}
	p->n_ids = n;
	return 0;
}

static int parse(const struct serve_model *sm, enum serve_kind kind, const json_t *o,
		 struct serve_params *p, struct serve_error *e)
{
	const json_t *v;
	if ((v = json_object_get(o, "model")) && !json_is_string(v) && !json_is_null(v))
		return serve_err(e, 400, "model", "'model' must be a string, not %s", json_kind(v));
	json_int_t max_tokens = 0;
	const char *mt = kind == SERVE_CHAT && json_object_get(o, "max_completion_tokens")
				 ? "max_completion_tokens" : "max_tokens";
	p->cache_prompt = true;
	if (refuse_unsupported(o, e) || get_bool(o, "stream", &p->stream, e) ||
	    get_bool(o, "cache_prompt", &p->cache_prompt, e) ||
	    get_int(o, mt, 1, 1 << 24, &max_tokens, e) || get_sampling(o, &p->samp, e) ||
	    get_stop(o, p, e))
		return -1;
	p->max_tokens = (uint32_t)max_tokens;
	if ((v = json_object_get(o, "stream_options")) && !json_is_null(v)) {
		if (!json_is_object(v))
			return serve_err(e, 400, "stream_options", "'stream_options' must be an object, not %s",
					 json_kind(v));
		if (get_bool(v, "include_usage", &p->include_usage, e))
			return serve_err(e, 400, "stream_options",
					 "'stream_options.include_usage' must be a boolean");
	}
	if (!belt_sampling_greedy(&p->samp) && !sm->sampler)
		return serve_err(e, 500, "temperature",
				 "sampling needs the sampler plugin 'gumbel', which did not load: "
				 "give \"temperature\": 0");
	if ((v = json_object_get(o, "response_format")) && !json_is_null(v) &&
	    serve_format_grammar(sm, v, p, e))
		return -1;
	if (kind == SERVE_COMPLETION)
		return completion_prompt(sm, json_object_get(o, "prompt"), p, e);
	char *text;
	size_t len;
	if (serve_prompt_chat(sm, json_object_get(o, "messages"), &text, &len, e))
		return -1;
	int rc = serve_prompt_tokens(sm, text, len, "messages", p, e);
	free(text);
	return rc;
}

int serve_request_parse(const struct serve_model *sm, enum serve_kind kind, const char *body,
			size_t len, struct serve_params *p, struct serve_error *e)
{
	*p = (struct serve_params){.kind = kind};
	json_error_t je;
	json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return serve_err(e, 400, NULL, "the body is not JSON: %s at line %d, column %d",
				 je.text, je.line, je.column);
	int rc = json_is_object(o) ? parse(sm, kind, o, p, e)
				   : serve_err(e, 400, NULL, "the body must be a JSON object, not %s",
					       json_kind(o));
	json_decref(o);
	if (rc)
		serve_params_free(p);
	else
		p->kind = kind;
	return rc;
}
