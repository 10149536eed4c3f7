/* belt/grammar.h: constrained decoding, grammar plugins.
 *
 * A grammar is registered by name from a plugin module "grammar-<name>".
 * It compiles a grammar text into a state over the model's vocabulary and
 * runs at the "logits" insertion point: logit processors run on the
 * logits before the sampler or argmax. Each step the core asks for the
 * allowed tokens, masks the others out, picks a token and accept()s it. */
#ifndef BELT_GRAMMAR_H
#define BELT_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/tokenizer.h"

#define BELT_GRAMMAR_ABI 1
/* The oldest grammar ABI the core still loads. */
#define BELT_GRAMMAR_ABI_MIN 1

/* A grammar: one versioned table, filled with designated initializers.
 * It only grows at the end. state is what compile() made. */
struct belt_grammar_ops {
	uint32_t abi; /* BELT_GRAMMAR_ABI */
	const char *name;
	const char *description;

	/* Compile text[0..len) of kind ("gbnf", "json-schema") against tok's
	 * vocabulary into a new state at the grammar's start; -1 with err
	 * naming the line and column, or the kind it does not read. */
	int (*compile)(const char *text, size_t len, const char *kind,
		       const struct belt_tokenizer *tok, void **state,
		       char *err, size_t errsz);
	/* Free a state; NULL is allowed. */
	void (*free)(void *state);
	/* Back to the grammar's start, as compile() left it. */
	void (*reset)(void *state);
	/* The tokens allowed next: bit id % 32 of mask[id / 32] is set for an
	 * allowed id; writes (n_vocab + 31) / 32 words, the bits from n_vocab
	 * up cleared (n_vocab: the logits' length, which may exceed the
	 * tokenizer's). Must not allocate. */
	void (*allowed)(void *state, uint32_t *mask, int32_t n_vocab);
	/* Advance past token id; -1 with err (state unchanged) if the
	 * grammar does not allow it here. */
	int (*accept)(void *state, int32_t id, char *err, size_t errsz);
	/* Whether the tokens accepted so far form a complete sentence, so
	 * that generation may end here. */
	bool (*is_complete)(const void *state);
};

#endif
