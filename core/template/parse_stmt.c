/* The statement parser: template text, {{ output }} and the {% tags %}
 * chat templates use (if, for, set, macro, filter, generation, break,
 * continue). */
#include <string.h>

#include "template/tpl.h"

struct stmt_parser {
	struct tpl_parser p;
	int loops; /* enclosing for loops (break and continue need one) */
};

static void push_stmt(struct tpl_parser *p, struct tnode *body, struct tnode *s)
{
	if ((body->n & (body->n - 1)) == 0) {
		struct tnode **g = tpl_alloc(p->c, (body->n ? body->n * 2 : 1) * sizeof *g);
		if (body->n)
			memcpy(g, body->args, body->n * sizeof *g);
		body->args = g;
	}
	body->args[body->n++] = s;
}

static void block_end(struct tpl_parser *p)
{
	struct tpl_token *t = tpl_peek(p);
	if (t->kind != TK_BLOCK_END)
		tpl_parse_fail(p, "expected '%%}', got %s", tpl_describe(t));
	p->pos++;
}

static struct tnode *body(struct stmt_parser *sp, const char *const *ends, const char **ended);

/* A name, name.attr (set only) or names separated by commas. */
static struct tnode *target(struct tpl_parser *p, bool attr)
{
	struct tnode *t = tpl_node(p, N_TUPLE);
	bool paren = tpl_accept_op(p, "(");
	do {
		struct tnode *n = tpl_node(p, N_NAME);
		n->name = tpl_expect_name(p);
		if (attr && tpl_accept_op(p, ".")) {
			struct tnode *a = tpl_node(p, N_ATTR);
			a->name = tpl_expect_name(p);
			a->a = n;
			n = a;
		}
		push_stmt(p, t, n);
	} while (tpl_accept_op(p, ","));
	if (paren)
		tpl_expect_op(p, ")");
	return t->n == 1 ? t->args[0] : t;
}

static struct tnode *filters(struct tpl_parser *p, struct tnode *s)
{
	do {
		struct tnode *f = tpl_node(p, N_FILTER);
		f->name = tpl_expect_name(p);
		if (tpl_accept_op(p, "("))
			tpl_parse_args(p, f);
		push_stmt(p, s, f);
	} while (tpl_accept_op(p, "|"));
	return s;
}

static struct tnode *if_stmt(struct stmt_parser *sp, struct tnode *n)
{
	static const char *const ends[] = {"elif", "else", "endif", NULL};
	static const char *const endif[] = {"endif", NULL};
	struct tpl_parser *p = &sp->p;
	n->a = tpl_parse_expr(p, true, true);
	block_end(p);
	const char *ended;
	n->b = body(sp, ends, &ended);
	if (!strcmp(ended, "elif")) {
		n->c = tpl_node(p, S_IF);
		if_stmt(sp, n->c);
		return n;
	}
	block_end(p);
	if (!strcmp(ended, "else")) {
		n->c = body(sp, endif, &ended);
		block_end(p);
	}
	return n;
}

static struct tnode *for_stmt(struct stmt_parser *sp, struct tnode *n)
{
	static const char *const ends[] = {"else", "endfor", NULL};
	static const char *const endfor[] = {"endfor", NULL};
	struct tpl_parser *p = &sp->p;
	n->a = target(p, false);
	if (!tpl_is_name(tpl_peek(p), "in"))
		tpl_parse_fail(p, "expected 'in' in a for loop");
	p->pos++;
	n->b = tpl_parse_expr(p, true, false);
	if (tpl_is_name(tpl_peek(p), "if")) {
		p->pos++;
		n->c = tpl_parse_expr(p, false, true);
	}
	if (tpl_is_name(tpl_peek(p), "recursive"))
		tpl_parse_fail(p, "recursive for loops are not supported");
	block_end(p);
	const char *ended;
	sp->loops++;
	n->d = body(sp, ends, &ended);
	sp->loops--;
	block_end(p);
	if (!strcmp(ended, "else")) {
		n->e = body(sp, endfor, &ended);
		block_end(p);
	}
	return n;
}

static struct tnode *set_stmt(struct stmt_parser *sp, struct tnode *n)
{
	static const char *const endset[] = {"endset", NULL};
	struct tpl_parser *p = &sp->p;
	n->a = target(p, true);
	if (tpl_accept_op(p, "=")) {
		n->b = tpl_parse_expr(p, true, true);
		block_end(p);
		return n;
	}
	if (n->a->kind != N_NAME)
		tpl_parse_fail(p, "expected '=' after the names to set");
	n->kind = S_SETBLOCK;
	if (tpl_accept_op(p, "|"))
		filters(p, n);
	block_end(p);
	const char *ended;
	n->d = body(sp, endset, &ended);
	block_end(p);
	return n;
}

static struct tnode *macro_stmt(struct stmt_parser *sp, struct tnode *n)
{
	static const char *const endmacro[] = {"endmacro", NULL};
	struct tpl_parser *p = &sp->p;
	n->name = tpl_expect_name(p);
	tpl_expect_op(p, "(");
	bool defaults = false;
	while (!tpl_accept_op(p, ")")) {
		if (n->n)
			tpl_expect_op(p, ",");
		struct tnode *a = tpl_node(p, N_NAME);
		a->name = tpl_expect_name(p);
		if (tpl_accept_op(p, "=")) {
			a->a = tpl_parse_expr(p, false, true);
			defaults = true;
		} else if (defaults) {
			tpl_parse_fail(p, "a parameter without a default after one with a default");
		}
		push_stmt(p, n, a);
	}
	block_end(p);
	const char *ended;
	int loops = sp->loops;
	sp->loops = 0;
	n->d = body(sp, endmacro, &ended);
	sp->loops = loops;
	if (tpl_peek(p)->kind == TK_NAME) /* {% endmacro name %} */
		p->pos++;
	block_end(p);
	return n;
}

/* The statement after "{%"; NULL if it is one of ends (*ended names it,
 * and the parser stands after the name). */
static struct tnode *statement(struct stmt_parser *sp, const char *const *ends,
			       const char **ended)
{
	static const char *const endfilter[] = {"endfilter", NULL};
	static const char *const endgeneration[] = {"endgeneration", NULL};
	struct tpl_parser *p = &sp->p;
	struct tpl_token *t = tpl_peek(p);
	if (t->kind != TK_NAME)
		tpl_parse_fail(p, "expected a statement name after '{%%'");
	for (size_t i = 0; ends && ends[i]; i++)
		if (!strcmp(t->text, ends[i])) {
			p->pos++;
			*ended = ends[i];
			return NULL;
		}
	const char *name = t->text;
	struct tnode *n = tpl_node(p, S_BODY);
	p->pos++;
	const char *sub;
	if (!strcmp(name, "if")) {
		n->kind = S_IF;
		return if_stmt(sp, n);
	}
	if (!strcmp(name, "for")) {
		n->kind = S_FOR;
		return for_stmt(sp, n);
	}
	if (!strcmp(name, "set")) {
		n->kind = S_SET;
		return set_stmt(sp, n);
	}
	if (!strcmp(name, "macro")) {
		n->kind = S_MACRO;
		return macro_stmt(sp, n);
	}
	if (!strcmp(name, "break") || !strcmp(name, "continue")) {
		if (!sp->loops) {
			p->pos--;
			tpl_parse_fail(p, "'%s' outside a for loop", name);
		}
		n->kind = name[0] == 'b' ? S_BREAK : S_CONTINUE;
		block_end(p);
		return n;
	}
	if (!strcmp(name, "filter")) {
		n->kind = S_FILTERBLOCK;
		filters(p, n);
		block_end(p);
		n->d = body(sp, endfilter, &sub);
		block_end(p);
		return n;
	}
	if (!strcmp(name, "generation")) {
		n->kind = S_GENERATION;
		block_end(p);
		n->d = body(sp, endgeneration, &sub);
		block_end(p);
		return n;
	}
	p->pos--;
	if (!strncmp(name, "end", 3) || !strcmp(name, "elif") || !strcmp(name, "else"))
		tpl_parse_fail(p, "unexpected '%s'%s%s", name, ends ? ": expected " : "",
			       ends ? ends[0] : "");
	tpl_parse_fail(p, "unknown or unsupported tag '%s'", name);
}

static struct tnode *body(struct stmt_parser *sp, const char *const *ends, const char **ended)
{
	struct tpl_parser *p = &sp->p;
	struct tnode *b = tpl_node(p, S_BODY);
	if (++p->depth > 200)
		tpl_parse_fail(p, "blocks nested deeper than 200");
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		if (t->kind == TK_EOF) {
			if (ends)
				tpl_parse_fail(p, "unexpected end of the template: expected '%s'",
					       ends[0]);
			break;
		}
		p->pos++;
		if (t->kind == TK_DATA) {
			struct tnode *n = tpl_node(p, S_TEXT);
			n->line = t->line;
			n->col = t->col;
			n->val = tv_str(p->c, t->text, t->len);
			push_stmt(p, b, n);
		} else if (t->kind == TK_VAR) {
			struct tnode *n = tpl_node(p, S_OUTPUT);
			n->a = tpl_parse_expr(p, true, true);
			if (tpl_peek(p)->kind != TK_VAR_END)
				tpl_parse_fail(p, "expected '}}'");
			p->pos++;
			push_stmt(p, b, n);
		} else if (t->kind == TK_BLOCK) {
			struct tnode *n = statement(sp, ends, ended);
			if (!n)
				break;
			push_stmt(p, b, n);
		} else {
			p->pos--;
			tpl_parse_fail(p, "unexpected token");
		}
	}
	p->depth--;
	return b;
}

/* Jinja refuses an unknown filter or test when compiling, except inside
 * an if statement or a conditional expression ("soft" frames), where it
 * fails only if evaluated; a for loop, macro or block starts a hard
 * frame again. */
static void check_known(struct tpl_ctx *c, const struct tnode *n, bool soft, int depth)
{
	if (!n || depth > 1000)
		return;
	if ((n->kind == N_FILTER || n->kind == N_TEST) && !soft &&
	    !(n->kind == N_FILTER ? tpl_filter_exists(n->name) : tpl_test_exists(n->name)))
		tpl_fail(c, n->line, n->col, "no %s named '%s'", n->kind == N_FILTER ? "filter" : "test",
			 n->name);
	bool inner = soft;
	if (n->kind == S_IF || n->kind == N_COND)
		inner = true;
	else if (n->kind == S_FOR || n->kind == S_MACRO || n->kind == S_SETBLOCK ||
		 n->kind == S_FILTERBLOCK || n->kind == S_GENERATION)
		inner = false;
	check_known(c, n->a, inner, depth + 1);
	check_known(c, n->b, n->kind == S_FOR ? soft : inner, depth + 1);
	check_known(c, n->c, inner, depth + 1);
	check_known(c, n->d, inner, depth + 1);
	check_known(c, n->e, inner, depth + 1);
	for (size_t i = 0; i < n->n; i++)
		check_known(c, n->args[i], inner, depth + 1);
	for (size_t i = 0; i < n->nkw; i++)
		check_known(c, n->kwvals[i], inner, depth + 1);
}

struct tnode *tpl_parse(struct tpl_ctx *c, struct tpl_token *toks, size_t n)
{
	struct stmt_parser sp = {.p = {.c = c, .t = toks, .n = n}};
	const char *ended = NULL;
	struct tnode *root = body(&sp, NULL, &ended);
	check_known(c, root, false, 0);
	return root;
}
