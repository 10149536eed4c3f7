/* The real `belt` binary under misuse (issue 13): output that cannot be
 * written, signals, a full context, odd flag values, corrupt keys. Each
 * test fails on the behaviour before the fix. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "belt/backend.h"
#include "belt/belt.h"
#include "belt/sampler.h"
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

static const char *belt_bin(void)
{
	const char *b = getenv("BELT_BIN");
	return b ? b : "./belt";
}

static const char *stories(void)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s", shared_path("models/stories260K.f32.gguf"));
	return path;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/belt-misuse-XXXXXX");
	ck_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

struct result {
	int status;
	char out[1 << 17], err[16384];
};

/* Run a shell command line (in braces, so its own redirections win) with
 * stdout and stderr captured. */
static void sh(struct result *r, const char *fmt, ...)
{
	char cmd[8192], full[9000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	snprintf(full, sizeof full, "{ %s ; } >'%s' 2>'%s'", cmd, tmp("out"), tmp("err"));
	int st = system(full);
	ck_assert_msg(WIFEXITED(st), "'%s' died: status %d", cmd, st);
	r->status = WEXITSTATUS(st);
	slurp_buf(tmp("out"), r->out, sizeof r->out);
	slurp_buf(tmp("err"), r->err, sizeof r->err);
}

/* Exit status code and one stderr line, starting "belt", containing want. */
static void expect_error(const struct result *r, int code, const char *want)
{
	ck_assert_msg(r->status == code, "exit %d, expected %d; stderr: %s", r->status, code, r->err);
	char *nl = strchr(r->err, '\n');
	ck_assert_msg(nl && nl[1] == 0, "expected exactly one line, got: %s", r->err);
	ck_assert_msg(!strncmp(r->err, "belt", 4), "message lacks the belt prefix: %s", r->err);
	ck_assert_msg(strstr(r->err, want), "expected '%s' in: %s", want, r->err);
}

/* N of "after N tokens" in text; -1 if absent. */
static long tokens_after(const char *text)
{
	const char *at = strstr(text, "after ");
	return at ? strtol(at + 6, NULL, 10) : -1;
}

/* Start belt with argv (argv[0] is replaced by $BELT_BIN), stdout on
 * out_fd and stderr into err_path; SIGPIPE ignored if asked. */
static pid_t spawn(const char **argv, int out_fd, const char *err_path, bool ignore_pipe)
{
	argv[0] = belt_bin();
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		signal(SIGPIPE, ignore_pipe ? SIG_IGN : SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (e < 0 || dup2(out_fd, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "belt died: status %d (signal %d)", st,
		      WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

/* 1. A write error stops generation with one line naming it, exit 1. */
START_TEST(output_to_full_device)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 64 >/dev/full", belt_bin(), stories());
	expect_error(&r, 1, "No space left on device");
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 64 --ids >/dev/full", belt_bin(), stories());
	expect_error(&r, 1, "No space left on device");
	/* under one chunk of tokens: the final flush finds it */
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 3 >/dev/full", belt_bin(), stories());
	expect_error(&r, 1, "No space left on device");
	/* the other commands check their output too */
	sh(&r, "%s --version >/dev/full", belt_bin());
	expect_error(&r, 1, "No space left on device");
	sh(&r, "%s info -m '%s' >/dev/full", belt_bin(), stories());
	expect_error(&r, 1, "No space left on device");
}
END_TEST

/* With SIGPIPE ignored, a pipe whose reader is gone stops generation at
 * the first flush (each --chunk tokens): nothing depends on timing. */
START_TEST(output_to_closed_pipe)
{
	int fd[2];
	ck_assert(pipe(fd) == 0);
	close(fd[0]);
	const char *argv[] = {NULL, "run", "-m", stories(), "-p", "Once upon a time", "--ignore-eos",
			      "-n", "3000", "-c", "4096", "-t", "1", NULL};
	pid_t pid = spawn(argv, fd[1], tmp("err"), true);
	close(fd[1]);
	int st = wait_exit(pid);
	static char err[16384];
	slurp_buf(tmp("err"), err, sizeof err);
	ck_assert_msg(st == 1, "exit %d: %s", st, err);
	ck_assert_msg(strstr(err, "belt run: cannot write the output: Broken pipe"), "%s", err);
	long n = tokens_after(strstr(err, "Broken pipe"));
	ck_assert_msg(n > 0 && n <= 32, "stopped after %ld tokens, expected one chunk (16): %s", n, err);
}
END_TEST

/* The reader takes 10 bytes and leaves, as `| head -c 10` does. */
START_TEST(output_reader_leaves)
{
	int fd[2];
	/* close-on-exec: belt must not hold the read end itself */
	ck_assert(pipe2(fd, O_CLOEXEC) == 0);
	const char *argv[] = {NULL, "run", "-m", stories(), "-p", "Once upon a time", "--ignore-eos",
			      "-n", "3000", "-c", "4096", "-t", "1", NULL};
	pid_t pid = spawn(argv, fd[1], tmp("err"), true);
	close(fd[1]);
	char buf[10];
	size_t got = 0;
	while (got < sizeof buf) {
		ssize_t k = read(fd[0], buf + got, sizeof buf - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd[0]);
	int st = wait_exit(pid);
	static char err[16384];
	slurp_buf(tmp("err"), err, sizeof err);
	ck_assert_msg(got == sizeof buf, "read %zu bytes; stderr: %s", got, err);
	ck_assert_msg(st == 1, "exit %d: %s", st, err);
	ck_assert_msg(strstr(err, "Broken pipe"), "%s", err);
	long n = tokens_after(strstr(err, "Broken pipe"));
	ck_assert_msg(n > 0 && n < 3000, "stopped after %ld tokens: %s", n, err);
}
END_TEST

/* 5. The largest seed is a seed like any other: the same text twice, and
 * no random seed announced. */
START_TEST(seed_max)
{
	static struct result a, b;
	const char *cmd = "%s run -m '%s' -p 'Once upon a time' -n 48 --ignore-eos --temp 1.5 --seed 18446744073709551615";
	sh(&a, cmd, belt_bin(), stories());
	sh(&b, cmd, belt_bin(), stories());
	ck_assert_msg(a.status == 0 && b.status == 0, "%s %s", a.err, b.err);
	ck_assert_msg(!strstr(a.err, "belt: seed") && !strstr(b.err, "belt: seed"),
		      "a given seed was replaced: %s", a.err);
	ck_assert_str_eq(a.out, b.out);
	/* and it is used: another seed gives other text */
	sh(&b, "%s run -m '%s' -p 'Once upon a time' -n 48 --ignore-eos --temp 1.5 --seed 18446744073709551614",
	   belt_bin(), stories());
	ck_assert_msg(b.status == 0 && strcmp(a.out, b.out), "seeds ..15 and ..14 agree: %s", a.out);
	sh(&b, "%s run -m x --seed 18446744073709551616", belt_bin());
	expect_error(&b, 2, "--seed");
}
END_TEST

/* 6. An unknown --backend is an error on stderr, exit 1, nothing on stdout. */
START_TEST(info_bad_backend)
{
	static struct result r;
	sh(&r, "%s info --backend nope", belt_bin());
	expect_error(&r, 1, "plugin 'backend-nope' not found");
	ck_assert_msg(strstr(r.err, "--backend nope"), "%s", r.err);
	ck_assert_msg(r.out[0] == 0, "stdout: %s", r.out);
	sh(&r, "%s info -m '%s' --backend nope", belt_bin(), stories());
	expect_error(&r, 1, "backend-nope");
	sh(&r, "%s info --backend cpu", belt_bin());
	ck_assert_msg(r.status == 0 && strstr(r.out, "cpu: 1 device"), "%d %s %s", r.status, r.out, r.err);
}
END_TEST

/* 7. A full context is said, with the count and -c; exit 0. */
START_TEST(context_full)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 1000 --ignore-eos -c 64", belt_bin(), stories());
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	const char *line = strstr(r.err, "belt run: context full after ");
	ck_assert_msg(line, "no word of the full context: %s", r.err);
	long n = tokens_after(line);
	ck_assert_msg(n == decoded(r.err) && n > 50 && n < 64, "%s", r.err);
	ck_assert_msg(strstr(line, "(-c 64)\n"), "%s", r.err);
	/* the model's own context when -c is not given */
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n -1 --ignore-eos --ids", belt_bin(), stories());
	ck_assert_msg(r.status == 0 && strstr(r.err, "(-c 512)"), "%s", r.err);
	/* a run that stops at -n says nothing of the kind */
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 8 --ignore-eos -c 64", belt_bin(), stories());
	ck_assert_msg(r.status == 0 && !strstr(r.err, "context full"), "%s", r.err);
}
END_TEST

/* The library's stop reasons. */
static bool stop_after(void *ud, int32_t id, const char *text, size_t len)
{
	(void)id, (void)text, (void)len;
	return --*(int *)ud > 0;
}

START_TEST(stop_reasons)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = stories();
	mp.n_threads = 1;
	struct belt_model *m;
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 32;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_NONE);
	const int32_t prompt[] = {1, 403, 407};
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.stop_at_eog = false;
	gp.n_predict = 5;
	ck_assert(belt_generate(s, prompt, 3, &gp, NULL, NULL, err, sizeof err) == 0);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_N_PREDICT);
	gp.n_predict = 0;
	ck_assert(belt_generate(s, prompt, 3, &gp, NULL, NULL, err, sizeof err) == 0);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_CONTEXT_FULL);
	ck_assert_uint_eq(belt_session_stats(s)->n_generated, 32 - 3 + 1);
	int left = 7;
	ck_assert(belt_generate(s, prompt, 3, &gp, stop_after, &left, err, sizeof err) == 0);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_CALLBACK);
	ck_assert_uint_eq(belt_session_stats(s)->n_generated, 7);
	/* sampled on the host or in a chain, the same reasons */
	struct belt_sampling samp;
	belt_sampling_default(&samp);
	samp.seed = 3;
	gp.sampling = &samp;
	ck_assert(belt_generate(s, prompt, 3, &gp, NULL, NULL, err, sizeof err) == 0);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_CONTEXT_FULL);
	gp.sampling = NULL;
	const int32_t too_long[40] = {1};
	ck_assert(belt_generate(s, too_long, 40, &gp, NULL, NULL, err, sizeof err) == -1);
	ck_assert_int_eq(belt_session_stats(s)->stop, BELT_STOP_ERROR);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* 8. SIGINT / SIGTERM: the text so far is written, the stats printed, exit
 * 128 + signal; the text is what a run of that many tokens writes. */
static void interrupt(int sig)
{
	const char *out = tmp("sig.out"), *err = tmp("sig.err");
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert(fd >= 0);
	/* long enough (minutes of decode) that it cannot end by itself first */
	const char *argv[] = {NULL, "run", "-m", stories(), "-p", "Once upon a time", "--ignore-eos",
			      "-n", "100000", "-c", "8192", "-t", "1", NULL};
	pid_t pid = spawn(argv, fd, err, false);
	close(fd);
	struct stat st = {0};
	for (int i = 0; i < 6000 && (stat(out, &st) || st.st_size == 0); i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		int status;
		ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "belt ended before the signal");
	}
	ck_assert_msg(st.st_size > 0, "no output within 60 s");
	ck_assert(kill(pid, sig) == 0);
	int code = wait_exit(pid);
	static char text[1 << 20], e[16384];
	slurp_buf(err, e, sizeof e);
	slurp_buf(out, text, sizeof text);
	ck_assert_msg(code == 128 + sig, "exit %d after signal %d: %s", code, sig, e);
	long n = decoded(e);
	ck_assert_msg(n > 0, "no stats line: %s", e);
	ck_assert_msg(strstr(e, sig == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM"), "%s", e);
	ck_assert_msg(tokens_after(strstr(e, "stopped by")) == n, "%s", e);
	size_t len = strlen(text);
	ck_assert_msg(len > 0 && text[len - 1] == '\n', "output not ended cleanly: %s", text);
	/* the same run cut at n tokens by -n writes the same bytes */
	static struct result r;
	sh(&r, "%s run -m '%s' -p 'Once upon a time' --ignore-eos -n %ld -c 8192 -t 1", belt_bin(),
	   stories(), n);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(text, r.out);
}

START_TEST(sigint) { interrupt(SIGINT); }
END_TEST
START_TEST(sigterm) { interrupt(SIGTERM); }
END_TEST

/* Copy src to dst with the UINT32 or INT32 value of key set to v. */
static const char *patched(const char *src, const char *dst, const char *key, uint32_t v)
{
	FILE *f = fopen(src, "rb");
	ck_assert_msg(f, "%s", src);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	rewind(f);
	unsigned char *data = malloc((size_t)size);
	ck_assert(fread(data, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	size_t k = strlen(key);
	long at = -1;
	for (long i = 8; i + (long)k + 8 <= size && at < 0; i++) {
		uint64_t len;
		memcpy(&len, data + i - 8, 8);
		if (len == k && !memcmp(data + i, key, k))
			at = i + (long)k;
	}
	ck_assert_msg(at > 0, "no key %s in %s", key, src);
	uint32_t type;
	memcpy(&type, data + at, 4);
	ck_assert_msg(type == 4 || type == 5, "%s has type %u", key, type);
	memcpy(data + at + 4, &v, 4);
	const char *path = tmp(dst);
	f = fopen(path, "wb");
	ck_assert(f && fwrite(data, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	free(data);
	return path;
}

/* 11. -f errors give the reason; long paths keep it. */
START_TEST(file_errors)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -f '%s'", belt_bin(), stories(), tmp("missing.txt"));
	expect_error(&r, 1, "No such file or directory");
	ck_assert_msg(strstr(r.err, "-f ") && strstr(r.err, tmp("missing.txt")), "%s", r.err);
	sh(&r, "%s run -m '%s' -f '%s'", belt_bin(), stories(), dir);
	expect_error(&r, 1, "Is a directory");
	sh(&r, "%s tokenize -m '%s' -f '%s'", belt_bin(), stories(), tmp("missing.txt"));
	expect_error(&r, 1, "No such file or directory");
	sh(&r, "%s perplexity -m '%s' -f '%s'", belt_bin(), stories(), tmp("missing.txt"));
	expect_error(&r, 1, "No such file or directory");
	/* a path of 700 bytes: the reason after it survives */
	char longp[1024];
	int n = snprintf(longp, sizeof longp, "%s/", dir);
	for (int i = 0; i < 3; i++)
		n += snprintf(longp + n, sizeof longp - (size_t)n, "%0230d/", i);
	snprintf(longp + n, sizeof longp - (size_t)n, "model.gguf");
	sh(&r, "%s run -m '%s' -p hi", belt_bin(), longp);
	expect_error(&r, 1, "No such file or directory");
	ck_assert_msg(strstr(r.err, longp), "path cut: %s", r.err);
	sh(&r, "%s run -m '%s' -f '%s'", belt_bin(), stories(), longp);
	expect_error(&r, 1, "No such file or directory");
}
END_TEST

/* 11. Flag values: -c 1 is a usage error naming -c; any finite float is a
 * float; NaN, infinities and negatives are refused, saying what is wanted. */
START_TEST(flag_values)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi -c 1", belt_bin(), stories());
	expect_error(&r, 2, "-c: expected 0 (the model's context) or 2..");
	sh(&r, "%s run -m '%s' -p hi -n 4 --temp 1e-45 --seed 1", belt_bin(), stories());
	ck_assert_msg(r.status == 0, "--temp 1e-45: exit %d: %s", r.status, r.err);
	sh(&r, "%s run -m '%s' -p hi -n 4 --top-p 1e-40 --temp 0.5 --seed 1", belt_bin(), stories());
	ck_assert_msg(r.status == 0, "--top-p 1e-40: exit %d: %s", r.status, r.err);
	static const char *const bad[] = {"nan", "inf", "-inf", "1e999", "0.5x", ""};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		sh(&r, "%s run -m '%s' -p hi --temp '%s'", belt_bin(), stories(), bad[i]);
		expect_error(&r, 2, "--temp: expected a finite number");
	}
	sh(&r, "%s run -m '%s' -p hi --temp -0.5", belt_bin(), stories());
	expect_error(&r, 2, "--temp: expected a finite number >= 0");
	sh(&r, "%s run -m '%s' -p hi --presence-penalty nan", belt_bin(), stories());
	expect_error(&r, 2, "--presence-penalty: expected a finite number");
	sh(&r, "%s bench -m '%s' --temp inf", belt_bin(), stories());
	expect_error(&r, 2, "--temp: expected a finite number");
}
END_TEST

/* 12. Drafting flags: an unknown drafter or bad options name the flag and
 * the value, exit 1; flags without --draft, with a grammar, or a draft
 * longer than a pass are usage errors; a good one runs and reports. */
START_TEST(draft_flags)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft nosuch", belt_bin(), stories());
	expect_error(&r, 1, "--draft nosuch");
	ck_assert_msg(strstr(r.err, "draft-nosuch"), "%s", r.err);
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft ngram --draft-options min=9,max=2", belt_bin(),
	   stories());
	expect_error(&r, 1, "min=9,max=2");
	sh(&r, "%s run -m '%s' -p hi --draft-max 4", belt_bin(), stories());
	expect_error(&r, 2, "--draft-max, --draft-options and --draft-heads need --draft NAME");
	/* medusa's side file: missing, unreadable, of another model, not heads */
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft medusa", belt_bin(), stories());
	expect_error(&r, 1, "no heads file: give --draft-heads FILE");
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft medusa --draft-heads /nonexistent.gguf",
	   belt_bin(), stories());
	expect_error(&r, 1, "/nonexistent.gguf: cannot open");
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft medusa --draft-heads '%s'", belt_bin(), stories(),
	   stories());
	expect_error(&r, 1, "general.architecture is not \"medusa\"");
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft medusa --draft-heads '%s/../tools/medusa/"
	   "pycoder29M.medusa.gguf'", belt_bin(), stories(), BELT_TEST_SRCDIR);
	expect_error(&r, 1, "4 heads 512 wide for 32000 tokens: expected 1 .. 8 heads as wide as "
			    "the model (64)");
	sh(&r, "%s run -m '%s' -p hi -n 4 --draft medusa --draft-heads x --draft-options topk=9",
	   belt_bin(), stories());
	expect_error(&r, 1, "option 'topk=9': expected heads=FILE, topk=N (1..8) or min=P (0..1)");
	sh(&r, "%s run -m '%s' -p hi --draft ngram --grammar 'root ::= \"a\"'", belt_bin(),
	   stories());
	expect_error(&r, 2, "--draft does not combine with a grammar");
	sh(&r, "%s run -m '%s' -p hi --draft ngram --draft-max 8 -ub 8", belt_bin(), stories());
	expect_error(&r, 2, "--draft-max 8: a verification pass of 9 rows needs -ub of at least 9");
	sh(&r, "%s bench -m '%s' -d 16 -f /dev/null", belt_bin(), stories());
	expect_error(&r, 2, "-f sets the tg tests' prompt and -d fills the context");
	/* context shift: --keep needs it, and a bad --keep is named */
	sh(&r, "%s run -m '%s' -p hi --keep 3", belt_bin(), stories());
	expect_error(&r, 2, "--keep 3 needs --context-shift");
	sh(&r, "%s run -m '%s' -p hi --context-shift --keep -2", belt_bin(), stories());
	expect_error(&r, 2, "--keep");
	/* a run far past the context goes on, and says it shifted */
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 100 -c 32 --ignore-eos --ids --context-shift",
	   belt_bin(), stories());
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "belt: the context was shifted") &&
			      strstr(r.err, "decode 100 tokens"),
		      "%s", r.err);
	/* the same ids with the drafter as without (whether its passes pay,
	 * and so run, depends on the machine's timing: doc/drafting.md) */
	static struct result plain;
	sh(&plain, "%s run -m '%s' -p 'Once upon a time' -n 64 --ignore-eos --ids", belt_bin(),
	   stories());
	sh(&r, "%s run -m '%s' -p 'Once upon a time' -n 64 --ignore-eos --ids --draft ngram --draft-options min=1,max=3",
	   belt_bin(), stories());
	ck_assert_msg(r.status == 0 && plain.status == 0, "%d %s", r.status, r.err);
	ck_assert_str_eq(r.out, plain.out);
}
END_TEST

static void escape_arch(struct synth_shape *s) { s->arch = "gpt\x1b[2J\xff\xc2\x9b"; }

/* 11. Bytes from files and argv are escaped in messages, never echoed. */
START_TEST(escaped_messages)
{
	struct synth_shape s;
	synth_default(&s);
	escape_arch(&s);
	char err[BELT_ERR_SIZE];
	const char *model = tmp("escape.gguf");
	ck_assert_msg(synth_write(&s, model, err, sizeof err) == 0, "%s", err);
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi", belt_bin(), model);
	expect_error(&r, 1, "unknown architecture 'gpt\\x1b[2J\\xff\\xc2\\x9b'");
	sh(&r, "%s run --frob\"$(printf '\\033\\007')\"é", belt_bin());
	expect_error(&r, 2, "unknown option '--frob\\x1b\\x07é'");
	for (const unsigned char *p = (const unsigned char *)r.err; *p; p++)
		ck_assert_msg(*p >= 0x20 || *p == '\n', "raw byte 0x%02x in: %s", *p, r.err);
}
END_TEST

/* 11. bench shows the threads it runs on, not 0. */
START_TEST(bench_threads)
{
	static struct result r;
	sh(&r, "%s bench -m '%s' -p 8 -n 4 -r 1", belt_bin(), stories());
	ck_assert_msg(r.status == 0, "%s", r.err);
	char want[64];
	snprintf(want, sizeof want, "| cpu     | %7ld |", sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_msg(strstr(r.out, want), "expected '%s' in:\n%s", want, r.out);
	sh(&r, "%s bench -m '%s' -p 8 -n 4 -r 1 -t 1", belt_bin(), stories());
	ck_assert_msg(r.status == 0 && strstr(r.out, "| cpu     |       1 |"), "%s", r.out);
}
END_TEST

/* 11. belt --version and belt version. */
START_TEST(version)
{
	static struct result r, v;
	sh(&r, "%s --version", belt_bin());
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(!strncmp(r.out, "belt " PACKAGE_VERSION "\n", strlen("belt " PACKAGE_VERSION "\n")),
		      "%s", r.out);
	char want[64];
	snprintf(want, sizeof want, "backend ABI %d (loads %d .. %d)\n", BELT_BACKEND_ABI,
		 BELT_BACKEND_ABI_MIN, BELT_BACKEND_ABI);
	ck_assert_msg(strstr(r.out, want), "%s", r.out);
	snprintf(want, sizeof want, "sampler ABI %d", BELT_SAMPLER_ABI);
	ck_assert_msg(strstr(r.out, want) && strstr(r.out, "plugin ABI "), "%s", r.out);
	sh(&v, "%s version", belt_bin());
	ck_assert_msg(v.status == 0, "%s", v.err);
	ck_assert_str_eq(r.out, v.out);
}
END_TEST

/* 11. A block_count below the file's layers is said, with both numbers. */
START_TEST(block_count_short)
{
	const char *model = patched(stories(), "short.gguf", "llama.block_count", 3);
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi -n 4", belt_bin(), model);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "belt run: warning: llama.block_count is 3 but the file has tensors of 5 layers"),
		      "%s", r.err);
	sh(&r, "%s run -m '%s' -p hi -n 4", belt_bin(), stories());
	ck_assert_msg(r.status == 0 && !strstr(r.err, "warning"), "%s", r.err);
}
END_TEST

/* 11. A BOS id outside the vocabulary is an error naming the key. */
START_TEST(bos_out_of_range)
{
	const char *model = patched(stories(), "bos.gguf", "tokenizer.ggml.bos_token_id", 9999);
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi -n 4", belt_bin(), model);
	expect_error(&r, 1, "tokenizer.ggml.bos_token_id is 9999");
	ck_assert_msg(strstr(r.err, "512") && strstr(r.err, model), "%s", r.err);
	sh(&r, "%s tokenize -m '%s' -p hi", belt_bin(), model);
	expect_error(&r, 1, "tokenizer.ggml.bos_token_id is 9999");
}
END_TEST

/* -c above the training context is said. */
START_TEST(context_above_training)
{
	static struct result r;
	sh(&r, "%s run -m '%s' -p hi -n 4 -c 1024", belt_bin(), stories());
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "belt run: warning: -c 1024 is more than the model's training context of 512"),
		      "%s", r.err);
	sh(&r, "%s run -m '%s' -p hi -n 4 -c 512", belt_bin(), stories());
	ck_assert_msg(r.status == 0 && !strstr(r.err, "warning"), "%s", r.err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_misuse");
	TCase *tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, output_to_full_device);
	tcase_add_test(tc, output_to_closed_pipe);
	tcase_add_test(tc, output_reader_leaves);
	tcase_add_test(tc, seed_max);
	tcase_add_test(tc, info_bad_backend);
	tcase_add_test(tc, context_full);
	tcase_add_test(tc, stop_reasons);
	tcase_add_test(tc, sigint);
	tcase_add_test(tc, sigterm);
	tcase_add_test(tc, file_errors);
	tcase_add_test(tc, flag_values);
	tcase_add_test(tc, escaped_messages);
	tcase_add_test(tc, bench_threads);
	tcase_add_test(tc, version);
	tcase_add_test(tc, block_count_short);
	tcase_add_test(tc, bos_out_of_range);
	tcase_add_test(tc, context_above_training);
	tcase_add_test(tc, draft_flags);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
