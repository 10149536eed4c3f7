/* JSON in and out: the render variables from jansson, and tojson as
 * Python's json.dumps (", " and ": " without indent; "," and ": " with
 * it; floats as repr; ensure_ascii escapes everything past ASCII). */
#include <string.h>

#include <jansson.h>

#include "template/tpl.h"

#define MAX_DEPTH 500

struct tval tpl_from_json(struct tpl_ctx *c, const json_t *j, int depth)
{
	if (depth > MAX_DEPTH)
		tpl_fail(c, 0, 0, "the variables are nested deeper than %d levels", MAX_DEPTH);
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		struct tval d = tv_dict(c, json_object_size(j));
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)j, k, v)
			tv_dict_set(c, d.u.d, tv_cstr(c, k), tpl_from_json(c, v, depth + 1));
		return d;
	}
	case JSON_ARRAY: {
		struct tval l = tv_list(c, json_array_size(j));
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v)
			tv_list_push(c, l.u.l, tpl_from_json(c, v, depth + 1));
		return l;
	}
	case JSON_STRING: return tv_str(c, json_string_value(j), json_string_length(j));
	case JSON_INTEGER: return tv_int((int64_t)json_integer_value(j));
	case JSON_REAL: return tv_float(json_real_value(j));
	case JSON_TRUE: return tv_bool(true);
	case JSON_FALSE: return tv_bool(false);
	default: return tv_none;
	}
}

static void put_u(struct tpl_ctx *c, struct tpl_buf *b, unsigned u)
{
	tpl_buf_printf(c, b, "\\u%04x", u);
}

static void dump_string(struct tpl_ctx *c, struct tpl_buf *b, const struct tstr *s, bool ascii)
{
	tpl_buf_put(c, b, "\"", 1);
	const unsigned char *p = (const unsigned char *)s->s;
	for (size_t i = 0; i < s->len; i++) {
		unsigned ch = p[i];
		const char *e = NULL;
		switch (ch) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		}
		if (e) {
			tpl_buf_puts(c, b, e);
		} else if (ch < 0x20 || (ascii && ch == 0x7f)) {
			put_u(c, b, ch);
		} else if (ascii && ch >= 0x80) {
			/* decode one character; a stray byte is written as itself */
			unsigned cp = ch, need = ch >= 0xf0 ? 3 : ch >= 0xe0 ? 2 : ch >= 0xc0 ? 1 : 0;
			cp &= need == 3 ? 0x07 : need == 2 ? 0x0f : 0x1f;
			size_t k = 0;
			for (; k < need && i + 1 + k < s->len && (p[i + 1 + k] & 0xc0) == 0x80; k++)
				cp = cp << 6 | (p[i + 1 + k] & 0x3f);
			if (!need || k < need) {
				put_u(c, b, ch);
				continue;
			}
			i += need;
			if (cp >= 0x10000) {
				cp -= 0x10000;
				put_u(c, b, 0xd800 | cp >> 10);
				put_u(c, b, 0xdc00 | (cp & 0x3ff));
			} else {
				put_u(c, b, cp);
			}
		} else {
			tpl_buf_put(c, b, (const char *)&p[i], 1);
		}
	}
	tpl_buf_put(c, b, "\"", 1);
}

static void newline(struct tpl_ctx *c, struct tpl_buf *b, int indent, int level)
{
	tpl_buf_put(c, b, "\n", 1);
	for (int i = 0; i < indent * level; i++)
		tpl_buf_put(c, b, " ", 1);
}

static void dump(struct tpl_ctx *c, int line, int col, struct tpl_buf *b, struct tval v,
		 bool ascii, int indent, int level)
{
	if (level > MAX_DEPTH)
		tpl_fail(c, line, col, "tojson: a value nested deeper than %d levels", MAX_DEPTH);
	char num[64];
	switch (v.kind) {
	case TV_NONE: tpl_buf_puts(c, b, "null"); return;
	case TV_BOOL: tpl_buf_puts(c, b, v.u.b ? "true" : "false"); return;
	case TV_INT: tpl_buf_printf(c, b, "%lld", (long long)v.u.i); return;
	case TV_FLOAT:
		tv_float_repr(v.u.f, num, sizeof num);
		tpl_buf_puts(c, b, !strcmp(num, "inf") ? "Infinity" : !strcmp(num, "-inf") ? "-Infinity"
							: !strcmp(num, "nan")	  ? "NaN"
										  : num);
		return;
	case TV_STR: dump_string(c, b, v.u.s, ascii); return;
	case TV_LIST:
		if (v.u.l->gen)
			break;
		tpl_buf_put(c, b, "[", 1);
		for (size_t i = 0; i < v.u.l->n; i++) {
			if (i)
				tpl_buf_puts(c, b, indent >= 0 ? "," : ", ");
			if (indent >= 0)
				newline(c, b, indent, level + 1);
			dump(c, line, col, b, v.u.l->v[i], ascii, indent, level + 1);
		}
		if (indent >= 0 && v.u.l->n)
			newline(c, b, indent, level);
		tpl_buf_put(c, b, "]", 1);
		return;
	case TV_DICT:
		tpl_buf_put(c, b, "{", 1);
		for (size_t i = 0; i < v.u.d->n; i++) {
			if (i)
				tpl_buf_puts(c, b, indent >= 0 ? "," : ", ");
			if (indent >= 0)
				newline(c, b, indent, level + 1);
			struct tval k = v.u.d->k[i];
			if (k.kind == TV_STR) {
				dump_string(c, b, k.u.s, ascii);
			} else if (k.kind == TV_INT || k.kind == TV_FLOAT || k.kind == TV_BOOL ||
				   k.kind == TV_NONE) {
				struct tpl_buf kb = {0};
				dump(c, line, col, &kb, k, ascii, -1, level + 1);
				tpl_buf_put(c, b, "\"", 1);
				tpl_buf_put(c, b, kb.p, kb.n);
				tpl_buf_put(c, b, "\"", 1);
			} else {
				tpl_fail(c, line, col, "keys must be str, int, float, bool or None, not %s",
					 tv_type_name(k));
			}
			tpl_buf_puts(c, b, ": ");
			dump(c, line, col, b, v.u.d->v[i], ascii, indent, level + 1);
		}
		if (indent >= 0 && v.u.d->n)
			newline(c, b, indent, level);
		tpl_buf_put(c, b, "}", 1);
		return;
	default: break;
	}
	tpl_fail(c, line, col, "Object of type %s is not JSON serializable", tv_type_name(v));
}

void tpl_to_json(struct tpl_ctx *c, int line, int col, struct tpl_buf *b, struct tval v,
		 bool ascii, int indent, int depth)
{
	dump(c, line, col, b, v, ascii, indent, depth);
}
