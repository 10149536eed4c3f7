/* core/template: the internals of the chat-template interpreter shared by
 * its files (lexer, parser, values, evaluator, filters, methods, tests).
 *
 * Everything a compile or a render allocates comes from one arena, freed
 * at once; an error anywhere longjmps back to the public entry point,
 * which frees the arena, so no path leaks and no code checks for NULL. */
#ifndef BELT_TEMPLATE_TPL_H
#define BELT_TEMPLATE_TPL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/template.h"

/* ---- arena and errors (arena.c) ---- */

struct tpl_chunk;
struct tpl_ctx {
	jmp_buf jb;
	char *err;
	size_t errsz;
	struct tpl_chunk *chunks;
	size_t used, cap; /* bytes handed out, and the most allowed */
};

/* Write "LINE:COL: message" (line 0: no position) and unwind. */
_Noreturn void tpl_fail(struct tpl_ctx *c, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* n zeroed bytes from the arena; fails (unwinds) past the cap. */
void *tpl_alloc(struct tpl_ctx *c, size_t n);
/* The arena's copy of s[0..n), NUL-terminated. */
char *tpl_strndup(struct tpl_ctx *c, const char *s, size_t n);
/* Free every chunk. */
void tpl_arena_free(struct tpl_ctx *c);

/* A growing byte buffer in the arena (text being rendered). */
struct tpl_buf {
	char *p;
	size_t n, cap, max; /* max: 0 for none, else fail past it */
};
void tpl_buf_put(struct tpl_ctx *c, struct tpl_buf *b, const char *s, size_t n);
void tpl_buf_puts(struct tpl_ctx *c, struct tpl_buf *b, const char *s);
void tpl_buf_printf(struct tpl_ctx *c, struct tpl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- values (value.c) ---- */

enum tv_kind {
	TV_UNDEF, /* Jinja's Undefined: falsy, prints empty, fails when used */
	TV_NONE,
	TV_BOOL,
	TV_INT,
	TV_FLOAT,
	TV_STR,
	TV_LIST, /* also tuples and generators (flags) */
	TV_DICT,
	TV_NS,	   /* namespace(): a dict whose attributes can be set */
	TV_MACRO,  /* a {% macro %} */
	TV_FUNC,   /* a global function (range, namespace, ...) */
	TV_METHOD, /* obj.method, bound, not yet called */
	TV_LOOP,   /* a for loop's "loop": its items and where it stands */
};

/* A string's bytes; s[len] is NUL unless a longer string made by
 * tv_concat shares the buffer (then use tpl_cstr for a C string). */
struct tstr_buf;
struct tstr {
	size_t len;
	const char *s;
	struct tstr_buf *buf; /* the growable buffer s lies in, or NULL */
};
struct tval;
struct tlist {
	size_t n, cap;
	struct tval *v;
	bool tuple, gen; /* gen: a generator (select, map ...): lazy in Jinja */
};
struct tdict {
	size_t n, cap;
	struct tval *k, *v; /* in insertion order */
};
struct tmacro;
struct tmethod;
struct tval {
	enum tv_kind kind;
	bool safe; /* a string marked safe (Jinja's Markup: |safe, |escape) */
	union {
		bool b;
		int64_t i;
		double f;
		const struct tstr *s;
		struct tlist *l;
		struct tdict *d;
		const struct tmacro *m;
		int fn;
		const struct tmethod *meth;
		const struct tloop *loop;
		const char *undef; /* what is undefined, for the message */
	} u;
};
struct tmethod {
	struct tval self;
	const char *name;
};
struct tloop {
	const struct tlist *items;
	size_t i;
};

extern const struct tval tv_undef_plain, tv_none;
struct tval tv_bool(bool b);
struct tval tv_int(int64_t i);
struct tval tv_float(double f);
struct tval tv_str(struct tpl_ctx *c, const char *s, size_t n);
struct tval tv_cstr(struct tpl_ctx *c, const char *s);
/* a + b of two strings: where a is the longest string of its buffer,
 * b goes after it in place, so building a string piece by piece in a
 * loop ({% set ns.s = ns.s ~ x %}) costs linear, not quadratic, memory. */
struct tval tv_concat(struct tpl_ctx *c, const struct tstr *a, const struct tstr *b);
/* s as a NUL-terminated C string (a copy where s shares a buffer). */
const char *tpl_cstr(struct tpl_ctx *c, const struct tstr *s);
struct tval tv_undef(const char *msg);
struct tval tv_undeff(struct tpl_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct tval tv_list(struct tpl_ctx *c, size_t cap);
struct tval tv_dict(struct tpl_ctx *c, size_t cap);
void tv_list_push(struct tpl_ctx *c, struct tlist *l, struct tval v);
/* Set key k (replacing an equal key's value, else appending). */
void tv_dict_set(struct tpl_ctx *c, struct tdict *d, struct tval k, struct tval v);
/* The value for k, or NULL. */
struct tval *tv_dict_get(const struct tdict *d, struct tval k);
struct tval *tv_dict_gets(const struct tdict *d, const char *k);

bool tv_truthy(struct tval v);
bool tv_is_num(struct tval v); /* bool, int or float */
double tv_num(struct tval v);
bool tv_equal(struct tval a, struct tval b);
/* Python's ordering: <0, 0, >0; fails on types that do not order. */
int tv_compare(struct tpl_ctx *c, int line, int col, struct tval a, struct tval b);
/* The name of v's Python type in messages ("str", "dict", "NoneType"). */
const char *tv_type_name(struct tval v);
/* Python's str(v) appended to b (Undefined: nothing). */
void tv_print(struct tpl_ctx *c, struct tpl_buf *b, struct tval v);
/* Python's repr(v) appended to b. */
void tv_repr(struct tpl_ctx *c, struct tpl_buf *b, struct tval v);
/* str(v) as a string value. */
struct tval tv_to_str(struct tpl_ctx *c, struct tval v);
/* Python's repr of a float ("1.0", "1e+16", "inf"). */
void tv_float_repr(double f, char *out, size_t outsz);

/* ---- strings (strings.c): UTF-8, by code point where Python counts so ---- */

size_t tpl_utf8_count(const char *s, size_t n);
/* Byte offset of code point i (i <= count). */
size_t tpl_utf8_offset(const char *s, size_t n, size_t i);
bool tpl_is_space(const char *s, size_t n, size_t *len); /* a whitespace char at s */
/* Python's str.strip/lstrip/rstrip; chars NULL: whitespace. */
struct tval tpl_strip(struct tpl_ctx *c, const struct tstr *s, const struct tstr *chars,
		      bool left, bool right);
/* Python's str.split/rsplit (sep NULL: runs of whitespace), maxsplit < 0: all. */
struct tval tpl_split(struct tpl_ctx *c, const struct tstr *s, const struct tstr *sep,
		      int64_t maxsplit, bool from_right);
struct tval tpl_replace(struct tpl_ctx *c, const struct tstr *s, const struct tstr *old,
			const struct tstr *new, int64_t count);
/* upper, lower, title, capitalize (Unicode case mapping through utf8proc). */
enum tpl_case { TPL_UPPER, TPL_LOWER, TPL_TITLE, TPL_CAPITALIZE };
struct tval tpl_case(struct tpl_ctx *c, const struct tstr *s, enum tpl_case how);
/* HTML-escaped s (& < > " '), marked safe, as Jinja's Markup.escape. */
struct tval tpl_escape(struct tpl_ctx *c, struct tval s);
/* Index of needle in s[from..] in code points, or -1. */
int64_t tpl_find(const struct tstr *s, const struct tstr *needle, bool last);
size_t tpl_count(const struct tstr *s, const struct tstr *needle);

/* ---- JSON (json.c) ---- */

struct json_t;
/* The value of a jansson value (objects keep their key order). */
struct tval tpl_from_json(struct tpl_ctx *c, const struct json_t *j, int depth);
/* Python's json.dumps(v, ensure_ascii, indent) appended to b; indent < 0:
 * none (", " and ": "). Fails on what Python cannot serialize. */
void tpl_to_json(struct tpl_ctx *c, int line, int col, struct tpl_buf *b, struct tval v,
		 bool ascii, int indent, int depth);

/* ---- lexer (lexer.c) ---- */

enum tk_kind {
	TK_EOF,
	TK_DATA,     /* template text, whitespace control applied */
	TK_VAR,	     /* {{ */
	TK_VAR_END,  /* }} */
	TK_BLOCK,    /* {% */
	TK_BLOCK_END, /* %} */
	TK_NAME,
	TK_STRING, /* escapes decoded */
	TK_INT,
	TK_FLOAT,
	TK_OP, /* text holds the operator */
};
struct tpl_token {
	enum tk_kind kind;
	int line, col;
	const char *text; /* NUL-terminated (arena) */
	size_t len;
	int64_t i;
	double f;
};
/* Split src into tokens (trim_blocks and lstrip_blocks on, one trailing
 * newline dropped, newlines normalized to \n); ends with TK_EOF. */
struct tpl_token *tpl_lex(struct tpl_ctx *c, const char *src, size_t len, size_t *n);

/* ---- syntax tree (parse_expr.c, parse_stmt.c) ---- */

enum tn_kind {
	/* expressions */
	N_CONST, /* val */
	N_NAME,	 /* name */
	N_ATTR,	 /* a.name */
	N_ITEM,	 /* a[b] */
	N_SLICE, /* a[b:c:d], any of b c d NULL */
	N_CALL,	 /* a(args) */
	N_FILTER, /* a|name(args) */
	N_TEST,	  /* a is [not] name args; op: 1 when negated */
	N_NEG,
	N_POS,
	N_NOT,
	N_BINOP, /* a op b; op: one of the TB_* */
	N_CONCAT, /* a ~ b */
	N_AND,
	N_OR,
	N_COMPARE, /* a (ops[i] args[i])* */
	N_COND,	   /* b if a else c (c NULL: undefined) */
	N_LIST,
	N_TUPLE,
	N_DICT, /* args: keys, kwvals: values */
	/* statements */
	S_BODY, /* args: the statements */
	S_TEXT, /* val: the text */
	S_OUTPUT, /* {{ a }} */
	S_IF,	  /* a: condition, b: body, c: else (S_IF for elif, or S_BODY) */
	S_FOR,	  /* a: target, b: iterable, c: condition, d: body, e: else */
	S_SET,	  /* a: target (N_NAME, N_ATTR or N_TUPLE), b: value */
	S_SETBLOCK, /* a: target, d: body, args: filters (N_FILTER, a NULL) */
	S_MACRO,    /* name, params (args: N_NAME with a default in a), d: body */
	S_BREAK,
	S_CONTINUE,
	S_FILTERBLOCK, /* args: filters, d: body */
	S_GENERATION,  /* d: body */
};
enum { TB_ADD, TB_SUB, TB_MUL, TB_DIV, TB_FDIV, TB_MOD, TB_POW };
enum { TC_EQ, TC_NE, TC_LT, TC_LE, TC_GT, TC_GE, TC_IN, TC_NOTIN };

struct tnode {
	enum tn_kind kind;
	int op;
	int line, col;
	const char *name;
	struct tval val;
	struct tnode *a, *b, *c, *d, *e;
	struct tnode **args; /* positional arguments, list items, statements */
	size_t n;
	const char **kwnames; /* keyword arguments (and dict values, names NULL) */
	struct tnode **kwvals;
	size_t nkw;
	int *ops; /* N_COMPARE: the operator before each of args */
};

struct tpl_parser {
	struct tpl_ctx *c;
	struct tpl_token *t;
	size_t pos, n;
	int depth;
};
/* The whole template as an S_BODY. */
struct tnode *tpl_parse(struct tpl_ctx *c, struct tpl_token *toks, size_t n);
/* An expression (parse_expr.c); tuples: a, b without parentheses. */
struct tnode *tpl_parse_expr(struct tpl_parser *p, bool tuples, bool cond);
/* A node at the current token. */
struct tnode *tpl_node(struct tpl_parser *p, enum tn_kind kind);
struct tpl_token *tpl_peek(struct tpl_parser *p);
struct tpl_token *tpl_next(struct tpl_parser *p);
bool tpl_is_op(const struct tpl_token *t, const char *op);
bool tpl_is_name(const struct tpl_token *t, const char *name);
bool tpl_accept_op(struct tpl_parser *p, const char *op);
void tpl_expect_op(struct tpl_parser *p, const char *op);
const char *tpl_expect_name(struct tpl_parser *p);
/* Parse "(args)" (the "(" already read) into n's args and kwargs. */
void tpl_parse_args(struct tpl_parser *p, struct tnode *n);
/* A token in messages: "'}}'", "a string", the name or operator. */
const char *tpl_describe(const struct tpl_token *t);
_Noreturn void tpl_parse_fail(struct tpl_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- evaluation (eval.c, render.c) ---- */

struct tscope {
	struct tscope *parent;
	size_t n, cap;
	const char **names;
	struct tval *vals;
};
struct tmacro {
	const struct tnode *def;
	struct tscope *closure;
};

struct tpl_rt {
	struct tpl_ctx *c;
	struct tdict *globals; /* the render variables */
	struct tpl_buf *out;   /* where output goes now */
	int depth;  /* macro calls in progress */
	int frames; /* nested evaluations and statements */
	uint64_t steps;
	struct belt_template_limits lim;
	const struct tm *now; /* strftime_now's clock; NULL: the real one */
};

/* Arguments of a call, filter, test or method, evaluated. */
struct targs {
	size_t n, nkw;
	struct tval *v;
	const char **kwnames;
	struct tval *kwvals;
	int line, col;
};
/* Argument i by position, or by keyword name; def if neither. */
struct tval targ(const struct targs *a, size_t i, const char *name, struct tval def);
/* Fail unless there are at most n positional arguments and only the
 * keywords listed ("a,b"; "*": any). */
void targ_check(struct tpl_rt *rt, const struct targs *a, const char *what, size_t n,
		const char *keywords);

struct tval tpl_eval(struct tpl_rt *rt, struct tscope *s, const struct tnode *n);
struct tval tpl_lookup(struct tpl_rt *rt, struct tscope *s, const char *name);
void tpl_scope_set(struct tpl_rt *rt, struct tscope *s, const char *name, struct tval v);
struct tscope *tpl_scope_new(struct tpl_rt *rt, struct tscope *parent);
/* v.name (Jinja's getattr: attribute, then item). */
struct tval tpl_getattr(struct tpl_rt *rt, int line, int col, struct tval v, const char *name);
/* v[k] (Jinja's getitem: item, then attribute). */
struct tval tpl_getitem(struct tpl_rt *rt, int line, int col, struct tval v, struct tval k);
/* Call a callable value. */
struct tval tpl_call(struct tpl_rt *rt, int line, int col, struct tval f, struct targs *a);
/* Run the statements of body into rt->out (render.c); returns 0, or
 * TPL_BREAK / TPL_CONTINUE from a loop control. */
enum { TPL_BREAK = 1, TPL_CONTINUE = 2 };
int tpl_exec(struct tpl_rt *rt, struct tscope *s, const struct tnode *body);
/* Render body into a new string (macro bodies, set and filter blocks). */
struct tval tpl_capture(struct tpl_rt *rt, struct tscope *s, const struct tnode *body);
/* Count a step of work; fails past the limit. */
void tpl_step(struct tpl_rt *rt, const struct tnode *at);
/* The items of an iterable (a list, a dict's keys, a string's characters). */
struct tlist *tpl_iterate(struct tpl_rt *rt, int line, int col, struct tval v);
/* Fail because v is undefined (its message). */
_Noreturn void tpl_undef_fail(struct tpl_rt *rt, int line, int col, struct tval v);

/* Filters (filters.c), tests (tests.c), methods (methods.c), globals
 * (globals.c), each found by name; false when there is none. */
bool tpl_filter(struct tpl_rt *rt, const char *name, struct tval v, struct targs *a,
		struct tval *out);
bool tpl_test(struct tpl_rt *rt, const char *name, struct tval v, struct targs *a, bool *out);
/* Whether a filter or test of that name exists (Jinja refuses unknown
 * ones when compiling, outside if statements and conditional expressions). */
bool tpl_filter_exists(const char *name);
bool tpl_test_exists(const char *name);
/* Whether obj has a method name (safe or not); a mutating one of a list
 * or dict yields an Undefined that fails when called, as the sandbox. */
bool tpl_method_lookup(struct tpl_rt *rt, struct tval obj, const char *name, struct tval *out);
struct tval tpl_method_call(struct tpl_rt *rt, const struct tmethod *m, struct targs *a);
/* The global functions: index for TV_FUNC, or -1. */
int tpl_global_find(const char *name);
const char *tpl_global_name(int fn);
struct tval tpl_global_call(struct tpl_rt *rt, int fn, struct targs *a);

#endif
