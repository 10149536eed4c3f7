/* core/tokenizer/tokenizer_impl.h: the loaded vocabulary, shared by the
 * loader (tokenizer.c), the SPM encoder (spm.c) and the detokenizer
 * (detok.c). Internal names use the tok_ prefix so they stay unexported. */
#ifndef BELT_TOKENIZER_IMPL_H
#define BELT_TOKENIZER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct tok_entry {
	uint32_t off; /* piece = blob + off, NUL-terminated */
	uint32_t len; /* bytes, excluding the NUL */
	float score;
	uint8_t type; /* enum tok_type */
	uint8_t byte; /* the raw byte of a TOK_BYTE piece "<0xNN>" */
};

struct belt_tokenizer {
	int32_t n_vocab;
	struct tok_entry *tok;
	char *blob;

	/* open-addressing piece -> id map; -1 marks an empty slot */
	int32_t *map;
	uint32_t map_mask;

	/* id for each raw byte: <0xNN>, else the 1-byte piece, else unk, else -1 */
	int32_t byte_tok[256];
	/* user-defined ids, longest piece first: split out before SPM */
	int32_t *user;
	size_t n_user;

	int32_t bos, eos, unk, eot, eom; /* -1: none */
	bool add_bos, add_eos, add_space_prefix;
	size_t max_piece;
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

/* SentencePiece (llama.cpp llm_tokenizer_spm) encoding of one raw text
 * fragment; prefix prepends the dummy-prefix space. */
int tok_spm_encode(const struct belt_tokenizer *t, const char *text,
		   size_t len, bool prefix, struct tok_out *o, char *err,
		   size_t errsz);

#endif
