/* plugins/grammar-gbnf (doc/grammars.md), through the registry as belt
 * loads it:
 * - every construct of the GBNF language accepted and refused, fed byte
 *   by byte on a tiny vocabulary (all 256 byte tokens, a few pieces, two
 *   of them cut inside a UTF-8 character, two end-of-generation tokens),
 *   with allowed() checked against accept() for every token of the
 *   vocabulary at each of the first steps: a token is allowed exactly
 *   when accept() takes it, end-of-generation exactly where the grammar
 *   is complete;
 * - the same on real vocabularies ($BELT_SHARED_DIR): pycoder29M's 32,000
 *   SentencePiece pieces and llama-bpe's 128,256 byte-level BPE ones,
 *   whose pieces end inside characters;
 * - every grammar of $BELT_SHARED_DIR/grammars/gbnf compiles, every one of
 *   grammars/bad is refused with a message naming its line and column;
 * - errors of every kind with their positions; no hang on {3,1}; the
 *   mask's cost per token; allowed() allocates nothing;
 * - in belt_generate: sampled generations keep to their grammars, the
 *   stop reasons, and runs of forced tokens (one allowed token each)
 *   batched as one-token decoding would have taken them.
 * Cases (CK_RUN_CASE): language (the tiny vocabulary), vocab, generate. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "belt/belt.h"
#include "belt/error.h"
#include "belt/sampler.h"
#include "belt/plugin.h"
#include "belt/tokenizer.h"
#include "ref.h"
#include "synth/synth.h"

/* ---- allocations, counted while allowed() runs ---- */

static int counting;
static long allocations;
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN /* ASan has its own allocator: nothing counted there */
/* glibc: a definition in the executable interposes on every library. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n)
{
	allocations += counting;
	return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	allocations += counting;
	return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	allocations += counting;
	return __libc_realloc(p, n);
}
#endif

/* ---- the tiny vocabulary ---- */

#define BYTE0 3		 /* <0x00> .. <0xFF> are ids 3 .. 258 */
#define ID_AB 259	 /* "ab" */
#define ID_ABC 260	 /* "abc" */
#define ID_SPACE_A 261	 /* "\u2581a": " a" */
#define ID_NIHON 262	 /* "日本", six bytes */
#define ID_A_E6 263	 /* "a" and the first byte of 日 (E6 97 A5) */
#define ID_97_A5 264	 /* the rest of 日 */
#define ID_TOOL 265	 /* "<|tool|>", user-defined: its text verbatim */
#define ID_EOT 266	 /* "<eot>", a second end-of-generation token */
#define ID_EOS 2	 /* "</s>" */
#define N_TINY 267

static struct belt_tokenizer *tiny;
static const struct belt_grammar_ops *ops;

static struct belt_tokenizer *load_vocab(const char *path)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g, "%s", err);
	struct belt_tokenizer *t;
	ck_assert_msg(belt_tok_load(g, &t, err, sizeof err) == 0, "%s", err);
	belt_gguf_close(g);
	return t;
}

static void setup(void)
{
	static char names[256][8];
	const char *tokens[N_TINY] = {"<unk>", "<s>", "</s>"};
	int32_t types[N_TINY] = {2, 3, 3};
	for (int b = 0; b < 256; b++) {
		snprintf(names[b], sizeof names[b], "<0x%02X>", b);
		tokens[BYTE0 + b] = names[b];
		types[BYTE0 + b] = 6;
	}
	tokens[ID_AB] = "ab";
	tokens[ID_ABC] = "abc";
	tokens[ID_SPACE_A] = "\342\226\201a"; /* U+2581 and a */
	tokens[ID_NIHON] = "\xe6\x97\xa5\xe6\x9c\xac";
	tokens[ID_A_E6] = "a\xe6";
	tokens[ID_97_A5] = "\x97\xa5";
	tokens[ID_TOOL] = "<|tool|>";
	tokens[ID_EOT] = "<eot>";
	for (int i = ID_AB; i < N_TINY; i++)
		types[i] = 1;
	types[ID_TOOL] = 4;
	types[ID_EOT] = 3;
	tiny = ref_vocab(tokens, types, N_TINY, ID_EOS, ID_EOT);
	ck_assert_int_eq(belt_tok_n_vocab(tiny), N_TINY);
	ck_assert(belt_tok_is_eog(tiny, ID_EOS) && belt_tok_is_eog(tiny, ID_EOT));
	char err[BELT_ERR_SIZE];
	ops = belt_grammar_get("gbnf", err, sizeof err);
	ck_assert_msg(ops, "%s", err);
}

static void teardown(void)
{
	belt_tok_free(tiny);
	tiny = NULL;
}

/* ---- helpers ---- */

static void *compile_ok(const struct belt_tokenizer *t, const char *text)
{
	char err[BELT_ERR_SIZE] = "";
	void *st = NULL;
	int rc = ops->compile(text, strlen(text), "gbnf", t, &st, err, sizeof err);
	ck_assert_msg(rc == 0 && st, "grammar '%s' refused: %s", text, err);
	return st;
}

/* The grammar text[0..len) is refused with a message that starts with
 * where ("LINE:COL: ") and contains want. */
static void refused_n(const char *text, size_t len, const char *where, const char *want)
{
	char err[BELT_ERR_SIZE] = "";
	void *st = (void *)1;
	int rc = ops->compile(text, len, "gbnf", tiny, &st, err, sizeof err);
	ck_assert_msg(rc == -1 && !st, "grammar '%.*s' was compiled", (int)len, text);
	ck_assert_msg(!strchr(err, '\n'), "a message of more than one line: %s", err);
	ck_assert_msg(!strncmp(err, where, strlen(where)) && strstr(err, want),
		      "grammar '%.*s': expected '%s...%s', got '%s'", (int)len, text, where, want, err);
}

static void refused(const char *text, const char *where, const char *want)
{
	refused_n(text, strlen(text), where, want);
}

static uint32_t mask[(128256 + 31) / 32 + 1];

static bool bit(int32_t id)
{
	return mask[id / 32] >> (id % 32) & 1;
}

static void accept_ok(void *st, int32_t id)
{
	char err[BELT_ERR_SIZE];
	ck_assert_msg(ops->accept(st, id, err, sizeof err) == 0, "token %d: %s", id, err);
}

/* Check allowed() against accept() for every token of the tiny vocabulary
 * in the state reached by ids[0..k): a token it does not allow must be
 * refused (leaving the state as it was), one it allows must be taken
 * (the state is then rebuilt); end-of-generation exactly when complete. */
static void check_every_token(void *st, const int32_t *ids, size_t k)
{
	char err[BELT_ERR_SIZE];
	ops->allowed(st, mask, N_TINY);
	bool complete = ops->is_complete(st);
	ck_assert_msg(bit(ID_EOS) == complete && bit(ID_EOT) == complete,
		      "end of generation allowed %d, complete %d after %zu tokens", bit(ID_EOS),
		      complete, k);
	uint32_t saved[(N_TINY + 31) / 32];
	memcpy(saved, mask, sizeof saved);
	for (int32_t t = 0; t < N_TINY; t++) {
		bool allowed = saved[t / 32] >> (t % 32) & 1;
		int rc = ops->accept(st, t, err, sizeof err);
		ck_assert_msg((rc == 0) == allowed, "token %d after %zu tokens: allowed %d, accept %d (%s)",
			      t, k, allowed, rc, rc ? err : "");
		if (rc == 0) {
			ops->reset(st);
			for (size_t i = 0; i < k; i++)
				accept_ok(st, ids[i]);
		}
	}
	ops->allowed(st, mask, N_TINY);
	ck_assert(!memcmp(saved, mask, sizeof saved));
}

/* Feed s byte by byte (the byte tokens) to grammar: every byte before
 * refused_at is allowed and taken, the one at refused_at (if any) is
 * refused; then whether the grammar is complete. Every token is checked
 * at the first eight steps. */
static void feed(const char *grammar, const char *s, long refused_at, bool complete)
{
	void *st = compile_ok(tiny, grammar);
	size_t n = strlen(s);
	int32_t ids[256];
	ck_assert(n < 256);
	char err[BELT_ERR_SIZE];
	for (size_t i = 0; i <= n; i++) {
		if (i < 8)
			check_every_token(st, ids, i);
		if (i == n || (long)i == refused_at)
			break;
		ids[i] = BYTE0 + (unsigned char)s[i];
		ops->allowed(st, mask, N_TINY);
		ck_assert_msg(bit(ids[i]), "grammar '%s', text '%s': byte %zu not allowed", grammar, s, i);
		accept_ok(st, ids[i]);
	}
	if (refused_at >= 0) {
		int32_t id = BYTE0 + (unsigned char)s[refused_at];
		ops->allowed(st, mask, N_TINY);
		ck_assert_msg(!bit(id), "grammar '%s', text '%s': byte %ld allowed", grammar, s, refused_at);
		ck_assert_msg(ops->accept(st, id, err, sizeof err) == -1 && strstr(err, "not allowed"),
			      "grammar '%s', text '%s': byte %ld taken", grammar, s, refused_at);
	} else {
		ck_assert_msg(ops->is_complete(st) == complete, "grammar '%s', text '%s': complete %d",
			      grammar, s, !complete);
		ops->allowed(st, mask, N_TINY);
		ck_assert_msg(bit(ID_EOS) == complete, "grammar '%s', text '%s'", grammar, s);
	}
	ops->free(st);
}

/* s is a whole sentence of grammar; s is a prefix of one; s is refused
 * at byte k. */
#define OK(g, s) feed(g, s, -1, true)
#define PREFIX(g, s) feed(g, s, -1, false)
#define NO(g, s, k) feed(g, s, k, false)

/* ---- the language ---- */

START_TEST(literals)
{
	OK("root ::= \"abc\"", "abc");
	PREFIX("root ::= \"abc\"", "ab");
	NO("root ::= \"abc\"", "abd", 2);
	NO("root ::= \"abc\"", "abcd", 3);
	OK("root ::= \"\"", "");
	OK("root ::= \"a\" \"\" \"b\"", "ab");
	OK("root ::= \"ab\" \"c\"", "abc");
}
END_TEST

START_TEST(alternation_and_groups)
{
	const char *g = "root ::= \"a\" | \"bc\" | \"\"";
	OK(g, "");
	OK(g, "a");
	OK(g, "bc");
	PREFIX(g, "b");
	NO(g, "ab", 1);
	g = "root ::= (\"a\" | \"b\") \"c\" (\"d\" (\"e\" | \"f\"))";
	OK(g, "acde");
	OK(g, "bcdf");
	NO(g, "cc", 0);
	NO(g, "acdd", 3);
	/* an empty alternative first, as json.gbnf's ws */
	g = "root ::= \"x\" ws \"y\"\nws ::= | \" \" | \"\\n\" [ \\t]{0,2}";
	OK(g, "xy");
	OK(g, "x y");
	OK(g, "x\n\t y");
	NO(g, "x\n\t  y", 4);
	NO(g, "x  y", 2);
}
END_TEST

START_TEST(repetition)
{
	OK("root ::= \"a\"*", "");
	OK("root ::= \"a\"*", "aaaaaaaaaa");
	NO("root ::= \"a\"*", "aab", 2);
	PREFIX("root ::= \"a\"+", "");
	OK("root ::= \"a\"+", "aaa");
	OK("root ::= \"a\"?", "");
	OK("root ::= \"a\"?", "a");
	NO("root ::= \"a\"?", "aa", 1);
	/* the whole literal, the whole group repeats */
	OK("root ::= \"ab\"*", "ababab");
	NO("root ::= \"ab\"*", "aba b", 3);
	OK("root ::= (\"a\" \"b\"?)+ \"c\"", "aababc");
	/* postfixes stack: (a+)? */
	OK("root ::= \"a\"+?", "");
	OK("root ::= \"a\"+?", "aa");
}
END_TEST

START_TEST(bounded_repetition)
{
	OK("root ::= \"a\"{3}", "aaa");
	PREFIX("root ::= \"a\"{3}", "aa");
	NO("root ::= \"a\"{3}", "aaaa", 3);
	OK("root ::= \"ab\"{2,}", "abab");
	OK("root ::= \"ab\"{2,}", "ababababab");
	PREFIX("root ::= \"ab\"{2,}", "aba");
	const char *g = "root ::= [0-9]{1,3} \".\"";
	PREFIX(g, "");
	OK(g, "1.");
	OK(g, "12.");
	OK(g, "123.");
	NO(g, "1234.", 3);
	NO(g, ".", 0);
	OK("root ::= \"a\"{0}", "");
	NO("root ::= \"a\"{0}", "a", 0);
	OK("root ::= \"a\"{0,0} \"b\"", "b");
	OK("root ::= \"a\"{ 2 , 4 }", "aaaa");
}
END_TEST

/* 1000 a's of ((a{10}){10}){10}: elements linear in the counts; a large
 * count runs as fast as a small one. */
START_TEST(bounded_repetition_large)
{
	void *st = compile_ok(tiny, "root ::= ((\"a\"{10}){10}){10} | \"b\"{0,5000} \"c\"");
	for (int i = 0; i < 1000; i++)
		accept_ok(st, BYTE0 + 'a');
	ck_assert(ops->is_complete(st));
	ops->allowed(st, mask, N_TINY);
	ck_assert(!bit(BYTE0 + 'a') && bit(ID_EOS));
	ops->reset(st);
	for (int i = 0; i < 5000; i++)
		accept_ok(st, BYTE0 + 'b');
	ops->allowed(st, mask, N_TINY);
	ck_assert(!bit(BYTE0 + 'b') && bit(BYTE0 + 'c') && !bit(ID_EOS));
	accept_ok(st, BYTE0 + 'c');
	ck_assert(ops->is_complete(st));
	ops->free(st);
}
END_TEST

START_TEST(escapes)
{
	OK("root ::= \"\\n\\r\\t\\\\\\\"\\[\\]\"", "\n\r\t\\\"[]");
	OK("root ::= \"\\x41\\u00e9\\U0001F600\"", "A\xc3\xa9\xf0\x9f\x98\x80");
	OK("root ::= [\\x00-\\x1f]+", "\x01\x1f");
	OK("root ::= [\\]\\[\\\\]+", "[]\\");
}
END_TEST

/* \x00 is a character like any other: the byte 0 matches it. */
START_TEST(nul_character)
{
	void *st = compile_ok(tiny, "root ::= \"a\\x00b\"");
	accept_ok(st, BYTE0 + 'a');
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(BYTE0 + 0) && !bit(BYTE0 + 'b'));
	accept_ok(st, BYTE0 + 0);
	accept_ok(st, BYTE0 + 'b');
	ck_assert(ops->is_complete(st));
	ops->free(st);
}
END_TEST

START_TEST(classes)
{
	const char *g = "root ::= [a-c0-9_]+";
	OK(g, "ab9_c0");
	NO(g, "abd", 2);
	g = "root ::= [^a-z]+";
	OK(g, "AZ09 \xc3\xa9\xe6\x97\xa5");
	NO(g, "Aq", 1);
	g = "root ::= \"\\\"\" [^\"\\\\]* \"\\\"\"";
	OK(g, "\"any thing \xe2\x82\xac\"");
	NO(g, "\"a\\", 2);
	/* '-' at either end is itself; [,-.] is a range */
	OK("root ::= [-a]+", "-a-");
	OK("root ::= [a-]+", "a--");
	OK("root ::= [,-.]+", ",-.");
	NO("root ::= [,-.]+", ",/", 1);
	/* english.gbnf's punctuation class */
	g = "root ::= [!\"#$%&'()*+,-./:;<=>?@[\\\\\\]^_`{|}~]+";
	OK(g, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
	NO(g, "!a", 1);
	/* any character */
	OK("root ::= ...", "a\xc3\xa9\xf0\x9f\x98\x80");
	PREFIX("root ::= ...", "a\xc3\xa9\xf0\x9f");
	/* [^]: no ranges (found by fuzz-gbnf: qsort of none, under UBSan) */
	OK("root ::= [^]", "\n");
}
END_TEST

START_TEST(unicode)
{
	OK("root ::= \"日本\" [ぁ-ゟ]", "日本\xe3\x81\x81");
	NO("root ::= \"日本\" [ぁ-ゟ]", "日本\xe3\x82\xa0", 8); /* U+30A0 is past ゟ */
	/* a lead byte no character of the class begins with */
	NO("root ::= [ぁ-ゟ]", "\xe4", 0);
	/* invalid UTF-8 is never read: overlong, surrogate, above U+10FFFF,
	 * a stray continuation byte */
	NO("root ::= .*", "\xc0\x80", 0);
	NO("root ::= .*", "\xed\xa0\x80", 1);
	NO("root ::= .*", "\xf4\x90\x80\x80", 1);
	NO("root ::= .*", "a\x80", 1);
	NO("root ::= .*", "\xe6\x97" "a", 2);
}
END_TEST

START_TEST(comments_and_lines)
{
	const char *g = "# a comment\n"
			"root ::= # after the operator\n"
			"  \"a\" (  # inside a group\n"
			"    \"b\" |\n"
			"    \"c\"\n"
			"  )* |\n"
			"  item\r\n"
			"\n"
			"item::=\"x\"   # no spaces needed around ::=\n";
	OK(g, "abcb");
	OK(g, "x");
	NO(g, "ax", 1);
}
END_TEST

START_TEST(rules_and_recursion)
{
	const char *g = "root ::= \"(\" root \")\" | \"\"";
	OK(g, "");
	OK(g, "((()))");
	PREFIX(g, "(((");
	NO(g, "())", 2);
	/* rules used before their definition, names with - and _ */
	g = "root ::= a-b c_d\na-b ::= \"x\"\nc_d ::= \"y\" | a-b";
	OK(g, "xy");
	OK(g, "xx");
	/* cycles that read nothing and keep no frame run: x* of a nullable
	 * x, a rule that is another */
	OK("root ::= (\"a\"?)* \"b\"", "aab");
	OK("root ::= (\"a\"?)* \"b\"", "b");
	OK("root ::= a | \"x\"\na ::= root", "x");
	OK("root ::= (\"a\"*)*", "aaaa");
}
END_TEST

/* A grammar read in more ways at once than GB_MAX_STACKS (1024) is
 * refused, rather than followed at that cost per token: found by
 * fuzz-gbnf, ("a"?){0,50000} ran for minutes. */
START_TEST(too_ambiguous)
{
	char err[BELT_ERR_SIZE];
	void *st = NULL;
	const char *g = "root ::= (\"a\"?){0,50000} \"b\"";
	ck_assert_int_eq(ops->compile(g, strlen(g), "gbnf", tiny, &st, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "too ambiguous to follow here: more than 1024 stacks") && !st, "%s", err);
	/* 1000 readings are followed */
	st = compile_ok(tiny, "root ::= (\"a\"?){0,1000} \"b\"");
	for (int i = 0; i < 10; i++)
		accept_ok(st, BYTE0 + 'a');
	accept_ok(st, BYTE0 + 'b');
	ck_assert(ops->is_complete(st));
	ops->free(st);
}
END_TEST

/* Stacks 20,000 deep, twice: the frames of the first nesting, dead once
 * it is closed, are dropped while the second grows (stacks.c compacts
 * past 65,536 frames), and the second still closes right. */
START_TEST(deep_stacks)
{
	void *st = compile_ok(tiny, "root ::= p*\np ::= \"(\" p* \")\" | \"[\" p* \"]\"");
	const char pairs[2][2] = {{'(', ')'}, {'[', ']'}};
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 20000; i++)
			accept_ok(st, BYTE0 + pairs[k][0]);
		ops->allowed(st, mask, N_TINY);
		ck_assert(!bit(ID_EOS) && bit(BYTE0 + pairs[k][1]) && !bit(BYTE0 + pairs[!k][1]));
		for (int i = 0; i < 20000; i++)
			accept_ok(st, BYTE0 + pairs[k][1]);
		ck_assert(ops->is_complete(st));
	}
	ops->free(st);
}
END_TEST

/* Ambiguity costs its distinct stacks, not its parses: 200 a's where
 * every a has three readings. */
START_TEST(ambiguity)
{
	void *st = compile_ok(tiny, "root ::= (\"a\" | [a-z] | [^b])* \"b\"");
	clock_t t0 = clock();
	for (int i = 0; i < 200; i++)
		accept_ok(st, BYTE0 + 'a');
	accept_ok(st, BYTE0 + 'b');
	ck_assert(ops->is_complete(st));
	ck_assert_msg(clock() - t0 < CLOCKS_PER_SEC, "200 ambiguous tokens took %.2f s",
		      (double)(clock() - t0) / CLOCKS_PER_SEC);
	ops->free(st);
}
END_TEST

/* A token may end inside a UTF-8 character: the part read so far is
 * carried to the next token; end of generation waits for the character
 * to end. */
START_TEST(token_ends_inside_a_character)
{
	void *st = compile_ok(tiny, "root ::= \"a日\"");
	int32_t ids[4] = {0};
	check_every_token(st, ids, 0);
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(ID_A_E6) && bit(BYTE0 + 'a') && !bit(ID_97_A5) && !bit(ID_NIHON));
	ids[0] = ID_A_E6;
	accept_ok(st, ids[0]);
	check_every_token(st, ids, 1);
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(ID_97_A5) && bit(BYTE0 + 0x97) && !bit(ID_EOS) && !bit(BYTE0 + 0xe6));
	ck_assert(!ops->is_complete(st));
	ids[1] = ID_97_A5;
	accept_ok(st, ids[1]);
	check_every_token(st, ids, 2);
	ck_assert(ops->is_complete(st));
	ops->reset(st);
	/* the same character as three byte tokens */
	const int32_t bytes[4] = {BYTE0 + 'a', BYTE0 + 0xe6, BYTE0 + 0x97, BYTE0 + 0xa5};
	for (int i = 0; i < 4; i++) {
		check_every_token(st, bytes, (size_t)i);
		accept_ok(st, bytes[i]);
	}
	ck_assert(ops->is_complete(st));
	ops->free(st);
	/* a class: the lead byte is allowed while some character of the
	 * class begins with it */
	st = compile_ok(tiny, "root ::= [日-本]+");
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(BYTE0 + 0xe6) && bit(ID_NIHON) && !bit(BYTE0 + 0xe5) && !bit(ID_A_E6));
	ops->free(st);
}
END_TEST

/* End of generation only where the grammar may end; after it nothing. */
START_TEST(end_of_generation)
{
	void *st = compile_ok(tiny, "root ::= \"ab\" \"c\"?");
	char err[BELT_ERR_SIZE];
	ops->allowed(st, mask, N_TINY);
	ck_assert(!bit(ID_EOS) && !bit(ID_EOT) && bit(ID_AB) && bit(ID_ABC) && bit(BYTE0 + 'a'));
	ck_assert_int_eq(ops->accept(st, ID_EOS, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "not allowed here"), "%s", err);
	accept_ok(st, ID_AB);
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(ID_EOS) && bit(ID_EOT) && bit(BYTE0 + 'c') && !bit(ID_ABC));
	accept_ok(st, ID_EOT);
	ck_assert(ops->is_complete(st));
	ops->allowed(st, mask, N_TINY);
	for (int32_t t = 0; t < N_TINY; t++)
		ck_assert_msg(!bit(t), "token %d allowed after the end", t);
	ck_assert_int_eq(ops->accept(st, BYTE0 + 'c', err, sizeof err), -1);
	ck_assert_msg(strstr(err, "ended"), "%s", err);
	/* control and unknown tokens have no text: never allowed */
	ops->reset(st);
	ck_assert_int_eq(ops->accept(st, 0, err, sizeof err), -1);
	ck_assert_int_eq(ops->accept(st, 1, err, sizeof err), -1);
	ck_assert_int_eq(ops->accept(st, -1, err, sizeof err), -1);
	ck_assert_int_eq(ops->accept(st, N_TINY, err, sizeof err), -1);
	ops->free(st);
	/* a grammar of the empty string allows only the end; user-defined
	 * pieces are their text */
	st = compile_ok(tiny, "root ::= \"\" | \"<|tool|>\"");
	ops->allowed(st, mask, N_TINY);
	ck_assert(bit(ID_EOS) && bit(ID_TOOL) && bit(BYTE0 + '<'));
	ops->free(st);
}
END_TEST

/* allowed() fills (n_vocab + 31) / 32 words, no bits from n_vocab, for
 * logits longer or shorter than the vocabulary; and allocates nothing. */
START_TEST(mask_words)
{
	void *st = compile_ok(tiny, "root ::= .*");
	uint32_t m[16];
	memset(m, 0xa5, sizeof m);
	ops->allowed(st, m, N_TINY + 40); /* 307 ids: 10 words */
	ck_assert_uint_eq(m[8] >> (N_TINY % 32), 0);
	ck_assert_uint_eq(m[8] >> (ID_TOOL % 32) & 1, 1);
	ck_assert_uint_eq(m[9], 0);
	ck_assert_uint_eq(m[10], 0xa5a5a5a5u);
	memset(m, 0xa5, sizeof m);
	ops->allowed(st, m, 40);
	ck_assert_uint_eq(m[0], 0xfffffffcu); /* </s> (complete at the start) and bytes 0-28 */
	ck_assert_uint_eq(m[1], 0xff);
	ck_assert_uint_eq(m[2], 0xa5a5a5a5u);
	counting = 1;
	for (int i = 0; i < 100; i++)
		ops->allowed(st, m, N_TINY);
	counting = 0;
	ck_assert_int_eq(allocations, 0);
	ops->free(st);
}
END_TEST

START_TEST(reset_and_kind)
{
	void *st = compile_ok(tiny, "root ::= \"a\"+ \"b\"");
	uint32_t start[(N_TINY + 31) / 32];
	ops->allowed(st, start, N_TINY);
	accept_ok(st, BYTE0 + 'a');
	accept_ok(st, BYTE0 + 'b');
	ck_assert(ops->is_complete(st));
	ops->reset(st);
	ck_assert(!ops->is_complete(st));
	ops->allowed(st, mask, N_TINY);
	ck_assert(!memcmp(mask, start, sizeof start));
	ops->free(st);
	ops->free(NULL);
	char err[BELT_ERR_SIZE];
	ck_assert_int_eq(ops->compile("root ::= \"a\"", 12, "lark", tiny, &st, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "reads kinds 'gbnf' and 'json-schema', not 'lark'"), "%s", err);
}
END_TEST

/* ---- errors ---- */

START_TEST(errors)
{
	refused("root ::= \"abc", "1:14: ", "expected '\"' to end the literal begun at column 10");
	refused("root ::= \"abc\nx ::= \"y\"", "1:14: ", "expected '\"'");
	refused("root ::= [a-", "1:13: ", "expected ']' to end the class begun at column 10");
	refused("root ::= [ab\n", "1:13: ", "expected ']'");
	refused("root ::= \"\\q\"", "1:11: ", "unknown escape '\\q'");
	refused("root ::= \"\\", "1:11: ", "expected a character after '\\'");
	refused("root ::= \"\\x4\"", "1:14: ", "expected 2 hex digits after '\\x'");
	refused("root ::= \"\\u12g4\"", "1:15: ", "expected 4 hex digits after '\\u'");
	refused("root ::= \"\\U00110000\"", "1:11: ", "U+110000 is above U+10FFFF");
	refused("root ::= [\\uD800]", "1:11: ", "surrogate");
	refused("root ::= [z-a]", "1:11: ", "runs backwards");
	refused("root ::= []", "1:11: ", "an empty class matches nothing");
	refused("root ::= \"a\"{3,1}", "1:16: ", "repetition {3,1}: the maximum 1 is below the minimum 3");
	refused("root ::= \"a\"{3", "1:15: ", "expected ',' or '}'");
	refused("root ::= \"a\"{,3}", "1:14: ", "expected a number");
	refused("root ::= \"a\"{100001}", "1:14: ", "repetition count above 100000");
	char big[256] = "root ::=";
	for (int i = 0; i < 11; i++)
		strcat(big, " \"a\"{100000}");
	refused(big, "1:", "more than 1048576 elements");
	refused("root ::= *", "1:10: ", "'*' must follow an element");
	refused("root ::= (\"a\" | \"b\"", "1:20: ", "expected ')' to close the group begun on line 1");
	refused("root ::= \"a\" )", "1:14: ", "unexpected ')'");
	refused("root ::= \"a\" ::= \"b\"", "1:14: ", "expected the end of the line before '::='");
	refused("root ::= \"a\" @", "1:14: ", "expected an element");
	refused("root := \"a\"", "1:6: ", "expected '::=' after the rule name 'root'");
	refused("root ::= \"a\"\n  \"b\"", "2:3: ", "expected a rule name, got '\"'");
	refused("root ::= \"a\"\nroot ::= \"b\"", "2:1: ", "rule 'root' is defined twice (first on line 1)");
	refused("root ::= item+", "1:10: ", "undefined rule 'item'");
	refused("value ::= \"x\"", "1:1: ", "no rule 'root'");
	refused("", "1:1: ", "the grammar is empty");
	refused("# nothing\n\n", "3:1: ", "the grammar is empty");
	refused("root ::= \"\xff\"", "1:11: ", "invalid UTF-8");
	refused("root ::= \"\xe6\x97\"", "1:11: ", "invalid UTF-8");
	refused_n("root ::= \"a\0\"", 13, "1:12: ", "NUL");
	refused("root ::= \"a\" root", "1:1: ", "rule 'root' matches no string");
	refused("root ::= [^\\x00-\\U0010FFFF]", "1:1: ", "matches no string");
	/* left recursion: direct, indirect, behind a nullable rule */
	refused("root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]", "2:1: ",
		"rule 'expr' is left-recursive: expr -> expr");
	refused("root ::= a\na ::= b \"x\" | \"y\"\nb ::= a \"z\"", "2:1: ",
		"rule 'a' is left-recursive: a -> b -> a");
	refused("root ::= ws root \"x\" | \"y\"\nws ::= \" \"?", "1:1: ",
		"rule 'root' is left-recursive");
	refused("root ::= (root \"a\")?", "1:1: ", "rule 'root' is left-recursive");
	char deep[512];
	memset(deep, '(', sizeof deep);
	memcpy(deep, "root ::= ", 9);
	deep[sizeof deep - 1] = 0;
	refused(deep, "1:210: ", "groups nested more than 200 deep");
}
END_TEST

/* ---- the shared grammars ---- */

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "%s", path);
	char *b = malloc(1 << 16);
	ck_assert(b);
	*n = fread(b, 1, (1 << 16) - 1, f);
	b[*n] = 0;
	fclose(f);
	return b;
}

/* The .gbnf files of a shared folder, sorted. */
static int gbnf_files(const char *rel, char names[][48], int cap)
{
	DIR *d = opendir(shared_path(rel));
	ck_assert_msg(d, "%s", shared_path(rel));
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t k = strlen(e->d_name);
		if (k > 5 && k < 48 && !strcmp(e->d_name + k - 5, ".gbnf") && n < cap)
			memcpy(names[n++], e->d_name, k + 1);
	}
	closedir(d);
	qsort(names, (size_t)n, 48, (int (*)(const void *, const void *))strcmp);
	return n;
}

START_TEST(shipped_grammars_compile)
{
	struct belt_tokenizer *real[2] = {load_vocab(shared_path("models/pycoder29M.f16.gguf")),
					  load_vocab(shared_path("vocab/ggml-vocab-llama-bpe.gguf"))};
	char names[32][48];
	int n = gbnf_files("grammars/gbnf", names, 32);
	ck_assert_int_ge(n, 8);
	for (int i = 0; i < n; i++) {
		char rel[128];
		snprintf(rel, sizeof rel, "grammars/gbnf/%.47s", names[i]);
		size_t len;
		char *text = slurp(shared_path(rel), &len);
		const struct belt_tokenizer *toks[3] = {tiny, real[0], real[1]};
		for (int v = 0; v < 3; v++) {
			char err[BELT_ERR_SIZE];
			void *st = NULL;
			ck_assert_msg(ops->compile(text, len, "gbnf", toks[v], &st, err, sizeof err) == 0,
				      "%s: %s", names[i], err);
			ops->allowed(st, mask, belt_tok_n_vocab(toks[v]));
			bool any = false;
			for (int32_t w = 0; w < (belt_tok_n_vocab(toks[v]) + 31) / 32; w++)
				any |= mask[w] != 0;
			ck_assert_msg(any, "%s: no token allowed at the start", names[i]);
			ops->free(st);
		}
		free(text);
	}
	printf("grammar_gbnf: %d shipped grammars compile on 3 vocabularies\n", n);
	belt_tok_free(real[0]);
	belt_tok_free(real[1]);
}
END_TEST

START_TEST(bad_grammars_refused)
{
	static const struct {
		const char *file, *where, *want;
	} expect[] = {
		{"bad-escape.gbnf", "1:11: ", "unknown escape '\\q'"},
		{"bad-repetition.gbnf", "1:16: ", "the maximum 1 is below the minimum 3"},
		{"codepoint-too-large.gbnf", "1:13: ", "expected 2 hex digits after '\\x'"},
		{"double-definition-op.gbnf", "1:14: ", "expected the end of the line before '::='"},
		{"empty.gbnf", "1:1: ", "the grammar is empty"},
		{"invalid-utf8.gbnf", "1:1: ", "invalid UTF-8"},
		{"left-recursion.gbnf", "2:1: ", "rule 'expr' is left-recursive: expr -> expr"},
		{"no-root.gbnf", "1:1: ", "no rule 'root'"},
		{"unclosed-group.gbnf", "2:1: ", "expected ')'"},
		{"undefined-rule.gbnf", "1:10: ", "undefined rule 'item'"},
		{"unterminated-class.gbnf", "1:13: ", "expected ']'"},
		{"unterminated-literal.gbnf", "1:14: ", "expected '\"'"},
	};
	char names[64][48];
	int n = gbnf_files("grammars/bad", names, 64), known = 0;
	ck_assert_int_ge(n, 12);
	for (int i = 0; i < n; i++) {
		char rel[128];
		snprintf(rel, sizeof rel, "grammars/bad/%.47s", names[i]);
		size_t len;
		char *text = slurp(shared_path(rel), &len);
		const char *where = "", *want = ":"; /* a file not listed: a place, at least */
		for (size_t k = 0; k < sizeof expect / sizeof *expect; k++)
			if (!strcmp(expect[k].file, names[i])) {
				where = expect[k].where;
				want = expect[k].want;
				known++;
			}
		refused_n(text, len, where, want);
		free(text);
	}
	ck_assert_int_eq(known, 12);
	printf("grammar_gbnf: %d bad grammars refused\n", n);
}
END_TEST

/* ---- real vocabularies ---- */

/* Tokens whose bytes make text, as a model may generate them: the
 * longest piece at each place (encoding would give a SentencePiece
 * vocabulary's leading space, which follows no prompt). */
static size_t tokens_of(const struct belt_tokenizer *t, const char *text, int32_t *ids, size_t cap)
{
	size_t n = 0, len = strlen(text);
	for (size_t at = 0; at < len; n++) {
		size_t best = 0;
		for (int32_t id = 0; id < belt_tok_n_vocab(t); id++) {
			size_t k;
			const char *b = belt_tok_bytes(t, id, &k);
			if (k > best && k <= len - at && !memcmp(b, text + at, k)) {
				best = k;
				ck_assert(n < cap);
				ids[n] = id;
			}
		}
		ck_assert_msg(best, "no token for '%s'", text + at);
		at += best;
	}
	return n;
}

/* Feed the tokens of text to grammar: each is allowed and taken up to the
 * refused_at-th (-1: all), which is neither; 50 tokens the mask leaves
 * out are refused at each step. bpe: belt_tok_encode's tokens. */
static void feed_tokens(const struct belt_tokenizer *t, const char *grammar, const char *text,
			long refused_at, bool complete, bool bpe)
{
	int32_t ids[512];
	size_t n;
	char err[BELT_ERR_SIZE];
	if (bpe)
		ck_assert_msg(belt_tok_encode(t, text, strlen(text), false, ids, 512, &n, err,
					      sizeof err) == 0, "%s", err);
	else
		n = tokens_of(t, text, ids, 512);
	void *st = compile_ok(t, grammar);
	int32_t nv = belt_tok_n_vocab(t);
	for (size_t i = 0; i < n; i++) {
		ops->allowed(st, mask, nv);
		for (int k = 0, tried = 0; tried < 50 && k < 100000; k++) {
			int32_t x = (int32_t)(((uint64_t)k * 2654435761u + i) % (uint64_t)nv);
			if (!bit(x)) {
				ck_assert_msg(ops->accept(st, x, err, sizeof err) == -1,
					      "token %d taken but not allowed", x);
				tried++;
			}
		}
		if ((long)i == refused_at) {
			ck_assert_msg(!bit(ids[i]), "token %zu (%d) of '%s' allowed", i, ids[i], text);
			ck_assert_int_eq(ops->accept(st, ids[i], err, sizeof err), -1);
			ops->free(st);
			return;
		}
		ck_assert_msg(bit(ids[i]), "token %zu (%d) of '%s' not allowed", i, ids[i], text);
		accept_ok(st, ids[i]);
	}
	ck_assert(refused_at < 0);
	ck_assert_int_eq(ops->is_complete(st), complete);
	ops->allowed(st, mask, nv);
	ck_assert_int_eq(bit(belt_tok_eos(t)), complete);
	ops->free(st);
}

#define feed_real(t, g, s, k, c) feed_tokens(t, g, s, k, c, false)

/* allowed() against accept() for every token of t after the tokens of
 * prefix: those allowed are taken (then the state is rebuilt), the others
 * refused. */
static void every_token_real(const struct belt_tokenizer *t, const char *grammar, const char *prefix)
{
	int32_t ids[128];
	size_t n = tokens_of(t, prefix, ids, 128);
	int32_t nv = belt_tok_n_vocab(t);
	void *st = compile_ok(t, grammar);
	char err[BELT_ERR_SIZE];
	for (size_t i = 0; i < n; i++)
		accept_ok(st, ids[i]);
	ops->allowed(st, mask, nv);
	uint32_t *saved = malloc(((size_t)nv + 31) / 32 * sizeof *saved);
	ck_assert(saved);
	memcpy(saved, mask, ((size_t)nv + 31) / 32 * sizeof *saved);
	int32_t allowed = 0;
	for (int32_t x = 0; x < nv; x++) {
		bool want = saved[x / 32] >> (x % 32) & 1;
		int rc = ops->accept(st, x, err, sizeof err);
		ck_assert_msg((rc == 0) == want, "after '%s': token %d allowed %d, accept %d (%s)", prefix,
			      x, want, rc, rc ? err : "");
		if (rc == 0) {
			allowed++;
			ops->reset(st);
			for (size_t i = 0; i < n; i++)
				accept_ok(st, ids[i]);
		}
	}
	printf("grammar_gbnf: after '%s' %d of %d tokens allowed, each taken, the others refused\n",
	       prefix, allowed, nv);
	free(saved);
	ops->free(st);
}

static char *grammar_file(const char *name)
{
	char rel[128];
	size_t n;
	snprintf(rel, sizeof rel, "grammars/gbnf/%s", name);
	return slurp(shared_path(rel), &n);
}

START_TEST(real_spm)
{
	struct belt_tokenizer *t = load_vocab(shared_path("models/pycoder29M.f16.gguf"));
	char *json = grammar_file("json.gbnf");
	feed_real(t, json, "{\"name\": \"Ada\", \"tags\": [1, 2.5e3, true, null], \"x\": {}}", -1, true);
	feed_real(t, json, "{\"unicode\": \"日本語 \\u00e9\"}\n", -1, true);
	feed_real(t, json, "{\"a\": tru", -1, false);
	feed_real(t, json, "{\"a\": 01}", 5, false); /* "01" is one piece: 0 then 1 is no number */
	free(json);
	char *c = grammar_file("c.gbnf");
	feed_real(t, c, "int main(){return 0;}", -1, true);
	free(c);
	belt_tok_free(t);
}
END_TEST

/* allowed() is exactly what accept() takes, token by token over the whole
 * vocabulary, where the walk's shortcuts matter: inside a string (a
 * looping class), inside a character, between values, in a number. */
START_TEST(real_every_token)
{
	struct belt_tokenizer *t = load_vocab(shared_path("models/pycoder29M.f16.gguf"));
	char *json = grammar_file("json.gbnf");
	every_token_real(t, json, "{\"a\": \"x y");
	every_token_real(t, json, "{\"a\": \"x\xe6\x97");
	every_token_real(t, json, "{\"a\": [1, ");
	every_token_real(t, json, "{\"a\": 12");
	free(json);
	char *list = grammar_file("list.gbnf");
	every_token_real(t, list, "- item\n- ");
	free(list);
	belt_tok_free(t);
}
END_TEST

/* llama-bpe's pieces cut inside characters: 語 and 誇 are pieces of 3 and
 * of 1 + 2 bytes. */
START_TEST(real_bpe)
{
	struct belt_tokenizer *t = load_vocab(shared_path("vocab/ggml-vocab-llama-bpe.gguf"));
	const char *text = "日本語の誇り\nテスト";
	int32_t ids[64];
	size_t n, inside = 0;
	char err[BELT_ERR_SIZE];
	ck_assert(belt_tok_encode(t, text, strlen(text), false, ids, 64, &n, err, sizeof err) == 0);
	for (size_t i = 0; i < n; i++) { /* tokens that are no whole characters */
		size_t len, k = 0;
		const unsigned char *b = (const unsigned char *)belt_tok_bytes(t, ids[i], &len);
		while (k < len && (b[k] & 0xc0) != 0x80) /* a lead byte and its length */
			k += b[k] < 0x80 ? 1 : b[k] >= 0xf0 ? 4 : b[k] >= 0xe0 ? 3 : 2;
		inside += k != len;
	}
	ck_assert_msg(inside > 0, "no token of '%s' ends inside a character", text);
	char *jp = grammar_file("japanese.gbnf");
	feed_tokens(t, jp, text, -1, true, true);
	feed_tokens(t, "root ::= [^語]*", "日本語", 1, false, true);
	free(jp);
	belt_tok_free(t);
}
END_TEST

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What the mask costs per token: the JSON grammar over a JSON text (each
 * token accepted, the next mask computed), on 32,000 and 128,256 pieces,
 * first with nothing made yet, then again after a reset with the masks
 * and tables kept (printed; bounded loosely, to catch a walk gone
 * quadratic). */
START_TEST(mask_cost)
{
	static const char *const files[] = {"models/pycoder29M.f16.gguf",
					    "vocab/ggml-vocab-llama-bpe.gguf"};
	char *json = grammar_file("json.gbnf");
	for (int v = 0; v < 2; v++) {
		struct belt_tokenizer *t = load_vocab(shared_path(files[v]));
		const char *text = "{\"key\": [1, 2, {\"inner\": \"a long string value with words in "
				   "it\", \"k2\": [true, false, null, {\"deep\": {\"deeper\": [1,2,3]}}]}], "
				   "\"z\": \"more text here\"}";
		int32_t ids[128];
		size_t n = tokens_of(t, text, ids, 128);
		double t0 = seconds();
		void *st = compile_ok(t, json);
		double pass[2], t1 = seconds();
		for (int p = 0; p < 2; p++) {
			double a = seconds();
			ops->reset(st);
			for (size_t i = 0; i < n; i++)
				accept_ok(st, ids[i]);
			pass[p] = (seconds() - a) / (double)n;
		}
		ck_assert(ops->is_complete(st));
		double a = seconds();
		for (int i = 0; i < 1000; i++)
			ops->allowed(st, mask, belt_tok_n_vocab(t));
		double copy = (seconds() - a) / 1000;
		printf("grammar_gbnf: json.gbnf on %d tokens: compile %.0f ms; per token (accepted, the "
		       "next mask computed) %.0f us, again %.0f us; allowed() %.1f us\n",
		       belt_tok_n_vocab(t), (t1 - t0) * 1e3, pass[0] * 1e6, pass[1] * 1e6, copy * 1e6);
		ck_assert_msg(pass[0] < 0.25 && pass[1] < 0.25, "%.3f s per token", pass[0]);
		ops->free(st);
		belt_tok_free(t);
	}
	free(json);
}
END_TEST

/* ---- in belt_generate ---- */

struct gen {
	int32_t ids[512];
	size_t n;
};

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct gen *g = ud;
	if (id >= 0 && g->n < 512)
		g->ids[g->n++] = id;
	return true;
}

static struct belt_model *load_model(const char *rel)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = shared_path(rel);
	mp.n_threads = 2;
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	return m;
}

/* Generate from prompt under grammar text gtext; the tokens, each taken
 * again by a fresh state of the grammar, which is complete where the
 * model chose the end. Returns the stop reason. */
static enum belt_stop generate_checked(struct belt_session *s, const struct belt_tokenizer *tok,
				       const char *gtext, const char *prompt, uint32_t n_predict,
				       const struct belt_sampling *sp, bool stop_at_eog, struct gen *out)
{
	char err[BELT_ERR_SIZE];
	struct belt_grammar *g;
	ck_assert_msg(belt_grammar_new(tok, NULL, "gbnf", gtext, strlen(gtext), &g, err, sizeof err) == 0,
		      "%s", err);
	int32_t ids[64];
	size_t n;
	ck_assert(belt_tok_encode(tok, prompt, strlen(prompt), true, ids, 64, &n, err, sizeof err) == 0);
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = n_predict;
	gp.stop_at_eog = stop_at_eog;
	gp.sampling = sp;
	gp.grammar = g;
	memset(out, 0, sizeof *out);
	ck_assert_msg(belt_generate(s, ids, n, &gp, collect, out, err, sizeof err) == 0, "%s", err);
	enum belt_stop stop = belt_session_stats(s)->stop;
	void *st = compile_ok(tok, gtext);
	for (size_t i = 0; i < out->n; i++)
		accept_ok(st, out->ids[i]);
	if (stop == BELT_STOP_EOG)
		ck_assert_msg(ops->is_complete(st), "stopped at the end of generation, incomplete");
	ops->free(st);
	belt_grammar_free(g);
	return stop;
}

/* A session with default parameters on stories260K (loaded into *m). */
static struct belt_session *stories_session(struct belt_model **m)
{
	*m = load_model("models/stories260K.f32.gguf");
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(*m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

/* Sampled generations (20 seeds per grammar, penalties on some) keep to
 * the grammar; greedy ones twice give the same tokens (the grammar is
 * reset at each start). */
START_TEST(generate_sampled)
{
	struct belt_model *m;
	struct belt_session *s = stories_session(&m);
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	static const char *const files[] = {"json.gbnf", "chess.gbnf", "arithmetic.gbnf"};
	unsigned eog = 0, runs = 0;
	for (size_t f = 0; f < 3; f++) {
		char *text = grammar_file(files[f]);
		for (uint64_t seed = 1; seed <= 20; seed++) {
			struct belt_sampling samp;
			belt_sampling_default(&samp);
			samp.seed = seed;
			if (seed % 4 == 0)
				samp.repeat_penalty = 1.3f;
			struct gen g;
			eog += generate_checked(s, tok, text, "Once upon a time", 32, &samp, true, &g) ==
			       BELT_STOP_EOG;
			runs++;
		}
		struct gen a, b;
		generate_checked(s, tok, text, "The game:", 24, NULL, true, &a);
		generate_checked(s, tok, text, "The game:", 24, NULL, true, &b);
		ck_assert(a.n == b.n && !memcmp(a.ids, b.ids, a.n * sizeof *a.ids));
		free(text);
	}
	printf("grammar_gbnf: %u sampled generations keep to their grammars (%u ended by the model)\n",
	       runs, eog);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* The end: only the end-of-generation token is allowed once the grammar
 * can go no further, so generation stops there (BELT_STOP_EOG); with
 * stop_at_eog off the grammar has ended after it (BELT_STOP_GRAMMAR). */
START_TEST(generate_stops)
{
	struct belt_model *m;
	struct belt_session *s = stories_session(&m);
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	struct gen g;
	ck_assert_int_eq(generate_checked(s, tok, "root ::= \"cat\" | \"dog\"", "Once", 16, NULL, true, &g),
			 BELT_STOP_EOG);
	size_t n = g.n;
	ck_assert_uint_ge(n, 1);
	ck_assert_int_eq(generate_checked(s, tok, "root ::= \"cat\" | \"dog\"", "Once", 16, NULL, false, &g),
			 BELT_STOP_GRAMMAR);
	ck_assert_uint_eq(g.n, n + 1);
	ck_assert(belt_tok_is_eog(tok, g.ids[n]));
	ck_assert_int_eq(belt_session_stats(s)->n_generated, n + 1);
	belt_session_free(s);
	belt_model_free(m);
}
END_TEST

/* Forced runs: on a synthetic model whose vocabulary has one token per
 * byte (but for pieces that begin with " t", belt-synth's filler), each
 * literal byte of a grammar is the only token it allows, and such runs
 * go through the batched table without logits of their own. Greedy, the
 * tokens equal those picked position by position here: the logits of
 * belt_session_eval for the last token, masked by a state of the same
 * grammar, argmax lowest id first. */
START_TEST(generate_forced)
{
	char path[4096], err[BELT_ERR_SIZE];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/belt-forced-%ld.gguf", tmp && *tmp ? tmp : "/tmp",
		 (long)getpid());
	struct synth_shape sh;
	synth_default(&sh);
	sh.seed = 5;
	ck_assert_msg(synth_write(&sh, path, err, sizeof err) == 0, "%s", err);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	mp.n_threads = 2;
	struct belt_model *m;
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	unlink(path);
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	struct belt_session_params spar;
	belt_session_params_default(&spar);
	struct belt_session *s, *r;
	ck_assert(belt_session_create(m, &spar, &s, err, sizeof err) == 0);
	ck_assert(belt_session_create(m, &spar, &r, err, sizeof err) == 0);
	const char *gtext = "root ::= \"{\\\"name\\\": \\\"\" [a-z]{2,5} \"\\\", \\\"tags\\\": [\" "
			    "(\"\\\"x\\\"\" [0-9]) (\", \\\"x\\\"\" [0-9])* \"]}\"";
	struct gen g;
	generate_checked(s, tok, gtext, "Once", 60, NULL, true, &g);
	uint32_t forced = belt_session_stats(s)->n_forced;
	ck_assert_uint_ge(forced, 20);
	/* position by position */
	int32_t n_vocab = belt_tok_n_vocab(tok);
	float *logits = malloc((size_t)n_vocab * sizeof *logits);
	uint32_t *mask = malloc(((size_t)n_vocab + 31) / 32 * sizeof *mask);
	ck_assert(logits && mask);
	int32_t ids[80];
	size_t n;
	ck_assert(belt_tok_encode(tok, "Once", 4, true, ids, 64, &n, err, sizeof err) == 0);
	void *st = compile_ok(tok, gtext);
	ck_assert(belt_session_eval(r, ids, n, 0, logits, err, sizeof err) == 0);
	for (size_t i = 0; i < g.n; i++) {
		ops->allowed(st, mask, n_vocab);
		int32_t best = -1;
		for (int32_t t = 0; t < n_vocab; t++)
			if ((mask[t / 32] >> (t % 32) & 1) && (best < 0 || logits[t] > logits[best]))
				best = t;
		ck_assert_msg(best == g.ids[i],
			      "forced runs: token %zu is %d, %d position by position", i, g.ids[i],
			      best);
		accept_ok(st, best);
		if (i + 1 < g.n)
			ck_assert(belt_session_eval(r, &g.ids[i], 1, (uint32_t)(n + i), logits, err,
						    sizeof err) == 0);
	}
	printf("grammar_gbnf: forced runs: %zu tokens, %u of them forced and batched, as position "
	       "by position\n", g.n, forced);
	ops->free(st);
	free(logits);
	free(mask);
	belt_session_free(s);
	belt_session_free(r);
	belt_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("grammar_gbnf");
	/* the language on the tiny vocabulary; real vocabularies; in
	 * belt_generate (CK_RUN_CASE picks one: run-tests.sh runs the first
	 * under valgrind) */
	TCase *lang = tcase_create("language"), *vocab = tcase_create("vocab"),
	      *gen = tcase_create("generate");
	TCase *all[3] = {lang, vocab, gen};
	for (int i = 0; i < 3; i++) {
		tcase_add_checked_fixture(all[i], setup, teardown);
		tcase_set_timeout(all[i], 0); /* no limit: CI bounds the run */
		suite_add_tcase(s, all[i]);
	}
	tcase_add_test(gen, generate_forced);
	tcase_add_test(lang, literals);
	tcase_add_test(lang, alternation_and_groups);
	tcase_add_test(lang, repetition);
	tcase_add_test(lang, bounded_repetition);
	tcase_add_test(lang, bounded_repetition_large);
	tcase_add_test(lang, escapes);
	tcase_add_test(lang, nul_character);
	tcase_add_test(lang, classes);
	tcase_add_test(lang, unicode);
	tcase_add_test(lang, comments_and_lines);
	tcase_add_test(lang, rules_and_recursion);
	tcase_add_test(lang, ambiguity);
	tcase_add_test(lang, deep_stacks);
	tcase_add_test(lang, too_ambiguous);
	tcase_add_test(lang, token_ends_inside_a_character);
	tcase_add_test(lang, end_of_generation);
	tcase_add_test(lang, mask_words);
	tcase_add_test(lang, reset_and_kind);
	tcase_add_test(lang, errors);
	tcase_add_test(lang, bad_grammars_refused);
	tcase_add_test(vocab, shipped_grammars_compile);
	tcase_add_test(vocab, real_spm);
	tcase_add_test(vocab, real_every_token);
	tcase_add_test(vocab, real_bpe);
	tcase_add_test(vocab, mask_cost);
	tcase_add_test(gen, generate_sampled);
	tcase_add_test(gen, generate_stops);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
