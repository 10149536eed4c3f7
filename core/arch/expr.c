/* A recursive-descent evaluator for the small expression language of the
 * architecture YAML. Everything is a double; callers check integrality. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch/expr.h"
#include "belt/error.h"

int belt_vars_set(struct belt_vars *vs, const char *name, double v)
{
	if (strlen(name) >= BELT_VAR_NAME)
		return -1;
	for (unsigned i = 0; i < vs->n; i++) {
		if (!strcmp(vs->item[i].name, name)) {
			vs->item[i].v = v;
			return 0;
		}
	}
	if (vs->n == BELT_VARS_MAX)
		return -1;
	strcpy(vs->item[vs->n].name, name);
	vs->item[vs->n++].v = v;
	return 0;
}

int belt_vars_get(const struct belt_vars *vs, const char *name, double *out)
{
	for (unsigned i = 0; i < vs->n; i++) {
		if (!strcmp(vs->item[i].name, name)) {
			*out = vs->item[i].v;
			return 1;
		}
	}
	return 0;
}

struct parser {
	const char *src, *p;
	const struct belt_vars *vs;
	char *err;
	size_t errsz;
	int depth;
};

static int expr(struct parser *ps, double *out);
static int sum(struct parser *ps, double *out);

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int fail(struct parser *ps, const char *what)
{
	return belt_errf(ps->err, ps->errsz, "expression '%s': %s at '%s'",
			 ps->src, what, *ps->p ? ps->p : "end");
}

static int expect(struct parser *ps, char c)
{
	skip_space(ps);
	if (*ps->p != c) {
		char what[32] = "expected ' '";
		what[10] = c;
		return fail(ps, what);
	}
	ps->p++;
	return 0;
}

static int call(struct parser *ps, const char *name, size_t len, double *out)
{
	double a, b = 0, c = 0;
	int two = (len == 3 && (!strncmp(name, "min", 3) || !strncmp(name, "max", 3)));
	int one = (len == 4 && !strncmp(name, "sqrt", 4));
	int three = (len == 6 && !strncmp(name, "select", 6)); /* select(c, a, b) */
	if (!one && !two && !three)
		return belt_errf(ps->err, ps->errsz,
				 "expression '%s': unknown function '%.*s'",
				 ps->src, (int)len, name);
	ps->p++; /* '(' */
	if (expr(ps, &a))
		return -1;
	if ((two || three) && (expect(ps, ',') || expr(ps, &b)))
		return -1;
	if (three && (expect(ps, ',') || expr(ps, &c)))
		return -1;
	if (expect(ps, ')'))
		return -1;
	if (one)
		*out = sqrt(a);
	else if (three)
		*out = a != 0 ? b : c;
	else
		*out = name[1] == 'i' ? fmin(a, b) : fmax(a, b);
	return 0;
}

static int primary(struct parser *ps, double *out)
{
	skip_space(ps);
	const char *s = ps->p;
	if (*s == '(') {
		ps->p++;
		if (expr(ps, out))
			return -1;
		return expect(ps, ')');
	}
	if (*s == '-') { /* "---...-1" recurses here, not in expr */
		ps->p++;
		if (++ps->depth > 64)
			return fail(ps, "nested too deeply");
		if (primary(ps, out))
			return -1;
		ps->depth--;
		*out = -*out;
		return 0;
	}
	if (isdigit((unsigned char)*s) || *s == '.') {
		char *end;
		*out = strtod(s, &end);
		if (end == s)
			return fail(ps, "bad number");
		ps->p = end;
		return 0;
	}
	if (isalpha((unsigned char)*s) || *s == '_') {
		const char *e = s;
		while (isalnum((unsigned char)*e) || *e == '_')
			e++;
		size_t len = (size_t)(e - s);
		ps->p = e;
		skip_space(ps);
		if (*ps->p == '(')
			return call(ps, s, len, out);
		char name[BELT_VAR_NAME];
		if (len >= sizeof name || (memcpy(name, s, len), name[len] = 0,
					   !belt_vars_get(ps->vs, name, out)))
			return belt_errf(ps->err, ps->errsz,
					 "expression '%s': unknown name '%.*s'",
					 ps->src, (int)len, s);
		return 0;
	}
	return fail(ps, "expected a number, name or '('");
}

static int term(struct parser *ps, double *out)
{
	if (primary(ps, out))
		return -1;
	for (;;) {
		skip_space(ps);
		char op = *ps->p;
		if (op != '*' && op != '/' && op != '%')
			return 0;
		ps->p++;
		double r;
		if (primary(ps, &r))
			return -1;
		if (op != '*' && r == 0)
			return fail(ps, "division by zero");
		*out = op == '*' ? *out * r : op == '/' ? *out / r : fmod(*out, r);
	}
}

static int sum(struct parser *ps, double *out)
{
	if (++ps->depth > 64)
		return fail(ps, "nested too deeply");
	if (term(ps, out))
		return -1;
	for (;;) {
		skip_space(ps);
		char op = *ps->p;
		if (op != '+' && op != '-')
			break;
		ps->p++;
		double r;
		if (term(ps, &r))
			return -1;
		*out = op == '+' ? *out + r : *out - r;
	}
	ps->depth--;
	return 0;
}

/* A sum, or two compared (< <= > >= == !=): 1 when it holds, else 0. */
static int expr(struct parser *ps, double *out)
{
	if (sum(ps, out))
		return -1;
	skip_space(ps);
	const char *p = ps->p;
	int op = 0;
	if ((p[0] == '<' || p[0] == '>' || p[0] == '=' || p[0] == '!') && p[1] == '=')
		op = p[0] | 256;
	else if (p[0] == '<' || p[0] == '>')
		op = p[0];
	if (!op)
		return 0;
	ps->p += op & 256 ? 2 : 1;
	double r;
	if (sum(ps, &r))
		return -1;
	switch (op) {
	case '<': *out = *out < r; break;
	case '>': *out = *out > r; break;
	case '<' | 256: *out = *out <= r; break;
	case '>' | 256: *out = *out >= r; break;
	case '=' | 256: *out = *out == r; break;
	default: *out = *out != r; break;
	}
	return 0;
}

int belt_expr_eval(const char *src, const struct belt_vars *vs, double *out,
		   char *err, size_t errsz)
{
	struct parser ps = {.src = src, .p = src, .vs = vs, .err = err, .errsz = errsz};
	if (expr(&ps, out))
		return -1;
	skip_space(&ps);
	if (*ps.p)
		return fail(&ps, "unexpected text");
	if (!isfinite(*out))
		return belt_errf(err, errsz, "expression '%s': result is not finite", src);
	return 0;
}
