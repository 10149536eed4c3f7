/* Tests for core/arch: the architecture and belt.yaml loaders and the
 * expression evaluator, with the inputs fuzzing found them failing on
 * (tests/fuzz/arch.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/config.h"
#include "arch/expr.h"
#include "belt/error.h"

static char dir[4096], file[4200];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/belt-arch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/belt.yaml", dir);
}

static void teardown(void)
{
	unlink(file);
	rmdir(dir);
}

static void write_file(const char *text)
{
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Load text as an architecture; 0 or -1, the message in err. */
static int load(const char *text, char *err, size_t errsz)
{
	write_file(text);
	struct belt_arch *a = NULL;
	int rc = belt_arch_load(file, &a, err, errsz);
	ck_assert(rc == 0 ? a != NULL : a == NULL);
	belt_arch_free(a);
	return rc;
}

#define HEAD "arch: t\n"
#define HPARAMS "hparams:\n  n_embd: {key: \"{arch}.embedding_length\"}\n"
#define BUFFERS "buffers:\n  x: n_embd\n"
#define OUTPUTS "outputs: {logits: x}\n"
#define FORWARD "forward:\n  embed:\n    - {op: embed, bind: [token_embd.weight, x]}\n"
#define VALID HEAD HPARAMS BUFFERS OUTPUTS FORWARD

static void assert_twice(const char *text, const char *what)
{
	char err[BELT_ERR_SIZE] = "";
	ck_assert_int_eq(load(text, err, sizeof err), -1);
	ck_assert_msg(strstr(err, what) && strstr(err, "given twice") &&
		      !strncmp(err, file, strlen(file)), "%s", err);
}

START_TEST(test_valid)
{
	char err[BELT_ERR_SIZE] = "";
	ck_assert_msg(load(VALID, err, sizeof err) == 0, "%s", err);
}
END_TEST

/* A section given twice replaced the first one's array but kept counting
 * from the first one's length: the first leaked, and a shorter second
 * one was written past its end (heap overflow). Found by fuzz-arch. */
START_TEST(test_section_twice)
{
	assert_twice(VALID "buffers:\n  y: n_embd\n", "buffers");
	assert_twice(HEAD "hparams:\n  a: {key: a}\n  b: {key: b}\n  c: {key: c}\n"
		     HPARAMS BUFFERS OUTPUTS FORWARD, "hparams");
	assert_twice(VALID "derived:\n  a: 1\n  b: 2\nderived:\n  c: 3\n", "derived");
	assert_twice(VALID "kv_cache:\n  k: 1\nkv_cache:\n  v: 1\n", "kv_cache");
}
END_TEST

/* A scalar key given twice leaked the first value. */
START_TEST(test_scalar_twice)
{
	assert_twice(VALID "arch: u\n", "arch");
	assert_twice(VALID "outputs: {logits: x}\n", "logits");
	assert_twice(HEAD "hparams:\n  n_embd: {key: a, key: b}\n" BUFFERS OUTPUTS FORWARD,
		     "key");
	assert_twice(HEAD HPARAMS BUFFERS OUTPUTS
		     "forward:\n  embed:\n    - {op: embed, op: e, bind: [t, x]}\n", "op");
}
END_TEST

/* Unary minus recursed without the depth limit of parentheses: a long
 * run of '-' overflowed the stack. */
START_TEST(test_expr_unary_depth)
{
	struct belt_vars vs = {.n = 0};
	char err[BELT_ERR_SIZE];
	double v = 0;
	ck_assert_int_eq(belt_expr_eval("--1", &vs, &v, err, sizeof err), 0);
	ck_assert(v == 1);
	ck_assert_int_eq(belt_expr_eval("-(-(-2))", &vs, &v, err, sizeof err), 0);
	ck_assert(v == -2);
	size_t n = 1000000;
	char *deep = malloc(n + 2);
	ck_assert_ptr_nonnull(deep);
	memset(deep, '-', n);
	strcpy(deep + n, "1");
	ck_assert_int_eq(belt_expr_eval(deep, &vs, &v, err, sizeof err), -1);
	free(deep);
	ck_assert_int_eq(belt_expr_eval("-------------------------------------------------------------------1",
					&vs, &v, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nested too deeply"), "%s", err);
}
END_TEST

/* A second backends: mapping overwrote the text the first one's settings
 * point into. */
/* Comparisons give 1 or 0; select(c, a, b) is a where c is not 0. */
START_TEST(test_expr_compare)
{
	struct belt_vars vs = {.n = 0};
	belt_vars_set(&vs, "l", 5);
	char err[BELT_ERR_SIZE];
	double v = -1;
	static const struct { const char *e; double want; } cases[] = {
		{"l % 6 < 5", 0}, {"l % 6 <= 5", 1}, {"l > 4", 1}, {"l >= 6", 0},
		{"l == 5", 1}, {"l != 5", 0}, {"select(l % 2 < 1, 8, 0)", 0},
		{"select(l == 5, 10000, 1000000)", 10000}, {"(1 < 2) + (2 < 1)", 1},
		{"select(0, 1, select(1, 2, 3))", 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ck_assert_msg(belt_expr_eval(cases[i].e, &vs, &v, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(v == cases[i].want, "%s = %g, expected %g", cases[i].e, v, cases[i].want);
	}
	ck_assert_int_eq(belt_expr_eval("1 < 2 < 3", &vs, &v, err, sizeof err), -1);
	ck_assert_int_eq(belt_expr_eval("select(1, 2)", &vs, &v, err, sizeof err), -1);
	ck_assert_int_eq(belt_expr_eval("l = 5", &vs, &v, err, sizeof err), -1);
}
END_TEST

static void visit(const char *name, const char *path, void *ud)
{
	char *seen = ud;
	size_t n = strlen(seen);
	snprintf(seen + n, 1024 - n, "%s=%s ", name, strrchr(path, '/') ? strrchr(path, '/') - 2 : path);
}

/* belt_arch_list: every name once, from the first directory that has it
 * (what belt_arch_find loads), names sorted within a directory. */
START_TEST(test_list)
{
	char a[4200], b[4200], path[8500], f[8600];
	snprintf(a, sizeof a, "%s/a1", dir);
	snprintf(b, sizeof b, "%s/b2", dir);
	ck_assert_int_eq(mkdir(a, 0755), 0);
	ck_assert_int_eq(mkdir(b, 0755), 0);
	const char *files[] = {"a1/u.yaml", "a1/t.yaml", "b2/t.yaml", "b2/v.yaml", "b2/notes.txt"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(f, sizeof f, "%s/%s", dir, files[i]);
		FILE *fp = fopen(f, "w");
		ck_assert_ptr_nonnull(fp);
		fclose(fp);
	}
	ck_assert_int_lt(snprintf(path, sizeof path, "%s/missing:%s:%s", dir, a, b),
			 (int)sizeof path);
	char seen[1024] = "";
	ck_assert_int_eq(belt_arch_list(path, visit, seen), 3);
	ck_assert_str_eq(seen, "t=a1/t.yaml u=a1/u.yaml v=b2/v.yaml ");
	/* a folder named twice (as an installed path and a build's can be,
	 * by another spelling) is listed once */
	char twice[17200];
	snprintf(twice, sizeof twice, "%s:%s:%s:%s/../a1", a, b, a, b);
	seen[0] = 0;
	ck_assert_int_eq(belt_arch_list(twice, visit, seen), 3);
	ck_assert_str_eq(seen, "t=a1/t.yaml u=a1/u.yaml v=b2/v.yaml ");
	for (size_t i = 0; i < 5; i++) {
		snprintf(f, sizeof f, "%s/%s", dir, files[i]);
		unlink(f);
	}
	rmdir(a);
	rmdir(b);
}
END_TEST

START_TEST(test_config_twice)
{
	struct belt_config c;
	char err[BELT_ERR_SIZE] = "";
	write_file("kernels: {attention: default}\nbackends:\n  cpu: {isa: best}\n");
	ck_assert_msg(belt_config_load(dir, "cpu", &c, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(c.n_setting, 1);
	ck_assert_str_eq(c.setting[0].key, "isa");
	ck_assert_str_eq(c.setting[0].value, "best");
	write_file("backends:\n  cpu: {isa: best}\nbackends:\n  cpu: {abc: d}\n");
	ck_assert_int_eq(belt_config_load(dir, "cpu", &c, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "'backends' given twice"), "%s", err);
	write_file("kernels: {a: b}\nkernels: {c: d}\n");
	ck_assert_int_eq(belt_config_load(dir, "cpu", &c, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "'kernels' given twice"), "%s", err);
}
END_TEST

static Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("loaders");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_section_twice);
	tcase_add_test(tc, test_scalar_twice);
	tcase_add_test(tc, test_expr_unary_depth);
	tcase_add_test(tc, test_config_twice);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_expr_compare);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(arch_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
