/* Integers between bounds as GBNF: the decimal numbers of lo..hi with no
 * leading zeros, made of digit ranges length by length ("1" [5-9] | [2-9]
 * [0-9] | "1" [0-4] [0-9] | "150"). A side with no bound stops at 16
 * digits, as llama.cpp's integers do; where llama.cpp has a negative side
 * (a minimum below zero) it allows "-0", and so does this. */
#include <stdio.h>
#include <string.h>

#include "schema.h"

#define CAP 9999999999999999ull /* 16 digits */

static bool all(const char *s, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != c)
			return false;
	return true;
}

/* The digits a[0..n) to b[0..n) (a <= b, same length), leading zeros
 * allowed: a sequence, alternatives in a group. */
static void same_length(struct sc_buf *out, const char *a, const char *b, size_t n)
{
	size_t p = 0;
	while (p < n && a[p] == b[p])
		p++;
	if (p)
		sc_lit(out, a, p);
	if (p == n)
		return;
	if (p)
		sc_puts(out, " ");
	a += p;
	b += p;
	n -= p;
	size_t rest = n - 1;
	bool a_zeros = all(a + 1, rest, '0'), b_nines = all(b + 1, rest, '9');
	char lo = a[0], hi = b[0];
	bool alt = false;
	sc_puts(out, "(");
	if (!a_zeros) { /* a[0] then a's rest up to 99..9 */
		char nines[24];
		memset(nines, '9', rest);
		sc_printf(out, "\"%c\" ", a[0]);
		same_length(out, a + 1, nines, rest);
		lo++;
		alt = true;
	}
	if (lo <= (b_nines ? hi : hi - 1)) { /* whole ranges of the rest */
		sc_printf(out, "%s[%c-%c]", alt ? " | " : "", lo, b_nines ? hi : hi - 1);
		if (rest)
			sc_printf(out, " [0-9]{%zu}", rest);
		alt = true;
	}
	if (!b_nines) { /* b[0] then 00..0 up to b's rest */
		char zeros[24];
		memset(zeros, '0', rest);
		sc_printf(out, "%s\"%c\" ", alt ? " | " : "", b[0]);
		same_length(out, zeros, b + 1, rest);
	}
	sc_puts(out, ")");
}

/* The numbers lo..hi (lo <= hi) with no leading zeros, as alternatives. */
static void range(struct sc_buf *out, uint64_t lo, uint64_t hi)
{
	char a[24], b[24];
	int la = snprintf(a, sizeof a, "%llu", (unsigned long long)lo);
	int lb = snprintf(b, sizeof b, "%llu", (unsigned long long)hi);
	for (int len = la; len <= lb; len++) {
		char from[24], to[24];
		if (len == la)
			memcpy(from, a, (size_t)len + 1);
		else
			snprintf(from, sizeof from, "1%0*d", len - 1, 0);
		if (len == lb) {
			memcpy(to, b, (size_t)len + 1);
		} else {
			memset(to, '9', (size_t)len);
			to[len] = 0;
		}
		if (len > la)
			sc_puts(out, " | ");
		same_length(out, from, to, (size_t)len);
	}
}

static uint64_t magnitude(int64_t x)
{
	return x < 0 ? (uint64_t)(-(x + 1)) + 1 : (uint64_t)x;
}

int sc_int_range(struct sc_buf *out, bool has_lo, int64_t lo, bool has_hi, int64_t hi)
{
	if ((has_lo && has_hi && lo > hi) || (has_lo && !has_hi && lo >= 0 && (uint64_t)lo > CAP) ||
	    (has_hi && !has_lo && hi < 0 && magnitude(hi) > CAP))
		return -1;
	sc_puts(out, "(");
	if (has_lo && lo < 0) { /* the negative side, "-0" too */
		sc_puts(out, "\"-\" (");
		range(out, has_hi && hi < 0 ? magnitude(hi) : 0, magnitude(lo));
		sc_puts(out, ")");
		if (!has_hi || hi >= 0) {
			sc_puts(out, " | ");
			range(out, 0, has_hi ? (uint64_t)hi : CAP);
		}
	} else if (has_lo) {
		range(out, (uint64_t)lo, has_hi ? (uint64_t)hi : CAP);
	} else if (hi >= 0) {
		sc_puts(out, "\"-\" (");
		range(out, 1, CAP);
		sc_puts(out, ") | ");
		range(out, 0, (uint64_t)hi);
	} else {
		sc_puts(out, "\"-\" (");
		range(out, magnitude(hi), CAP);
		sc_puts(out, ")");
	}
	sc_puts(out, ")");
	return 0;
}
