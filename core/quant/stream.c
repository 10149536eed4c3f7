/* Tensor data as the GGUF writer asks for it: a chunk of rows at a time
 * (about QUANT_CHUNK_BYTES of output), converted to float32 and quantized
 * by n_threads threads, so memory stays at one chunk whatever the model
 * size. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "quant/job.h"

#define QUANT_CHUNK_BYTES (4u << 20)

struct slice {
	const struct quant_tensor *t;
	uint64_t first, n; /* rows of the tensor */
	uint8_t *out;	   /* where row first goes */
	uint64_t bad_row;  /* first row with a NaN or infinity, or UINT64_MAX */
	int oom;
};

/* Row r of the source as float32; false if a value is not finite. */
static bool load_row(const struct belt_gguf_tensor *s, uint64_t r, float *x)
{
	uint64_t n = (uint64_t)s->ne[0];
	const uint8_t *p = (const uint8_t *)s->data + r * belt_type_row_bytes(s->type, n);
	bool finite = true;
	for (uint64_t i = 0; i < n; i++) {
		if (s->type == BELT_TYPE_F32) {
			memcpy(&x[i], p + 4 * i, 4);
		} else {
			uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
			x[i] = s->type == BELT_TYPE_F16 ? belt_fp16_to_f32(h) : belt_bf16_to_f32(h);
		}
		finite &= isfinite(x[i]) != 0;
	}
	return finite;
}

static void *run_slice(void *arg)
{
	struct slice *sl = arg;
	const struct quant_tensor *t = sl->t;
	uint64_t n = (uint64_t)t->src->ne[0];
	float *x = malloc(n * sizeof *x);
	if (!x) {
		sl->oom = 1;
		return NULL;
	}
	for (uint64_t r = 0; r < sl->n; r++) {
		uint8_t *out = sl->out + r * t->row_out;
		if (!load_row(t->src, sl->first + r, x)) {
			sl->bad_row = sl->first + r;
			break;
		}
		if (t->to == BELT_TYPE_F16) {
			for (uint64_t i = 0; i < n; i++) {
				uint16_t h = belt_f32_to_fp16(x[i]);
				out[2 * i] = (uint8_t)h;
				out[2 * i + 1] = (uint8_t)(h >> 8);
			}
		} else if (t->to == BELT_TYPE_F32) {
			memcpy(out, x, n * sizeof *x);
		} else {
			belt_quantize_row(t->to, x, out, (int64_t)n);
		}
	}
	free(x);
	return NULL;
}

/* Quantize rows [first, first + n) into job->chunk, split across threads. */
static int quantize_rows(struct quant_tensor *t, uint64_t first, uint64_t n)
{
	struct quant_job *job = t->job;
	int nt = job->p->n_threads > 0 ? job->p->n_threads : 1;
	if ((uint64_t)nt > n)
		nt = (int)n;
	struct slice sl[64];
	pthread_t th[64];
	if (nt > 64)
		nt = 64;
	uint64_t at = first;
	for (int i = 0; i < nt; i++) {
		uint64_t k = n / (uint64_t)nt + ((uint64_t)i < n % (uint64_t)nt);
		sl[i] = (struct slice){.t = t, .first = at, .n = k,
				       .out = job->chunk + (at - first) * t->row_out,
				       .bad_row = UINT64_MAX};
		at += k;
	}
	int started = 0;
	for (int i = 1; i < nt; i++, started++)
		if (pthread_create(&th[i], NULL, run_slice, &sl[i]))
			break;
	/* rows of a thread that could not start run here */
	for (int i = started + 1; i < nt; i++)
		run_slice(&sl[i]);
	run_slice(&sl[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nt; i++) {
		if (sl[i].oom) {
			belt_errf(job->err, sizeof job->err, "%s: out of memory", job->p->in);
			return -1;
		}
		if (sl[i].bad_row != UINT64_MAX) {
			belt_errf(job->err, sizeof job->err,
				  "%s: tensor '%s': row %" PRIu64 " holds a NaN or infinite value",
				  job->p->in, t->src->name, sl[i].bad_row);
			return -1;
		}
	}
	return 0;
}

/* Make the chunk that holds output byte off current. */
static int load_chunk(struct quant_tensor *t, uint64_t off)
{
	struct quant_job *job = t->job;
	uint64_t row = off / t->row_out;
	uint64_t n = QUANT_CHUNK_BYTES / t->row_out;
	uint64_t nt = job->p->n_threads > 0 ? (uint64_t)job->p->n_threads : 1;
	n = n < nt ? nt : n;
	n = n < t->rows - row ? n : t->rows - row;
	if (n * t->row_out > job->chunk_cap) {
		free(job->chunk);
		job->chunk_cap = 0;
		job->chunk = n * t->row_out <= SIZE_MAX ? malloc((size_t)(n * t->row_out)) : NULL;
		if (!job->chunk)
			return belt_errf(job->err, sizeof job->err, "%s: out of memory", job->p->in);
		job->chunk_cap = (size_t)(n * t->row_out);
	}
	if (quantize_rows(t, row, n))
		return -1;
	t->chunk_off = row * t->row_out;
	t->chunk_len = n * t->row_out;
	return 0;
}

int quant_stream_fill(void *ud, void *dst, uint64_t off, uint64_t n)
{
	struct quant_tensor *t = ud;
	struct quant_job *job = t->job;
	if (off == 0) {
		t->chunk_off = t->chunk_len = 0;
		if (job->p->progress)
			job->p->progress(job->p->progress_ud, t->index, job->n_tensors, t->src->name,
					 t->src->type, t->to);
	}
	if (t->to == t->src->type) {
		memcpy(dst, (const uint8_t *)t->src->data + off, (size_t)n);
		return 0;
	}
	uint8_t *out = dst;
	while (n) {
		if (off < t->chunk_off || off >= t->chunk_off + t->chunk_len) {
			if (load_chunk(t, off)) {
				job->failed = true;
				return -1;
			}
		}
		uint64_t k = t->chunk_off + t->chunk_len - off;
		k = k < n ? k : n;
		memcpy(out, job->chunk + (off - t->chunk_off), (size_t)k);
		out += k;
		off += k;
		n -= k;
	}
	return 0;
}
