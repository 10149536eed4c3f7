/* libFuzzer target: chat templates (core/template) on any text.
 *
 * The input is a template, compiled and, when it compiles, rendered for
 * a small conversation with tools (the variables transformers passes)
 * under tight limits: 64 KiB of output, 16 MiB of memory, 200,000 steps,
 * macro calls 20 deep. Invariants: a refused template or a failed render
 * gets one non-empty line (no newline) and hands out nothing; a render
 * gives NUL-terminated text of the length it says, within the output
 * limit. No crash, leak, overflow or undefined behaviour (ASan, UBSan),
 * no hang. A broken invariant aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/template.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *vars;

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz template: invariant broken: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void free_vars(void)
{
	json_decref(vars);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static const char conversation[] =
		"{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"add_generation_prompt\": true,"
		" \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\","
		" \"description\": \"d\", \"parameters\": {\"type\": \"object\", \"properties\":"
		" {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"]}}}],"
		" \"messages\": [{\"role\": \"system\", \"content\": \"S\"},"
		" {\"role\": \"user\", \"content\": \"h\\u00e9 {{x}}\"},"
		" {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"1\","
		" \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1.5}}}]},"
		" {\"role\": \"tool\", \"content\": \"r\"}, {\"role\": \"user\", \"content\":"
		" [{\"type\": \"text\", \"text\": \"t\"}]}]}";
	json_error_t je;
	vars = json_loads(conversation, 0, &je);
	if (!vars)
		broken("the fixed conversation does not parse", je.text);
	atexit(free_vars);
	return 0;
}

static void check_err(const char *err)
{
	if (!*err)
		broken("a failure says nothing", NULL);
	if (strchr(err, '\n'))
		broken("a message of more than one line", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[BELT_ERR_SIZE] = "";
	struct belt_template *t = (struct belt_template *)1;
	if (belt_template_compile((const char *)data, size, &t, err, sizeof err)) {
		if (t)
			broken("a failed compile hands out a template", NULL);
		check_err(err);
		return 0;
	}
	struct belt_template_options o;
	belt_template_options_default(&o);
	o.limits = (struct belt_template_limits){.max_output = 64 << 10, .max_memory = 16 << 20,
						 .max_steps = 200000, .max_depth = 20};
	static const struct tm clock = {.tm_year = 125, .tm_mday = 15, .tm_hour = 10, .tm_min = 30};
	o.now = &clock;
	char *out = (char *)1;
	size_t len = 0;
	err[0] = 0;
	if (belt_template_render(t, vars, &o, &out, &len, err, sizeof err)) {
		if (out)
			broken("a failed render hands out text", NULL);
		check_err(err);
	} else {
		if (!out || out[len] || len > o.limits.max_output)
			broken("a render's text is not what it says", NULL);
		free(out);
	}
	belt_template_free(t);
	return 0;
}
