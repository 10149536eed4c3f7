/* JSON Schema -> GBNF: the walk over the schema (schema.h). Each schema
 * becomes a GBNF expression of the values it allows, each followed by
 * the space rule, written inline; a $ref becomes a rule of its own, so
 * that recursive schemas are recursive rules. What is read first decides,
 * in llama.cpp's order, so that the language is the same: $ref, then
 * anyOf/oneOf, a list of types, const, enum, an object's properties,
 * allOf, an array's items, a string's pattern, format or lengths, an
 * integer's bounds, then the type alone. A keyword that would change
 * which values are valid and is not read is an error, not ignored. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* ---- errors and pointers ---- */

int sc_fail(struct sc *c, const char *key, const char *fmt, ...)
{
	if (!c->err || !c->errsz)
		return -1;
	size_t len = c->ptr.n;
	if (key)
		sc_push(c, key);
	int n = snprintf(c->err, c->errsz, "%s: ", c->ptr.n && c->ptr.s ? c->ptr.s : "(root)");
	sc_pop(c, len);
	if (n < 0 || (size_t)n >= c->errsz)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errsz - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

size_t sc_push(struct sc *c, const char *key)
{
	size_t len = c->ptr.n;
	sc_puts(&c->ptr, "/");
	for (const char *p = key; *p; p++)
		sc_puts(&c->ptr, *p == '~' ? "~0" : *p == '/' ? "~1" : (char[]){*p, 0});
	return len;
}

size_t sc_push_index(struct sc *c, size_t i)
{
	size_t len = c->ptr.n;
	sc_printf(&c->ptr, "/%zu", i);
	return len;
}

void sc_pop(struct sc *c, size_t len)
{
	c->ptr.n = len;
	if (c->ptr.s)
		c->ptr.s[len] = 0;
}

void sc_name(struct sc *c, const char *hint, struct sc_buf *name)
{
	for (const char *p = hint; *p; p++) {
		char ch = *p;
		bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
		if (word || (name->n && name->s[name->n - 1] != '-'))
			sc_putn(name, word ? &ch : "-", 1);
	}
	sc_printf(name, "%s%u", name->n && name->s[name->n - 1] == '-' ? "" : "-", ++c->n_names);
}

void sc_rule(struct sc *c, const char *name, const struct sc_buf *body)
{
	sc_printf(&c->rules, "%s ::= %s\n", name, body->s ? body->s : "\"\"");
}

/* ---- keywords ---- */

static const char *const annotations[] = {
	"$schema", "$id", "$comment", "$anchor", "$defs", "definitions", "title", "description",
	"default", "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType",
	"contentEncoding"};

static const char *const read_here[] = {
	"type", "properties", "required", "additionalProperties", "enum", "const", "items",
	"prefixItems", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref", "format",
	"pattern"};

bool sc_is_annotation(const char *key)
{
	for (size_t i = 0; i < sizeof annotations / sizeof *annotations; i++)
		if (!strcmp(key, annotations[i]))
			return true;
	return !strncmp(key, "x-", 2);
}

static bool is_read(const char *key)
{
	for (size_t i = 0; i < sizeof read_here / sizeof *read_here; i++)
		if (!strcmp(key, read_here[i]))
			return true;
	return false;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_NULL: return "null";
	default: return "a boolean";
	}
}

/* Keyword key of s, checked to be of JSON type want (JSON_OBJECT,
 * JSON_ARRAY, JSON_STRING, or -1: a non-negative integer); NULL when
 * absent, *bad set after an error. */
static json_t *get(struct sc *c, json_t *s, const char *key, int want, bool *bad)
{
	json_t *v = json_object_get(s, key);
	if (!v || *bad)
		return v;
	if (want == -1) {
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			return v;
		*bad = true;
		sc_fail(c, key, "expected a non-negative integer, got %s", json_kind(v));
	} else if ((int)json_typeof(v) != want) {
		*bad = true;
		static const char *const names[] = {"an object", "an array", "a string"};
		sc_fail(c, key, "expected %s, got %s", want <= JSON_STRING ? names[want] : "?",
			json_kind(v));
	}
	return v;
}

/* The first keyword of s other than the annotations and those of keep[]
 * that changes which values are valid; NULL if none. */
static const char *other_keyword(json_t *s, const char *const *keep, size_t n_keep)
{
	const char *key;
	json_t *v;
	json_object_foreach(s, key, v) {
		bool kept = sc_is_annotation(key);
		for (size_t i = 0; i < n_keep && !kept; i++)
			kept = !strcmp(key, keep[i]);
		if (!kept)
			return key;
	}
	return NULL;
}

/* ---- $ref ---- */

json_t *sc_resolve(struct sc *c, const char *ref)
{
	if (ref[0] != '#' || (ref[1] && ref[1] != '/')) {
		sc_fail(c, "$ref", "'%s': only references into this schema (#/...) are read", ref);
		return NULL;
	}
	json_t *at = c->doc;
	for (const char *p = ref + 1; *p == '/';) {
		const char *end = strchr(p + 1, '/');
		size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
		char key[256];
		size_t k = 0;
		for (const char *q = p + 1; q < p + 1 + n && k + 1 < sizeof key; q++, k++)
			key[k] = q[0] == '~' && q[1] == '1' ? (q++, '/') : q[0] == '~' && q[1] == '0' ? (q++, '~') : q[0];
		key[k] = 0;
		json_t *next = NULL;
		if (json_is_object(at)) {
			next = json_object_get(at, key);
		} else if (json_is_array(at)) {
			char *e;
			unsigned long i = strtoul(key, &e, 10);
			next = *key && !*e ? json_array_get(at, i) : NULL;
		}
		if (!next) {
			sc_fail(c, "$ref", "'%s': no '%s' in the schema", ref, key);
			return NULL;
		}
		at = next;
		p += 1 + n;
	}
	return at;
}

/* The rule of $ref: made the first time, named before its body is
 * read, so that a reference inside it to itself is the rule again. */
static int ref_rule(struct sc *c, const char *ref, struct sc_buf *out)
{
	for (size_t i = 0; i < c->n_refs; i++)
		if (!strcmp(c->refs[i].ref, ref)) {
			sc_puts(out, c->refs[i].rule);
			return 0;
		}
	json_t *target = sc_resolve(c, ref);
	if (!target)
		return -1;
	if (c->n_refs == c->cap_refs) {
		size_t cap = c->cap_refs ? 2 * c->cap_refs : 8;
		struct sc_ref *r = realloc(c->refs, cap * sizeof *r);
		if (!r)
			return sc_fail(c, "$ref", "out of memory");
		c->refs = r;
		c->cap_refs = cap;
	}
	struct sc_buf name = {0}, body = {0};
	sc_puts(&name, "ref-");
	sc_name(c, ref + 1, &name);
	char *ref_copy = sc_strdup(ref);
	if (!ref_copy || name.oom) {
		free(ref_copy);
		sc_buf_free(&name);
		return sc_fail(c, "$ref", "out of memory");
	}
	c->refs[c->n_refs++] = (struct sc_ref){.ref = ref_copy, .rule = name.s};
	/* errors inside name the place the reference leads to */
	struct sc_buf here = c->ptr;
	c->ptr = (struct sc_buf){0};
	sc_puts(&c->ptr, ref + 1);
	int rc = sc_visit(c, target, &body);
	sc_buf_free(&c->ptr);
	c->ptr = here;
	if (rc) {
		sc_buf_free(&body);
		return -1;
	}
	sc_rule(c, name.s, &body);
	sc_buf_free(&body);
	sc_puts(out, name.s);
	return 0;
}

/* ---- unions ---- */

static int any_of(struct sc *c, json_t *s, const char *key, struct sc_buf *out)
{
	json_t *alts = json_object_get(s, key);
	if (!json_is_array(alts) || !json_array_size(alts))
		return sc_fail(c, key, "expected an array of schemas, at least one");
	size_t saved = sc_push(c, key);
	sc_puts(out, "(");
	size_t i;
	json_t *a;
	json_array_foreach(alts, i, a) {
		sc_puts(out, i ? " | " : "");
		size_t at = sc_push_index(c, i);
		int rc = sc_visit(c, a, out);
		sc_pop(c, at);
		if (rc) {
			sc_pop(c, saved);
			return -1;
		}
	}
	sc_puts(out, ")");
	sc_pop(c, saved);
	return 0;
}

/* ---- one type ---- */

static const char *const types[] = {"object", "array", "string", "number", "integer", "boolean",
				    "null"};

static bool known_type(const char *t)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (!strcmp(t, types[i]))
			return true;
	return false;
}

/* A count keyword (minItems ...): *v, SC_MAX_COUNT at most. */
static int count(struct sc *c, json_t *s, const char *key, long *v, bool *bad)
{
	json_t *j = get(c, s, key, -1, bad);
	if (*bad)
		return -1;
	if (j && json_integer_value(j) > SC_MAX_COUNT)
		return *bad = true, sc_fail(c, key, "%lld is above %d, the most a repetition may count",
					    (long long)json_integer_value(j), SC_MAX_COUNT);
	if (j)
		*v = (long)json_integer_value(j);
	return 0;
}

/* x repeated min..max times (max -1: no bound), separated by sep (NULL:
 * nothing), x a rule name or group. */
static void repeat(struct sc_buf *out, const char *x, long min, long max, const char *sep)
{
	if (max == 0) {
		sc_puts(out, "\"\"");
		return;
	}
	if (!sep) {
		if (max < 0)
			sc_printf(out, "%s{%ld,}", x, min);
		else
			sc_printf(out, "%s{%ld,%ld}", x, min, max);
		return;
	}
	sc_printf(out, "%s%s", min ? "" : "(", x);
	long rmin = min ? min - 1 : 0;
	if (max < 0)
		sc_printf(out, " (%s %s){%ld,}", sep, x, rmin);
	else if (max > 1)
		sc_printf(out, " (%s %s){%ld,%ld}", sep, x, rmin, max - 1);
	sc_puts(out, min ? "" : ")?");
}

static int array(struct sc *c, json_t *s, struct sc_buf *out)
{
	bool bad = false;
	long min = 0, max = -1;
	json_t *prefix = get(c, s, "prefixItems", JSON_ARRAY, &bad);
	json_t *items = json_object_get(s, "items");
	if (bad || count(c, s, "minItems", &min, &bad) || count(c, s, "maxItems", &max, &bad))
		return -1;
	if (max >= 0 && max < min)
		return sc_fail(c, "maxItems", "maxItems %ld is below minItems %ld: no array is valid", max,
			       min);
	const char *sp = sc_prim(c, SC_SPACE);
	json_t *tuple = prefix ? prefix : json_is_array(items) ? items : NULL;
	if (tuple) { /* exactly these items, as llama.cpp */
		const char *key = prefix ? "prefixItems" : "items";
		if (prefix && items && !json_is_false(items))
			return sc_fail(c, "items", "items beside prefixItems: only a fixed tuple is read");
		size_t n = json_array_size(tuple);
		if ((long)n < min || (max >= 0 && (long)n > max))
			return sc_fail(c, key, "%zu items, outside minItems..maxItems", n);
		size_t saved = sc_push(c, key);
		sc_printf(out, "(\"[\" %s", sp);
		for (size_t i = 0; i < n; i++) {
			if (i)
				sc_printf(out, " \",\" %s", sp);
			sc_puts(out, " ");
			size_t at = sc_push_index(c, i);
			int rc = sc_visit(c, json_array_get(tuple, i), out);
			sc_pop(c, at);
			if (rc) {
				sc_pop(c, saved);
				return -1;
			}
		}
		sc_pop(c, saved);
		sc_printf(out, " \"]\" %s)", sp);
		return 0;
	}
	struct sc_buf item = {0}, name = {0};
	if (json_is_false(items))
		max = 0;
	if (max == 0 && min > 0)
		return sc_fail(c, "items", "false with minItems %ld: no array is valid", min);
	if (items && !json_is_false(items)) {
		if (sc_visit_at(c, items, "items", &item))
			return sc_buf_free(&item), -1;
	} else {
		sc_puts(&item, sc_prim(c, SC_VALUE));
	}
	/* the item is named twice: a rule, so that nesting stays linear */
	sc_name(c, "item", &name);
	sc_rule(c, name.s, &item);
	char sep[64];
	snprintf(sep, sizeof sep, "\",\" %s", sp);
	sc_printf(out, "(\"[\" %s ", sp);
	repeat(out, name.s, min, max, sep);
	sc_printf(out, " \"]\" %s)", sp);
	sc_buf_free(&item);
	sc_buf_free(&name);
	return 0;
}

static int string(struct sc *c, json_t *s, struct sc_buf *out)
{
	bool bad = false;
	json_t *pattern = get(c, s, "pattern", JSON_STRING, &bad);
	json_t *format = get(c, s, "format", JSON_STRING, &bad);
	long min = 0, max = -1;
	if (bad || count(c, s, "minLength", &min, &bad) || count(c, s, "maxLength", &max, &bad))
		return -1;
	const char *lengths = json_object_get(s, "minLength") ? "minLength"
			      : json_object_get(s, "maxLength") ? "maxLength" : NULL;
	if (pattern) {
		if (format || lengths)
			return sc_fail(c, format ? "format" : lengths,
				       "beside pattern: not supported (put it in the pattern)");
		return sc_pattern(c, json_string_value(pattern), out);
	}
	if (format && sc_format(c, json_string_value(format), out)) {
		if (lengths)
			return sc_fail(c, lengths, "beside format '%s': not supported",
				       json_string_value(format));
		return 0;
	}
	if (!lengths) {
		sc_puts(out, sc_prim(c, SC_STRING));
		return 0;
	}
	if (max >= 0 && max < min)
		return sc_fail(c, "maxLength", "maxLength %ld is below minLength %ld: no string is valid",
			       max, min);
	sc_puts(out, "(\"\\\"\" ");
	repeat(out, sc_prim(c, SC_CHAR), min, max, NULL);
	sc_printf(out, " \"\\\"\" %s)", sc_prim(c, SC_SPACE));
	return 0;
}

/* A bound of an integer: minimum (lower) or maximum, the exclusive ones
 * (a number, or draft 4's true) folded in; *has false when none. */
static int bound(struct sc *c, json_t *s, bool lower, bool *has, int64_t *v)
{
	const char *inc = lower ? "minimum" : "maximum";
	const char *exc = lower ? "exclusiveMinimum" : "exclusiveMaximum";
	json_t *a = json_object_get(s, inc), *b = json_object_get(s, exc);
	*has = false;
	const char *keys[2] = {inc, exc};
	json_t *vals[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		json_t *j = vals[k];
		if (!j || (k == 1 && json_is_boolean(j)))
			continue;
		if (!json_is_number(j))
			return sc_fail(c, keys[k], "expected a number, got %s", json_kind(j));
		double d = json_number_value(j);
		bool exclusive = k == 1 || json_is_true(b);
		int64_t x;
		if (json_is_integer(j)) {
			x = json_integer_value(j);
			if (exclusive && (lower ? x == INT64_MAX : x == INT64_MIN))
				return sc_fail(c, keys[k], "no integer is beyond it");
			x += exclusive ? (lower ? 1 : -1) : 0;
		} else {
			if (d != d || d < -9.2e18 || d > 9.2e18)
				return sc_fail(c, keys[k], "out of the range of 64-bit integers");
			x = (int64_t)d; /* toward zero; then to the first integer inside */
			if (lower ? ((double)x < d || (exclusive && (double)x == d)) : 0)
				x++;
			if (!lower && ((double)x > d || (exclusive && (double)x == d)))
				x--;
		}
		if (!*has || (lower ? x > *v : x < *v))
			*v = x;
		*has = true;
	}
	if (b && json_is_boolean(b) && !a)
		return sc_fail(c, exc, "true without %s", inc);
	return 0;
}

static int integer(struct sc *c, json_t *s, struct sc_buf *out)
{
	bool has_lo, has_hi;
	int64_t lo = 0, hi = 0;
	if (bound(c, s, true, &has_lo, &lo) || bound(c, s, false, &has_hi, &hi))
		return -1;
	if (!has_lo && !has_hi) {
		sc_puts(out, sc_prim(c, SC_INTEGER));
		return 0;
	}
	sc_puts(out, "(");
	if (sc_int_range(out, has_lo, lo, has_hi, hi))
		return sc_fail(c, has_hi ? "maximum" : "minimum",
			       "no integer is within the bounds (integers here have at most 16 digits)");
	sc_printf(out, " %s)", sc_prim(c, SC_SPACE));
	return 0;
}

/* Keywords of a type that are not read for it: an error where llama.cpp
 * would drop them. */
static int unread(struct sc *c, json_t *s, const char *type)
{
	static const char *const number_kw[] = {"minimum", "maximum", "exclusiveMinimum",
						"exclusiveMaximum"};
	if (!strcmp(type, "number"))
		for (size_t i = 0; i < 4; i++)
			if (json_object_get(s, number_kw[i]))
				return sc_fail(c, number_kw[i],
					       "bounds of a number are not supported (of an integer they are)");
	return 0;
}

/* s with type (NULL: none), the list of types taken apart already. */
static int typed(struct sc *c, json_t *s, const char *type, struct sc_buf *out)
{
	const char *sp = sc_prim(c, SC_SPACE);
	bool untyped = !type, bad = false;
	json_t *v = json_object_get(s, "const");
	if (v) {
		struct sc_buf text = {0};
		sc_json_dump(&text, v);
		sc_puts(out, "(");
		sc_lit(out, text.s, text.n);
		sc_printf(out, " %s)", sp);
		sc_buf_free(&text);
		return 0;
	}
	if ((v = get(c, s, "enum", JSON_ARRAY, &bad)) || bad) {
		if (bad)
			return -1;
		if (!json_array_size(v))
			return sc_fail(c, "enum", "empty: no value is valid");
		sc_puts(out, "((");
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			struct sc_buf text = {0};
			sc_json_dump(&text, x);
			sc_puts(out, i ? " | " : "");
			sc_lit(out, text.s, text.n);
			sc_buf_free(&text);
		}
		sc_printf(out, ") %s)", sp);
		return 0;
	}
	json_t *extra = json_object_get(s, "additionalProperties");
	if ((untyped || !strcmp(type, "object")) &&
	    (json_object_get(s, "properties") || (extra && !json_is_true(extra)))) {
		if (json_object_get(s, "allOf"))
			return sc_fail(c, "allOf", "beside properties: not supported");
		return sc_object(c, s, out);
	}
	if ((untyped || !strcmp(type, "object") || !strcmp(type, "string")) &&
	    json_object_get(s, "allOf"))
		return sc_all_of(c, s, out);
	if ((untyped && (json_object_get(s, "items") || json_object_get(s, "prefixItems"))) ||
	    (type && !strcmp(type, "array")))
		return array(c, s, out);
	if ((untyped || !strcmp(type, "string")) &&
	    (json_object_get(s, "pattern") || json_object_get(s, "format") ||
	     (type && (json_object_get(s, "minLength") || json_object_get(s, "maxLength")))))
		return string(c, s, out);
	if (type && !strcmp(type, "integer"))
		return integer(c, s, out);
	if (type && unread(c, s, type))
		return -1;
	if (!json_object_size(s) || (type && !strcmp(type, "object"))) {
		sc_puts(out, sc_prim(c, SC_OBJECT)); /* {} is an object, as in llama.cpp */
		return 0;
	}
	if (untyped) {
		static const char *const need[] = {"minLength", "maxLength", "minimum", "maximum",
						   "exclusiveMinimum", "exclusiveMaximum",
						   "minItems", "maxItems", "required"};
		for (size_t i = 0; i < sizeof need / sizeof *need; i++)
			if (json_object_get(s, need[i]))
				return sc_fail(c, need[i], "needs a \"type\" to apply to");
		sc_puts(out, sc_prim(c, SC_VALUE));
		return 0;
	}
	static const enum sc_prim prim[] = {SC_OBJECT, SC_ARRAY, SC_STRING, SC_NUMBER, SC_INTEGER,
					    SC_BOOLEAN, SC_NULL};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (!strcmp(type, types[i]))
			sc_puts(out, sc_prim(c, prim[i]));
	return 0;
}

int sc_visit(struct sc *c, json_t *s, struct sc_buf *out)
{
	if (json_is_true(s)) {
		sc_puts(out, sc_prim(c, SC_VALUE));
		return 0;
	}
	if (json_is_false(s))
		return sc_fail(c, NULL, "false: no value is valid here");
	if (!json_is_object(s))
		return sc_fail(c, NULL, "expected a schema (an object, or true), got %s", json_kind(s));
	if (++c->depth > SC_MAX_DEPTH)
		return sc_fail(c, NULL, "schemas nested more than %d deep", SC_MAX_DEPTH);
	int rc = -1;
	const char *key;
	json_t *v;
	json_object_foreach(s, key, v) {
		if (!sc_is_annotation(key) && !is_read(key)) {
			sc_fail(c, key, "unsupported keyword '%s'", key);
			goto out;
		}
	}
	if ((v = json_object_get(s, "$ref"))) {
		static const char *const keep[] = {"$ref"};
		if (!json_is_string(v))
			sc_fail(c, "$ref", "expected a string, got %s", json_kind(v));
		else if ((key = other_keyword(s, keep, 1)))
			sc_fail(c, key, "beside $ref: not supported (put it in the schema referred to)");
		else
			rc = ref_rule(c, json_string_value(v), out);
		goto out;
	}
	const char *which = json_object_get(s, "oneOf") ? "oneOf" : json_object_get(s, "anyOf") ? "anyOf" : NULL;
	if (which) {
		const char *keep[] = {which};
		if ((key = other_keyword(s, keep, 1)))
			sc_fail(c, key, "beside %s: not supported (put it in each alternative)", which);
		else
			rc = any_of(c, s, which, out); /* oneOf as anyOf, as llama.cpp */
		goto out;
	}
	json_t *type = json_object_get(s, "type");
	if (type && !json_is_string(type) && !json_is_array(type)) {
		sc_fail(c, "type", "expected a type name or a list of them, got %s", json_kind(type));
		goto out;
	}
	if (json_is_string(type)) {
		if (!known_type(json_string_value(type)))
			sc_fail(c, "type", "unknown type '%s' (expected object, array, string, number, "
				"integer, boolean or null)", json_string_value(type));
		else
			rc = typed(c, s, json_string_value(type), out);
		goto out;
	}
	if (!type) {
		rc = typed(c, s, NULL, out);
		goto out;
	}
	if (!json_array_size(type)) {
		sc_fail(c, "type", "an empty list: no value is valid");
		goto out;
	}
	size_t saved = sc_push(c, "type"), i;
	json_array_foreach(type, i, v) {
		if (!json_is_string(v) || !known_type(json_string_value(v))) {
			sc_push_index(c, i);
			sc_fail(c, NULL, "expected a type name, got %s", json_kind(v));
			sc_pop(c, saved);
			goto out;
		}
	}
	sc_pop(c, saved);
	sc_puts(out, "(");
	json_array_foreach(type, i, v) {
		sc_puts(out, i ? " | " : "");
		if (typed(c, s, json_string_value(v), out))
			goto out;
	}
	sc_puts(out, ")");
	rc = 0;
out:
	c->depth--;
	return rc;
}

int sc_visit_at(struct sc *c, json_t *s, const char *key, struct sc_buf *out)
{
	size_t saved = sc_push(c, key);
	int rc = sc_visit(c, s, out);
	sc_pop(c, saved);
	return rc;
}

int sc_convert(const char *text, size_t len, char **gbnf, char *err, size_t errsz)
{
	*gbnf = NULL;
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!doc) {
		/* jansson quotes the text it stopped at, line breaks and all */
		struct sc_buf msg = {0};
		sc_printf(&msg, "%d:%d: ", je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1);
		for (const char *p = je.text; *p; p++)
			if ((unsigned char)*p < 0x20)
				sc_printf(&msg, "\\x%02x", (unsigned char)*p);
			else
				sc_putn(&msg, p, 1);
		snprintf(err, errsz, "%s", msg.s ? msg.s : "out of memory");
		sc_buf_free(&msg);
		return -1;
	}
	struct sc c = {.doc = doc, .err = err, .errsz = errsz};
	struct sc_buf root = {0};
	int rc = sc_visit(&c, doc, &root);
	if (!rc) {
		struct sc_buf all = {0};
		sc_puts(&all, "root ::= ");
		sc_puts(&all, root.s ? root.s : "\"\"");
		sc_puts(&all, "\n");
		sc_puts(&all, c.rules.s ? c.rules.s : "");
		if (all.oom || c.rules.oom || root.oom || c.ptr.oom) {
			snprintf(err, errsz, "out of memory");
			sc_buf_free(&all);
			rc = -1;
		} else {
			*gbnf = all.s;
		}
	}
	sc_buf_free(&root);
	sc_buf_free(&c.rules);
	sc_buf_free(&c.ptr);
	for (size_t i = 0; i < c.n_refs; i++) {
		free(c.refs[i].ref);
		free(c.refs[i].rule);
	}
	free(c.refs);
	json_decref(doc);
	return rc;
}
