/* End-to-end: every file of $BELT_SHARED_DIR/models/quant (a small llama
 * quantized by llama.cpp to each GGUF type, see its README.md) against
 * llama.cpp's outputs there, on the backend of $BELT_TEST_BACKEND (cpu
 * when unset).
 *
 * Two references per file: "deq" (llama.cpp on an F32 copy of the file's
 * exactly dequantized weights) and "stock" (llama.cpp on the file, which
 * rounds activations to 8 bits before its integer products). A path that
 * multiplies in float (Vulkan, the CPU's generic set) must meet the deq
 * logits within 1e-3 at every one of 64 teacher-forced positions and its
 * greedy ids the deq records' over their stable prefix. A path that rounds
 * x to int8 per block of 32 like the CPU's avx2/avx512 sets is held to the
 * README's stock tolerances against both references (legacy types: max
 * 1.0, mean 0.08; K types and IQ4_XS: max 1.5, mean 0.15) and its greedy
 * ids to the deq ids for as long as the deq margins exceed that max.
 * Teacher-forced logits come both from one batched pass (eval_all) and
 * from one token at a time (decode). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "llref.h"

/* the files: stem after "quant-base.", K-type (Q8_K activations in
 * ggml), and whether Vulkan's decode matvec takes x as int8 for its type
 * (doc/vulkan.md, on devices with integer dot products, lavapipe too) */
static const struct {
	const char *name;
	bool k_type, vk_int8;
} files[] = {
	{"f32", false, false},	  {"q8_0", false, true},   {"q4_0", false, true},
	{"q4_1", false, false},	  {"q5_0", false, false},  {"q5_1", false, false},
	{"iq4_nl", false, false}, {"iq4_xs", true, false}, {"q2_k", true, false},
	{"q3_k", true, false},	  {"q4_k", true, true},	   {"q5_k", true, true},
	{"q6_k", true, true},	  {"q4_k_m", true, true},  {"q5_k_m", true, true},
};
#define N_FILES (sizeof files / sizeof files[0])

static bool generic_isa;

/* the tier of file f's batched passes (decode false) or one-token decode */
static struct llref_tol tier_of(int f, bool decode)
{
	const char *be = getenv("BELT_TEST_BACKEND");
	bool vulkan = be && !strcmp(be, "vulkan");
	bool int8 = vulkan ? decode && files[f].vk_int8 : !generic_isa;
	if (!int8 || !strcmp(files[f].name, "f32"))
		return (struct llref_tol){vulkan ? "vulkan" : generic_isa ? "cpu generic" : "cpu", true,
				     1e-3, 0};
	return (struct llref_tol){vulkan ? "vulkan int8" : "cpu int8", false, files[f].k_type ? 1.5 : 1.0,
			     files[f].k_type ? 0.15 : 0.08};
}

/* file f's case: its deq references (the F32 base: stock, the only
 * one), and the stock logits as the second reference of an int8 path */
static struct llref_case case_of(int f, bool int8, char bufs[4][64])
{
	bool base = !strcmp(files[f].name, "f32");
	snprintf(bufs[0], 64, "quant-base.%s.gguf", files[f].name);
	snprintf(bufs[1], 64, "quant-base.%s", files[f].name);
	snprintf(bufs[2], 64, "logits.quant-base.%s.%s", files[f].name, base ? "f32" : "deq.f32");
	snprintf(bufs[3], 64, "logits.quant-base.%s.f32", files[f].name);
	return (struct llref_case){"models/quant", bufs[0], bufs[1], base ? "stock" : "deq", bufs[2],
				   int8 && !base ? bufs[3] : NULL};
}

static void check_teacher_forced(int f)
{
	char bufs[4][64];
	struct llref_tol tb = tier_of(f, false), td = tier_of(f, true);
	struct llref_case c = case_of(f, !tb.exact || !td.exact, bufs);
	llref_teacher_forced(&c, tb, td);
}

static void check_greedy(int f)
{
	char bufs[4][64];
	struct llref_tol t = tier_of(f, true);
	struct llref_case c = case_of(f, false, bufs);
	llref_greedy(&c, t);
}

START_TEST(teacher_forced) { check_teacher_forced(_i); }
END_TEST

START_TEST(greedy) { check_greedy(_i); }
END_TEST

/* the CPU backend with its generic set: float x, the exact tier */
START_TEST(teacher_forced_generic)
{
	setenv("BELT_CPU_ISA", "generic", 1);
	generic_isa = true;
	check_teacher_forced(_i);
}
END_TEST

START_TEST(greedy_generic)
{
	setenv("BELT_CPU_ISA", "generic", 1);
	generic_isa = true;
	check_greedy(_i);
}
END_TEST

int main(void)
{
	/* The references' tolerances hold for float activations
	 * (models/quant/README.md); the Vulkan backend's batched products
	 * on matrix units round x to float16 (doc/vulkan.md), so these
	 * comparisons run its plain shaders. check_backend_vulkan holds the
	 * matrix units to their own bounds. */
	setenv("BELT_VK_COOPMAT", "0", 1);
	Suite *su = suite_create("quant");
	TCase *tc = tcase_create("quant-base");
	tcase_set_timeout(tc, 0);
	tcase_add_loop_test(tc, teacher_forced, 0, (int)N_FILES);
	tcase_add_loop_test(tc, greedy, 0, (int)N_FILES);
	const char *be = getenv("BELT_TEST_BACKEND");
	if (!be || !strcmp(be, "cpu")) {
		tcase_add_loop_test(tc, teacher_forced_generic, 0, (int)N_FILES);
		tcase_add_loop_test(tc, greedy_generic, 0, (int)N_FILES);
	}
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
