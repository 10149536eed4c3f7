/* The primitive rules of the schema converter and the string formats.
 * What each rule reads is llama.cpp's (json-schema-to-grammar, d8a24cc),
 * since greedy output must be the same: the space after every value is
 * nothing, one space, or one or two line breaks and up to 20 spaces or
 * tabs; numbers have at most 16 digits before and after the point and
 * no leading zeros; a string's characters are any but the quote, the
 * backslash and the controls (DEL too), or an escape \" \\ \b \f \n \r
 * \t \uXXXX. */
#include <string.h>

#include "schema.h"

struct prim {
	const char *name, *body;
	enum sc_prim uses[3];
	int n_uses;
};

static const struct prim prims[SC_N_PRIMS] = {
	[SC_SPACE] = {"space", "\"\" | \" \" | \"\\n\"{1,2} [ \\t]{0,20}", {0}, 0},
	[SC_CHAR] = {"char", "[^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})",
		     {0}, 0},
	[SC_STRING] = {"string", "\"\\\"\" char* \"\\\"\" space", {SC_CHAR, SC_SPACE}, 2},
	[SC_INTEGRAL] = {"integral-part", "\"0\" | [1-9] [0-9]{0,15}", {0}, 0},
	[SC_DECIMAL] = {"decimal-part", "[0-9]{1,16}", {0}, 0},
	[SC_NUMBER] = {"number",
		       "\"-\"? integral-part (\".\" decimal-part)? ([eE] [-+]? integral-part)? space",
		       {SC_INTEGRAL, SC_DECIMAL, SC_SPACE}, 3},
	[SC_INTEGER] = {"integer", "\"-\"? integral-part space", {SC_INTEGRAL, SC_SPACE}, 2},
	[SC_BOOLEAN] = {"boolean", "(\"true\" | \"false\") space", {SC_SPACE}, 1},
	[SC_NULL] = {"null", "\"null\" space", {SC_SPACE}, 1},
	/* value, object and array use one another: made together */
	[SC_VALUE] = {"value", "object | array | string | number | boolean | null",
		      {SC_OBJECT, SC_ARRAY, SC_NUMBER}, 3},
	[SC_OBJECT] = {"object",
		       "\"{\" space (string \":\" space value (\",\" space string \":\" space value)*)? "
		       "\"}\" space",
		       {SC_VALUE, SC_STRING, SC_BOOLEAN}, 3},
	[SC_ARRAY] = {"array", "\"[\" space (value (\",\" space value)*)? \"]\" space",
		      {SC_VALUE, SC_NULL}, 2},
	[SC_UUID] = {"uuid",
		     "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" "
		     "[0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\" space",
		     {SC_SPACE}, 1},
	[SC_DATE] = {"date",
		     "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1])",
		     {0}, 0},
	[SC_TIME] = {"time",
		     "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{3})? "
		     "(\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])",
		     {0}, 0},
	[SC_DATE_TIME] = {"date-time", "date \"T\" time", {SC_DATE, SC_TIME}, 2},
};

const char *sc_prim(struct sc *c, enum sc_prim p)
{
	if (!c->have[p]) {
		c->have[p] = true;
		sc_printf(&c->rules, "%s ::= %s\n", prims[p].name, prims[p].body);
		for (int i = 0; i < prims[p].n_uses; i++)
			sc_prim(c, prims[p].uses[i]);
	}
	return prims[p].name;
}

int sc_format(struct sc *c, const char *f, struct sc_buf *out)
{
	/* uuid1 .. uuid5 too, as llama.cpp */
	if (!strcmp(f, "uuid") || (!strncmp(f, "uuid", 4) && f[4] >= '1' && f[4] <= '5' && !f[5])) {
		sc_puts(out, sc_prim(c, SC_UUID));
		return 1;
	}
	enum sc_prim p = !strcmp(f, "date") ? SC_DATE : !strcmp(f, "time") ? SC_TIME
		: !strcmp(f, "date-time") ? SC_DATE_TIME : SC_N_PRIMS;
	if (p == SC_N_PRIMS)
		return 0; /* an annotation only, as in llama.cpp: email, uri, ... */
	sc_printf(out, "(\"\\\"\" %s \"\\\"\" %s)", sc_prim(c, p), sc_prim(c, SC_SPACE));
	return 1;
}
