/* pattern: a regular expression -> the GBNF of the JSON strings whose
 * value it matches. The subset read (doc/grammars.md):
 *
 *   abc  é          characters; \ before a punctuation character: itself
 *   \n \t \r \f \v  \xHH \uHHHH      escapes of one character
 *   \d \w \s  \D \W \S               classes (ASCII; the negated ones too)
 *   [a-z_] [^"]     classes: ranges, escapes, a leading ^ negates
 *   .               any character but \n and \r (as llama.cpp)
 *   ( ) (?: )       groups;  a|b alternation
 *   ? * + {m} {m,} {m,n}  repetition (a lazy ? after one changes nothing)
 *   ^ $             only at the start and the end: without them the
 *                   match may be anywhere in the string
 *
 * A character is written as JSON writes it inside a string: the quote,
 * the backslash and the controls as escapes (\" \\ \n, \u00XX), the rest
 * as themselves, so the text stays JSON whatever the pattern allows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#define MAX_RANGES 512

struct set {
	uint32_t lo[MAX_RANGES], hi[MAX_RANGES];
	unsigned n;
	bool too_big;
};

struct rx {
	struct sc *c;
	const char *s;
	size_t n, i;
	unsigned depth;
};

static void add(struct set *t, uint32_t lo, uint32_t hi)
{
	if (t->n == MAX_RANGES) {
		t->too_big = true;
		return;
	}
	t->lo[t->n] = lo;
	t->hi[t->n++] = hi;
}

static int cmp_lo(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorted, merged ranges. */
static void normalize(struct set *t)
{
	uint32_t pairs[2 * MAX_RANGES];
	for (unsigned k = 0; k < t->n; k++) {
		pairs[2 * k] = t->lo[k];
		pairs[2 * k + 1] = t->hi[k];
	}
	qsort(pairs, t->n, 2 * sizeof *pairs, cmp_lo);
	unsigned m = 0;
	for (unsigned k = 0; k < t->n; k++) {
		uint32_t lo = pairs[2 * k], hi = pairs[2 * k + 1];
		if (m && lo <= t->hi[m - 1] + 1) {
			if (hi > t->hi[m - 1])
				t->hi[m - 1] = hi;
		} else {
			t->lo[m] = lo;
			t->hi[m++] = hi;
		}
	}
	t->n = m;
}

/* The code points of 0..top not in t (t normalized). */
static void complement(struct set *t, uint32_t top)
{
	struct set r = {.n = 0};
	uint32_t next = 0;
	for (unsigned k = 0; k < t->n && next <= top; k++) {
		if (t->lo[k] > next)
			add(&r, next, t->lo[k] - 1 < top ? t->lo[k] - 1 : top);
		next = t->hi[k] + 1;
	}
	if (next <= top)
		add(&r, next, top);
	r.too_big |= t->too_big;
	*t = r;
}

static bool has(const struct set *t, uint32_t cp)
{
	for (unsigned k = 0; k < t->n; k++)
		if (cp >= t->lo[k] && cp <= t->hi[k])
			return true;
	return false;
}

static bool special(uint32_t cp)
{
	return cp < 0x20 || cp == '"' || cp == '\\' || cp == 0x7f;
}

/* Code point cp as JSON writes it in a string, as GBNF: itself, or an
 * escape (a \u00XX escape in either case of its hex letter). */
static void json_char(struct sc_buf *out, uint32_t cp)
{
	static const char shorts[] = "\"\"\\\\\bb\ff\nn\rr\tt";
	for (const char *p = shorts; *p; p += 2)
		if ((uint32_t)(unsigned char)p[0] == cp) {
			char esc[2] = {'\\', p[1]};
			sc_lit(out, esc, 2);
			return;
		}
	if (special(cp)) {
		/* the escape's first hex digit: 0..7 */
		char esc[5] = {'\\', 'u', '0', '0', (char)('0' + ((cp >> 4) & 7u))};
		sc_lit(out, esc, 5);
		unsigned low = cp & 15;
		if (low < 10)
			sc_printf(out, " \"%u\"", low);
		else
			sc_printf(out, " [%c%c]", 'a' + low - 10, 'A' + low - 10);
		return;
	}
	char u[4];
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
	for (size_t k = n - 1; k > 0; k--, cp >>= 6)
		u[k] = (char)(0x80 | (cp & 0x3f));
	u[0] = (char)(n == 1 ? cp : (lead[n] | cp));
	sc_lit(out, u, n);
}

/* The characters of t, as JSON writes them in a string: a class of the
 * ones written as themselves and the escapes of the others. */
static void json_set(struct sc_buf *out, const struct set *t)
{
	sc_puts(out, "(");
	bool alt = false, any = false;
	struct sc_buf cls = {0};
	/* what is not written as itself, and the surrogates, which are no
	 * characters: the runs between them are the class */
	static const uint32_t cut[][2] = {{0, 0x1f}, {0x22, 0x22}, {0x5c, 0x5c}, {0x7f, 0x7f},
					  {0xd800, 0xdfff}, {0x110000, 0x110000}};
	for (unsigned k = 0; k < t->n; k++) {
		uint32_t lo = t->lo[k];
		for (unsigned b = 0; b < sizeof cut / sizeof *cut && lo <= t->hi[k]; b++) {
			if (lo < cut[b][0]) {
				uint32_t hi = t->hi[k] < cut[b][0] - 1 ? t->hi[k] : cut[b][0] - 1;
				sc_class_cp(&cls, lo);
				if (hi > lo) {
					sc_puts(&cls, "-");
					sc_class_cp(&cls, hi);
				}
				any = true;
			}
			if (lo <= cut[b][1])
				lo = cut[b][1] + 1;
		}
	}
	if (any) {
		sc_printf(out, "[%s]", cls.s);
		alt = true;
	}
	sc_buf_free(&cls);
	for (uint32_t cp = 0; cp < 0x80; cp++)
		if (special(cp) && has(t, cp)) {
			sc_puts(out, alt ? " | " : "");
			json_char(out, cp);
			alt = true;
		}
	sc_puts(out, ")");
}

static int fail(struct rx *r, size_t at, const char *fmt, const char *arg)
{
	size_t col = 1;
	for (size_t k = 0; k < at && k < r->n; k++)
		col += ((unsigned char)r->s[k] & 0xc0) != 0x80;
	char msg[256];
	snprintf(msg, sizeof msg, fmt, arg);
	return sc_fail(r->c, "pattern", "character %zu: %s", col, msg);
}

static int peek(const struct rx *r)
{
	return r->i < r->n ? (unsigned char)r->s[r->i] : -1;
}

static int hex(struct rx *r, int digits, uint32_t *cp)
{
	*cp = 0;
	for (int k = 0; k < digits; k++) {
		int ch = peek(r);
		int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (v < 0)
			return fail(r, r->i, "expected %s hex digits", digits == 2 ? "2" : "4");
		*cp = *cp << 4 | (uint32_t)v;
		r->i++;
	}
	if (*cp >= 0xd800 && *cp <= 0xdfff)
		return fail(r, r->i, "%s: a surrogate is not a character", "\\u");
	return 0;
}

/* An escape after the backslash: one character (*cp, *is_set false) or
 * a class (*t). */
static int escape(struct rx *r, uint32_t *cp, struct set *t, bool *is_set)
{
	size_t at = r->i - 1;
	int ch = peek(r);
	*is_set = false;
	if (ch < 0)
		return fail(r, at, "%s", "a lone backslash at the end");
	r->i++;
	char lower = (char)(ch | 0x20);
	if (lower == 'd' || lower == 'w' || lower == 's') {
		t->n = 0;
		t->too_big = false;
		if (lower == 'd') {
			add(t, '0', '9');
		} else if (lower == 'w') {
			add(t, '0', '9');
			add(t, 'A', 'Z');
			add(t, '_', '_');
			add(t, 'a', 'z');
		} else {
			add(t, '\t', '\r');
			add(t, ' ', ' ');
		}
		normalize(t);
		if (ch != lower) /* \D \W \S: ASCII, which every engine agrees on */
			complement(t, 0x7f);
		*is_set = true;
		return 0;
	}
	switch (ch) {
	case 'n': *cp = '\n'; return 0;
	case 't': *cp = '\t'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 'f': *cp = '\f'; return 0;
	case 'v': *cp = '\v'; return 0;
	case 'x': return hex(r, 2, cp);
	case 'u': return hex(r, 4, cp);
	}
	if (ch < 0x80 && !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
		*cp = (uint32_t)ch;
		return 0;
	}
	char what[8];
	snprintf(what, sizeof what, "\\%c", ch < 0x80 ? ch : '?');
	return fail(r, at, "unsupported escape '%s' (see doc/grammars.md for the subset)", what);
}

/* A class after its '['. */
static int class(struct rx *r, struct set *t)
{
	size_t at = r->i - 1;
	bool negate = peek(r) == '^';
	bool shorthand = false;
	r->i += negate;
	t->n = 0;
	t->too_big = false;
	for (bool first = true;; first = false) {
		int ch = peek(r);
		if (ch < 0)
			return fail(r, at, "%s", "expected ']' to end the class begun here");
		if (ch == ']' && !first)
			break;
		uint32_t lo;
		struct set sub;
		bool is_set = false;
		if (ch == '\\') {
			r->i++;
			if (escape(r, &lo, &sub, &is_set))
				return -1;
		} else {
			lo = sc_utf8_next(r->s, r->n, &r->i);
		}
		if (is_set) {
			for (unsigned k = 0; k < sub.n; k++)
				add(t, sub.lo[k], sub.hi[k]);
			shorthand = true;
			continue;
		}
		uint32_t hi = lo;
		if (peek(r) == '-' && r->i + 1 < r->n && r->s[r->i + 1] != ']') {
			size_t dash = r->i;
			r->i++;
			if (peek(r) == '\\') {
				r->i++;
				if (escape(r, &hi, &sub, &is_set))
					return -1;
				if (is_set)
					return fail(r, dash, "%s", "a range cannot end with a class");
			} else {
				hi = sc_utf8_next(r->s, r->n, &r->i);
			}
			if (hi < lo)
				return fail(r, dash, "%s", "a backwards range");
		}
		add(t, lo, hi);
	}
	r->i++;
	normalize(t);
	/* [^\d]: ASCII only, as \D (engines disagree on Unicode digits) */
	if (negate)
		complement(t, shorthand ? 0x7f : 0x10ffff);
	if (t->too_big)
		return fail(r, at, "%s", "the class has too many ranges");
	if (!t->n)
		return fail(r, at, "%s", "the class matches no character");
	return 0;
}

static int alternatives(struct rx *r, struct sc_buf *out);

/* One element and its repetition. */
static int piece(struct rx *r, struct sc_buf *out)
{
	size_t at = r->i;
	int ch = peek(r);
	struct sc_buf atom = {0};
	struct set t;
	int rc = 0;
	if (ch == '(') {
		r->i++;
		if (peek(r) == '?') {
			if (r->i + 1 < r->n && r->s[r->i + 1] == ':') {
				r->i += 2;
			} else {
				sc_buf_free(&atom);
				return fail(r, at, "%s", "only (?: ) of the (? groups is supported");
			}
		}
		if (++r->depth > SC_MAX_DEPTH) {
			sc_buf_free(&atom);
			return fail(r, at, "%s", "groups nested too deep");
		}
		rc = alternatives(r, &atom);
		r->depth--;
		if (!rc && peek(r) != ')')
			rc = fail(r, at, "%s", "expected ')' to close the group begun here");
		r->i++;
	} else if (ch == '[') {
		r->i++;
		if (!(rc = class(r, &t)))
			json_set(&atom, &t);
	} else if (ch == '.') {
		r->i++;
		t.n = 0;
		t.too_big = false;
		add(&t, '\n', '\n');
		add(&t, '\r', '\r');
		complement(&t, 0x10ffff);
		json_set(&atom, &t);
	} else if (ch == '\\') {
		r->i++;
		uint32_t cp;
		bool is_set;
		if (!(rc = escape(r, &cp, &t, &is_set))) {
			if (is_set)
				json_set(&atom, &t);
			else
				json_char(&atom, cp);
		}
	} else if (ch == '*' || ch == '+' || ch == '?' || ch == '{') {
		rc = fail(r, at, "'%s' has nothing to repeat", (char[]){(char)ch, 0});
	} else if (ch == '^' || ch == '$') {
		rc = fail(r, at, "'%s': anchors are read only at the start and the end",
			  ch == '^' ? "^" : "$");
	} else {
		json_char(&atom, sc_utf8_next(r->s, r->n, &r->i));
	}
	if (rc) {
		sc_buf_free(&atom);
		return rc;
	}
	ch = peek(r);
	char rep[48] = "";
	size_t qat = r->i;
	if (ch == '*' || ch == '+' || ch == '?') {
		r->i++;
		snprintf(rep, sizeof rep, "%c", ch);
	} else if (ch == '{') {
		r->i++;
		unsigned long m = 0, n = 0;
		bool has_n = true, digits = false;
		while (peek(r) >= '0' && peek(r) <= '9' && m <= SC_MAX_COUNT) {
			m = m * 10 + (unsigned long)(peek(r) - '0');
			r->i++;
			digits = true;
		}
		n = m;
		if (peek(r) == ',') {
			r->i++;
			has_n = peek(r) >= '0' && peek(r) <= '9';
			for (n = 0; peek(r) >= '0' && peek(r) <= '9' && n <= SC_MAX_COUNT; r->i++)
				n = n * 10 + (unsigned long)(peek(r) - '0');
		}
		if (!digits || peek(r) != '}')
			rc = fail(r, qat, "%s", "expected {m}, {m,} or {m,n}");
		else if (m > SC_MAX_COUNT || (has_n && n > SC_MAX_COUNT))
			rc = fail(r, qat, "%s", "a count above 100000");
		else if (has_n && n < m)
			rc = fail(r, qat, "%s", "{m,n} with n below m");
		r->i++;
		if (has_n)
			snprintf(rep, sizeof rep, "{%lu,%lu}", m, n);
		else
			snprintf(rep, sizeof rep, "{%lu,}", m);
	}
	if (!rc && *rep) {
		if (peek(r) == '?') /* lazy: the same strings */
			r->i++;
		ch = peek(r);
		if (ch == '*' || ch == '+' || ch == '?' || ch == '{')
			rc = fail(r, r->i, "%s", "a repetition of a repetition: put it in a group");
	}
	if (!rc)
		sc_printf(out, *rep ? "(%s)%s" : "%s", atom.s ? atom.s : "\"\"", rep);
	sc_buf_free(&atom);
	return rc;
}

/* Sequences separated by '|', up to ')' or the end. */
static int alternatives(struct rx *r, struct sc_buf *out)
{
	sc_puts(out, "(");
	for (bool first = true;; first = false) {
		if (!first)
			sc_puts(out, " | ");
		bool empty = true;
		while (r->i < r->n && peek(r) != '|' && peek(r) != ')') {
			if (!empty)
				sc_puts(out, " ");
			if (piece(r, out))
				return -1;
			empty = false;
		}
		if (empty)
			sc_puts(out, "\"\"");
		if (peek(r) != '|')
			break;
		r->i++;
	}
	sc_puts(out, ")");
	return 0;
}

int sc_pattern(struct sc *c, const char *pattern, struct sc_buf *out)
{
	struct rx r = {.c = c, .s = pattern, .n = strlen(pattern)};
	bool start = r.n && pattern[0] == '^';
	size_t backslashes = 0;
	while (backslashes + 1 < r.n && pattern[r.n - 2 - backslashes] == '\\')
		backslashes++;
	bool end = r.n > (size_t)start && pattern[r.n - 1] == '$' && backslashes % 2 == 0;
	r.i = start;
	r.n -= end;
	const char *ch = sc_prim(c, SC_CHAR);
	sc_puts(out, "(\"\\\"\" ");
	if (!start)
		sc_printf(out, "%s* ", ch);
	if (alternatives(&r, out))
		return -1;
	if (r.i < r.n)
		return fail(&r, r.i, "%s", "')' closes no group");
	if (!end)
		sc_printf(out, " %s*", ch);
	sc_printf(out, " \"\\\"\" %s)", sc_prim(c, SC_SPACE));
	return 0;
}
