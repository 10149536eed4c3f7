/* Objects: the properties in the schema's order, the required ones
 * first in that order, then any of the optional ones, still in order,
 * then other keys (additionalProperties true or a schema) after them, as
 * llama.cpp writes them:
 *
 *   "{" space req1 "," space req2 ( "," space ( opt1 rest1 | opt2 rest2 | ... ) )? "}" space
 *
 * where restK is ( "," space opt(K+1) )? rest(K+1). With no
 * additionalProperties, or false, no other key is allowed (llama.cpp's
 * default). allOf: the properties of every part, all required (those of
 * an anyOf inside it optional), or the values common to enums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

struct prop {
	const char *name;
	json_t *schema;
	bool required;
	char *ptr; /* the JSON pointer of its schema */
};

struct props {
	struct prop *v;
	size_t n, cap;
};

static void props_free(struct props *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].ptr);
	free(p->v);
}

/* The properties of s (c->ptr: s's place) into p; dup: refuse a name
 * already there. */
static int add_props(struct sc *c, json_t *s, bool required, struct props *p)
{
	json_t *all = json_object_get(s, "properties");
	if (!all)
		return 0;
	if (!json_is_object(all))
		return sc_fail(c, "properties", "expected an object of schemas");
	const char *key;
	json_t *v;
	json_object_foreach(all, key, v) {
		for (size_t i = 0; i < p->n; i++)
			if (!strcmp(p->v[i].name, key))
				return sc_fail(c, "properties", "'%s' is given twice", key);
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 8;
			struct prop *q = realloc(p->v, cap * sizeof *q);
			if (!q)
				return sc_fail(c, NULL, "out of memory");
			p->v = q;
			p->cap = cap;
		}
		size_t saved = sc_push(c, "properties");
		sc_push(c, key);
		char *ptr = c->ptr.s ? sc_strdup(c->ptr.s) : NULL;
		sc_pop(c, saved);
		if (!ptr)
			return sc_fail(c, NULL, "out of memory");
		p->v[p->n++] = (struct prop){.name = key, .schema = v, .required = required, .ptr = ptr};
	}
	return 0;
}

/* The JSON text of a string's characters s[0..n) (no quotes), as a GBNF
 * literal. */
static void key_chars(struct sc_buf *out, const char *s, size_t n)
{
	struct sc_buf t = {0};
	sc_json_string(&t, s, n);
	sc_lit(out, t.s + 1, t.n - 2);
	sc_buf_free(&t);
}

static int by_bytes(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The rest of a key after the d bytes its names[0..n) (sorted, alike
 * to d) begin with, such that it is none of them: one of their next
 * characters and on, or another character (written as itself or as a
 * short escape that is not one of them) and any, or the end where no
 * name ends. */
static void not_names(struct sc *c, const char **names, size_t n, size_t d, struct sc_buf *out)
{
	const char *ch = sc_prim(c, SC_CHAR);
	struct sc_buf excl = {0};
	bool ends = false, alt = false;
	static const char letters[] = "\"\\bfnrt", decoded[] = "\"\\\b\f\n\r\t";
	bool esc_ok[7] = {true, true, true, true, true, true, true};
	sc_puts(out, "(");
	for (size_t i = 0; i < n;) {
		size_t len = strlen(names[i]), k = d;
		if (len == d) {
			ends = true;
			i++;
			continue;
		}
		uint32_t cp = sc_utf8_next(names[i], len, &k);
		size_t j = i + 1;
		while (j < n && strlen(names[j]) >= k && !memcmp(names[j] + d, names[i] + d, k - d))
			j++;
		sc_puts(out, alt ? " | " : "");
		key_chars(out, names[i] + d, k - d);
		sc_puts(out, " ");
		not_names(c, names + i, j - i, k, out);
		alt = true;
		sc_class_cp(&excl, cp);
		for (int e = 0; e < 7; e++)
			if ((uint32_t)(unsigned char)decoded[e] == cp)
				esc_ok[e] = false;
		i = j;
	}
	sc_printf(out, "%s([^\"\\\\\\x7F\\x00-\\x1F%s]", alt ? " | " : "", excl.s ? excl.s : "");
	struct sc_buf esc = {0};
	for (int e = 0; e < 7; e++)
		if (esc_ok[e])
			sc_class_cp(&esc, (unsigned char)letters[e]);
	if (esc.n)
		sc_printf(out, " | \"\\\\\" [%s]", esc.s);
	sc_printf(out, ") %s*", ch);
	if (!ends)
		sc_puts(out, " | \"\"");
	sc_puts(out, ")");
	sc_buf_free(&excl);
	sc_buf_free(&esc);
}

/* The GBNF of the object of properties p, and of other keys with values
 * extra (NULL: none). */
static int object_rule(struct sc *c, struct props *p, const char *extra, struct sc_buf *out)
{
	const char *sp = sc_prim(c, SC_SPACE);
	size_t n_opt = 0, n_req = 0;
	/* kv[i]: "name" space ":" space value, inline for a required
	 * property (written once), else a rule (written twice) */
	struct sc_buf *kv = calloc(p->n + 1, sizeof *kv);
	if (!kv)
		return sc_fail(c, NULL, "out of memory");
	int rc = 0;
	struct sc_buf here = c->ptr;
	for (size_t i = 0; i < p->n && !rc; i++) {
		struct sc_buf body = {0}, name = {0};
		sc_json_string(&name, p->v[i].name, strlen(p->v[i].name));
		sc_puts(&body, "(");
		sc_lit(&body, name.s, name.n);
		sc_buf_free(&name);
		sc_printf(&body, " %s \":\" %s ", sp, sp);
		c->ptr = (struct sc_buf){0};
		sc_puts(&c->ptr, p->v[i].ptr);
		rc = sc_visit(c, p->v[i].schema, &body);
		sc_buf_free(&c->ptr);
		c->ptr = here;
		sc_puts(&body, ")");
		if (p->v[i].required) {
			kv[i] = body;
			n_req++;
			continue;
		}
		if (!rc) {
			sc_name(c, "kv", &kv[i]);
			sc_rule(c, kv[i].s, &body);
		}
		sc_buf_free(&body);
		n_opt++;
	}
	if (rc)
		goto out;
	/* the optional ones in order, other keys last */
	const char **opt = calloc(n_opt + 2, sizeof *opt);
	if (!opt) {
		rc = sc_fail(c, NULL, "out of memory");
		goto out;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].required)
			opt[k++] = kv[i].s;
	if (extra) {
		/* a key none of the properties' names, as llama.cpp */
		struct sc_buf body = {0};
		if (!p->n) {
			sc_puts(&body, sc_prim(c, SC_STRING));
		} else {
			const char **names = malloc(p->n * sizeof *names);
			if (!names) {
				free(opt);
				rc = sc_fail(c, NULL, "out of memory");
				goto out;
			}
			for (size_t i = 0; i < p->n; i++)
				names[i] = p->v[i].name;
			qsort(names, p->n, sizeof *names, by_bytes);
			sc_puts(&body, "(\"\\\"\" ");
			not_names(c, names, p->n, 0, &body);
			sc_printf(&body, " \"\\\"\" %s)", sp);
			free(names);
		}
		sc_printf(&body, " \":\" %s %s", sp, extra);
		sc_name(c, "additional-kv", &kv[p->n]);
		sc_rule(c, kv[p->n].s, &body);
		sc_buf_free(&body);
		opt[k++] = kv[p->n].s;
	}
	/* rest[i]: what may follow opt[i] */
	struct sc_buf *rest = calloc(k + 1, sizeof *rest);
	if (!rest) {
		free(opt);
		rc = sc_fail(c, NULL, "out of memory");
		goto out;
	}
	for (size_t i = k; i-- > 1;) {
		struct sc_buf body = {0};
		sc_printf(&body, "(\",\" %s %s)%s", sp, opt[i], extra && i == k - 1 ? "*" : "?");
		if (i + 1 < k)
			sc_printf(&body, " %s", rest[i + 1].s);
		sc_name(c, "rest", &rest[i]);
		sc_rule(c, rest[i].s, &body);
		sc_buf_free(&body);
	}
	sc_printf(out, "(\"{\" %s", sp);
	size_t r = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].required) {
			if (r++)
				sc_printf(out, " \",\" %s", sp);
			sc_printf(out, " %s", kv[i].s);
		}
	if (k) {
		sc_puts(out, " (");
		if (n_req)
			sc_printf(out, "\",\" %s (", sp);
		for (size_t i = 0; i < k; i++) {
			sc_printf(out, "%s%s", i ? " | " : "", opt[i]);
			if (extra && i == k - 1)
				sc_printf(out, " (\",\" %s %s)*", sp, opt[i]);
			if (i + 1 < k)
				sc_printf(out, " %s", rest[i + 1].s);
		}
		sc_puts(out, n_req ? "))?" : ")?");
	}
	sc_printf(out, " \"}\" %s)", sp);
	for (size_t i = 0; i <= k; i++)
		sc_buf_free(&rest[i]);
	free(rest);
	free(opt);
out:
	for (size_t i = 0; i <= p->n; i++)
		sc_buf_free(&kv[i]);
	free(kv);
	return rc;
}

int sc_object(struct sc *c, json_t *s, struct sc_buf *out)
{
	struct props p = {0};
	struct sc_buf extra = {0};
	int rc = add_props(c, s, false, &p);
	json_t *req = json_object_get(s, "required");
	if (!rc && req && !json_is_array(req))
		rc = sc_fail(c, "required", "expected an array of property names");
	size_t i;
	json_t *v;
	json_array_foreach(req, i, v) {
		if (rc)
			break;
		size_t k = 0;
		while (json_is_string(v) && k < p.n && strcmp(p.v[k].name, json_string_value(v)))
			k++;
		size_t saved = sc_push(c, "required");
		sc_push_index(c, i);
		if (!json_is_string(v))
			rc = sc_fail(c, NULL, "expected a property name, got something else");
		else if (k == p.n)
			rc = sc_fail(c, NULL, "'%s' is not in properties", json_string_value(v));
		else
			p.v[k].required = true;
		sc_pop(c, saved);
	}
	json_t *add = json_object_get(s, "additionalProperties");
	if (!rc && add && !json_is_boolean(add) && !json_is_object(add))
		rc = sc_fail(c, "additionalProperties", "expected a schema or a boolean");
	if (!rc && json_is_true(add))
		sc_puts(&extra, sc_prim(c, SC_VALUE));
	else if (!rc && json_is_object(add))
		rc = sc_visit_at(c, add, "additionalProperties", &extra);
	if (!rc)
		rc = object_rule(c, &p, extra.s, out);
	sc_buf_free(&extra);
	props_free(&p);
	return rc;
}

/* A part of allOf (c->ptr: its place): its properties, or its enum's
 * values (JSON text, into *vals). */
static int all_of_part(struct sc *c, json_t *s, bool required, struct props *p, json_t **vals,
		       unsigned depth)
{
	if (!json_is_object(s))
		return sc_fail(c, NULL, "expected a schema object in allOf");
	json_t *ref = json_object_get(s, "$ref");
	if (ref) {
		if (!json_is_string(ref))
			return sc_fail(c, "$ref", "expected a string");
		if (depth > SC_MAX_DEPTH)
			return sc_fail(c, "$ref", "references lead round in a circle");
		json_t *t = sc_resolve(c, json_string_value(ref));
		if (!t)
			return -1;
		struct sc_buf here = c->ptr;
		c->ptr = (struct sc_buf){0};
		sc_puts(&c->ptr, json_string_value(ref) + 1);
		int rc = all_of_part(c, t, required, p, vals, depth + 1);
		sc_buf_free(&c->ptr);
		c->ptr = here;
		return rc;
	}
	const char *key;
	json_t *v;
	json_object_foreach(s, key, v) {
		if (sc_is_annotation(key) || !strcmp(key, "properties") || !strcmp(key, "required") ||
		    !strcmp(key, "enum") || (!strcmp(key, "type") && json_is_string(v) &&
					     (!strcmp(json_string_value(v), "object") ||
					      !strcmp(json_string_value(v), "string"))))
			continue;
		return sc_fail(c, key, "in a part of allOf: not supported (only properties, required "
			       "and enum are merged)");
	}
	json_t *e = json_object_get(s, "enum");
	if (e) {
		if (!json_is_array(e))
			return sc_fail(c, "enum", "expected an array");
		if (!*vals) {
			*vals = json_deep_copy(e);
			return *vals ? 0 : sc_fail(c, NULL, "out of memory");
		}
		for (size_t i = json_array_size(*vals); i-- > 0;) {
			size_t k = 0;
			while (k < json_array_size(e) && !json_equal(json_array_get(e, k), json_array_get(*vals, i)))
				k++;
			if (k == json_array_size(e))
				json_array_remove(*vals, i);
		}
		return 0;
	}
	return add_props(c, s, required, p);
}

int sc_all_of(struct sc *c, json_t *s, struct sc_buf *out)
{
	static const char *const beside[] = {"allOf", "type"};
	const char *key;
	json_t *v;
	json_object_foreach(s, key, v) {
		if (!sc_is_annotation(key) && strcmp(key, beside[0]) && strcmp(key, beside[1]))
			return sc_fail(c, key, "beside allOf: not supported");
	}
	json_t *parts = json_object_get(s, "allOf");
	if (!json_is_array(parts) || !json_array_size(parts))
		return sc_fail(c, "allOf", "expected an array of schemas, at least one");
	struct props p = {0};
	json_t *vals = NULL;
	bool any_props = false;
	int rc = 0;
	size_t saved = sc_push(c, "allOf"), i;
	json_array_foreach(parts, i, v) {
		if (rc)
			break;
		size_t at = sc_push_index(c, i);
		json_t *alts = json_is_object(v) ? json_object_get(v, "anyOf") : NULL;
		if (alts) {
			size_t j;
			json_t *a;
			if (!json_is_array(alts))
				rc = sc_fail(c, "anyOf", "expected an array of schemas");
			size_t at2 = sc_push(c, "anyOf");
			json_array_foreach(alts, j, a) {
				if (rc)
					break;
				size_t at3 = sc_push_index(c, j);
				rc = all_of_part(c, a, false, &p, &vals, 0);
				sc_pop(c, at3);
			}
			sc_pop(c, at2);
		} else {
			rc = all_of_part(c, v, true, &p, &vals, 0);
		}
		any_props |= p.n > 0;
		sc_pop(c, at);
	}
	sc_pop(c, saved);
	if (!rc && vals && any_props)
		rc = sc_fail(c, "allOf", "enums and properties mixed: not supported");
	else if (!rc && vals && !json_array_size(vals))
		rc = sc_fail(c, "allOf", "no value is in every enum");
	else if (!rc && vals) {
		sc_puts(out, "((");
		json_array_foreach(vals, i, v) {
			struct sc_buf text = {0};
			sc_json_dump(&text, v);
			sc_puts(out, i ? " | " : "");
			sc_lit(out, text.s, text.n);
			sc_buf_free(&text);
		}
		sc_printf(out, ") %s)", sc_prim(c, SC_SPACE));
	} else if (!rc) {
		rc = object_rule(c, &p, NULL, out);
	}
	json_decref(vals);
	props_free(&p);
	return rc;
}
