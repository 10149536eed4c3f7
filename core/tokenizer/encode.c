/* Encoding entry points: special pieces are cut out of the text first
 * (llama.cpp tokenizer_st_partition), then each raw fragment goes to the
 * family's encoder.
 *
 * The cut follows llama.cpp exactly: special pieces are taken longest
 * first, and each one is split out of every raw fragment left by the
 * longer ones, leftmost occurrences first, without overlaps. User-defined
 * pieces are always cut out; control and unknown ones only when special
 * tokens are parsed. A piece marked rstrip/lstrip (phi-3, some BERTs)
 * also swallows the ASCII whitespace beside it. Instead of one pass over
 * the text per special piece, one pass finds every occurrence (pieces are
 * indexed by first byte) and the cut replays them in llama.cpp's order.
 */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "tokenizer/tokenizer_impl.h"

/* A piece of the text: raw text (id -1) or a special token. */
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

/* An occurrence of special[rank] at pos. */
struct occ {
	uint32_t rank;
	size_t pos;
};

struct occs {
	struct occ *v;
	size_t n, cap;
};

static int occ_add(struct occs *a, uint32_t rank, size_t pos)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		struct occ *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (struct occ){ rank, pos };
	return 0;
}

static int by_rank_pos(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int by_pos(const void *a, const void *b)
{
	const struct frag *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static bool ascii_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool cuttable(const struct belt_tokenizer *t, int32_t id, bool parse)
{
	return parse || t->tok[id].type == TOK_USER;
}

/* Every occurrence of every special piece that may be cut. */
static int find_all(const struct belt_tokenizer *t, const char *text,
		    size_t len, bool parse, struct occs *a)
{
	for (size_t p = 0; p < len; p++) {
		unsigned b = (unsigned char)text[p];
		for (uint32_t j = t->sp_first[b]; j < t->sp_first[b + 1]; j++) {
			uint32_t k = t->sp_by_byte[j];
			int32_t id = t->special[k];
			const struct tok_entry *e = &t->tok[id];
			if (cuttable(t, id, parse) && e->len <= len - p &&
			    memcmp(text + p, t->blob + e->off, e->len) == 0 &&
			    occ_add(a, k, p))
				return -1;
		}
	}
	return 0;
}

/* Replay the occurrences in llama.cpp's order; cut[] gets the accepted
 * tokens, used[] marks their bytes and the whitespace they strip. */
static int accept_all(const struct belt_tokenizer *t, const char *text,
		      size_t len, struct occs *a, unsigned char *used,
		      struct frags *cut)
{
	qsort(a->v, a->n, sizeof *a->v, by_rank_pos);
	size_t cursor = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct occ *o = &a->v[i];
		if (i == 0 || o->rank != a->v[i - 1].rank)
			cursor = 0;
		int32_t id = t->special[o->rank];
		const struct tok_entry *e = &t->tok[id];
		if (o->pos < cursor || memchr(used + o->pos, 1, e->len))
			continue;
		memset(used + o->pos, 1, e->len);
		if (frag_add(cut, o->pos, e->len, id))
			return -1;
		size_t r = o->pos + e->len;
		if (e->flags & TOK_F_RSTRIP)
			for (; r < len && !used[r] && ascii_space(text[r]); r++)
				used[r] = 1;
		if (e->flags & TOK_F_LSTRIP)
			for (size_t l = o->pos; l > 0 && !used[l - 1] &&
						ascii_space(text[l - 1]); l--)
				used[l - 1] = 1;
		cursor = r;
	}
	qsort(cut->v, cut->n, sizeof *cut->v, by_pos);
	return 0;
}

/* Raw text between two cut tokens, less the whitespace they stripped. */
static int add_gap(struct frags *f, const unsigned char *used, size_t a,
		   size_t b)
{
	while (a < b && used[a])
		a++;
	while (b > a && used[b - 1])
		b--;
	return b > a ? frag_add(f, a, b - a, -1) : 0;
}

static int partition(const struct belt_tokenizer *t, const char *text,
		     size_t len, bool parse, struct frags *f)
{
	struct occs a = { 0 };
	struct frags cut = { 0 };
	unsigned char *used = NULL;
	int rc = -1;
	if (find_all(t, text, len, parse, &a))
		goto out;
	if (a.n == 0) {
		rc = frag_add(f, 0, len, -1);
		goto out;
	}
	used = calloc(len, 1);
	if (!used || accept_all(t, text, len, &a, used, &cut))
		goto out;
	size_t prev = 0;
	for (size_t i = 0; i < cut.n; i++) {
		if (add_gap(f, used, prev, cut.v[i].off) ||
		    frag_add(f, cut.v[i].off, cut.v[i].len, cut.v[i].id))
			goto out;
		prev = cut.v[i].off + cut.v[i].len;
	}
	rc = add_gap(f, used, prev, len);
out:
	free(a.v);
	free(cut.v);
	free(used);
	return rc;
}

static int encode_fragments(const struct belt_tokenizer *t, const char *text,
			    const struct frags *f, struct tok_out *o,
			    char *err, size_t errsz)
{
	bool prev_special = true; /* the SPM dummy prefix goes after BOS/start */
	for (size_t i = 0; i < f->n; i++) {
		const struct frag *g = &f->v[i];
		if (g->id >= 0) {
			tok_push(o, g->id);
			prev_special = true;
			continue;
		}
		const char *s = text + g->off;
		int rc;
		switch (t->family) {
		case TOK_BPE:
			rc = tok_bpe_encode(t, s, g->len, o, err, errsz);
			break;
		case TOK_WPM:
			rc = tok_wpm_encode(t, s, g->len, o, err, errsz);
			break;
		default:
			rc = tok_spm_encode(t, s, g->len,
					    t->add_space_prefix && prev_special,
					    o, err, errsz);
			break;
		}
		if (rc)
			return -1;
		prev_special = false;
	}
	return 0;
}

int belt_tok_encode_flags(const struct belt_tokenizer *t, const char *text,
			  size_t len, unsigned flags, int32_t *ids, size_t cap,
			  size_t *n_out, char *err, size_t errsz)
{
	if (!t || !n_out || (!text && len) || (!ids && cap))
		return belt_errf(err, errsz, "belt_tok_encode: bad arguments");
	*n_out = 0;
	struct tok_out o = { ids, cap, 0 };
	if ((flags & BELT_TOK_ADD_BOS) && t->bos >= 0)
		tok_push(&o, t->bos);
	if (len > 0) { /* empty text: nothing, not even the dummy prefix */
		struct frags f = { 0 };
		int rc = partition(t, text, len, flags & BELT_TOK_PARSE_SPECIAL, &f);
		if (rc)
			belt_errf(err, errsz, "tokenizer: out of memory");
		else
			rc = encode_fragments(t, text, &f, &o, err, errsz);
		free(f.v);
		if (rc)
			return -1;
	}
	int32_t end = t->family == TOK_WPM ? t->sep : t->eos;
	if ((flags & BELT_TOK_ADD_EOS) && end >= 0)
		tok_push(&o, end);
	*n_out = o.n;
	return 0;
}

int belt_tok_encode(const struct belt_tokenizer *t, const char *text,
		    size_t len, bool add_bos, int32_t *ids, size_t cap,
		    size_t *n_out, char *err, size_t errsz)
{
	return belt_tok_encode_flags(t, text, len, add_bos ? BELT_TOK_ADD_BOS : 0,
				     ids, cap, n_out, err, errsz);
}
