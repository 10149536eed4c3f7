/* Python's string operations over UTF-8: lengths and indexes count code
 * points; whitespace is Python's str.isspace(); case mapping through
 * utf8proc (one character to one, so "ß".upper() stays "ß"). */
#include <string.h>

#include <utf8proc.h>

#include "template/tpl.h"

/* The code point at s[0..n) and its length; a byte that is not UTF-8
 * counts as one character of its own. */
static int32_t decode(const char *s, size_t n, size_t *len)
{
	utf8proc_int32_t cp;
	utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s,
					      n > 4 ? 4 : (utf8proc_ssize_t)n, &cp);
	if (k <= 0) {
		*len = 1;
		return -1;
	}
	*len = (size_t)k;
	return cp;
}

size_t tpl_utf8_count(const char *s, size_t n)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += ((unsigned char)s[i] & 0xc0) != 0x80;
	return count;
}

size_t tpl_utf8_offset(const char *s, size_t n, size_t i)
{
	size_t off = 0;
	while (i && off < n) {
		off++;
		while (off < n && ((unsigned char)s[off] & 0xc0) == 0x80)
			off++;
		i--;
	}
	return off;
}

static bool space_cp(int32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
	       cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

bool tpl_is_space(const char *s, size_t n, size_t *len)
{
	return space_cp(decode(s, n, len));
}

/* Whether the character at s[0..n) (length *len) is one of chars. */
static bool in_set(const char *s, size_t n, size_t *len, const struct tstr *chars)
{
	if (!chars)
		return tpl_is_space(s, n, len);
	decode(s, n, len);
	for (size_t i = 0; i < chars->len;) {
		size_t l;
		decode(chars->s + i, chars->len - i, &l);
		if (l == *len && !memcmp(chars->s + i, s, l))
			return true;
		i += l;
	}
	return false;
}

/* The start of the character that ends at s[n] (exclusive). */
static size_t last_char(const char *s, size_t n)
{
	size_t k = n - 1;
	while (k > 0 && n - k < 4 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return k;
}

struct tval tpl_strip(struct tpl_ctx *c, const struct tstr *s, const struct tstr *chars,
		      bool left, bool right)
{
	size_t a = 0, b = s->len, l;
	while (left && a < b && in_set(s->s + a, b - a, &l, chars))
		a += l;
	while (right && b > a) {
		size_t k = last_char(s->s, b);
		if (!in_set(s->s + k, b - k, &l, chars) || k + l != b)
			break;
		b = k;
	}
	return tv_str(c, s->s + a, b - a);
}

static struct tval split_ws(struct tpl_ctx *c, const struct tstr *s, int64_t maxsplit,
			    bool from_right)
{
	struct tval out = tv_list(c, 0);
	const char *p = s->s;
	size_t n = s->len, l;
	if (!from_right) {
		size_t i = 0;
		for (;;) {
			while (i < n && tpl_is_space(p + i, n - i, &l))
				i += l;
			if (i >= n)
				break;
			if (maxsplit >= 0 && (int64_t)out.u.l->n == maxsplit) {
				tv_list_push(c, out.u.l, tv_str(c, p + i, n - i)); /* the rest, as it is */
				break;
			}
			size_t j = i;
			while (j < n && !tpl_is_space(p + j, n - j, &l))
				j += l;
			tv_list_push(c, out.u.l, tv_str(c, p + i, j - i));
			i = j;
		}
		return out;
	}
	/* from the right: collect words backwards, then reverse */
	size_t e = n;
	for (;;) {
		while (e > 0) {
			size_t k = last_char(p, e);
			if (!tpl_is_space(p + k, e - k, &l))
				break;
			e = k;
		}
		if (e == 0)
			break;
		if (maxsplit >= 0 && (int64_t)out.u.l->n == maxsplit) {
			tv_list_push(c, out.u.l, tv_str(c, p, e));
			break;
		}
		size_t b = e;
		while (b > 0) {
			size_t k = last_char(p, b);
			if (tpl_is_space(p + k, b - k, &l))
				break;
			b = k;
		}
		tv_list_push(c, out.u.l, tv_str(c, p + b, e - b));
		e = b;
	}
	for (size_t i = 0, j = out.u.l->n; i + 1 < j; i++, j--) {
		struct tval t = out.u.l->v[i];
		out.u.l->v[i] = out.u.l->v[j - 1];
		out.u.l->v[j - 1] = t;
	}
	return out;
}

struct tval tpl_split(struct tpl_ctx *c, const struct tstr *s, const struct tstr *sep,
		      int64_t maxsplit, bool from_right)
{
	if (!sep)
		return split_ws(c, s, maxsplit, from_right);
	struct tval out = tv_list(c, 0);
	const char *p = s->s;
	size_t n = s->len, m = sep->len;
	if (!from_right) {
		size_t i = 0;
		for (;;) {
			const char *hit = NULL;
			if (maxsplit < 0 || (int64_t)out.u.l->n < maxsplit)
				hit = i <= n ? memmem(p + i, n - i, sep->s, m) : NULL;
			if (!hit) {
				tv_list_push(c, out.u.l, tv_str(c, p + i, n - i));
				return out;
			}
			tv_list_push(c, out.u.l, tv_str(c, p + i, (size_t)(hit - p) - i));
			i = (size_t)(hit - p) + m;
		}
	}
	size_t e = n;
	for (;;) {
		size_t hit = SIZE_MAX;
		if ((maxsplit < 0 || (int64_t)out.u.l->n < maxsplit) && e >= m)
			for (size_t k = e - m + 1; k-- > 0;)
				if (!memcmp(p + k, sep->s, m)) {
					hit = k;
					break;
				}
		if (hit == SIZE_MAX) {
			tv_list_push(c, out.u.l, tv_str(c, p, e));
			break;
		}
		tv_list_push(c, out.u.l, tv_str(c, p + hit + m, e - hit - m));
		e = hit;
	}
	for (size_t i = 0, j = out.u.l->n; i + 1 < j; i++, j--) {
		struct tval t = out.u.l->v[i];
		out.u.l->v[i] = out.u.l->v[j - 1];
		out.u.l->v[j - 1] = t;
	}
	return out;
}

struct tval tpl_replace(struct tpl_ctx *c, const struct tstr *s, const struct tstr *old,
			const struct tstr *new, int64_t count)
{
	struct tpl_buf b = {0};
	tpl_buf_put(c, &b, "", 0);
	size_t i = 0, n = s->len;
	int64_t done = 0;
	if (!old->len) { /* Python inserts new around every character */
		while (count < 0 || done < count) {
			tpl_buf_put(c, &b, new->s, new->len);
			done++;
			if (i >= n)
				break;
			size_t l;
			decode(s->s + i, n - i, &l);
			tpl_buf_put(c, &b, s->s + i, l);
			i += l;
		}
		tpl_buf_put(c, &b, s->s + i, n - i);
		return tv_str(c, b.p, b.n);
	}
	while (count < 0 || done < count) {
		const char *hit = memmem(s->s + i, n - i, old->s, old->len);
		if (!hit)
			break;
		tpl_buf_put(c, &b, s->s + i, (size_t)(hit - s->s) - i);
		tpl_buf_put(c, &b, new->s, new->len);
		i = (size_t)(hit - s->s) + old->len;
		done++;
	}
	tpl_buf_put(c, &b, s->s + i, n - i);
	return tv_str(c, b.p, b.n);
}

static bool cased(int32_t cp)
{
	utf8proc_category_t k = utf8proc_category(cp);
	return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}

struct tval tpl_case(struct tpl_ctx *c, const struct tstr *s, enum tpl_case how)
{
	struct tpl_buf b = {0};
	tpl_buf_put(c, &b, "", 0);
	bool prev_cased = false, first = true;
	for (size_t i = 0; i < s->len;) {
		size_t l;
		int32_t cp = decode(s->s + i, s->len - i, &l);
		if (cp < 0) {
			tpl_buf_put(c, &b, s->s + i, 1);
			i++;
			prev_cased = first = false;
			continue;
		}
		int32_t o = cp;
		switch (how) {
		case TPL_UPPER: o = utf8proc_toupper(cp); break;
		case TPL_LOWER: o = utf8proc_tolower(cp); break;
		case TPL_TITLE:
			o = prev_cased ? utf8proc_tolower(cp) : utf8proc_totitle(cp);
			prev_cased = cased(cp);
			break;
		case TPL_CAPITALIZE: o = first ? utf8proc_totitle(cp) : utf8proc_tolower(cp); break;
		}
		first = false;
		utf8proc_uint8_t u[4];
		utf8proc_ssize_t k = utf8proc_encode_char(o, u);
		tpl_buf_put(c, &b, (const char *)u, (size_t)k);
		i += l;
	}
	return tv_str(c, b.p, b.n);
}

int64_t tpl_find(const struct tstr *s, const struct tstr *needle, bool last)
{
	if (needle->len > s->len)
		return -1;
	size_t hit = SIZE_MAX;
	if (!last) {
		const char *h = memmem(s->s, s->len, needle->s, needle->len);
		if (h)
			hit = (size_t)(h - s->s);
	} else {
		for (size_t k = s->len - needle->len + 1; k-- > 0;)
			if (!memcmp(s->s + k, needle->s, needle->len)) {
				hit = k;
				break;
			}
	}
	return hit == SIZE_MAX ? -1 : (int64_t)tpl_utf8_count(s->s, hit);
}

size_t tpl_count(const struct tstr *s, const struct tstr *needle)
{
	if (!needle->len)
		return tpl_utf8_count(s->s, s->len) + 1;
	size_t n = 0;
	for (const char *p = s->s, *e = s->s + s->len;
	     (p = memmem(p, (size_t)(e - p), needle->s, needle->len)); p += needle->len)
		n++;
	return n;
}

struct tval tpl_escape(struct tpl_ctx *c, struct tval v)
{
	if (v.kind == TV_STR && v.safe)
		return v;
	const struct tstr *s = tv_to_str(c, v).u.s;
	struct tpl_buf b = {0};
	tpl_buf_put(c, &b, "", 0);
	for (size_t i = 0; i < s->len; i++) {
		char ch = s->s[i];
		const char *e = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;"
			      : ch == '"'				      ? "&#34;"
			      : ch == '\''				      ? "&#39;"
									      : NULL;
		if (e)
			tpl_buf_puts(c, &b, e);
		else
			tpl_buf_put(c, &b, &ch, 1);
	}
	struct tval out = tv_str(c, b.p, b.n);
	out.safe = true;
	return out;
}
