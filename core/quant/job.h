/* job.h: one quantization run's state, shared by file.c (the plan and the
 * writer) and stream.c (the rows quantized as the writer asks for them).
 * Not installed. */
#ifndef BELT_QUANT_JOB_H
#define BELT_QUANT_JOB_H

#include <stdbool.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/quant.h"

struct quant_job;

/* One output tensor: its source, its type, and the chunk of quantized
 * rows the writer is reading from. */
struct quant_tensor {
	struct quant_job *job;
	const struct belt_gguf_tensor *src;
	enum belt_type to;
	uint64_t index;		 /* in the output */
	uint64_t rows, row_out;	 /* rows; bytes of an output row */
	uint64_t chunk_off, chunk_len; /* output bytes in job->chunk */
};

struct quant_job {
	const struct belt_quantize_params *p;
	const struct belt_gguf *g;
	uint64_t n_tensors;
	uint8_t *chunk;		/* quantized rows, up to chunk_cap bytes */
	size_t chunk_cap;
	bool failed;		/* err holds why */
	char err[BELT_ERR_SIZE];
};

/* The writer's fill callback for a quant_tensor: copies or quantizes the
 * rows that hold [off, off + n) of the output. */
int quant_stream_fill(void *ud, void *dst, uint64_t off, uint64_t n);

#endif
