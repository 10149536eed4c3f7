/* Prompts: chat messages checked and rendered by the chat template (as
 * `belt template` renders them, add_generation_prompt true), and text
 * tokenized with control-token text parsed (a rendered template writes
 * "<|im_start|>" and means the token). */
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

/* The roles a message may have; "developer" is OpenAI's newer name for
 * "system", which is what templates know. */
static const char *role_of(const char *role)
{
	static const char *const roles[] = {"system", "user", "assistant"};
	if (!strcmp(role, "developer"))
		return "system";
	for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
		if (!strcmp(role, roles[i]))
			return roles[i];
	return NULL;
}

/* content: a string, null (an assistant's), or a list of text parts,
 * joined. Into *out as a new string. */
static int content_of(const json_t *c, size_t i, json_t **out, struct serve_error *e)
{
	if (json_is_string(c)) {
		*out = json_incref((json_t *)c);
		return 0;
	}
	if (json_is_null(c)) {
		*out = json_string("");
		return 0;
	}
	if (!json_is_array(c))
		return serve_err(e, 400, "messages",
				 "'messages[%zu].content' must be a string or a list of text parts", i);
	size_t n = json_array_size(c), len = 0;
	for (size_t k = 0; k < n; k++) {
		const json_t *part = json_array_get(c, k);
		const json_t *type = json_object_get(part, "type");
		const json_t *text = json_object_get(part, "text");
		if (!json_is_object(part) || !json_is_string(type) ||
		    strcmp(json_string_value(type), "text") || !json_is_string(text))
			return serve_err(e, 400, "messages",
					 "'messages[%zu].content[%zu]': only parts {\"type\": \"text\", "
					 "\"text\": ...} are supported", i, k);
		len += json_string_length(text);
	}
	char *buf = malloc(len + 1);
	if (!buf)
		return serve_err(e, 500, NULL, "out of memory");
	len = 0;
	for (size_t k = 0; k < n; k++) {
		const json_t *text = json_object_get(json_array_get(c, k), "text");
		memcpy(buf + len, json_string_value(text), json_string_length(text));
		len += json_string_length(text);
	}
	*out = json_stringn_nocheck(buf, len);
	free(buf);
	return *out ? 0 : serve_err(e, 500, NULL, "out of memory");
}

/* The messages as the template gets them: {role, content[, name]}. */
static json_t *check_messages(const json_t *msgs, struct serve_error *e)
{
	if (!msgs) {
		serve_err(e, 400, "messages", "'messages' is required");
		return NULL;
	}
	if (!json_is_array(msgs) || json_array_size(msgs) == 0) {
		serve_err(e, 400, "messages", "'messages' must be a non-empty list of messages");
		return NULL;
	}
	json_t *out = json_array();
	for (size_t i = 0; out && i < json_array_size(msgs); i++) {
		const json_t *m = json_array_get(msgs, i);
		const json_t *role = json_object_get(m, "role"), *name = json_object_get(m, "name");
		const char *r = json_is_string(role) ? role_of(json_string_value(role)) : NULL;
		json_t *content = NULL;
		if (!json_is_object(m))
			serve_err(e, 400, "messages", "'messages[%zu]' must be an object", i);
		else if (!json_is_string(role))
			serve_err(e, 400, "messages", "'messages[%zu].role' must be a string", i);
		else if (!r)
			serve_err(e, 400, "messages",
				  "'messages[%zu].role' is '%.64s': expected system, developer, user or "
				  "assistant", i, json_string_value(role));
		else if (name && !json_is_string(name))
			serve_err(e, 400, "messages", "'messages[%zu].name' must be a string", i);
		else if (!content_of(json_object_get(m, "content"), i, &content, e)) {
			json_t *msg = json_pack("{s:s, s:o}", "role", r, "content", content);
			if (msg && name)
				json_object_set(msg, "name", (json_t *)name);
			if (!msg || json_array_append_new(out, msg)) {
				serve_err(e, 500, NULL, "out of memory");
			} else {
				continue;
			}
		}
		json_decref(out);
		return NULL;
	}
	if (!out)
		serve_err(e, 500, NULL, "out of memory");
	return out;
}

int serve_prompt_chat(const struct serve_model *sm, const json_t *messages, char **text,
		      size_t *len, struct serve_error *e)
{
	json_t *msgs = check_messages(messages, e);
	if (!msgs)
		return -1;
	if (!sm->tpl) {
		json_decref(msgs);
		return serve_err(e, 400, "messages",
				 "the model has no chat template (tokenizer.chat_template): start belt "
				 "serve with --chat-template FILE, or use /v1/completions");
	}
	json_t *vars = json_pack("{s:o, s:b, s:s, s:s}", "messages", msgs, "add_generation_prompt", 1,
				 "bos_token", sm->bos_text, "eos_token", sm->eos_text);
	if (!vars)
		return serve_err(e, 500, NULL, "out of memory");
	char err[BELT_ERR_SIZE];
	int rc = belt_template_render(sm->tpl, vars, NULL, text, len, err, sizeof err);
	json_decref(vars);
	if (rc)
		return serve_err(e, 400, "messages", "the chat template (%s) refused the messages: %s",
				 sm->tpl_name, err);
	return 0;
}

int serve_prompt_tokens(const struct serve_model *sm, const char *text, size_t len,
			const char *param, struct serve_params *p, struct serve_error *e)
{
	char err[BELT_ERR_SIZE];
	size_t n = 0;
	if (belt_tok_encode_flags(sm->tok, text, len, BELT_TOK_PARSE_SPECIAL, NULL, 0, &n, err,
				  sizeof err))
		return serve_err(e, 400, param, "'%s' cannot be tokenized: %s", param, err);
	int32_t bos = belt_tok_bos(sm->tok);
	bool add_bos = belt_tok_add_bos(sm->tok) && bos >= 0;
	if (!(p->ids = malloc((n + 1) * sizeof *p->ids)))
		return serve_err(e, 500, NULL, "out of memory");
	if (belt_tok_encode_flags(sm->tok, text, len, BELT_TOK_PARSE_SPECIAL, p->ids + add_bos, n, &n,
				  err, sizeof err))
		return serve_err(e, 400, param, "'%s' cannot be tokenized: %s", param, err);
	/* BOS once: not again where the template wrote it */
	if (add_bos && n && p->ids[1] == bos)
		memmove(p->ids, p->ids + 1, n * sizeof *p->ids);
	else if (add_bos)
		p->ids[0] = bos, n++;
	p->n_ids = n;
	if (n == 0)
		return serve_err(e, 400, param, "'%s' is empty and the model has no BOS token to start "
				 "from", param);
	if (n >= sm->n_ctx)
		return serve_err(e, 400, param,
				 "'%s' is %zu tokens: the context holds %u (-c) and the answer needs one",
				 param, n, sm->n_ctx);
	return 0;
}
