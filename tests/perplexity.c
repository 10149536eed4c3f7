/* belt perplexity through the real binary against llama.cpp's figures,
 * and the -b / -ub / -d flags of run, bench and perplexity. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref.h"

/* llama.cpp d8a24cc, `llama-perplexity -m MODEL -f stdlib-sample.py -c 512
 * -t 2` on the CPU, as $BELT_SHARED_DIR/ppl/README.md records them (the
 * Q5_K_M file's: models/quant/pycoder.json). */
static const struct {
	const char *file;
	double ppl, err;
} refs[] = {
	{"pycoder29M.f16.gguf", 8.5898, 0.25732},
	{"pycoder29M.q8_0.gguf", 8.5929, 0.25749},
	{"pycoder29M.q4_0.gguf", 8.7186, 0.26190},
	{"pycoder29M.q4_k_m.gguf", 8.6840, 0.26117},
	{"quant/pycoder29M.q5_k_m.gguf", 8.6202, 0.2585},
};
/* The running values of the F16 file after chunks 1 .. 3 (same README). */
static const double f16_running[] = {17.1365, 28.1351, 21.8275};
#define TOLERANCE 0.005

static char dir[256];

struct result {
	int status;
	char out[1 << 16], err[4096];
};

static const char *belt_bin(void)
{
	const char *b = getenv("BELT_BIN");
	return b ? b : "./belt";
}

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

/* Run `belt ARGS` with stdout and stderr captured; r gets both and the
 * exit status. */
static void run(struct result *r, const char *fmt, ...)
{
	char args[2048], cmd[3072], out[300], err[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(out, sizeof out, "%s/stdout", dir);
	snprintf(err, sizeof err, "%s/stderr", dir);
	snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", belt_bin(), args, out, err);
	int st = system(cmd);
	ck_assert_msg(WIFEXITED(st), "'%s' died: status %d", cmd, st);
	r->status = WEXITSTATUS(st);
	slurp(out, r->out, sizeof r->out);
	slurp(err, r->err, sizeof r->err);
}

static const char *model(const char *file)
{
	static char path[4096];
	char rel[256];
	snprintf(rel, sizeof rel, "models/%s", file);
	snprintf(path, sizeof path, "%s", shared_path(rel));
	return path;
}

static const char *tmp(const char *name)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/belt-perplexity-XXXXXX");
	ck_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The value after "[chunk]" in the running output; NAN if absent. */
static double running(const char *out, int chunk)
{
	char tag[32];
	snprintf(tag, sizeof tag, "[%d]", chunk);
	const char *p = strstr(out, tag);
	return p ? strtod(p + strlen(tag), NULL) : NAN;
}

static void final_estimate(const char *out, double *ppl, double *err)
{
	const char *p = strstr(out, "Final estimate: PPL = ");
	ck_assert_msg(p, "no final estimate in: %s", out);
	ck_assert_msg(sscanf(p, "Final estimate: PPL = %lf +/- %lf", ppl, err) == 2,
		      "unreadable final estimate: %s", p);
}

static double rel(double got, double want)
{
	return (got - want) / want;
}

START_TEST(test_llamacpp_figures)
{
	const char *file = refs[_i].file;
	static struct result r;
	double t0 = now();
	run(&r, "perplexity -m '%s' -f '%s' --backend cpu -t 2", model(file),
	    shared_path("ppl/stdlib-sample.py"));
	double dt = now() - t0;
	ck_assert_msg(r.status == 0, "%s: exit %d: %s", file, r.status, r.err);
	double ppl, err;
	final_estimate(r.out, &ppl, &err);
	printf("perplexity %s %.4f (llama.cpp %.4f, %.2f%%), +/- %.5f (llama.cpp %.5f), %.1f s\n",
	       file, ppl, refs[_i].ppl, 100 * rel(ppl, refs[_i].ppl), err, refs[_i].err, dt);
	fflush(stdout);
	ck_assert_msg(fabs(rel(ppl, refs[_i].ppl)) <= TOLERANCE, "%s: PPL %.4f, llama.cpp %.4f",
		      file, ppl, refs[_i].ppl);
	ck_assert_msg(fabs(rel(err, refs[_i].err)) <= TOLERANCE, "%s: +/- %.5f, llama.cpp %.5f",
		      file, err, refs[_i].err);
	ck_assert_msg(!isnan(running(r.out, 34)) && isnan(running(r.out, 35)),
		      "%s: expected 34 chunks: %s", file, r.out);
	if (strstr(file, ".f16."))
		for (int k = 0; k < 3; k++) {
			double v = running(r.out, k + 1);
			ck_assert_msg(fabs(rel(v, f16_running[k])) <= TOLERANCE,
				      "%s: after chunk %d %.4f, llama.cpp %.4f", file, k + 1, v,
				      f16_running[k]);
		}
}
END_TEST

/* Exit status code and a one-line stderr that starts "belt" and holds want. */
static void expect_error(const struct result *r, int code, const char *want)
{
	ck_assert_msg(r->status == code, "exit %d, expected %d; stderr: %s", r->status, code, r->err);
	const char *nl = strchr(r->err, '\n');
	ck_assert_msg(nl && nl[1] == 0, "expected exactly one line, got: %s", r->err);
	ck_assert_msg(!strncmp(r->err, "belt", 4), "message lacks the belt prefix: %s", r->err);
	ck_assert_msg(strstr(r->err, want), "expected '%s' in: %s", want, r->err);
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert(f && fwrite(text, 1, len, f) == len);
	fclose(f);
}

START_TEST(test_errors)
{
	static struct result r;
	const char *m = model("pycoder29M.q8_0.gguf");
	run(&r, "perplexity -m '%s'", m);
	expect_error(&r, 2, "-f");
	run(&r, "perplexity -m '%s' -f '%s'", m, tmp("missing.txt"));
	expect_error(&r, 1, tmp("missing.txt"));
	write_text(tmp("empty.txt"), "", 0);
	run(&r, "perplexity -m '%s' -f '%s'", m, tmp("empty.txt"));
	expect_error(&r, 1, tmp("empty.txt"));
	static const char text[] = "def f(x):\n    return x + 1\n";
	write_text(tmp("short.py"), text, sizeof text - 1);
	run(&r, "perplexity -m '%s' -f '%s' -t 2", m, tmp("short.py"));
	expect_error(&r, 1, tmp("short.py"));
	ck_assert_msg(strstr(r.err, "512"), "the message should name the chunk size: %s", r.err);
	run(&r, "perplexity -m '%s' -f '%s' -c 2", m, tmp("short.py"));
	expect_error(&r, 2, "-c");
}
END_TEST

/* Bad -b / -ub values: exit 2, naming the flag, on every command. */
START_TEST(test_batch_flags)
{
	static const char *cmds[] = {"run -p hi", "bench", "perplexity -f /dev/null"};
	static const struct {
		const char *args, *flag;
	} bad[] = {
		{"-b 0", "-b"}, {"-b -4", "-b"}, {"-b x", "-b"}, {"--batch-size 1.5", "-b"},
		{"-ub 0", "-ub"}, {"-ub abc", "-ub"}, {"--ubatch-size -1", "-ub"},
		{"--ubatch-size=", "-ub"}, {"-ub", "-ub"}, {"-u 8", "-ub"},
	};
	static struct result r;
	const char *m = model("pycoder29M.q8_0.gguf");
	for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++)
		for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
			run(&r, "%s -m '%s' %s", cmds[c], m, bad[i].args);
			ck_assert_msg(r.status == 2, "belt %s %s: exit %d: %s", cmds[c], bad[i].args,
				      r.status, r.err);
			ck_assert_msg(strstr(r.err, bad[i].flag), "belt %s %s: '%s' not named in: %s",
				      cmds[c], bad[i].args, bad[i].flag, r.err);
		}
}
END_TEST

/* -b / -ub reach the session: token by token and odd micro-batches give
 * what the default batching gives. */
START_TEST(test_batch_sizes_agree)
{
	/* six chunks of 128 tokens from the start of the sample */
	static char text[3000];
	FILE *f = fopen(shared_path("ppl/stdlib-sample.py"), "rb");
	ck_assert(f && fread(text, 1, sizeof text, f) == sizeof text);
	fclose(f);
	write_text(tmp("head.py"), text, sizeof text);
	static const char *variants[] = {"-ub 1", "-ub 40 -b 100", "--ubatch-size=512 --batch-size=16"};
	static struct result r;
	const char *m = model("pycoder29M.f16.gguf");
	double want[6];
	run(&r, "perplexity -m '%s' -f '%s' -c 128 -t 2", m, tmp("head.py"));
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	for (int k = 0; k < 6; k++)
		ck_assert_msg(!isnan(want[k] = running(r.out, k + 1)), "no chunk %d in %s", k + 1, r.out);
	for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
		run(&r, "perplexity -m '%s' -f '%s' -c 128 -t 2 %s", m, tmp("head.py"), variants[i]);
		ck_assert_msg(r.status == 0, "%s: exit %d: %s", variants[i], r.status, r.err);
		for (int k = 0; k < 6; k++) {
			double v = running(r.out, k + 1);
			ck_assert_msg(fabs(rel(v, want[k])) <= 1e-3, "%s: after chunk %d %.4f, default batching %.4f",
				      variants[i], k + 1, v, want[k]);
		}
	}
	static struct result a, b;
	run(&a, "run -m '%s' -p 'def fibonacci(n):' -n 24 -t 2 --ids", m);
	run(&b, "run -m '%s' -p 'def fibonacci(n):' -n 24 -t 2 --ids -b 3 -ub 2", m);
	ck_assert_msg(a.status == 0 && b.status == 0, "run: %s %s", a.err, b.err);
	ck_assert_str_eq(a.out, b.out);
}
END_TEST

START_TEST(test_bench_depth)
{
	static struct result r;
	const char *m = model("pycoder29M.q8_0.gguf");
	run(&r, "bench -m '%s' -t 2 -r 1 -p 32 -n 8 -d 64", m);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, " pp32 @ d64 |"), "no pp32 @ d64 row in:\n%s", r.out);
	ck_assert_msg(strstr(r.out, " tg8 @ d64 |"), "no tg8 @ d64 row in:\n%s", r.out);
	/* past the training context (512) too: the session grows to fit */
	run(&r, "bench -m '%s' -t 2 -r 1 -p 16 -n 4 -d 600", m);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "pp16 @ d600") && strstr(r.out, "tg4 @ d600"),
		      "no depth in:\n%s", r.out);
	/* without -d the table is as before */
	run(&r, "bench -m '%s' -t 2 -r 1 -p 16 -n 4", m);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "|    pp16 |") && strstr(r.out, "|     tg4 |") && !strstr(r.out, "@"),
		      "unexpected table:\n%s", r.out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perplexity");
	TCase *tc = tcase_create("llama.cpp");
	tcase_set_timeout(tc, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_llamacpp_figures, 0, (int)(sizeof refs / sizeof *refs));
	suite_add_tcase(s, tc);
	tc = tcase_create("flags");
	tcase_set_timeout(tc, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_batch_flags);
	tcase_add_test(tc, test_batch_sizes_agree);
	tcase_add_test(tc, test_bench_depth);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
