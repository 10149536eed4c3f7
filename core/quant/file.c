/* belt_quantize_file: read a GGUF, decide each tensor's type (mix.c),
 * copy the metadata as llama-quantize does and write the tensors in its
 * order, quantized as the writer streams them out (stream.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/gguf_writer.h"
#include "quant/job.h"
#include "quant/mix.h"

/* llama.cpp's GGML_QNT_VERSION, written as general.quantization_version. */
#define QUANT_VERSION 2

/* llama.cpp's weight order: tensors outside blk.N first, then by block,
 * each group by name. */
static int layer_of(const char *name)
{
	int l = -1;
	return sscanf(name, "blk.%d.", &l) == 1 ? l : -1;
}

static int by_layer_then_name(const void *a, const void *b)
{
	const struct belt_gguf_tensor *x = *(const struct belt_gguf_tensor *const *)a;
	const struct belt_gguf_tensor *y = *(const struct belt_gguf_tensor *const *)b;
	int lx = layer_of(x->name), ly = layer_of(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_float(enum belt_type t)
{
	return t == BELT_TYPE_F32 || t == BELT_TYPE_F16 || t == BELT_TYPE_BF16;
}

/* The type of every tensor, in output order; -1 with a message for a
 * matrix that is already quantized. */
static int plan(struct quant_job *job, const struct belt_gguf_tensor **order,
		struct quant_tensor *qt, char *err, size_t errsz)
{
	const struct belt_quantize_params *p = job->p;
	struct quant_model m;
	struct quant_counters c = {0};
	quant_model_read(job->g, &m);
	for (uint64_t i = 0; i < job->n_tensors; i++) {
		const struct belt_gguf_tensor *t = order[i];
		enum belt_type to = t->type;
		bool fallback = false;
		if (quant_mix_wants(t)) {
			if (!is_float(t->type))
				return belt_errf(err, errsz,
						 "%s: tensor '%s' is already %s: belt quantize reads "
						 "F32, F16 or BF16 weights",
						 p->in, t->name, belt_type_name(t->type));
			to = quant_mix_type(&m, &c, p->target, p->pure, t, &fallback);
		}
		if (fallback && p->warn) {
			char msg[BELT_ERR_SIZE];
			snprintf(msg, sizeof msg, "tensor '%s': a row of %lld values is not a whole "
				 "number of blocks: written as %s", t->name, (long long)t->ne[0],
				 belt_type_name(to));
			p->warn(p->progress_ud, msg);
		}
		uint64_t rows = (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
		qt[i] = (struct quant_tensor){.job = job, .src = t, .to = to, .index = i,
					      .rows = rows,
					      .row_out = belt_type_row_bytes(to, (uint64_t)t->ne[0])};
	}
	return 0;
}

/* Everything but the two keys llama-quantize sets last (and the split
 * keys it drops), then those two. */
static int metadata(const struct quant_job *job, struct belt_gguf_writer *w)
{
	for (uint64_t i = 0; i < job->g->n_kv; i++) {
		const char *k = job->g->kv[i].key;
		if (!strcmp(k, "general.file_type") || !strcmp(k, "general.quantization_version") ||
		    !strcmp(k, "split.no") || !strcmp(k, "split.count") ||
		    !strcmp(k, "split.tensors.count"))
			continue;
		if (belt_gguf_writer_copy_kv(w, &job->g->kv[i]))
			return -1;
	}
	return belt_gguf_writer_u32(w, "general.quantization_version", QUANT_VERSION) ||
	       belt_gguf_writer_u32(w, "general.file_type", job->p->target->file_type) ? -1 : 0;
}

static int write_out(struct quant_job *job, const struct belt_gguf_tensor **order,
		     struct quant_tensor *qt, char *err, size_t errsz)
{
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	if (!w || metadata(job, w)) {
		belt_gguf_writer_free(w);
		return belt_errf(err, errsz, "%s: out of memory", job->p->out);
	}
	for (uint64_t i = 0; i < job->n_tensors; i++)
		if (belt_gguf_writer_tensor_fn(w, order[i]->name, qt[i].to, order[i]->n_dims,
					       order[i]->ne, quant_stream_fill, &qt[i])) {
			belt_gguf_writer_free(w);
			return belt_errf(err, errsz, "%s: tensor '%s': cannot be written as %s",
					 job->p->out, order[i]->name, belt_type_name(qt[i].to));
		}
	int rc = belt_gguf_writer_write(w, job->p->out, err, errsz);
	belt_gguf_writer_free(w);
	if (rc && job->failed)
		belt_errf(err, errsz, "%s", job->err);
	return rc;
}

static int check_params(const struct belt_quantize_params *p, char *err, size_t errsz)
{
	if (!p || !p->in || !p->out)
		return belt_errf(err, errsz, "quantize: no input or output path");
	if (!p->target || !belt_quant_supported(p->target->type))
		return belt_errf(err, errsz, "quantize: no target type (expected one of %s)",
				 belt_quant_target_names());
	if (p->n_threads < 1 || p->n_threads > 64)
		return belt_errf(err, errsz, "quantize: %d threads: expected 1..64", p->n_threads);
	return 0;
}

int belt_quantize_file(const struct belt_quantize_params *p, struct belt_quantize_stats *stats,
		       char *err, size_t errsz)
{
	if (check_params(p, err, errsz))
		return -1;
	struct quant_job job = {.p = p};
	struct belt_gguf *g = belt_gguf_open(p->in, err, errsz);
	if (!g)
		return -1;
	job.g = g;
	job.n_tensors = g->n_tensors;
	int rc = -1;
	const struct belt_gguf_tensor **order = calloc(g->n_tensors + 1, sizeof *order);
	struct quant_tensor *qt = calloc(g->n_tensors + 1, sizeof *qt);
	if (!order || !qt) {
		belt_errf(err, errsz, "%s: out of memory", p->in);
		goto out;
	}
	if (g->alignment != 32) {
		belt_errf(err, errsz, "%s: alignment %llu: belt quantize writes 32-byte aligned "
			  "files only", p->in, (unsigned long long)g->alignment);
		goto out;
	}
	for (uint64_t i = 0; i < g->n_tensors; i++)
		order[i] = &g->tensors[i];
	qsort(order, g->n_tensors, sizeof *order, by_layer_then_name);
	if (plan(&job, order, qt, err, errsz) || write_out(&job, order, qt, err, errsz))
		goto out;
	if (stats) {
		*stats = (struct belt_quantize_stats){.n_tensors = g->n_tensors};
		for (uint64_t i = 0; i < g->n_tensors; i++) {
			stats->n_quantized += qt[i].to != order[i]->type;
			stats->bytes_in += order[i]->size;
			stats->bytes_out += qt[i].row_out * qt[i].rows;
		}
	}
	rc = 0;
out:
	free(job.chunk);
	free(qt);
	free(order);
	belt_gguf_close(g);
	return rc;
}
