/* The CPU backend's ops table: host buffers, kernel lookup, and a dispatch
 * table prepared once (bindings resolved to pointers, work cut into chunks,
 * dependencies found) and replayed per position by the thread pool without
 * allocating. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "belt/error.h"
#include "cpu.h"

#define MAX_THREADS 512
#define BIG_BUFFER (1u << 20) /* bytes from which buffers are mapped */
/* Chunks: enough per thread to even out the end of a command, each big
 * enough that claiming it (an atomic on a shared line, ~0.1 us) is noise. */
#define CHUNK_MIN_BYTES (128 * 1024)
#define CHUNKS_PER_THREAD 8

/* What table_prepare makes: t->priv. */
struct plan {
	struct cpu_cmd *cmds;
	uint32_t n_cmds;
	uint32_t rows;	  /* the table's rows: > 1 for a batched table */
	uint64_t max_pos; /* positions pos < max_pos fit every binding */
	void *scratch;	  /* n_threads * scratch_stride bytes */
	size_t scratch_stride;
	uint32_t *depth;  /* [rows]: tree depths, filled per tree run */
	uint32_t seq_ctx; /* a table of sequences: a sequence's positions */
};

/* One table_run, handed to every thread. */
struct job {
	struct cpu_ctx *ctx;
	const struct plan *plan;
	uint64_t base; /* the run's first chunk number */
	uint32_t pos, n, flags;
	const int32_t *parent; /* tree runs */
	const struct belt_table *seqs; /* runs of a table of sequences */
};

_Static_assert(sizeof(struct job) <= CPU_JOB_ARG, "job too big for the pool");

/* ---- create / destroy ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* F16C from CPUID leaf 1 (clang 14's __builtin_cpu_supports lacks it). */
static bool has_f16c(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

/* The instruction sets this CPU runs, best last. */
static int usable_isas(const struct cpu_isa **out)
{
	int n = 0;
	out[n++] = &cpu_isa_generic;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (cpu_isa_avx2 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma") && has_f16c()) {
		out[n++] = cpu_isa_avx2;
		if (cpu_isa_avx512 && __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vl") &&
		    __builtin_cpu_supports("avx512vnni"))
			out[n++] = cpu_isa_avx512;
	}
#endif
	return n;
}

/* The best set, or the one named by want; routines it lacks come from the
 * sets below it. */
static int pick_isa(const char *want, struct cpu_isa *isa, char *err,
		    size_t errsz)
{
	const struct cpu_isa *sets[3];
	int n = usable_isas(sets), top = n - 1;
	if (want && *want && strcmp(want, "best")) {
		for (top = n - 1; top >= 0; top--)
			if (!strcmp(sets[top]->name, want))
				break;
		if (top < 0)
			return belt_errf(err, errsz,
					 "cpu: isa %s (belt.yaml backends.cpu.isa "
					 "or BELT_CPU_ISA): not one this CPU and "
					 "build run (best, generic, avx2, avx512)",
					 want);
	}
	*isa = *sets[top];
	for (int i = top - 1; i >= 0; i--) {
		for (int w = 0; w < CPU_W_COUNT; w++)
			if (!isa->rows[w])
				isa->rows[w] = sets[i]->rows[w];
		if (!isa->argmax)
			isa->argmax = sets[i]->argmax;
		if (!isa->attend)
			isa->attend = sets[i]->attend;
		if (!isa->attend_f16)
			isa->attend_f16 = sets[i]->attend_f16;
		if (!isa->silu_mul)
			isa->silu_mul = sets[i]->silu_mul;
		if (!isa->gemm)
			isa->gemm = sets[i]->gemm;
		if (!isa->gemm_i8)
			isa->gemm_i8 = sets[i]->gemm_i8;
		if (!isa->exp_sum)
			isa->exp_sum = sets[i]->exp_sum;
		if (!isa->f16)
			isa->f16 = sets[i]->f16;
	}
	return 0;
}

static int online_cores(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores > 0 ? (int)cores : 1;
}

/* The CPU's name from /proc/cpuinfo, else "cpu". */
static void cpu_name(char *out, size_t outsz)
{
	snprintf(out, outsz, "cpu");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		snprintf(out, outsz, "%.*s", (int)strcspn(colon, "\n"), colon);
		break;
	}
	fclose(f);
}

/* One device: the host, with the code path create() would take. */
static int cpu_list_devices(char *buf, size_t bufsz, char *err, size_t errsz)
{
	const struct cpu_isa *sets[3];
	int n = usable_isas(sets);
	struct cpu_isa isa;
	const char *want = getenv("BELT_CPU_ISA");
	if (pick_isa(want, &isa, err, errsz))
		return -1;
	char name[128], runs[64] = "";
	cpu_name(name, sizeof name);
	for (int i = 0; i < n; i++)
		snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s",
			 i ? " " : "", sets[i]->name);
	if (bufsz)
		snprintf(buf, bufsz,
			 "0: %s, %d cores, ISA path %s%s (this CPU runs %s) "
			 "(default)\n",
			 name, online_cores(), isa.name,
			 want && *want ? " from BELT_CPU_ISA" : "", runs);
	return 1;
}

static int cpu_create(const struct belt_backend_options *opt, void **out,
		      char *err, size_t errsz)
{
	if (opt && opt->device > 0)
		return belt_errf(err, errsz,
				 "cpu: device %d requested, the CPU backend has "
				 "one device (0)",
				 opt->device);
	int n = opt ? opt->n_threads : 0;
	if (n <= 0)
		n = online_cores();
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	struct cpu_ctx *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return belt_errf(err, errsz, "cpu: out of memory");
	/* belt.yaml's isa (or BELT_CPU_ISA) picks a lower path for tests
	 * and debugging */
	static const char *const keys[] = {"isa", NULL};
	if (belt_settings_check(opt, "cpu", keys, err, errsz) ||
	    pick_isa(belt_setting_get(opt, "isa", "BELT_CPU_ISA"), &ctx->isa_merged, err,
		     errsz)) {
		free(ctx);
		return -1;
	}
	ctx->n_threads = n;
	ctx->isa = &ctx->isa_merged;
	if (n > 1 && cpu_pool_create(n, &ctx->pool, err, errsz)) {
		free(ctx);
		return -1;
	}
	*out = ctx;
	return 0;
}

static void cpu_destroy(void *vctx)
{
	struct cpu_ctx *ctx = vctx;
	if (!ctx)
		return;
	cpu_pool_destroy(ctx->pool); /* joins the workers */
	free(ctx);
}

/* ---- buffers ---- */

static int cpu_buffer_create(void *ctx, enum belt_buffer_usage usage,
			     uint64_t size, struct belt_buffer **out,
			     char *err, size_t errsz)
{
	(void)ctx;
	(void)usage;
	struct belt_buffer *b = malloc(sizeof *b);
	/* whole cache lines, so a vector loop never straddles the end */
	uint64_t alloc = (size + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
	if (!alloc)
		alloc = CPU_ALIGN;
	if (!b || alloc < size || alloc > PTRDIFF_MAX) {
		free(b);
		return belt_errf(err, errsz, "cpu: cannot allocate a buffer of %" PRIu64 " bytes",
				 size);
	}
	/* large buffers (a long context's KV cache) from the kernel's zero
	 * pages, touched only when used, not zero-filled up front */
	b->mapped = alloc >= BIG_BUFFER;
	if (b->mapped) {
		b->data = mmap(NULL, (size_t)alloc, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->data == MAP_FAILED) {
			free(b);
			return belt_errf(err, errsz, "cpu: cannot map a buffer of %" PRIu64 " bytes: %s",
					 size, strerror(errno));
		}
	} else if (posix_memalign(&b->data, CPU_ALIGN, (size_t)alloc)) {
		free(b);
		return belt_errf(err, errsz, "cpu: cannot allocate a buffer of %" PRIu64 " bytes",
				 size);
	} else {
		memset(b->data, 0, (size_t)alloc);
	}
	b->size = size;
	b->owned = true;
	*out = b;
	return 0;
}

static int cpu_buffer_wrap(void *ctx, const void *host, uint64_t size,
			   struct belt_buffer **out, char *err, size_t errsz)
{
	(void)ctx;
	if (!host && size)
		return belt_errf(err, errsz,
				 "cpu: cannot wrap NULL host memory of %" PRIu64
				 " bytes",
				 size);
	struct belt_buffer *b = malloc(sizeof *b);
	if (!b)
		return belt_errf(err, errsz, "cpu: out of memory");
	/* kernels only read weights: wrapping PROT_READ memory is fine */
	b->data = (void *)host;
	b->size = size;
	b->owned = false;
	b->mapped = false;
	*out = b;
	return 0;
}

static void cpu_buffer_destroy(void *ctx, struct belt_buffer *b)
{
	(void)ctx;
	if (!b)
		return;
	if (b->owned && b->mapped)
		munmap(b->data, (size_t)((b->size + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN));
	else if (b->owned)
		free(b->data);
	free(b);
}

static int check_range(const struct belt_buffer *b, uint64_t offset,
		       uint64_t size, const char *what, char *err,
		       size_t errsz)
{
	if (!b)
		return belt_errf(err, errsz, "cpu: %s: NULL buffer", what);
	if (offset > b->size || size > b->size - offset)
		return belt_errf(err, errsz,
				 "cpu: %s of %" PRIu64 " bytes at offset %" PRIu64
				 " is outside the buffer of %" PRIu64 " bytes",
				 what, size, offset, b->size);
	return 0;
}

static int cpu_buffer_write(void *ctx, struct belt_buffer *b, uint64_t offset,
			    const void *src, uint64_t size, char *err,
			    size_t errsz)
{
	(void)ctx;
	if (check_range(b, offset, size, "buffer_write", err, errsz))
		return -1;
	if (size)
		memcpy((char *)b->data + offset, src, (size_t)size);
	return 0;
}

static int cpu_buffer_read(void *ctx, struct belt_buffer *b, uint64_t offset,
			   void *dst, uint64_t size, char *err, size_t errsz)
{
	(void)ctx;
	if (check_range(b, offset, size, "buffer_read", err, errsz))
		return -1;
	if (size)
		memcpy(dst, (const char *)b->data + offset, (size_t)size);
	return 0;
}

static uint64_t buffer_bytes(const struct belt_buffer *b)
{
	return b->size;
}

/* Regions in order: a memmove each (what a region reads an earlier one
 * may have written). Wrapped memory (weights the core mapped read-only)
 * is never a destination. */
static int cpu_buffer_copy(void *ctx, const struct belt_copy *r, uint32_t n, char *err,
			   size_t errsz)
{
	(void)ctx;
	if (belt_copy_check(r, n, buffer_bytes, "cpu", err, errsz))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!r[i].dst->owned)
			return belt_errf(err, errsz,
					 "cpu: buffer_copy region %u: the destination wraps the "
					 "caller's memory, which the backend only reads",
					 i);
	for (uint32_t i = 0; i < n; i++)
		if (r[i].size)
			memmove((char *)r[i].dst->data + r[i].dst_off,
				(const char *)r[i].src->data + r[i].src_off, (size_t)r[i].size);
	return 0;
}

/* ---- kernels ---- */

static const struct belt_kernel *cpu_kernel_find(void *ctx, const char *op,
						 const char *variant,
						 int wtype)
{
	const struct belt_kernel *k = belt_kernel_lookup(cpu_kernels, cpu_n_kernels, op, variant,
							 wtype);
	return k || !ctx ? k : cpu_ext_kernel(ctx, op, variant);
}

/* ---- prepare / release / run ---- */

static void plan_free(struct plan *pl)
{
	if (!pl)
		return;
	for (uint32_t i = 0; i < pl->n_cmds; i++)
		free(pl->cmds[i].owned);
	free(pl->cmds);
	free(pl->scratch);
	free(pl->depth);
	free(pl);
}

/* Cut a command's items (for a pass over all rows) into chunks of whole
 * `align` groups. */
static void cut_chunks(struct cpu_cmd *c, const struct cpu_prep *pr, int nth)
{
	int64_t per = pr->len > 0 ? pr->len : 1;
	c->items_per_row = pr->fixed_len ? 0 : per;
	c->rows_per_item = pr->rows_per_item > 0 ? pr->rows_per_item : 1;
	int64_t len = pr->fixed_len ? per
				    : per * ((c->rows + c->rows_per_item - 1) / c->rows_per_item);
	int64_t n = 1;
	if (nth > 1 && len > 1) {
		int64_t most = (int64_t)nth *
			       (pr->max_chunks ? pr->max_chunks : CHUNKS_PER_THREAD);
		n = pr->item_bytes >= CHUNK_MIN_BYTES
			    ? most
			    : (int64_t)((uint64_t)len * pr->item_bytes /
					CHUNK_MIN_BYTES);
		n = n < 1 ? 1 : n > most ? most : n;
	}
	int64_t chunk = (len + n - 1) / n;
	chunk = (chunk + pr->align - 1) / pr->align * pr->align;
	c->len = len;
	c->chunk = chunk;
	c->n_chunks = (uint32_t)((len + chunk - 1) / chunk);
}

static int prepare_cmd(struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		       uint32_t idx, struct cpu_cmd *c, struct cpu_prep *pr,
		       char *err, size_t errsz)
{
	const struct belt_kernel *k = cmd->kernel;
	const char *name = cmd->label ? cmd->label : "?";
	if (!k || ((k < cpu_kernels || k >= cpu_kernels + cpu_n_kernels) &&
		   !cpu_ext_owns(ctx, k)))
		return belt_errf(err, errsz,
				 "cpu: command %u (%s): kernel is not one of "
				 "this backend's",
				 idx, name);
	if (belt_cmd_check(cmd, err, errsz))
		return -1;
	for (int i = 0; i < cmd->n_bind; i++) {
		const struct belt_binding *b = &cmd->bind[i];
		if (!b->buf)
			return belt_errf(err, errsz,
					 "%s: %s binding %d has no buffer",
					 name, k->op, i);
		if (b->offset > b->buf->size ||
		    b->size > b->buf->size - b->offset)
			return belt_errf(err, errsz,
					 "%s: %s binding %d (%" PRIu64
					 " bytes at offset %" PRIu64
					 ") is outside its buffer of %" PRIu64
					 " bytes",
					 name, k->op, i, b->size, b->offset,
					 b->buf->size);
		c->p[i] = (char *)b->buf->data + b->offset;
	}
	memcpy(c->prm, cmd->param, sizeof c->prm);
	const struct cpu_op *op = k->impl;
	c->run = op->run;
	c->head = cmd->head;
	c->src = cmd;
	c->patch = cmd->patch;
	c->rows = belt_cmd_rows(cmd);
	pr->max_pos = UINT64_MAX;
	pr->len = 1;
	pr->align = 1;
	if (op->prepare(ctx, cmd, c, pr, err, errsz))
		return -1;
	cut_chunks(c, pr, ctx->n_threads);
	return 0;
}

/* A table of sequences: its caches in t->n_ctx / seq_ctx equal parts,
 * one a sequence (belt_table.seq_ctx); each command's kv_slots then a
 * part's. */
static int seq_parts(const struct belt_table *t, struct plan *pl, char *err, size_t errsz)
{
	uint32_t parts;
	if (belt_seq_parts(t, &parts, err, errsz))
		return belt_err_prefix(err, errsz, "cpu: table_prepare");
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		struct cpu_cmd *c = &pl->cmds[i];
		if (c->kv_slots &&
		    belt_seq_part_slots(&t->cmds[i], c->kv_slots, parts, &c->kv_slots, err, errsz))
			return belt_err_prefix(err, errsz, "cpu");
	}
	pl->seq_ctx = t->seq_ctx;
	return 0;
}

static int cpu_table_prepare(void *vctx, struct belt_table *t, char *err,
			     size_t errsz)
{
	struct cpu_ctx *ctx = vctx;
	if (!t || (!t->cmds && t->n_cmds))
		return belt_errf(err, errsz, "cpu: table_prepare: no table");
	struct plan *pl = calloc(1, sizeof *pl);
	bool *barrier = calloc(t->n_cmds ? t->n_cmds : 1, sizeof *barrier);
	if (!pl || !barrier ||
	    !(pl->cmds = calloc(t->n_cmds ? t->n_cmds : 1, sizeof *pl->cmds))) {
		free(barrier);
		plan_free(pl);
		return belt_errf(err, errsz, "cpu: table_prepare: out of memory "
			"for %u commands", t->n_cmds);
	}
	pl->max_pos = t->n_ctx ? t->n_ctx : UINT64_MAX;
	pl->rows = t->rows > 1 ? t->rows : 1;
	if (!(pl->depth = calloc(pl->rows, sizeof *pl->depth))) {
		free(barrier);
		plan_free(pl);
		return belt_errf(err, errsz, "cpu: table_prepare: out of memory");
	}
	size_t scratch = 0;
	for (uint32_t i = 0; i < t->n_cmds; i++) {
		struct cpu_cmd *c = &pl->cmds[i];
		struct cpu_prep pr = {0};
		pl->n_cmds = i + 1; /* so that plan_free frees c->owned */
		if (prepare_cmd(ctx, &t->cmds[i], i, c, &pr, err, errsz)) {
			free(barrier);
			plan_free(pl);
			return -1;
		}
		if (pr.max_pos < pl->max_pos)
			pl->max_pos = pr.max_pos;
		if (pr.scratch > scratch)
			scratch = pr.scratch;


		/* x is still quantized in this thread's scratch when the
		 * previous command quantized the same x and wrote elsewhere */
		struct cpu_cmd *prev = i > 0 ? &pl->cmds[i - 1] : NULL;
		if (c->quant && prev && prev->quant == c->quant &&
		    prev->run == c->run && prev->head == c->head &&
		    prev->gemm_i8 == c->gemm_i8 && prev->tile == c->tile &&
		    prev->p[1] == c->p[1] && prev->prm[0].i == c->prm[0].i) {
			const struct belt_cmd *pc = &t->cmds[i - 1];
			const char *x = c->p[1], *y = prev->p[2];
			/* (a batched table's x: every row) */
			if (!(y < x + t->cmds[i].bind[1].size &&
			      x < y + pc->bind[2].size))
				c->reuse_xq = true;
		}
	}
	if (t->seqs && pl->rows > 1 && seq_parts(t, pl, err, errsz)) {
		free(barrier);
		plan_free(pl);
		return -1;
	}
	/* commands between two waits run concurrently on different threads */
	belt_table_barriers(t, barrier);
	for (uint32_t i = 0; i < t->n_cmds; i++)
		pl->cmds[i].barrier = barrier[i];
	free(barrier);
	pl->scratch_stride = (scratch + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
	size_t total = pl->scratch_stride * (size_t)ctx->n_threads;
	if (total && posix_memalign(&pl->scratch, CPU_ALIGN, total)) {
		pl->scratch = NULL;
		plan_free(pl);
		return belt_errf(err, errsz, "cpu: table_prepare: cannot "
			"allocate %zu bytes of scratch", total);
	}
	if (total)
		memset(pl->scratch, 0, total);
	t->priv = pl;
	return 0;
}

static void cpu_table_release(void *vctx, struct belt_table *t)
{
	struct cpu_ctx *ctx = vctx;
	if (!t)
		return;
	cpu_pool_quiesce(ctx->pool); /* no worker still walks the plan */
	plan_free(t->priv);
	t->priv = NULL;
}

void cpu_row_at(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
		struct belt_row_at *at)
{
	if (ps->seq_pos)
		belt_row_at_seq(c->patch, ps->pos, r, ps->seq_pos[r], ps->seq_base[r], at);
	else
		belt_row_at(c->patch, ps->batched, ps->pos, r, ps->depth ? ps->depth[r] : r, at);
}

uint32_t cpu_kv_first(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r)
{
	return ps->seq_pos ? ps->seq_base[r] / ps->seq_ctx * c->kv_slots : 0;
}

uint32_t cpu_kv_slot(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
		     const struct belt_row_at *at)
{
	uint32_t p = ps->seq_pos ? ps->seq_pos[r] : at->slot;
	return cpu_kv_first(c, ps, r) + p % c->kv_slots;
}

/* Run the chunks of one command's pass; returns the next chunk number. */
static uint64_t run_cmd(const struct cpu_cmd *c, struct cpu_worker *w, struct cpu_pool *pool,
			int ith, const struct cpu_pass *ps, uint64_t first)
{
	int64_t len = c->items_per_row ? c->items_per_row * ((ps->n_rows + c->rows_per_item - 1) /
							     c->rows_per_item)
				       : c->len;
	uint64_t end = first + (uint64_t)((len + c->chunk - 1) / c->chunk);
	uint64_t k;
	for (k = first; !pool && k < end; k++) {
		int64_t i0 = (int64_t)(k - first) * c->chunk;
		c->run(c, w, ps, i0, i0 + c->chunk < len ? i0 + c->chunk : len);
	}
	while (pool && cpu_pool_claim(pool, end, &k)) {
		int64_t i0 = (int64_t)(k - first) * c->chunk;
		c->run(c, w, ps, i0, i0 + c->chunk < len ? i0 + c->chunk : len);
		cpu_pool_finish(pool, ith);
	}
	return end;
}

/* Every thread walks the whole run. Chunk numbers run on from j->base in
 * command order; a thread takes what is left of each command, then, where
 * later commands depend on it, waits until all chunks so far are done. A
 * one-row table makes a pass per position, a batched table one pass. */
static void walk(const void *arg, int ith, int nth)
{
	const struct job *j = arg;
	const struct plan *pl = j->plan;
	struct cpu_pool *pool = j->ctx->pool;
	struct cpu_worker w = {
		.ith = ith,
		.nth = nth,
		.scratch = (char *)pl->scratch + pl->scratch_stride * ith,
		.seq = UINT64_MAX,
		.xq_seq = UINT64_MAX,
	};
	bool head_last = j->flags & BELT_RUN_HEAD_LAST_ONLY;
	bool batched = pl->rows > 1;
	uint32_t end = batched ? j->pos + 1 : j->pos + j->n;
	uint64_t at = j->base;
	for (uint32_t p = j->pos; p < end; p++) {
		struct cpu_pass all = {.pos = p, .row0 = 0, .n_rows = batched ? j->n : 1,
				       .batched = batched, .parent = j->parent,
				       .depth = j->parent ? pl->depth : NULL,
				       .seq_pos = j->seqs ? j->seqs->seq_pos : NULL,
				       .seq_base = j->seqs ? j->seqs->seq_base : NULL,
				       .seq_ctx = pl->seq_ctx};
		struct cpu_pass last = all;
		if (batched) {
			last.row0 = j->n - 1;
			last.n_rows = 1;
		}
		bool skip_head = (j->flags & BELT_RUN_SKIP_HEAD) ||
				 (head_last && !batched && p + 1 != end);
		for (uint32_t i = 0; i < pl->n_cmds; i++) {
			const struct cpu_cmd *c = &pl->cmds[i];
			w.prev_seq = w.seq;
			w.seq = at;
			if (!(skip_head && c->head))
				at = run_cmd(c, &w, pool, ith,
					     c->head && head_last && batched ? &last : &all, at);
			/* a skipped command keeps its wait: the commands
			 * around it were grouped with it, not with each other */
			if (pool && c->barrier)
				cpu_pool_wait(pool, at);
		}
	}
}

static int cpu_table_run(void *vctx, struct belt_table *t, uint32_t pos,
			 uint32_t n, uint32_t flags, char *err, size_t errsz)
{
	struct cpu_ctx *ctx = vctx;
	if (!t || !t->priv)
		return belt_errf(err, errsz, "cpu: table_run: table not "
			"prepared");
	struct plan *pl = t->priv;
	if (!n)
		return 0;
	if ((uint64_t)pos + n > pl->max_pos)
		return belt_errf(err, errsz,
				 "cpu: table_run: positions %u..%" PRIu64
				 " exceed the %" PRIu64
				 " the table's buffers hold",
				 pos, (uint64_t)pos + n - 1, pl->max_pos);
	if (pl->rows > 1 && n > pl->rows)
		return belt_errf(err, errsz,
				 "cpu: table_run: %u rows in a pass of a table of %u", n, pl->rows);
	struct job j = {
		.ctx = ctx, .plan = pl, .pos = pos, .n = n, .flags = flags};
	if ((flags & BELT_RUN_TREE) && pl->rows > 1 && t->parent) {
		for (uint32_t r = 0; r < n; r++) {
			int32_t p = t->parent[r];
			if (p >= (int32_t)r || p < -1)
				return belt_errf(err, errsz,
						 "cpu: table_run: parent of row %u is %d: expected -1 .. %d",
						 r, p, (int)r - 1);
			pl->depth[r] = p < 0 ? 0 : pl->depth[p] + 1;
		}
		j.parent = t->parent;
	}
	if (t->seqs && pl->rows > 1) {
		if (!t->seq_pos || !t->seq_base || (flags & BELT_RUN_TREE))
			return belt_errf(err, errsz, "cpu: table_run: a table of sequences needs "
					 "seq_pos and seq_base and no tree");
		for (uint32_t r = 0; r < n; r++) {
			if ((uint64_t)t->seq_base[r] + t->seq_pos[r] >= pl->max_pos)
				return belt_errf(err, errsz,
						 "cpu: table_run: row %u at slot %u + %u: the "
						 "cache holds %" PRIu64, r, t->seq_base[r],
						 t->seq_pos[r], pl->max_pos);
			if (belt_seq_row_check(t, r, err, errsz))
				return belt_err_prefix(err, errsz, "cpu: table_run");
		}
		j.seqs = t;
	}
	if (ctx->pool) {
		j.base = cpu_pool_frontier(ctx->pool);
		cpu_pool_run(ctx->pool, walk, &j, sizeof j);
	} else {
		walk(&j, 0, 1);
	}
	return 0;
}

/* MemAvailable from /proc/meminfo, else the free pages. */
static int cpu_memory_available(void *ctx, uint64_t *bytes, char *err, size_t errsz)
{
	(void)ctx;
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			fclose(f);
			*bytes = (uint64_t)kb * 1024;
			return 0;
		}
	if (f)
		fclose(f);
	long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return belt_errf(err, errsz, "cpu: cannot tell the free memory");
	*bytes = (uint64_t)pages * (uint64_t)size;
	return 0;
}

const struct belt_backend_ops cpu_backend_ops = {
	.abi = BELT_BACKEND_ABI,
	.name = "cpu",
	.description = "CPU: portable C with AVX2 and AVX-512 kernels, "
		       "one thread per core",
	.create = cpu_create,
	.destroy = cpu_destroy,
	.buffer_create = cpu_buffer_create,
	.buffer_wrap = cpu_buffer_wrap,
	.buffer_destroy = cpu_buffer_destroy,
	.buffer_write = cpu_buffer_write,
	.buffer_read = cpu_buffer_read,
	.kernel_find = cpu_kernel_find,
	.table_prepare = cpu_table_prepare,
	.table_release = cpu_table_release,
	.table_run = cpu_table_run,
	.list_devices = cpu_list_devices,
	.memory_available = cpu_memory_available,
	.buffer_copy = cpu_buffer_copy,
};
