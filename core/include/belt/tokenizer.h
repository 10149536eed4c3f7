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
 * (tokenizer.ggml.add_bos_token; default true for the llama and bert
 * models and for Llama-3-style gpt2 pre-tokenizers, as in llama.cpp). */
bool belt_tok_add_bos(const struct belt_tokenizer *t);
/* True for end-of-generation ids (EOS, EOT, ...). */
bool belt_tok_is_eog(const struct belt_tokenizer *t, int32_t id);

/* Encode len bytes of text. BOS is prepended when add_bos is set and the
 * vocabulary has one. Writes at most cap ids; *n_out gets the number the
 * full encoding needs, so a call with cap too small can be repeated.
 * Special-token text is not parsed (user-defined pieces are still cut out,
 * as llama.cpp does).
 * Any bytes are accepted; nothing fails for bad input. The text need not
 * be valid UTF-8 and may hold NULs:
 * - SentencePiece ("llama") and byte-level BPE ("gpt2") keep every byte
 *   their vocabulary has a piece for: NUL is the byte 0x00, and a byte
 *   that is no part of a valid UTF-8 character (overlong, surrogate, above
 *   U+10FFFF, stray or truncated) is a one-byte symbol (SPM: a byte token;
 *   BPE: it matches no pre-tokenizer class, so runs of such bytes are
 *   words of their own; llama.cpp would read it as U+FFFD). A byte with no
 *   piece becomes <unk> (SPM) or is dropped (BPE, as in llama.cpp; e.g.
 *   falcon lacks 14 control bytes, most BPE vocabularies C0, C1, F5-FF).
 *   Decoding gives valid UTF-8 text back exactly, invalid bytes as U+FFFD
 *   (decode only emits valid UTF-8; deepseek's user-defined pieces for
 *   C0, C1, F5-FF decode as those Latin-1 letters, as in llama.cpp).
 * - WordPiece ("bert") drops NULs, control characters and invalid bytes,
 *   as llama.cpp drops them (it reads invalid bytes as U+FFFD). */
int belt_tok_encode(const struct belt_tokenizer *t, const char *text,
		    size_t len, bool add_bos, int32_t *ids, size_t cap,
		    size_t *n_out, char *err, size_t errsz);

/* The vocabulary's piece for id (e.g. "\xe2\x96\x81the", "<0x0A>"), NUL-
 * terminated; NULL for an id out of range. */
const char *belt_tok_piece(const struct belt_tokenizer *t, int32_t id);

/* The bytes id adds to generated text, before belt_tok_decode's UTF-8
 * assembly: a normal piece's decoded text (SPM's U+2581 as ' ', BPE's
 * byte table undone), a user-defined piece verbatim, a byte token's one
 * byte. *len is 0 for control, unknown, unused and undefined ids, which
 * add no text. The bytes may be part of a UTF-8 character (a byte token,
 * a BPE piece cut inside one) and hold NULs; they stay valid while t
 * lives. NULL (and *len 0) for an id out of range. */
const char *belt_tok_bytes(const struct belt_tokenizer *t, int32_t id,
			   size_t *len);

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

/* Whether the GGUF asks for EOS at the end of a prompt
 * (tokenizer.ggml.add_eos_token; for WordPiece add_sep_token: SEP). */
bool belt_tok_add_eos(const struct belt_tokenizer *t);

/* Flags for belt_tok_encode_flags. */
#define BELT_TOK_ADD_BOS 1u /* prepend BOS, if the vocabulary has one */
#define BELT_TOK_ADD_EOS 2u /* append EOS (WordPiece: SEP), if it has one */
#define BELT_TOK_PARSE_SPECIAL 4u /* control/unknown piece text, e.g.
	"<|begin_of_text|>", becomes its id; otherwise it is literal text */
/* belt_tok_encode with flags; the same rules otherwise. */
int belt_tok_encode_flags(const struct belt_tokenizer *t, const char *text,
			  size_t len, unsigned flags, int32_t *ids, size_t cap,
			  size_t *n_out, char *err, size_t errsz);

#endif
