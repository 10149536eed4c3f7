/* response_format: {"type": "text"} (nothing), {"type": "json_object"}
 * (a GBNF grammar of one JSON object) or {"type": "json_schema",
 * "json_schema": {"schema": ...}} (the schema through the grammar
 * plugin's json-schema kind, as `belt run --json-schema`). */
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

/* Any JSON object; whitespace is bounded so that the model cannot pad
 * forever. */
static const char json_object_gbnf[] =
	"root ::= object\n"
	"value ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
	"object ::= \"{\" ws ( string \":\" ws value ( \",\" ws string \":\" ws value )* )? \"}\" ws\n"
	"array ::= \"[\" ws ( value ( \",\" ws value )* )? \"]\" ws\n"
	"string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" "
	"[0-9a-fA-F]{4} ) )* \"\\\"\" ws\n"
	"number ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,15} ) ( \".\" [0-9]{1,16} )? "
	"( [eE] [-+]? [0-9]{1,3} )? ws\n"
	"ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static int compile(const struct serve_model *sm, const char *kind, const char *text, size_t len,
		   struct serve_params *p, struct serve_error *e)
{
	if (!sm->grammars)
		return serve_err(e, 500, "response_format",
				 "'response_format' needs the grammar plugin 'gbnf', which did not load");
	char err[BELT_ERR_SIZE];
	if (belt_grammar_new(sm->tok, "gbnf", kind, text, len, &p->grammar, err, sizeof err))
		return serve_err(e, 400, "response_format", "'response_format': %s", err);
	return 0;
}

int serve_format_grammar(const struct serve_model *sm, const json_t *rf, struct serve_params *p,
			 struct serve_error *e)
{
	const json_t *type = json_object_get(rf, "type");
	if (!json_is_object(rf) || !json_is_string(type))
		return serve_err(e, 400, "response_format",
				 "'response_format' must be an object with a string 'type'");
	const char *t = json_string_value(type);
	if (!strcmp(t, "text"))
		return 0;
	if (!strcmp(t, "json_object"))
		return compile(sm, "gbnf", json_object_gbnf, sizeof json_object_gbnf - 1, p, e);
	if (strcmp(t, "json_schema"))
		return serve_err(e, 400, "response_format",
				 "'response_format.type' is '%.64s': expected text, json_object or "
				 "json_schema", t);
	const json_t *js = json_object_get(rf, "json_schema");
	const json_t *schema = json_is_object(js) ? json_object_get(js, "schema") : NULL;
	if (!json_is_object(schema) && !json_is_boolean(schema))
		return serve_err(e, 400, "response_format",
				 "'response_format.json_schema.schema' must be a JSON Schema (an object)");
	char *text = json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!text)
		return serve_err(e, 500, NULL, "out of memory");
	int rc = compile(sm, "json-schema", text, strlen(text), p, e);
	free(text);
	return rc;
}
