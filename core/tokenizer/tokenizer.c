/* Loading a vocabulary from GGUF metadata: the pieces and their types,
 * the special ids and flags, then the family's own tables (bpe.c).
 *
 * Semantics follow llama.cpp's llama_vocab::load for the "llama" (SPM),
 * "gpt2" (byte-level BPE) and "bert" (WordPiece) models, with these
 * choices where the brief or robustness asks otherwise:
 * - a special id key whose value is out of range (e.g. 0xFFFFFFFF) means
 *   "none"; llama.cpp keeps its default there. Absent keys take
 *   llama.cpp's per-family defaults (llama: bos 1, eos 2, unk 0; gpt2:
 *   bos = eos = 11; bert: bos 101, unk 100, sep 102).
 * - without tokenizer.ggml.token_type, SPM pieces "<0xNN>" are byte
 *   tokens, and bos/eos/eot/eom are control and unk unknown (llama.cpp
 *   would treat them all as normal text).
 * - an empty piece is kept but never matched (llama.cpp renames it).
 * - a piece that appears twice maps to its last id (llama.cpp refuses).
 * - pieces named like end-of-turn, FIM and end-of-generation tokens become
 *   control tokens (and EOG ones end generation) as in llama.cpp; where
 *   several names match, the lowest id wins (llama.cpp's order there is
 *   unspecified).
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

size_t tok_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	uint32_t v = c & (0x7fu >> len);
	for (size_t k = 1; k < len; k++) {
		unsigned d = s[k];
		if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
			return 0;
		v = v << 6 | (d & 0x3f);
	}
	*cp = v;
	return len;
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

/* Copy a string value into buf as printable ASCII, for one-line messages. */
static void printable(char *buf, size_t bufsz, const struct belt_gguf_str *s)
{
	size_t n = s->len < bufsz - 1 ? (size_t)s->len : bufsz - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s->ptr[i];
		buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	buf[n] = '\0';
}

static bool str_is(const struct belt_gguf_str *s, const char *lit)
{
	return s->len == strlen(lit) && memcmp(s->ptr, lit, s->len) == 0;
}

static int check_model(const struct belt_gguf *g, enum tok_family *fam,
		       char *err, size_t errsz)
{
	struct belt_gguf_str m;
	int r = belt_gguf_get_str(g, KEY("model"), &m, err, errsz);
	if (r < 0)
		return -1;
	if (r == 0)
		return belt_errf(err, errsz, "%s: missing %s", g->path,
				 KEY("model"));
	if (str_is(&m, "llama")) {
		*fam = TOK_SPM;
		return 0;
	}
	if (str_is(&m, "bert")) {
		*fam = TOK_WPM;
		return 0;
	}
	if (str_is(&m, "gpt2")) {
		*fam = TOK_BPE;
		if (belt_gguf_find(g, KEY("merges")))
			return 0;
		/* llama.cpp refuses a BPE vocabulary without merges too */
		return belt_errf(err, errsz,
				 "%s: tokenizer model 'gpt2' needs %s, which is missing",
				 g->path, KEY("merges"));
	}
	char name[65];
	printable(name, sizeof name, &m);
	return belt_errf(err, errsz,
			 "%s: unsupported tokenizer model '%s' (supported: llama, gpt2, bert)",
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
 * as nothing, like llama.cpp). Without types, only an SPM vocabulary reads
 * "<0xNN>" pieces as bytes. */
static int copy_types(struct belt_tokenizer *t, const struct belt_gguf *g,
		      const struct belt_gguf_kv *kv, char *err, size_t errsz)
{
	for (int32_t i = 0; i < t->n_vocab; i++) {
		struct tok_entry *e = &t->tok[i];
		int b = byte_piece(t->blob + e->off, e->len);
		int64_t ty = kv ? belt_gguf_arr_int(kv, (uint64_t)i)
				: (b >= 0 && t->family == TOK_SPM ? TOK_BYTE
								  : TOK_NORMAL);
		e->type = ty >= TOK_NORMAL && ty <= TOK_BYTE ? (uint8_t)ty
							     : TOK_UNDEFINED;
		if (e->type == TOK_BYTE && b < 0) {
			char piece[65]; /* the file's bytes, made one printable line */
			printable(piece, sizeof piece,
				  &(struct belt_gguf_str){t->blob + e->off, e->len});
			return belt_errf(err, errsz,
					 "%s: token %d has type byte but piece '%s' is not <0xNN>",
					 g->path, (int)i, piece);
		}
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

/* Per-family defaults, then the GGUF's keys. */
static int read_specials(struct belt_tokenizer *t, const struct belt_gguf *g,
			 const struct tok_pre_info *pre, char *err,
			 size_t errsz)
{
	int32_t n = t->n_vocab;
	int32_t bos = 1, eos = 2, unk = 0, sep = -1;
	bool add_bos = true, add_sep = false, prefix = t->family == TOK_SPM;
	if (t->family == TOK_BPE) {
		bos = pre->no_bos ? -1 : 11;
		eos = 11;
		unk = -1;
		add_bos = pre->add_bos;
		add_sep = pre->add_sep;
	} else if (t->family == TOK_WPM) {
		bos = 101;
		eos = -1;
		unk = 100;
		sep = 102;
		add_sep = true;
	}
	if (read_id(g, KEY("bos_token_id"), bos, n, &t->bos, err, errsz) ||
	    read_id(g, KEY("eos_token_id"), eos, n, &t->eos, err, errsz) ||
	    read_id(g, KEY("unknown_token_id"), unk, n, &t->unk, err, errsz) ||
	    read_id(g, KEY("seperator_token_id"), sep, n, &t->sep, err, errsz) ||
	    read_id(g, KEY("eot_token_id"), -1, n, &t->eot, err, errsz) ||
	    read_id(g, KEY("eom_token_id"), -1, n, &t->eom, err, errsz) ||
	    read_bool(g, KEY("add_bos_token"), add_bos, &t->add_bos, err, errsz) ||
	    read_bool(g, KEY("add_eos_token"), false, &t->add_eos, err, errsz) ||
	    read_bool(g, KEY("add_sep_token"), add_sep, &t->add_sep, err, errsz) ||
	    read_bool(g, KEY("add_space_prefix"), prefix, &t->add_space_prefix,
		      err, errsz) ||
	    read_bool(g, KEY("normalizer.lowercase"), true, &t->lowercase, err,
		      errsz) ||
	    read_bool(g, KEY("normalizer.strip_accents"), t->lowercase,
		      &t->strip_accents, err, errsz))
		return -1;
	/* a BOS the file asks for but whose id is no token would be dropped
	 * from every prompt without a word */
	int64_t v;
	if (t->add_bos && t->bos < 0 &&
	    belt_gguf_get_int(g, KEY("bos_token_id"), &v, NULL, 0) == 1)
		return belt_errf(err, errsz,
				 "%s: %s is %lld: expected an id in 0 .. %d (the vocabulary has %d tokens)",
				 g->path, KEY("bos_token_id"), (long long)v, n - 1, n);
	return 0;
}

/* Without token types, the special ids are what marks them special. */
static void mark_specials(struct belt_tokenizer *t)
{
	int32_t ctl[] = { t->bos, t->eos, t->eot, t->eom, t->sep };
	for (size_t i = 0; i < sizeof ctl / sizeof ctl[0]; i++)
		if (ctl[i] >= 0)
			t->tok[ctl[i]].type = TOK_CONTROL;
	if (t->unk >= 0)
		t->tok[t->unk].type = TOK_UNKNOWN;
}

/* The lowest id whose piece is named in list, or -1. */
static int32_t find_named(const struct belt_tokenizer *t,
			  const char *const *list)
{
	int32_t best = -1;
	for (; *list; list++) {
		int32_t id = tok_find(t, *list, strlen(*list));
		if (id >= 0 && (best < 0 || id < best))
			best = id;
	}
	return best;
}

static const char *const eot_names[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
	"<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
	"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
	"<end_of_utterance>", NULL
};
static const char *const eom_names[] = { "<|eom_id|>", NULL };
static const char *const fim_pre_names[] = {
	"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
	"<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>",
	"\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", NULL
};
static const char *const fim_suf_names[] = {
	"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
	"<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>", "<SUF>",
	"\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", NULL
};
static const char *const fim_mid_names[] = {
	"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
	"<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>",
	"\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", NULL
};
static const char *const fim_pad_names[] = {
	"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL
};
static const char *const fim_rep_names[] = {
	"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
	NULL
};
static const char *const fim_sep_names[] = { "<|file_sep|>", NULL };
static const char *const eog_names[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
	"<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>",
	"<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
	"<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
	"[e~[", NULL
};
static const char *const always_user[] = {
	"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", NULL
};

static void make_control(struct belt_tokenizer *t, int32_t id)
{
	if (id >= 0)
		t->tok[id].type = TOK_CONTROL;
}

/* An id from a key, or else the first piece named in list (made control).
 * eog: the result also ends generation. */
static int auto_special(struct belt_tokenizer *t, const struct belt_gguf *g,
			const char *key, const char *old_key,
			const char *const *list, bool eog, char *err,
			size_t errsz)
{
	int32_t id = -1;
	if (read_id(g, key, -1, t->n_vocab, &id, err, errsz))
		return -1;
	if (id < 0 && old_key && read_id(g, old_key, -1, t->n_vocab, &id, err, errsz))
		return -1;
	if (id < 0) {
		id = find_named(t, list);
		make_control(t, id);
	}
	if (eog && id >= 0)
		t->tok[id].flags |= TOK_F_EOG;
	return 0;
}

static int32_t eog_named(const struct belt_tokenizer *t, const char *name)
{
	int32_t id = tok_find(t, name, strlen(name));
	return id >= 0 && (t->tok[id].flags & TOK_F_EOG) ? id : -1;
}

/* llama.cpp's text-based fix-ups of special tokens, then the EOG set. */
static int detect_specials(struct belt_tokenizer *t, const struct belt_gguf *g,
			   char *err, size_t errsz)
{
	if (t->eot < 0) {
		t->eot = find_named(t, eot_names);
		make_control(t, t->eot);
	}
	if (t->eom < 0) {
		t->eom = find_named(t, eom_names);
		make_control(t, t->eom);
	}
	if (auto_special(t, g, KEY("fim_pre_token_id"), KEY("prefix_token_id"),
			 fim_pre_names, false, err, errsz) ||
	    auto_special(t, g, KEY("fim_suf_token_id"), KEY("suffix_token_id"),
			 fim_suf_names, false, err, errsz) ||
	    auto_special(t, g, KEY("fim_mid_token_id"), KEY("middle_token_id"),
			 fim_mid_names, false, err, errsz) ||
	    auto_special(t, g, KEY("fim_pad_token_id"), NULL, fim_pad_names,
			 true, err, errsz) ||
	    auto_special(t, g, KEY("fim_rep_token_id"), NULL, fim_rep_names,
			 true, err, errsz) ||
	    auto_special(t, g, KEY("fim_sep_token_id"), NULL, fim_sep_names,
			 true, err, errsz))
		return -1;
	for (const char *const *p = eog_names; *p; p++) {
		int32_t id = tok_find(t, *p, strlen(*p));
		if (id >= 0) {
			t->tok[id].flags |= TOK_F_EOG;
			make_control(t, id);
		}
	}
	for (const char *const *p = always_user; *p; p++) {
		int32_t id = tok_find(t, *p, strlen(*p));
		if (id >= 0)
			t->tok[id].type = TOK_USER;
	}
	int32_t ends[] = { t->eos, t->eot, t->eom };
	for (size_t i = 0; i < 3; i++)
		if (ends[i] >= 0)
			t->tok[ends[i]].flags |= TOK_F_EOG;
	/* o200k_harmony / solar-open: "<|end|>" is no EOG there */
	int32_t end = eog_named(t, "<|end|>");
	bool ret = eog_named(t, "<|return|>") >= 0;
	bool call = eog_named(t, "<|call|>") >= 0 || eog_named(t, "<|calls|>") >= 0;
	bool flush = eog_named(t, "<|flush|>") >= 0;
	if (end >= 0 && ((ret && call) || (call && flush))) {
		t->tok[end].flags &= (uint8_t)~TOK_F_EOG;
		t->tok[end].type = TOK_USER;
	}
	/* gemma4: "</s>" is normal text there */
	int32_t s = eog_named(t, "</s>");
	if (s >= 0 && eog_named(t, "<|tool_response>") >= 0) {
		t->tok[s].flags &= (uint8_t)~TOK_F_EOG;
		t->tok[s].type = TOK_NORMAL;
	}
	return 0;
}

static bool is_special_type(uint8_t ty)
{
	return ty == TOK_CONTROL || ty == TOK_USER || ty == TOK_UNKNOWN;
}

static void set_flag(struct belt_tokenizer *t, const char *piece,
		     uint8_t flag, bool on)
{
	int32_t id = tok_find(t, piece, strlen(piece));
	if (id < 0)
		return;
	if (on)
		t->tok[id].flags |= flag;
	else
		t->tok[id].flags &= (uint8_t)~flag;
}

static bool lower_contains(const struct belt_gguf_str *s, const char *lit)
{
	size_t n = strlen(lit);
	for (uint64_t i = 0; i + n <= s->len; i++) {
		size_t k = 0;
		while (k < n && (s->ptr[i + k] | (s->ptr[i + k] >= 'A' &&
						  s->ptr[i + k] <= 'Z' ? 0x20 : 0)) == lit[k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

/* llama.cpp's per-model whitespace stripping around special tokens. */
static int strip_attrs(struct belt_tokenizer *t, const struct belt_gguf *g,
		       char *err, size_t errsz)
{
	struct belt_gguf_str name = { "", 0 }, pre = { "", 0 }, arch = { "", 0 };
	if (belt_gguf_get_str(g, "general.name", &name, err, errsz) < 0 ||
	    belt_gguf_get_str(g, KEY("pre"), &pre, err, errsz) < 0 ||
	    belt_gguf_get_str(g, "general.architecture", &arch, err, errsz) < 0)
		return -1;
	if (lower_contains(&pre, "jina-v2-de") || lower_contains(&pre, "jina-v2-es") ||
	    lower_contains(&pre, "jina-v2-code") ||
	    lower_contains(&arch, "nomic-bert-moe") ||
	    lower_contains(&arch, "jina-bert-v3")) {
		set_flag(t, "<mask>", TOK_F_LSTRIP, true);
	} else if (lower_contains(&name, "phi-3") || lower_contains(&name, "phi3")) {
		for (int32_t id = 0; id < t->n_vocab; id++)
			if (is_special_type(t->tok[id].type))
				t->tok[id].flags |= TOK_F_RSTRIP;
		set_flag(t, "</s>", TOK_F_RSTRIP, true);
		set_flag(t, "<unk>", TOK_F_RSTRIP, false);
		set_flag(t, "<s>", TOK_F_RSTRIP, false);
		set_flag(t, "<|endoftext|>", TOK_F_RSTRIP, false);
	} else if (lower_contains(&name, "modern-bert")) {
		set_flag(t, "[MASK]", TOK_F_LSTRIP, true);
	}
	return 0;
}

struct sp_key {
	uint32_t len;
	int32_t id;
};

static int by_length_desc(const void *a, const void *b)
{
	const struct sp_key *x = a, *y = b;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Control, user-defined and unknown pieces, cut out of the text before
 * the encoder (llama.cpp tokenizer_st_partition): longest first; equal
 * lengths go by id (llama.cpp's order there is unspecified). */
static int collect_specials(struct belt_tokenizer *t, char *err, size_t errsz)
{
	size_t n = 0;
	for (int32_t i = 0; i < t->n_vocab; i++)
		n += is_special_type(t->tok[i].type) && t->tok[i].len > 0;
	if (n == 0)
		return 0;
	struct sp_key *k = malloc(n * sizeof *k);
	t->special = malloc(n * sizeof *t->special);
	t->sp_by_byte = malloc(n * sizeof *t->sp_by_byte);
	if (!k || !t->special || !t->sp_by_byte) {
		free(k);
		return belt_errf(err, errsz, "tokenizer: out of memory");
	}
	for (int32_t i = 0; i < t->n_vocab; i++)
		if (is_special_type(t->tok[i].type) && t->tok[i].len > 0)
			k[t->n_special++] = (struct sp_key){ t->tok[i].len, i };
	qsort(k, n, sizeof *k, by_length_desc);
	uint32_t count[256] = { 0 };
	for (size_t i = 0; i < n; i++) {
		t->special[i] = k[i].id;
		count[(unsigned char)t->blob[t->tok[k[i].id].off]]++;
	}
	for (int b = 0; b < 256; b++)
		t->sp_first[b + 1] = t->sp_first[b] + count[b];
	uint32_t fill[256];
	memcpy(fill, t->sp_first, sizeof fill);
	for (uint32_t i = 0; i < t->n_special; i++)
		t->sp_by_byte[fill[(unsigned char)t->blob[t->tok[t->special[i]].off]]++] = i;
	free(k);
	return 0;
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

/* Decoded text of normal pieces with U+2581 as ' ' (SPM, WordPiece). */
static int unescape_pieces(struct belt_tokenizer *t, char *err, size_t errsz)
{
	size_t total = 0;
	for (int32_t i = 0; i < t->n_vocab; i++)
		total += t->tok[i].len;
	t->dec = malloc(total ? total : 1);
	if (!t->dec)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	uint32_t o = 0;
	for (int32_t i = 0; i < t->n_vocab; i++) {
		struct tok_entry *e = &t->tok[i];
		const char *p = t->blob + e->off;
		e->dec_off = o;
		for (uint32_t k = 0; k < e->len; k++) {
			if (k + 2 < e->len && memcmp(p + k, "\xe2\x96\x81", 3) == 0) {
				t->dec[o++] = ' ';
				k += 2;
			} else {
				t->dec[o++] = p[k];
			}
		}
		e->dec_len = o - e->dec_off;
	}
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
	    copy_types(t, g, types, err, errsz) || build_map(t, err, errsz))
		return -1;
	return types ? 1 : 0;
}

static int load(struct belt_tokenizer *t, const struct belt_gguf *g,
		char *err, size_t errsz)
{
	int types = load_vocab(t, g, err, errsz);
	if (types < 0)
		return -1;
	struct tok_pre_info pre = { 0 };
	if (t->family == TOK_BPE) {
		struct belt_gguf_str name = { "", 0 };
		if (belt_gguf_get_str(g, KEY("pre"), &name, err, errsz) < 0)
			return -1;
		if (tok_pretok_new(name.ptr, name.len, &t->pre, &pre, err, errsz))
			return belt_err_prefix(err, errsz, g->path);
		t->ignore_merges = pre.ignore_merges;
	}
	if (read_specials(t, g, &pre, err, errsz))
		return -1;
	if (!types)
		mark_specials(t);
	if (detect_specials(t, g, err, errsz) || strip_attrs(t, g, err, errsz) ||
	    collect_specials(t, err, errsz))
		return -1;
	if (t->family == TOK_BPE)
		return tok_bpe_load(t, g, err, errsz) ||
		       tok_bpe_decode_pieces(t, err, errsz) ? -1 : 0;
	build_byte_map(t);
	return unescape_pieces(t, err, errsz);
}

int belt_tok_load(const struct belt_gguf *g, struct belt_tokenizer **out,
		  char *err, size_t errsz)
{
	if (!out)
		return belt_errf(err, errsz, "belt_tok_load: out is NULL");
	*out = NULL;
	if (!g)
		return belt_errf(err, errsz, "belt_tok_load: no GGUF given");
	enum tok_family fam;
	if (check_model(g, &fam, err, errsz))
		return -1;
	struct belt_tokenizer *t = calloc(1, sizeof *t);
	if (!t)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	t->family = fam;
	if (load(t, g, err, errsz)) {
		belt_tok_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

void belt_tok_free(struct belt_tokenizer *t)
{
	if (!t)
		return;
	tok_bpe_free(t);
	free(t->tok);
	free(t->blob);
	free(t->dec);
	free(t->map);
	free(t->special);
	free(t->sp_by_byte);
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

bool belt_tok_add_eos(const struct belt_tokenizer *t)
{
	return t->family == TOK_WPM ? t->add_sep : t->add_eos;
}

bool belt_tok_is_eog(const struct belt_tokenizer *t, int32_t id)
{
	return id >= 0 && id < t->n_vocab && (t->tok[id].flags & TOK_F_EOG);
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
