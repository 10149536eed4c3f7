/* belt/gguf_writer.h: builds GGUF v3 files (for tools and tests). */
#ifndef BELT_GGUF_WRITER_H
#define BELT_GGUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/gguf.h"

struct belt_gguf_writer;

/* A new, empty writer (alignment 32); NULL only if out of memory. */
struct belt_gguf_writer *belt_gguf_writer_new(void);
/* Free the writer and everything it copied. */
void belt_gguf_writer_free(struct belt_gguf_writer *w);

/* Append metadata; values and strings are copied. Return 0, or -1 if out
 * of memory. */
int belt_gguf_writer_u32(struct belt_gguf_writer *w, const char *key, uint32_t v);
int belt_gguf_writer_i32(struct belt_gguf_writer *w, const char *key, int32_t v);
int belt_gguf_writer_f32(struct belt_gguf_writer *w, const char *key, float v);
int belt_gguf_writer_bool(struct belt_gguf_writer *w, const char *key, bool v);
int belt_gguf_writer_str(struct belt_gguf_writer *w, const char *key, const char *v);
/* Numeric array of n elements of type t (raw little-endian data). */
int belt_gguf_writer_arr(struct belt_gguf_writer *w, const char *key,
			 enum belt_gguf_vtype t, const void *data, uint64_t n);
/* String array. */
int belt_gguf_writer_arr_str(struct belt_gguf_writer *w, const char *key,
			     const char *const *v, uint64_t n);

/* Append a copy of an entry read by belt_gguf_open (any type, arrays of
 * strings included), serialized as it was read. */
int belt_gguf_writer_copy_kv(struct belt_gguf_writer *w, const struct belt_gguf_kv *kv);

/* Append a tensor of type t and shape ne[0..n_dims); data holds
 * belt_type_row_bytes(t, ne[0]) * rows bytes and is copied. */
int belt_gguf_writer_tensor(struct belt_gguf_writer *w, const char *name,
			    enum belt_type t, uint32_t n_dims,
			    const int64_t *ne, const void *data);

/* Like belt_gguf_writer_tensor, but the bytes are produced at write time
 * by fill(ud, dst, offset, n) in consecutive pieces, so tensors larger than
 * memory can be written. fill returns 0, or -1 to abort the write. */
typedef int (*belt_gguf_fill_fn)(void *ud, void *dst, uint64_t offset,
				 uint64_t n);
int belt_gguf_writer_tensor_fn(struct belt_gguf_writer *w, const char *name,
			       enum belt_type t, uint32_t n_dims,
			       const int64_t *ne, belt_gguf_fill_fn fill,
			       void *ud);

/* Write the file; -1 with a message naming path on failure. */
int belt_gguf_writer_write(const struct belt_gguf_writer *w, const char *path,
			   char *err, size_t errsz);

#endif
