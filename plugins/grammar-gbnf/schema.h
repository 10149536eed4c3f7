/* plugins/grammar-gbnf: JSON Schema -> GBNF text (doc/grammars.md), the
 * language llama.cpp's json-schema-to-grammar gives the same schema, so
 * that greedy constrained output is the same; the GBNF is then compiled
 * as any other. The pieces:
 *
 *   schema.c         the walk: parse, keywords, types, enum, const,
 *                    anyOf/oneOf, $ref (a rule each), strings, arrays
 *   schema_object.c  objects: properties in order, optional ones, other
 *                    keys; allOf merged into one object
 *   schema_int.c     integer bounds as ranges of digits
 *   schema_regex.c   pattern: a regular-expression subset
 *   schema_formats.c the primitive rules (space, string, number, ...)
 *                    and the formats
 *   schema_text.c    growing text, GBNF literals and classes, JSON text
 *
 * Names are sc_* and stay inside the module. */
#ifndef GBNF_SCHEMA_H
#define GBNF_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting of schemas (and of groups in a pattern) that is refused:
 * the GBNF parser nests groups at most 200 deep. */
#define SC_MAX_DEPTH 64
/* The largest count a repetition may have (GB_MAX_COUNT). */
#define SC_MAX_COUNT 100000

/* ---- text (schema_text.c) ---- */

/* Growing text; oom set once memory ran out (the text is then cut). */
struct sc_buf {
	char *s;
	size_t n, cap;
	bool oom;
};

void sc_putn(struct sc_buf *b, const char *s, size_t n);
void sc_puts(struct sc_buf *b, const char *s);
void sc_printf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sc_buf_free(struct sc_buf *b);
/* A malloc'd copy of s; NULL when out of memory. */
char *sc_strdup(const char *s);
/* A GBNF literal "..." of the bytes s[0..n) (UTF-8). */
void sc_lit(struct sc_buf *b, const char *s, size_t n);
/* Code point cp inside a GBNF class. */
void sc_class_cp(struct sc_buf *b, uint32_t cp);
/* s[0..n) as JSON text, quotes included, escaped as llama.cpp writes it
 * (nlohmann::json's dump: \" \\ \b \f \n \r \t, \u00xx for the other
 * controls, the rest as it is). */
void sc_json_string(struct sc_buf *b, const char *s, size_t n);
/* v as compact JSON text (no spaces: [1,2], {"a":1}). */
void sc_json_dump(struct sc_buf *b, const json_t *v);
/* The code point at s[*i] (valid UTF-8), *i moved past it. */
uint32_t sc_utf8_next(const char *s, size_t n, size_t *i);

/* ---- the converter (schema.c) ---- */

/* Primitive rules (schema_formats.c), each added once with the rules it
 * uses. */
enum sc_prim {
	SC_SPACE, SC_CHAR, SC_STRING, SC_INTEGRAL, SC_DECIMAL, SC_NUMBER, SC_INTEGER,
	SC_BOOLEAN, SC_NULL, SC_VALUE, SC_OBJECT, SC_ARRAY, SC_UUID, SC_DATE, SC_TIME,
	SC_DATE_TIME, SC_N_PRIMS
};

struct sc_ref {
	char *ref;  /* the $ref as written */
	char *rule; /* its rule's name */
};

struct sc {
	json_t *doc;		/* the whole schema */
	struct sc_buf rules;	/* rules made, one per line */
	bool have[SC_N_PRIMS];	/* primitive rules made */
	struct sc_ref *refs;
	size_t n_refs, cap_refs;
	unsigned n_names;	/* rules named so far, for unique names */
	struct sc_buf ptr;	/* the JSON pointer of the schema being read */
	unsigned depth;
	char *err;
	size_t errsz;
};

/* "POINTER/key: message" into c->err (key NULL: the schema itself; the
 * pointer of the root is written "(root)"); returns -1. */
int sc_fail(struct sc *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Add /key (escaped as a JSON pointer) or /i to c->ptr; the old length,
 * for sc_pop. */
size_t sc_push(struct sc *c, const char *key);
size_t sc_push_index(struct sc *c, size_t i);
void sc_pop(struct sc *c, size_t len);
/* A new rule name made of hint; the caller writes "NAME ::= ..." with
 * sc_rule. */
void sc_name(struct sc *c, const char *hint, struct sc_buf *name);
void sc_rule(struct sc *c, const char *name, const struct sc_buf *body);

/* Append the GBNF of schema s (the value with the space after it) to
 * out; 0, or -1 with the message. */
int sc_visit(struct sc *c, json_t *s, struct sc_buf *out);
/* The same under c->ptr + /key. */
int sc_visit_at(struct sc *c, json_t *s, const char *key, struct sc_buf *out);
/* The schema a "#/..." $ref names, or NULL with the message (at key
 * "$ref" of the schema being read). */
json_t *sc_resolve(struct sc *c, const char *ref);
/* Whether keyword key is an annotation, which changes no value's
 * validity (title, description, $defs, x-..., ...). */
bool sc_is_annotation(const char *key);

/* Objects (schema_object.c): s has properties or additionalProperties. */
int sc_object(struct sc *c, json_t *s, struct sc_buf *out);
/* allOf of objects, merged. */
int sc_all_of(struct sc *c, json_t *s, struct sc_buf *out);

/* Integers in [lo, hi] (has_lo, has_hi: whether bounded) as a GBNF
 * group (schema_int.c), without the space after; -1 when there are none
 * (a side with no bound stops at 16 digits). */
int sc_int_range(struct sc_buf *out, bool has_lo, int64_t lo, bool has_hi, int64_t hi);

/* pattern (schema_regex.c): the string "\"" ... "\"" space of the
 * strings whose value matches it; -1 with the message (at key "pattern"). */
int sc_pattern(struct sc *c, const char *pattern, struct sc_buf *out);

/* The name of primitive rule p, made (with the rules it uses) the first
 * time (schema_formats.c). */
const char *sc_prim(struct sc *c, enum sc_prim p);
/* Append the GBNF of a string of format f ("date", "uuid", ...) and
 * return 1; 0 for a format that is only an annotation (any string). */
int sc_format(struct sc *c, const char *f, struct sc_buf *out);

/* schema text[0..len) -> GBNF text (NUL-terminated, malloc'd) in *gbnf;
 * -1 with "POINTER: what" or, for JSON that does not parse,
 * "LINE:COL: what". */
int sc_convert(const char *text, size_t len, char **gbnf, char *err, size_t errsz);

#endif
