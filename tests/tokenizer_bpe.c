/* Tests for the tokenizer families against llama.cpp's vocab test cases in
 * $BELT_SHARED_DIR/vocab (every vocabulary there with a .gguf and
 * .inp/.out), plus round trips, special tokens, decoding and bad input.
 *
 * Round trips: SentencePiece and byte-level BPE are lossless
 * (decode(encode(x)) == x, for SPM after dropping the dummy-prefix space);
 * WordPiece is not (it lowercases, strips accents, drops spacing and
 * control characters), so it is only checked for its normal form. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"
#include "belt/tokenizer.h"

/* ---- helpers ---- */

static const char *shared_dir(void)
{
	const char *d = getenv("BELT_SHARED_DIR");
	ck_assert_msg(d && *d, "BELT_SHARED_DIR is not set");
	return d;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert(buf);
	ck_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static bool exists(const char *path)
{
	return access(path, R_OK) == 0;
}

static struct belt_tokenizer *load_path(const char *path, char *model,
					size_t model_sz)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g, "%s", err);
	if (model) {
		struct belt_gguf_str m = { "", 0 };
		belt_gguf_get_str(g, "tokenizer.ggml.model", &m, err, sizeof err);
		snprintf(model, model_sz, "%.*s", (int)m.len, m.ptr);
	}
	struct belt_tokenizer *t = NULL;
	int rc = belt_tok_load(g, &t, err, sizeof err);
	belt_gguf_close(g); /* the tokenizer owns its copy */
	ck_assert_msg(rc == 0 && t, "%s", err);
	return t;
}

static struct belt_tokenizer *load_vocab(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf", shared_dir(),
		 name);
	return load_path(path, NULL, 0);
}

struct ids {
	int32_t *v;
	size_t n;
};

/* Encode, exercising the "cap too small, call again" rule. */
static struct ids encode_f(const struct belt_tokenizer *t, const char *text,
			   size_t len, unsigned flags)
{
	char err[BELT_ERR_SIZE];
	size_t need = 0, n2 = 0;
	ck_assert_msg(belt_tok_encode_flags(t, text, len, flags, NULL, 0, &need,
					    err, sizeof err) == 0, "%s", err);
	struct ids a = { malloc((need ? need : 1) * sizeof(int32_t)), need };
	ck_assert(a.v);
	ck_assert_msg(belt_tok_encode_flags(t, text, len, flags, a.v, need, &n2,
					    err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(n2, need);
	return a;
}

static struct ids encode(const struct belt_tokenizer *t, const char *s)
{
	return encode_f(t, s, strlen(s), 0);
}

static void print_ids(const char *label, const int32_t *v, size_t n)
{
	fprintf(stderr, "  %s (%zu):", label, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %d", (int)v[i]);
	fprintf(stderr, "\n");
}

static void expect_ids(const struct belt_tokenizer *t, const char *text,
		       unsigned flags, const int32_t *want, size_t n)
{
	struct ids got = encode_f(t, text, strlen(text), flags);
	bool same = got.n == n && (n == 0 || memcmp(got.v, want, n * sizeof *want) == 0);
	if (!same) {
		fprintf(stderr, "text '%s' flags %u\n", text, flags);
		print_ids("expected", want, n);
		print_ids("got", got.v, got.n);
	}
	ck_assert_msg(same, "ids differ for '%s'", text);
	free(got.v);
}

#define IDS(...) (const int32_t[]){ __VA_ARGS__ }, sizeof((const int32_t[]){ __VA_ARGS__ }) / sizeof(int32_t)

struct text {
	char *p;
	size_t n, cap;
};

static void text_add(struct text *s, const char *p, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = 2 * (s->n + n + 1);
		s->p = realloc(s->p, s->cap);
		ck_assert(s->p);
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

/* Strict UTF-8 check. */
static bool valid_utf8(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2
				       : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
		if (len == 0 || i + len > n)
			return false;
		unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		for (unsigned k = 1; k < len; k++) {
			unsigned d = p[i + k];
			if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
				return false;
		}
		i += len;
	}
	return true;
}

/* Decode through one stream; every piece of output must be whole UTF-8
 * characters (checked per call), then flush. */
static struct text decode_all(const struct belt_tokenizer *t,
			      const int32_t *ids, size_t n, bool strip)
{
	struct text s = { 0 };
	struct belt_tok_stream st;
	size_t cap = 32 + belt_tok_max_piece(t);
	char *buf = malloc(cap);
	ck_assert(buf);
	belt_tok_stream_init(&st, strip);
	text_add(&s, "", 0);
	for (size_t i = 0; i < n; i++) {
		size_t k = belt_tok_decode(t, &st, ids[i], buf, cap);
		ck_assert(valid_utf8((const unsigned char *)buf, k));
		text_add(&s, buf, k);
	}
	size_t k = belt_tok_flush(&st, buf, cap);
	ck_assert(valid_utf8((const unsigned char *)buf, k));
	text_add(&s, buf, k);
	free(buf);
	return s;
}

/* ---- llama.cpp's vocab test cases ---- */

struct cases {
	char *inp, *out;
	const char *text[128];
	size_t text_len[128];
	const char *line[128];
	size_t line_len[128];
	int n;
};

static bool read_cases(const char *base, struct cases *c)
{
	char path[1024];
	size_t n;
	memset(c, 0, sizeof *c);
	snprintf(path, sizeof path, "%s.inp", base);
	c->inp = read_file(path, &n);
	snprintf(path, sizeof path, "%s.out", base);
	c->out = read_file(path, &n);
	if (!c->inp || !c->out) {
		free(c->inp);
		free(c->out);
		return false;
	}
	static const char sep[] = "\n__ggml_vocab_test__\n";
	for (char *p = c->inp, *q; (q = strstr(p, sep)); p = q + strlen(sep)) {
		ck_assert(c->n < 128);
		c->text[c->n] = p;
		c->text_len[c->n++] = (size_t)(q - p);
	}
	int k = 0;
	for (char *p = c->out; *p && k < c->n; k++) {
		char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		c->line[k] = p;
		c->line_len[k] = len;
		p += len + (e != NULL);
	}
	ck_assert_msg(k == c->n, "%s: %d texts but %d id lines", base, c->n, k);
	return true;
}

static void free_cases(struct cases *c)
{
	free(c->inp);
	free(c->out);
}

static struct ids parse_ids(const char *s, size_t len)
{
	struct ids a = { malloc((len + 1) * sizeof(int32_t)), 0 };
	char *tmp = strndup(s, len), *p = tmp, *end;
	ck_assert(a.v && tmp);
	for (;;) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		a.v[a.n++] = (int32_t)v;
		p = end;
	}
	free(tmp);
	return a;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the vocabularies with a .gguf, .gguf.inp and .gguf.out. */
static int list_vocabs(char **names, int max)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/vocab", shared_dir());
	DIR *d = opendir(dir);
	ck_assert_msg(d, "cannot open %s", dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 16 || strncmp(e->d_name, "ggml-vocab-", 11) != 0 ||
		    strcmp(e->d_name + l - 5, ".gguf") != 0)
			continue;
		char p[2048];
		snprintf(p, sizeof p, "%s/%s.inp", dir, e->d_name);
		if (!exists(p))
			continue;
		snprintf(p, sizeof p, "%s/%s.out", dir, e->d_name);
		if (!exists(p))
			continue;
		ck_assert(n < max);
		names[n++] = strndup(e->d_name + 11, l - 16);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, by_name);
	return n;
}

/* All cases of one vocabulary against text file base (.inp/.out);
 * returns the failures. */
static int run_cases(const struct belt_tokenizer *t, const char *label,
		     const char *base, int *n_cases)
{
	struct cases c;
	ck_assert_msg(read_cases(base, &c), "cannot read %s.inp/.out", base);
	int failed = 0;
	for (int i = 0; i < c.n; i++) {
		struct ids want = parse_ids(c.line[i], c.line_len[i]);
		struct ids got = encode_f(t, c.text[i], c.text_len[i], 0);
		if (want.n != got.n ||
		    (want.n && memcmp(want.v, got.v, want.n * sizeof *want.v))) {
			fprintf(stderr, "%s case %d: text '%.*s'\n", label, i,
				(int)c.text_len[i], c.text[i]);
			print_ids("expected", want.v, want.n);
			print_ids("got", got.v, got.n);
			failed++;
		}
		free(want.v);
		free(got.v);
	}
	*n_cases = c.n;
	free_cases(&c);
	return failed;
}

START_TEST(all_vocabs)
{
	char *names[64];
	int n = list_vocabs(names, 64), total = 0, failed = 0;
	for (int v = 0; v < n; v++) {
		char base[1024];
		snprintf(base, sizeof base, "%s/vocab/ggml-vocab-%s.gguf",
			 shared_dir(), names[v]);
		char model[32];
		struct belt_tokenizer *t = load_path(base, model, sizeof model);
		int cases, f = run_cases(t, names[v], base, &cases);
		printf("vocab %-15s (%-5s): %d/%d cases pass\n", names[v], model,
		       cases - f, cases);
		ck_assert_int_eq(cases, 46);
		total += cases;
		failed += f;
		belt_tok_free(t);
		free(names[v]);
	}
	printf("%d vocabularies, %d/%d cases pass\n", n, total - failed, total);
	/* bert-bge, deepseek-coder, deepseek-llm, falcon, gpt-2, llama-bpe,
	 * llama-spm, mpt, phi-3, qwen2, refact, starcoder */
	ck_assert_int_ge(n, 12);
	ck_assert_int_eq(failed, 0);
}
END_TEST

/* Extra: the rebuilt Qwen2 vocabulary on the Qwen3.5 test texts (llama.cpp
 * gives these ids with it too, see vocab/README.md). */
START_TEST(qwen2_on_qwen35_texts)
{
	char base[1024];
	snprintf(base, sizeof base, "%s/vocab/ggml-vocab-qwen35.gguf",
		 shared_dir());
	struct belt_tokenizer *t = load_vocab("qwen2");
	int cases, f = run_cases(t, "qwen2/qwen35", base, &cases);
	printf("qwen2 on qwen35 texts: %d/%d cases pass\n", cases - f, cases);
	ck_assert_int_eq(f, 0);
	belt_tok_free(t);
}
END_TEST

/* ---- round trips ---- */

static bool round_trips(const struct belt_tokenizer *t, const char *text,
			size_t len, bool spm)
{
	struct ids a = encode_f(t, text, len, 0);
	struct text s = decode_all(t, a.v, a.n, spm);
	bool ok = s.n == len && memcmp(s.p, text, len) == 0;
	free(a.v);
	free(s.p);
	return ok;
}

START_TEST(round_trip_all)
{
	char *names[64];
	int n = list_vocabs(names, 64), lossless = 0;
	for (int v = 0; v < n; v++) {
		char base[1024], model[32];
		snprintf(base, sizeof base, "%s/vocab/ggml-vocab-%s.gguf",
			 shared_dir(), names[v]);
		struct belt_tokenizer *t = load_path(base, model, sizeof model);
		bool spm = strcmp(model, "llama") == 0;
		if (strcmp(model, "bert") == 0) {
			printf("round trip %-15s: not lossless (WordPiece), skipped\n",
			       names[v]);
			belt_tok_free(t);
			free(names[v]);
			continue;
		}
		struct cases c;
		ck_assert(read_cases(base, &c));
		int failed = 0;
		for (int i = 0; i < c.n; i++)
			if (!round_trips(t, c.text[i], c.text_len[i], spm)) {
				fprintf(stderr, "%s round trip case %d fails: '%.*s'\n",
					names[v], i, (int)c.text_len[i], c.text[i]);
				failed++;
			}
		/* the whole file at once, separators and all */
		size_t len;
		snprintf(base + strlen(base), sizeof base - strlen(base), ".inp");
		char *all = read_file(base, &len);
		bool whole = round_trips(t, all, len, spm);
		printf("round trip %-15s: %d/%d cases, whole file %s\n", names[v],
		       c.n - failed, c.n, whole ? "exact" : "DIFFERS");
		ck_assert_int_eq(failed, 0);
		ck_assert(whole);
		lossless++;
		free(all);
		free_cases(&c);
		belt_tok_free(t);
		free(names[v]);
	}
	ck_assert_int_ge(lossless, 11);
}
END_TEST

/* What the stream makes of arbitrary bytes: valid characters as they are,
 * each maximal invalid subpart (Unicode's practice) as one U+FFFD. */
static struct text sanitize(const unsigned char *p, size_t n)
{
	struct text s = { 0 };
	text_add(&s, "", 0);
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2
				       : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
		unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		size_t k = 1;
		while (len && k < len && i + k < n &&
		       p[i + k] >= (k == 1 ? lo : 0x80) &&
		       p[i + k] <= (k == 1 ? hi : 0xbf))
			k++;
		if (len && k == len)
			text_add(&s, (const char *)p + i, len);
		else
			text_add(&s, "\xef\xbf\xbd", 3);
		i += len ? k : 1;
	}
	return s;
}

/* Byte-level BPE keeps every byte: NUL, invalid UTF-8, lone surrogates,
 * overlongs. Decoding then gives valid UTF-8 text back exactly, and
 * invalid bytes as U+FFFD (the stream only ever emits valid UTF-8). */
static void check_bytes(const struct belt_tokenizer *t, const char *vocab,
			const char *text, size_t n)
{
	struct ids a = encode_f(t, text, n, 0);
	struct text s = decode_all(t, a.v, a.n, false);
	struct text want = sanitize((const unsigned char *)text, n);
	if (s.n != want.n || memcmp(s.p, want.p, s.n) != 0) {
		fprintf(stderr, "%s: bytes", vocab);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %02x", (unsigned char)text[i]);
		fprintf(stderr, "\n  decode to");
		for (size_t i = 0; i < s.n; i++)
			fprintf(stderr, " %02x", (unsigned char)s.p[i]);
		print_ids("\n  ids", a.v, a.n);
	}
	ck_assert_msg(s.n == want.n && memcmp(s.p, want.p, s.n) == 0,
		      "%s: bytes do not come back", vocab);
	free(a.v);
	free(s.p);
	free(want.p);
}

START_TEST(bpe_any_bytes)
{
	/* vocabularies with a piece for each of the 256 bytes (falcon lacks
	 * 14 control bytes, mpt/refact/starcoder some never in valid UTF-8;
	 * llama.cpp drops those as belt does) */
	static const char *const vocabs[] = { "gpt-2", "llama-bpe", "qwen2",
					      "deepseek-llm", "deepseek-coder" };
	static const char alphabet[] = "ab Z9 \n\t'\xc3\xa9\xe2\x96\x81\xf0\x9f\xa6\x99\x80\xff";
	for (size_t v = 0; v < sizeof vocabs / sizeof vocabs[0]; v++) {
		struct belt_tokenizer *t = load_vocab(vocabs[v]);
		/* deepseek has user-defined pieces for the bytes C0, C1 and
		 * F5-FF (which valid UTF-8 never holds): they decode as the
		 * Latin-1 letters, not U+FFFD */
		bool deepseek = strncmp(vocabs[v], "deepseek", 8) == 0;
		unsigned seed = 777 + (unsigned)v;
		for (int iter = 0; iter < 300; iter++) {
			char text[80];
			size_t n = (size_t)(iter % 60) + 1;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				unsigned r = (seed >> 16) & 0x7fff;
				text[i] = r % 3 ? alphabet[r % (sizeof alphabet - 1)]
						: (char)(r >> 4);
			}
			if (!deepseek)
				check_bytes(t, vocabs[v], text, n);
			/* valid UTF-8 comes back exactly */
			struct text ok = sanitize((const unsigned char *)text, n);
			ck_assert(round_trips(t, ok.p, ok.n, false));
			free(ok.p);
		}
		static const char nasty[] = "a\0b\xed\xa0\x80 \xc0\xaf\xf5\x80 \xe2\x82";
		if (!deepseek)
			check_bytes(t, vocabs[v], nasty, sizeof nasty - 1);
		belt_tok_free(t);
	}
}
END_TEST

/* The byte table: every byte alone decodes to itself. */
START_TEST(bpe_byte_table)
{
	struct belt_tokenizer *t = load_vocab("gpt-2");
	for (int b = 0; b < 256; b++) {
		char c = (char)b;
		struct ids a = encode_f(t, &c, 1, 0);
		ck_assert_uint_eq(a.n, 1);
		struct belt_tok_stream st;
		char buf[64];
		belt_tok_stream_init(&st, false);
		size_t k = belt_tok_decode(t, &st, a.v[0], buf, sizeof buf);
		if (b < 0x80) {
			ck_assert_uint_eq(k, 1);
			ck_assert_int_eq((unsigned char)buf[0], b);
		} else if (b >= 0xc2 && b <= 0xf4) {
			/* a lead byte: held back, U+FFFD at the end */
			ck_assert_uint_eq(k, 0);
			ck_assert_uint_eq(belt_tok_flush(&st, buf, sizeof buf), 3);
		} else { /* can start nothing: U+FFFD at once */
			ck_assert_uint_eq(k, 3);
		}
		free(a.v);
	}
	/* "Ġ" (U+0120) is the space byte */
	ck_assert_str_eq(belt_tok_piece(t, 220), "\xc4\xa0");
	belt_tok_free(t);
}
END_TEST

/* WordPiece normal form: lowercase, no accents, no control characters,
 * NUL or invalid bytes; continuation pieces join their word. */
START_TEST(wpm_normal_form)
{
	struct belt_tokenizer *t = load_vocab("bert-bge");
	struct ids a = encode(t, "Hello World! \xc3\x84pfel");
	struct text s = decode_all(t, a.v, a.n, true);
	ck_assert_str_eq(s.p, "hello world ! apfel");
	free(a.v);
	free(s.p);
	/* NUL, a control character and invalid bytes are dropped */
	struct ids b = encode_f(t, "hel\0lo\x01 w\xffor\xc3ld", 15, 0);
	struct ids c = encode(t, "hello world");
	ck_assert(b.n == c.n && memcmp(b.v, c.v, b.n * sizeof *b.v) == 0);
	free(b.v);
	free(c.v);
	/* a word no piece sequence covers is one [UNK] */
	expect_ids(t, "\xf0\x9f\xa6\x99", 0, IDS(100));
	/* ADD_BOS / ADD_EOS give [CLS] ... [SEP]; the GGUF asks for both */
	ck_assert(belt_tok_add_bos(t) && belt_tok_add_eos(t));
	expect_ids(t, "hello", BELT_TOK_ADD_BOS | BELT_TOK_ADD_EOS, IDS(101, 7592, 102));
	belt_tok_free(t);
}
END_TEST

/* ---- special tokens ---- */

START_TEST(special_tokens)
{
	struct belt_tokenizer *t = load_vocab("llama-bpe");
	ck_assert(belt_tok_add_bos(t) && !belt_tok_add_eos(t));
	ck_assert_int_eq(belt_tok_bos(t), 128000);
	ck_assert_int_eq(belt_tok_eos(t), 128001);
	/* literal by default, one id when parsed */
	expect_ids(t, "<|begin_of_text|>Hello", BELT_TOK_PARSE_SPECIAL,
		   IDS(128000, 9906));
	struct ids lit = encode(t, "<|begin_of_text|>Hello");
	ck_assert_uint_gt(lit.n, 3);
	for (size_t i = 0; i < lit.n; i++)
		ck_assert_int_lt(lit.v[i], 128000);
	struct text s = decode_all(t, lit.v, lit.n, false);
	ck_assert_str_eq(s.p, "<|begin_of_text|>Hello");
	free(s.p);
	free(lit.v);
	expect_ids(t, "Hello", BELT_TOK_ADD_BOS | BELT_TOK_ADD_EOS,
		   IDS(128000, 9906, 128001));
	expect_ids(t, "", BELT_TOK_ADD_BOS, IDS(128000));
	/* control tokens decode as nothing; <|eot_id|> ends generation */
	ck_assert(belt_tok_is_eog(t, 128009) && belt_tok_is_eog(t, 128001));
	ck_assert(!belt_tok_is_eog(t, 128000) && !belt_tok_is_eog(t, 9906));
	s = decode_all(t, IDS(128000, 9906, 128009), false);
	ck_assert_str_eq(s.p, "Hello");
	free(s.p);
	belt_tok_free(t);

	/* user-defined pieces are cut out even without parsing; control ones
	 * are not */
	t = load_vocab("qwen2");
	ck_assert(!belt_tok_add_bos(t));
	expect_ids(t, "a<think>b", 0, IDS(64, 151667, 65));
	expect_ids(t, "<|im_start|>", BELT_TOK_PARSE_SPECIAL, IDS(151644));
	ck_assert(belt_tok_is_eog(t, 151645)); /* <|im_end|> */
	s = decode_all(t, IDS(64, 151667, 65, 151644), false);
	ck_assert_str_eq(s.p, "a<think>b");
	free(s.p);
	belt_tok_free(t);

	/* mpt's user-defined runs of spaces */
	t = load_vocab("mpt");
	expect_ids(t, "a      b", 0, IDS(66, 50272, 67));
	belt_tok_free(t);

	/* phi-3 special tokens swallow the whitespace after them */
	t = load_vocab("phi-3");
	struct ids a = encode_f(t, "<|user|>  Hello", 15, BELT_TOK_PARSE_SPECIAL);
	struct ids b = encode_f(t, "<|user|>Hello", 13, BELT_TOK_PARSE_SPECIAL);
	ck_assert(a.n == b.n && memcmp(a.v, b.v, a.n * sizeof *a.v) == 0);
	ck_assert_int_eq(a.v[0], 32010);
	free(a.v);
	free(b.v);
	belt_tok_free(t);
}
END_TEST

/* Longest special piece first, then leftmost, as llama.cpp cuts them. */
START_TEST(special_overlap)
{
	struct belt_tokenizer *t = load_vocab("llama-bpe");
	/* "<|end_of_text|>" overlaps nothing; two in a row, then one inside
	 * text that also holds a shorter special piece */
	expect_ids(t, "<|end_of_text|><|end_of_text|>", BELT_TOK_PARSE_SPECIAL,
		   IDS(128001, 128001));
	static const char x[] = "x<|eot_id|>y<|start_header_id|>";
	struct ids a = encode_f(t, x, sizeof x - 1, BELT_TOK_PARSE_SPECIAL);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_int_eq(a.v[1], 128009);
	ck_assert_int_eq(a.v[3], 128006);
	free(a.v);
	belt_tok_free(t);
}
END_TEST

/* ---- streaming decode ---- */

START_TEST(stream_partial_utf8)
{
	struct belt_tokenizer *t = load_vocab("gpt-2");
	/* "🦙" is several byte-level tokens in GPT-2 */
	struct ids a = encode(t, "\xf0\x9f\xa6\x99!");
	ck_assert_uint_ge(a.n, 3);
	struct belt_tok_stream st;
	char buf[128];
	belt_tok_stream_init(&st, false);
	size_t total = 0;
	for (size_t i = 0; i + 1 < a.n; i++) {
		size_t k = belt_tok_decode(t, &st, a.v[i], buf + total, sizeof buf - total);
		ck_assert(k == 0 || k == 4); /* nothing, or the whole character */
		total += k;
	}
	ck_assert_uint_eq(total, 4);
	total += belt_tok_decode(t, &st, a.v[a.n - 1], buf + total, sizeof buf - total);
	ck_assert_uint_eq(belt_tok_flush(&st, buf + total, sizeof buf - total), 0);
	ck_assert(total == 5 && memcmp(buf, "\xf0\x9f\xa6\x99!", 5) == 0);
	/* a cut-off character flushes as U+FFFD */
	belt_tok_stream_init(&st, false);
	ck_assert_uint_eq(belt_tok_decode(t, &st, a.v[0], buf, sizeof buf), 0);
	ck_assert_uint_eq(belt_tok_flush(&st, buf, sizeof buf), 3);
	ck_assert(memcmp(buf, "\xef\xbf\xbd", 3) == 0);
	free(a.v);
	belt_tok_free(t);
}
END_TEST

/* ---- synthetic byte-level BPE vocabularies ---- */

struct tmp {
	char path[64];
	struct belt_gguf_writer *w;
};

static void tmp_begin(struct tmp *g, const char *pre)
{
	snprintf(g->path, sizeof g->path, "/tmp/belt-tok-bpe-%ld.gguf",
		 (long)getpid());
	g->w = belt_gguf_writer_new();
	ck_assert(g->w);
	ck_assert(!belt_gguf_writer_str(g->w, "tokenizer.ggml.model", "gpt2"));
	if (pre)
		ck_assert(!belt_gguf_writer_str(g->w, "tokenizer.ggml.pre", pre));
}

static int tmp_load(struct tmp *g, struct belt_tokenizer **t, char *err,
		    size_t errsz)
{
	ck_assert_msg(belt_gguf_writer_write(g->w, g->path, err, errsz) == 0,
		      "%s", err);
	belt_gguf_writer_free(g->w);
	g->w = NULL;
	struct belt_gguf *f = belt_gguf_open(g->path, err, errsz);
	ck_assert_msg(f, "%s", err);
	*t = NULL;
	int rc = belt_tok_load(f, t, err, errsz);
	belt_gguf_close(f);
	unlink(g->path);
	return rc;
}

/* a b c, "Ġ"(space), and merges whose results are partly no piece */
static const char *const tiny_tokens[] = {
	"a", "b", "c", "\xc4\xa0", "ab", "bc", "abc", ("\xc4\xa0" "a"), "<|x|>"
};
static const int32_t tiny_types[] = { 1, 1, 1, 1, 1, 1, 1, 1, 3 };

static void tiny_vocab(struct tmp *g, const char *pre, const char *const *merges,
		       size_t n_merges)
{
	tmp_begin(g, pre);
	ck_assert(!belt_gguf_writer_arr_str(g->w, "tokenizer.ggml.tokens",
					    tiny_tokens, 9));
	ck_assert(!belt_gguf_writer_arr(g->w, "tokenizer.ggml.token_type",
					BELT_GGUF_INT32, tiny_types, 9));
	ck_assert(!belt_gguf_writer_arr_str(g->w, "tokenizer.ggml.merges",
					    merges, n_merges));
}

START_TEST(bpe_merge_order)
{
	struct tmp g;
	struct belt_tokenizer *t;
	char err[BELT_ERR_SIZE];
	/* "b c" ranks first: abc = a + bc, then "a bc" */
	static const char *const m1[] = { "b c", "a b", "a bc", "Ġ a" };
	tiny_vocab(&g, "gpt-2", m1, 4);
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(belt_tok_bos(t), -1); /* default 11 is out of range */
	ck_assert(!belt_tok_add_bos(t));
	expect_ids(t, "abc", 0, IDS(6));
	expect_ids(t, "ab", 0, IDS(4));
	expect_ids(t, " a", 0, IDS(7));
	expect_ids(t, "cab", 0, IDS(2, 4));
	belt_tok_free(t);

	/* "a b" first: ab + c has no merge, so ab, c */
	static const char *const m2[] = { "a b", "b c", "a bc" };
	tiny_vocab(&g, "gpt-2", m2, 3);
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	expect_ids(t, "abc", 0, IDS(4, 2));
	/* equal ranks: the leftmost pair merges first */
	expect_ids(t, "abab", 0, IDS(4, 4));
	belt_tok_free(t);

	/* a merge part that is no piece: "c c" -> "cc" (no piece), then
	 * "cc c" -> "ccc" (no piece either): the symbol falls back to its
	 * bytes */
	static const char *const m3[] = { "c c", "cc c" };
	tiny_vocab(&g, "gpt-2", m3, 2);
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	expect_ids(t, "ccc", 0, IDS(2, 2, 2));
	/* bytes with no piece at all are dropped, as in llama.cpp */
	expect_ids(t, "adz", 0, IDS(0));
	belt_tok_free(t);
}
END_TEST

/* Every pre-tokenizer name llama.cpp knows and belt supports compiles
 * and splits some text. */
START_TEST(pre_names)
{
	static const char *const names[] = {
		"default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
		"pixtral", "midm-2.0", "lfm2", "jina-v5-nano", "dbrx", "smaug-bpe",
		"glm4", "chatglm-bpe", "jais-2", "deepseek-llm", "deepseek-coder",
		"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4", "spark2_5",
		"youtu", "falcon", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat",
		"jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert",
		"exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling",
		"jina-v1-en", "jina-v2-code", "roberta-bpe", "starcoder", "refact",
		"command-r", "smollm", "codeshell", "exaone", "minerva-7b",
		"mellum2", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez",
		"stablelm2", "hunyuan", "solar-open", "grok-2", "qwen35",
		"poro-chat", "bloom", "gpt3-finnish", "viking", "tekken",
		"chameleon", "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2",
		"tiny_aya", "cohere2moe", "bailingmoe", "bailingmoe2", "llada-moe",
		"seed-coder", "ufakzeka", "laguna", "exaone-moe", "minicpm5", NULL
	};
	static const char *const m[] = { "a b" };
	static const char text[] = "ab c\n\n  abc's 12345 \xe4\xb8\x80\xe3\x80\x80~! \xff";
	for (const char *const *n = names; *n; n++) {
		struct tmp g;
		struct belt_tokenizer *t;
		char err[BELT_ERR_SIZE];
		tiny_vocab(&g, *n, m, 1);
		ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s: %s", *n, err);
		struct ids a = encode_f(t, text, sizeof text - 1, 0);
		ck_assert_uint_gt(a.n, 0);
		free(a.v);
		belt_tok_free(t);
	}
}
END_TEST

static void expect_load_error(struct tmp *g, const char *want)
{
	struct belt_tokenizer *t = NULL;
	char err[BELT_ERR_SIZE] = "";
	ck_assert_int_eq(tmp_load(g, &t, err, sizeof err), -1);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err, want) && strstr(err, g->path),
		      "error '%s' should name the file and say '%s'", err, want);
}

START_TEST(bpe_bad_input)
{
	struct tmp g;
	static const char *const m[] = { "a b" };
	tiny_vocab(&g, "no-such-pre", m, 1);
	expect_load_error(&g, "unknown pre-tokenizer tokenizer.ggml.pre = 'no-such-pre'");

	tmp_begin(&g, "gpt-2");
	ck_assert(!belt_gguf_writer_arr_str(g.w, "tokenizer.ggml.tokens", tiny_tokens, 9));
	ck_assert(!belt_gguf_writer_arr(g.w, "tokenizer.ggml.merges", BELT_GGUF_INT32,
					tiny_types, 9));
	expect_load_error(&g, "tokenizer.ggml.merges must be an array of strings");

	tmp_begin(&g, "gpt-2");
	ck_assert(!belt_gguf_writer_arr_str(g.w, "tokenizer.ggml.tokens", tiny_tokens, 9));
	expect_load_error(&g, "needs tokenizer.ggml.merges, which is missing");

	g.w = belt_gguf_writer_new();
	ck_assert(g.w);
	ck_assert(!belt_gguf_writer_str(g.w, "tokenizer.ggml.model", "t5"));
	expect_load_error(&g, "unsupported tokenizer model 't5' (supported: llama, gpt2, bert)");

	/* a missing pre-tokenizer is llama.cpp's "default" */
	tiny_vocab(&g, NULL, m, 1);
	struct belt_tokenizer *t;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	expect_ids(t, "ab", 0, IDS(4));
	belt_tok_free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tokenizer_bpe");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, all_vocabs);
	tcase_add_test(tc, qwen2_on_qwen35_texts);
	tcase_add_test(tc, round_trip_all);
	tcase_add_test(tc, bpe_any_bytes);
	tcase_add_test(tc, bpe_byte_table);
	tcase_add_test(tc, wpm_normal_form);
	tcase_add_test(tc, special_tokens);
	tcase_add_test(tc, special_overlap);
	tcase_add_test(tc, stream_partial_utf8);
	tcase_add_test(tc, bpe_merge_order);
	tcase_add_test(tc, pre_names);
	tcase_add_test(tc, bpe_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
