/* Values with Python's semantics where templates depend on them:
 * truthiness, equality (1 == 1.0 == True), ordering, str() and repr(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/tpl.h"

const struct tval tv_undef_plain = {.kind = TV_UNDEF, .u.undef = "a value is undefined"};
const struct tval tv_none = {.kind = TV_NONE};

struct tval tv_bool(bool b)
{
	return (struct tval){.kind = TV_BOOL, .u.b = b};
}

struct tval tv_int(int64_t i)
{
	return (struct tval){.kind = TV_INT, .u.i = i};
}

struct tval tv_float(double f)
{
	return (struct tval){.kind = TV_FLOAT, .u.f = f};
}

struct tval tv_str(struct tpl_ctx *c, const char *s, size_t n)
{
	static const struct tstr empty = {.s = ""};
	if (!n)
		return (struct tval){.kind = TV_STR, .u.s = &empty};
	struct tstr *t = tpl_alloc(c, sizeof *t + n + 1);
	char *p = (char *)(t + 1);
	memcpy(p, s, n);
	t->len = n;
	t->s = p;
	return (struct tval){.kind = TV_STR, .u.s = t};
}

struct tstr_buf {
	size_t used, cap;
	char data[];
};

struct tval tv_concat(struct tpl_ctx *c, const struct tstr *a, const struct tstr *b)
{
	struct tstr *t = tpl_alloc(c, sizeof *t);
	struct tstr_buf *buf = a->buf;
	if (buf && a->s == buf->data && buf->used == a->len && buf->cap - a->len > b->len) {
		memcpy(buf->data + a->len, b->s, b->len); /* after every string that shares it */
	} else {
		size_t n = a->len + b->len, cap = n < 32 ? 64 : 2 * n;
		if (cap > c->cap)
			cap = n + 1;
		buf = tpl_alloc(c, sizeof *buf + cap);
		buf->cap = cap;
		memcpy(buf->data, a->s, a->len);
		memcpy(buf->data + a->len, b->s, b->len);
	}
	buf->used = a->len + b->len;
	buf->data[buf->used] = 0;
	t->len = buf->used;
	t->s = buf->data;
	t->buf = buf;
	return (struct tval){.kind = TV_STR, .u.s = t};
}

const char *tpl_cstr(struct tpl_ctx *c, const struct tstr *s)
{
	return s->s[s->len] ? tpl_strndup(c, s->s, s->len) : s->s;
}

struct tval tv_cstr(struct tpl_ctx *c, const char *s)
{
	return tv_str(c, s, strlen(s));
}

struct tval tv_undef(const char *msg)
{
	return (struct tval){.kind = TV_UNDEF, .u.undef = msg};
}

struct tval tv_undeff(struct tpl_ctx *c, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tv_undef(tpl_strndup(c, msg, strlen(msg)));
}

struct tval tv_list(struct tpl_ctx *c, size_t cap)
{
	struct tlist *l = tpl_alloc(c, sizeof *l);
	l->cap = cap;
	l->v = cap ? tpl_alloc(c, cap * sizeof *l->v) : NULL;
	return (struct tval){.kind = TV_LIST, .u.l = l};
}

struct tval tv_dict(struct tpl_ctx *c, size_t cap)
{
	struct tdict *d = tpl_alloc(c, sizeof *d);
	d->cap = cap;
	d->k = cap ? tpl_alloc(c, cap * sizeof *d->k) : NULL;
	d->v = cap ? tpl_alloc(c, cap * sizeof *d->v) : NULL;
	return (struct tval){.kind = TV_DICT, .u.d = d};
}

void tv_list_push(struct tpl_ctx *c, struct tlist *l, struct tval v)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct tval *g = tpl_alloc(c, cap * sizeof *g);
		if (l->n)
			memcpy(g, l->v, l->n * sizeof *g);
		l->v = g;
		l->cap = cap;
	}
	l->v[l->n++] = v;
}

struct tval *tv_dict_get(const struct tdict *d, struct tval k)
{
	for (size_t i = 0; i < d->n; i++)
		if (tv_equal(d->k[i], k))
			return &d->v[i];
	return NULL;
}

struct tval *tv_dict_gets(const struct tdict *d, const char *k)
{
	size_t n = strlen(k);
	for (size_t i = 0; i < d->n; i++)
		if (d->k[i].kind == TV_STR && d->k[i].u.s->len == n && !memcmp(d->k[i].u.s->s, k, n))
			return &d->v[i];
	return NULL;
}

void tv_dict_set(struct tpl_ctx *c, struct tdict *d, struct tval k, struct tval v)
{
	struct tval *old = tv_dict_get(d, k);
	if (old) {
		*old = v;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4;
		struct tval *gk = tpl_alloc(c, cap * sizeof *gk), *gv = tpl_alloc(c, cap * sizeof *gv);
		if (d->n) {
			memcpy(gk, d->k, d->n * sizeof *gk);
			memcpy(gv, d->v, d->n * sizeof *gv);
		}
		d->k = gk;
		d->v = gv;
		d->cap = cap;
	}
	d->k[d->n] = k;
	d->v[d->n++] = v;
}

bool tv_truthy(struct tval v)
{
	switch (v.kind) {
	case TV_UNDEF:
	case TV_NONE: return false;
	case TV_BOOL: return v.u.b;
	case TV_INT: return v.u.i != 0;
	case TV_FLOAT: return v.u.f != 0;
	case TV_STR: return v.u.s->len > 0;
	case TV_LIST: return v.u.l->gen || v.u.l->n > 0;
	case TV_DICT: return v.u.d->n > 0;
	default: return true;
	}
}

bool tv_is_num(struct tval v)
{
	return v.kind == TV_BOOL || v.kind == TV_INT || v.kind == TV_FLOAT;
}

double tv_num(struct tval v)
{
	return v.kind == TV_FLOAT ? v.u.f : v.kind == TV_INT ? (double)v.u.i : v.u.b;
}

bool tv_equal(struct tval a, struct tval b)
{
	if (tv_is_num(a) && tv_is_num(b)) {
		if (a.kind != TV_FLOAT && b.kind != TV_FLOAT)
			return (a.kind == TV_INT ? a.u.i : a.u.b) == (b.kind == TV_INT ? b.u.i : b.u.b);
		return tv_num(a) == tv_num(b);
	}
	if (a.kind != b.kind)
		return false;
	switch (a.kind) {
	case TV_UNDEF:
	case TV_NONE: return true;
	case TV_STR: return a.u.s->len == b.u.s->len && !memcmp(a.u.s->s, b.u.s->s, a.u.s->len);
	case TV_LIST:
		if (a.u.l->n != b.u.l->n || a.u.l->tuple != b.u.l->tuple)
			return a.u.l == b.u.l;
		for (size_t i = 0; i < a.u.l->n; i++)
			if (!tv_equal(a.u.l->v[i], b.u.l->v[i]))
				return false;
		return true;
	case TV_DICT:
		if (a.u.d->n != b.u.d->n)
			return false;
		for (size_t i = 0; i < a.u.d->n; i++) {
			struct tval *o = tv_dict_get(b.u.d, a.u.d->k[i]);
			if (!o || !tv_equal(a.u.d->v[i], *o))
				return false;
		}
		return true;
	case TV_NS: return a.u.d == b.u.d;
	case TV_MACRO: return a.u.m == b.u.m;
	case TV_FUNC: return a.u.fn == b.u.fn;
	case TV_LOOP: return a.u.loop == b.u.loop;
	default: return false;
	}
}

const char *tv_type_name(struct tval v)
{
	switch (v.kind) {
	case TV_UNDEF: return "Undefined";
	case TV_NONE: return "NoneType";
	case TV_BOOL: return "bool";
	case TV_INT: return "int";
	case TV_FLOAT: return "float";
	case TV_STR: return "str";
	case TV_LIST: return v.u.l->gen ? "generator" : v.u.l->tuple ? "tuple" : "list";
	case TV_DICT: return "dict";
	case TV_NS: return "Namespace";
	case TV_MACRO: return "Macro";
	case TV_LOOP: return "LoopContext";
	default: return "builtin_function_or_method";
	}
}

int tv_compare(struct tpl_ctx *c, int line, int col, struct tval a, struct tval b)
{
	if (tv_is_num(a) && tv_is_num(b)) {
		if (a.kind != TV_FLOAT && b.kind != TV_FLOAT) {
			int64_t x = a.kind == TV_INT ? a.u.i : a.u.b, y = b.kind == TV_INT ? b.u.i : b.u.b;
			return (x > y) - (x < y);
		}
		double x = tv_num(a), y = tv_num(b);
		return (x > y) - (x < y);
	}
	if (a.kind == TV_STR && b.kind == TV_STR) {
		size_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
		int r = memcmp(a.u.s->s, b.u.s->s, n);
		if (r)
			return r < 0 ? -1 : 1;
		return (a.u.s->len > b.u.s->len) - (a.u.s->len < b.u.s->len);
	}
	if (a.kind == TV_LIST && b.kind == TV_LIST && a.u.l->tuple == b.u.l->tuple && !a.u.l->gen &&
	    !b.u.l->gen) {
		for (size_t i = 0; i < a.u.l->n && i < b.u.l->n; i++)
			if (!tv_equal(a.u.l->v[i], b.u.l->v[i]))
				return tv_compare(c, line, col, a.u.l->v[i], b.u.l->v[i]);
		return (a.u.l->n > b.u.l->n) - (a.u.l->n < b.u.l->n);
	}
	tpl_fail(c, line, col, "'<' not supported between instances of '%s' and '%s'",
		 tv_type_name(a), tv_type_name(b));
}

void tv_float_repr(double f, char *out, size_t outsz)
{
	if (isnan(f)) {
		snprintf(out, outsz, "nan");
		return;
	}
	if (isinf(f)) {
		snprintf(out, outsz, f < 0 ? "-inf" : "inf");
		return;
	}
	/* the shortest digits that read back as f, placed as Python does:
	 * positional for exponents -4 .. 15, else d.ddde+XX */
	char buf[40];
	int prec = 1;
	for (; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
		if (strtod(buf, NULL) == f)
			break;
	}
	snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
	char digits[24];
	size_t nd = 0;
	const char *p = buf;
	bool neg = *p == '-';
	if (neg)
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	int exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	char *o = out;
	size_t left = outsz;
#define PUT(ch)                       \
	do {                          \
		if (left > 1) {       \
			*o++ = (ch);  \
			left--;       \
		}                     \
	} while (0)
	if (neg)
		PUT('-');
	if (exp >= -4 && exp < 16) {
		if (exp < 0) {
			PUT('0');
			PUT('.');
			for (int i = -1; i > exp; i--)
				PUT('0');
			for (size_t i = 0; i < nd; i++)
				PUT(digits[i]);
		} else {
			for (int i = 0; i <= exp; i++)
				PUT((size_t)i < nd ? digits[i] : '0');
			PUT('.');
			if ((size_t)exp + 1 >= nd)
				PUT('0');
			for (size_t i = (size_t)exp + 1; i < nd; i++)
				PUT(digits[i]);
		}
	} else {
		PUT(digits[0]);
		if (nd > 1) {
			PUT('.');
			for (size_t i = 1; i < nd; i++)
				PUT(digits[i]);
		}
		char e[16];
		snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
		for (char *q = e; *q; q++)
			PUT(*q);
	}
#undef PUT
	*o = 0;
}

static void repr_str(struct tpl_ctx *c, struct tpl_buf *b, const struct tstr *s)
{
	char q = memchr(s->s, '\'', s->len) && !memchr(s->s, '"', s->len) ? '"' : '\'';
	tpl_buf_put(c, b, &q, 1);
	for (size_t i = 0; i < s->len; i++) {
		unsigned char ch = (unsigned char)s->s[i];
		if (ch == '\\' || ch == (unsigned char)q) {
			char e[2] = {'\\', (char)ch};
			tpl_buf_put(c, b, e, 2);
		} else if (ch == '\n') {
			tpl_buf_puts(c, b, "\\n");
		} else if (ch == '\r') {
			tpl_buf_puts(c, b, "\\r");
		} else if (ch == '\t') {
			tpl_buf_puts(c, b, "\\t");
		} else if (ch < 0x20 || ch == 0x7f) {
			tpl_buf_printf(c, b, "\\x%02x", ch);
		} else {
			tpl_buf_put(c, b, (const char *)&ch, 1);
		}
	}
	tpl_buf_put(c, b, &q, 1);
}

static void repr_at(struct tpl_ctx *c, struct tpl_buf *b, struct tval v, int depth);

static void print_or_repr(struct tpl_ctx *c, struct tpl_buf *b, struct tval v, bool repr,
			  int depth)
{
	char num[64];
	if (depth > 200) /* a namespace can hold itself */
		tpl_fail(c, 0, 0, "a value nested deeper than 200 levels cannot be printed");
	switch (v.kind) {
	case TV_UNDEF: return;
	case TV_NONE: tpl_buf_puts(c, b, "None"); return;
	case TV_BOOL: tpl_buf_puts(c, b, v.u.b ? "True" : "False"); return;
	case TV_INT: tpl_buf_printf(c, b, "%lld", (long long)v.u.i); return;
	case TV_FLOAT:
		tv_float_repr(v.u.f, num, sizeof num);
		tpl_buf_puts(c, b, num);
		return;
	case TV_STR:
		if (repr)
			repr_str(c, b, v.u.s);
		else
			tpl_buf_put(c, b, v.u.s->s, v.u.s->len);
		return;
	case TV_LIST:
		if (v.u.l->gen) {
			tpl_buf_puts(c, b, "<generator object>");
			return;
		}
		tpl_buf_puts(c, b, v.u.l->tuple ? "(" : "[");
		for (size_t i = 0; i < v.u.l->n; i++) {
			if (i)
				tpl_buf_puts(c, b, ", ");
			repr_at(c, b, v.u.l->v[i], depth + 1);
		}
		tpl_buf_puts(c, b, v.u.l->tuple ? (v.u.l->n == 1 ? ",)" : ")") : "]");
		return;
	case TV_DICT:
	case TV_NS:
		tpl_buf_puts(c, b, v.kind == TV_NS ? "<Namespace {" : "{");
		for (size_t i = 0; i < v.u.d->n; i++) {
			if (i)
				tpl_buf_puts(c, b, ", ");
			repr_at(c, b, v.u.d->k[i], depth + 1);
			tpl_buf_puts(c, b, ": ");
			repr_at(c, b, v.u.d->v[i], depth + 1);
		}
		tpl_buf_puts(c, b, v.kind == TV_NS ? "}>" : "}");
		return;
	case TV_MACRO: tpl_buf_puts(c, b, "<Macro>"); return;
	case TV_LOOP: tpl_buf_puts(c, b, "<LoopContext>"); return;
	default: tpl_buf_puts(c, b, "<built-in function>"); return;
	}
}

void tv_print(struct tpl_ctx *c, struct tpl_buf *b, struct tval v)
{
	print_or_repr(c, b, v, false, 0);
}

static void repr_at(struct tpl_ctx *c, struct tpl_buf *b, struct tval v, int depth)
{
	if (v.kind == TV_UNDEF)
		tpl_buf_puts(c, b, "Undefined");
	else
		print_or_repr(c, b, v, true, depth);
}

void tv_repr(struct tpl_ctx *c, struct tpl_buf *b, struct tval v)
{
	repr_at(c, b, v, 0);
}

struct tval tv_to_str(struct tpl_ctx *c, struct tval v)
{
	if (v.kind == TV_STR)
		return v;
	struct tpl_buf b = {0};
	tv_print(c, &b, v);
	return tv_str(c, b.p, b.n);
}
