/* The expression evaluator: names through the scopes, attributes and
 * items as Jinja's sandbox looks them up, operators with Python's
 * semantics, calls of macros, globals and methods. */
#include <math.h>
#include <string.h>

#include "template/tpl.h"

/* C stack frames of evaluation and execution at most (each a few hundred
 * bytes); max_depth bounds the macro calls among them. */
#define MAX_FRAMES 3000

_Noreturn void tpl_undef_fail(struct tpl_rt *rt, int line, int col, struct tval v)
{
	tpl_fail(rt->c, line, col, "%s", v.u.undef);
}

void tpl_step(struct tpl_rt *rt, const struct tnode *at)
{
	if (++rt->steps > rt->lim.max_steps)
		tpl_fail(rt->c, at->line, at->col, "the template ran more than %llu steps",
			 (unsigned long long)rt->lim.max_steps);
}

struct tscope *tpl_scope_new(struct tpl_rt *rt, struct tscope *parent)
{
	struct tscope *s = tpl_alloc(rt->c, sizeof *s);
	s->parent = parent;
	return s;
}

void tpl_scope_set(struct tpl_rt *rt, struct tscope *s, const char *name, struct tval v)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name)) {
			s->vals[i] = v;
			return;
		}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		const char **names = tpl_alloc(rt->c, cap * sizeof *names);
		struct tval *vals = tpl_alloc(rt->c, cap * sizeof *vals);
		if (s->n) {
			memcpy(names, s->names, s->n * sizeof *names);
			memcpy(vals, s->vals, s->n * sizeof *vals);
		}
		s->names = names;
		s->vals = vals;
		s->cap = cap;
	}
	s->names[s->n] = name;
	s->vals[s->n++] = v;
}

struct tval tpl_lookup(struct tpl_rt *rt, struct tscope *s, const char *name)
{
	for (; s; s = s->parent)
		for (size_t i = 0; i < s->n; i++)
			if (!strcmp(s->names[i], name))
				return s->vals[i];
	struct tval *g = tv_dict_gets(rt->globals, name);
	if (g)
		return *g;
	int fn = tpl_global_find(name);
	if (fn >= 0)
		return (struct tval){.kind = TV_FUNC, .u.fn = fn};
	return tv_undeff(rt->c, "'%s' is undefined", name);
}

struct tval targ(const struct targs *a, size_t i, const char *name, struct tval def)
{
	if (i < a->n)
		return a->v[i];
	for (size_t k = 0; name && k < a->nkw; k++)
		if (!strcmp(a->kwnames[k], name))
			return a->kwvals[k];
	return def;
}

void targ_check(struct tpl_rt *rt, const struct targs *a, const char *what, size_t n,
		const char *keywords)
{
	if (a->n > n)
		tpl_fail(rt->c, a->line, a->col, "%s takes at most %zu positional argument%s (%zu given)",
			 what, n, n == 1 ? "" : "s", a->n);
	for (size_t k = 0; k < a->nkw && !(keywords && !strcmp(keywords, "*")); k++) {
		size_t l = strlen(a->kwnames[k]);
		const char *p = keywords;
		bool ok = false;
		while (p && *p && !ok) {
			const char *e = strchr(p, ',');
			size_t m = e ? (size_t)(e - p) : strlen(p);
			ok = m == l && !strncmp(p, a->kwnames[k], l);
			p = e ? e + 1 : NULL;
		}
		if (!ok)
			tpl_fail(rt->c, a->line, a->col, "%s got an unexpected keyword argument '%s'",
				 what, a->kwnames[k]);
	}
}

static const char *object_desc(struct tpl_rt *rt, struct tval v)
{
	if (v.kind == TV_NONE)
		return "None";
	struct tpl_buf b = {0};
	tpl_buf_printf(rt->c, &b, "%s object", tv_type_name(v));
	return b.p;
}

/* loop.index and the rest, from where the loop stands. */
static bool loop_attr(const struct tloop *l, const char *name, struct tval *out)
{
	size_t i = l->i, n = l->items->n;
	static const char *const names[] = {"index", "index0", "revindex", "revindex0", "first",
					    "last", "length", "depth", "depth0", "previtem",
					    "nextitem"};
	int k = 0;
	while (k < 11 && strcmp(names[k], name))
		k++;
	switch (k) {
	case 0: *out = tv_int((int64_t)i + 1); return true;
	case 1: *out = tv_int((int64_t)i); return true;
	case 2: *out = tv_int((int64_t)(n - i)); return true;
	case 3: *out = tv_int((int64_t)(n - i - 1)); return true;
	case 4: *out = tv_bool(i == 0); return true;
	case 5: *out = tv_bool(i + 1 == n); return true;
	case 6: *out = tv_int((int64_t)n); return true;
	case 7: *out = tv_int(1); return true;
	case 8: *out = tv_int(0); return true;
	case 9:
		if (i == 0)
			return false;
		*out = l->items->v[i - 1];
		return true;
	case 10:
		if (i + 1 >= n)
			return false;
		*out = l->items->v[i + 1];
		return true;
	default: return false;
	}
}

struct tval tpl_getattr(struct tpl_rt *rt, int line, int col, struct tval v, const char *name)
{
	if (v.kind == TV_UNDEF)
		tpl_undef_fail(rt, line, col, v);
	struct tval out;
	if (v.kind == TV_LOOP && loop_attr(v.u.loop, name, &out))
		return out;
	if (tpl_method_lookup(rt, v, name, &out))
		return out;
	if (v.kind == TV_DICT || v.kind == TV_NS) {
		struct tval *x = tv_dict_gets(v.u.d, name);
		if (x)
			return *x;
	}
	return tv_undeff(rt->c, "'%s' has no attribute '%s'", object_desc(rt, v), name);
}

/* Python's index normalisation: i in [0, n) or -1. */
static int64_t norm_index(int64_t i, size_t n)
{
	if (i < 0)
		i += (int64_t)n;
	return i >= 0 && (uint64_t)i < n ? i : -1;
}

struct tval tpl_getitem(struct tpl_rt *rt, int line, int col, struct tval v, struct tval k)
{
	if (v.kind == TV_UNDEF)
		tpl_undef_fail(rt, line, col, v);
	if (v.kind == TV_DICT || v.kind == TV_NS) {
		struct tval *x = v.kind == TV_DICT ? tv_dict_get(v.u.d, k) : NULL;
		if (x)
			return *x;
	} else if ((v.kind == TV_LIST && !v.u.l->gen) || v.kind == TV_STR) {
		if (k.kind == TV_INT || k.kind == TV_BOOL) {
			int64_t i = k.kind == TV_INT ? k.u.i : k.u.b;
			if (v.kind == TV_LIST) {
				i = norm_index(i, v.u.l->n);
				if (i >= 0)
					return v.u.l->v[i];
			} else {
				size_t n = tpl_utf8_count(v.u.s->s, v.u.s->len);
				i = norm_index(i, n);
				if (i >= 0) {
					size_t a = tpl_utf8_offset(v.u.s->s, v.u.s->len, (size_t)i);
					size_t b = tpl_utf8_offset(v.u.s->s, v.u.s->len, (size_t)i + 1);
					return tv_str(rt->c, v.u.s->s + a, b - a);
				}
			}
		}
	}
	if (k.kind == TV_STR) {
		struct tval out;
		const char *name = tpl_cstr(rt->c, k.u.s);
		if (v.kind == TV_LOOP && loop_attr(v.u.loop, name, &out))
			return out;
		if (tpl_method_lookup(rt, v, name, &out))
			return out;
		if (v.kind == TV_NS) {
			struct tval *x = tv_dict_gets(v.u.d, name);
			if (x)
				return *x;
		}
		return tv_undeff(rt->c, "'%s' has no attribute '%s'", object_desc(rt, v), name);
	}
	struct tpl_buf b = {0};
	tv_repr(rt->c, &b, k);
	return tv_undeff(rt->c, "%s has no element %s", object_desc(rt, v), b.p ? b.p : "");
}

/* Python's slice indices for a sequence of n: start, stop, step. */
static size_t slice_indices(struct tpl_rt *rt, const struct tnode *n, struct tval *bounds,
			    size_t len, int64_t *start, int64_t *step)
{
	int64_t st = 1;
	if (bounds[2].kind != TV_NONE) {
		if (bounds[2].kind != TV_INT)
			tpl_fail(rt->c, n->line, n->col, "slice indices must be integers or None");
		st = bounds[2].u.i;
		if (st == 0)
			tpl_fail(rt->c, n->line, n->col, "slice step cannot be zero");
	}
	int64_t lo, hi, N = (int64_t)len;
	for (int k = 0; k < 2; k++)
		if (bounds[k].kind != TV_NONE && bounds[k].kind != TV_INT)
			tpl_fail(rt->c, n->line, n->col, "slice indices must be integers or None");
	if (st > 0) {
		lo = bounds[0].kind == TV_INT ? bounds[0].u.i : 0;
		hi = bounds[1].kind == TV_INT ? bounds[1].u.i : N;
		if (lo < 0)
			lo = lo + N < 0 ? 0 : lo + N;
		if (hi < 0)
			hi = hi + N < 0 ? 0 : hi + N;
		lo = lo > N ? N : lo;
		hi = hi > N ? N : hi;
		*start = lo;
		*step = st;
		return hi > lo ? (size_t)((hi - lo + st - 1) / st) : 0;
	}
	lo = bounds[0].kind == TV_INT ? bounds[0].u.i : N - 1;
	hi = bounds[1].kind == TV_INT ? bounds[1].u.i : -N - 1;
	if (lo < 0)
		lo = lo + N < 0 ? -1 : lo + N;
	else if (lo >= N)
		lo = N - 1;
	if (hi < 0)
		hi = hi + N < 0 ? -1 : hi + N;
	else if (hi >= N)
		hi = N - 1;
	*start = lo;
	*step = st;
	return lo > hi ? (size_t)((lo - hi - st - 1) / -st) : 0;
}

static struct tval slice(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval v = tpl_eval(rt, s, n->a), bounds[3];
	const struct tnode *parts[3] = {n->b, n->c, n->d};
	for (int k = 0; k < 3; k++)
		bounds[k] = parts[k] ? tpl_eval(rt, s, parts[k]) : tv_none;
	if (v.kind == TV_UNDEF)
		tpl_undef_fail(rt, n->line, n->col, v);
	int64_t start, step;
	if (v.kind == TV_LIST && !v.u.l->gen) {
		size_t cnt = slice_indices(rt, n, bounds, v.u.l->n, &start, &step);
		struct tval out = tv_list(rt->c, cnt);
		out.u.l->tuple = v.u.l->tuple;
		for (size_t i = 0; i < cnt; i++)
			tv_list_push(rt->c, out.u.l, v.u.l->v[start + (int64_t)i * step]);
		return out;
	}
	if (v.kind == TV_STR) {
		const struct tstr *str = v.u.s;
		size_t len = tpl_utf8_count(str->s, str->len);
		size_t cnt = slice_indices(rt, n, bounds, len, &start, &step);
		struct tpl_buf b = {0};
		tpl_buf_put(rt->c, &b, "", 0);
		if (step == 1) {
			size_t a = tpl_utf8_offset(str->s, str->len, (size_t)start);
			size_t e = tpl_utf8_offset(str->s, str->len, (size_t)start + cnt);
			return tv_str(rt->c, str->s + a, e - a);
		}
		for (size_t i = 0; i < cnt; i++) {
			size_t at = (size_t)(start + (int64_t)i * step);
			size_t a = tpl_utf8_offset(str->s, str->len, at);
			size_t e = tpl_utf8_offset(str->s, str->len, at + 1);
			tpl_buf_put(rt->c, &b, str->s + a, e - a);
		}
		return tv_str(rt->c, b.p, b.n);
	}
	tpl_fail(rt->c, n->line, n->col, "'%s' object is not subscriptable", tv_type_name(v));
}

struct tlist *tpl_iterate(struct tpl_rt *rt, int line, int col, struct tval v)
{
	switch (v.kind) {
	case TV_UNDEF: return tv_list(rt->c, 0).u.l;
	case TV_LIST: return v.u.l;
	case TV_DICT: {
		struct tlist *l = tv_list(rt->c, v.u.d->n).u.l;
		for (size_t i = 0; i < v.u.d->n; i++)
			tv_list_push(rt->c, l, v.u.d->k[i]);
		return l;
	}
	case TV_STR: {
		struct tlist *l = tv_list(rt->c, v.u.s->len).u.l;
		for (size_t i = 0; i < v.u.s->len;) {
			size_t e = tpl_utf8_offset(v.u.s->s + i, v.u.s->len - i, 1);
			tv_list_push(rt->c, l, tv_str(rt->c, v.u.s->s + i, e));
			i += e;
		}
		return l;
	}
	default:
		tpl_fail(rt->c, line, col, "'%s' object is not iterable", tv_type_name(v));
	}
}

static void eval_args(struct tpl_rt *rt, struct tscope *s, const struct tnode *n, struct targs *a)
{
	a->n = n->n;
	a->nkw = n->nkw;
	a->line = n->line;
	a->col = n->col;
	a->v = n->n ? tpl_alloc(rt->c, n->n * sizeof *a->v) : NULL;
	for (size_t i = 0; i < n->n; i++)
		a->v[i] = tpl_eval(rt, s, n->args[i]);
	a->kwnames = n->kwnames;
	a->kwvals = n->nkw ? tpl_alloc(rt->c, n->nkw * sizeof *a->kwvals) : NULL;
	for (size_t i = 0; i < n->nkw; i++)
		a->kwvals[i] = tpl_eval(rt, s, n->kwvals[i]);
}

static struct tval call_macro(struct tpl_rt *rt, int line, int col, const struct tmacro *m,
			      struct targs *a)
{
	const struct tnode *def = m->def;
	if (rt->depth > rt->lim.max_depth)
		tpl_fail(rt->c, line, col, "macro calls nested deeper than %d", rt->lim.max_depth);
	struct tscope *s = tpl_scope_new(rt, m->closure);
	struct tval varargs = tv_list(rt->c, 0), kwargs = tv_dict(rt->c, 0);
	varargs.u.l->tuple = true;
	for (size_t i = 0; i < a->n; i++) {
		if (i < def->n)
			tpl_scope_set(rt, s, def->args[i]->name, a->v[i]);
		else
			tv_list_push(rt->c, varargs.u.l, a->v[i]);
	}
	for (size_t k = 0; k < a->nkw; k++) {
		size_t i = 0;
		while (i < def->n && strcmp(def->args[i]->name, a->kwnames[k]))
			i++;
		if (i == def->n)
			tv_dict_set(rt->c, kwargs.u.d, tv_cstr(rt->c, a->kwnames[k]), a->kwvals[k]);
		else if (i < a->n)
			tpl_fail(rt->c, line, col, "macro '%s' got multiple values for argument '%s'",
				 def->name, a->kwnames[k]);
		else
			tpl_scope_set(rt, s, def->args[i]->name, a->kwvals[k]);
	}
	for (size_t i = a->n; i < def->n; i++) {
		bool given = false;
		for (size_t k = 0; k < s->n && !given; k++)
			given = !strcmp(s->names[k], def->args[i]->name);
		if (!given)
			tpl_scope_set(rt, s, def->args[i]->name,
				      def->args[i]->a ? tpl_eval(rt, s, def->args[i]->a)
						      : tv_undeff(rt->c, "'%s' is undefined",
								  def->args[i]->name));
	}
	tpl_scope_set(rt, s, "varargs", varargs);
	tpl_scope_set(rt, s, "kwargs", kwargs);
	rt->depth++;
	struct tval out = tpl_capture(rt, s, def->d);
	rt->depth--;
	return out;
}

struct tval tpl_call(struct tpl_rt *rt, int line, int col, struct tval f, struct targs *a)
{
	switch (f.kind) {
	case TV_UNDEF: tpl_undef_fail(rt, line, col, f);
	case TV_MACRO: return call_macro(rt, line, col, f.u.m, a);
	case TV_FUNC: return tpl_global_call(rt, f.u.fn, a);
	case TV_METHOD: return tpl_method_call(rt, f.u.meth, a);
	default: tpl_fail(rt->c, line, col, "'%s' object is not callable", tv_type_name(f));
	}
}

_Noreturn static void overflow(struct tpl_rt *rt, const struct tnode *n)
{
	tpl_fail(rt->c, n->line, n->col, "integer overflow (belt's integers are 64-bit)");
}

/* x op y for op + - *, failing on overflow. */
static int64_t int_op(struct tpl_rt *rt, const struct tnode *n, int op, int64_t x, int64_t y)
{
	int64_t r;
	bool o = op == TB_ADD ? __builtin_add_overflow(x, y, &r)
		 : op == TB_SUB ? __builtin_sub_overflow(x, y, &r)
				: __builtin_mul_overflow(x, y, &r);
	if (o)
		overflow(rt, n);
	return r;
}

static struct tval arith(struct tpl_rt *rt, const struct tnode *n, struct tval a, struct tval b)
{
	static const char *const sym[] = {"+", "-", "*", "/", "//", "%", "**"};
	if (a.kind == TV_UNDEF)
		tpl_undef_fail(rt, n->line, n->col, a);
	if (b.kind == TV_UNDEF)
		tpl_undef_fail(rt, n->line, n->col, b);
	int op = n->op;
	if (op == TB_ADD && a.kind == TV_STR) {
		if (b.kind != TV_STR)
			tpl_fail(rt->c, n->line, n->col, "can only concatenate str (not \"%s\") to str",
				 tv_type_name(b));
		bool safe = a.safe || b.safe; /* Markup + str escapes the str */
		if (safe) {
			a = tpl_escape(rt->c, a);
			b = tpl_escape(rt->c, b);
		}
		struct tval out = tv_concat(rt->c, a.u.s, b.u.s);
		out.safe = safe;
		return out;
	}
	if (op == TB_ADD && a.kind == TV_LIST && !a.u.l->gen) {
		if (b.kind != TV_LIST || b.u.l->tuple != a.u.l->tuple || b.u.l->gen)
			tpl_fail(rt->c, n->line, n->col, "can only concatenate %s (not \"%s\") to %s",
				 tv_type_name(a), tv_type_name(b), tv_type_name(a));
		struct tval out = tv_list(rt->c, a.u.l->n + b.u.l->n);
		out.u.l->tuple = a.u.l->tuple;
		for (size_t i = 0; i < a.u.l->n; i++)
			tv_list_push(rt->c, out.u.l, a.u.l->v[i]);
		for (size_t i = 0; i < b.u.l->n; i++)
			tv_list_push(rt->c, out.u.l, b.u.l->v[i]);
		return out;
	}
	if (op == TB_MUL && (a.kind == TV_STR || b.kind == TV_STR) &&
	    (a.kind == TV_INT || b.kind == TV_INT || a.kind == TV_BOOL || b.kind == TV_BOOL)) {
		struct tval str = a.kind == TV_STR ? a : b, k = a.kind == TV_STR ? b : a;
		int64_t times = k.kind == TV_INT ? k.u.i : k.u.b;
		size_t len = str.u.s->len;
		if (times <= 0 || !len)
			return tv_str(rt->c, "", 0);
		if ((uint64_t)times > rt->c->cap / len) /* more than memory allows */
			tpl_fail(rt->c, n->line, n->col, "the template needs more than %zu MiB of memory",
				 rt->c->cap >> 20);
		struct tpl_buf buf = {0};
		for (int64_t i = 0; i < times; i++)
			tpl_buf_put(rt->c, &buf, str.u.s->s, len);
		return tv_str(rt->c, buf.p, buf.n);
	}
	if (op == TB_MUL && ((a.kind == TV_LIST && !a.u.l->gen && (b.kind == TV_INT || b.kind == TV_BOOL)) ||
			     (b.kind == TV_LIST && !b.u.l->gen && (a.kind == TV_INT || a.kind == TV_BOOL)))) {
		struct tval l = a.kind == TV_LIST ? a : b, k = a.kind == TV_LIST ? b : a;
		int64_t times = k.kind == TV_INT ? k.u.i : k.u.b;
		struct tval out = tv_list(rt->c, 0);
		out.u.l->tuple = l.u.l->tuple;
		for (int64_t i = 0; i < times; i++) {
			tpl_step(rt, n);
			for (size_t j = 0; j < l.u.l->n; j++)
				tv_list_push(rt->c, out.u.l, l.u.l->v[j]);
		}
		return out;
	}
	if (!tv_is_num(a) || !tv_is_num(b))
		tpl_fail(rt->c, n->line, n->col, "unsupported operand type(s) for %s: '%s' and '%s'",
			 sym[op], tv_type_name(a), tv_type_name(b));
	if (a.kind != TV_FLOAT && b.kind != TV_FLOAT && op != TB_DIV) {
		int64_t x = a.kind == TV_INT ? a.u.i : a.u.b, y = b.kind == TV_INT ? b.u.i : b.u.b;
		switch (op) {
		case TB_ADD:
		case TB_SUB:
		case TB_MUL: return tv_int(int_op(rt, n, op, x, y));
		case TB_FDIV:
		case TB_MOD: {
			if (y == 0)
				tpl_fail(rt->c, n->line, n->col, "integer division or modulo by zero");
			if (x == INT64_MIN && y == -1)
				overflow(rt, n);
			int64_t q = x / y, m = x % y;
			if (m != 0 && ((m < 0) != (y < 0))) {
				q--;
				m += y;
			}
			return tv_int(op == TB_FDIV ? q : m);
		}
		case TB_POW:
			if (y >= 0) { /* by squaring, each product checked */
				int64_t p = 1, base = x;
				for (uint64_t e = (uint64_t)y; e; e >>= 1) {
					if (e & 1)
						p = int_op(rt, n, TB_MUL, p, base);
					if (e > 1)
						base = int_op(rt, n, TB_MUL, base, base);
				}
				return tv_int(p);
			}
			return tv_float(pow((double)x, (double)y));
		}
	}
	double x = tv_num(a), y = tv_num(b);
	switch (op) {
	case TB_ADD: return tv_float(x + y);
	case TB_SUB: return tv_float(x - y);
	case TB_MUL: return tv_float(x * y);
	case TB_DIV:
		if (y == 0)
			tpl_fail(rt->c, n->line, n->col, "division by zero");
		return tv_float(x / y);
	case TB_FDIV:
		if (y == 0)
			tpl_fail(rt->c, n->line, n->col, "float floor division by zero");
		return tv_float(floor(x / y));
	case TB_MOD: {
		if (y == 0)
			tpl_fail(rt->c, n->line, n->col, "float modulo");
		double m = fmod(x, y);
		if (m != 0 && ((m < 0) != (y < 0)))
			m += y;
		return tv_float(m);
	}
	default: return tv_float(pow(x, y));
	}
}

/* needle in hay, as Python's "in". */
static bool contains(struct tpl_rt *rt, const struct tnode *n, struct tval needle, struct tval hay)
{
	switch (hay.kind) {
	case TV_STR:
		if (needle.kind != TV_STR)
			tpl_fail(rt->c, n->line, n->col,
				 "'in <string>' requires string as left operand, not %s",
				 tv_type_name(needle));
		return !needle.u.s->len || memmem(hay.u.s->s, hay.u.s->len, needle.u.s->s,
						  needle.u.s->len) != NULL;
	case TV_DICT: return tv_dict_get(hay.u.d, needle) != NULL;
	case TV_UNDEF: return false;
	case TV_LIST:
		for (size_t i = 0; i < hay.u.l->n; i++)
			if (tv_equal(hay.u.l->v[i], needle))
				return true;
		return false;
	default:
		tpl_fail(rt->c, n->line, n->col, "argument of type '%s' is not iterable",
			 tv_type_name(hay));
	}
}

static bool compare_one(struct tpl_rt *rt, const struct tnode *n, int op, struct tval a,
			struct tval b)
{
	switch (op) {
	case TC_EQ: return tv_equal(a, b);
	case TC_NE: return !tv_equal(a, b);
	case TC_IN: return contains(rt, n, a, b);
	case TC_NOTIN: return !contains(rt, n, a, b);
	default: break;
	}
	if (a.kind == TV_UNDEF)
		tpl_undef_fail(rt, n->line, n->col, a);
	if (b.kind == TV_UNDEF)
		tpl_undef_fail(rt, n->line, n->col, b);
	int r = tv_compare(rt->c, n->line, n->col, a, b);
	return op == TC_LT ? r < 0 : op == TC_LE ? r <= 0 : op == TC_GT ? r > 0 : r >= 0;
}

static struct tval eval_call(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval f = tpl_eval(rt, s, n->a);
	struct targs a;
	eval_args(rt, s, n, &a);
	return tpl_call(rt, n->line, n->col, f, &a);
}

static struct tval eval_filter(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval v = tpl_eval(rt, s, n->a), out;
	struct targs a;
	eval_args(rt, s, n, &a);
	if (!tpl_filter(rt, n->name, v, &a, &out))
		tpl_fail(rt->c, n->line, n->col, "no filter named '%s'", n->name);
	return out;
}

static struct tval eval_test(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval v = tpl_eval(rt, s, n->a);
	struct targs a;
	eval_args(rt, s, n, &a);
	bool r;
	if (!tpl_test(rt, n->name, v, &a, &r))
		tpl_fail(rt->c, n->line, n->col, "no test named '%s'", n->name);
	return tv_bool(r != (n->op == 1));
}

static struct tval eval_collection(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	if (n->kind == N_DICT) {
		struct tval d = tv_dict(rt->c, n->n);
		for (size_t i = 0; i < n->n; i++)
			tv_dict_set(rt->c, d.u.d, tpl_eval(rt, s, n->args[i]),
				    tpl_eval(rt, s, n->kwvals[i]));
		return d;
	}
	struct tval l = tv_list(rt->c, n->n);
	l.u.l->tuple = n->kind == N_TUPLE;
	for (size_t i = 0; i < n->n; i++)
		tv_list_push(rt->c, l.u.l, tpl_eval(rt, s, n->args[i]));
	return l;
}

static struct tval eval_compare(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval left = tpl_eval(rt, s, n->a);
	for (size_t i = 0; i < n->n; i++) {
		struct tval right = tpl_eval(rt, s, n->args[i]);
		if (!compare_one(rt, n, n->ops[i], left, right))
			return tv_bool(false);
		left = right;
	}
	return tv_bool(true);
}

static struct tval eval_node(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tval a;
	switch (n->kind) {
	case N_CONST: return n->val;
	case N_NAME: return tpl_lookup(rt, s, n->name);
	case N_ATTR: return tpl_getattr(rt, n->line, n->col, tpl_eval(rt, s, n->a), n->name);
	case N_ITEM:
		a = tpl_eval(rt, s, n->a);
		return tpl_getitem(rt, n->line, n->col, a, tpl_eval(rt, s, n->b));
	case N_SLICE: return slice(rt, s, n);
	case N_CALL: return eval_call(rt, s, n);
	case N_FILTER: return eval_filter(rt, s, n);
	case N_TEST: return eval_test(rt, s, n);
	case N_NOT: return tv_bool(!tv_truthy(tpl_eval(rt, s, n->a)));
	case N_NEG:
	case N_POS:
		a = tpl_eval(rt, s, n->a);
		if (a.kind == TV_UNDEF)
			tpl_undef_fail(rt, n->line, n->col, a);
		if (!tv_is_num(a))
			tpl_fail(rt->c, n->line, n->col, "bad operand type for unary %c: '%s'",
				 n->kind == N_NEG ? '-' : '+', tv_type_name(a));
		if (n->kind == N_POS)
			return a.kind == TV_BOOL ? tv_int(a.u.b) : a;
		if (a.kind == TV_FLOAT)
			return tv_float(-a.u.f);
		if (a.kind == TV_INT && a.u.i == INT64_MIN)
			overflow(rt, n);
		return tv_int(a.kind == TV_INT ? -a.u.i : -(int64_t)a.u.b);
	case N_BINOP:
		a = tpl_eval(rt, s, n->a);
		return arith(rt, n, a, tpl_eval(rt, s, n->b));
	case N_CONCAT: {
		a = tpl_eval(rt, s, n->a);
		struct tval b = tpl_eval(rt, s, n->b);
		return tv_concat(rt->c, tv_to_str(rt->c, a).u.s, tv_to_str(rt->c, b).u.s);
	}
	case N_AND:
		a = tpl_eval(rt, s, n->a);
		return tv_truthy(a) ? tpl_eval(rt, s, n->b) : a;
	case N_OR:
		a = tpl_eval(rt, s, n->a);
		return tv_truthy(a) ? a : tpl_eval(rt, s, n->b);
	case N_COMPARE: return eval_compare(rt, s, n);
	case N_COND:
		if (tv_truthy(tpl_eval(rt, s, n->a)))
			return tpl_eval(rt, s, n->b);
		return n->c ? tpl_eval(rt, s, n->c)
			    : tv_undef("the conditional expression had no else branch");
	case N_LIST:
	case N_TUPLE:
	case N_DICT: return eval_collection(rt, s, n);
	default: tpl_fail(rt->c, n->line, n->col, "not an expression");
	}
}

struct tval tpl_eval(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	tpl_step(rt, n);
	if (++rt->frames > MAX_FRAMES)
		tpl_fail(rt->c, n->line, n->col, "evaluation nested deeper than %d levels", MAX_FRAMES);
	struct tval v = eval_node(rt, s, n);
	rt->frames--;
	return v;
}
