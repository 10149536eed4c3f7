/* Python's methods of str, dict and list that templates call. Methods
 * that would modify a list or dict are refused, as transformers'
 * immutable sandbox refuses them (namespace attributes are the one thing
 * a template can change). */
#include <string.h>

#include "template/tpl.h"

static const char *const str_methods[] = {
	"capitalize", "count",	 "endswith", "find",	"index",     "isalnum",	 "isalpha",
	"isdigit",    "islower", "isspace",  "isupper", "join",	     "lower",	 "lstrip",
	"replace",    "rfind",	 "rsplit",   "rstrip",	"split",     "splitlines", "startswith",
	"strip",      "title",	 "upper",    NULL};
static const char *const dict_methods[] = {"get", "items", "keys", "values", NULL};
static const char *const dict_mutating[] = {"clear", "pop", "popitem", "setdefault", "update",
					    NULL};
static const char *const list_methods[] = {"count", "index", NULL};
static const char *const list_mutating[] = {"append", "clear", "extend", "insert", "pop",
					    "remove", "reverse", "sort", NULL};

static bool listed(const char *const *names, const char *name)
{
	for (; *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

bool tpl_method_lookup(struct tpl_rt *rt, struct tval obj, const char *name, struct tval *out)
{
	const char *const *safe = obj.kind == TV_STR			       ? str_methods
				  : obj.kind == TV_DICT			       ? dict_methods
				  : obj.kind == TV_LIST && !obj.u.l->gen ? list_methods
									 : NULL;
	const char *const *unsafe = obj.kind == TV_DICT ? dict_mutating
				    : obj.kind == TV_LIST && !obj.u.l->tuple && !obj.u.l->gen ? list_mutating
											       : NULL;
	if (unsafe && listed(unsafe, name)) {
		*out = tv_undeff(rt->c, "access to attribute '%s' of '%s' object is unsafe.", name,
				 tv_type_name(obj));
		return true;
	}
	if (!safe || !listed(safe, name))
		return false;
	struct tmethod *m = tpl_alloc(rt->c, sizeof *m);
	m->self = obj;
	m->name = name;
	*out = (struct tval){.kind = TV_METHOD, .u.meth = m};
	return true;
}

static const struct tstr *str_arg(struct tpl_rt *rt, struct targs *a, struct tval v, const char *m)
{
	if (v.kind != TV_STR)
		tpl_fail(rt->c, a->line, a->col, "str.%s: expected a string argument, got %s", m,
			 tv_type_name(v));
	return v.u.s;
}

/* startswith/endswith of one string or a tuple of them. */
static bool affix(struct tpl_rt *rt, struct targs *a, const struct tstr *s, struct tval x, bool end)
{
	if (x.kind == TV_LIST && x.u.l->tuple) {
		for (size_t i = 0; i < x.u.l->n; i++)
			if (affix(rt, a, s, x.u.l->v[i], end))
				return true;
		return false;
	}
	const struct tstr *p = str_arg(rt, a, x, end ? "endswith" : "startswith");
	return p->len <= s->len && !memcmp(s->s + (end ? s->len - p->len : 0), p->s, p->len);
}

static bool all_chars(const struct tstr *s, int (*pred)(int))
{
	if (!s->len)
		return false;
	for (size_t i = 0; i < s->len; i++)
		if (!pred((unsigned char)s->s[i]))
			return false;
	return true;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
	return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c >= 0x80;
}

static int is_alnum(int c)
{
	return is_digit(c) || is_alpha(c);
}

static struct tval str_call(struct tpl_rt *rt, const struct tstr *s, const char *m, struct targs *a)
{
	struct tpl_ctx *c = rt->c;
	struct tval none = tv_none;
	if (!strcmp(m, "upper") || !strcmp(m, "lower") || !strcmp(m, "title") ||
	    !strcmp(m, "capitalize")) {
		targ_check(rt, a, m, 0, NULL);
		return tpl_case(c, s, m[0] == 'u' ? TPL_UPPER : m[0] == 'l' ? TPL_LOWER
							: m[0] == 't' ? TPL_TITLE
								      : TPL_CAPITALIZE);
	}
	if (!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip")) {
		targ_check(rt, a, m, 1, "chars");
		struct tval chars = targ(a, 0, "chars", none);
		return tpl_strip(c, s, chars.kind == TV_NONE ? NULL : str_arg(rt, a, chars, m),
				 m[0] != 'r', m[0] != 'l');
	}
	if (!strcmp(m, "split") || !strcmp(m, "rsplit")) {
		targ_check(rt, a, m, 2, "sep,maxsplit");
		struct tval sep = targ(a, 0, "sep", none), max = targ(a, 1, "maxsplit", tv_int(-1));
		const struct tstr *sp = sep.kind == TV_NONE ? NULL : str_arg(rt, a, sep, m);
		if (sp && !sp->len)
			tpl_fail(c, a->line, a->col, "empty separator");
		if (max.kind != TV_INT)
			tpl_fail(c, a->line, a->col, "str.%s: maxsplit must be an integer", m);
		return tpl_split(c, s, sp, max.u.i, m[0] == 'r');
	}
	if (!strcmp(m, "replace")) {
		targ_check(rt, a, m, 3, "count");
		struct tval count = targ(a, 2, "count", tv_int(-1));
		if (a->n < 2 || count.kind != TV_INT)
			tpl_fail(c, a->line, a->col, "str.replace takes old, new and an optional count");
		return tpl_replace(c, s, str_arg(rt, a, a->v[0], m), str_arg(rt, a, a->v[1], m),
				   count.u.i);
	}
	if (!strcmp(m, "startswith") || !strcmp(m, "endswith")) {
		targ_check(rt, a, m, 1, NULL);
		if (a->n < 1)
			tpl_fail(c, a->line, a->col, "str.%s takes one argument", m);
		return tv_bool(affix(rt, a, s, a->v[0], m[0] == 'e'));
	}
	if (!strcmp(m, "find") || !strcmp(m, "rfind") || !strcmp(m, "index") || !strcmp(m, "count")) {
		targ_check(rt, a, m, 1, NULL);
		if (a->n < 1)
			tpl_fail(c, a->line, a->col, "str.%s takes one argument", m);
		const struct tstr *x = str_arg(rt, a, a->v[0], m);
		if (m[0] == 'c')
			return tv_int((int64_t)tpl_count(s, x));
		int64_t at = tpl_find(s, x, m[0] == 'r');
		if (at < 0 && m[0] == 'i')
			tpl_fail(c, a->line, a->col, "substring not found");
		return tv_int(at);
	}
	if (!strcmp(m, "join")) {
		targ_check(rt, a, m, 1, NULL);
		if (a->n < 1)
			tpl_fail(c, a->line, a->col, "str.join takes one argument");
		struct tlist *l = tpl_iterate(rt, a->line, a->col, a->v[0]);
		struct tpl_buf b = {0};
		tpl_buf_put(c, &b, "", 0);
		for (size_t i = 0; i < l->n; i++) {
			const struct tstr *x = str_arg(rt, a, l->v[i], m);
			if (i)
				tpl_buf_put(c, &b, s->s, s->len);
			tpl_buf_put(c, &b, x->s, x->len);
		}
		return tv_str(c, b.p, b.n);
	}
	if (!strcmp(m, "splitlines")) {
		targ_check(rt, a, m, 0, NULL);
		struct tval l = tv_list(c, 0);
		for (size_t i = 0; i < s->len;) {
			size_t e = i;
			while (e < s->len && s->s[e] != '\n' && s->s[e] != '\r')
				e++;
			tv_list_push(c, l.u.l, tv_str(c, s->s + i, e - i));
			if (e + 1 < s->len && s->s[e] == '\r' && s->s[e + 1] == '\n')
				e++;
			i = e + 1;
		}
		return l;
	}
	targ_check(rt, a, m, 0, NULL);
	if (!strcmp(m, "isdigit"))
		return tv_bool(all_chars(s, is_digit));
	if (!strcmp(m, "isalpha"))
		return tv_bool(all_chars(s, is_alpha));
	if (!strcmp(m, "isalnum"))
		return tv_bool(all_chars(s, is_alnum));
	if (!strcmp(m, "isspace")) {
		size_t l;
		bool all = s->len > 0;
		for (size_t i = 0; i < s->len && all; i += l)
			all = tpl_is_space(s->s + i, s->len - i, &l);
		return tv_bool(all);
	}
	/* islower / isupper: some cased character, and none of the other case */
	struct tval low = tpl_case(c, s, TPL_LOWER), up = tpl_case(c, s, TPL_UPPER);
	bool lower = tv_equal(tv_str(c, s->s, s->len), low), upper = tv_equal(tv_str(c, s->s, s->len), up);
	return tv_bool(m[2] == 'l' ? lower && !upper : upper && !lower);
}

static struct tval dict_call(struct tpl_rt *rt, struct tdict *d, const char *m, struct targs *a)
{
	struct tpl_ctx *c = rt->c;
	if (!strcmp(m, "get")) {
		targ_check(rt, a, m, 2, NULL);
		if (a->n < 1)
			tpl_fail(c, a->line, a->col, "dict.get takes a key and an optional default");
		struct tval *v = tv_dict_get(d, a->v[0]);
		return v ? *v : a->n > 1 ? a->v[1] : tv_none;
	}
	targ_check(rt, a, m, 0, NULL);
	struct tval l = tv_list(c, d->n);
	for (size_t i = 0; i < d->n; i++) {
		struct tval x = d->v[i];
		if (m[0] == 'k') {
			x = d->k[i];
		} else if (m[0] == 'i') {
			x = tv_list(c, 2);
			x.u.l->tuple = true;
			tv_list_push(c, x.u.l, d->k[i]);
			tv_list_push(c, x.u.l, d->v[i]);
		}
		tv_list_push(c, l.u.l, x);
	}
	return l;
}

static struct tval list_call(struct tpl_rt *rt, struct tlist *l, const char *m, struct targs *a)
{
	targ_check(rt, a, m, 1, NULL);
	if (a->n < 1)
		tpl_fail(rt->c, a->line, a->col, "list.%s takes one argument", m);
	int64_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (tv_equal(l->v[i], a->v[0])) {
			if (m[0] == 'i')
				return tv_int((int64_t)i);
			n++;
		}
	if (m[0] == 'i')
		tpl_fail(rt->c, a->line, a->col, "list.index(x): x not in list");
	return tv_int(n);
}

struct tval tpl_method_call(struct tpl_rt *rt, const struct tmethod *m, struct targs *a)
{
	switch (m->self.kind) {
	case TV_STR: return str_call(rt, m->self.u.s, m->name, a);
	case TV_DICT: return dict_call(rt, m->self.u.d, m->name, a);
	default: return list_call(rt, m->self.u.l, m->name, a);
	}
}
