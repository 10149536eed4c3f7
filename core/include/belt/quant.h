/* belt/quant.h: quantization of F32/F16/BF16 weights to the GGUF block
 * types, byte for byte as llama.cpp's llama-quantize writes them with no
 * importance matrix (doc/quantize.md), and whole-file quantization. */
#ifndef BELT_QUANT_H
#define BELT_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/types.h"

/* True if belt_quantize_row can write type t. */
bool belt_quant_supported(int t);
/* Quantize n values of x (a whole number of t's blocks) into dst
 * (belt_type_row_bytes(t, n) bytes); -1 if t is not supported or n is not
 * a multiple of its block. The values must be finite. */
int belt_quantize_row(int t, const float *x, void *dst, int64_t n);

/* A target as llama-quantize names it: one type, or a mix ("Q4_K_M"). */
struct belt_quant_target {
	const char *name;	/* canonical name, e.g. "Q4_K_M" */
	enum belt_type type;	/* the type of most matrices */
	uint32_t file_type;	/* general.file_type (llama.cpp's llama_ftype) */
};
/* The target named name (case-insensitive); NULL if there is none. */
const struct belt_quant_target *belt_quant_target_find(const char *name);
/* The names belt accepts, comma-separated, for messages. */
const char *belt_quant_target_names(void);

/* Called as each tensor starts: its index (from 0), the count, its name and
 * its types before and after. */
typedef void (*belt_quant_progress_fn)(void *ud, uint64_t i, uint64_t n, const char *name,
				       enum belt_type from, enum belt_type to);

/* A warning (one line, no newline), e.g. a tensor written in a fallback
 * type because its rows are not a whole number of blocks. */
typedef void (*belt_quant_warn_fn)(void *ud, const char *msg);

struct belt_quantize_params {
	const char *in, *out;	  /* GGUF paths; out is replaced atomically */
	const struct belt_quant_target *target;
	bool pure;		  /* every matrix in target->type, no mix rules */
	int n_threads;		  /* >= 1 */
	belt_quant_progress_fn progress; /* may be NULL */
	belt_quant_warn_fn warn;	  /* may be NULL */
	void *progress_ud;		  /* passed to both */
};

/* What a quantization wrote. */
struct belt_quantize_stats {
	uint64_t n_tensors, n_quantized, bytes_in, bytes_out;
};

/* Quantize the file in to out: metadata copied (general.file_type and
 * general.quantization_version set as llama-quantize sets them), tensors
 * in llama.cpp's order, each read and written a chunk of rows at a time.
 * -1 with a message naming the file, tensor or argument on failure. */
int belt_quantize_file(const struct belt_quantize_params *p, struct belt_quantize_stats *stats,
		       char *err, size_t errsz);

#endif
