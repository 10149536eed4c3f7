/* Fuzz target for the tokenizers.
 *
 * libFuzzer:  clang -g -O1 -fsanitize=fuzzer,address,undefined -DBELT_LIBFUZZER
 *               -D_GNU_SOURCE -Icore/include -Icore tests/fuzz_tokenizer.c
 *               core/tokenizer/\*.c core/gguf/\*.c core/util/error.c
 *               core/util/types.c -lpcre2-8 -lutf8proc
 *             BELT_SHARED_DIR=... ./a.out
 * Standalone (make check): replays the files given as arguments, then a
 * deterministic set of random inputs (BELT_FUZZ_ITERS, default 3000).
 *
 * The first input byte picks the vocabulary and the encode flags, the rest
 * is the text. Invariants: encoding never fails and a second call with a
 * too-small buffer agrees with the first; ids are in range; every decode
 * call emits whole, valid UTF-8 characters, also for arbitrary ids; for
 * lossless vocabularies a valid UTF-8 text without parsed special tokens
 * decodes back to itself. A broken invariant aborts (it is a test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct vocab {
	const char *name;
	bool lossless; /* on valid UTF-8 (SPM: also without U+2581) */
	bool spm;
	struct belt_tokenizer *t;
};

static struct vocab vocabs[] = {
	{ "llama-spm", true, true, NULL },    { "gpt-2", true, false, NULL },
	{ "llama-bpe", true, false, NULL },   { "qwen2", true, false, NULL },
	{ "deepseek-llm", true, false, NULL }, { "deepseek-coder", true, false, NULL },
	{ "falcon", false, false, NULL },     { "mpt", true, false, NULL },
	{ "starcoder", true, false, NULL },   { "bert-bge", false, false, NULL },
	{ "phi-3", false, true, NULL },
};
#define N_VOCABS (sizeof vocabs / sizeof vocabs[0])

static long n_round_trips;

static void fail(const char *vocab, const char *what)
{
	fprintf(stderr, "fuzz_tokenizer: %s: invariant broken: %s\n", vocab, what);
	abort();
}

static void free_vocabs(void)
{
	for (size_t i = 0; i < N_VOCABS; i++)
		belt_tok_free(vocabs[i].t);
}

static void load_vocabs(void)
{
	static bool loaded;
	if (loaded)
		return;
	loaded = true;
	const char *dir = getenv("BELT_SHARED_DIR");
	if (!dir || !*dir) {
		fprintf(stderr, "fuzz_tokenizer: BELT_SHARED_DIR is not set\n");
		exit(2);
	}
	for (size_t i = 0; i < N_VOCABS; i++) {
		char path[1024], err[BELT_ERR_SIZE];
		snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf", dir,
			 vocabs[i].name);
		struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
		if (!g || belt_tok_load(g, &vocabs[i].t, err, sizeof err)) {
			fprintf(stderr, "fuzz_tokenizer: %s\n", err);
			exit(2);
		}
		belt_gguf_close(g);
	}
	atexit(free_vocabs);
}

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

/* Decode ids through one stream into out (cap bytes); checks every call. */
static size_t decode(const struct vocab *v, const int32_t *ids, size_t n,
		     bool strip, char *out, size_t cap)
{
	size_t piece = 32 + belt_tok_max_piece(v->t), o = 0;
	struct belt_tok_stream st;
	belt_tok_stream_init(&st, strip);
	for (size_t i = 0; i < n; i++) {
		if (cap - o < piece)
			fail(v->name, "decode buffer estimate");
		size_t k = belt_tok_decode(v->t, &st, ids[i], out + o, cap - o);
		if (!valid_utf8((const unsigned char *)out + o, k))
			fail(v->name, "decode emitted invalid UTF-8");
		o += k;
	}
	size_t k = belt_tok_flush(&st, out + o, cap - o);
	if (k > 3 || !valid_utf8((const unsigned char *)out + o, k))
		fail(v->name, "flush emitted more than one U+FFFD");
	return o + k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	load_vocabs();
	if (size == 0)
		return 0;
	struct vocab *v = &vocabs[data[0] % N_VOCABS];
	unsigned sel = data[0] / N_VOCABS, flags = 0;
	if (sel & 1)
		flags |= BELT_TOK_PARSE_SPECIAL;
	if (sel & 2)
		flags |= BELT_TOK_ADD_BOS;
	if (sel & 4)
		flags |= BELT_TOK_ADD_EOS;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char err[BELT_ERR_SIZE];
	size_t n = 0, n2 = 0, cap = 4 * len + 8;
	int32_t *ids = malloc(cap * sizeof *ids);
	if (!ids)
		return 0;
	/* a too-small buffer first: the count must not depend on it */
	if (belt_tok_encode_flags(v->t, text, len, flags, ids, len / 3, &n, err,
				  sizeof err))
		fail(v->name, err);
	if (n > cap)
		fail(v->name, "more than 4 ids per byte");
	if (belt_tok_encode_flags(v->t, text, len, flags, ids, cap, &n2, err,
				  sizeof err) || n2 != n)
		fail(v->name, "second encoding differs");
	int32_t n_vocab = belt_tok_n_vocab(v->t);
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= n_vocab)
			fail(v->name, "id out of range");
	size_t out_cap = n * (32 + belt_tok_max_piece(v->t)) + 64;
	char *out = malloc(out_cap);
	if (!out) {
		free(ids);
		return 0;
	}
	size_t m = decode(v, ids, n, v->spm, out, out_cap);
	bool plain = !(flags & BELT_TOK_PARSE_SPECIAL) &&
		     valid_utf8((const unsigned char *)text, len) &&
		     !(v->spm && memmem(text, len, "\xe2\x96\x81", 3));
	if (v->lossless && plain) {
		if (m != len || memcmp(out, text, len) != 0)
			fail(v->name, "valid UTF-8 does not round-trip");
		n_round_trips++;
	}
	/* arbitrary ids decode to valid UTF-8 too */
	for (size_t i = 0; i < n; i++)
		ids[i] = (int32_t)(((uint32_t)ids[i] * 2654435761u + (uint32_t)i) %
				   (uint32_t)n_vocab);
	decode(v, ids, n, false, out, out_cap);
	free(out);
	free(ids);
	return 0;
}

#ifndef BELT_LIBFUZZER

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz_tokenizer: %s: cannot open\n", path);
		return -1;
	}
	uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return LLVMFuzzerTestOneInput(buf, n);
}

/* Text made of pieces tokenizers care about, random bytes among them. */
static size_t make_input(uint8_t *buf, size_t cap, bool valid, uint64_t *seed)
{
	static const char *const parts[] = {
		" ", "  ", "\n", "\r\n", "\t", "a", "Hello", " world", "'s", "'LL",
		"123", "4567", "\xc3\xa9", "\xc3\x84pfel", "\xe2\x96\x81",
		"\xf0\x9f\xa6\x99", "\xe4\xb8\x80\xe4\xba\x8c", "\xe3\x80\x80",
		"\xe2\x80\x8d", "\xef\xbc\x81", "<|begin_of_text|>", "<|eot_id|>",
		"<think>", "<|endoftext|>", "[CLS]", "<s>", "</s>", "<|user|>",
		"      ", "~", "!!!", "...", "\xd0\xbd\xd0\xb5",
		"\xe1\x9e\x80\xe1\x9e\xb6", "\xcc\x81", "\x00", "\xff", "\x80",
		"\xed\xa0\x80", "\xc0\xaf", "\xe2\x82", "\xf4\x90\x80\x80",
	};
	size_t n = 0;
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	buf[n++] = (uint8_t)(*seed >> 33);
	size_t want = (size_t)(*seed >> 40) % cap;
	while (n < want) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(*seed >> 33);
		if (r % 4 == 0) {
			buf[n++] = (uint8_t)(r >> 8) & (valid ? 0x7f : 0xff);
			continue;
		}
		/* valid: the parts before the invalid ones at the end */
		size_t n_parts = sizeof parts / sizeof parts[0] - (valid ? 6 : 0);
		const char *p = parts[(r >> 3) % n_parts];
		size_t k = strlen(p) ? strlen(p) : 1; /* "\x00" is one NUL */
		for (size_t i = 0; i < k && n < cap; i++)
			buf[n++] = (uint8_t)p[i];
	}
	return n;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (replay(argv[i]))
			return 1;
	const char *e = getenv("BELT_FUZZ_ITERS");
	long iters = e ? atol(e) : 3000;
	uint64_t seed = 42;
	uint8_t buf[400];
	for (long i = 0; i < iters; i++) {
		size_t n = make_input(buf, i % 10 == 9 ? sizeof buf : 80, i % 2,
				      &seed);
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("fuzz_tokenizer: %d files, %ld random inputs over %zu vocabularies "
	       "(%ld round trips): all invariants hold\n", argc - 1, iters,
	       N_VOCABS, n_round_trips);
	return 0;
}

#endif
