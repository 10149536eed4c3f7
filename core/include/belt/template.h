/* belt/template.h: chat templates, the Jinja subset that models ship in
 * the GGUF key tokenizer.chat_template (doc/chat-templates.md).
 *
 * Rendering works as Hugging Face transformers' apply_chat_template sets
 * up Jinja: trim_blocks and lstrip_blocks on, loop controls, a
 * {% generation %} block, tojson as Python's json.dumps(ensure_ascii=False),
 * raise_exception(msg) and strftime_now(fmt), and list and dict methods
 * that would modify them refused as the immutable sandbox refuses them. */
#ifndef BELT_TEMPLATE_H
#define BELT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

struct belt_template;

/* What one render may use: a hostile template fails with a message
 * instead of exhausting the process. 0 in a field: its default. */
struct belt_template_limits {
	size_t max_output;   /* bytes of rendered text (default 64 MiB) */
	size_t max_memory;   /* bytes of values and buffers (default 1 GiB) */
	uint64_t max_steps;  /* statements, expressions, loop turns (default 100M) */
	int max_depth;	     /* nested macro calls and evaluation (default 200) */
};

struct belt_template_options {
	struct belt_template_limits limits;
	/* strftime_now's clock: NULL is the real clock (local time);
	 * otherwise this time (tests use 2025-01-15 10:30:00) */
	const struct tm *now;
};

/* Fill o with the defaults (the real clock, the default limits). */
void belt_template_options_default(struct belt_template_options *o);

/* Compile text[0..len). A syntax error names the place: "LINE:COL: what
 * was expected". */
int belt_template_compile(const char *text, size_t len, struct belt_template **out,
			  char *err, size_t errsz);

/* Render with the variables of vars, a JSON object (messages,
 * add_generation_prompt, bos_token, eos_token, tools, ...); opts NULL:
 * the defaults. *out gets a malloc'd NUL-terminated text (free it), *len
 * its length (NULL allowed). Errors: raise_exception's message, or
 * "LINE:COL: what failed". */
int belt_template_render(const struct belt_template *t, const json_t *vars,
			 const struct belt_template_options *opts, char **out, size_t *len,
			 char *err, size_t errsz);

/* Free; NULL is allowed. */
void belt_template_free(struct belt_template *t);

#endif
