/* Arithmetic expressions over named values, as used in architecture YAML
 * ("n_head * head_dim", "1 / sqrt(head_dim)"). */
#ifndef BELT_ARCH_EXPR_H
#define BELT_ARCH_EXPR_H

#include <stddef.h>

#define BELT_VAR_NAME 48
#define BELT_VARS_MAX 96

struct belt_vars {
	unsigned n;
	struct {
		char name[BELT_VAR_NAME];
		double v;
	} item[BELT_VARS_MAX];
};

/* Set (or overwrite) a named value; -1 if the table is full or the name
 * too long. */
int belt_vars_set(struct belt_vars *vs, const char *name, double v);
/* Look up a value; 0 if absent. */
int belt_vars_get(const struct belt_vars *vs, const char *name, double *out);

/* Evaluate src: numbers, names, + - * / %, unary -, parentheses,
 * sqrt(x), min(a,b), max(a,b). Errors name the offending text. */
int belt_expr_eval(const char *src, const struct belt_vars *vs, double *out,
		   char *err, size_t errsz);

#endif
