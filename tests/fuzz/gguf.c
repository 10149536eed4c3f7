/* libFuzzer target: the GGUF reader, then the tokenizer loader on what it
 * accepts (a model file is untrusted input, its tokenizer.ggml.* metadata
 * included).
 *
 * The input is a GGUF image, parsed in memory (belt_gguf_open_mem). The
 * reader's invariants are those of tests/fuzz_gguf.c: a rejected image
 * gives one line naming it; an accepted one has every key, string,
 * array and tensor inside the image and found by its name. If the image
 * opens and belt_tok_load accepts its metadata, a few texts are encoded
 * (plain and with special tokens parsed) and decoded: encoding fails only
 * with a message (a vocabulary may lack byte pieces and <unk>), a
 * too-small buffer gives the same count, ids are in range and decoding
 * writes no more than it was given. A broken invariant aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/tokenizer.h"

/* the reader's invariants: tests/fuzz_gguf.c's target, renamed */
#define BELT_LIBFUZZER
#define LLVMFuzzerTestOneInput fuzz_gguf_invariants
#include "../fuzz_gguf.c"
#undef LLVMFuzzerTestOneInput

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz gguf: tokenizer: invariant broken: %s%s%s\n", what,
		detail ? ": " : "", detail ? detail : "");
	abort();
}

static void encode_decode(const struct belt_tokenizer *t, const char *text,
			  unsigned flags)
{
	char err[BELT_ERR_SIZE];
	int32_t ids[256];
	size_t len = strlen(text), n = 0, n2 = 0;
	err[0] = 0;
	if (belt_tok_encode_flags(t, text, len, flags, ids, 1, &n, err, sizeof err)) {
		/* a vocabulary may lack what the text needs (no byte pieces
		 * and no <unk>): an error, but one that says so */
		if (!*err || strchr(err, '\n'))
			broken("a failed encoding gives no one-line message", err);
		return;
	}
	if (n > sizeof ids / sizeof ids[0])
		return; /* more ids than bytes times 4: allowed, not checked here */
	if (belt_tok_encode_flags(t, text, len, flags, ids, sizeof ids / sizeof ids[0],
				  &n2, err, sizeof err) || n2 != n)
		broken("a second encoding differs", NULL);
	int32_t n_vocab = belt_tok_n_vocab(t);
	size_t cap = 32 + belt_tok_max_piece(t);
	char *out = malloc(cap + 1);
	if (!out)
		return;
	struct belt_tok_stream st;
	belt_tok_stream_init(&st, true);
	for (size_t i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= n_vocab)
			broken("id out of range", NULL);
		out[cap] = 0x5a; /* a canary one past what decode may write */
		if (belt_tok_decode(t, &st, ids[i], out, cap) > cap || out[cap] != 0x5a)
			broken("decode wrote past its buffer", NULL);
		if (!belt_tok_piece(t, ids[i]))
			broken("no piece for an encoded id", NULL);
	}
	if (belt_tok_flush(&st, out, cap) > cap)
		broken("flush wrote past its buffer", NULL);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_gguf_invariants(data, size);
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open_mem(data, size, "fuzz.gguf", err, sizeof err);
	if (!g)
		return 0;
	struct belt_tokenizer *t = NULL;
	if (belt_tok_load(g, &t, err, sizeof err) == 0) {
		/* the tokenizer copies what it needs: the image may go first */
		belt_gguf_close(g);
		g = NULL;
		static const char *const texts[] = {
			"Hello world", " a  b\n\n\tc 123 4567 'll 's",
			"\xc3\xa9t\xc3\xa9 \xe4\xb8\x80 \xf0\x9f\xa6\x99 \xe2\x96\x81x",
			"<s></s><unk><|endoftext|>[CLS]", "\xff\xc0\xaf\xed\xa0\x80", ""};
		for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
			encode_decode(t, texts[i], BELT_TOK_ADD_BOS | BELT_TOK_ADD_EOS);
			encode_decode(t, texts[i], BELT_TOK_PARSE_SPECIAL);
		}
		belt_tok_free(t);
	} else if (!*err || strchr(err, '\n')) {
		broken("a rejected vocabulary gives no one-line message", err);
	}
	belt_gguf_close(g);
	return 0;
}
