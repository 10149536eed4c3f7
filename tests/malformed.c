/* Malformed inputs through the real `belt` binary: each must give one
 * specific line on stderr and a non-zero exit, never a crash. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "belt/error.h"
#include "ref.h"
#include "synth/synth.h"

static char dir[256];

static const char *tmp(const char *name)
{
	static char buf[32][512];
	static int n;
	char *out = buf[n++ & 31];
	snprintf(out, sizeof buf[0], "%s/%s", dir, name);
	return out;
}

/* Run a shell command line; return its exit status and its stderr. */
static int run(char *stderr_text, size_t cap, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	char full[4800], errfile[300];
	snprintf(errfile, sizeof errfile, "%s/stderr", dir);
	snprintf(full, sizeof full, "%s >/dev/null 2>%s", cmd, errfile);
	int st = system(full);
	FILE *f = fopen(errfile, "rb");
	size_t n = f ? fread(stderr_text, 1, cap - 1, f) : 0;
	stderr_text[n] = 0;
	if (f)
		fclose(f);
	ck_assert_msg(WIFEXITED(st), "'%s' died: status %d", cmd, st);
	return WEXITSTATUS(st);
}

/* Expect exit status `code`, one stderr line starting "belt" that contains want. */
static void expect_error(int code, const char *want, const char *fmt, ...)
{
	char cmd[4096], text[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = run(text, sizeof text, "%s", cmd);
	ck_assert_msg(st == code, "'%s': exit %d, expected %d; stderr: %s", cmd, st, code, text);
	char *nl = strchr(text, '\n');
	ck_assert_msg(nl && nl[1] == 0, "'%s': expected exactly one line, got: %s", cmd, text);
	ck_assert_msg(!strncmp(text, "belt", 4), "'%s': message lacks the belt prefix: %s", cmd, text);
	ck_assert_msg(strstr(text, want), "'%s': expected '%s' in: %s", cmd, want, text);
}

static const char *belt_bin(void)
{
	const char *b = getenv("BELT_BIN");
	return b ? b : "./belt";
}

static void run_model_error(const char *file, const char *want)
{
	expect_error(1, want, "%s run -m '%s' -p hi -n 2", belt_bin(), file);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/belt-malformed-XXXXXX");
	ck_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A tiny GGUF assembled byte by byte, independent of the writer. */
struct bytes {
	unsigned char b[4096];
	size_t n;
};

static void put(struct bytes *x, const void *p, size_t n)
{
	memcpy(x->b + x->n, p, n);
	x->n += n;
}
static void u32(struct bytes *x, uint32_t v) { put(x, &v, 4); }
static void u64(struct bytes *x, uint64_t v) { put(x, &v, 8); }
static void str(struct bytes *x, const char *s)
{
	u64(x, strlen(s));
	put(x, s, strlen(s));
}

static const char *write_bytes(const char *name, const struct bytes *x)
{
	const char *path = tmp(name);
	FILE *f = fopen(path, "wb");
	ck_assert(f && fwrite(x->b, 1, x->n, f) == x->n);
	fclose(f);
	return path;
}

enum fault { OK, MAGIC, VERSION, KV_COUNT, TENSOR_COUNT, STR_LEN, VALUE_TYPE, TENSOR_TYPE,
	     DIMS, N_DIMS, OFFSET_END, MISALIGNED, DUPLICATE };

/* header + one string kv + two 1-D F32 tensors of 8 elements, with a fault */
static const char *crafted(enum fault f)
{
	struct bytes x = {.n = 0};
	put(&x, f == MAGIC ? "GGUX" : "GGUF", 4);
	u32(&x, f == VERSION ? 9 : 3);
	u64(&x, f == TENSOR_COUNT ? (1ull << 60) : 2);
	u64(&x, f == KV_COUNT ? (1ull << 59) : 1);
	if (f == STR_LEN)
		u64(&x, 1ull << 62);
	else
		str(&x, "general.architecture");
	u32(&x, f == VALUE_TYPE ? 99 : 8);
	str(&x, "llama");
	for (int t = 0; t < 2; t++) {
		str(&x, t == 1 && f == DUPLICATE ? "a.weight" : t ? "b.weight" : "a.weight");
		u32(&x, f == N_DIMS ? 9 : f == DIMS ? 2 : 1);
		if (f == DIMS) {
			u64(&x, 1ull << 40);
			u64(&x, 1ull << 40);
		} else
			u64(&x, 8);
		u32(&x, t == 1 && f == TENSOR_TYPE ? 77 : 0);
		u64(&x, t == 0 ? 0 : f == OFFSET_END ? 4096 : f == MISALIGNED ? 35 : 32);
	}
	while (x.n % 32)
		x.b[x.n++] = 0;
	memset(x.b + x.n, 0, 64);
	x.n += 64;
	char name[32];
	snprintf(name, sizeof name, "crafted%d.gguf", f);
	return write_bytes(name, &x);
}

/* -m naming a FIFO: refused at once, not waiting for a writer. timeout(1)
 * turns the old hang into a failure (exit 124) instead of a stuck suite;
 * the refusal takes milliseconds, the limit is a minute. */
START_TEST(fifo_model)
{
	char fifo[512];
	snprintf(fifo, sizeof fifo, "%s/model.fifo", dir);
	ck_assert(mkfifo(fifo, 0600) == 0);
	expect_error(1, "not a regular file", "timeout 60 %s run -m '%s' -p hi", belt_bin(), fifo);
	expect_error(1, "not a regular file", "timeout 60 %s info -m '%s'", belt_bin(), fifo);
	unlink(fifo);
}
END_TEST

START_TEST(gguf_faults)
{
	static const struct { enum fault f; const char *want; } cases[] = {
		{MAGIC, "magic"}, {VERSION, "version 9"}, {KV_COUNT, "count"},
		{TENSOR_COUNT, "count"}, {STR_LEN, "length"}, {VALUE_TYPE, "type 99"},
		{TENSOR_TYPE, "type 77"}, {DIMS, "overflow"}, {N_DIMS, "n_dims 9"},
		{OFFSET_END, "past end"}, {MISALIGNED, "aligned"}, {DUPLICATE, "duplicate"}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *path = crafted(cases[i].f);
		run_model_error(path, cases[i].want);
		run_model_error(path, path);
	}
	/* the well-formed variant parses, and fails only for want of tensors */
	run_model_error(crafted(OK), "missing");
}
END_TEST

START_TEST(truncated_files)
{
	const char *src = shared_path("models/stories260K.f32.gguf");
	FILE *f = fopen(src, "rb");
	ck_assert_msg(f, "%s missing", src);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	char *data = malloc((size_t)size);
	rewind(f);
	ck_assert(fread(data, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	for (int k = 0; k < 16; k++) {
		long n = size * k / 16;
		const char *path = tmp("truncated.gguf");
		FILE *o = fopen(path, "wb");
		ck_assert(o && fwrite(data, 1, (size_t)n, o) == (size_t)n);
		fclose(o);
		char text[8192];
		int st = run(text, sizeof text, "%s run -m '%s' -p hi -n 2", belt_bin(), path);
		ck_assert_msg(st == 1, "truncated at %ld/%ld: exit %d: %s", n, size, st, text);
		ck_assert_msg(strstr(text, path) && strchr(text, '\n') == text + strlen(text) - 1,
			      "truncated at %ld: %s", n, text);
	}
	free(data);
}
END_TEST

static const char *synth(const char *name, void (*edit)(struct synth_shape *))
{
	struct synth_shape s;
	synth_default(&s);
	edit(&s);
	char err[BELT_ERR_SIZE];
	const char *path = tmp(name);
	ck_assert_msg(synth_write(&s, path, err, sizeof err) == 0, "%s", err);
	return path;
}

static void no_edit(struct synth_shape *s) { (void)s; }

/* --kernel naming an op that does not exist (a typo) is an error naming
 * it, not a run with the default kernel. */
/* A context far beyond memory: refused before anything is allocated, with
 * the parts named (a zero-fill of 137 GB otherwise). */
START_TEST(context_too_big)
{
	char model[1024];
	snprintf(model, sizeof model, "%s", shared_path("models/pycoder29M.q4_0.gguf"));
	expect_error(1, "KV cache", "timeout 60 %s run -m '%s' -p hi -n 2 -c 16777216", belt_bin(),
		     model);
	expect_error(1, "available", "timeout 60 %s run -m '%s' -p hi -n 2 -c 16777216", belt_bin(),
		     model);
}
END_TEST

START_TEST(kernel_typo)
{
	const char *model = synth("ok.gguf", no_edit);
	expect_error(1, "unknown op 'attn'", "%s run -m '%s' -p hi -n 2 --kernel attn=split_kv",
		     belt_bin(), model);
}
END_TEST
static void omit(struct synth_shape *s) { s->omit_tensor = "blk.1.ffn_up.weight"; }
static void bad_shape(struct synth_shape *s) { s->bad_shape_tensor = "blk.0.attn_k.weight"; }
static void gpt9(struct synth_shape *s) { s->arch = "gpt9"; }
static void broken(struct synth_shape *s) { s->arch = "broken"; }
static void yarn(struct synth_shape *s) { s->rope_scaling = "yarn", s->rope_factor = 4; }

START_TEST(model_faults)
{
	char text[8192];
	ck_assert_int_eq(run(text, sizeof text, "%s run -m '%s' -p hi -n 4", belt_bin(),
			     synth("ok.gguf", no_edit)), 0);
	run_model_error(synth("omit.gguf", omit), "missing tensor 'blk.1.ffn_up.weight'");
	run_model_error(synth("shape.gguf", bad_shape), "tensor 'blk.0.attn_k.weight' has shape [96");
	run_model_error(synth("gpt9.gguf", gpt9), "unknown architecture 'gpt9'");
	/* an unsupported architecture names the key and what is supported */
	run_model_error(synth("gpt9.gguf", gpt9),
			"key 'general.architecture': unknown architecture 'gpt9' (supported: gemma2, "
			"gemma3, llama, phi3, qwen2, qwen3, qwen3moe; no gpt9.yaml in");
	/* a rope scaling belt does not do is refused, not ignored */
	run_model_error(synth("yarn.gguf", yarn),
			"key 'llama.rope.scaling.type' is 'yarn': this build's llama architecture takes 'none', 'linear'");
	run_model_error(tmp("does-not-exist.gguf"), "No such file");
}
END_TEST

/* Write llama.yaml with `from` replaced by `to` into a fresh arch dir. */
static const char *yaml_variant(const char *sub, const char *from, const char *to)
{
	char src[1024];
	snprintf(src, sizeof src, "%s/llama.yaml", getenv("BELT_ARCH_PATH"));
	FILE *f = fopen(src, "rb");
	ck_assert_msg(f, "%s", src);
	static char text[65536];
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = 0;
	fclose(f);
	char *at = strstr(text, from);
	ck_assert_msg(at, "'%s' not in %s", from, src);
	const char *d = tmp(sub);
	mkdir(d, 0755);
	char out[600];
	snprintf(out, sizeof out, "%s/llama.yaml", d);
	FILE *o = fopen(out, "wb");
	fprintf(o, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	fclose(o);
	return d;
}

START_TEST(yaml_faults)
{
	const char *model = synth("ok.gguf", no_edit);
	static const struct { const char *from, *to, *want; } cases[] = {
		{"  x: n_embd\n", "  x: [n_embd\n", "YAML syntax error"},
		{"op: silu_mul", "op: frobnicate", "unknown op 'frobnicate'"},
		{"bind: [hb, hb2, hb]", "bind: [hb, nowhere, hb]", "unknown binding 'nowhere'"},
		{"params: {n: n_ff}", "params: {n: n_ff * bogus}", "unknown name 'bogus'"},
		{"patch: position", "patch: sideways", "unknown patch 'sideways'"},
		{"if: \"!rope_freqs.weight\"", "if: \"!rope_freqz.weight\"",
		 "if: 'rope_freqz.weight' is not a tensor the architecture declares"},
		{"optional: true", "optional: maybe", "optional: expected true or false"},
		{"\"blk.{l}.ffn_down.weight\", hb", "\"blk.{l}.ffn_down.weight[1, n_embd]\", hb",
		 "rows 1..64 outside the tensor's 64"},
		{"\"blk.{l}.ffn_down.weight\", hb", "\"blk.{l}.ffn_down.weight[0 n_embd]\", hb",
		 "expected 'blk.0.ffn_down.weight[start, count]'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char sub[16];
		snprintf(sub, sizeof sub, "arch%zu", i);
		const char *d = yaml_variant(sub, cases[i].from, cases[i].to);
		expect_error(1, cases[i].want, "BELT_ARCH_PATH='%s' %s run -m '%s' -p hi -n 2", d,
			     belt_bin(), model);
		expect_error(1, "llama.yaml:", "BELT_ARCH_PATH='%s' %s run -m '%s' -p hi -n 2", d,
			     belt_bin(), model);
	}
}
END_TEST

START_TEST(plugin_faults)
{
	const char *model = synth("ok.gguf", no_edit);
	const char *plugins = getenv("BELT_TEST_PLUGINS");
	ck_assert(plugins);
	expect_error(1, "BELT_PLUGIN_PATH is set but empty",
		     "BELT_PLUGIN_PATH= %s run -m '%s' -p hi", belt_bin(), model);
	expect_error(1, "plugin 'backend-nosuch' not found",
		     "%s run -m '%s' -p hi --backend nosuch", belt_bin(), model);
	expect_error(1, "plugin ABI 999; this belt supports 1..1",
		     "BELT_PLUGIN_PATH='%s' %s run -m '%s' -p hi --backend badabi", plugins,
		     belt_bin(), model);
	expect_error(1, "no symbol 'belt_plugin_entry'",
		     "BELT_PLUGIN_PATH='%s' %s run -m '%s' -p hi --backend nosym", plugins,
		     belt_bin(), model);
	/* an architecture plugin's description: its errors name the plugin's
	 * file and the line */
	expect_error(1, "arch-broken/broken.yaml:3:44: hparam 'n_embd': unknown field 'bogus'",
		     "BELT_PLUGIN_PATH='%s:%s' %s run -m '%s' -p hi", getenv("BELT_PLUGIN_PATH"),
		     plugins, belt_bin(), synth("broken.gguf", broken));
	/* a YAML file on the arch path comes before the plugin's own */
	char gemma2[1024];
	snprintf(gemma2, sizeof gemma2, "%s/models/arch/gemma2.gguf", getenv("BELT_SHARED_DIR"));
	FILE *f = fopen(tmp("gemma2.yaml"), "wb");
	ck_assert(f);
	fputs("arch: gemma2\nhparams:\n  n_embd: {bogus: 1}\n", f);
	fclose(f);
	char want[600];
	snprintf(want, sizeof want, "%s:3:", tmp("gemma2.yaml"));
	expect_error(1, want, "BELT_ARCH_PATH='%s' %s run -m '%s' -p hi", dir, belt_bin(), gemma2);
}
END_TEST

START_TEST(config_faults)
{
	const char *model = synth("ok.gguf", no_edit);
	expect_error(1, "no kernel for op 'attention' (variant 'nosuch'",
		     "%s run -m '%s' -p hi --kernel attention=nosuch", belt_bin(), model);
	expect_error(1, "kernel choice 'attention': expected op=variant",
		     "%s run -m '%s' -p hi --kernel attention", belt_bin(), model);
	const char *d = tmp("conf");
	mkdir(d, 0755);
	char path[600];
	snprintf(path, sizeof path, "%s/belt.yaml", d);
	FILE *f = fopen(path, "wb");
	fputs("kernels:\n  attention: [x\n", f);
	fclose(f);
	expect_error(1, "belt.yaml:3:1: YAML syntax error", "BELT_CONF_PATH='%s' %s run -m '%s' -p hi",
		     d, belt_bin(), model);
	f = fopen(path, "wb");
	fputs("kernels:\n  attention: nosuch\n", f);
	fclose(f);
	expect_error(1, "variant 'nosuch'", "BELT_CONF_PATH='%s' %s run -m '%s' -p hi", d,
		     belt_bin(), model);
	/* the run's choice wins over the configuration's */
	char text[8192];
	ck_assert_int_eq(run(text, sizeof text, "BELT_CONF_PATH='%s' %s run -m '%s' -p hi -n 2 --kernel attention=default",
			     d, belt_bin(), model), 0);
}
END_TEST

START_TEST(usage_faults)
{
	expect_error(2, "unknown option '--frobnicate'", "%s run --frobnicate", belt_bin());
	expect_error(2, "-m MODEL is required", "%s run -p hi", belt_bin());
	expect_error(2, "-n: expected an integer", "%s run -m x -n lots", belt_bin());
	expect_error(2, "needs a value", "%s tokenize -m", belt_bin());
	expect_error(2, "unknown option", "%s info --bogus", belt_bin());
	expect_error(2, "--tensors needs -m MODEL", "%s info --tensors", belt_bin());
	/* a device the backend lacks: the flag, the value and the count */
	expect_error(2, "--device 5: the cpu backend has 1 device, index 0", "%s run -m x --device 5",
		     belt_bin());
	expect_error(2, "--device 1: the cpu backend has 1 device", "%s bench -m x --device 1", belt_bin());
	expect_error(2, "--device: expected an integer", "%s run -m x --device -2", belt_bin());
	char text[8192];
	/* without a model, info lists every backend's devices */
	ck_assert_int_eq(run(text, sizeof text, "%s info", belt_bin()), 0);
	ck_assert_int_eq(run(text, sizeof text,
			     "%s info --backend cpu | grep -q '^    0: .*cores, ISA path .*(default)$'",
			     belt_bin()), 0);
	ck_assert_int_eq(run(text, sizeof text, "%s run --help", belt_bin()), 0);
	ck_assert_int_eq(run(text, sizeof text, "%s 2>&1 | grep -q usage", belt_bin()), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("malformed");
	TCase *tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, gguf_faults);
	tcase_add_test(tc, fifo_model);
	tcase_add_test(tc, kernel_typo);
	tcase_add_test(tc, context_too_big);
	tcase_add_test(tc, truncated_files);
	tcase_add_test(tc, model_faults);
	tcase_add_test(tc, yaml_faults);
	tcase_add_test(tc, plugin_faults);
	tcase_add_test(tc, config_faults);
	tcase_add_test(tc, usage_faults);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
