/* SentencePiece-style encoding of one text fragment, as llama.cpp's
 * llm_tokenizer_spm.
 *
 * Input bytes are taken as they are:
 * - an embedded NUL is just the byte 0x00; it is no piece, so it becomes
 *   the byte token <0x00>.
 * - characters are split as llama.cpp's unicode_len_utf8 does: the length
 *   comes from the lead byte's high nibble (0xC0-0xDF: 2, 0xE0-0xEF: 3,
 *   0xF0-0xFF: 4, anything else 1), clipped at the end of the fragment,
 *   with no check of the continuation bytes. Valid UTF-8 thus splits into
 *   characters; a stray continuation byte is a one-byte symbol; a lead byte
 *   followed by non-continuation bytes takes them into one symbol that is
 *   no piece, so all of its bytes become byte tokens. Nothing is rejected.
 * Special and user-defined pieces are cut out before (encode.c); each
 * fragment after one gets the dummy prefix again.
 */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "tokenizer/mergeheap.h"
#include "tokenizer/tokenizer_impl.h"

struct sym {
	int32_t prev, next; /* linked list of live symbols; -1 ends */
	uint32_t off, n;    /* bytes of the escaped text; n == 0: merged away */
};


struct spm {
	const struct belt_tokenizer *t;
	const char *text; /* escaped text */
	struct sym *sym;
	struct tok_mergeheap heap; /* key -score: highest score first */
};

/* Queue the pair (left, right) if its concatenation is a piece. */
static int try_bigram(struct spm *s, int32_t left, int32_t right)
{
	if (left < 0 || right < 0)
		return 0;
	uint32_t size = s->sym[left].n + s->sym[right].n;
	int32_t id = tok_find(s->t, s->text + s->sym[left].off, size);
	if (id < 0)
		return 0;
	struct tok_cand b = { -s->t->tok[id].score, left, right, size };
	return tok_mergeheap_push(&s->heap, b);
}

static const uint8_t utf8_len[16] = { 1, 1, 1, 1, 1, 1, 1, 1,
				      1, 1, 1, 1, 2, 2, 3, 4 };

/* Split into characters; returns the number of symbols. */
static int32_t split_symbols(struct spm *s, size_t len)
{
	int32_t n = 0;
	for (size_t off = 0; off < len; n++) {
		size_t c = utf8_len[(unsigned char)s->text[off] >> 4];
		if (c > len - off)
			c = len - off;
		s->sym[n] = (struct sym){ n - 1, 0, (uint32_t)off, (uint32_t)c };
		off += c;
		s->sym[n].next = off == len ? -1 : n + 1;
	}
	return n;
}

static int merge_all(struct spm *s, int32_t n_sym)
{
	for (int32_t i = 1; i < n_sym; i++)
		if (try_bigram(s, i - 1, i))
			return -1;
	while (s->heap.n > 0) {
		struct tok_cand b = tok_mergeheap_pop(&s->heap);
		struct sym *l = &s->sym[b.left], *r = &s->sym[b.right];
		if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
			continue;
		l->n += r->n;
		r->n = 0;
		l->next = r->next;
		if (r->next >= 0)
			s->sym[r->next].prev = b.left;
		if (try_bigram(s, l->prev, b.left) ||
		    try_bigram(s, b.left, l->next))
			return -1;
	}
	return 0;
}

/* Each final symbol is a piece, or else a run of byte tokens. */
static int emit_symbols(const struct spm *s, struct tok_out *o, char *err,
			size_t errsz)
{
	for (int32_t i = 0; i != -1; i = s->sym[i].next) {
		const struct sym *y = &s->sym[i];
		int32_t id = tok_find(s->t, s->text + y->off, y->n);
		if (id >= 0) {
			tok_push(o, id);
			continue;
		}
		for (uint32_t k = 0; k < y->n; k++) {
			unsigned char c = (unsigned char)s->text[y->off + k];
			if (s->t->byte_tok[c] < 0)
				return belt_errf(err, errsz,
						 "tokenizer: no token for byte 0x%02X and no unknown token",
						 c);
			tok_push(o, s->t->byte_tok[c]);
		}
	}
	return 0;
}

/* The text with the dummy prefix and every ' ' as U+2581 in *out (n
 * bytes); -1 if too long for 32-bit offsets or out of memory. */
static int escape(const char *text, size_t len, bool prefix, char **out,
		  size_t *n)
{
	static const char sp[] = "\xe2\x96\x81";
	size_t m = prefix ? 3 : 0;
	for (size_t i = 0; i < len; i++)
		m += text[i] == ' ' ? 3 : 1;
	if (m > INT32_MAX)
		return -1;
	char *e = malloc(m ? m : 1), *p = e;
	if (!e)
		return -1;
	if (prefix) {
		memcpy(p, sp, 3);
		p += 3;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] == ' ') {
			memcpy(p, sp, 3);
			p += 3;
		} else {
			*p++ = text[i];
		}
	}
	*out = e;
	*n = m;
	return 0;
}

int tok_spm_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, bool prefix, struct tok_out *o, char *err,
		   size_t errsz)
{
	char *esc;
	size_t n;
	if (escape(text, len, prefix, &esc, &n))
		return belt_errf(err, errsz,
				 "tokenizer: text of %zu bytes too long or out of memory",
				 len);
	struct spm s = { .t = t, .text = esc };
	s.sym = malloc((n ? n : 1) * sizeof *s.sym);
	int rc = -1;
	if (!s.sym)
		belt_errf(err, errsz, "tokenizer: out of memory");
	else if (n > 0 && merge_all(&s, split_symbols(&s, n)))
		belt_errf(err, errsz, "tokenizer: out of memory");
	else
		rc = n > 0 ? emit_symbols(&s, o, err, errsz) : 0;
	free(s.heap.v);
	free(s.sym);
	free(esc);
	return rc;
}
