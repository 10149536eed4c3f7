/* The grammar fuzz targets' vocabulary and walk (grammar_vocab.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf_writer.h"
#include "grammar_vocab.h"

static struct belt_tokenizer *tok;

void fuzz_broken(const char *who, const char *what, const char *detail)
{
	fprintf(stderr, "fuzz %s: invariant broken: %s%s%s\n", who, what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void free_tok(void)
{
	belt_tok_free(tok);
}

struct belt_tokenizer *fuzz_grammar_vocab(const char *who)
{
	static char names[256][8];
	const char *tokens[FUZZ_N_TOK] = {"<unk>", "<s>", "</s>"};
	int32_t types[FUZZ_N_TOK] = {2, 3, 3};
	float scores[FUZZ_N_TOK] = {0};
	for (int b = 0; b < 256; b++) {
		snprintf(names[b], sizeof names[b], "<0x%02X>", b);
		tokens[FUZZ_BYTE0 + b] = names[b];
		types[FUZZ_BYTE0 + b] = 6;
	}
	static const char *const pieces[5] = {"ab", "\342\226\201a", "a\xe6", "\x97\xa5", "{\""};
	for (int i = 0; i < 5; i++) {
		tokens[FUZZ_BYTE0 + 256 + i] = pieces[i];
		types[FUZZ_BYTE0 + 256 + i] = 1;
	}
	const char *tmp = getenv("TMPDIR");
	char path[4096], err[BELT_ERR_SIZE] = "";
	snprintf(path, sizeof path, "%s/belt-fuzz-%s-%ld.gguf", tmp && *tmp ? tmp : "/tmp", who,
		 (long)getpid());
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	if (!w || belt_gguf_writer_str(w, "tokenizer.ggml.model", "llama") ||
	    belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", tokens, FUZZ_N_TOK) ||
	    belt_gguf_writer_arr(w, "tokenizer.ggml.scores", BELT_GGUF_FLOAT32, scores, FUZZ_N_TOK) ||
	    belt_gguf_writer_arr(w, "tokenizer.ggml.token_type", BELT_GGUF_INT32, types,
				 FUZZ_N_TOK) ||
	    belt_gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", FUZZ_EOG) ||
	    belt_gguf_writer_write(w, path, err, sizeof err)) {
		fprintf(stderr, "fuzz %s: cannot write the vocabulary: %s\n", who, err);
		exit(2);
	}
	belt_gguf_writer_free(w);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	if (!g || belt_tok_load(g, &tok, err, sizeof err)) {
		fprintf(stderr, "fuzz %s: cannot load the vocabulary: %s\n", who, err);
		exit(2);
	}
	belt_gguf_close(g);
	unlink(path);
	atexit(free_tok);
	return tok;
}

static bool allowed(const struct gb_matcher *m, int32_t id)
{
	return m->mask[id / 32] >> (id % 32) & 1;
}

void fuzz_grammar_walk(const char *who, struct gb_matcher *m, uint64_t h)
{
	char err[BELT_ERR_SIZE];
	for (int step = 0; step < 48 && !m->ended; step++) {
		int32_t n_allowed = 0;
		for (int32_t id = 0; id < FUZZ_N_TOK; id++)
			n_allowed += allowed(m, id);
		if (allowed(m, FUZZ_EOG) != m->complete)
			fuzz_broken(who, "end of generation allowed where the grammar is not "
				    "complete, or not where it is", NULL);
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		int32_t out = (int32_t)((h >> 33) % FUZZ_N_TOK);
		if (!allowed(m, out)) {
			uint32_t before[(FUZZ_N_TOK + 31) / 32];
			memcpy(before, m->mask, sizeof before);
			if (gb_matcher_accept(m, out, err, sizeof err) == 0)
				fuzz_broken(who, "a token the mask leaves out was accepted", NULL);
			if (memcmp(before, m->mask, sizeof before))
				fuzz_broken(who, "a refused token changed the state", err);
		}
		if (!n_allowed)
			return;
		int32_t pick = (int32_t)((h >> 17) % (uint64_t)n_allowed), id = 0;
		for (;; id++)
			if (allowed(m, id) && pick-- == 0)
				break;
		if (gb_matcher_accept(m, id, err, sizeof err)) {
			if (strstr(err, "too ambiguous to follow"))
				return; /* GB_MAX_STACKS: refused, not followed */
			fuzz_broken(who, "an allowed token was refused", err);
		}
	}
}
