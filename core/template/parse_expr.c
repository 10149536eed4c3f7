/* The expression parser: Jinja's precedence, lowest first: conditional,
 * or, and, not, comparisons, + -, ~, * / // %, **, unary - +, then a
 * primary with its attributes, subscripts, calls, filters and tests. */
#include <stdio.h>
#include <string.h>

#include "template/tpl.h"

/* Nesting deeper than this is refused (each level is a C stack frame). */
#define MAX_NESTING 200

_Noreturn void tpl_parse_fail(struct tpl_parser *p, const char *fmt, ...)
{
	struct tpl_token *t = tpl_peek(p);
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tpl_fail(p->c, t->line, t->col, "%s", msg);
}

struct tpl_token *tpl_peek(struct tpl_parser *p)
{
	return &p->t[p->pos];
}

struct tpl_token *tpl_next(struct tpl_parser *p)
{
	struct tpl_token *t = &p->t[p->pos];
	if (t->kind != TK_EOF)
		p->pos++;
	return t;
}

bool tpl_is_op(const struct tpl_token *t, const char *op)
{
	return t->kind == TK_OP && !strcmp(t->text, op);
}

bool tpl_is_name(const struct tpl_token *t, const char *name)
{
	return t->kind == TK_NAME && !strcmp(t->text, name);
}

bool tpl_accept_op(struct tpl_parser *p, const char *op)
{
	if (!tpl_is_op(tpl_peek(p), op))
		return false;
	p->pos++;
	return true;
}

const char *tpl_describe(const struct tpl_token *t)
{
	switch (t->kind) {
	case TK_EOF: return "the end of the template";
	case TK_DATA: return "template text";
	case TK_VAR: return "'{{'";
	case TK_VAR_END: return "'}}'";
	case TK_BLOCK: return "'{%'";
	case TK_BLOCK_END: return "'%}'";
	case TK_STRING: return "a string";
	case TK_INT:
	case TK_FLOAT: return "a number";
	default: return t->text;
	}
}

void tpl_expect_op(struct tpl_parser *p, const char *op)
{
	if (!tpl_accept_op(p, op))
		tpl_parse_fail(p, "expected '%s', got %s", op, tpl_describe(tpl_peek(p)));
}

const char *tpl_expect_name(struct tpl_parser *p)
{
	struct tpl_token *t = tpl_peek(p);
	if (t->kind != TK_NAME)
		tpl_parse_fail(p, "expected a name, got %s", tpl_describe(t));
	p->pos++;
	return t->text;
}

struct tnode *tpl_node(struct tpl_parser *p, enum tn_kind kind)
{
	struct tnode *n = tpl_alloc(p->c, sizeof *n);
	struct tpl_token *t = tpl_peek(p);
	n->kind = kind;
	n->line = t->line;
	n->col = t->col;
	return n;
}

static void push(struct tpl_parser *p, struct tnode ***v, size_t *n, struct tnode *x)
{
	/* capacities are the powers of two: grow when n reaches one */
	if ((*n & (*n - 1)) == 0) {
		struct tnode **g = tpl_alloc(p->c, (*n ? *n * 2 : 1) * sizeof *g);
		if (*n)
			memcpy(g, *v, *n * sizeof *g);
		*v = g;
	}
	(*v)[(*n)++] = x;
}

static void push_kw(struct tpl_parser *p, struct tnode *n, const char *name, struct tnode *v)
{
	if ((n->nkw & (n->nkw - 1)) == 0) {
		size_t cap = n->nkw ? n->nkw * 2 : 1;
		const char **names = tpl_alloc(p->c, cap * sizeof *names);
		struct tnode **vals = tpl_alloc(p->c, cap * sizeof *vals);
		if (n->nkw) {
			memcpy(names, n->kwnames, n->nkw * sizeof *names);
			memcpy(vals, n->kwvals, n->nkw * sizeof *vals);
		}
		n->kwnames = names;
		n->kwvals = vals;
	}
	n->kwnames[n->nkw] = name;
	n->kwvals[n->nkw++] = v;
}

static struct tnode *expr(struct tpl_parser *p, bool cond);
static struct tnode *unary(struct tpl_parser *p, bool filters);

static void enter(struct tpl_parser *p)
{
	if (++p->depth > MAX_NESTING)
		tpl_parse_fail(p, "expressions nested deeper than %d", MAX_NESTING);
}

void tpl_parse_args(struct tpl_parser *p, struct tnode *n)
{
	while (!tpl_accept_op(p, ")")) {
		if (n->n || n->nkw)
			tpl_expect_op(p, ",");
		if (tpl_accept_op(p, ")"))
			break;
		struct tpl_token *t = tpl_peek(p);
		if (tpl_is_op(t, "*") || tpl_is_op(t, "**"))
			tpl_parse_fail(p, "*args and **kwargs are not supported");
		if (t->kind == TK_NAME && tpl_is_op(&p->t[p->pos + 1], "=")) {
			p->pos += 2;
			push_kw(p, n, t->text, expr(p, true));
		} else {
			if (n->nkw)
				tpl_parse_fail(p, "a positional argument after a keyword argument");
			push(p, &n->args, &n->n, expr(p, true));
		}
	}
}

static struct tnode *constant(struct tpl_parser *p, struct tval v)
{
	struct tnode *n = tpl_node(p, N_CONST);
	n->val = v;
	return n;
}

/* ( tuple-or-expr ), [ list ], { dict } */
static struct tnode *bracketed(struct tpl_parser *p)
{
	struct tpl_token *t = tpl_next(p);
	struct tnode *n;
	if (t->text[0] == '(') {
		n = tpl_node(p, N_TUPLE);
		bool comma = false;
		while (!tpl_accept_op(p, ")")) {
			if (n->n) {
				tpl_expect_op(p, ",");
				comma = true;
				if (tpl_accept_op(p, ")"))
					break;
			}
			push(p, &n->args, &n->n, expr(p, true));
		}
		if (n->n == 1 && !comma)
			return n->args[0];
		return n;
	}
	if (t->text[0] == '[') {
		n = tpl_node(p, N_LIST);
		while (!tpl_accept_op(p, "]")) {
			if (n->n) {
				tpl_expect_op(p, ",");
				if (tpl_accept_op(p, "]"))
					break;
			}
			push(p, &n->args, &n->n, expr(p, true));
		}
		return n;
	}
	n = tpl_node(p, N_DICT);
	while (!tpl_accept_op(p, "}")) {
		if (n->n) {
			tpl_expect_op(p, ",");
			if (tpl_accept_op(p, "}"))
				break;
		}
		push(p, &n->args, &n->n, expr(p, true));
		tpl_expect_op(p, ":");
		push_kw(p, n, NULL, expr(p, true));
	}
	return n;
}

static struct tnode *primary(struct tpl_parser *p)
{
	struct tpl_token *t = tpl_peek(p);
	switch (t->kind) {
	case TK_NAME: {
		static const char *const names[] = {"true", "True", "false", "False", "none", "None"};
		for (int i = 0; i < 6; i++)
			if (!strcmp(t->text, names[i])) {
				struct tnode *n = constant(p, i < 4 ? tv_bool(i < 2) : tv_none);
				p->pos++;
				return n;
			}
		struct tnode *n = tpl_node(p, N_NAME);
		n->name = t->text;
		p->pos++;
		return n;
	}
	case TK_STRING: {
		struct tnode *n = tpl_node(p, N_CONST);
		struct tpl_buf b = {0};
		tpl_buf_put(p->c, &b, "", 0);
		while (tpl_peek(p)->kind == TK_STRING) { /* "a" "b" is "ab" */
			struct tpl_token *s = tpl_next(p);
			tpl_buf_put(p->c, &b, s->text, s->len);
		}
		n->val = tv_str(p->c, b.p, b.n);
		return n;
	}
	case TK_INT: {
		struct tnode *n = constant(p, tv_int(t->i));
		p->pos++;
		return n;
	}
	case TK_FLOAT: {
		struct tnode *n = constant(p, tv_float(t->f));
		p->pos++;
		return n;
	}
	case TK_OP:
		if (t->text[0] == '(' || t->text[0] == '[' || t->text[0] == '{')
			return bracketed(p);
		break;
	default: break;
	}
	tpl_parse_fail(p, "expected an expression, got %s", tpl_describe(t));
}

/* a[...] after the "[" */
static struct tnode *subscript(struct tpl_parser *p, struct tnode *obj)
{
	struct tnode *n = tpl_node(p, N_ITEM);
	n->a = obj;
	struct tnode *parts[3] = {NULL, NULL, NULL};
	int k = 0;
	bool slice = false;
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		if (tpl_is_op(t, "]"))
			break;
		if (tpl_is_op(t, ":")) {
			if (++k > 2)
				tpl_parse_fail(p, "a slice has at most three parts");
			slice = true;
			p->pos++;
			continue;
		}
		if (parts[k])
			tpl_parse_fail(p, "expected ':' or ']' in a subscript");
		parts[k] = expr(p, true);
	}
	p->pos++;
	if (!slice) {
		if (!parts[0])
			tpl_parse_fail(p, "an empty subscript");
		n->b = parts[0];
		return n;
	}
	n->kind = N_SLICE;
	n->b = parts[0];
	n->c = parts[1];
	n->d = parts[2];
	return n;
}

static struct tnode *postfix(struct tpl_parser *p, struct tnode *n)
{
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		if (tpl_is_op(t, ".")) {
			p->pos++;
			struct tpl_token *a = tpl_next(p);
			struct tnode *x;
			if (a->kind == TK_INT) { /* foo.0 is foo[0] */
				x = tpl_node(p, N_ITEM);
				x->b = constant(p, tv_int(a->i));
			} else {
				if (a->kind != TK_NAME)
					tpl_parse_fail(p, "expected an attribute name after '.'");
				x = tpl_node(p, N_ATTR);
				x->name = a->text;
			}
			x->line = a->line;
			x->col = a->col;
			x->a = n;
			n = x;
		} else if (tpl_is_op(t, "[")) {
			p->pos++;
			n = subscript(p, n);
		} else if (tpl_is_op(t, "(")) {
			struct tnode *x = tpl_node(p, N_CALL);
			p->pos++;
			x->a = n;
			tpl_parse_args(p, x);
			n = x;
		} else {
			return n;
		}
	}
}

static const char *dotted_name(struct tpl_parser *p)
{
	const char *name = tpl_expect_name(p);
	while (tpl_is_op(tpl_peek(p), ".") && p->t[p->pos + 1].kind == TK_NAME) {
		const char *more = p->t[p->pos + 1].text;
		size_t l = strlen(name), m = strlen(more);
		char *s = tpl_alloc(p->c, l + m + 2);
		memcpy(s, name, l);
		s[l] = '.';
		memcpy(s + l + 1, more, m);
		name = s;
		p->pos += 2;
	}
	return name;
}

static struct tnode *filter_test(struct tpl_parser *p, struct tnode *n)
{
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		if (tpl_is_op(t, "|")) {
			p->pos++;
			struct tnode *f = tpl_node(p, N_FILTER);
			f->name = dotted_name(p);
			f->a = n;
			if (tpl_accept_op(p, "("))
				tpl_parse_args(p, f);
			n = f;
		} else if (tpl_is_name(t, "is")) {
			p->pos++;
			struct tnode *x = tpl_node(p, N_TEST);
			if (tpl_is_name(tpl_peek(p), "not")) {
				p->pos++;
				x->op = 1;
			}
			x->name = dotted_name(p);
			x->a = n;
			struct tpl_token *u = tpl_peek(p);
			if (tpl_accept_op(p, "(")) {
				tpl_parse_args(p, x);
			} else if ((u->kind == TK_NAME || u->kind == TK_STRING || u->kind == TK_INT ||
				    u->kind == TK_FLOAT || tpl_is_op(u, "[") || tpl_is_op(u, "{")) &&
				   !tpl_is_name(u, "else") && !tpl_is_name(u, "or") &&
				   !tpl_is_name(u, "and")) {
				if (tpl_is_name(u, "is"))
					tpl_parse_fail(p, "a test cannot be the argument of a test");
				struct tnode *arg = postfix(p, primary(p));
				push(p, &x->args, &x->n, arg);
			}
			n = x;
		} else if (tpl_is_op(t, "(")) {
			struct tnode *x = tpl_node(p, N_CALL);
			p->pos++;
			x->a = n;
			tpl_parse_args(p, x);
			n = x;
		} else {
			return n;
		}
	}
}

static struct tnode *unary(struct tpl_parser *p, bool filters)
{
	enter(p);
	struct tpl_token *t = tpl_peek(p);
	struct tnode *n;
	if (tpl_is_op(t, "-") || tpl_is_op(t, "+")) {
		n = tpl_node(p, t->text[0] == '-' ? N_NEG : N_POS);
		p->pos++;
		n->a = unary(p, false);
	} else {
		n = postfix(p, primary(p));
	}
	if (filters)
		n = filter_test(p, n);
	p->depth--;
	return n;
}

static struct tnode *binop(struct tpl_parser *p, struct tnode *a, int op, struct tnode *b,
			   const struct tpl_token *at)
{
	struct tnode *n = tpl_alloc(p->c, sizeof *n);
	n->kind = N_BINOP;
	n->op = op;
	n->line = at->line;
	n->col = at->col;
	n->a = a;
	n->b = b;
	return n;
}

static struct tnode *power(struct tpl_parser *p)
{
	struct tnode *n = unary(p, true);
	while (tpl_is_op(tpl_peek(p), "**")) {
		struct tpl_token *t = tpl_next(p);
		n = binop(p, n, TB_POW, unary(p, true), t);
	}
	return n;
}

static struct tnode *math2(struct tpl_parser *p)
{
	struct tnode *n = power(p);
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		int op = tpl_is_op(t, "*") ? TB_MUL : tpl_is_op(t, "/") ? TB_DIV
			 : tpl_is_op(t, "//")				  ? TB_FDIV
			 : tpl_is_op(t, "%")				  ? TB_MOD
									  : -1;
		if (op < 0)
			return n;
		p->pos++;
		n = binop(p, n, op, power(p), t);
	}
}

static struct tnode *concat(struct tpl_parser *p)
{
	struct tnode *n = math2(p);
	while (tpl_is_op(tpl_peek(p), "~")) {
		struct tpl_token *t = tpl_next(p);
		n = binop(p, n, 0, math2(p), t);
		n->kind = N_CONCAT;
	}
	return n;
}

static struct tnode *math1(struct tpl_parser *p)
{
	struct tnode *n = concat(p);
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		int op = tpl_is_op(t, "+") ? TB_ADD : tpl_is_op(t, "-") ? TB_SUB : -1;
		if (op < 0)
			return n;
		p->pos++;
		n = binop(p, n, op, concat(p), t);
	}
}

static struct tnode *compare(struct tpl_parser *p)
{
	struct tnode *first = math1(p), *n = NULL;
	for (;;) {
		struct tpl_token *t = tpl_peek(p);
		static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
		int op = -1;
		for (int i = 0; i < 6; i++)
			if (tpl_is_op(t, ops[i]))
				op = TC_EQ + i;
		if (op < 0 && tpl_is_name(t, "in"))
			op = TC_IN;
		if (op < 0 && tpl_is_name(t, "not") && tpl_is_name(&p->t[p->pos + 1], "in")) {
			op = TC_NOTIN;
			p->pos++;
		}
		if (op < 0)
			return n ? n : first;
		p->pos++;
		if (!n) {
			n = tpl_node(p, N_COMPARE);
			n->line = t->line;
			n->col = t->col;
			n->a = first;
		}
		size_t k = n->n;
		push(p, &n->args, &n->n, math1(p));
		if ((k & (k - 1)) == 0) {
			int *ops2 = tpl_alloc(p->c, (k ? k * 2 : 1) * sizeof *ops2);
			if (k)
				memcpy(ops2, n->ops, k * sizeof *ops2);
			n->ops = ops2;
		}
		n->ops[k] = op;
	}
}

static struct tnode *not_expr(struct tpl_parser *p)
{
	if (tpl_is_name(tpl_peek(p), "not")) {
		enter(p);
		struct tnode *n = tpl_node(p, N_NOT);
		p->pos++;
		n->a = not_expr(p);
		p->depth--;
		return n;
	}
	return compare(p);
}

static struct tnode *and_expr(struct tpl_parser *p)
{
	struct tnode *n = not_expr(p);
	while (tpl_is_name(tpl_peek(p), "and")) {
		struct tpl_token *t = tpl_next(p);
		n = binop(p, n, 0, not_expr(p), t);
		n->kind = N_AND;
	}
	return n;
}

static struct tnode *or_expr(struct tpl_parser *p)
{
	struct tnode *n = and_expr(p);
	while (tpl_is_name(tpl_peek(p), "or")) {
		struct tpl_token *t = tpl_next(p);
		n = binop(p, n, 0, and_expr(p), t);
		n->kind = N_OR;
	}
	return n;
}

static struct tnode *expr(struct tpl_parser *p, bool cond)
{
	enter(p);
	struct tnode *n = or_expr(p);
	while (cond && tpl_is_name(tpl_peek(p), "if")) {
		struct tnode *x = tpl_node(p, N_COND);
		p->pos++;
		x->b = n;
		x->a = or_expr(p);
		if (tpl_is_name(tpl_peek(p), "else")) {
			p->pos++;
			x->c = expr(p, true);
		}
		n = x;
	}
	p->depth--;
	return n;
}

struct tnode *tpl_parse_expr(struct tpl_parser *p, bool tuples, bool cond)
{
	struct tnode *n = expr(p, cond);
	if (!tuples || !tpl_is_op(tpl_peek(p), ","))
		return n;
	struct tnode *t = tpl_alloc(p->c, sizeof *t);
	t->kind = N_TUPLE;
	t->line = n->line;
	t->col = n->col;
	push(p, &t->args, &t->n, n);
	while (tpl_accept_op(p, ",")) {
		struct tpl_token *k = tpl_peek(p);
		if (k->kind == TK_VAR_END || k->kind == TK_BLOCK_END || tpl_is_name(k, "if"))
			break;
		push(p, &t->args, &t->n, expr(p, cond));
	}
	return t;
}
