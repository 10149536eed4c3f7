/* libFuzzer target: the GBNF grammar plugin (plugins/grammar-gbnf, its
 * sources linked in) on any text.
 *
 * The input is a grammar, compiled as the plugin's compile() does (parse,
 * checks, trie, start state) against a small vocabulary made once: all
 * 256 byte tokens, a few pieces (two cut inside a UTF-8 character) and an
 * end-of-generation token. Invariants: a grammar the parser or the checks
 * refuse gets one line starting "LINE:COL: "; one they take compiles
 * (or is too ambiguous to follow: more than GB_MAX_STACKS readings at
 * once); then for up to 48 steps,
 * tokens picked by a hash of the input, each allowed token is accepted,
 * a token the mask leaves out is refused and changes nothing, and the
 * end-of-generation bit says whether the grammar is complete. No crash,
 * leak, overflow or undefined behaviour (ASan, UBSan), no hang. A broken
 * invariant aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "gbnf.h"
#include "grammar_vocab.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct belt_tokenizer *tok;

static void broken(const char *what, const char *detail)
{
	fuzz_broken("gbnf", what, detail);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tok = fuzz_grammar_vocab("gbnf");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[BELT_ERR_SIZE] = "";
	struct gb_matcher *m = calloc(1, sizeof *m);
	if (!m)
		return 0;
	if (gb_parse(text, size, &m->g, err, sizeof err) ||
	    gb_analyse(&m->g, text, size, err, sizeof err)) {
		unsigned line, col;
		int used = 0;
		if (sscanf(err, "%u:%u: %n", &line, &col, &used) != 2 || !used || !err[used] ||
		    strchr(err, '\n'))
			broken("a refused grammar's message lacks LINE:COL: or is not one line", err);
	} else if (gb_trie_build(&m->trie, tok, err, sizeof err) || gb_matcher_init(m, err, sizeof err)) {
		if (strcmp(err, "no token of the vocabulary can begin a sentence of this grammar") &&
		    !strstr(err, "too ambiguous to follow"))
			broken("a checked grammar did not compile", err);
	} else {
		uint64_t h = 14695981039346656037ull;
		for (size_t i = 0; i < size; i++)
			h = (h ^ data[i]) * 1099511628211ull;
		fuzz_grammar_walk("gbnf", m, h);
		gb_matcher_reset(m);
		fuzz_grammar_walk("gbnf", m, h ^ 0x9e3779b97f4a7c15ull);
	}
	gb_matcher_free(m);
	free(m);
	return 0;
}
