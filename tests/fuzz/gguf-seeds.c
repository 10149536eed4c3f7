/* Small seeds for the GGUF fuzz target, made from real GGUF files:
 *
 *   gguf-seeds OUTDIR FILE.gguf...
 *
 * writes OUTDIR/<name of FILE> holding FILE's version, alignment and
 * every metadata entry (each array cut to its first 512 elements, so a
 * vocabulary stays consistent and loads), and its first 32 tensors with
 * their names, types and number of dimensions, each shrunk to one block
 * of data copied from FILE. A seed is a few KiB where the file was
 * megabytes: libFuzzer mutates the structure, not the weights. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/types.h"

#define MAX_ELEMS 512
#define MAX_TENSORS 32

static void put(FILE *f, const void *p, size_t n)
{
	fwrite(p, 1, n, f);
}

static void put_u32(FILE *f, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(f, b, 4);
}

static void put_u64(FILE *f, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(f, b, 8);
}

static void put_str(FILE *f, const char *s, uint64_t n)
{
	put_u64(f, n);
	put(f, s, n);
}

static size_t scalar_size(enum belt_gguf_vtype t)
{
	switch (t) {
	case BELT_GGUF_UINT8: case BELT_GGUF_INT8: case BELT_GGUF_BOOL: return 1;
	case BELT_GGUF_UINT16: case BELT_GGUF_INT16: return 2;
	case BELT_GGUF_UINT32: case BELT_GGUF_INT32: case BELT_GGUF_FLOAT32: return 4;
	default: return 8;
	}
}

static void put_scalar(FILE *f, const struct belt_gguf_kv *kv)
{
	size_t n = scalar_size(kv->type);
	uint64_t bits = kv->v.u64;
	if (kv->type == BELT_GGUF_FLOAT32) {
		float x = (float)kv->v.f64;
		uint32_t u;
		memcpy(&u, &x, 4);
		bits = u;
	} else if (kv->type == BELT_GGUF_FLOAT64) {
		memcpy(&bits, &kv->v.f64, 8);
	} else if (kv->type == BELT_GGUF_BOOL) {
		bits = kv->v.b;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t b = (uint8_t)(bits >> (8 * i));
		put(f, &b, 1);
	}
}

static void put_kv(FILE *f, const struct belt_gguf_kv *kv)
{
	put_str(f, kv->key, strlen(kv->key));
	put_u32(f, kv->type);
	if (kv->type == BELT_GGUF_STRING) {
		put_str(f, kv->v.str.ptr, kv->v.str.len);
	} else if (kv->type == BELT_GGUF_ARRAY) {
		uint64_t n = kv->v.arr.n < MAX_ELEMS ? kv->v.arr.n : MAX_ELEMS;
		put_u32(f, kv->v.arr.type);
		put_u64(f, n);
		for (uint64_t i = 0; i < n; i++) {
			if (kv->v.arr.type == BELT_GGUF_STRING)
				put_str(f, kv->v.arr.strs[i].ptr, kv->v.arr.strs[i].len);
			else
				put(f, (const uint8_t *)kv->v.arr.data + i * scalar_size(kv->v.arr.type),
				    scalar_size(kv->v.arr.type));
		}
	} else {
		put_scalar(f, kv);
	}
}

static void pad(FILE *f, uint64_t align)
{
	long at = ftell(f);
	static const uint8_t zero[256];
	while (at >= 0 && (uint64_t)at % align) {
		uint64_t n = align - (uint64_t)at % align;
		put(f, zero, n < sizeof zero ? n : sizeof zero);
		at = ftell(f);
	}
}

static int seed(const char *outdir, const char *path)
{
	char err[BELT_ERR_SIZE], out[4096];
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	if (!g) {
		fprintf(stderr, "gguf-seeds: %s\n", err);
		return -1;
	}
	const char *base = strrchr(path, '/');
	snprintf(out, sizeof out, "%s/%s", outdir, base ? base + 1 : path);
	FILE *f = fopen(out, "wb");
	if (!f) {
		perror(out);
		belt_gguf_close(g);
		return -1;
	}
	uint64_t nt = g->n_tensors < MAX_TENSORS ? g->n_tensors : MAX_TENSORS;
	put(f, "GGUF", 4);
	put_u32(f, g->version);
	put_u64(f, nt);
	put_u64(f, g->n_kv);
	for (uint64_t i = 0; i < g->n_kv; i++)
		put_kv(f, &g->kv[i]);
	uint64_t off = 0;
	for (uint64_t i = 0; i < nt; i++) {
		const struct belt_gguf_tensor *t = &g->tensors[i];
		put_str(f, t->name, strlen(t->name));
		put_u32(f, t->n_dims);
		put_u64(f, belt_type_block(t->type));
		for (uint32_t d = 1; d < t->n_dims; d++)
			put_u64(f, 1);
		put_u32(f, t->type);
		put_u64(f, off);
		off += (belt_type_block_bytes(t->type) + g->alignment - 1) / g->alignment * g->alignment;
	}
	pad(f, g->alignment);
	for (uint64_t i = 0; i < nt; i++) {
		const struct belt_gguf_tensor *t = &g->tensors[i];
		put(f, t->data, belt_type_block_bytes(t->type));
		pad(f, g->alignment);
	}
	belt_gguf_close(g);
	if (fclose(f)) {
		perror(out);
		return -1;
	}
	/* a seed must open, or it teaches the fuzzer nothing */
	g = belt_gguf_open(out, err, sizeof err);
	if (!g) {
		fprintf(stderr, "gguf-seeds: %s does not open: %s\n", out, err);
		return -1;
	}
	belt_gguf_close(g);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gguf-seeds OUTDIR FILE.gguf...\n");
		return 2;
	}
	int rc = 0;
	for (int i = 2; i < argc; i++)
		rc |= seed(argv[1], argv[i]) != 0;
	return rc;
}
