/* gguf_priv.h: what the GGUF reader's files share (not installed). */
#ifndef BELT_GGUF_PRIV_H
#define BELT_GGUF_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "belt/gguf.h"

/* Name of element i of an array of structs (a key or a tensor name). */
typedef const char *(*gguf_name_fn)(const void *arr, uint64_t i);

/* Open-addressing hash of names to indexes; slot holds index + 1. */
struct gguf_index {
	uint64_t *slot;
	uint64_t mask;
	const void *arr;
	gguf_name_fn name;
};

/* Private part of a struct belt_gguf. */
struct gguf_priv {
	void *map; /* mmap'ed file, or NULL for open_mem */
	size_t map_len;
	struct gguf_index keys;
	struct gguf_index tensors;
};

/* Room for n names; 0, or -1 if out of memory. */
int gguf_index_init(struct gguf_index *ix, uint64_t n, const void *arr,
		    gguf_name_fn name);
void gguf_index_free(struct gguf_index *ix);
/* Add element i; returns UINT64_MAX, or the index of an equal name
 * already present (then i is not added). */
uint64_t gguf_index_add(struct gguf_index *ix, uint64_t i);
/* Index of the element named name, or UINT64_MAX. */
uint64_t gguf_index_get(const struct gguf_index *ix, const char *name);

/* Bytes of one element of a numeric value type; 0 for STRING, ARRAY or
 * an unknown type. */
size_t gguf_vtype_size(uint32_t t);
/* A name made fit for a one-line message: control bytes become \xNN
 * and long names are cut with "...". */
#define GGUF_QUOTE_SIZE 144
const char *gguf_quote(char buf[GGUF_QUOTE_SIZE], const char *s);

/* Little-endian loads. */
uint16_t gguf_le16(const uint8_t *p);
uint32_t gguf_le32(const uint8_t *p);
uint64_t gguf_le64(const uint8_t *p);

#endif
