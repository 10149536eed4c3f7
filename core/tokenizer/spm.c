/* SentencePiece-style encoding, as llama.cpp's llm_tokenizer_spm and the
 * SPM branch of llama_vocab::tokenize_impl (add_special = add_bos,
 * parse_special = false).
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
 * - pieces of user-defined tokens (type 4) are cut out of the text first,
 *   longest first, and each following text fragment gets the dummy prefix
 *   again (llama.cpp tokenizer_st_partition, which does this even when
 *   special tokens are not parsed). Control tokens are never parsed.
 */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "tokenizer/tokenizer_impl.h"

struct sym {
	int32_t prev, next; /* linked list of live symbols; -1 ends */
	uint32_t off, n;    /* bytes of the escaped text; n == 0: merged away */
};

struct bigram {
	float score;
	int32_t left, right;
	uint32_t size; /* bytes when queued; a mismatch later means stale */
};

struct spm {
	const struct belt_tokenizer *t;
	const char *text; /* escaped text */
	struct sym *sym;
	struct bigram *heap; /* binary max-heap, see before() */
	size_t n_heap, cap_heap;
};

/* Merge order: highest score first; on a tie the leftmost pair. */
static bool before(const struct bigram *a, const struct bigram *b)
{
	return a->score > b->score ||
	       (a->score == b->score && a->left < b->left);
}

static int heap_push(struct spm *s, struct bigram b)
{
	if (s->n_heap == s->cap_heap) {
		size_t cap = s->cap_heap ? 2 * s->cap_heap : 64;
		struct bigram *h = realloc(s->heap, cap * sizeof *h);
		if (!h)
			return -1;
		s->heap = h;
		s->cap_heap = cap;
	}
	size_t i = s->n_heap++;
	while (i > 0 && before(&b, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = b;
	return 0;
}

static struct bigram heap_pop(struct spm *s)
{
	struct bigram top = s->heap[0], last = s->heap[--s->n_heap];
	size_t i = 0, n = s->n_heap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n > 0)
		s->heap[i] = last;
	return top;
}

/* Queue the pair (left, right) if its concatenation is a piece. */
static int try_bigram(struct spm *s, int32_t left, int32_t right)
{
	if (left < 0 || right < 0)
		return 0;
	uint32_t size = s->sym[left].n + s->sym[right].n;
	int32_t id = tok_find(s->t, s->text + s->sym[left].off, size);
	if (id < 0)
		return 0;
	struct bigram b = { s->t->tok[id].score, left, right, size };
	return heap_push(s, b);
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
	while (s->n_heap > 0) {
		struct bigram b = heap_pop(s);
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
	free(s.heap);
	free(s.sym);
	free(esc);
	return rc;
}

/* Fragments of the text: raw text (id -1) or a user-defined token. */
struct frag {
	size_t off, len;
	int32_t id;
};

struct frags {
	struct frag *v;
	size_t n, cap;
};

static int frag_add(struct frags *f, size_t off, size_t len, int32_t id)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct frag *v = realloc(f->v, cap * sizeof *v);
		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct frag){ off, len, id };
	return 0;
}

/* Cut every occurrence of one user-defined piece out of raw fragment f. */
static int cut_one(const struct belt_tokenizer *t, int32_t uid,
		   const char *text, const struct frag *f, struct frags *out)
{
	const char *piece = t->blob + t->tok[uid].off;
	size_t plen = t->tok[uid].len, pos = f->off, end = f->off + f->len;
	while (pos < end) {
		const char *m = memmem(text + pos, end - pos, piece, plen);
		if (!m)
			break;
		size_t at = (size_t)(m - text);
		if ((at > pos && frag_add(out, pos, at - pos, -1)) ||
		    frag_add(out, at, plen, uid))
			return -1;
		pos = at + plen;
	}
	return pos < end ? frag_add(out, pos, end - pos, -1) : 0;
}

static int partition(const struct belt_tokenizer *t, const char *text,
		     size_t len, struct frags *f)
{
	if (frag_add(f, 0, len, -1))
		return -1;
	struct frags next = { 0 };
	for (size_t u = 0; u < t->n_user; u++) {
		next.n = 0;
		for (size_t i = 0; i < f->n; i++) {
			int rc = f->v[i].id >= 0
					 ? frag_add(&next, f->v[i].off, f->v[i].len, f->v[i].id)
					 : cut_one(t, t->user[u], text, &f->v[i], &next);
			if (rc) {
				free(next.v);
				return -1;
			}
		}
		struct frags tmp = *f;
		*f = next;
		next = tmp;
	}
	free(next.v);
	return 0;
}

static int encode_fragments(const struct belt_tokenizer *t, const char *text,
			    const struct frags *f, struct tok_out *o,
			    char *err, size_t errsz)
{
	bool prev_special = true; /* the dummy prefix goes after BOS/start */
	for (size_t i = 0; i < f->n; i++) {
		const struct frag *g = &f->v[i];
		if (g->id >= 0) {
			tok_push(o, g->id);
			prev_special = true;
			continue;
		}
		if (tok_spm_encode(t, text + g->off, g->len,
				   t->add_space_prefix && prev_special, o, err,
				   errsz))
			return -1;
		prev_special = false;
	}
	return 0;
}

int belt_tok_encode(const struct belt_tokenizer *t, const char *text,
		    size_t len, bool add_bos, int32_t *ids, size_t cap,
		    size_t *n_out, char *err, size_t errsz)
{
	if (!t || !n_out || (!text && len) || (!ids && cap))
		return belt_errf(err, errsz, "belt_tok_encode: bad arguments");
	*n_out = 0;
	struct tok_out o = { ids, cap, 0 };
	if (add_bos && t->bos >= 0)
		tok_push(&o, t->bos);
	if (len > 0) { /* empty text: nothing, not even the dummy prefix */
		struct frags f = { 0 };
		int rc = partition(t, text, len, &f);
		if (rc)
			belt_errf(err, errsz, "tokenizer: out of memory");
		else
			rc = encode_fragments(t, text, &f, &o, err, errsz);
		free(f.v);
		if (rc)
			return -1;
	}
	*n_out = o.n;
	return 0;
}
