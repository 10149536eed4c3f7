/* GBNF text -> rules (gbnf.h), the language llama.cpp reads:
 *
 *   name ::= alternatives       a rule; 'root' is where sentences begin
 *   a b | c                     sequence, alternation; ( ... ) groups
 *   "lit"  [a-z0-9_]  [^"\\]  . literals, classes, negated classes, any
 *   x*  x+  x?  x{m}  x{m,}  x{m,n}    repetition of the last element
 *   # to the end of the line    a comment
 *   \n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH   escapes
 *
 * A rule ends with its line, except after '::=' or '|' and inside
 * parentheses, where line breaks are spaces. Each rule's alternatives are
 * collected in a buffer of its own and appended when complete; groups and
 * repetitions become rules of their own (build.c; their origin: the named
 * rule they are in).
 *
 * Two places differ from llama.cpp on purpose: a literal or class may not
 * run past the end of its line (a missing quote would otherwise swallow
 * the rules below it; write \n), and a rule defined twice, a backwards
 * range [z-a] and an empty class [] are errors rather than silently
 * taking the last definition or matching nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

struct parser {
	const char *t;
	size_t len, pos;
	struct gb_grammar *g;
	uint32_t *names; /* name hash -> rule id + 1; 0 free */
	uint32_t names_mask, n_names;
	unsigned depth;	  /* groups open */
	uint32_t rule;	  /* the named rule being read */
	char *err;
	size_t errsz;
};

static int fail(struct parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, size_t at, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gb_fail(p->err, p->errsz, p->t, p->len, at, "%s", msg);
}

static int oom(struct parser *p)
{
	return fail(p, p->pos, "out of memory");
}

static const char *what(struct parser *p, size_t at, char *buf, size_t n)
{
	return gb_describe(p->t, p->len, at, buf, n);
}

static int peek(const struct parser *p)
{
	return p->pos < p->len ? (unsigned char)p->t[p->pos] : -1;
}

static bool at_eol(const struct parser *p)
{
	int c = peek(p);
	return c < 0 || c == '\n' || c == '\r';
}

static bool is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* Spaces, tabs and comments; line breaks too when newlines is set. */
static void skip_space(struct parser *p, bool newlines)
{
	for (int c; (c = peek(p)) >= 0;) {
		if (c == '#') {
			while (!at_eol(p))
				p->pos++;
		} else if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
			p->pos++;
		} else {
			break;
		}
	}
}

static bool starts(const struct parser *p, const char *s)
{
	size_t n = strlen(s);
	return p->len - p->pos >= n && !memcmp(p->t + p->pos, s, n);
}

static unsigned long line_of(const struct parser *p, size_t at)
{
	unsigned long line, col;
	gb_where(p->t, p->len, at, &line, &col);
	return line;
}

/* The parser's message for a gb_* building call's result. */
static int built(struct parser *p, int rc)
{
	if (rc == GB_TOO_BIG)
		return fail(p, p->pos, "the grammar expands to more than %u elements "
			    "(a repetition count too large?)", GB_MAX_ELEMS);
	return rc ? oom(p) : 0;
}

static int push(struct parser *p, struct gb_seq *s, uint32_t e)
{
	return built(p, gb_seq_push(p->g, s, e));
}

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static uint32_t *name_slot(struct parser *p, const char *s, size_t n)
{
	for (uint32_t i = hash_name(s, n) & p->names_mask;; i = (i + 1) & p->names_mask) {
		uint32_t *slot = &p->names[i];
		if (!*slot)
			return slot;
		const struct gb_rule *r = &p->g->rules[*slot - 1];
		if (r->name_len == n && !memcmp(p->t + r->name, s, n))
			return slot;
	}
}

/* The named rule t[at .. at + n), made when first seen. */
static int lookup(struct parser *p, size_t at, size_t n, uint32_t *id)
{
	if ((p->n_names + 1) * 2 > (p->names ? p->names_mask + 1 : 0)) {
		uint32_t cap = p->names ? (p->names_mask + 1) * 2 : 64;
		uint32_t *old = p->names, old_cap = p->names ? p->names_mask + 1 : 0;
		if (!(p->names = calloc(cap, sizeof *p->names))) {
			p->names = old;
			return oom(p);
		}
		p->names_mask = cap - 1;
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i]) {
				const struct gb_rule *r = &p->g->rules[old[i] - 1];
				*name_slot(p, p->t + r->name, r->name_len) = old[i];
			}
		free(old);
	}
	uint32_t *slot = name_slot(p, p->t + at, n);
	if (*slot) {
		*id = *slot - 1;
		return 0;
	}
	/* ref: the first reference, for "undefined rule" */
	if (built(p, gb_rule_new(p->g, GB_NONE, (uint32_t)at, (uint32_t)n, (uint32_t)at, id)))
		return -1;
	*slot = *id + 1;
	p->n_names++;
	return 0;
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One character of a literal or class, escapes read, into *cp. */
static int parse_char(struct parser *p, uint32_t *cp)
{
	char buf[16];
	const unsigned char *s = (const unsigned char *)p->t;
	size_t at = p->pos;
	if (s[at] != '\\') {
		/* the text is valid UTF-8 (gb_parse checked) */
		unsigned n = s[at] < 0x80 ? 1 : s[at] >= 0xf0 ? 4 : s[at] >= 0xe0 ? 3 : 2;
		struct gb_utf8 u;
		gb_utf8_first(s[at], &u);
		for (unsigned i = 1; i < n; i++)
			gb_utf8_next(&u, s[at + i]);
		*cp = u.value;
		p->pos += n;
		return 0;
	}
	p->pos++;
	int e = peek(p);
	static const char simple[] = "n\nr\rt\t\\\\\"\"[[]]";
	for (const char *q = simple; *q; q += 2)
		if (e == *q) {
			*cp = (unsigned char)q[1];
			p->pos++;
			return 0;
		}
	unsigned digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
	if (e < 0 || e == '\n' || e == '\r')
		return fail(p, at, "expected a character after '\\', got %s",
			    what(p, p->pos, buf, sizeof buf));
	if (!digits) {
		if (e > 0x20 && e < 0x7f)
			snprintf(buf, sizeof buf, "'\\%c'", (char)e);
		else
			what(p, p->pos, buf, sizeof buf);
		return fail(p, at, "unknown escape %s: expected one of \\n \\r \\t \\\\ \\\" \\[ \\] "
			    "\\xHH \\uHHHH \\UHHHHHHHH", buf);
	}
	p->pos++;
	uint32_t v = 0;
	for (unsigned i = 0; i < digits; i++, p->pos++) {
		int h = hex(peek(p));
		if (h < 0)
			return fail(p, p->pos, "expected %u hex digits after '\\%c', got %s", digits,
				    (char)e, what(p, p->pos, buf, sizeof buf));
		v = v << 4 | (uint32_t)h;
	}
	if (v > GB_MAX_CP)
		return fail(p, at, "code point U+%X is above U+10FFFF", v);
	if (v >= 0xd800 && v <= 0xdfff)
		return fail(p, at, "U+%04X is a UTF-16 surrogate, not a character", v);
	*cp = v;
	return 0;
}

static int push_class(struct parser *p, struct gb_seq *s, struct gb_range *r, uint32_t n,
		      bool negate)
{
	uint32_t id;
	if (gb_class_add(p->g, r, n, negate, &id))
		return oom(p);
	return push(p, s, GB_ELEM(GB_CHAR, id));
}

static int parse_literal(struct parser *p, struct gb_seq *s)
{
	size_t open = p->pos++;
	char buf[16];
	for (;;) {
		if (at_eol(p)) {
			unsigned long line, col;
			gb_where(p->t, p->len, open, &line, &col);
			return fail(p, p->pos, "expected '\"' to end the literal begun at column %lu, got %s",
				    col, what(p, p->pos, buf, sizeof buf));
		}
		if (peek(p) == '"') {
			p->pos++;
			return 0;
		}
		struct gb_range r;
		if (parse_char(p, &r.lo))
			return -1;
		r.hi = r.lo;
		if (push_class(p, s, &r, 1, false))
			return -1;
	}
}

static int parse_class(struct parser *p, struct gb_seq *s)
{
	size_t open = p->pos++;
	char buf[16];
	bool negate = peek(p) == '^';
	p->pos += negate;
	struct gb_range *r = NULL;
	uint32_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (at_eol(p)) {
			unsigned long line, col;
			gb_where(p->t, p->len, open, &line, &col);
			rc = fail(p, p->pos, "expected ']' to end the class begun at column %lu, got %s",
				  col, what(p, p->pos, buf, sizeof buf));
			break;
		}
		if (peek(p) == ']') {
			if (n == 0 && !negate)
				rc = fail(p, p->pos, "expected a character in '[]': an empty class matches nothing");
			else
				p->pos++;
			break;
		}
		size_t at = p->pos;
		uint32_t lo, hi;
		if ((rc = parse_char(p, &lo)))
			break;
		hi = lo;
		/* a '-' before ']' or the line's end is itself */
		if (peek(p) == '-' && p->pos + 1 < p->len && !strchr("]\r\n", p->t[p->pos + 1])) {
			p->pos++;
			if ((rc = parse_char(p, &hi)))
				break;
			if (hi < lo) {
				rc = fail(p, at, "range U+%04X-U+%04X runs backwards: expected the lower end first",
					  lo, hi);
				break;
			}
		}
		if (!gb_grow((void **)&r, &cap, n + 1, sizeof *r)) {
			rc = oom(p);
			break;
		}
		r[n++] = (struct gb_range){lo, hi};
	}
	if (!rc)
		rc = push_class(p, s, r, n, negate);
	free(r);
	return rc;
}

static int parse_alternates(struct parser *p, uint32_t id, bool nested);

static int parse_group(struct parser *p, struct gb_seq *s)
{
	size_t open = p->pos++;
	char buf[16];
	if (p->depth >= GB_MAX_DEPTH)
		return fail(p, open, "groups nested more than %d deep", GB_MAX_DEPTH);
	skip_space(p, true);
	uint32_t id;
	const struct gb_rule *r = &p->g->rules[p->rule];
	if (built(p, gb_rule_new(p->g, p->rule, r->name, r->name_len, r->def, &id)))
		return -1;
	p->depth++;
	int rc = parse_alternates(p, id, true);
	p->depth--;
	if (rc)
		return -1;
	if (peek(p) != ')')
		return fail(p, p->pos, "expected ')' to close the group begun on line %lu, got %s",
			    line_of(p, open), what(p, p->pos, buf, sizeof buf));
	p->pos++;
	return push(p, s, GB_ELEM(GB_REF, id));
}

/* A whole number of {m,n}, at most GB_MAX_COUNT. */
static int parse_count(struct parser *p, uint32_t *v)
{
	char buf[16];
	size_t at = p->pos;
	if (peek(p) < '0' || peek(p) > '9')
		return fail(p, p->pos, "expected a number, got %s", what(p, p->pos, buf, sizeof buf));
	uint64_t x = 0;
	while (peek(p) >= '0' && peek(p) <= '9') {
		x = x * 10 + (uint64_t)(peek(p) - '0');
		if (x > GB_MAX_COUNT)
			return fail(p, at, "repetition count above %u", GB_MAX_COUNT);
		p->pos++;
	}
	*v = (uint32_t)x;
	return 0;
}

/* The bounds of * + ? {m} {m,} {m,n}; max GB_NONE: no bound. */
static int parse_bounds(struct parser *p, uint32_t *min, uint32_t *max)
{
	char buf[16];
	int c = peek(p);
	p->pos++;
	if (c != '{') {
		*min = c == '+';
		*max = c == '?' ? 1 : GB_NONE;
		return 0;
	}
	skip_space(p, false);
	if (parse_count(p, min))
		return -1;
	skip_space(p, false);
	*max = *min;
	if (peek(p) == ',') {
		p->pos++;
		skip_space(p, false);
		*max = GB_NONE;
		size_t at = p->pos;
		if (peek(p) >= '0' && peek(p) <= '9') {
			if (parse_count(p, max))
				return -1;
			if (*max < *min)
				return fail(p, at, "repetition {%u,%u}: the maximum %u is below the minimum %u",
					    *min, *max, *max, *min);
		}
		skip_space(p, false);
	}
	if (peek(p) != '}')
		return fail(p, p->pos, "expected %s'}' to end the repetition, got %s",
			    *max == *min ? "',' or " : "", what(p, p->pos, buf, sizeof buf));
	p->pos++;
	return 0;
}

/* Replace s->v[last ..] by its repetition. */
static int repeat(struct parser *p, struct gb_seq *s, uint32_t last)
{
	uint32_t min, max;
	return parse_bounds(p, &min, &max) || built(p, gb_repeat(p->g, s, last, min, max, p->rule));
}

/* Elements up to whatever ends a sequence ('|', ')', a line's end at the
 * top, anything else): the caller says what it expected there. */
static int parse_sequence(struct parser *p, struct gb_seq *s, bool nested)
{
	uint32_t last = GB_NONE; /* where the last element begins in s */
	for (int c; (c = peek(p)) >= 0;) {
		uint32_t here = s->n;
		int rc;
		if (c == '"') {
			rc = parse_literal(p, s);
		} else if (c == '[') {
			rc = parse_class(p, s);
		} else if (c == '.') {
			p->pos++;
			struct gb_range any = {0, GB_MAX_CP};
			rc = push_class(p, s, &any, 1, false);
		} else if (c == '(') {
			rc = parse_group(p, s);
		} else if (is_word(c)) {
			size_t at = p->pos;
			while (is_word(peek(p)))
				p->pos++;
			uint32_t id;
			rc = lookup(p, at, p->pos - at, &id) || push(p, s, GB_ELEM(GB_REF, id));
		} else if (c == '*' || c == '+' || c == '?' || c == '{') {
			if (last == GB_NONE)
				return fail(p, p->pos, "'%c' must follow an element to repeat", c);
			rc = repeat(p, s, last);
			here = last;
		} else {
			break;
		}
		if (rc)
			return -1;
		last = here;
		skip_space(p, nested);
	}
	return 0;
}

static int parse_alternates(struct parser *p, uint32_t id, bool nested)
{
	struct gb_seq e = {0}, start = {0};
	int rc = 0;
	for (;;) {
		if ((rc = push(p, &start, e.n)) || (rc = parse_sequence(p, &e, nested)) ||
		    (rc = push(p, &e, GB_END)))
			break;
		if (peek(p) != '|')
			break;
		p->pos++;
		skip_space(p, true);
	}
	if (!rc)
		rc = built(p, gb_rule_define(p->g, id, e.v, e.n, start.v, start.n));
	gb_seq_free(p->g, &e);
	gb_seq_free(p->g, &start);
	return rc;
}

static int parse_rule(struct parser *p)
{
	char buf[16];
	size_t at = p->pos;
	int c = peek(p);
	if (!is_word(c))
		return fail(p, at, "expected a rule name, got %s%s", what(p, at, buf, sizeof buf),
			    c == '"' || c == '[' || c == '(' || c == '|' || c == '.' ?
				    " (a rule goes on to the next line only after '::=' or '|', "
				    "or inside parentheses)" : "");
	while (is_word(peek(p)))
		p->pos++;
	size_t name_len = p->pos - at;
	skip_space(p, false);
	if (!starts(p, "::="))
		return fail(p, p->pos, "expected '::=' after the rule name '%.*s', got %s",
			    (int)(name_len > 64 ? 64 : name_len), p->t + at,
			    what(p, p->pos, buf, sizeof buf));
	p->pos += 3;
	skip_space(p, true);
	uint32_t id;
	if (lookup(p, at, name_len, &id))
		return -1;
	struct gb_rule *r = &p->g->rules[id];
	if (r->def != GB_NONE)
		return fail(p, at, "rule '%.*s' is defined twice (first on line %lu)",
			    (int)(name_len > 64 ? 64 : name_len), p->t + at, line_of(p, r->def));
	r->def = (uint32_t)at;
	p->rule = id;
	if (parse_alternates(p, id, false))
		return -1;
	c = peek(p);
	if (c == '\r' || c == '\n') {
		p->pos += c == '\r' && p->pos + 1 < p->len && p->t[p->pos + 1] == '\n' ? 2 : 1;
		return 0;
	}
	if (c < 0)
		return 0;
	if (starts(p, "::="))
		return fail(p, p->pos, "expected the end of the line before '::=': each rule "
			    "begins on a line of its own");
	if (c == ')')
		return fail(p, p->pos, "unexpected ')': no group is open");
	return fail(p, p->pos, "expected an element (\"literal\", [class], rule name, '(' or '.'), "
		    "'|' or the end of the line, got %s", what(p, p->pos, buf, sizeof buf));
}

/* The offset of the first byte that is not part of valid UTF-8 (or is
 * NUL), or len. */
static size_t bad_utf8(const char *t, size_t len)
{
	for (size_t i = 0; i < len;) {
		struct gb_utf8 u;
		if (!t[i] || !gb_utf8_first((unsigned char)t[i], &u))
			return i;
		size_t k = 1;
		while (u.need && i + k < len && gb_utf8_next(&u, (unsigned char)t[i + k]))
			k++;
		if (u.need)
			return i;
		i += k;
	}
	return len;
}

int gb_parse(const char *text, size_t len, struct gb_grammar *g, char *err, size_t errsz)
{
	struct parser p = {.t = text, .len = len, .g = g, .err = err, .errsz = errsz};
	g->root = GB_NONE;
	g->start = GB_NONE;
	size_t bad = bad_utf8(text, len);
	if (bad < len)
		return fail(&p, bad, "%s: a grammar is UTF-8 text",
			    text[bad] ? "invalid UTF-8" : "a NUL byte");
	int rc = 0;
	skip_space(&p, true);
	while (!rc && p.pos < len) {
		rc = parse_rule(&p);
		skip_space(&p, true);
	}
	if (!rc && !p.n_names)
		rc = fail(&p, len, "expected a rule such as 'root ::= \"yes\" | \"no\"': the grammar is empty");
	if (!rc) {
		uint32_t *slot = name_slot(&p, "root", 4);
		g->root = *slot ? *slot - 1 : GB_NONE;
	}
	free(p.names);
	return rc;
}

void gb_grammar_free(struct gb_grammar *g)
{
	free(g->elems);
	free(g->alts);
	free(g->rules);
	free(g->classes);
	free(g->ranges);
	free(g->class_map);
	*g = (struct gb_grammar){0};
}
