/* JSON Schema constraints (plugins/grammar-gbnf/schema*.c, kind
 * "json-schema" of the grammar "gbnf"; doc/grammars.md), through the
 * registry as belt loads it, fed byte by byte on a vocabulary of the 256
 * byte tokens: for each construct, texts that are whole sentences and
 * texts that are not, where the language is llama.cpp's (the space
 * after values, number syntax, the order of properties, string escapes)
 * and where belt keeps to the schema; every integer of a window against
 * bounds; every shared schema compiles; refused schemas name the JSON
 * pointer of what is wrong in one line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "belt/error.h"
#include "belt/plugin.h"
#include "belt/tokenizer.h"
#include "ref.h"

#define BYTE0 3 /* <0x00> .. <0xFF> are ids 3 .. 258 */
#define ID_EOS 2
#define N_TINY 259

static struct belt_tokenizer *tiny;
static const struct belt_grammar_ops *ops;

static void setup(void)
{
	static char names[256][8];
	const char *tokens[N_TINY] = {"<unk>", "<s>", "</s>"};
	int32_t types[N_TINY] = {2, 3, 3};
	for (int b = 0; b < 256; b++) {
		snprintf(names[b], sizeof names[b], "<0x%02X>", b);
		tokens[BYTE0 + b] = names[b];
		types[BYTE0 + b] = 6;
	}
	tiny = ref_vocab(tokens, types, N_TINY, ID_EOS, -1);
	char err[BELT_ERR_SIZE];
	ops = belt_grammar_get("gbnf", err, sizeof err);
	ck_assert_msg(ops, "%s", err);
}

static void teardown(void)
{
	belt_tok_free(tiny);
	tiny = NULL;
}

static void *compile_ok(const char *schema)
{
	char err[BELT_ERR_SIZE] = "";
	void *st = NULL;
	int rc = ops->compile(schema, strlen(schema), "json-schema", tiny, &st, err, sizeof err);
	ck_assert_msg(rc == 0 && st, "schema %s refused: %s", schema, err);
	return st;
}

/* Whether text[0..n) is a whole sentence of st's grammar (from its
 * start): every byte taken, and complete at the end. */
static bool sentence(void *st, const char *text, size_t n)
{
	static uint32_t mask[(N_TINY + 31) / 32];
	char err[BELT_ERR_SIZE];
	ops->reset(st);
	for (size_t i = 0; i < n; i++) {
		int32_t id = BYTE0 + (unsigned char)text[i];
		ops->allowed(st, mask, N_TINY);
		bool allowed = mask[id / 32] >> (id % 32) & 1;
		int rc = ops->accept(st, id, err, sizeof err);
		ck_assert_msg(allowed == (rc == 0), "allowed() and accept() disagree at byte %zu of %.*s",
			      i, (int)n, text);
		if (rc)
			return false;
	}
	ops->allowed(st, mask, N_TINY);
	bool complete = ops->is_complete(st);
	ck_assert(complete == (bool)(mask[ID_EOS / 32] >> (ID_EOS % 32) & 1));
	return complete;
}

/* Each text of the NULL-terminated list is (want true) or is not a
 * sentence of schema. */
static void texts(const char *schema, bool want, const char *const *list)
{
	void *st = compile_ok(schema);
	for (const char *const *t = list; *t; t++)
		ck_assert_msg(sentence(st, *t, strlen(*t)) == want, "schema %s: '%s' should %sbe valid",
			      schema, *t, want ? "" : "not ");
	ops->free(st);
}

#define YES(schema, ...) texts(schema, true, (const char *const[]){__VA_ARGS__, NULL})
#define NO(schema, ...) texts(schema, false, (const char *const[]){__VA_ARGS__, NULL})

/* ---- llama.cpp's primitives ---- */

START_TEST(space_after_values)
{
	/* nothing, a space, or one or two line breaks and up to 20 spaces or
	 * tabs: after a value, a key, a colon, a comma, an opening bracket */
	const char *b = "{\"type\": \"boolean\"}";
	YES(b, "true", "true ", "true\n", "true\n\n", "true\n\t \t", "true\n\n                    ");
	NO(b, " true", "true  ", "true\n\n\n", "true\n                     ", "true\t", "true\r\n");
	const char *o = "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}, "
			"\"required\": [\"a\"]}";
	YES(o, "{\"a\":1}", "{ \"a\" : 1 } ", "{\n  \"a\"\n\n :\n1\n}\n\n\t");
	NO(o, "{\"a\": \n1}");
	NO(o, "{  \"a\":1}", "{\"a\":1}  ", "{\"a\":\t1}");
	YES("{\"type\": \"array\", \"items\": {\"type\": \"integer\"}}", "[]", "[ ]", "[1, 2 ,\n3]",
	    "[\n  1,\n  2\n]");
}
END_TEST

START_TEST(numbers)
{
	const char *n = "{\"type\": \"number\"}";
	YES(n, "0", "-0", "12.5", "-1.25e-3", "1E+7", "6e0", "1.0123456789012345",
	    "1234567890123456");
	NO(n, "01", "1.", ".5", "+1", "1e05", "1e", "12345678901234567", "1.01234567890123456",
	   "NaN", "-");
	const char *i = "{\"type\": \"integer\"}";
	YES(i, "0", "-0", "42", "-1234567890123456");
	NO(i, "1.0", "1e3", "007", "12345678901234567");
	YES("{\"type\": \"null\"}", "null", "null ");
	NO("{\"type\": \"boolean\"}", "True", "nul");
}
END_TEST

START_TEST(strings)
{
	const char *s = "{\"type\": \"string\"}";
	YES(s, "\"\"", "\"a b\"", "\"\\\" \\\\ \\b \\f \\n \\r \\t\"", "\"\\u00e9\\uABCD\"",
	    "\"\xc3\xa9\xe6\x97\xa5\"", "\"'\"");
	/* as llama.cpp: no raw DEL, no \/ */
	NO(s, "\"\x7f\"", "\"\\/\"", "\"\n\"", "\"\\x41\"", "\"\\u12\"", "\"a", "\"\"\"");
	const char *len = "{\"type\": \"string\", \"minLength\": 2, \"maxLength\": 3}";
	YES(len, "\"ab\"", "\"abc\"", "\"\\n\\u0041\"");
	NO(len, "\"a\"", "\"abcd\"", "\"\\n\"");
	YES("{\"type\": \"string\", \"maxLength\": 0}", "\"\"");
	NO("{\"type\": \"string\", \"maxLength\": 0}", "\"a\"");
}
END_TEST

/* ---- objects ---- */

START_TEST(objects)
{
	/* required ones first in the properties' order, then optional ones in
	 * order, each at most once; no other key by default */
	const char *o = "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \"b\": "
			"{\"type\": \"integer\"}, \"c\": {\"type\": \"integer\"}}, \"required\": [\"b\"]}";
	YES(o, "{\"b\":1}", "{\"b\":1,\"a\":2}", "{\"b\":1,\"c\":3}", "{\"b\":1,\"a\":2,\"c\":3}");
	NO(o, "{}", "{\"a\":2,\"b\":1}", "{\"b\":1,\"c\":3,\"a\":2}", "{\"b\":1,\"d\":1}",
	   "{\"b\":1,\"a\":2,\"a\":2}", "{\"b\":1,}");
	const char *opt = "{\"properties\": {\"x\": {\"type\": \"null\"}, \"y\": {\"type\": \"null\"}}}";
	YES(opt, "{}", "{\"x\":null}", "{\"y\":null}", "{\"x\":null,\"y\":null}");
	NO(opt, "{\"y\":null,\"x\":null}", "{,}");
	/* additionalProperties: other keys after the properties, not theirs */
	const char *more = "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, "
			   "\"ab\": {\"type\": \"integer\"}}, \"additionalProperties\": true}";
	YES(more, "{}", "{\"a\":1}", "{\"x\":[1, {}]}", "{\"a\":1,\"x\":1,\"y\":\"z\"}",
	    "{\"abc\":1}", "{\"\":1}", "{\"b\":null}", "{\"\\n\":true}");
	NO(more, "{\"x\":1,\"a\":1}", "{\"a\":1,\"a\":2}", "{\"ab\":1,\"a\":1}", "{\"x\":1,\"ab\":1}");
	const char *typed = "{\"properties\": {\"a\": {\"type\": \"integer\"}}, \"required\": [\"a\"], "
			    "\"additionalProperties\": {\"type\": \"number\"}}";
	YES(typed, "{\"a\":1}", "{\"a\":1,\"b\":2.5,\"c\":3}");
	NO(typed, "{\"a\":1,\"b\":\"x\"}", "{\"b\":1}");
	const char *map = "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"boolean\"}}";
	YES(map, "{}", "{\"a\":true,\"a\":false}");
	NO(map, "{\"a\":1}");
	YES("{\"type\": \"object\", \"additionalProperties\": false}", "{}", "{ }");
	NO("{\"type\": \"object\", \"additionalProperties\": false}", "{\"a\":1}");
	/* {} and a bare object type: any object (as llama.cpp: {} too) */
	YES("{}", "{}", "{\"a\":[1,{\"b\":null}]}");
	NO("{}", "1", "[]");
	YES("{\"description\": \"any value\"}", "1", "[]", "\"s\"", "null", "{}");
	/* keys written as JSON writes them */
	const char *esc = "{\"properties\": {\"a\\\"b\": {\"const\": \"\\u00fc\"}}, \"required\": [\"a\\\"b\"]}";
	YES(esc, "{\"a\\\"b\":\"\xc3\xbc\"}");
	NO(esc, "{\"a\\u0022b\":\"\xc3\xbc\"}");
}
END_TEST

START_TEST(all_of)
{
	const char *s = "{\"allOf\": [{\"properties\": {\"a\": {\"type\": \"integer\"}}}, {\"$ref\": "
			"\"#/$defs/b\"}, {\"anyOf\": [{\"properties\": {\"c\": {\"type\": \"null\"}}}]}], "
			"\"$defs\": {\"b\": {\"type\": \"object\", \"properties\": {\"b\": {\"type\": "
			"\"string\"}}}}}";
	YES(s, "{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"x\",\"c\":null}");
	NO(s, "{\"a\":1}", "{\"b\":\"x\",\"a\":1}");
	const char *e = "{\"allOf\": [{\"enum\": [1, 2, 3]}, {\"enum\": [3, 2, 5]}]}";
	YES(e, "2", "3");
	NO(e, "1", "5");
}
END_TEST

/* ---- arrays, unions, references ---- */

START_TEST(arrays)
{
	const char *b = "{\"type\": \"array\", \"items\": {\"type\": \"boolean\"}, \"minItems\": 2, "
			"\"maxItems\": 3}";
	YES(b, "[true,false]", "[true,false,true]");
	NO(b, "[]", "[true]", "[true,true,true,true]", "[true,]");
	const char *t = "{\"type\": \"array\", \"prefixItems\": [{\"type\": \"integer\"}, {\"type\": "
			"\"string\"}]}";
	YES(t, "[1,\"a\"]");
	NO(t, "[1]", "[1,\"a\",2]", "[\"a\",1]");
	YES("{\"type\": \"array\", \"items\": false}", "[]");
	NO("{\"type\": \"array\", \"items\": false}", "[1]");
	const char *any = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 1}";
	YES(any, "[1]", "[{\"a\":[]}]");
	NO(any, "[]", "[1,2]");
}
END_TEST

START_TEST(unions_and_refs)
{
	const char *u = "{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"string\", \"pattern\": "
			"\"^[A-Z]{2}[0-9]{3}$\"}, {\"type\": \"null\"}]}";
	YES(u, "12", "\"AB123\"", "null");
	NO(u, "\"AB12\"", "true", "\"ab123\"");
	const char *types = "{\"type\": [\"string\", \"null\"], \"maxLength\": 2}";
	YES(types, "\"ab\"", "null");
	NO(types, "\"abc\"", "1");
	const char *list = "{\"$defs\": {\"node\": {\"type\": \"object\", \"properties\": {\"v\": "
			   "{\"type\": \"integer\"}, \"next\": {\"anyOf\": [{\"$ref\": \"#/$defs/node\"}, "
			   "{\"type\": \"null\"}]}}, \"required\": [\"v\", \"next\"]}}, \"$ref\": "
			   "\"#/$defs/node\"}";
	YES(list, "{\"v\":1,\"next\":null}", "{\"v\":1,\"next\":{\"v\":2,\"next\":{\"v\":3,\"next\":null}}}");
	NO(list, "{\"v\":1,\"next\":{\"v\":2}}");
	const char *defs = "{\"definitions\": {\"d\": {\"type\": \"string\", \"format\": \"date\"}}, "
			   "\"type\": \"array\", \"items\": {\"$ref\": \"#/definitions/d\"}}";
	YES(defs, "[\"2024-02-29\",\"1999-12-31\"]");
	NO(defs, "[\"2024-2-29\"]");
	YES("{\"enum\": [\"yes\", 1, null, [1, 2], {\"a\": true}]}", "\"yes\"", "1", "null", "[1,2]",
	    "{\"a\":true}");
	NO("{\"enum\": [\"yes\", 1, null, [1, 2], {\"a\": true}]}", "\"ye\"", "[1, 2]", "2");
	YES("{\"const\": 2.5}", "2.5");
	YES("{\"const\": 1.0}", "1.0");
	NO("{\"const\": 1.0}", "1");
}
END_TEST

START_TEST(formats)
{
	const char *d = "{\"type\": \"string\", \"format\": \"date\"}";
	YES(d, "\"2024-02-29\"", "\"0000-12-31\"");
	NO(d, "\"2024-13-01\"", "\"2024-00-10\"", "\"2024-01-32\"", "\"24-01-01\"");
	const char *t = "{\"type\": \"string\", \"format\": \"time\"}";
	YES(t, "\"23:59:59Z\"", "\"00:00:00.123+05:30\"");
	NO(t, "\"24:00:00Z\"", "\"12:00:00\"", "\"12:60:00Z\"");
	const char *dt = "{\"type\": \"string\", \"format\": \"date-time\"}";
	YES(dt, "\"2024-01-02T03:04:05-01:00\"");
	NO(dt, "\"2024-01-02 03:04:05Z\"");
	const char *u = "{\"type\": \"string\", \"format\": \"uuid\"}";
	YES(u, "\"a1000000-0123-1234-1234-123456788888\"", "\"ABCDEF00-0000-0000-0000-000000000000\"");
	NO(u, "\"a1000000-0123-1234-1234-12345678888\"", "\"g1000000-0123-1234-1234-123456788888\"");
	/* an annotation only, as in llama.cpp */
	YES("{\"type\": \"string\", \"format\": \"email\"}", "\".+\"", "\"a@b.c\"");
}
END_TEST

START_TEST(patterns)
{
	const char *p = "{\"type\": \"string\", \"pattern\": \"^a\\\\d{2,3}(foo|bar)*[^x-z]?$\"}";
	YES(p, "\"a12\"", "\"a123foobar\"", "\"a12b\"", "\"a12foo\\\"\"");
	NO(p, "\"a1\"", "\"a12345\"", "\"a12x\"", "\"a12fo\"");
	/* unanchored: anywhere in the string */
	YES("{\"type\": \"string\", \"pattern\": \"ab+c\"}", "\"abc\"", "\"xxabbbcyy\"");
	NO("{\"type\": \"string\", \"pattern\": \"ab+c\"}", "\"ac\"");
	/* the quote, backslash and controls as JSON escapes */
	const char *q = "{\"type\": \"string\", \"pattern\": \"^a\\\"\\\\\\\\\\\\t$\"}";
	YES(q, "\"a\\\"\\\\\\t\"");
	NO(q, "\"a\"\\\\\\t\"", "\"a\\\"\\\\\t\"");
	const char *dot = "{\"type\": \"string\", \"pattern\": \"^.$\"}";
	YES(dot, "\"a\"", "\"\\\"\"", "\"\\u001f\"", "\"\\u001F\"", "\"\xe6\x97\xa5\"", "\"\\t\"");
	NO(dot, "\"\\n\"", "\"\\r\"", "\"ab\"", "\"\"");
	const char *cls = "{\"type\": \"string\", \"pattern\": \"^[\\\\w.-]+@[a-z]+\\\\.(com|org)$\"}";
	YES(cls, "\"j.doe-1_x@example.com\"", "\"a@b.org\"");
	NO(cls, "\"a@b.net\"", "\"@b.com\"", "\"a b@c.com\"");
	const char *neg = "{\"type\": \"string\", \"pattern\": \"^\\\\D\\\\S\\\\W(?:\\\\x41|\\\\u00e9)?$\"}";
	YES(neg, "\"ab!\"", "\"ab!A\"", "\"ab!\xc3\xa9\"");
	NO(neg, "\"1b!\"", "\"a !\"", "\"abc\"");
}
END_TEST

/* ---- integers between bounds ---- */

/* Every integer of -1100..1100 (and "-0") against schema: valid exactly
 * when in lo..hi (has_lo, has_hi), "-0" exactly when neg_zero. */
static void window(const char *schema, bool has_lo, long lo, bool has_hi, long hi, bool neg_zero)
{
	void *st = compile_ok(schema);
	for (long v = -1100; v <= 1100; v++) {
		char t[32];
		int n = snprintf(t, sizeof t, "%ld", v);
		bool in = (!has_lo || v >= lo) && (!has_hi || v <= hi);
		ck_assert_msg(sentence(st, t, (size_t)n) == in, "schema %s: %ld should %sbe valid",
			      schema, v, in ? "" : "not ");
	}
	ck_assert_msg(sentence(st, "-0", 2) == neg_zero, "schema %s: -0", schema);
	ck_assert_msg(!sentence(st, "01", 2) && !sentence(st, "-01", 3), "schema %s: leading zero",
		      schema);
	ops->free(st);
}

START_TEST(integer_bounds)
{
	window("{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 150}", true, 0, true, 150, false);
	window("{\"type\": \"integer\", \"minimum\": -5, \"maximum\": 5}", true, -5, true, 5, true);
	window("{\"type\": \"integer\", \"minimum\": -1050, \"maximum\": -37}", true, -1050, true, -37,
	       false);
	window("{\"type\": \"integer\", \"minimum\": 105}", true, 105, false, 0, false);
	window("{\"type\": \"integer\", \"minimum\": 7}", true, 7, false, 0, false);
	window("{\"type\": \"integer\", \"minimum\": -105}", true, -105, false, 0, true);
	window("{\"type\": \"integer\", \"maximum\": 250}", false, 0, true, 250, false);
	window("{\"type\": \"integer\", \"maximum\": -37}", false, 0, true, -37, false);
	window("{\"type\": \"integer\", \"exclusiveMinimum\": 9, \"exclusiveMaximum\": 1000}", true, 10,
	       true, 999, false);
	window("{\"type\": \"integer\", \"minimum\": 2.5, \"maximum\": 7.5}", true, 3, true, 7, false);
	window("{\"type\": \"integer\", \"minimum\": 10, \"exclusiveMinimum\": 10, \"maximum\": 10009}",
	       true, 11, true, 10009, false);
	window("{\"type\": \"integer\", \"minimum\": 1, \"exclusiveMinimum\": true}", true, 2, false, 0,
	       false);
	/* a side with no bound stops at 16 digits, as llama.cpp's */
	const char *big = "{\"type\": \"integer\", \"minimum\": 0}";
	YES(big, "9999999999999999");
	NO(big, "10000000000000000");
	YES("{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 9223372036854775807}",
	    "9223372036854775807");
	NO("{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 9223372036854775807}",
	   "9223372036854775808");
}
END_TEST

/* ---- shared schemas, errors ---- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "%s", path);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

START_TEST(shared_schemas)
{
	static const char *const names[] = {"anyof-dates", "enum-choice", "function-call",
					    "list-of-strings", "nested-refs", "person"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char rel[128];
		snprintf(rel, sizeof rel, "grammars/schemas/%s.json", names[i]);
		ops->free(compile_ok(slurp(shared_path(rel))));
	}
	void *st = compile_ok(slurp(shared_path("grammars/schemas/person.json")));
	const char *p = "{\"name\": \"Ann\", \"age\": 150, \"tags\": [\"a\", \"b\", \"c\"]}";
	ck_assert(sentence(st, p, strlen(p)));
	p = "{\"name\": \"\", \"age\": 15}";
	ck_assert(!sentence(st, p, strlen(p)));
	p = "{\"name\": \"A\", \"age\": 15, \"tags\": [\"a\", \"b\", \"c\", \"d\"]}";
	ck_assert(!sentence(st, p, strlen(p)));
	ops->free(st);
}
END_TEST

/* schema is refused with one line that starts with want. */
static void refused(const char *schema, const char *want)
{
	char err[BELT_ERR_SIZE] = "";
	void *st = (void *)1;
	int rc = ops->compile(schema, strlen(schema), "json-schema", tiny, &st, err, sizeof err);
	ck_assert_msg(rc == -1 && !st, "schema %s was compiled", schema);
	ck_assert_msg(!strchr(err, '\n'), "a message of more than one line: %s", err);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "schema %s: expected '%s...', got '%s'",
		      schema, want, err);
}

START_TEST(errors)
{
	refused("{\"type\": \"object\",", "1:18: ");
	refused("{\"a\": 1, \"a\": 2}", "1:12: duplicate object key");
	refused("[1, 2]", "(root): expected a schema (an object, or true), got an array");
	refused("false", "(root): false: no value is valid here");
	refused("{\"type\": \"strin\"}", "/type: unknown type 'strin'");
	refused("{\"type\": [\"string\", 3]}", "/type/1: expected a type name, got an integer");
	refused("{\"type\": \"integer\", \"multipleOf\": 2}", "/multipleOf: unsupported keyword");
	refused("{\"properties\": {\"a~/b\": {\"not\": {}}}}", "/properties/a~0~1b/not: unsupported keyword");
	refused("{\"properties\": {\"age\": {\"type\": \"integer\", \"minimum\": \"0\"}}}",
		"/properties/age/minimum: expected a number, got a string");
	refused("{\"type\": \"number\", \"minimum\": 0}", "/minimum: bounds of a number are not supported");
	refused("{\"type\": \"integer\", \"minimum\": 5, \"maximum\": 4}", "/maximum: no integer is within");
	refused("{\"type\": \"integer\", \"minimum\": 1e17}", "/minimum: no integer is within");
	refused("{\"minLength\": 3}", "/minLength: needs a \"type\"");
	refused("{\"type\": \"string\", \"minLength\": 3, \"maxLength\": 2}", "/maxLength: maxLength 2 is below");
	refused("{\"type\": \"string\", \"maxLength\": 100001}", "/maxLength: 100001 is above 100000");
	refused("{\"type\": \"string\", \"minLength\": -1}", "/minLength: expected a non-negative integer");
	refused("{\"type\": \"string\", \"pattern\": \"^a\", \"maxLength\": 3}",
		"/maxLength: beside pattern: not supported");
	refused("{\"type\": \"array\", \"minItems\": 3, \"maxItems\": 1}", "/maxItems: maxItems 1 is below");
	refused("{\"type\": \"array\", \"prefixItems\": [{}], \"minItems\": 2}", "/prefixItems: 1 items");
	refused("{\"properties\": {\"a\": {}}, \"required\": [\"b\"]}", "/required/0: 'b' is not in properties");
	refused("{\"properties\": {\"a\": {\"$ref\": \"#/$defs/x\"}}}", "/properties/a/$ref: '#/$defs/x': no '$defs'");
	refused("{\"$ref\": \"https://example.com/s.json\"}", "/$ref: 'https://example.com/s.json': only");
	refused("{\"$ref\": \"#/$defs/a\", \"type\": \"object\", \"$defs\": {\"a\": {}}}",
		"/type: beside $ref: not supported");
	refused("{\"$defs\": {\"a\": {\"type\": \"intger\"}}, \"items\": {\"$ref\": \"#/$defs/a\"}}",
		"/$defs/a/type: unknown type 'intger'");
	refused("{\"anyOf\": [{}, 3]}", "/anyOf/1: expected a schema");
	refused("{\"anyOf\": []}", "/anyOf: expected an array of schemas, at least one");
	refused("{\"anyOf\": [{}], \"minimum\": 3}", "/minimum: beside anyOf: not supported");
	refused("{\"enum\": []}", "/enum: empty: no value is valid");
	refused("{\"allOf\": [{\"enum\": [1]}, {\"enum\": [2]}]}", "/allOf: no value is in every enum");
	refused("{\"allOf\": [{\"properties\": {\"a\": {}}}, {\"properties\": {\"a\": {}}}]}",
		"/allOf/1/properties: 'a' is given twice");
	refused("{\"allOf\": [{\"type\": \"integer\", \"minimum\": 0}]}", "/allOf/0/type: in a part of allOf");
	/* a schema that is its own first element: left recursion */
	refused("{\"$ref\": \"#\"}", "(root): the grammar made of the schema cannot run: ");
	static const char *const patterns[][2] = {
		{"([a-z]", "/pattern: character 1: expected ')' to close the group"},
		{"a)", "/pattern: character 2: ')' closes no group"},
		{"[a-", "/pattern: character 1: expected ']'"},
		{"[z-a]", "/pattern: character 3: a backwards range"},
		{"a**", "/pattern: character 3: a repetition of a repetition"},
		{"*a", "/pattern: character 1: '*' has nothing to repeat"},
		{"a{3,1}", "/pattern: character 2: {m,n} with n below m"},
		{"a{1,200000}", "/pattern: character 2: a count above 100000"},
		{"a{x}", "/pattern: character 2: expected {m}, {m,} or {m,n}"},
		{"a^b", "/pattern: character 2: '^': anchors are read only"},
		{"\\\\bword", "/pattern: character 1: unsupported escape '\\b'"},
		{"(?=a)", "/pattern: character 1: only (?: ) of the (? groups"},
		{"\\\\x4", "/pattern: character 4: expected 2 hex digits"},
		{"[^\\\\x00-\\\\U0010FFFF]", "/pattern: character 8: unsupported escape"},
	};
	for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
		char s[256];
		snprintf(s, sizeof s, "{\"type\": \"string\", \"pattern\": \"%s\"}", patterns[i][0]);
		refused(s, patterns[i][1]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("grammar_schema");
	TCase *tc = tcase_create("language");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, space_after_values);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, strings);
	tcase_add_test(tc, objects);
	tcase_add_test(tc, all_of);
	tcase_add_test(tc, arrays);
	tcase_add_test(tc, unions_and_refs);
	tcase_add_test(tc, formats);
	tcase_add_test(tc, patterns);
	tcase_add_test(tc, integer_bounds);
	tcase_add_test(tc, shared_schemas);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
