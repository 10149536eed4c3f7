/* Fuzz target for the GGUF reader.
 *
 * libFuzzer:  clang -g -O1 -fsanitize=fuzzer,address,undefined -DBELT_LIBFUZZER
 *               -D_GNU_SOURCE -Icore/include -Icore tests/fuzz_gguf.c
 *               core/gguf/gguf.c core/gguf/index.c core/gguf/query.c
 *               core/gguf/writer.c core/util/error.c core/util/types.c
 * Standalone (make check): replays the files given as arguments, then a
 * deterministic set of mutations (bit flips, truncations, byte and integer
 * field overwrites) of a valid image built with the writer. Every image
 * must either open with all invariants holding or fail with a one-line
 * message naming the file. BELT_FUZZ_ITERS sets the number of mutations. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fail(const char *what)
{
	fprintf(stderr, "fuzz_gguf: invariant broken: %s\n", what);
	return -1;
}

static int inside(const struct belt_gguf *g, const void *p, uint64_t n)
{
	const uint8_t *b = p;
	return b >= g->base && (uint64_t)(b - g->base) <= g->size &&
	       n <= g->size - (uint64_t)(b - g->base);
}

/* Touch every value the reader hands out; -1 if something is wrong. */
static int check_kv(const struct belt_gguf *g, const struct belt_gguf_kv *kv)
{
	char err[BELT_ERR_SIZE];
	int64_t i;
	double f;
	bool b;
	struct belt_gguf_str s;
	if (!kv->key || !*kv->key || belt_gguf_find(g, kv->key) != kv)
		return fail("key lookup");
	belt_gguf_get_int(g, kv->key, &i, err, sizeof err);
	belt_gguf_get_float(g, kv->key, &f, err, sizeof err);
	belt_gguf_get_bool(g, kv->key, &b, err, sizeof err);
	belt_gguf_get_str(g, kv->key, &s, err, sizeof err);
	if (kv->type == BELT_GGUF_STRING && !inside(g, kv->v.str.ptr, kv->v.str.len))
		return fail("string outside the image");
	if (kv->type != BELT_GGUF_ARRAY)
		return 0;
	if (kv->v.arr.type == BELT_GGUF_ARRAY)
		return fail("nested array accepted");
	if (kv->v.arr.type == BELT_GGUF_STRING) {
		for (uint64_t k = 0; k < kv->v.arr.n; k++)
			if (!inside(g, kv->v.arr.strs[k].ptr, kv->v.arr.strs[k].len))
				return fail("array string outside the image");
		return 0;
	}
	if (kv->v.arr.n) {
		uint64_t last = kv->v.arr.n - 1;
		volatile double sink = belt_gguf_arr_float(kv, 0) +
				       belt_gguf_arr_float(kv, last) +
				       (double)belt_gguf_arr_int(kv, last);
		(void)sink;
	}
	return 0;
}

static int check_tensor(const struct belt_gguf *g, const struct belt_gguf_tensor *t)
{
	if (!t->name || !*t->name || belt_gguf_find_tensor(g, t->name) != t)
		return fail("tensor lookup");
	if (t->n_dims < 1 || t->n_dims > 4 || !belt_type_known(t->type))
		return fail("tensor shape or type");
	if (t->offset % g->alignment || !inside(g, t->data, t->size))
		return fail("tensor data outside the image");
	if (t->size) {
		const volatile uint8_t *d = t->data;
		volatile uint8_t sink = d[0] ^ d[t->size - 1];
		(void)sink;
	}
	return 0;
}

static int exercise(const uint8_t *data, size_t size)
{
	char err[BELT_ERR_SIZE] = "";
	struct belt_gguf *g = belt_gguf_open_mem(data, size, "fuzz.gguf", err,
						 sizeof err);
	if (!g) {
		if (strncmp(err, "fuzz.gguf: ", 11) || strchr(err, '\n'))
			return fail(err);
		return 1;
	}
	int rc = 0;
	if (!g->alignment || (g->alignment & (g->alignment - 1)))
		rc = fail("alignment");
	for (uint64_t i = 0; !rc && i < g->n_kv; i++)
		rc = check_kv(g, &g->kv[i]);
	for (uint64_t i = 0; !rc && i < g->n_tensors; i++)
		rc = check_tensor(g, &g->tensors[i]);
	belt_gguf_close(g);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (exercise(data, size) < 0)
		abort(); /* a fuzz target reports a finding by crashing */
	return 0;
}

#ifndef BELT_LIBFUZZER

/* ---- the seed image ---- */

static int fill_ramp(void *ud, void *dst, uint64_t offset, uint64_t n)
{
	(void)ud;
	for (uint64_t i = 0; i < n; i++)
		((uint8_t *)dst)[i] = (uint8_t)(offset + i);
	return 0;
}

static int add_metadata(struct belt_gguf_writer *w)
{
	static const int16_t i16[] = {-3, 4, 5};
	static const double f64[] = {0.5, -1e10};
	static const uint64_t u64[] = {1, UINT64_MAX};
	static const char *const toks[] = {"<unk>", "<s>", "</s>", "", "hello"};
	return belt_gguf_writer_u32(w, "general.alignment", 32) ||
	       belt_gguf_writer_str(w, "general.architecture", "llama") ||
	       belt_gguf_writer_u32(w, "llama.embedding_length", 64) ||
	       belt_gguf_writer_i32(w, "x.i32", -7) ||
	       belt_gguf_writer_f32(w, "x.f32", 1e-5f) ||
	       belt_gguf_writer_bool(w, "x.bool", true) ||
	       belt_gguf_writer_arr(w, "x.i16", BELT_GGUF_INT16, i16, 3) ||
	       belt_gguf_writer_arr(w, "x.f64", BELT_GGUF_FLOAT64, f64, 2) ||
	       belt_gguf_writer_arr(w, "x.u64", BELT_GGUF_UINT64, u64, 2) ||
	       belt_gguf_writer_arr_str(w, "tokenizer.ggml.tokens", toks, 5);
}

static int add_tensors(struct belt_gguf_writer *w)
{
	static const float f[6] = {1, 2, 3, 4, 5, 6};
	static uint8_t q8[34 * 2];
	return belt_gguf_writer_tensor(w, "f32", BELT_TYPE_F32, 2,
				       (int64_t[]){3, 2}, f) ||
	       belt_gguf_writer_tensor(w, "q8", BELT_TYPE_Q8_0, 3,
				       (int64_t[]){32, 1, 2}, q8) ||
	       belt_gguf_writer_tensor_fn(w, "q4k", BELT_TYPE_Q4_K, 4,
					  (int64_t[]){256, 1, 1, 2}, fill_ramp,
					  NULL) ||
	       belt_gguf_writer_tensor_fn(w, "i8", BELT_TYPE_I8, 1,
					  (int64_t[]){5}, fill_ramp, NULL);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *b = NULL;
	long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n >= 0 && !fseek(f, 0, SEEK_SET) && (b = malloc(n ? (size_t)n : 1)) &&
	    fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*size = n > 0 ? (size_t)n : 0;
	return b;
}

static uint8_t *seed_image(size_t *size)
{
	char err[BELT_ERR_SIZE], path[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/belt-fuzz-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	uint8_t *img = NULL;
	if (w && !add_metadata(w) && !add_tensors(w) &&
	    !belt_gguf_writer_write(w, path, err, sizeof err))
		img = read_file(path, size);
	belt_gguf_writer_free(w);
	unlink(path);
	return img;
}

/* ---- integer fields of the seed: where overwrites hurt most ---- */

struct fields {
	size_t off[512];
	unsigned char width[512];
	size_t n;
};

static void field(struct fields *fl, size_t off, unsigned width)
{
	if (fl->n < sizeof fl->off / sizeof fl->off[0]) {
		fl->off[fl->n] = off;
		fl->width[fl->n++] = (unsigned char)width;
	}
}

static uint64_t le(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static size_t walk_value(const uint8_t *img, size_t off, uint32_t t,
			 struct fields *fl)
{
	static const size_t sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
	if (t == 8) {
		field(fl, off, 8);
		return off + 8 + le(img + off, 8);
	}
	if (t != 9)
		return off + sz[t];
	uint32_t et = (uint32_t)le(img + off, 4);
	uint64_t n = le(img + off + 4, 8);
	field(fl, off, 4);
	field(fl, off + 4, 8);
	off += 12;
	for (uint64_t i = 0; i < n; i++)
		off = walk_value(img, off, et, fl);
	return off;
}

/* Record the offsets of the seed's length, count, type, shape and offset
 * fields (the seed is valid, so the walk needs no checks). */
static void find_fields(const uint8_t *img, struct fields *fl)
{
	uint64_t n_t = le(img + 8, 8), n_kv = le(img + 16, 8);
	size_t off = 24;
	field(fl, 4, 4);
	field(fl, 8, 8);
	field(fl, 16, 8);
	for (uint64_t i = 0; i < n_kv; i++) {
		field(fl, off, 8);
		off += 8 + le(img + off, 8);
		field(fl, off, 4);
		off = walk_value(img, off + 4, (uint32_t)le(img + off, 4), fl);
	}
	for (uint64_t i = 0; i < n_t; i++) {
		field(fl, off, 8);
		off += 8 + le(img + off, 8);
		uint32_t nd = (uint32_t)le(img + off, 4);
		field(fl, off, 4);
		for (uint32_t d = 0; d < nd; d++)
			field(fl, off + 4 + 8 * d, 8);
		off += 4 + 8 * nd;
		field(fl, off, 4); /* type */
		field(fl, off + 4, 8); /* offset */
		off += 4 + 8;
	}
}

/* ---- mutations ---- */

static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12; /* xorshift64* */
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static uint64_t interesting(uint64_t *s, size_t size)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 31, 32, 33, 63, 64, 99,
		127, 128, 255, 256, 0x7fff, 0xffff, 0x7fffffff, 0x80000000u,
		0xffffffffu, 0x100000000ull, INT64_MAX, 0x8000000000000000ull,
		UINT64_MAX, UINT64_MAX - 31};
	uint64_t r = rng(s) % (sizeof v / sizeof v[0] + 3);
	if (r < sizeof v / sizeof v[0])
		return v[r];
	return size + r - sizeof v / sizeof v[0] - 1; /* size - 1 .. size + 1 */
}

static size_t mutate(uint8_t *b, size_t size, const struct fields *fl,
		     uint64_t *s)
{
	switch (rng(s) % 4) {
	case 0: /* bit flip */
		b[rng(s) % size] ^= (uint8_t)(1u << (rng(s) % 8));
		return size;
	case 1: /* truncation */
		return (size_t)(rng(s) % size);
	case 2: { /* random bytes */
		size_t at = (size_t)(rng(s) % size), n = 1 + rng(s) % 8;
		for (size_t i = 0; i < n && at + i < size; i++)
			b[at + i] = (uint8_t)rng(s);
		return size;
	}
	default: { /* an integer field gets an interesting value */
		size_t k = (size_t)(rng(s) % fl->n);
		uint64_t v = interesting(s, size);
		for (unsigned i = 0; i < fl->width[k] && fl->off[k] + i < size; i++)
			b[fl->off[k] + i] = (uint8_t)(v >> (8 * i));
		return size;
	}
	}
}

/* Run n mutated copies of seed; 0 if every one behaved. */
static int fuzz_seed(const uint8_t *seed, size_t size, long n, long *opened)
{
	struct fields fl = {.n = 0};
	uint64_t s = 0x9e3779b97f4a7c15ull;
	find_fields(seed, &fl);
	for (long it = 0; it < n; it++) {
		uint8_t *b = malloc(size); /* exact size: overreads show */
		if (!b)
			return -1;
		memcpy(b, seed, size);
		size_t len = size;
		for (uint64_t m = 1 + rng(&s) % 3; m && len; m--)
			len = mutate(b, len, &fl, &s);
		int rc = exercise(b, len);
		free(b);
		if (rc < 0) {
			fprintf(stderr, "fuzz_gguf: iteration %ld failed\n", it);
			return -1;
		}
		*opened += rc == 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t size;
		uint8_t *b = read_file(argv[i], &size);
		if (!b) {
			fprintf(stderr, "fuzz_gguf: cannot read %s\n", argv[i]);
			return 1;
		}
		int rc = exercise(b, size);
		free(b);
		printf("%s: %s\n", argv[i], rc < 0 ? "FAILED" : rc ? "rejected" : "ok");
		if (rc < 0)
			return 1;
	}
	size_t size;
	uint8_t *seed = seed_image(&size);
	if (!seed || exercise(seed, size) != 0) {
		fprintf(stderr, "fuzz_gguf: the seed image does not open\n");
		free(seed);
		return 1;
	}
	const char *env = getenv("BELT_FUZZ_ITERS");
	long n = env ? atol(env) : 5000, opened = 0;
	int rc = fuzz_seed(seed, size, n, &opened);
	free(seed);
	printf("fuzz_gguf: %ld mutations of a %zu-byte image: %ld opened, %ld "
	       "rejected%s\n", n, size, opened, n - opened, rc ? ", FAILED" : "");
	return rc ? 1 : 0;
}

#endif
