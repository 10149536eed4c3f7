/* core/tokenizer/tokenizer_impl.h: the loaded vocabulary, shared by the
 * loader (tokenizer.c), the special-token splitter and encode entry points
 * (encode.c), the three encoders (spm.c, bpe.c with pretok.c, wpm.c) and
 * the detokenizer (detok.c). Internal names use the tok_ prefix so they
 * stay unexported. */
#ifndef BELT_TOKENIZER_IMPL_H
#define BELT_TOKENIZER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/gguf.h"
#include "belt/tokenizer.h"

/* tokenizer.ggml.token_type values (llama.cpp LLAMA_TOKEN_TYPE_*). */
enum tok_type {
	TOK_UNDEFINED = 0,
	TOK_NORMAL = 1,
	TOK_UNKNOWN = 2,
	TOK_CONTROL = 3,
	TOK_USER = 4,
	TOK_UNUSED = 5,
	TOK_BYTE = 6
};

/* tokenizer.ggml.model families. */
enum tok_family {
	TOK_SPM, /* "llama": SentencePiece-style, scores */
	TOK_BPE, /* "gpt2": byte-level BPE, merges, pre-tokenizer regexes */
	TOK_WPM	 /* "bert": WordPiece */
};

/* tok_entry.flags */
#define TOK_F_EOG 1u	/* ends generation */
#define TOK_F_LSTRIP 2u /* as a special token, eats whitespace on its left */
#define TOK_F_RSTRIP 4u /* ... and on its right */

struct tok_entry {
	uint32_t off;	  /* piece = blob + off, NUL-terminated */
	uint32_t len;	  /* bytes, excluding the NUL */
	uint32_t dec_off; /* text of a normal piece = dec + dec_off */
	uint32_t dec_len;
	float score;
	uint8_t type;  /* enum tok_type */
	uint8_t byte;  /* the raw byte of a TOK_BYTE piece "<0xNN>" */
	uint8_t flags; /* TOK_F_* */
};

/* A merge of two adjacent BPE symbols: key = left sid << 32 | right sid. */
struct tok_pair {
	uint64_t key; /* UINT64_MAX: empty slot */
	int32_t rank; /* position in tokenizer.ggml.merges: lower merges first */
	int32_t merged; /* sid of the concatenation */
};

struct tok_pretok; /* compiled pre-tokenizer regexes (pretok.c) */

struct belt_tokenizer {
	enum tok_family family;
	int32_t n_vocab;
	struct tok_entry *tok;
	char *blob;
	char *dec; /* decoded texts of normal pieces */

	/* open-addressing piece -> id map; -1 marks an empty slot */
	int32_t *map;
	uint32_t map_mask;

	/* id for each raw byte: <0xNN>, else the 1-byte piece, else unk, else -1 */
	int32_t byte_tok[256];
	/* control, user-defined and unknown ids, longest piece first (equal
	 * lengths by id); sp_first[b]..sp_first[b + 1] index sp_by_byte, the
	 * positions in special[] of those whose piece starts with byte b */
	int32_t *special;
	uint32_t n_special;
	uint32_t *sp_by_byte;
	uint32_t sp_first[257];

	int32_t bos, eos, unk, eot, eom, sep; /* -1: none */
	bool add_bos, add_eos, add_sep, add_space_prefix;
	size_t max_piece;

	/* BPE: a "sid" names a string: a vocabulary id, or n_vocab + k for a
	 * merge part that is no piece. */
	struct tok_pair *pairs;
	uint32_t pair_mask;
	int32_t byte_sid[256];	 /* sid of the one-character string of byte b */
	int32_t byte_fb[256][2]; /* ids to emit for byte b when its symbol is no piece */
	char byte_enc[256][2];	 /* GPT-2 byte -> UTF-8 character */
	uint8_t byte_enc_len[256];
	bool ignore_merges; /* a word that is a piece is taken whole */
	struct tok_pretok *pre;

	/* WPM normalization */
	bool lowercase, strip_accents;
};

/* The id whose piece is exactly s[0..n), or -1. */
int32_t tok_find(const struct belt_tokenizer *t, const char *s, size_t n);

/* Where encoded ids go: the first cap are stored, n counts them all. */
struct tok_out {
	int32_t *ids;
	size_t cap;
	size_t n;
};

static inline void tok_push(struct tok_out *o, int32_t id)
{
	if (o->n < o->cap)
		o->ids[o->n] = id;
	o->n++;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is invalid
 * (overlong, surrogate, above U+10FFFF, truncated); *cp gets the value. */
size_t tok_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* SentencePiece (llama.cpp llm_tokenizer_spm) encoding of one raw text
 * fragment; prefix prepends the dummy-prefix space. */
int tok_spm_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, bool prefix, struct tok_out *o, char *err,
		   size_t errsz);

/* Byte-level BPE (bpe.c): load merges and the pre-tokenizer; encode one
 * raw text fragment; free. */
int tok_bpe_load(struct belt_tokenizer *t, const struct belt_gguf *g,
		 char *err, size_t errsz);
int tok_bpe_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, struct tok_out *o, char *err, size_t errsz);
void tok_bpe_free(struct belt_tokenizer *t);
/* Decode every normal piece through the byte table into t->dec. */
int tok_bpe_decode_pieces(struct belt_tokenizer *t, char *err, size_t errsz);

/* Pre-tokenizer (pretok.c): the regex set for tokenizer.ggml.pre name[0..n)
 * (n == 0: the default set); sets the flags that come with it. */
struct tok_pre_info {
	bool ignore_merges, add_bos, add_sep, no_bos;
};
int tok_pretok_new(const char *name, size_t n, struct tok_pretok **out,
		   struct tok_pre_info *info, char *err, size_t errsz);
void tok_pretok_free(struct tok_pretok *p);
/* Split text[0..len) into words: calls word() for each, in order. */
typedef int (*tok_word_fn)(void *ctx, const char *w, size_t n);
int tok_pretok_split(const struct tok_pretok *p, const char *text, size_t len,
		     tok_word_fn word, void *ctx, char *err, size_t errsz);

/* WordPiece (wpm.c) encoding of one raw text fragment. */
int tok_wpm_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, struct tok_out *o, char *err, size_t errsz);

#endif
