/* belt template: render a chat template (a model's tokenizer.chat_template
 * or a Jinja file) for a conversation given as JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "belt/belt.h"
#include "belt/template.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt template (-m MODEL | --chat-template FILE) --messages FILE\n"
	"                     [--no-generation-prompt]\n"
	"\n"
	"Print the prompt a chat template makes of a conversation: MODEL's\n"
	"tokenizer.chat_template (a vocabulary-only GGUF will do) or the Jinja\n"
	"template in FILE. --messages names a JSON file holding the array of\n"
	"messages ({\"role\": ..., \"content\": ...}), or an object of the template's\n"
	"variables (messages, tools, ...). add_generation_prompt is true unless\n"
	"--no-generation-prompt; bos_token and eos_token are MODEL's BOS and EOS\n"
	"text (empty with --chat-template) unless the object sets them.\n"
	"doc/chat-templates.md lists what templates may use.\n";

/* The variables from --messages: an array is the messages, an object
 * the variables themselves. */
static json_t *load_vars(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, JSON_DECODE_ANY, &je);
	if (!j) {
		if (je.line < 1)
			cli_error("template", "--messages %s: %s", path, je.text);
		else
			cli_error("template", "--messages %s:%d:%d: %s", path, je.line, je.column, je.text);
		return NULL;
	}
	if (json_is_array(j)) {
		json_t *vars = json_object();
		json_object_set_new(vars, "messages", j);
		return vars;
	}
	if (!json_is_object(j) || !json_is_array(json_object_get(j, "messages"))) {
		cli_error("template", "--messages %s: expected a JSON array of messages, or an object "
				     "whose \"messages\" is one",
			  path);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The chat template of model, and its BOS and EOS text into vars (where
 * vars lacks them); NULL after the message. */
static char *model_template(const char *model, json_t *vars, size_t *len)
{
	char err[CLI_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(model, err, sizeof err);
	if (!g) {
		cli_fail(err);
		return NULL;
	}
	struct belt_gguf_str s;
	int found = belt_gguf_get_str(g, "tokenizer.chat_template", &s, err, sizeof err);
	char *text = found == 1 ? malloc(s.len + 1) : NULL;
	if (found < 0)
		cli_fail(err);
	else if (!found)
		cli_error("template", "%s: no tokenizer.chat_template key: give the template with "
				      "--chat-template FILE",
			  model);
	else if (!text)
		cli_error("template", "out of memory");
	if (!text) {
		belt_gguf_close(g);
		return NULL;
	}
	memcpy(text, s.ptr, s.len);
	text[s.len] = 0;
	*len = s.len;
	struct belt_tokenizer *tok;
	if (belt_tok_load(g, &tok, err, sizeof err)) {
		cli_fail(err);
		free(text);
		belt_gguf_close(g);
		return NULL;
	}
	int32_t ids[2] = {belt_tok_bos(tok), belt_tok_eos(tok)};
	const char *keys[2] = {"bos_token", "eos_token"};
	for (int i = 0; i < 2; i++) {
		const char *piece = ids[i] >= 0 ? belt_tok_piece(tok, ids[i]) : NULL;
		if (!json_object_get(vars, keys[i]))
			json_object_set_new(vars, keys[i], json_string(piece ? piece : ""));
	}
	belt_tok_free(tok);
	belt_gguf_close(g);
	return text;
}

static int render(const char *model, const char *file, json_t *vars)
{
	size_t len = 0;
	char *text;
	if (model) {
		text = model_template(model, vars, &len);
		if (!text)
			return CLI_FAIL;
	} else {
		text = cli_read_file(file, &len);
		if (!text)
			return cli_error("template", "--chat-template %s: %s", file, strerror(errno));
		for (int i = 0; i < 2; i++)
			if (!json_object_get(vars, i ? "eos_token" : "bos_token"))
				json_object_set_new(vars, i ? "eos_token" : "bos_token", json_string(""));
	}
	const char *name = model ? model : file;
	char err[CLI_ERR_SIZE];
	struct belt_template *t;
	char *out = NULL;
	size_t n = 0;
	int rc = belt_template_compile(text, len, &t, err, sizeof err);
	if (rc == 0) {
		rc = belt_template_render(t, vars, NULL, &out, &n, err, sizeof err);
		belt_template_free(t);
	}
	free(text);
	if (rc) /* "FILE:LINE:COL: what", or "FILE: what" for a limit */
		return cli_error("template", "%s%s%s%s", name, model ? ": tokenizer.chat_template" : "",
				 err[0] >= '0' && err[0] <= '9' ? ":" : ": ", err);
	fwrite(out, 1, n, stdout);
	free(out);
	return 0;
}

int cmd_template(int argc, char **argv)
{
	enum { O_TEMPLATE = 256, O_MESSAGES, O_NO_GEN };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'},
		{"chat-template", required_argument, 0, O_TEMPLATE},
		{"messages", required_argument, 0, O_MESSAGES},
		{"no-generation-prompt", no_argument, 0, O_NO_GEN},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	const char *model = NULL, *file = NULL, *messages = NULL;
	bool gen = true;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c;
	while ((c = getopt_long(argc, argv, ":m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': model = optarg; break;
		case O_TEMPLATE: file = optarg; break;
		case O_MESSAGES: messages = optarg; break;
		case O_NO_GEN: gen = false; break;
		case 'h': fputs(help, stdout); return 0;
		case ':': return cli_usage_error("template", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("template", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("template", "unexpected argument '%s'", argv[optind]);
	if (!model == !file)
		return cli_usage_error("template", "give exactly one of -m MODEL or --chat-template FILE");
	if (!messages)
		return cli_usage_error("template", "--messages FILE is required");
	json_t *vars = load_vars(messages);
	if (!vars)
		return CLI_FAIL;
	if (!json_object_get(vars, "add_generation_prompt") || !gen)
		json_object_set_new(vars, "add_generation_prompt", json_boolean(gen));
	int rc = render(model, file, vars);
	json_decref(vars);
	return rc;
}
