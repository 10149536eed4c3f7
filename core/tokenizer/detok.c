/* Streaming detokenizer: llama.cpp's token_to_piece (normal pieces as their
 * decoded text: SPM and WordPiece with U+2581 as ' ', so WordPiece word
 * starts get a space and continuation pieces join the word; byte-level BPE
 * through the GPT-2 byte table; byte tokens as their byte, user-defined
 * pieces verbatim, control/unknown/unused/undefined as nothing), followed by
 * one UTF-8 assembler that every produced byte goes through, so the output
 * is always valid UTF-8 and never ends in half a character:
 * - a lead byte starts a pending sequence, kept in s->pend across calls and
 *   emitted once complete;
 * - a byte that cannot continue the pending sequence turns it into one
 *   U+FFFD (Unicode's "maximal subpart" rule) and is then read afresh;
 * - a byte that can start nothing (a lone 0x80-0xBF, 0xC0, 0xC1,
 *   0xF5-0xFF) is one U+FFFD.
 * Overlong forms, surrogates and code points above U+10FFFF are refused at
 * their second byte, so whatever is pending is a valid prefix.
 * strip_space drops one ' ' from the start of the first text emitted; a
 * token whose text is only that space emits nothing and still clears it.
 * Output is written in whole characters; if cap runs out, the characters
 * that do not fit are dropped (cannot happen with the documented cap and a
 * vocabulary of valid UTF-8 pieces).
 * llama.cpp's clean_up_tokenization_spaces (dropping the space before
 * punctuation when detokenizing a whole BPE/WordPiece sequence) is not
 * applied: it is lossy and needs look-ahead.
 */
#include <string.h>

#include "tokenizer/tokenizer_impl.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

struct sink {
	char *out;
	size_t cap, n;
};

static void emit(struct belt_tok_stream *s, struct sink *k, const char *b,
		 size_t n)
{
	if (s->strip_space) {
		s->strip_space = false;
		if (b[0] == ' ') {
			b++;
			n--;
		}
	}
	if (n == 0 || k->cap - k->n < n)
		return;
	memcpy(k->out + k->n, b, n);
	k->n += n;
}

/* Length of the sequence a lead byte starts; 0 if it starts none. */
static unsigned seq_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

static bool can_continue(const struct belt_tok_stream *s, unsigned char c)
{
	if ((c & 0xc0) != 0x80)
		return false;
	if (s->n_pend != 1)
		return true;
	switch (s->pend[0]) {
	case 0xe0: return c >= 0xa0; /* overlong */
	case 0xed: return c < 0xa0;  /* surrogates */
	case 0xf0: return c >= 0x90; /* overlong */
	case 0xf4: return c < 0x90;  /* above U+10FFFF */
	default: return true;
	}
}

static void feed(struct belt_tok_stream *s, struct sink *k, unsigned char c)
{
	if (s->n_pend) {
		if (can_continue(s, c)) {
			s->pend[s->n_pend++] = c;
			if (s->n_pend == seq_len(s->pend[0])) {
				s->n_pend = 0;
				emit(s, k, (const char *)s->pend,
				     seq_len(s->pend[0]));
			}
			return;
		}
		s->n_pend = 0;
		emit(s, k, replacement, 3);
	}
	if (c < 0x80) {
		emit(s, k, (const char *)&c, 1);
	} else if (seq_len(c) == 0) {
		emit(s, k, replacement, 3);
	} else {
		s->pend[0] = c;
		s->n_pend = 1;
	}
}

/* A caller-owned stream may hold anything; keep only a valid prefix. */
static void sanitize(struct belt_tok_stream *s)
{
	if (s->n_pend > 3 || (s->n_pend && s->n_pend >= seq_len(s->pend[0])))
		s->n_pend = 0;
}

void belt_tok_stream_init(struct belt_tok_stream *s, bool strip_leading_space)
{
	memset(s, 0, sizeof *s);
	s->strip_space = strip_leading_space;
}

size_t belt_tok_decode(const struct belt_tokenizer *t,
		       struct belt_tok_stream *s, int32_t id, char *out,
		       size_t cap)
{
	if (!t || !s || !out || id < 0 || id >= t->n_vocab)
		return 0;
	sanitize(s);
	struct sink k = { out, cap, 0 };
	size_t n;
	const char *b = belt_tok_bytes(t, id, &n);
	for (size_t i = 0; i < n; i++)
		feed(s, &k, (unsigned char)b[i]);
	return k.n;
}

const char *belt_tok_bytes(const struct belt_tokenizer *t, int32_t id, size_t *len)
{
	*len = 0;
	if (!t || id < 0 || id >= t->n_vocab)
		return NULL;
	const struct tok_entry *e = &t->tok[id];
	switch (e->type) {
	case TOK_NORMAL:
		*len = e->dec_len;
		return t->dec + e->dec_off;
	case TOK_USER:
		*len = e->len;
		return t->blob + e->off;
	case TOK_BYTE:
		*len = 1;
		return (const char *)&e->byte;
	default: /* control, unknown, unused, undefined: no text */
		return t->blob + e->off;
	}
}

size_t belt_tok_flush(struct belt_tok_stream *s, char *out, size_t cap)
{
	if (!s || !out)
		return 0;
	sanitize(s);
	struct sink k = { out, cap, 0 };
	if (s->n_pend) {
		s->n_pend = 0;
		emit(s, &k, replacement, 3);
	}
	return k.n;
}
