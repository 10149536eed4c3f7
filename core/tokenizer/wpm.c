/* WordPiece ("bert"), as llama.cpp's llm_tokenizer_wpm.
 *
 * Normalization (BERT's, with utf8proc for the Unicode data): with
 * strip_accents each character becomes the first character of its NFD
 * decomposition and marks (M*) are dropped; whitespace (White_Space) ends
 * a word; NUL, U+FFFD, invalid bytes and control characters (Cc, Cf, Co,
 * Cs) are dropped; punctuation (P*), ASCII symbols and CJK ideographs are
 * words of their own; the rest is lowercased (if lowercase) into words.
 * Each word, with U+2581 in front (llama.cpp's GGUF pieces carry it for
 * word starts and drop the "##" of continuations), is split greedily into
 * the longest pieces from the left; a word with a position no piece
 * starts at becomes one unknown token.
 * This is lossy: case, accents, spacing and dropped characters do not
 * come back on decoding.
 */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "belt/error.h"
#include "tokenizer/tokenizer_impl.h"

static bool white_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* BERT's "Chinese character" ranges (as in the HF code llama.cpp follows). */
static bool chinese(uint32_t c)
{
	return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
	       (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
	       (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
	       (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

static uint32_t nfd_first(uint32_t c)
{
	utf8proc_int32_t d[8];
	int bc = 0;
	utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)c, d, 8,
						     UTF8PROC_DECOMPOSE, &bc);
	return n >= 1 && n <= 8 ? (uint32_t)d[0] : c;
}

struct wpm {
	const struct belt_tokenizer *t;
	struct tok_out *o;
	char *w; /* "\u2581" + the word */
	size_t n, cap;
};

static int add(struct wpm *s, const char *p, size_t n)
{
	if (s->n + n > s->cap) {
		size_t cap = 2 * (s->n + n);
		char *w = realloc(s->w, cap);
		if (!w)
			return -1;
		s->w = w;
		s->cap = cap;
	}
	memcpy(s->w + s->n, p, n);
	s->n += n;
	return 0;
}

static int add_cp(struct wpm *s, uint32_t c)
{
	utf8proc_uint8_t buf[4];
	utf8proc_ssize_t n = utf8proc_encode_char((utf8proc_int32_t)c, buf);
	return add(s, (const char *)buf, (size_t)(n > 0 ? n : 0));
}

/* Greedy longest-piece split of the pending word, then start a new one. */
static int flush(struct wpm *s, char *err, size_t errsz)
{
	const struct belt_tokenizer *t = s->t;
	size_t n = s->n, start = s->o->n;
	if (n <= 3)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = i + t->max_piece + 1 < n ? i + t->max_piece + 1 : n;
		int32_t id = -1;
		for (; j > i && (id = tok_find(t, s->w + i, j - i)) < 0; j--)
			;
		if (id < 0) {
			s->o->n = start; /* discard the word's pieces */
			break;
		}
		tok_push(s->o, id);
		i = j - 1;
	}
	s->n = 3;
	if (s->o->n > start)
		return 0;
	if (t->unk < 0)
		return belt_errf(err, errsz,
				 "tokenizer: a word matches no piece and there is no unknown token");
	tok_push(s->o, t->unk);
	return 0;
}

static int step(struct wpm *s, uint32_t c, char *err, size_t errsz)
{
	const struct belt_tokenizer *t = s->t;
	if (t->strip_accents)
		c = nfd_first(c);
	if (white_space(c))
		return flush(s, err, errsz);
	utf8proc_category_t cat = c < 0x110000 ? utf8proc_category((utf8proc_int32_t)c)
					       : UTF8PROC_CATEGORY_CN;
	if (c == 0 || c == 0xfffd || cat == UTF8PROC_CATEGORY_CC ||
	    cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CO ||
	    cat == UTF8PROC_CATEGORY_CS)
		return 0;
	bool mark = cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
	if (t->strip_accents && mark)
		return 0;
	uint32_t lc = t->lowercase ? (uint32_t)utf8proc_tolower((utf8proc_int32_t)c) : c;
	bool punct = cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
	bool symbol = cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO;
	if (punct || (c < 0x7f && symbol) || chinese(c)) {
		if (flush(s, err, errsz) || add_cp(s, lc))
			goto oom;
		return flush(s, err, errsz);
	}
	if (add_cp(s, lc))
		goto oom;
	return 0;
oom:
	return belt_errf(err, errsz, "tokenizer: out of memory");
}

int tok_wpm_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, struct tok_out *o, char *err, size_t errsz)
{
	struct wpm s = { t, o, NULL, 0, 0 };
	int rc = add(&s, "\xe2\x96\x81", 3) ? belt_errf(err, errsz, "tokenizer: out of memory") : 0;
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; rc == 0 && i < len;) {
		uint32_t c;
		size_t k = tok_utf8_next(p + i, len - i, &c);
		if (k == 0) { /* an invalid byte: U+FFFD in llama.cpp, dropped */
			c = 0xfffd;
			k = 1;
		}
		rc = step(&s, c, err, errsz);
		i += k;
	}
	if (rc == 0)
		rc = flush(&s, err, errsz);
	free(s.w);
	return rc;
}
