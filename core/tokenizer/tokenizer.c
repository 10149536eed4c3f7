/* Loading a SentencePiece-style ("llama") vocabulary from GGUF metadata.
 *
 * Semantics follow llama.cpp's llama_vocab::load for the "llama" model,
 * with these choices where the brief or robustness asks otherwise:
 * - a special id key (bos/eos/unknown/eot/eom) whose value is out of range
 *   (e.g. 0xFFFFFFFF) means "none"; llama.cpp keeps its default there.
 *   Absent keys default to bos 1, eos 2, unk 0 (as llama.cpp), eot/eom none.
 * - without tokenizer.ggml.token_type, pieces "<0xNN>" are byte tokens,
 *   bos/eos/eot/eom are control and unk is unknown (llama.cpp would treat
 *   them all as normal text).
 * - an empty piece is kept but never matched (llama.cpp renames it).
 * - a piece that appears twice maps to its last id, as in llama.cpp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "tokenizer/tokenizer_impl.h"

#define KEY(k) "tokenizer.ggml." k

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

int32_t tok_find(const struct belt_tokenizer *t, const char *s, size_t n)
{
	uint32_t i = hash_bytes(s, n) & t->map_mask;
	for (;; i = (i + 1) & t->map_mask) {
		int32_t id = t->map[i];
		if (id < 0)
			return -1;
		const struct tok_entry *e = &t->tok[id];
		if (e->len == n && memcmp(t->blob + e->off, s, n) == 0)
			return id;
	}
}

static void map_insert(struct belt_tokenizer *t, int32_t id)
{
	const struct tok_entry *e = &t->tok[id];
	const char *s = t->blob + e->off;
	uint32_t i = hash_bytes(s, e->len) & t->map_mask;
	for (;; i = (i + 1) & t->map_mask) {
		int32_t old = t->map[i];
		if (old < 0 || (t->tok[old].len == e->len &&
				memcmp(t->blob + t->tok[old].off, s, e->len) == 0)) {
			t->map[i] = id; /* a duplicate piece: the last id wins */
			return;
		}
	}
}

static int build_map(struct belt_tokenizer *t, char *err, size_t errsz)
{
	uint32_t cap = 16;
	while (cap < 2u * (uint32_t)t->n_vocab)
		cap *= 2;
	t->map = malloc(cap * sizeof *t->map);
	if (!t->map)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	memset(t->map, 0xff, cap * sizeof *t->map);
	t->map_mask = cap - 1;
	for (int32_t id = 0; id < t->n_vocab; id++)
		if (t->tok[id].len > 0)
			map_insert(t, id);
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The byte of a piece "<0xNN>", or -1. */
static int byte_piece(const char *s, size_t n)
{
	if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
		return -1;
	int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
	return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* Copy model name into buf as printable ASCII, for one-line messages. */
static void printable(char *buf, size_t bufsz, const struct belt_gguf_str *s)
{
	size_t n = s->len < bufsz - 1 ? (size_t)s->len : bufsz - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s->ptr[i];
		buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	buf[n] = '\0';
}

static int check_model(const struct belt_gguf *g, char *err, size_t errsz)
{
	struct belt_gguf_str m;
	int r = belt_gguf_get_str(g, KEY("model"), &m, err, errsz);
	if (r < 0)
		return -1;
	if (r == 0)
		return belt_errf(err, errsz, "%s: missing %s", g->path,
				 KEY("model"));
	if (m.len == 5 && memcmp(m.ptr, "llama", 5) == 0)
		return 0;
	char name[65];
	printable(name, sizeof name, &m);
	return belt_errf(err, errsz,
			 "%s: unsupported tokenizer model '%s' (supported: llama)",
			 g->path, name);
}

/* An optional array entry: NULL if absent, else checked for element kind
 * and length n (n == 0: any length). */
static int find_array(const struct belt_gguf *g, const char *key,
		      bool strings, uint64_t n,
		      const struct belt_gguf_kv **out, char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, key);
	*out = kv;
	if (!kv)
		return 0;
	bool ok = kv->type == BELT_GGUF_ARRAY;
	if (ok) {
		enum belt_gguf_vtype et = kv->v.arr.type;
		ok = strings ? et == BELT_GGUF_STRING
			     : et != BELT_GGUF_STRING && et != BELT_GGUF_BOOL;
	}
	if (!ok)
		return belt_errf(err, errsz, "%s: %s must be an array of %s",
				 g->path, key, strings ? "strings" : "numbers");
	if (n && kv->v.arr.n != n)
		return belt_errf(err, errsz,
				 "%s: %s has %llu entries but %s has %llu",
				 g->path, key, (unsigned long long)kv->v.arr.n,
				 KEY("tokens"), (unsigned long long)n);
	return 0;
}

static int copy_pieces(struct belt_tokenizer *t, const struct belt_gguf *g,
		       const struct belt_gguf_kv *kv, char *err, size_t errsz)
{
	const struct belt_gguf_str *s = kv->v.arr.strs;
	uint64_t total = 0;
	for (int32_t i = 0; i < t->n_vocab; i++) {
		total += s[i].len + 1;
		if (s[i].len >= UINT32_MAX || total >= UINT32_MAX)
			return belt_errf(err, errsz, "%s: %s too large (token %d)",
					 g->path, KEY("tokens"), (int)i);
	}
	t->blob = malloc(total);
	if (!t->blob)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	uint32_t off = 0;
	for (int32_t i = 0; i < t->n_vocab; i++) {
		memcpy(t->blob + off, s[i].ptr, s[i].len);
		t->blob[off + s[i].len] = '\0';
		t->tok[i].off = off;
		t->tok[i].len = (uint32_t)s[i].len;
		if (s[i].len > t->max_piece)
			t->max_piece = s[i].len;
		off += (uint32_t)s[i].len + 1;
	}
	return 0;
}

static int copy_scores(struct belt_tokenizer *t, const struct belt_gguf *g,
		       const struct belt_gguf_kv *kv, char *err, size_t errsz)
{
	for (int32_t i = 0; i < t->n_vocab; i++) {
		float f = kv ? (float)belt_gguf_arr_float(kv, (uint64_t)i) : 0.0f;
		if (f != f)
			return belt_errf(err, errsz, "%s: %s[%d] is NaN",
					 g->path, KEY("scores"), (int)i);
		t->tok[i].score = f;
	}
	return 0;
}

/* Types from the GGUF; out-of-range values become TOK_UNDEFINED (decoded
 * as nothing, like llama.cpp). */
static int copy_types(struct belt_tokenizer *t, const struct belt_gguf *g,
		      const struct belt_gguf_kv *kv, char *err, size_t errsz)
{
	for (int32_t i = 0; i < t->n_vocab; i++) {
		struct tok_entry *e = &t->tok[i];
		int b = byte_piece(t->blob + e->off, e->len);
		int64_t ty = kv ? belt_gguf_arr_int(kv, (uint64_t)i)
				: (b >= 0 ? TOK_BYTE : TOK_NORMAL);
		e->type = ty >= TOK_NORMAL && ty <= TOK_BYTE ? (uint8_t)ty
							     : TOK_UNDEFINED;
		if (e->type == TOK_BYTE && b < 0)
			return belt_errf(err, errsz,
					 "%s: token %d has type byte but piece '%s' is not <0xNN>",
					 g->path, (int)i, t->blob + e->off);
		e->byte = b >= 0 ? (uint8_t)b : 0;
	}
	return 0;
}

/* A special id key: absent -> def (if in range), out of range -> none. */
static int read_id(const struct belt_gguf *g, const char *key, int32_t def,
		   int32_t n_vocab, int32_t *out, char *err, size_t errsz)
{
	int64_t v;
	int r = belt_gguf_get_int(g, key, &v, err, errsz);
	if (r < 0)
		return -1;
	if (r == 0)
		v = def;
	*out = v >= 0 && v < n_vocab ? (int32_t)v : -1;
	return 0;
}

static int read_bool(const struct belt_gguf *g, const char *key, bool def,
		     bool *out, char *err, size_t errsz)
{
	int r = belt_gguf_get_bool(g, key, out, err, errsz);
	if (r == 0)
		*out = def;
	return r < 0 ? -1 : 0;
}

static int read_specials(struct belt_tokenizer *t, const struct belt_gguf *g,
			 char *err, size_t errsz)
{
	int32_t n = t->n_vocab;
	if (read_id(g, KEY("bos_token_id"), 1, n, &t->bos, err, errsz) ||
	    read_id(g, KEY("eos_token_id"), 2, n, &t->eos, err, errsz) ||
	    read_id(g, KEY("unknown_token_id"), 0, n, &t->unk, err, errsz) ||
	    read_id(g, KEY("eot_token_id"), -1, n, &t->eot, err, errsz) ||
	    read_id(g, KEY("eom_token_id"), -1, n, &t->eom, err, errsz) ||
	    read_bool(g, KEY("add_bos_token"), true, &t->add_bos, err, errsz) ||
	    read_bool(g, KEY("add_eos_token"), false, &t->add_eos, err, errsz) ||
	    read_bool(g, KEY("add_space_prefix"), true, &t->add_space_prefix,
		      err, errsz))
		return -1;
	return 0;
}

/* Without token types, the special ids are what marks them special. */
static void mark_specials(struct belt_tokenizer *t)
{
	int32_t ctl[] = { t->bos, t->eos, t->eot, t->eom };
	for (size_t i = 0; i < sizeof ctl / sizeof ctl[0]; i++)
		if (ctl[i] >= 0)
			t->tok[ctl[i]].type = TOK_CONTROL;
	if (t->unk >= 0)
		t->tok[t->unk].type = TOK_UNKNOWN;
}

static void build_byte_map(struct belt_tokenizer *t)
{
	for (int b = 0; b < 256; b++) {
		char hex[7];
		char raw = (char)b;
		snprintf(hex, sizeof hex, "<0x%02X>", b);
		int32_t id = tok_find(t, hex, 6);
		if (id < 0)
			id = tok_find(t, &raw, 1);
		t->byte_tok[b] = id >= 0 ? id : t->unk;
	}
}

struct user_key {
	uint32_t len;
	int32_t id;
};

static int by_length_desc(const void *a, const void *b)
{
	const struct user_key *x = a, *y = b;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* User-defined pieces are split out of the text before SPM even without
 * special-token parsing (llama.cpp tokenizer_st_partition), longest first;
 * equal lengths go by id (llama.cpp's order there is unspecified). */
static int collect_user(struct belt_tokenizer *t, char *err, size_t errsz)
{
	size_t n = 0;
	for (int32_t i = 0; i < t->n_vocab; i++)
		n += t->tok[i].type == TOK_USER && t->tok[i].len > 0;
	if (n == 0)
		return 0;
	struct user_key *k = malloc(n * sizeof *k);
	t->user = malloc(n * sizeof *t->user);
	if (!k || !t->user) {
		free(k);
		return belt_errf(err, errsz, "tokenizer: out of memory");
	}
	for (int32_t i = 0; i < t->n_vocab; i++)
		if (t->tok[i].type == TOK_USER && t->tok[i].len > 0)
			k[t->n_user++] = (struct user_key){ t->tok[i].len, i };
	qsort(k, n, sizeof *k, by_length_desc);
	for (size_t i = 0; i < n; i++)
		t->user[i] = k[i].id;
	free(k);
	return 0;
}

static int load_vocab(struct belt_tokenizer *t, const struct belt_gguf *g,
		      char *err, size_t errsz)
{
	const struct belt_gguf_kv *tokens, *scores, *types;
	if (find_array(g, KEY("tokens"), true, 0, &tokens, err, errsz))
		return -1;
	if (!tokens)
		return belt_errf(err, errsz, "%s: missing %s", g->path,
				 KEY("tokens"));
	uint64_t n = tokens->v.arr.n;
	if (n == 0 || n > INT32_MAX / 2)
		return belt_errf(err, errsz, "%s: %s has %llu entries (expected 1..%d)",
				 g->path, KEY("tokens"), (unsigned long long)n,
				 INT32_MAX / 2);
	if (find_array(g, KEY("scores"), false, n, &scores, err, errsz) ||
	    find_array(g, KEY("token_type"), false, n, &types, err, errsz))
		return -1;
	t->n_vocab = (int32_t)n;
	t->tok = calloc(n, sizeof *t->tok);
	if (!t->tok)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	if (copy_pieces(t, g, tokens, err, errsz) ||
	    copy_scores(t, g, scores, err, errsz) ||
	    copy_types(t, g, types, err, errsz) ||
	    read_specials(t, g, err, errsz))
		return -1;
	if (!types)
		mark_specials(t);
	return 0;
}

int belt_tok_load(const struct belt_gguf *g, struct belt_tokenizer **out,
		  char *err, size_t errsz)
{
	if (!out)
		return belt_errf(err, errsz, "belt_tok_load: out is NULL");
	*out = NULL;
	if (!g)
		return belt_errf(err, errsz, "belt_tok_load: no GGUF given");
	if (check_model(g, err, errsz))
		return -1;
	struct belt_tokenizer *t = calloc(1, sizeof *t);
	if (!t)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	if (load_vocab(t, g, err, errsz) || build_map(t, err, errsz) ||
	    collect_user(t, err, errsz)) {
		belt_tok_free(t);
		return -1;
	}
	build_byte_map(t);
	*out = t;
	return 0;
}

void belt_tok_free(struct belt_tokenizer *t)
{
	if (!t)
		return;
	free(t->tok);
	free(t->blob);
	free(t->map);
	free(t->user);
	free(t);
}

int32_t belt_tok_n_vocab(const struct belt_tokenizer *t)
{
	return t->n_vocab;
}

int32_t belt_tok_bos(const struct belt_tokenizer *t)
{
	return t->bos;
}

int32_t belt_tok_eos(const struct belt_tokenizer *t)
{
	return t->eos;
}

bool belt_tok_add_bos(const struct belt_tokenizer *t)
{
	return t->add_bos;
}

bool belt_tok_is_eog(const struct belt_tokenizer *t, int32_t id)
{
	return id >= 0 && (id == t->eos || id == t->eot || id == t->eom);
}

const char *belt_tok_piece(const struct belt_tokenizer *t, int32_t id)
{
	if (id < 0 || id >= t->n_vocab)
		return NULL;
	return t->blob + t->tok[id].off;
}

size_t belt_tok_max_piece(const struct belt_tokenizer *t)
{
	return t->max_piece;
}
