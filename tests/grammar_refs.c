/* llama.cpp's greedy constrained generations
 * ($BELT_SHARED_DIR/grammars/references.tsv; the README beside it says how
 * they were made) reproduced by the belt binary ($BELT_BIN): `belt run`
 * on the CPU backend, greedy (no --temp), with --grammar-file for a GBNF
 * file and --json-schema for a JSON Schema (llama.cpp's -jf), must give
 * the same text and the same stop reason (eog: the model chose the end of
 * generation where the grammar may end; length: n_predict tokens) on
 * every row. BELT_TEST_BACKEND=vulkan runs
 * the same rows there (a grammar runs each position on its own, its
 * logits read back, on every backend). */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ref.h"

/* Run argv with stdout and stderr into out and err; the exit status. */
static int run(const char **argv, char *out, size_t out_cap, char *err, size_t err_cap)
{
	/* mkstemp's templates: two fresh files */
	char po[] = "/tmp/belt-grammar-refs-out-XXXXXX", pe[] = "/tmp/belt-grammar-refs-err-XXXXXX";
	int fo = mkstemp(po), fe = mkstemp(pe);
	ck_assert(fo >= 0 && fe >= 0);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(fo);
	close(fe);
	slurp_buf(po, out, out_cap);
	slurp_buf(pe, err, err_cap);
	unlink(po);
	unlink(pe);
	ck_assert_msg(WIFEXITED(st), "belt died: status %d", st);
	return WEXITSTATUS(st);
}

START_TEST(references)
{
	struct tsv *t = tsv_load(shared_path("grammars/references.tsv"));
	ck_assert(t);
	const char *bin = getenv("BELT_BIN") ? getenv("BELT_BIN") : "./belt";
	const char *backend = getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu";
	static char out[1 << 16], err[1 << 14];
	unsigned rows = 0, same = 0, schemas = 0, schemas_same = 0;
	for (size_t r = 0; r < t->n_rows; r++) {
		const char *constraint = tsv_get(t, r, "constraint");
		size_t len = strlen(constraint);
		bool schema = len > 5 && !strcmp(constraint + len - 5, ".json");
		ck_assert_msg(schema || (len > 5 && !strcmp(constraint + len - 5, ".gbnf")),
			      "row %zu: %s", r, constraint);
		char model[4096], grammar[4096];
		snprintf(model, sizeof model, "%s/%s", shared_path("models"), tsv_get(t, r, "model"));
		snprintf(grammar, sizeof grammar, "%s/%s", shared_path("grammars"), constraint);
		const char *n_predict = tsv_get(t, r, "n_predict"), *stop = tsv_get(t, r, "stop");
		const char *want = tsv_get(t, r, "text");
		const char *argv[] = {bin, "run", "-m", model, "-p", tsv_get(t, r, "prompt"), "-n",
				      n_predict, schema ? "--json-schema" : "--grammar-file", grammar,
				      "--backend", backend, "-t", "2",
				      NULL};
		int status = run(argv, out, sizeof out, err, sizeof err);
		ck_assert_msg(status == 0, "row %zu (%s, %s): exit %d: %s", r, tsv_get(t, r, "model"),
			      constraint, status, err);
		/* belt run ends its text with a newline of its own */
		size_t n = strlen(out);
		ck_assert(n > 0 && out[n - 1] == '\n');
		out[--n] = 0;
		long got = decoded(err);
		const char *ours = got >= 0 && got < atol(n_predict) ? "eog" : "length";
		bool ok = !strcmp(out, want) && !strcmp(ours, stop);
		if (!ok) {
			size_t k = 0;
			while (out[k] && out[k] == want[k])
				k++;
			printf("grammar_refs: row %zu (%s, %s) differs at byte %zu, stop %s (llama.cpp %s):\n"
			       "  belt:      %s\n  llama.cpp: %s\n",
			       r, tsv_get(t, r, "model"), constraint, k, ours, stop, out, want);
		}
		same += ok;
		rows++;
		schemas_same += schema && ok;
		schemas += schema;
	}
	printf("grammar_refs: %s: %u of %u rows identical to llama.cpp (text and stop reason): "
	       "%u of %u GBNF, %u of %u JSON Schema\n",
	       backend, same, rows, same - schemas_same, rows - schemas, schemas_same, schemas);
	ck_assert_uint_gt(rows - schemas, 0);
	ck_assert_uint_gt(schemas, 0);
	ck_assert_uint_eq(same, rows);
	tsv_free(t);
}
END_TEST

/* One line on stderr, "belt run: " and want in it; exit status code.
 * Returns the message. */
static const char *expect_error(const char *grammar_flag, const char *value, int code, const char *want)
{
	const char *bin = getenv("BELT_BIN") ? getenv("BELT_BIN") : "./belt";
	char model[4096];
	static char out[1 << 16], err[1 << 14];
	snprintf(model, sizeof model, "%s", shared_path("models/stories260K.f32.gguf"));
	const char *argv[] = {bin, "run", "-m", model, "-p", "Once", "-n", "4", grammar_flag, value,
			      NULL};
	int status = run(argv, out, sizeof out, err, sizeof err);
	char *nl = strchr(err, '\n');
	ck_assert_msg(status == code, "%s %s: exit %d, expected %d: %s", grammar_flag, value, status,
		      code, err);
	ck_assert_msg(nl && !nl[1], "%s %s: expected one line, got: %s", grammar_flag, value, err);
	ck_assert_msg(!strncmp(err, "belt run: ", 10) && strstr(err, want),
		      "%s %s: expected 'belt run: ...%s', got: %s", grammar_flag, value, want, err);
	ck_assert_str_eq(out, "");
	return err;
}

/* A bad grammar on the command line: one line naming the flag or file and
 * the place, exit 1, before the model loads; misuse of the flags: 2. */
START_TEST(cli_errors)
{
	expect_error("--grammar", "root ::= \"a", 1, "--grammar:1:12: expected '\"'");
	expect_error("--grammar", "root ::= x", 1, "--grammar:1:10: undefined rule 'x'");
	char path[4096], want[4200];
	snprintf(path, sizeof path, "%s", shared_path("grammars/bad/left-recursion.gbnf"));
	snprintf(want, sizeof want, "%s:2:1: rule 'expr' is left-recursive", path);
	expect_error("--grammar-file", path, 1, want);
	snprintf(path, sizeof path, "%s", shared_path("grammars/bad/empty.gbnf"));
	snprintf(want, sizeof want, "%s:1:1: expected a rule", path);
	expect_error("--grammar-file", path, 1, want);
	expect_error("--grammar-file", "/nonexistent/g.gbnf", 1,
		     "--grammar-file /nonexistent/g.gbnf: No such file or directory");
	/* --json-schema: the text itself when no file has that name */
	expect_error("--json-schema",
		     "{\"type\":\"object\",\"properties\":{\"age\":{\"type\":\"integer\","
		     "\"minimum\":\"x\"}}}",
		     1, "--json-schema: /properties/age/minimum: expected a number, got a string");
	expect_error("--json-schema", "{\"type\":\"string\",\"pattern\":\"^a(b$\"}", 1,
		     "--json-schema: /pattern: character 3: expected ')'");
	expect_error("--json-schema", "{\"type\": \"strin\"}", 1,
		     "--json-schema: /type: unknown type 'strin'");
	expect_error("--json-schema", "{\"type\":\"integer\",\"multipleOf\":3}", 1,
		     "--json-schema: /multipleOf: unsupported keyword 'multipleOf'");
	expect_error("--json-schema", "/nonexistent/s.json", 1,
		     "--json-schema /nonexistent/s.json: No such file or directory");
	expect_error("--json-schema", "{\"a\": ", 1, "--json-schema:1:6: unexpected token");
	const char *bin = getenv("BELT_BIN") ? getenv("BELT_BIN") : "./belt";
	static char out[1 << 16], err[1 << 14];
	const char *both[] = {bin, "run", "-m", "m.gguf", "--grammar", "root ::= \"a\"",
			      "--grammar-file", "g.gbnf", NULL};
	ck_assert_int_eq(run(both, out, sizeof out, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "give --grammar or --grammar-file, not both"), "%s", err);
	const char *bare[] = {bin, "run", "-m", "m.gguf", "--grammar", NULL};
	ck_assert_int_eq(run(bare, out, sizeof out, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "option '--grammar' needs a value"), "%s", err);
	const char *mixed[] = {bin, "run", "-m", "m.gguf", "--json-schema", "{}", "--grammar-file",
			       "g.gbnf", NULL};
	ck_assert_int_eq(run(mixed, out, sizeof out, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "give --json-schema or a grammar, not both"), "%s", err);
}
END_TEST

/* Every bad grammar and schema of the shared folder: one line naming the
 * file and a line and column (GBNF, JSON that does not parse) or a JSON
 * pointer (a schema that cannot be read), exit 1. */
START_TEST(cli_bad_files)
{
	static const char *const files[] = {
		"bad-escape", "bad-repetition", "codepoint-too-large", "double-definition-op", "empty",
		"invalid-utf8", "left-recursion", "no-root", "unclosed-group", "undefined-rule",
		"unterminated-class", "unterminated-literal"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char path[4096], want[4200];
		snprintf(path, sizeof path, "%s/%s.gbnf", shared_path("grammars/bad"), files[i]);
		snprintf(want, sizeof want, "%s:", path);
		const char *e = expect_error("--grammar-file", path, 1, want);
		unsigned line, col;
		ck_assert_msg(sscanf(strstr(e, want) + strlen(want), "%u:%u: ", &line, &col) == 2,
			      "no line and column: %s", e);
	}
	static const char *const schemas[][2] = {
		{"bad-pattern", ": /pattern: character 1: expected ')' to close the group"},
		{"contradictory-bounds", ": /maxItems: maxItems 1 is below minItems 3"},
		{"dangling-ref", ": /properties/a/$ref: '#/$defs/missing': no '$defs'"},
		{"not-a-schema", ": (root): expected a schema (an object, or true), got an array"},
		{"truncated", ":2:1: "},
		{"unknown-type", ": /properties/a/type: unknown type 'strin'"}};
	for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
		char path[4096], want[4200];
		snprintf(path, sizeof path, "%s/%s.json", shared_path("grammars/bad"), schemas[i][0]);
		snprintf(want, sizeof want, "%s%s", path, schemas[i][1]);
		expect_error("--json-schema", path, 1, want);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("grammar_refs");
	TCase *tc = tcase_create("refs");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, references);
	tcase_add_test(tc, cli_errors);
	tcase_add_test(tc, cli_bad_files);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
