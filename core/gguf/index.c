/* Name -> index hash for GGUF keys and tensor names: duplicate detection
 * while parsing and O(1) lookups afterwards. */
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf_priv.h"

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int gguf_index_init(struct gguf_index *ix, uint64_t n, const void *arr,
		    gguf_name_fn name)
{
	uint64_t cap = 8;
	while (cap < n * 2) /* n is bounded by the file size */
		cap *= 2;
	ix->slot = calloc(cap, sizeof *ix->slot);
	ix->mask = cap - 1;
	ix->arr = arr;
	ix->name = name;
	return ix->slot ? 0 : -1;
}

void gguf_index_free(struct gguf_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
}

/* Slot holding name, or the empty slot where it would go. */
static uint64_t probe(const struct gguf_index *ix, const char *name)
{
	uint64_t h = hash_name(name) & ix->mask;
	while (ix->slot[h]) {
		if (!strcmp(ix->name(ix->arr, ix->slot[h] - 1), name))
			return h;
		h = (h + 1) & ix->mask;
	}
	return h;
}

uint64_t gguf_index_add(struct gguf_index *ix, uint64_t i)
{
	uint64_t h = probe(ix, ix->name(ix->arr, i));
	if (ix->slot[h])
		return ix->slot[h] - 1;
	ix->slot[h] = i + 1;
	return UINT64_MAX;
}

uint64_t gguf_index_get(const struct gguf_index *ix, const char *name)
{
	if (!ix->slot)
		return UINT64_MAX;
	uint64_t h = probe(ix, name);
	return ix->slot[h] ? ix->slot[h] - 1 : UINT64_MAX;
}
