/* libFuzzer target: JSON Schema -> GBNF (plugins/grammar-gbnf/schema*.c,
 * the plugin's sources linked in) on any text.
 *
 * The input is a schema. Invariants: a schema the converter refuses gets
 * one line starting "LINE:COL: " (JSON that does not parse), "/..." or
 * "(root): " (a JSON pointer); the GBNF of one it takes always parses
 * (the checks may still refuse it: a schema that refers to itself before
 * any character, or only to itself); a grammar the checks take compiles
 * against a small vocabulary (all 256 byte tokens, a few pieces, an
 * end-of-generation token), and for up to 48 steps, tokens picked by a
 * hash of the input, each allowed token is accepted and the
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
#include "schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct belt_tokenizer *tok;

static void broken(const char *what, const char *detail)
{
	fuzz_broken("schema", what, detail);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tok = fuzz_grammar_vocab("schema");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[BELT_ERR_SIZE] = "", *text = NULL;
	if (sc_convert((const char *)data, size, &text, err, sizeof err)) {
		unsigned line, col;
		int used = 0;
		bool placed = (sscanf(err, "%u:%u: %n", &line, &col, &used) == 2 && used) ||
			      err[0] == '/' || !strncmp(err, "(root): ", 8) ||
			      !strcmp(err, "out of memory");
		if (!placed || strchr(err, '\n') || !strstr(err, ": "))
			broken("a refused schema's message lacks its place or is not one line", err);
		return 0;
	}
	struct gb_matcher *m = calloc(1, sizeof *m);
	if (!m) {
		free(text);
		return 0;
	}
	size_t len = strlen(text);
	if (gb_parse(text, len, &m->g, err, sizeof err))
		broken("the GBNF made of a schema does not parse", err);
	if (gb_analyse(&m->g, text, len, err, sizeof err)) {
		/* refused by the checks: left recursion, or no finite sentence */
	} else if (gb_trie_build(&m->trie, tok, err, sizeof err) || gb_matcher_init(m, err, sizeof err)) {
		if (strcmp(err, "no token of the vocabulary can begin a sentence of this grammar") &&
		    !strstr(err, "too ambiguous to follow"))
			broken("a checked grammar did not compile", err);
	} else {
		uint64_t h = 14695981039346656037ull;
		for (size_t i = 0; i < size; i++)
			h = (h ^ data[i]) * 1099511628211ull;
		fuzz_grammar_walk("schema", m, h);
	}
	gb_matcher_free(m);
	free(m);
	free(text);
	return 0;
}
