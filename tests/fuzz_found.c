/* What the libFuzzer targets of tests/fuzz/ found in core/gguf and
 * core/tokenizer, each as the test that would have caught it (core/arch's
 * are in tests/arch.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"
#include "belt/tokenizer.h"

/* Write w to a temporary file, open it and load its tokenizer; returns
 * belt_tok_load's result, the message in err. */
static int load_vocab(struct belt_gguf_writer *w, char *err, size_t errsz)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/belt-fuzz-found-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(belt_gguf_writer_write(w, path, err, errsz) == 0, "%s", err);
	struct belt_gguf *g = belt_gguf_open(path, err, errsz);
	unlink(path);
	ck_assert_msg(g != NULL, "%s", err);
	struct belt_tokenizer *t = NULL;
	int rc = belt_tok_load(g, &t, err, errsz);
	belt_tok_free(t);
	belt_gguf_close(g);
	return rc;
}

/* A token typed "byte" whose piece is no <0xNN> was named in the message
 * with its bytes as they are: a newline (or a terminal escape) from the
 * file went into what should be one printable line. Found by fuzz-gguf. */
START_TEST(test_byte_piece_message_printable)
{
	static const char *const toks[] = {"<unk>", "<s>", "</s>", "<\n\x1b[2J>"};
	static const float scores[] = {0, 0, 0, 0};
	static const int32_t types[] = {2, 3, 3, 6};
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	ck_assert_ptr_nonnull(w);
	ck_assert(!belt_gguf_writer_str(w, "tokenizer.ggml.model", "llama") &&
		  !belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", toks, 4) &&
		  !belt_gguf_writer_arr(w, "tokenizer.ggml.scores", BELT_GGUF_FLOAT32, scores, 4) &&
		  !belt_gguf_writer_arr(w, "tokenizer.ggml.token_type", BELT_GGUF_INT32, types, 4));
	char err[BELT_ERR_SIZE] = "";
	ck_assert_int_eq(load_vocab(w, err, sizeof err), -1);
	belt_gguf_writer_free(w);
	ck_assert_msg(strstr(err, "token 3 has type byte but piece '<??[2J>' is not <0xNN>"), "%s",
		      err);
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
			      "byte 0x%02x in the message", (unsigned char)*p);
}
END_TEST

static Suite *fuzz_found_suite(void)
{
	Suite *s = suite_create("fuzz_found");
	TCase *tok = tcase_create("tokenizer");
	tcase_add_test(tok, test_byte_piece_message_printable);
	suite_add_tcase(s, tok);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fuzz_found_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
