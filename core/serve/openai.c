/* The objects of OpenAI's API: errors, chat.completion and
 * text_completion answers, their streamed chunks, usage. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "serve/serve.h"

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *serve_error_json(const struct serve_error *e)
{
	return json_pack("{s:{s:s, s:s, s:o, s:o}}", "error", "message", e->msg, "type",
			 e->type ? e->type : "invalid_request_error", "param", str_or_null(e->param),
			 "code", str_or_null(e->code));
}

json_t *serve_usage_json(const struct serve_job *j)
{
	return json_pack("{s:I, s:I, s:I}", "prompt_tokens", (json_int_t)j->n_prompt,
			 "completion_tokens", (json_int_t)j->n_completion, "total_tokens",
			 (json_int_t)j->n_prompt + j->n_completion);
}

static json_t *head(const struct serve_job *j, const char *model, bool chunk)
{
	const char *object = j->p.kind == SERVE_COMPLETION ? "text_completion"
			     : chunk			      ? "chat.completion.chunk"
							      : "chat.completion";
	return json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", j->id, "object", object, "created",
			 (json_int_t)j->created, "model", model, "system_fingerprint",
			 "belt-" PACKAGE_VERSION);
}

static json_t *text_json(const char *text, size_t len)
{
	return json_stringn_nocheck(text ? text : "", text ? len : 0);
}

json_t *serve_response_json(const struct serve_job *j, const char *model)
{
	json_t *o = head(j, model, false), *choice;
	if (j->p.kind == SERVE_CHAT)
		choice = json_pack("{s:i, s:{s:s, s:o}, s:n, s:s}", "index", 0, "message", "role",
				   "assistant", "content", text_json(j->text, j->len), "logprobs",
				   "finish_reason", j->finish);
	else
		choice = json_pack("{s:i, s:o, s:n, s:s}", "index", 0, "text",
				   text_json(j->text, j->len), "logprobs", "finish_reason", j->finish);
	if (!o || !choice) {
		json_decref(o);
		json_decref(choice);
		return NULL;
	}
	json_object_set_new(o, "choices", json_pack("[o]", choice));
	json_object_set_new(o, "usage", serve_usage_json(j));
	return o;
}

json_t *serve_chunk_json(const struct serve_job *j, const char *model, const char *text,
			 size_t len, const char *finish, bool role)
{
	json_t *o = head(j, model, true), *choice;
	if (!o)
		return NULL;
	if (j->p.kind == SERVE_CHAT) {
		json_t *delta = json_object();
		if (role)
			json_object_set_new(delta, "role", json_string("assistant"));
		if (role || len)
			json_object_set_new(delta, "content", text_json(text, len));
		choice = json_pack("{s:i, s:o, s:n, s:o}", "index", 0, "delta", delta, "logprobs",
				   "finish_reason", str_or_null(finish));
	} else {
		choice = json_pack("{s:i, s:o, s:n, s:o}", "index", 0, "text", text_json(text, len),
				   "logprobs", "finish_reason", str_or_null(finish));
	}
	if (!choice) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "choices", json_pack("[o]", choice));
	if (j->p.include_usage) /* every chunk but the last has "usage": null */
		json_object_set_new(o, "usage", json_null());
	return o;
}

json_t *serve_usage_chunk_json(const struct serve_job *j, const char *model)
{
	json_t *o = head(j, model, true);
	if (o) {
		json_object_set_new(o, "choices", json_array());
		json_object_set_new(o, "usage", serve_usage_json(j));
	}
	return o;
}
