/* The global functions: Jinja's range, namespace and dict, and the two
 * transformers adds, raise_exception and strftime_now. */
#include <string.h>
#include <time.h>

#include "template/tpl.h"

enum { G_RANGE, G_NAMESPACE, G_DICT, G_RAISE, G_STRFTIME, G_COUNT };
static const char *const names[G_COUNT] = {"range", "namespace", "dict", "raise_exception",
					   "strftime_now"};

int tpl_global_find(const char *name)
{
	for (int i = 0; i < G_COUNT; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

const char *tpl_global_name(int fn)
{
	return fn >= 0 && fn < G_COUNT ? names[fn] : "?";
}

static struct tval range(struct tpl_rt *rt, struct targs *a)
{
	targ_check(rt, a, "range", 3, NULL);
	int64_t v[3] = {0, 0, 1};
	if (a->n < 1)
		tpl_fail(rt->c, a->line, a->col, "range expected at least 1 argument, got 0");
	for (size_t i = 0; i < a->n; i++) {
		struct tval x = a->v[i];
		if (x.kind != TV_INT && x.kind != TV_BOOL)
			tpl_fail(rt->c, a->line, a->col,
				 "'%s' object cannot be interpreted as an integer", tv_type_name(x));
		v[a->n == 1 ? 1 : i] = x.kind == TV_INT ? x.u.i : x.u.b;
	}
	if (v[2] == 0)
		tpl_fail(rt->c, a->line, a->col, "range() arg 3 must not be zero");
	/* the number of items, computed without overflow */
	uint64_t span = v[2] > 0 ? (uint64_t)v[1] - (uint64_t)v[0] : (uint64_t)v[0] - (uint64_t)v[1];
	uint64_t step = v[2] > 0 ? (uint64_t)v[2] : 0 - (uint64_t)v[2];
	bool empty = v[2] > 0 ? v[1] <= v[0] : v[1] >= v[0];
	uint64_t n = empty ? 0 : span / step + (span % step != 0);
	if (n > rt->lim.max_steps)
		tpl_fail(rt->c, a->line, a->col, "range of more than %llu items",
			 (unsigned long long)rt->lim.max_steps);
	struct tval l = tv_list(rt->c, (size_t)n);
	for (uint64_t i = 0; i < n; i++)
		tv_list_push(rt->c, l.u.l, tv_int((int64_t)((uint64_t)v[0] + i * (uint64_t)v[2])));
	rt->steps += n;
	return l;
}

/* namespace(mapping?, **kw) and dict(mapping?, **kw). */
static struct tval mapping(struct tpl_rt *rt, struct targs *a, bool ns)
{
	const char *what = ns ? "namespace" : "dict";
	targ_check(rt, a, what, 1, "*");
	struct tval d = tv_dict(rt->c, a->nkw);
	if (a->n) {
		struct tval init = a->v[0];
		if (init.kind == TV_DICT || init.kind == TV_NS) {
			for (size_t i = 0; i < init.u.d->n; i++)
				tv_dict_set(rt->c, d.u.d, init.u.d->k[i], init.u.d->v[i]);
		} else {
			struct tlist *l = tpl_iterate(rt, a->line, a->col, init);
			for (size_t i = 0; i < l->n; i++) {
				struct tlist *kv = tpl_iterate(rt, a->line, a->col, l->v[i]);
				if (kv->n != 2)
					tpl_fail(rt->c, a->line, a->col,
						 "%s: each item must be a key and a value", what);
				tv_dict_set(rt->c, d.u.d, kv->v[0], kv->v[1]);
			}
		}
	}
	for (size_t i = 0; i < a->nkw; i++)
		tv_dict_set(rt->c, d.u.d, tv_cstr(rt->c, a->kwnames[i]), a->kwvals[i]);
	if (ns)
		d.kind = TV_NS;
	return d;
}

static struct tval strftime_now(struct tpl_rt *rt, struct targs *a)
{
	targ_check(rt, a, "strftime_now", 1, NULL);
	if (a->n < 1 || a->v[0].kind != TV_STR)
		tpl_fail(rt->c, a->line, a->col, "strftime_now expects a format string");
	struct tm tm;
	if (rt->now) {
		tm = *rt->now;
	} else {
		time_t t = time(NULL);
		localtime_r(&t, &tm);
	}
	char out[1024];
	size_t n = a->v[0].u.s->len ? strftime(out, sizeof out, tpl_cstr(rt->c, a->v[0].u.s), &tm) : 0;
	if (!n && a->v[0].u.s->len)
		tpl_fail(rt->c, a->line, a->col, "strftime_now: the format gives no text or too much");
	return tv_str(rt->c, out, n);
}

struct tval tpl_global_call(struct tpl_rt *rt, int fn, struct targs *a)
{
	switch (fn) {
	case G_RANGE: return range(rt, a);
	case G_NAMESPACE: return mapping(rt, a, true);
	case G_DICT: return mapping(rt, a, false);
	case G_RAISE: {
		targ_check(rt, a, "raise_exception", 1, NULL);
		struct tval msg = tv_to_str(rt->c, targ(a, 0, NULL, tv_str(rt->c, "", 0)));
		tpl_fail(rt->c, a->line, a->col, "%s", tpl_cstr(rt->c, msg.u.s));
	}
	default: return strftime_now(rt, a);
	}
}
