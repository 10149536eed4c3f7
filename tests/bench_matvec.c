/* bench-matvec: CPU backend matvec speed, through the backend's own table
 * path (prepare once, table_run per pass), for the shapes of a small Llama
 * (dim 512, ffn 1536, vocab 32000).
 *
 * "hot": one weight matrix, run over and over (it stays in cache if it
 * fits). "stream": a table of as many copies as make 256 MB, so weights
 * come from memory as they do when decoding a model larger than the cache.
 *
 * BELT_CPU_ISA=generic|avx2|avx512 picks a lower instruction set.
 *
 * usage: bench-matvec [seconds per case, default 0.3] [types, e.g. q4_k,q5_k;
 * default all]; BELT_BENCH_CPUTIME=1 (below) for one-thread figures on a
 * busy machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/backend.h"
#include "belt/error.h"
#include "belt/plugin.h"
#include "belt/types.h"

/* the module, from $BELT_PLUGIN_PATH or the build tree's plugins/ */
static const struct belt_backend_ops *B;

/* BELT_BENCH_CPUTIME=1: the process's CPU time instead of the wall clock,
 * which with one thread is immune to other load on a shared machine. */
static double now(void)
{
	static int cpu = -1;
	if (cpu < 0)
		cpu = getenv("BELT_BENCH_CPUTIME") && atoi(getenv("BELT_BENCH_CPUTIME"));
	struct timespec ts;
	clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench-matvec: %s: %s\n", what, err);
	exit(1);
}

/* Seconds per matvec of m rows of k, weights of type t, over `copies`
 * distinct copies of W. */
static double bench(void *ctx, int t, int k, int m, int copies,
		    double seconds)
{
	char err[BELT_ERR_SIZE];
	size_t rb = belt_type_row_bytes(t, (uint64_t)k);
	uint64_t wbytes = (uint64_t)rb * m;
	struct belt_buffer *w, *x, *y;
	if (B->buffer_create(ctx, BELT_BUFFER_WEIGHTS, wbytes * copies, &w, err,
			     sizeof err) ||
	    B->buffer_create(ctx, BELT_BUFFER_SCRATCH, (uint64_t)k * 4, &x, err,
			     sizeof err) ||
	    B->buffer_create(ctx, BELT_BUFFER_SCRATCH, (uint64_t)m * 4, &y, err,
			     sizeof err))
		die("buffer_create", err);
	/* small weights and scales so that nothing overflows */
	uint8_t *tmp = malloc(wbytes);
	uint32_t s = 12345;
	for (uint64_t i = 0; i < wbytes; i++) {
		s = s * 1103515245u + 12345u;
		tmp[i] = (uint8_t)(s >> 16);
	}
	size_t bb = belt_type_block_bytes(t);
	if (t == BELT_TYPE_F32)
		for (uint64_t i = 0; i < wbytes / 4; i++)
			((float *)tmp)[i] = (float)(i % 17) * 0.01f;
	else if (t == BELT_TYPE_F16)
		for (uint64_t i = 0; i < wbytes / 2; i++)
			((uint16_t *)tmp)[i] = belt_f32_to_fp16((float)(i % 17) * 0.01f);
	else
		for (uint64_t b = 0; b < wbytes / bb; b++) {
			uint16_t d = belt_f32_to_fp16(0.01f);
			memcpy(tmp + b * bb, &d, 2); /* d, or Q4_K's d */
			/* the other fp16 scales: dmin or m, or d at the end */
			if (t == BELT_TYPE_Q4_K || t == BELT_TYPE_Q5_K ||
			    t == BELT_TYPE_Q4_1 || t == BELT_TYPE_Q5_1)
				memcpy(tmp + b * bb + 2, &d, 2);
			if (t == BELT_TYPE_Q6_K)
				memcpy(tmp + b * bb + 208, &d, 2);
			if (t == BELT_TYPE_Q3_K)
				memcpy(tmp + b * bb + 108, &d, 2);
			if (t == BELT_TYPE_Q2_K) {
				memcpy(tmp + b * bb + 80, &d, 2);
				memcpy(tmp + b * bb + 82, &d, 2);
			}
		}
	for (int c = 0; c < copies; c++)
		if (B->buffer_write(ctx, w, wbytes * c, tmp, wbytes, err,
				    sizeof err))
			die("buffer_write", err);
	free(tmp);
	float *xv = malloc((size_t)k * 4);
	for (int i = 0; i < k; i++)
		xv[i] = (float)(i % 7) * 0.1f - 0.3f;
	B->buffer_write(ctx, x, 0, xv, (uint64_t)k * 4, err, sizeof err);
	free(xv);

	struct belt_cmd *cmds = calloc((size_t)copies, sizeof *cmds);
	for (int c = 0; c < copies; c++) {
		struct belt_cmd *cmd = &cmds[c];
		cmd->kernel = B->kernel_find(ctx, "matvec", NULL, t);
		cmd->label = "bench";
		cmd->n_bind = 3;
		cmd->bind[0] = (struct belt_binding){
			.buf = w, .offset = wbytes * c, .size = wbytes,
			.type = t, .ne = {k, m}};
		cmd->bind[1] = (struct belt_binding){
			.buf = x, .size = (uint64_t)k * 4, .type = BELT_TYPE_F32};
		cmd->bind[2] = (struct belt_binding){
			.buf = y, .size = (uint64_t)m * 4, .type = BELT_TYPE_F32};
		cmd->n_param = 2;
		cmd->param[0].i = k;
		cmd->param[1].i = m;
	}
	struct belt_table tab = {.cmds = cmds, .n_cmds = (uint32_t)copies,
				 .n_ctx = 1};
	if (B->table_prepare(ctx, &tab, err, sizeof err))
		die("table_prepare", err);
	B->table_run(ctx, &tab, 0, 1, 0, err, sizeof err); /* warm up */
	long runs = 0;
	double t0 = now(), t1;
	do {
		if (B->table_run(ctx, &tab, 0, 1, 0, err, sizeof err))
			die("table_run", err);
		runs++;
		t1 = now();
	} while (t1 - t0 < seconds);
	B->table_release(ctx, &tab);
	free(cmds);
	B->buffer_destroy(ctx, w);
	B->buffer_destroy(ctx, x);
	B->buffer_destroy(ctx, y);
	return (t1 - t0) / ((double)runs * copies);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	static const int shapes[][2] = {{512, 32000}, {512, 1536}, {1536, 512}};
	static const int types[] = {BELT_TYPE_F32,  BELT_TYPE_F16,
				    BELT_TYPE_Q8_0, BELT_TYPE_Q4_0,
				    BELT_TYPE_Q4_K, BELT_TYPE_Q6_K,
				    BELT_TYPE_Q4_1, BELT_TYPE_Q5_0,
				    BELT_TYPE_Q5_1, BELT_TYPE_IQ4_NL,
				    BELT_TYPE_Q2_K, BELT_TYPE_Q3_K,
				    BELT_TYPE_Q5_K, BELT_TYPE_IQ4_XS};
	const char *only = argc > 2 ? argv[2] : NULL;
	const size_t n_types = sizeof types / sizeof types[0];
	char err[BELT_ERR_SIZE];
	B = belt_backend_get("cpu", err, sizeof err);
	if (!B)
		die("belt_backend_get", err);
	printf("%-12s %-6s %3s  %10s %8s  %10s %8s\n", "m x k", "type", "thr",
	       "hot us", "GB/s", "stream us", "GB/s");
	for (int nt = 1; nt <= 2; nt++) {
		void *ctx;
		struct belt_backend_options opt = {.n_threads = nt,
						   .device = -1};
		if (B->create(&opt, &ctx, err, sizeof err))
			die("create", err);
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
			for (size_t ti = 0; ti < n_types; ti++) {
				int k = shapes[s][0], m = shapes[s][1];
				int t = types[ti];
				char name[16];
				snprintf(name, sizeof name, ",%s,", belt_type_name(t));
				if (only) {
					char list[256];
					snprintf(list, sizeof list, ",%s,", only);
					if (!strstr(list, name))
						continue;
				}
				double bytes = (double)belt_type_row_bytes(
						       t, (uint64_t)k) * m;
				int copies = (int)(256e6 / bytes) + 1;
				double hot = bench(ctx, t, k, m, 1, seconds);
				double cold = bench(ctx, t, k, m, copies,
						    seconds);
				char shape[32];
				snprintf(shape, sizeof shape, "%dx%d", m, k);
				printf("%-12s %-6s %3d  %10.1f %8.1f  %10.1f "
				       "%8.1f\n",
				       shape, belt_type_name(t), nt, hot * 1e6,
				       bytes / hot * 1e-9, cold * 1e6,
				       bytes / cold * 1e-9);
				fflush(stdout);
			}
		B->destroy(ctx);
	}
	return 0;
}
