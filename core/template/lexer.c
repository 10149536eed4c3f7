/* The lexer: template text into data and tag tokens, with Jinja's
 * whitespace control as transformers configures it (trim_blocks and
 * lstrip_blocks on, one trailing newline dropped). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "template/tpl.h"

struct lexer {
	struct tpl_ctx *c;
	const char *s;
	size_t len;
	size_t at, line, line_start; /* a cursor for line numbers, moving forward */
	struct tpl_token *t;
	size_t n, cap;
};

static void position(struct lexer *lx, size_t off, int *line, int *col)
{
	for (; lx->at < off; lx->at++)
		if (lx->s[lx->at] == '\n') {
			lx->line++;
			lx->line_start = lx->at + 1;
		}
	*line = (int)lx->line;
	*col = (int)(off - lx->line_start + 1);
}

static struct tpl_token *emit(struct lexer *lx, enum tk_kind kind, size_t off, const char *text,
			      size_t len)
{
	if (lx->n == lx->cap) {
		size_t cap = lx->cap ? lx->cap * 2 : 256;
		struct tpl_token *t = tpl_alloc(lx->c, cap * sizeof *t);
		if (lx->n)
			memcpy(t, lx->t, lx->n * sizeof *t);
		lx->t = t;
		lx->cap = cap;
	}
	struct tpl_token *t = &lx->t[lx->n++];
	t->kind = kind;
	position(lx, off, &t->line, &t->col);
	t->text = text ? tpl_strndup(lx->c, text, len) : "";
	t->len = text ? len : 0;
	return t;
}

_Noreturn static void lex_fail(struct lexer *lx, size_t off, const char *what)
{
	int line, col;
	position(lx, off, &line, &col);
	tpl_fail(lx->c, line, col, "%s", what);
}

static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Python's str.splitlines() and "\n".join(): every line break becomes
 * \n and one trailing line break goes. */
static char *normalize(struct tpl_ctx *c, const char *s, size_t len, size_t *outlen)
{
	char *o = tpl_alloc(c, len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		size_t skip = 0;
		if (ch == '\r' && i + 1 < len && s[i + 1] == '\n')
			skip = 1;
		else if (ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' ||
			 (ch >= 0x1c && ch <= 0x1e))
			skip = 0;
		else if (ch == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] == 0x85)
			skip = 1;
		else if (ch == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
			 ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9))
			skip = 2;
		else {
			o[n++] = (char)ch;
			continue;
		}
		o[n++] = '\n';
		i += skip;
	}
	if (n && o[n - 1] == '\n')
		n--;
	o[n] = 0;
	*outlen = n;
	return o;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void put_utf8(struct tpl_ctx *c, struct tpl_buf *b, uint32_t cp)
{
	char u[4];
	size_t k;
	if (cp < 0x80) {
		u[0] = (char)cp;
		k = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	tpl_buf_put(c, b, u, k);
}

/* A string literal at s[*i] (the quote); Python's escapes decoded. */
static void lex_string(struct lexer *lx, size_t *i)
{
	size_t start = *i;
	char q = lx->s[start];
	struct tpl_buf b = {0};
	tpl_buf_put(lx->c, &b, "", 0);
	size_t k = start + 1;
	for (;;) {
		if (k >= lx->len)
			lex_fail(lx, start, "unterminated string");
		char ch = lx->s[k];
		if (ch == q)
			break;
		if (ch != '\\') {
			tpl_buf_put(lx->c, &b, &ch, 1);
			k++;
			continue;
		}
		if (k + 1 >= lx->len)
			lex_fail(lx, start, "unterminated string");
		char e = lx->s[k + 1];
		static const char from[] = "nrtabfv\\'\"\n", to[] = "\n\r\t\a\b\f\v\\'\"";
		const char *p = strchr(from, e);
		if (p && e) {
			if (e != '\n')
				tpl_buf_put(lx->c, &b, &to[p - from], 1);
			k += 2;
		} else if (e == 'x' || e == 'u' || e == 'U') {
			int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
			uint32_t cp = 0;
			for (int d = 0; d < nd; d++) {
				int h = k + 2 + d < lx->len ? hexval(lx->s[k + 2 + d]) : -1;
				if (h < 0)
					lex_fail(lx, k, "truncated \\x, \\u or \\U escape in a string");
				cp = cp << 4 | (uint32_t)h;
			}
			if (cp > 0x10ffff)
				lex_fail(lx, k, "\\U escape beyond U+10FFFF in a string");
			put_utf8(lx->c, &b, cp);
			k += 2 + (size_t)nd;
		} else if (e >= '0' && e <= '7') {
			uint32_t cp = 0;
			size_t d = k + 1;
			for (; d < lx->len && d < k + 4 && lx->s[d] >= '0' && lx->s[d] <= '7'; d++)
				cp = cp * 8 + (uint32_t)(lx->s[d] - '0');
			put_utf8(lx->c, &b, cp);
			k = d;
		} else { /* Python keeps an unknown escape as it is */
			tpl_buf_put(lx->c, &b, "\\", 1);
			k++;
		}
	}
	emit(lx, TK_STRING, start, b.p, b.n);
	*i = k + 1;
}

static void lex_number(struct lexer *lx, size_t *i)
{
	size_t start = *i, k = start;
	char digits[128];
	size_t nd = 0;
	bool is_float = false;
	while (k < lx->len && ((lx->s[k] >= '0' && lx->s[k] <= '9') || lx->s[k] == '_')) {
		if (lx->s[k] != '_' && nd < sizeof digits - 8)
			digits[nd++] = lx->s[k];
		k++;
	}
	if (k + 1 < lx->len && lx->s[k] == '.' && lx->s[k + 1] >= '0' && lx->s[k + 1] <= '9') {
		is_float = true;
		digits[nd++] = lx->s[k++];
		while (k < lx->len && ((lx->s[k] >= '0' && lx->s[k] <= '9') || lx->s[k] == '_')) {
			if (lx->s[k] != '_' && nd < sizeof digits - 8)
				digits[nd++] = lx->s[k];
			k++;
		}
	}
	if (k < lx->len && (lx->s[k] == 'e' || lx->s[k] == 'E')) {
		size_t e = k + 1;
		if (e < lx->len && (lx->s[e] == '+' || lx->s[e] == '-'))
			e++;
		if (e < lx->len && lx->s[e] >= '0' && lx->s[e] <= '9') {
			is_float = true;
			digits[nd++] = 'e';
			for (size_t j = k + 1; j < e; j++)
				digits[nd++] = lx->s[j];
			k = e;
			while (k < lx->len && lx->s[k] >= '0' && lx->s[k] <= '9') {
				if (nd < sizeof digits - 1)
					digits[nd++] = lx->s[k];
				k++;
			}
		}
	}
	digits[nd] = 0;
	struct tpl_token *t = emit(lx, is_float ? TK_FLOAT : TK_INT, start, lx->s + start, k - start);
	errno = 0;
	if (is_float) {
		t->f = strtod(digits, NULL);
	} else {
		t->i = strtoll(digits, NULL, 10);
		if (errno)
			lex_fail(lx, start, "integer literal out of range (belt's integers are 64-bit)");
	}
	*i = k;
}

/* The inside of a {{ }} or {% %} tag from s[*i]; returns true at its end,
 * after which *i is past the closing tag and *trim says what follows:
 * 1: strip all whitespace, 2: one newline (trim_blocks), 0: nothing. */
static void lex_tag(struct lexer *lx, size_t *i, bool block, size_t tag_start, int *trim)
{
	static const char *const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
					  "/",	"%",  "~",  "<",  ">",	"=",  "(", ")", "[",
					  "]",	"{",  "}",  ",",  ".",	":",  "|"};
	int depth = 0;
	size_t k = *i;
	char close = block ? '%' : '}';
	for (;;) {
		while (k < lx->len && is_ws(lx->s[k]))
			k++;
		if (k >= lx->len)
			lex_fail(lx, tag_start, block ? "unclosed tag: expected '%}'"
						      : "unclosed tag: expected '}}'");
		const char *p = lx->s + k;
		size_t left = lx->len - k;
		if (depth == 0) {
			if (left >= 3 && p[0] == '-' && p[1] == close && p[2] == '}') {
				emit(lx, block ? TK_BLOCK_END : TK_VAR_END, k, NULL, 0);
				*i = k + 3;
				*trim = 1;
				return;
			}
			if (block && left >= 3 && p[0] == '+' && p[1] == '%' && p[2] == '}') {
				emit(lx, TK_BLOCK_END, k, NULL, 0);
				*i = k + 3;
				*trim = 0;
				return;
			}
			if (left >= 2 && p[0] == close && p[1] == '}') {
				emit(lx, block ? TK_BLOCK_END : TK_VAR_END, k, NULL, 0);
				*i = k + 2;
				*trim = block ? 2 : 0;
				return;
			}
		}
		char ch = *p;
		if (ch == '\'' || ch == '"') {
			lex_string(lx, &k);
		} else if (ch >= '0' && ch <= '9') {
			lex_number(lx, &k);
		} else if (ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
			size_t e = k;
			while (e < lx->len && (lx->s[e] == '_' || (lx->s[e] >= 'a' && lx->s[e] <= 'z') ||
					       (lx->s[e] >= 'A' && lx->s[e] <= 'Z') ||
					       (lx->s[e] >= '0' && lx->s[e] <= '9')))
				e++;
			emit(lx, TK_NAME, k, p, e - k);
			k = e;
		} else {
			size_t j = 0;
			for (; j < sizeof ops / sizeof *ops; j++)
				if (!strncmp(p, ops[j], strlen(ops[j])))
					break;
			if (j == sizeof ops / sizeof *ops)
				lex_fail(lx, k, "unexpected character in a tag");
			size_t l = strlen(ops[j]);
			if (ch == '(' || ch == '[' || ch == '{')
				depth++;
			else if (ch == ')' || ch == ']' || ch == '}') {
				if (depth == 0)
					lex_fail(lx, k, "unbalanced closing bracket");
				depth--;
			}
			emit(lx, TK_OP, k, p, l);
			k += l;
		}
	}
}

/* Skip what follows a closing tag; returns whether the text skipped ends
 * a line (Jinja's "line_starting" for lstrip_blocks). */
static bool after_tag(struct lexer *lx, size_t *i, int trim)
{
	size_t k = *i;
	if (trim == 1)
		while (k < lx->len && is_ws(lx->s[k]))
			k++;
	else if (trim == 2 && k < lx->len && lx->s[k] == '\n')
		k++;
	*i = k;
	return k > 0 && lx->s[k - 1] == '\n' && trim;
}

struct tpl_token *tpl_lex(struct tpl_ctx *c, const char *src, size_t len, size_t *n)
{
	struct lexer lx = {.c = c, .line = 1};
	lx.s = normalize(c, src, len, &lx.len);
	size_t i = 0;
	bool line_starting = true;
	while (i < lx.len) {
		const char *tag = NULL;
		for (size_t k = i; k + 1 < lx.len; k++)
			if (lx.s[k] == '{' && (lx.s[k + 1] == '{' || lx.s[k + 1] == '%' ||
					       lx.s[k + 1] == '#')) {
				tag = lx.s + k;
				break;
			}
		size_t end = tag ? (size_t)(tag - lx.s) : lx.len, dlen = end - i;
		if (!tag) {
			emit(&lx, TK_DATA, i, lx.s + i, dlen);
			break;
		}
		char kind = tag[1], ctl = end + 2 < lx.len ? tag[2] : 0;
		if (ctl == '-') {
			while (dlen && is_ws(lx.s[i + dlen - 1]))
				dlen--;
		} else if (kind != '{' && ctl != '+') {
			size_t l = dlen;
			while (l && lx.s[i + l - 1] != '\n')
				l--;
			bool blank = l < dlen;
			for (size_t k = l; k < dlen; k++)
				blank = blank && is_ws(lx.s[i + k]);
			if ((l > 0 || line_starting) && blank)
				dlen = l;
		}
		if (dlen)
			emit(&lx, TK_DATA, i, lx.s + i, dlen);
		size_t k = end + 2 + (ctl == '-' || ctl == '+');
		int trim;
		if (kind == '#') {
			const char *e = k < lx.len ? memmem(lx.s + k, lx.len - k, "#}", 2) : NULL;
			if (!e)
				lex_fail(&lx, end, "unclosed comment: expected '#}'");
			size_t at = (size_t)(e - lx.s);
			char before = at > k ? lx.s[at - 1] : 0;
			trim = before == '-' ? 1 : before == '+' ? 0 : 2;
			k = at + 2;
		} else {
			emit(&lx, kind == '%' ? TK_BLOCK : TK_VAR, end, NULL, 0);
			lex_tag(&lx, &k, kind == '%', end, &trim);
		}
		line_starting = after_tag(&lx, &k, trim);
		i = k;
	}
	emit(&lx, TK_EOF, lx.len, NULL, 0);
	*n = lx.n;
	return lx.t;
}
