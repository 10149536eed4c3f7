/* End-to-end: the architectures beyond Llama 1/2 against llama.cpp, on
 * the small files of $BELT_SHARED_DIR/models/arch (its README.md says what
 * each exercises), on the backend of $BELT_TEST_BACKEND (cpu when unset):
 * teacher-forced logits at 64 positions, from one batched pass and one
 * token at a time, within 1e-3 of llama.cpp's (llama.cpp's own batched
 * and one-token paths differ by up to 4.6e-5 there), and greedy ids
 * equal to llama.cpp's over each record's stable prefix. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llref.h"

static const char *const models[] = {"llama3-rope", "qwen2-same", "qwen2", "phi3-same",
				     "qwen3"};
#define N_MODELS (int)(sizeof models / sizeof models[0])

static struct llref_case case_of(int i, char bufs[2][64])
{
	snprintf(bufs[0], 64, "%s.gguf", models[i]);
	snprintf(bufs[1], 64, "logits.%s.f32", models[i]);
	return (struct llref_case){"models/arch", bufs[0], models[i], "stock", bufs[1], NULL};
}

static struct llref_tol tol(void)
{
	const char *be = getenv("BELT_TEST_BACKEND");
	return (struct llref_tol){be ? be : "cpu", true, 1e-3, 0};
}

START_TEST(teacher_forced)
{
	char bufs[2][64];
	struct llref_case c = case_of(_i, bufs);
	llref_teacher_forced(&c, tol(), tol());
}
END_TEST

START_TEST(greedy)
{
	char bufs[2][64];
	struct llref_case c = case_of(_i, bufs);
	llref_greedy(&c, tol());
}
END_TEST

int main(void)
{
	Suite *su = suite_create("archs");
	TCase *tc = tcase_create("models/arch");
	tcase_set_timeout(tc, 0);
	tcase_add_loop_test(tc, teacher_forced, 0, N_MODELS);
	tcase_add_loop_test(tc, greedy, 0, N_MODELS);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
