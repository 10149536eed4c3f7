/* Byte-level BPE, as llama.cpp's llm_tokenizer_bpe: the pre-tokenizer
 * splits the text into words (pretok.c); each word's bytes are the initial
 * symbols (GPT-2 maps every byte to one character: printable Latin-1 to
 * itself, the rest to U+0100 onwards), and adjacent symbols are merged,
 * lowest tokenizer.ggml.merges rank first (leftmost on a tie), until no
 * ranked pair is left. A final symbol that is no piece becomes the ids of
 * its characters' single bytes, as in llama.cpp.
 *
 * Speed: merges are keyed by the pair of symbol "sids" (integers naming
 * strings: vocabulary ids, or extra ids for merge parts that are no
 * piece), so a word costs O(n log n) heap operations and O(1) hash
 * lookups per merge, with no string building or rescanning.
 */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "tokenizer/mergeheap.h"
#include "tokenizer/tokenizer_impl.h"

#define MERGES "tokenizer.ggml.merges"

/* The character GPT-2 gives byte b. */
static uint32_t byte_cp(int b)
{
	if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae)
		return (uint32_t)b;
	int n = 0; /* the bytes before b that are remapped */
	for (int k = 0; k < b; k++)
		n += !((k >= 0x21 && k <= 0x7e) || (k >= 0xa1 && k <= 0xac) || k >= 0xae);
	return 256u + (uint32_t)n;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	out[0] = (char)(0xc0 | cp >> 6); /* every GPT-2 character is < U+0800 */
	out[1] = (char)(0x80 | (cp & 0x3f));
	return 2;
}

/* ---- strings that are no piece, while loading ---- */

struct extra {
	const char *s;
	uint32_t len;
	int32_t sid;
};

struct interner {
	struct belt_tokenizer *t;
	struct extra *v; /* open addressing; s == NULL: empty */
	uint32_t mask, n;
	int32_t next_sid;
	char **copies; /* strings this load allocated */
	size_t n_copies, cap_copies;
};

static uint32_t hash_str(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int grow(struct interner *in)
{
	uint32_t cap = in->v ? 2 * (in->mask + 1) : 1024;
	struct extra *v = calloc(cap, sizeof *v);
	if (!v)
		return -1;
	for (uint32_t i = 0; in->v && i <= in->mask; i++) {
		if (!in->v[i].s)
			continue;
		uint32_t j = hash_str(in->v[i].s, in->v[i].len) & (cap - 1);
		while (v[j].s)
			j = (j + 1) & (cap - 1);
		v[j] = in->v[i];
	}
	free(in->v);
	in->v = v;
	in->mask = cap - 1;
	return 0;
}

/* A copy of s[0..n) that lives until interner_free. */
static const char *keep(struct interner *in, const char *s, size_t n)
{
	if (in->n_copies == in->cap_copies) {
		size_t cap = in->cap_copies ? 2 * in->cap_copies : 64;
		char **c = realloc(in->copies, cap * sizeof *c);
		if (!c)
			return NULL;
		in->copies = c;
		in->cap_copies = cap;
	}
	char *c = malloc(n ? n : 1);
	if (c) {
		memcpy(c, s, n);
		in->copies[in->n_copies++] = c;
	}
	return c;
}

static void interner_free(struct interner *in)
{
	for (size_t i = 0; i < in->n_copies; i++)
		free(in->copies[i]);
	free(in->copies);
	free(in->v);
}

/* The sid of s[0..n). create: add it if new (copy: s does not outlive
 * the load). -1: not known (create false), -2: out of memory. */
static int32_t intern(struct interner *in, const char *s, size_t n,
		      bool create, bool copy)
{
	int32_t id = tok_find(in->t, s, n);
	if (id >= 0)
		return id;
	if (in->v) {
		for (uint32_t j = hash_str(s, n) & in->mask; in->v[j].s;
		     j = (j + 1) & in->mask)
			if (in->v[j].len == n && memcmp(in->v[j].s, s, n) == 0)
				return in->v[j].sid;
	}
	if (!create)
		return -1;
	if (in->next_sid == INT32_MAX || n >= UINT32_MAX ||
	    ((!in->v || 2 * (in->n + 1) > in->mask + 1) && grow(in)))
		return -2;
	if (copy && !(s = keep(in, s, n)))
		return -2;
	uint32_t j = hash_str(s, n) & in->mask;
	while (in->v[j].s)
		j = (j + 1) & in->mask;
	in->v[j] = (struct extra){ s, (uint32_t)n, in->next_sid };
	in->n++;
	return in->next_sid++;
}

/* ---- the merge table ---- */

static uint32_t pair_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

static uint64_t pair_key(int32_t a, int32_t b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static void pair_insert(struct belt_tokenizer *t, uint64_t key, int32_t rank,
			int32_t merged)
{
	uint32_t j = pair_hash(key) & t->pair_mask;
	for (;; j = (j + 1) & t->pair_mask) {
		if (t->pairs[j].key == key)
			return; /* a repeated merge keeps its first rank */
		if (t->pairs[j].key == UINT64_MAX) {
			t->pairs[j] = (struct tok_pair){ key, rank, merged };
			return;
		}
	}
}

static const struct tok_pair *pair_find(const struct belt_tokenizer *t,
					int32_t a, int32_t b)
{
	uint64_t key = pair_key(a, b);
	for (uint32_t j = pair_hash(key) & t->pair_mask;; j = (j + 1) & t->pair_mask) {
		if (t->pairs[j].key == key)
			return &t->pairs[j];
		if (t->pairs[j].key == UINT64_MAX)
			return NULL;
	}
}

static int load_merges(struct belt_tokenizer *t, const struct belt_gguf *g,
		       struct interner *in, char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, MERGES);
	if (!kv || kv->type != BELT_GGUF_ARRAY || kv->v.arr.type != BELT_GGUF_STRING)
		return belt_errf(err, errsz, "%s: %s must be an array of strings",
				 g->path, MERGES);
	uint64_t n = kv->v.arr.n;
	if (n >= INT32_MAX / 2)
		return belt_errf(err, errsz, "%s: %s has too many entries (%llu)",
				 g->path, MERGES, (unsigned long long)n);
	uint32_t cap = 16;
	while (cap < n + n / 3 + 16)
		cap *= 2;
	t->pairs = malloc(cap * sizeof *t->pairs);
	if (!t->pairs)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	for (uint32_t j = 0; j < cap; j++)
		t->pairs[j].key = UINT64_MAX;
	t->pair_mask = cap - 1;
	char *cat = NULL;
	size_t cat_cap = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct belt_gguf_str *s = &kv->v.arr.strs[i];
		const char *sp = s->len > 1 ? memchr(s->ptr + 1, ' ', s->len - 1) : NULL;
		if (!sp) /* llama.cpp keys it ("", ""): it never applies */
			continue;
		size_t na = (size_t)(sp - s->ptr), nb = s->len - na - 1;
		if (na + nb > cat_cap) {
			cat_cap = 2 * (na + nb);
			char *c = realloc(cat, cat_cap);
			if (!c) {
				free(cat);
				return belt_errf(err, errsz, "tokenizer: out of memory");
			}
			cat = c;
		}
		memcpy(cat, s->ptr, na);
		memcpy(cat + na, sp + 1, nb);
		int32_t a = intern(in, s->ptr, na, true, false);
		int32_t b = intern(in, sp + 1, nb, true, false);
		int32_t ab = intern(in, cat, na + nb, true, true);
		if (a < 0 || b < 0 || ab < 0) {
			free(cat);
			return belt_errf(err, errsz, "tokenizer: out of memory");
		}
		pair_insert(t, pair_key(a, b), (int32_t)i, ab);
	}
	free(cat);
	return 0;
}

int tok_bpe_load(struct belt_tokenizer *t, const struct belt_gguf *g,
		 char *err, size_t errsz)
{
	for (int b = 0; b < 256; b++)
		t->byte_enc_len[b] = (uint8_t)put_utf8(t->byte_enc[b], byte_cp(b));
	struct interner in = { .t = t, .next_sid = t->n_vocab };
	int rc = load_merges(t, g, &in, err, errsz);
	for (int b = 0; rc == 0 && b < 256; b++) {
		t->byte_sid[b] = intern(&in, t->byte_enc[b], t->byte_enc_len[b],
					false, false);
		for (int k = 0; k < 2; k++)
			t->byte_fb[b][k] = k < t->byte_enc_len[b]
						   ? tok_find(t, &t->byte_enc[b][k], 1)
						   : -1;
	}
	interner_free(&in);
	return rc;
}

void tok_bpe_free(struct belt_tokenizer *t)
{
	free(t->pairs);
	tok_pretok_free(t->pre);
	t->pairs = NULL;
	t->pre = NULL;
}

int tok_bpe_decode_pieces(struct belt_tokenizer *t, char *err, size_t errsz)
{
	int inv[0x144];
	memset(inv, 0xff, sizeof inv);
	for (int b = 0; b < 256; b++)
		inv[byte_cp(b)] = b;
	size_t total = 0;
	for (int32_t i = 0; i < t->n_vocab; i++)
		total += t->tok[i].len;
	t->dec = malloc(total ? total : 1);
	if (!t->dec)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	uint32_t o = 0;
	for (int32_t i = 0; i < t->n_vocab; i++) {
		struct tok_entry *e = &t->tok[i];
		const unsigned char *p = (const unsigned char *)t->blob + e->off;
		e->dec_off = o;
		for (uint32_t k = 0; k < e->len;) {
			uint32_t cp;
			size_t n = tok_utf8_next(p + k, e->len - k, &cp);
			if (n && cp < 0x144 && inv[cp] >= 0) {
				t->dec[o++] = (char)inv[cp];
				k += (uint32_t)n;
				continue;
			}
			/* no byte character: kept as it is */
			n = n ? n : 1;
			memcpy(t->dec + o, p + k, n);
			o += (uint32_t)n;
			k += (uint32_t)n;
		}
		e->dec_len = o - e->dec_off;
	}
	return 0;
}

/* ---- encoding ---- */

struct sym {
	int32_t prev, next; /* live symbols; -1 ends */
	uint32_t n;	    /* bytes; 0: merged away */
	int32_t sid;	    /* -1: a string no merge knows */
};


struct bpe {
	const struct belt_tokenizer *t;
	struct tok_out *o;
	struct sym *sym;
	size_t cap_sym;
	struct tok_mergeheap heap; /* key: merge rank, lowest first */
	char *enc;
	size_t cap_enc;
	char *err;
	size_t errsz;
};

/* Queue (left, its right neighbour) if the pair has a rank. */
static int try_pair(struct bpe *s, int32_t left)
{
	if (left < 0)
		return 0;
	const struct sym *l = &s->sym[left];
	if (l->next < 0 || l->sid < 0 || s->sym[l->next].sid < 0)
		return 0;
	const struct sym *r = &s->sym[l->next];
	const struct tok_pair *p = pair_find(s->t, l->sid, r->sid);
	if (!p)
		return 0;
	return tok_mergeheap_push(&s->heap, (struct tok_cand){ (float)p->rank, left, -1, l->n + r->n });
}

static int merge_word(struct bpe *s, const unsigned char *w, int32_t n)
{
	for (int32_t i = 0; i < n; i++)
		s->sym[i] = (struct sym){ i - 1, i + 1 < n ? i + 1 : -1, 1,
					  s->t->byte_sid[w[i]] };
	s->heap.n = 0;
	for (int32_t i = 0; i + 1 < n; i++)
		if (try_pair(s, i))
			return -1;
	while (s->heap.n > 0) {
		struct tok_cand b = tok_mergeheap_pop(&s->heap);
		struct sym *l = &s->sym[b.left];
		if (l->n == 0 || l->next < 0)
			continue;
		struct sym *r = &s->sym[l->next];
		if (r->n == 0 || l->n + r->n != b.size)
			continue;
		l->sid = pair_find(s->t, l->sid, r->sid)->merged;
		l->n += r->n;
		r->n = 0;
		l->next = r->next;
		if (l->next >= 0)
			s->sym[l->next].prev = b.left;
		if (try_pair(s, l->prev) || try_pair(s, b.left))
			return -1;
	}
	return 0;
}

static void emit_word(struct bpe *s, const unsigned char *w)
{
	const struct belt_tokenizer *t = s->t;
	for (int32_t i = 0; i != -1; i = s->sym[i].next) {
		const struct sym *y = &s->sym[i];
		if (y->sid >= 0 && y->sid < t->n_vocab) {
			tok_push(s->o, y->sid);
			continue;
		}
		const unsigned char *b = w + i;
		for (uint32_t k = 0; k < y->n; k++)
			for (int j = 0; j < 2; j++)
				if (t->byte_fb[b[k]][j] >= 0)
					tok_push(s->o, t->byte_fb[b[k]][j]);
	}
}

/* The word as GPT-2 characters, for a whole-word lookup. */
static int32_t whole_word(struct bpe *s, const unsigned char *w, size_t n)
{
	if (2 * n > s->cap_enc) {
		char *e = realloc(s->enc, 2 * n);
		if (!e)
			return -2;
		s->enc = e;
		s->cap_enc = 2 * n;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(s->enc + m, s->t->byte_enc[w[i]], s->t->byte_enc_len[w[i]]);
		m += s->t->byte_enc_len[w[i]];
	}
	return tok_find(s->t, s->enc, m);
}

static int on_word(void *ctx, const char *word, size_t n)
{
	struct bpe *s = ctx;
	const unsigned char *w = (const unsigned char *)word;
	if (n > INT32_MAX)
		return belt_errf(s->err, s->errsz, "tokenizer: word of %zu bytes too long", n);
	if (s->t->ignore_merges) {
		int32_t id = whole_word(s, w, n);
		if (id == -2)
			return belt_errf(s->err, s->errsz, "tokenizer: out of memory");
		if (id >= 0) {
			tok_push(s->o, id);
			return 0;
		}
	}
	if (n > s->cap_sym) {
		struct sym *y = realloc(s->sym, n * sizeof *y);
		if (!y)
			return belt_errf(s->err, s->errsz, "tokenizer: out of memory");
		s->sym = y;
		s->cap_sym = n;
	}
	if (merge_word(s, w, (int32_t)n))
		return belt_errf(s->err, s->errsz, "tokenizer: out of memory");
	emit_word(s, w);
	return 0;
}

int tok_bpe_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, struct tok_out *o, char *err, size_t errsz)
{
	struct bpe s = { .t = t, .o = o, .err = err, .errsz = errsz };
	int rc = tok_pretok_split(t->pre, text, len, on_word, &s, err, errsz);
	free(s.sym);
	free(s.heap.v);
	free(s.enc);
	return rc;
}
