/* Jinja's tests ("x is defined", "x is not none", "x is in y"), with
 * Python's types: a bool is a number but not an integer test's int. */
#include <string.h>

#include "template/tpl.h"

typedef bool (*test_fn)(struct tpl_rt *rt, struct tval v, struct targs *a);

static struct tval arg1(struct tpl_rt *rt, struct targs *a, const char *what)
{
	targ_check(rt, a, what, 1, NULL);
	if (a->n < 1)
		tpl_fail(rt->c, a->line, a->col, "the test '%s' needs an argument", what);
	return a->v[0];
}

static bool t_defined(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "defined", 0, NULL);
	return v.kind != TV_UNDEF;
}

static bool t_undefined(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return !t_defined(rt, v, a);
}

static bool t_none(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "none", 0, NULL);
	return v.kind == TV_NONE;
}

static bool t_string(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "string", 0, NULL);
	return v.kind == TV_STR;
}

static bool t_mapping(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "mapping", 0, NULL);
	return v.kind == TV_DICT;
}

static bool t_iterable(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "iterable", 0, NULL);
	return v.kind == TV_UNDEF || v.kind == TV_STR || v.kind == TV_LIST || v.kind == TV_DICT;
}

static bool t_sequence(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "sequence", 0, NULL);
	return v.kind == TV_UNDEF || v.kind == TV_STR || (v.kind == TV_LIST && !v.u.l->gen) ||
	       v.kind == TV_DICT;
}

static bool t_number(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "number", 0, NULL);
	return tv_is_num(v);
}

static bool t_integer(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "integer", 0, NULL);
	return v.kind == TV_INT;
}

static bool t_float(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "float", 0, NULL);
	return v.kind == TV_FLOAT;
}

static bool t_boolean(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "boolean", 0, NULL);
	return v.kind == TV_BOOL;
}

static bool t_true(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "true", 0, NULL);
	return v.kind == TV_BOOL && v.u.b;
}

static bool t_false(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "false", 0, NULL);
	return v.kind == TV_BOOL && !v.u.b;
}

static bool t_callable(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "callable", 0, NULL);
	return v.kind == TV_MACRO || v.kind == TV_FUNC || v.kind == TV_METHOD;
}

static bool t_eq(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return tv_equal(v, arg1(rt, a, "equalto"));
}

static bool t_ne(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return !tv_equal(v, arg1(rt, a, "ne"));
}

static int order(struct tpl_rt *rt, struct tval v, struct targs *a, const char *what)
{
	struct tval b = arg1(rt, a, what);
	if (v.kind == TV_UNDEF)
		tpl_undef_fail(rt, a->line, a->col, v);
	if (b.kind == TV_UNDEF)
		tpl_undef_fail(rt, a->line, a->col, b);
	return tv_compare(rt->c, a->line, a->col, v, b);
}

static bool t_lt(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return order(rt, v, a, "lt") < 0;
}

static bool t_le(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return order(rt, v, a, "le") <= 0;
}

static bool t_gt(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return order(rt, v, a, "gt") > 0;
}

static bool t_ge(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	return order(rt, v, a, "ge") >= 0;
}

static bool t_in(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	struct tval hay = arg1(rt, a, "in");
	if (hay.kind == TV_STR) {
		if (v.kind != TV_STR)
			tpl_fail(rt->c, a->line, a->col,
				 "'in <string>' requires string as left operand, not %s", tv_type_name(v));
		return !v.u.s->len || memmem(hay.u.s->s, hay.u.s->len, v.u.s->s, v.u.s->len);
	}
	if (hay.kind == TV_DICT)
		return tv_dict_get(hay.u.d, v) != NULL;
	struct tlist *l = tpl_iterate(rt, a->line, a->col, hay);
	for (size_t i = 0; i < l->n; i++)
		if (tv_equal(l->v[i], v))
			return true;
	return false;
}

static int64_t integer(struct tpl_rt *rt, struct tval v, struct targs *a, const char *what)
{
	if (v.kind != TV_INT && v.kind != TV_BOOL)
		tpl_fail(rt->c, a->line, a->col, "the test '%s' needs an integer, got %s", what,
			 tv_type_name(v));
	return v.kind == TV_INT ? v.u.i : v.u.b;
}

static bool t_odd(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "odd", 0, NULL);
	return integer(rt, v, a, "odd") % 2 != 0;
}

static bool t_even(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "even", 0, NULL);
	return integer(rt, v, a, "even") % 2 == 0;
}

static bool t_divisibleby(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	int64_t d = integer(rt, arg1(rt, a, "divisibleby"), a, "divisibleby");
	if (d == 0)
		tpl_fail(rt->c, a->line, a->col, "integer division or modulo by zero");
	return d == -1 || integer(rt, v, a, "divisibleby") % d == 0;
}

static bool t_lower(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "lower", 0, NULL);
	struct tval s = tv_to_str(rt->c, v);
	return tv_equal(s, tpl_case(rt->c, s.u.s, TPL_LOWER));
}

static bool t_upper(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "upper", 0, NULL);
	struct tval s = tv_to_str(rt->c, v);
	return tv_equal(s, tpl_case(rt->c, s.u.s, TPL_UPPER));
}

static bool t_sameas(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	struct tval b = arg1(rt, a, "sameas");
	if (v.kind != b.kind)
		return false;
	switch (v.kind) {
	case TV_NONE:
	case TV_UNDEF: return true;
	case TV_BOOL: return v.u.b == b.u.b;
	case TV_INT: return v.u.i == b.u.i;
	case TV_STR: return v.u.s == b.u.s;
	case TV_LIST: return v.u.l == b.u.l;
	case TV_DICT:
	case TV_NS: return v.u.d == b.u.d;
	default: return tv_equal(v, b);
	}
}

static bool t_filter(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "filter", 0, NULL);
	return v.kind == TV_STR && tpl_filter_exists(tpl_cstr(rt->c, v.u.s));
}

static bool t_test(struct tpl_rt *rt, struct tval v, struct targs *a)
{
	targ_check(rt, a, "test", 0, NULL);
	return v.kind == TV_STR && tpl_test_exists(tpl_cstr(rt->c, v.u.s));
}

static const struct {
	const char *name;
	test_fn fn;
} tests[] = {
	{"!=", t_ne},
	{"<", t_lt},
	{"<=", t_le},
	{"==", t_eq},
	{">", t_gt},
	{">=", t_ge},
	{"boolean", t_boolean},
	{"callable", t_callable},
	{"defined", t_defined},
	{"divisibleby", t_divisibleby},
	{"eq", t_eq},
	{"equalto", t_eq},
	{"even", t_even},
	{"false", t_false},
	{"filter", t_filter},
	{"float", t_float},
	{"ge", t_ge},
	{"greaterthan", t_gt},
	{"gt", t_gt},
	{"in", t_in},
	{"integer", t_integer},
	{"iterable", t_iterable},
	{"le", t_le},
	{"lessthan", t_lt},
	{"lower", t_lower},
	{"lt", t_lt},
	{"mapping", t_mapping},
	{"ne", t_ne},
	{"none", t_none},
	{"number", t_number},
	{"odd", t_odd},
	{"sameas", t_sameas},
	{"sequence", t_sequence},
	{"string", t_string},
	{"test", t_test},
	{"true", t_true},
	{"undefined", t_undefined},
	{"upper", t_upper},
};

bool tpl_test_exists(const char *name)
{
	for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
		if (!strcmp(tests[i].name, name))
			return true;
	return false;
}

bool tpl_test(struct tpl_rt *rt, const char *name, struct tval v, struct targs *a, bool *out)
{
	for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
		if (!strcmp(tests[i].name, name)) {
			*out = tests[i].fn(rt, v, a);
			return true;
		}
	return false;
}
