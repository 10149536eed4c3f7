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
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf_writer.h"
#include "gbnf.h"
#include "schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BYTE0 3
#define N_TOK (BYTE0 + 256 + 5)

static struct belt_tokenizer *tok;

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz schema: invariant broken: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void free_tok(void)
{
	belt_tok_free(tok);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char names[256][8];
	const char *tokens[N_TOK] = {"<unk>", "<s>", "</s>"};
	int32_t types[N_TOK] = {2, 3, 3};
	float scores[N_TOK] = {0};
	for (int b = 0; b < 256; b++) {
		snprintf(names[b], sizeof names[b], "<0x%02X>", b);
		tokens[BYTE0 + b] = names[b];
		types[BYTE0 + b] = 6;
	}
	static const char *const pieces[5] = {"ab", "\342\226\201a", "a\xe6", "\x97\xa5", "{\""};
	for (int i = 0; i < 5; i++) {
		tokens[BYTE0 + 256 + i] = pieces[i];
		types[BYTE0 + 256 + i] = 1;
	}
	const char *tmp = getenv("TMPDIR");
	char path[4096], err[BELT_ERR_SIZE];
	snprintf(path, sizeof path, "%s/belt-fuzz-schema-%ld.gguf", tmp && *tmp ? tmp : "/tmp",
		 (long)getpid());
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	if (!w || belt_gguf_writer_str(w, "tokenizer.ggml.model", "llama") ||
	    belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", tokens, N_TOK) ||
	    belt_gguf_writer_arr(w, "tokenizer.ggml.scores", BELT_GGUF_FLOAT32, scores, N_TOK) ||
	    belt_gguf_writer_arr(w, "tokenizer.ggml.token_type", BELT_GGUF_INT32, types, N_TOK) ||
	    belt_gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", 2) ||
	    belt_gguf_writer_write(w, path, err, sizeof err)) {
		fprintf(stderr, "fuzz schema: cannot write the vocabulary: %s\n", err);
		exit(2);
	}
	belt_gguf_writer_free(w);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	if (!g || belt_tok_load(g, &tok, err, sizeof err)) {
		fprintf(stderr, "fuzz schema: cannot load the vocabulary: %s\n", err);
		exit(2);
	}
	belt_gguf_close(g);
	unlink(path);
	atexit(free_tok);
	return 0;
}

static bool allowed(const struct gb_matcher *m, int32_t id)
{
	return m->mask[id / 32] >> (id % 32) & 1;
}

static void walk(struct gb_matcher *m, uint64_t h)
{
	char err[BELT_ERR_SIZE];
	for (int step = 0; step < 48 && !m->ended; step++) {
		int32_t n_allowed = 0;
		for (int32_t id = 0; id < N_TOK; id++)
			n_allowed += allowed(m, id);
		if (allowed(m, 2) != m->complete)
			broken("end of generation allowed where the grammar is not complete, or not "
			       "where it is", NULL);
		if (!n_allowed)
			return;
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		int32_t pick = (int32_t)((h >> 17) % (uint64_t)n_allowed), id = 0;
		for (;; id++)
			if (allowed(m, id) && pick-- == 0)
				break;
		if (gb_matcher_accept(m, id, err, sizeof err)) {
			if (strstr(err, "too ambiguous to follow"))
				return;
			broken("an allowed token was refused", err);
		}
	}
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
		walk(m, h);
	}
	gb_matcher_free(m);
	free(m);
	free(text);
	return 0;
}
