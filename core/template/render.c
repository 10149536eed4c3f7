/* Statements (text, output, if, for, set, macro, filter and generation
 * blocks, loop controls) and the public calls: compile, render, free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "belt/error.h"
#include "template/tpl.h"

struct belt_template {
	struct tpl_ctx *c; /* the arena holding the tree */
	struct tnode *root;
};

#define MAX_FRAMES 3000

/* Bind a for or set target (a name or a tuple of names) to v. */
static void assign(struct tpl_rt *rt, struct tscope *s, const struct tnode *target, struct tval v)
{
	if (target->kind == N_NAME) {
		tpl_scope_set(rt, s, target->name, v);
		return;
	}
	if (target->kind == N_ATTR) {
		struct tval ns = tpl_lookup(rt, s, target->a->name);
		if (ns.kind != TV_NS)
			tpl_fail(rt->c, target->line, target->col,
				 "cannot assign attribute on non-namespace object");
		tv_dict_set(rt->c, ns.u.d, tv_cstr(rt->c, target->name), v);
		return;
	}
	struct tlist *items = tpl_iterate(rt, target->line, target->col, v);
	if (items->n != target->n)
		tpl_fail(rt->c, target->line, target->col, "%s values to unpack (expected %zu, got %zu)",
			 items->n < target->n ? "not enough" : "too many", target->n, items->n);
	for (size_t i = 0; i < target->n; i++)
		assign(rt, s, target->args[i], items->v[i]);
}

static struct tval apply_filters(struct tpl_rt *rt, struct tscope *s, const struct tnode *n,
				 struct tval v)
{
	for (size_t i = 0; i < n->n; i++) {
		const struct tnode *f = n->args[i];
		struct targs a = {.n = f->n, .nkw = f->nkw, .line = f->line, .col = f->col};
		a.v = f->n ? tpl_alloc(rt->c, f->n * sizeof *a.v) : NULL;
		for (size_t k = 0; k < f->n; k++)
			a.v[k] = tpl_eval(rt, s, f->args[k]);
		a.kwnames = f->kwnames;
		a.kwvals = f->nkw ? tpl_alloc(rt->c, f->nkw * sizeof *a.kwvals) : NULL;
		for (size_t k = 0; k < f->nkw; k++)
			a.kwvals[k] = tpl_eval(rt, s, f->kwvals[k]);
		if (!tpl_filter(rt, f->name, v, &a, &v))
			tpl_fail(rt->c, f->line, f->col, "no filter named '%s'", f->name);
	}
	return v;
}

static void exec_for(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	struct tlist *all = tpl_iterate(rt, n->b->line, n->b->col, tpl_eval(rt, s, n->b)), *items = all;
	/* one scope for every turn, emptied each time: what a turn sets is
	 * gone at the next, as in Jinja, and a long loop costs no memory */
	struct tscope *it = tpl_scope_new(rt, s);
	if (n->c) { /* "for x in y if cond": loop.* count what passes */
		items = tv_list(rt->c, all->n).u.l;
		for (size_t i = 0; i < all->n; i++) {
			tpl_step(rt, n);
			it->n = 0;
			assign(rt, it, n->a, all->v[i]);
			if (tv_truthy(tpl_eval(rt, it, n->c)))
				tv_list_push(rt->c, items, all->v[i]);
		}
	}
	if (!items->n) {
		if (n->e)
			tpl_exec(rt, tpl_scope_new(rt, s), n->e);
		return;
	}
	struct tloop *loop = tpl_alloc(rt->c, sizeof *loop);
	loop->items = items;
	for (size_t i = 0; i < items->n; i++) {
		tpl_step(rt, n);
		it->n = 0;
		loop->i = i;
		tpl_scope_set(rt, it, "loop", (struct tval){.kind = TV_LOOP, .u.loop = loop});
		assign(rt, it, n->a, items->v[i]);
		if (tpl_exec(rt, it, n->d) == TPL_BREAK)
			break;
	}
}

static int exec_stmt(struct tpl_rt *rt, struct tscope *s, const struct tnode *n)
{
	switch (n->kind) {
	case S_TEXT: tpl_buf_put(rt->c, rt->out, n->val.u.s->s, n->val.u.s->len); return 0;
	case S_OUTPUT: tv_print(rt->c, rt->out, tpl_eval(rt, s, n->a)); return 0;
	case S_IF:
		for (; n && n->kind == S_IF; n = n->c)
			if (tv_truthy(tpl_eval(rt, s, n->a)))
				return tpl_exec(rt, s, n->b);
		return n ? tpl_exec(rt, s, n) : 0;
	case S_FOR: exec_for(rt, s, n); return 0;
	case S_SET: assign(rt, s, n->a, tpl_eval(rt, s, n->b)); return 0;
	case S_SETBLOCK:
		assign(rt, s, n->a, apply_filters(rt, s, n, tpl_capture(rt, s, n->d)));
		return 0;
	case S_MACRO: {
		struct tmacro *m = tpl_alloc(rt->c, sizeof *m);
		m->def = n;
		m->closure = s;
		tpl_scope_set(rt, s, n->name, (struct tval){.kind = TV_MACRO, .u.m = m});
		return 0;
	}
	case S_BREAK: return TPL_BREAK;
	case S_CONTINUE: return TPL_CONTINUE;
	case S_FILTERBLOCK:
		tv_print(rt->c, rt->out, apply_filters(rt, s, n, tpl_capture(rt, s, n->d)));
		return 0;
	case S_GENERATION: return tpl_exec(rt, s, n->d);
	case S_BODY: return tpl_exec(rt, s, n);
	default: tpl_fail(rt->c, n->line, n->col, "not a statement");
	}
}

int tpl_exec(struct tpl_rt *rt, struct tscope *s, const struct tnode *body)
{
	if (++rt->frames > MAX_FRAMES)
		tpl_fail(rt->c, body->line, body->col, "blocks nested deeper than %d levels", MAX_FRAMES);
	int r = 0;
	for (size_t i = 0; i < body->n && !r; i++) {
		tpl_step(rt, body->args[i]);
		r = exec_stmt(rt, s, body->args[i]);
	}
	rt->frames--;
	return r;
}

struct tval tpl_capture(struct tpl_rt *rt, struct tscope *s, const struct tnode *body)
{
	struct tpl_buf b = {.max = rt->lim.max_output}, *saved = rt->out;
	tpl_buf_put(rt->c, &b, "", 0);
	rt->out = &b;
	tpl_exec(rt, s, body);
	rt->out = saved;
	return tv_str(rt->c, b.p, b.n);
}

void belt_template_options_default(struct belt_template_options *o)
{
	*o = (struct belt_template_options){0};
}

static struct tpl_ctx *new_ctx(char *err, size_t errsz, size_t cap)
{
	struct tpl_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		if (err && errsz)
			snprintf(err, errsz, "out of memory");
		return NULL;
	}
	c->err = err;
	c->errsz = errsz;
	c->cap = cap;
	return c;
}

int belt_template_compile(const char *text, size_t len, struct belt_template **out, char *err,
			  size_t errsz)
{
	*out = NULL;
	struct belt_template *t = calloc(1, sizeof *t);
	struct tpl_ctx *c = new_ctx(err, errsz, (size_t)1 << 30);
	if (!t || !c) {
		free(t);
		free(c);
		return belt_errf(err, errsz, "out of memory");
	}
	if (setjmp(c->jb)) {
		tpl_arena_free(c);
		free(c);
		free(t);
		return -1;
	}
	size_t n;
	struct tpl_token *toks = tpl_lex(c, text, len, &n);
	t->root = tpl_parse(c, toks, n);
	t->c = c;
	*out = t;
	return 0;
}

int belt_template_render(const struct belt_template *t, const json_t *vars,
			 const struct belt_template_options *opts, char **out, size_t *len,
			 char *err, size_t errsz)
{
	*out = NULL;
	struct belt_template_options o;
	if (opts)
		o = *opts;
	else
		belt_template_options_default(&o);
	struct belt_template_limits lim = o.limits;
	if (!lim.max_output)
		lim.max_output = (size_t)64 << 20;
	if (!lim.max_memory)
		lim.max_memory = (size_t)1 << 30;
	if (!lim.max_steps)
		lim.max_steps = 100000000;
	if (lim.max_depth <= 0)
		lim.max_depth = 200;
	if (!json_is_object(vars))
		return belt_errf(err, errsz, "the template variables must be a JSON object");
	struct tpl_ctx *c = new_ctx(err, errsz, lim.max_memory);
	struct tpl_rt *rt = c ? calloc(1, sizeof *rt) : NULL;
	if (!rt) {
		free(c);
		return belt_errf(err, errsz, "out of memory");
	}
	if (setjmp(c->jb)) {
		tpl_arena_free(c);
		free(c);
		free(rt);
		return -1;
	}
	rt->c = c;
	rt->lim = lim;
	rt->now = o.now;
	rt->globals = tpl_from_json(c, vars, 0).u.d;
	struct tpl_buf b = {.max = lim.max_output};
	tpl_buf_put(c, &b, "", 0);
	rt->out = &b;
	tpl_exec(rt, tpl_scope_new(rt, NULL), t->root);
	char *text = malloc(b.n + 1);
	if (!text)
		tpl_fail(c, 0, 0, "out of memory");
	memcpy(text, b.p, b.n + 1);
	if (len)
		*len = b.n;
	*out = text;
	tpl_arena_free(c);
	free(c);
	free(rt);
	return 0;
}

void belt_template_free(struct belt_template *t)
{
	if (!t)
		return;
	tpl_arena_free(t->c);
	free(t->c);
	free(t);
}
