/* Jinja's built-in filters that chat templates use, with tojson as
 * transformers defines it. select, reject, map and unique give
 * generators, as in Jinja: iterable, but with no length and not JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "template/tpl.h"

typedef struct tval (*filter_fn)(struct tpl_rt *rt, struct tval v, struct targs *a);

static const struct tstr *need_str(struct tpl_rt *rt, struct targs *a, struct tval v,
				   const char *what)
{
	if (v.kind != TV_STR)
		tpl_fail(rt->c, a->line, a->col, "%s: expected a string, got %s", what,
			 tv_type_name(v));
	return v.u.s;
}

/* A string argument as a C string (names of filters, tests, methods). */
static const char *need_cstr(struct tpl_rt *rt, struct targs *a, struct tval v, const char *what)
{
	return tpl_cstr(rt->c, need_str(rt, a, v, what));
}

static int64_t need_int(struct tpl_rt *rt, struct targs *a, struct tval v, const char *what)
{
	if (v.kind == TV_BOOL)
		return v.u.b;
	if (v.kind != TV_INT)
		tpl_fail(rt->c, a->line, a->col, "%s: expected an integer, got %s", what,
			 tv_type_name(v));
	return v.u.i;
}

static struct tval f_trim(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "trim", 1, "chars");
	struct tval chars = targ(a, 0, "chars", tv_none);
	return tpl_strip(rt->c, tv_to_str(rt->c, v).u.s,
			 chars.kind == TV_NONE ? NULL : need_str(rt, a, chars, "trim"), true, true);
}

static struct tval f_tojson(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "tojson", 4, "ensure_ascii,indent,separators,sort_keys");
	struct tval ascii = targ(a, 0, "ensure_ascii", tv_bool(false));
	struct tval indent = targ(a, 1, "indent", tv_none);
	if (targ(a, 2, "separators", tv_none).kind != TV_NONE ||
	    tv_truthy(targ(a, 3, "sort_keys", tv_bool(false))))
		tpl_fail(rt->c, a->line, a->col, "tojson: separators and sort_keys are not supported");
	int ind = -1;
	if (indent.kind != TV_NONE) {
		int64_t k = need_int(rt, a, indent, "tojson indent");
		ind = k < 0 ? 0 : k > 64 ? 64 : (int)k;
	}
	struct tpl_buf b = {0};
	tpl_buf_put(rt->c, &b, "", 0);
	tpl_to_json(rt->c, a->line, a->col, &b, v, tv_truthy(ascii), ind, 0);
	return tv_str(rt->c, b.p, b.n);
}

static struct tval f_length(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "length", 0, NULL);
	switch (v.kind) {
	case TV_UNDEF: return tv_int(0);
	case TV_STR: return tv_int((int64_t)tpl_utf8_count(v.u.s->s, v.u.s->len));
	case TV_LIST:
		if (!v.u.l->gen)
			return tv_int((int64_t)v.u.l->n);
		break;
	case TV_DICT: return tv_int((int64_t)v.u.d->n);
	default: break;
	}
	tpl_fail(rt->c, a->line, a->col, "object of type '%s' has no len()", tv_type_name(v));
}

static struct tval f_upper(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "upper", 0, NULL);
	return tpl_case(rt->c, tv_to_str(rt->c, v).u.s, TPL_UPPER);
}

static struct tval f_lower(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "lower", 0, NULL);
	return tpl_case(rt->c, tv_to_str(rt->c, v).u.s, TPL_LOWER);
}

static struct tval f_capitalize(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "capitalize", 0, NULL);
	return tpl_case(rt->c, tv_to_str(rt->c, v).u.s, TPL_CAPITALIZE);
}

/* Jinja's title: each word after whitespace, -, (, {, [ or < gets its
 * first character upper and the rest lower. */
static struct tval f_title(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "title", 0, NULL);
	const struct tstr *s = tv_to_str(rt->c, v).u.s;
	struct tpl_buf b = {0};
	tpl_buf_put(rt->c, &b, "", 0);
	size_t i = 0;
	while (i < s->len) {
		size_t j = i, l;
		bool sep = false;
		while (j < s->len) {
			if (s->s[j] && strchr("-({[<", s->s[j]))
				l = 1;
			else if (!tpl_is_space(s->s + j, s->len - j, &l))
				break;
			j += l;
			sep = true;
		}
		if (sep) {
			tpl_buf_put(rt->c, &b, s->s + i, j - i);
			i = j;
			continue;
		}
		while (j < s->len && !(s->s[j] && strchr("-({[<", s->s[j])) &&
		       !tpl_is_space(s->s + j, s->len - j, &l))
			j++;
		struct tval t = tpl_case(rt->c, tv_str(rt->c, s->s + i, j - i).u.s, TPL_CAPITALIZE);
		tpl_buf_put(rt->c, &b, t.u.s->s, t.u.s->len);
		i = j;
	}
	return tv_str(rt->c, b.p, b.n);
}

static struct tval f_replace(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "replace", 3, "old,new,count");
	struct tval count = targ(a, 2, "count", tv_none);
	return tpl_replace(rt->c, tv_to_str(rt->c, v).u.s,
			   tv_to_str(rt->c, targ(a, 0, "old", tv_undef_plain)).u.s,
			   tv_to_str(rt->c, targ(a, 1, "new", tv_undef_plain)).u.s,
			   count.kind == TV_NONE ? -1 : need_int(rt, a, count, "replace count"));
}

static struct tval pairs(struct tpl_rt *rt, struct tdict *d)
{
	struct tval l = tv_list(rt->c, d->n);
	for (size_t i = 0; i < d->n; i++) {
		struct tval t = tv_list(rt->c, 2);
		t.u.l->tuple = true;
		tv_list_push(rt->c, t.u.l, d->k[i]);
		tv_list_push(rt->c, t.u.l, d->v[i]);
		tv_list_push(rt->c, l.u.l, t);
	}
	return l;
}

static struct tval f_items(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "items", 0, NULL);
	if (v.kind == TV_UNDEF)
		return tv_list(rt->c, 0);
	if (v.kind != TV_DICT)
		tpl_fail(rt->c, a->line, a->col, "Can only get item pairs from a mapping.");
	return pairs(rt, v.u.d);
}

/* Jinja's attribute getter: "a.b.0" looks up a, then b, then item 0. */
static struct tval attribute(struct tpl_rt *rt, struct targs *a, struct tval v, struct tval attr)
{
	if (attr.kind == TV_INT)
		return tpl_getitem(rt, a->line, a->col, v, attr);
	const struct tstr *s = need_str(rt, a, attr, "attribute");
	for (size_t i = 0; i <= s->len;) {
		const char *dot = memchr(s->s + i, '.', s->len - i);
		size_t e = dot ? (size_t)(dot - s->s) : s->len;
		bool digits = e > i;
		for (size_t k = i; k < e; k++)
			digits = digits && s->s[k] >= '0' && s->s[k] <= '9';
		struct tval key = tv_str(rt->c, s->s + i, e - i);
		if (digits)
			key = tv_int(strtoll(key.u.s->s, NULL, 10));
		v = tpl_getitem(rt, a->line, a->col, v, key);
		i = e + 1;
	}
	return v;
}

static struct tval f_join(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "join", 2, "d,attribute");
	const struct tstr *sep = tv_to_str(rt->c, targ(a, 0, "d", tv_str(rt->c, "", 0))).u.s;
	struct tval attr = targ(a, 1, "attribute", tv_none);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	struct tpl_buf b = {0};
	tpl_buf_put(rt->c, &b, "", 0);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			tpl_buf_put(rt->c, &b, sep->s, sep->len);
		tv_print(rt->c, &b, attr.kind == TV_NONE ? l->v[i] : attribute(rt, a, l->v[i], attr));
	}
	return tv_str(rt->c, b.p, b.n);
}

static struct tval f_default(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "default", 2, "default_value,boolean");
	struct tval def = targ(a, 0, "default_value", tv_str(rt->c, "", 0));
	bool boolean = tv_truthy(targ(a, 1, "boolean", tv_bool(false)));
	if (v.kind == TV_UNDEF || (boolean && !tv_truthy(v)))
		return def;
	return v;
}

static struct tval f_first(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "first", 0, NULL);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	return l->n ? l->v[0] : tv_undef("No first item, sequence was empty.");
}

static struct tval f_last(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "last", 0, NULL);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	return l->n ? l->v[l->n - 1] : tv_undef("No last item, sequence was empty.");
}

static struct tval f_list(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "list", 0, NULL);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	struct tval out = tv_list(rt->c, l->n);
	for (size_t i = 0; i < l->n; i++)
		tv_list_push(rt->c, out.u.l, l->v[i]);
	return out;
}

static struct tval f_string(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "string", 0, NULL);
	return tv_to_str(rt->c, v);
}

/* Python's int(s) or float(s) of a string: optional sign, digits, spaces
 * around; false when it is not one. */
static bool parse_number(const struct tstr *s, bool want_int, double *f, int64_t *i)
{
	char buf[128];
	size_t a = 0, b = s->len, n = 0;
	while (a < b && strchr(" \t\n\r\f\v", s->s[a]))
		a++;
	while (b > a && strchr(" \t\n\r\f\v", s->s[b - 1]))
		b--;
	if (b == a || b - a >= sizeof buf)
		return false;
	for (size_t k = a; k < b; k++)
		if (s->s[k] != '_')
			buf[n++] = s->s[k];
	buf[n] = 0;
	char *end;
	if (want_int) {
		*i = strtoll(buf, &end, 10);
		return *end == 0 && end != buf;
	}
	*f = strtod(buf, &end);
	return *end == 0 && end != buf;
}

static struct tval f_int(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "int", 2, "default,base");
	struct tval def = targ(a, 0, "default", tv_int(0));
	int64_t i;
	double f;
	switch (v.kind) {
	case TV_INT: return v;
	case TV_BOOL: return tv_int(v.u.b);
	case TV_FLOAT:
		if (!isfinite(v.u.f) || fabs(v.u.f) >= 9.2e18)
			return def;
		return tv_int((int64_t)v.u.f);
	case TV_STR:
		if (parse_number(v.u.s, true, &f, &i))
			return tv_int(i);
		if (parse_number(v.u.s, false, &f, &i) && isfinite(f) && fabs(f) < 9.2e18)
			return tv_int((int64_t)f);
		return def;
	default: return def;
	}
}

static struct tval f_float(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "float", 1, "default");
	struct tval def = targ(a, 0, "default", tv_float(0));
	double f;
	int64_t i;
	if (tv_is_num(v))
		return tv_float(tv_num(v));
	if (v.kind == TV_STR && parse_number(v.u.s, false, &f, &i))
		return tv_float(f);
	return def;
}

static struct tval f_round(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "round", 2, "precision,method");
	int64_t prec = need_int(rt, a, targ(a, 0, "precision", tv_int(0)), "round precision");
	struct tval method = targ(a, 1, "method", tv_cstr(rt->c, "common"));
	if (!tv_is_num(v))
		tpl_fail(rt->c, a->line, a->col, "round: expected a number, got %s", tv_type_name(v));
	const char *m = need_cstr(rt, a, method, "round method");
	double x = tv_num(v), scale = pow(10, (double)(prec > 300 ? 300 : prec < -300 ? -300 : prec));
	double y = x * scale;
	if (!strcmp(m, "common"))
		y = nearbyint(y); /* Python's round: halves to even */
	else if (!strcmp(m, "ceil"))
		y = ceil(y);
	else if (!strcmp(m, "floor"))
		y = floor(y);
	else
		tpl_fail(rt->c, a->line, a->col, "method must be common, ceil or floor");
	return tv_float(y / scale);
}

static struct tval f_safe(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "safe", 0, NULL);
	struct tval out = tv_to_str(rt->c, v);
	out.safe = true;
	return out;
}

static struct tval f_escape(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "escape", 0, NULL);
	return tpl_escape(rt->c, v);
}

static struct tval generator(struct tpl_rt *rt, size_t cap)
{
	struct tval g = tv_list(rt->c, cap);
	g.u.l->gen = true;
	return g;
}

/* The filter named by a's first argument applied with the rest. */
static struct tval f_map(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	/* Jinja maps nothing over a false value (none, undefined, empty) */
	struct tlist *l = tpl_iterate(rt, a->line, a->col, tv_truthy(v) ? v : tv_undef_plain);
	struct tval out = generator(rt, l->n);
	if (!a->n) {
		targ_check(rt, a, "map", 0, "attribute,default");
		struct tval attr = targ(a, 0, "attribute", tv_undef_plain);
		struct tval def = targ(a, 1, "default", tv_undef_plain);
		if (attr.kind == TV_UNDEF)
			tpl_fail(rt->c, a->line, a->col, "map: expected a filter name or attribute=");
		for (size_t i = 0; i < l->n; i++) {
			struct tval x = attribute(rt, a, l->v[i], attr);
			tv_list_push(rt->c, out.u.l, x.kind == TV_UNDEF && def.kind != TV_UNDEF ? def : x);
		}
		return out;
	}
	const char *name = need_cstr(rt, a, a->v[0], "map");
	struct targs rest = *a;
	rest.n--;
	rest.v++;
	for (size_t i = 0; i < l->n; i++) {
		struct tval x;
		if (!tpl_filter(rt, name, l->v[i], &rest, &x))
			tpl_fail(rt->c, a->line, a->col, "no filter named '%s'", name);
		tv_list_push(rt->c, out.u.l, x);
	}
	return out;
}

/* select, reject, selectattr, rejectattr. */
static struct tval choose(struct tpl_rt *rt, struct tval v, struct targs *a, bool attr, bool keep)
{
	struct tlist *l = tpl_iterate(rt, a->line, a->col, tv_truthy(v) ? v : tv_undef_plain);
	struct tval out = generator(rt, l->n);
	size_t skip = attr ? 1 : 0;
	if (attr && !a->n)
		tpl_fail(rt->c, a->line, a->col, "selectattr and rejectattr need an attribute");
	const char *test = a->n > skip ? need_cstr(rt, a, a->v[skip], "select test") : NULL;
	struct targs rest = *a;
	rest.n = a->n > skip + 1 ? a->n - skip - 1 : 0;
	rest.v = a->v + (a->n > skip + 1 ? skip + 1 : a->n);
	for (size_t i = 0; i < l->n; i++) {
		struct tval x = attr ? attribute(rt, a, l->v[i], a->v[0]) : l->v[i];
		bool r;
		if (!test)
			r = tv_truthy(x);
		else if (!tpl_test(rt, test, x, &rest, &r))
			tpl_fail(rt->c, a->line, a->col, "no test named '%s'", test);
		if (r == keep)
			tv_list_push(rt->c, out.u.l, l->v[i]);
	}
	return out;
}

static struct tval f_select(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return choose(rt, v, a, false, true);
}

static struct tval f_reject(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return choose(rt, v, a, false, false);
}

static struct tval f_selectattr(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return choose(rt, v, a, true, true);
}

static struct tval f_rejectattr(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return choose(rt, v, a, true, false);
}

/* The key unique, sort and dictsort compare: lowered strings unless
 * case_sensitive. */
static struct tval sort_key(struct tpl_rt *rt, struct tval x, bool case_sensitive)
{
	if (!case_sensitive && x.kind == TV_STR)
		return tpl_case(rt->c, x.u.s, TPL_LOWER);
	return x;
}

static struct tval f_unique(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "unique", 2, "case_sensitive,attribute");
	bool cs = tv_truthy(targ(a, 0, "case_sensitive", tv_bool(false)));
	struct tval attr = targ(a, 1, "attribute", tv_none);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	struct tval out = generator(rt, l->n), seen = tv_list(rt->c, l->n);
	for (size_t i = 0; i < l->n; i++) {
		struct tval k = sort_key(rt, attr.kind == TV_NONE ? l->v[i] : attribute(rt, a, l->v[i], attr), cs);
		bool dup = false;
		for (size_t j = 0; j < seen.u.l->n && !dup; j++) {
			tpl_step(rt, &(struct tnode){.line = a->line, .col = a->col});
			dup = tv_equal(seen.u.l->v[j], k);
		}
		if (!dup) {
			tv_list_push(rt->c, seen.u.l, k);
			tv_list_push(rt->c, out.u.l, l->v[i]);
		}
	}
	return out;
}

/* A stable merge sort of items by keys. */
static void merge_sort(struct tpl_rt *rt, struct targs *a, struct tval *items, struct tval *keys,
		       size_t n, bool reverse)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(rt, a, items, keys, h, reverse);
	merge_sort(rt, a, items + h, keys + h, n - h, reverse);
	struct tval *ti = tpl_alloc(rt->c, n * sizeof *ti), *tk = tpl_alloc(rt->c, n * sizeof *tk);
	size_t i = 0, j = h, o = 0;
	while (i < h || j < n) {
		bool left = j >= n;
		if (i < h && j < n) {
			int c = tv_compare(rt->c, a->line, a->col, keys[i], keys[j]);
			left = reverse ? c >= 0 : c <= 0;
		}
		size_t k = left ? i++ : j++;
		ti[o] = items[k];
		tk[o++] = keys[k];
	}
	memcpy(items, ti, n * sizeof *ti);
	memcpy(keys, tk, n * sizeof *tk);
}

static struct tval f_sort(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "sort", 3, "reverse,case_sensitive,attribute");
	bool reverse = tv_truthy(targ(a, 0, "reverse", tv_bool(false)));
	bool cs = tv_truthy(targ(a, 1, "case_sensitive", tv_bool(false)));
	struct tval attr = targ(a, 2, "attribute", tv_none);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	struct tval out = tv_list(rt->c, l->n);
	struct tval *keys = tpl_alloc(rt->c, (l->n + 1) * sizeof *keys);
	for (size_t i = 0; i < l->n; i++) {
		tv_list_push(rt->c, out.u.l, l->v[i]);
		keys[i] = sort_key(rt, attr.kind == TV_NONE ? l->v[i] : attribute(rt, a, l->v[i], attr), cs);
	}
	merge_sort(rt, a, out.u.l->v, keys, l->n, reverse);
	return out;
}

static struct tval f_dictsort(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "dictsort", 3, "case_sensitive,by,reverse");
	bool cs = tv_truthy(targ(a, 0, "case_sensitive", tv_bool(false)));
	struct tval by = targ(a, 1, "by", tv_cstr(rt->c, "key"));
	bool reverse = tv_truthy(targ(a, 2, "reverse", tv_bool(false)));
	if (v.kind != TV_DICT)
		tpl_fail(rt->c, a->line, a->col, "dictsort: expected a mapping, got %s", tv_type_name(v));
	const char *b = need_cstr(rt, a, by, "dictsort by");
	if (strcmp(b, "key") && strcmp(b, "value"))
		tpl_fail(rt->c, a->line, a->col, "You can only sort by either \"key\" or \"value\"");
	struct tval out = pairs(rt, v.u.d);
	struct tval *keys = tpl_alloc(rt->c, (v.u.d->n + 1) * sizeof *keys);
	for (size_t i = 0; i < v.u.d->n; i++)
		keys[i] = sort_key(rt, b[0] == 'k' ? v.u.d->k[i] : v.u.d->v[i], cs);
	merge_sort(rt, a, out.u.l->v, keys, v.u.d->n, reverse);
	return out;
}

static struct tval f_indent(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "indent", 3, "width,first,blank");
	struct tval width = targ(a, 0, "width", tv_int(4));
	bool first = tv_truthy(targ(a, 1, "first", tv_bool(false)));
	bool blank = tv_truthy(targ(a, 2, "blank", tv_bool(false)));
	struct tpl_buf ind = {0};
	tpl_buf_put(rt->c, &ind, "", 0);
	if (width.kind == TV_STR) {
		tpl_buf_put(rt->c, &ind, width.u.s->s, width.u.s->len);
	} else {
		int64_t w = need_int(rt, a, width, "indent width");
		for (int64_t i = 0; i < w && i < 4096; i++)
			tpl_buf_put(rt->c, &ind, " ", 1);
	}
	const struct tstr *s = tv_to_str(rt->c, v).u.s;
	struct tpl_buf b = {0};
	tpl_buf_put(rt->c, &b, "", 0);
	if (first)
		tpl_buf_put(rt->c, &b, ind.p, ind.n);
	/* lines as Python's splitlines of s + "\n": a final line break adds
	 * no empty line; every line after the first is indented unless it is
	 * empty and blank is off */
	size_t i = 0, line = 0;
	while (i < s->len) {
		size_t e = i;
		while (e < s->len && s->s[e] != '\n' && s->s[e] != '\r')
			e++;
		if (line++) {
			tpl_buf_put(rt->c, &b, "\n", 1);
			if (e > i || blank)
				tpl_buf_put(rt->c, &b, ind.p, ind.n);
		}
		tpl_buf_put(rt->c, &b, s->s + i, e - i);
		if (e < s->len && s->s[e] == '\r' && e + 1 < s->len && s->s[e + 1] == '\n')
			e++;
		i = e + 1;
	}
	if (s->len && (s->s[s->len - 1] == '\n' || s->s[s->len - 1] == '\r')) {
		tpl_buf_put(rt->c, &b, "\n", 1); /* the empty line after it */
		if (blank)
			tpl_buf_put(rt->c, &b, ind.p, ind.n);
	}
	return tv_str(rt->c, b.p, b.n);
}

static struct tval f_wordcount(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "wordcount", 0, NULL);
	const struct tstr *s = tv_to_str(rt->c, v).u.s;
	int64_t n = 0;
	bool in = false;
	for (size_t i = 0; i < s->len; i++) {
		unsigned char ch = (unsigned char)s->s[i];
		bool w = ch >= 0x80 || ch == '_' || (ch >= '0' && ch <= '9') ||
			 ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z');
		n += w && !in;
		in = w;
	}
	return tv_int(n);
}

static struct tval f_abs(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "abs", 0, NULL);
	if (v.kind == TV_FLOAT)
		return tv_float(fabs(v.u.f));
	int64_t i = need_int(rt, a, v, "abs");
	if (i == INT64_MIN)
		tpl_fail(rt->c, a->line, a->col, "integer overflow (belt's integers are 64-bit)");
	return tv_int(i < 0 ? -i : i);
}

static struct tval f_reverse(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "reverse", 0, NULL);
	struct tlist *l = tpl_iterate(rt, a->line, a->col, v);
	if (v.kind == TV_STR) {
		struct tpl_buf b = {0};
		tpl_buf_put(rt->c, &b, "", 0);
		for (size_t i = l->n; i-- > 0;)
			tpl_buf_put(rt->c, &b, l->v[i].u.s->s, l->v[i].u.s->len);
		return tv_str(rt->c, b.p, b.n);
	}
	struct tval out = tv_list(rt->c, l->n);
	for (size_t i = l->n; i-- > 0;)
		tv_list_push(rt->c, out.u.l, l->v[i]);
	return out;
}

static struct tval f_attr(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "attr", 1, NULL);
	return tpl_getattr(rt, a->line, a->col, v, need_cstr(rt, a, targ(a, 0, NULL, tv_none), "attr"));
}

static const struct {
	const char *name;
	filter_fn fn;
} filters[] = {
	{"abs", f_abs},
	{"attr", f_attr},
	{"capitalize", f_capitalize},
	{"count", f_length},
	{"d", f_default},
	{"default", f_default},
	{"dictsort", f_dictsort},
	{"e", f_escape},
	{"escape", f_escape},
	{"first", f_first},
	{"float", f_float},
	{"indent", f_indent},
	{"int", f_int},
	{"items", f_items},
	{"join", f_join},
	{"last", f_last},
	{"length", f_length},
	{"list", f_list},
	{"lower", f_lower},
	{"map", f_map},
	{"reject", f_reject},
	{"rejectattr", f_rejectattr},
	{"replace", f_replace},
	{"reverse", f_reverse},
	{"round", f_round},
	{"safe", f_safe},
	{"select", f_select},
	{"selectattr", f_selectattr},
	{"sort", f_sort},
	{"string", f_string},
	{"title", f_title},
	{"tojson", f_tojson},
	{"trim", f_trim},
	{"unique", f_unique},
	{"upper", f_upper},
	{"wordcount", f_wordcount},
};

bool tpl_filter_exists(const char *name)
{
	for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
		if (!strcmp(filters[i].name, name))
			return true;
	return false;
}

bool tpl_filter(struct tpl_rt *rt, const char *name, struct tval v, struct targs *a,
		struct tval *out)
{
	for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
		if (!strcmp(filters[i].name, name)) {
			*out = filters[i].fn(rt, v, a);
			return true;
		}
	return false;
}
