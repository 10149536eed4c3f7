/* What the grammar fuzz targets (gbnf.c, schema.c) share: a small
 * vocabulary (the 256 byte tokens, a few pieces, an end-of-generation
 * token) and a walk of a compiled matcher that checks its mask against
 * accept(). A broken invariant aborts, naming the target. */
#ifndef BELT_TESTS_FUZZ_GRAMMAR_VOCAB_H
#define BELT_TESTS_FUZZ_GRAMMAR_VOCAB_H

#include <stdint.h>

#include "belt/tokenizer.h"
#include "gbnf.h"

#define FUZZ_BYTE0 3
#define FUZZ_N_TOK (FUZZ_BYTE0 + 256 + 5)
#define FUZZ_EOG 2

/* Abort with "fuzz WHO: invariant broken: what: detail". */
void fuzz_broken(const char *who, const char *what, const char *detail);
/* The vocabulary, written to a temporary GGUF and loaded; exits 2 if it
 * cannot be. Freed at exit. */
struct belt_tokenizer *fuzz_grammar_vocab(const char *who);
/* Up to 48 steps from m's state, tokens picked by the hash h: the
 * end-of-generation bit says whether the grammar is complete, a token
 * the mask leaves out is refused and changes nothing, an allowed one is
 * accepted (or refused as too ambiguous to follow, which ends the walk). */
void fuzz_grammar_walk(const char *who, struct gb_matcher *m, uint64_t h);

#endif
