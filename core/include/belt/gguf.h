/* belt/gguf.h: a validating GGUF v2/v3 reader over a read-only mapping.
 *
 * Everything is checked before it is trusted (bounds, counts, lengths,
 * overflow, types, alignment, duplicates); errors name the file and the
 * key or tensor at fault. Strings point into the mapping and are NOT
 * NUL-terminated unless noted. */
#ifndef BELT_GGUF_H
#define BELT_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/types.h"

enum belt_gguf_vtype {
	BELT_GGUF_UINT8 = 0,
	BELT_GGUF_INT8 = 1,
	BELT_GGUF_UINT16 = 2,
	BELT_GGUF_INT16 = 3,
	BELT_GGUF_UINT32 = 4,
	BELT_GGUF_INT32 = 5,
	BELT_GGUF_FLOAT32 = 6,
	BELT_GGUF_BOOL = 7,
	BELT_GGUF_STRING = 8,
	BELT_GGUF_ARRAY = 9,
	BELT_GGUF_UINT64 = 10,
	BELT_GGUF_INT64 = 11,
	BELT_GGUF_FLOAT64 = 12
};

struct belt_gguf_str {
	const char *ptr; /* into the mapping; not NUL-terminated */
	uint64_t len;
};

struct belt_gguf_kv {
	const char *key; /* NUL-terminated copy */
	enum belt_gguf_vtype type;
	union {
		uint64_t u64; /* any unsigned integer type */
		int64_t i64;  /* any signed integer type */
		double f64;   /* FLOAT32 or FLOAT64 */
		bool b;
		struct belt_gguf_str str;
		struct {
			enum belt_gguf_vtype type; /* element type, never ARRAY */
			uint64_t n;
			const void *data; /* raw little-endian elements (numeric) */
			const struct belt_gguf_str *strs; /* STRING elements */
		} arr;
	} v;
};

struct belt_gguf_tensor {
	const char *name; /* NUL-terminated copy */
	uint32_t n_dims;
	int64_t ne[4];	  /* ne[0] is the contiguous (row) dimension; unused = 1 */
	enum belt_type type;
	uint64_t offset;  /* from the start of the data section */
	uint64_t size;	  /* bytes */
	const void *data; /* inside the mapping */
};

struct belt_gguf {
	const char *path; /* as given to open (or the name for open_mem) */
	uint32_t version;
	uint64_t alignment;
	uint64_t n_kv;
	struct belt_gguf_kv *kv;
	uint64_t n_tensors;
	struct belt_gguf_tensor *tensors;
	uint64_t data_offset; /* file offset of the tensor data section */
	const uint8_t *base;  /* start of the mapping */
	uint64_t size;	      /* bytes mapped */
	void *priv;
};

/* Map and parse a GGUF file; NULL with a message in err on failure. */
struct belt_gguf *belt_gguf_open(const char *path, char *err, size_t errsz);
/* Parse a GGUF image already in memory (not copied: it must outlive the
 * result); name is used in messages. */
struct belt_gguf *belt_gguf_open_mem(const void *data, size_t size,
				     const char *name, char *err, size_t errsz);
/* Unmap and free; NULL is allowed. */
void belt_gguf_close(struct belt_gguf *g);

/* The metadata entry with this key, or NULL. */
const struct belt_gguf_kv *belt_gguf_find(const struct belt_gguf *g,
					  const char *key);
/* The tensor with this name, or NULL. */
const struct belt_gguf_tensor *belt_gguf_find_tensor(const struct belt_gguf *g,
						     const char *name);

/* Typed getters: 1 if found and convertible (stored in *out), 0 if the key
 * is absent, -1 (message in err) if present with an incompatible type or a
 * value out of range for *out. Integers of any width convert to int64;
 * get_float accepts floats and integers. */
int belt_gguf_get_int(const struct belt_gguf *g, const char *key,
		      int64_t *out, char *err, size_t errsz);
int belt_gguf_get_float(const struct belt_gguf *g, const char *key,
			double *out, char *err, size_t errsz);
int belt_gguf_get_bool(const struct belt_gguf *g, const char *key, bool *out,
		       char *err, size_t errsz);
int belt_gguf_get_str(const struct belt_gguf *g, const char *key,
		      struct belt_gguf_str *out, char *err, size_t errsz);

/* Element i of a numeric array entry as double / int64 (i < arr.n). */
double belt_gguf_arr_float(const struct belt_gguf_kv *kv, uint64_t i);
int64_t belt_gguf_arr_int(const struct belt_gguf_kv *kv, uint64_t i);

/* Name of a metadata value type ("uint32", "string", ...). */
const char *belt_gguf_vtype_name(int t);

#endif
