/* libFuzzer target: belt quantize on an untrusted GGUF.
 *
 * The input is a GGUF image, written to a file (a folder in $TMPDIR, else
 * /dev/shm) and quantized by belt_quantize_file to a target its length
 * picks (a single type, --pure or not, or a mix), with 1 or 2 threads.
 * Invariants: a failure is one line naming the input or the output; a
 * success writes a file the reader accepts, holding the input's tensors
 * (same names, same shapes), each in its own type or one belt writes,
 * whose quantized rows decode (tests/quant_ref.h). A broken invariant
 * aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/quant.h"
#include "../quant_ref.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], in[4200], out[4200];
static unsigned long n_inputs, n_written;

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz quantize: invariant broken: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void cleanup(void)
{
	if (getenv("BELT_FUZZ_STATS"))
		fprintf(stderr, "fuzz quantize: %lu inputs, %lu quantized\n", n_inputs, n_written);
	unlink(in);
	unlink(out);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof dir, "%s/belt-fuzz-quantize-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(2);
	}
	snprintf(in, sizeof in, "%s/in.gguf", dir);
	snprintf(out, sizeof out, "%s/out.gguf", dir);
	atexit(cleanup);
	return 0;
}

/* The output has the input's tensors, and each quantized row decodes. */
static void check_output(const struct belt_gguf *src)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(out, err, sizeof err);
	if (!g)
		broken("the output does not open", err);
	if (g->n_tensors != src->n_tensors)
		broken("the output's tensor count differs", NULL);
	static float row[1 << 16];
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		const struct belt_gguf_tensor *t = &g->tensors[i];
		const struct belt_gguf_tensor *s = belt_gguf_find_tensor(src, t->name);
		if (!s || memcmp(s->ne, t->ne, sizeof t->ne) || s->n_dims != t->n_dims)
			broken("an output tensor is not an input tensor", t->name);
		if (t->type != s->type && !belt_quant_supported(t->type) && t->type != BELT_TYPE_F16)
			broken("an output tensor has a type belt does not write", t->name);
		if (t->type == s->type || (uint64_t)t->ne[0] > sizeof row / sizeof *row)
			continue;
		size_t rb = belt_type_row_bytes(t->type, (uint64_t)t->ne[0]);
		if (quant_ref_row(t->type, t->data, (size_t)t->ne[0], row) ||
		    rb * (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]) != t->size)
			broken("a quantized tensor does not decode", t->name);
	}
	belt_gguf_close(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const targets[] = {"Q4_0", "Q8_0", "Q4_K_M", "IQ4_XS", "Q2_K", "Q6_K",
					      "Q5_1", "Q3_K"};
	n_inputs++;
	FILE *f = fopen(in, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		broken("cannot write the input file", in);
	unlink(out);
	struct belt_quantize_params p = {.in = in, .out = out, .n_threads = 1 + (int)(size % 2),
					 .pure = size % 3 == 0,
					 .target = belt_quant_target_find(targets[size % 8])};
	char err[BELT_ERR_SIZE] = "";
	if (belt_quantize_file(&p, NULL, err, sizeof err)) {
		if (!*err || strchr(err, '\n'))
			broken("a failure without a one-line message", err);
		if (strncmp(err, in, strlen(in)) && strncmp(err, out, strlen(out)))
			broken("the message names neither file", err);
		if (access(out, F_OK) == 0)
			broken("a failed run left an output", out);
		return 0;
	}
	struct belt_gguf *src = belt_gguf_open(in, err, sizeof err);
	if (!src)
		broken("quantized an input the reader rejects", err);
	check_output(src);
	belt_gguf_close(src);
	n_written++;
	return 0;
}
