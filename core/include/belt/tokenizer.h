/* belt/tokenizer.h: text <-> token ids from a GGUF's tokenizer.ggml.* keys. */
#ifndef BELT_TOKENIZER_H
#define BELT_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/gguf.h"

struct belt_tokenizer;

/* Build a tokenizer from g's tokenizer.ggml.* metadata (the GGUF may hold
 * no tensors). The tokenizer copies what it needs; g may be closed after. */
int belt_tok_load(const struct belt_gguf *g, struct belt_tokenizer **out,
		  char *err, size_t errsz);
/* Free; NULL is allowed. */
void belt_tok_free(struct belt_tokenizer *t);

/* Number of tokens in the vocabulary. */
int32_t belt_tok_n_vocab(const struct belt_tokenizer *t);
/* BOS / EOS ids, or -1 if the vocabulary defines none. */
int32_t belt_tok_bos(const struct belt_tokenizer *t);
int32_t belt_tok_eos(const struct belt_tokenizer *t);
/* Whether the GGUF asks for BOS at the start of a prompt
 * (tokenizer.ggml.add_bos_token; default true for the llama model). */
bool belt_tok_add_bos(const struct belt_tokenizer *t);
/* True for end-of-generation ids (EOS, EOT, ...). */
bool belt_tok_is_eog(const struct belt_tokenizer *t, int32_t id);

/* Encode len bytes of text. BOS is prepended when add_bos is set and the
 * vocabulary has one. Writes at most cap ids; *n_out gets the number the
 * full encoding needs, so a call with cap too small can be repeated. */
int belt_tok_encode(const struct belt_tokenizer *t, const char *text,
		    size_t len, bool add_bos, int32_t *ids, size_t cap,
		    size_t *n_out, char *err, size_t errsz);

/* The vocabulary's piece for id (e.g. "\xe2\x96\x81the", "<0x0A>"), NUL-
 * terminated; NULL for an id out of range. */
const char *belt_tok_piece(const struct belt_tokenizer *t, int32_t id);

/* Streaming detokenizer state: holds an incomplete UTF-8 sequence between
 * tokens so no half character is ever emitted. Zero-initialise it (or use
 * belt_tok_stream_init). */
struct belt_tok_stream {
	unsigned char pend[8];
	unsigned n_pend;
	bool strip_space; /* drop one leading space from the next text */
};
/* Start a stream; strip_leading_space drops the dummy-prefix space from
 * the first piece (as when decoding a whole sequence that began at BOS). */
void belt_tok_stream_init(struct belt_tok_stream *s, bool strip_leading_space);
/* Append id's text to out (capacity cap, at least 32 bytes plus the longest
 * piece); returns bytes written. Control tokens (BOS/EOS) produce nothing;
 * byte tokens are collected until they form a complete character. */
size_t belt_tok_decode(const struct belt_tokenizer *t,
		       struct belt_tok_stream *s, int32_t id, char *out,
		       size_t cap);
/* Emit what is still pending at the end of a stream (an incomplete UTF-8
 * sequence becomes U+FFFD); returns bytes written. */
size_t belt_tok_flush(struct belt_tok_stream *s, char *out, size_t cap);
/* Longest piece in bytes, for sizing decode buffers. */
size_t belt_tok_max_piece(const struct belt_tokenizer *t);

#endif
