/* The test helpers that load shared models and plugins (ref.h), apart
 * from ref.c so that suites that do not link libbelt can use the rest. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "belt/belt.h"
#include "belt/gguf_writer.h"
#include "ref.h"

struct belt_model *ref_load_model(const char *file)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	char rel[256];
	snprintf(rel, sizeof rel, "models/%s", file);
	mp.path = shared_path(rel);
	mp.n_threads = 2;
	/* the same references hold for every backend */
	if (getenv("BELT_TEST_BACKEND"))
		mp.backend = getenv("BELT_TEST_BACKEND");
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	return m;
}

bool ref_use_test_plugins(const char *prog)
{
	const char *tp = getenv("BELT_TEST_PLUGINS"), *pp = getenv("BELT_PLUGIN_PATH");
	if (!tp) {
		fprintf(stderr, "%s: set BELT_TEST_PLUGINS to the test plugins' folder\n", prog);
		return false;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s%s%s", pp ? pp : "", pp ? ":" : "", tp);
	setenv("BELT_PLUGIN_PATH", path, 1);
	return true;
}

struct belt_tokenizer *ref_vocab(const char *const *tokens, const int32_t *types, int n,
				 int32_t eos, int32_t eot)
{
	float *scores = calloc((size_t)n, sizeof *scores);
	ck_assert(scores);
	const char *tmp = getenv("TMPDIR");
	char path[4096], err[BELT_ERR_SIZE];
	snprintf(path, sizeof path, "%s/belt-test-vocab-%ld.gguf", tmp && *tmp ? tmp : "/tmp",
		 (long)getpid());
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	ck_assert(w);
	ck_assert(!belt_gguf_writer_str(w, "tokenizer.ggml.model", "llama"));
	ck_assert(!belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", tokens, (uint64_t)n));
	ck_assert(!belt_gguf_writer_arr(w, "tokenizer.ggml.scores", BELT_GGUF_FLOAT32, scores,
					(uint64_t)n));
	ck_assert(!belt_gguf_writer_arr(w, "tokenizer.ggml.token_type", BELT_GGUF_INT32, types,
					(uint64_t)n));
	ck_assert(!belt_gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)eos));
	if (eot >= 0)
		ck_assert(!belt_gguf_writer_u32(w, "tokenizer.ggml.eot_token_id", (uint32_t)eot));
	ck_assert_msg(belt_gguf_writer_write(w, path, err, sizeof err) == 0, "%s", err);
	belt_gguf_writer_free(w);
	free(scores);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g, "%s", err);
	struct belt_tokenizer *t;
	ck_assert_msg(belt_tok_load(g, &t, err, sizeof err) == 0, "%s", err);
	belt_gguf_close(g);
	unlink(path);
	return t;
}
