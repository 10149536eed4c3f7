/* A session: the KV cache, scratch buffers and dispatch table for one
 * context, all allocated here, once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

void belt_session_params_default(struct belt_session_params *p)
{
	*p = (struct belt_session_params){.n_ctx = 0, .chunk = 16, .n_batch = 2048,
					  .n_ubatch = 512, .type_k = BELT_TYPE_F16,
					  .type_v = BELT_TYPE_F16};
}

/* Evaluate a buffer size expression to a whole, positive element count. */
static int buffer_elems(struct belt_session *s, const struct arch_named_expr *e,
			uint64_t *out, char *err, size_t errsz)
{
	double v;
	char msg[BELT_ERR_SIZE];
	if (belt_expr_eval(e->expr, &s->vars, &v, msg, sizeof msg))
		return belt_errf(err, errsz, "%s:%u:%u: buffer '%s': %s", s->m->arch->path,
				 e->pos.line, e->pos.col, e->name, msg);
	if (v != floor(v) || v < 1 || v > 1e12)
		return belt_errf(err, errsz, "%s:%u:%u: buffer '%s' has %g elements: expected a positive integer",
				 s->m->arch->path, e->pos.line, e->pos.col, e->name, v);
	*out = (uint64_t)v;
	return 0;
}

/* A KV cache array's element type (the K or V cache's, by how the
 * architecture binds it) and the bytes of a layer's slice. */
static int cache_layout(struct belt_session *s, const struct arch_named_expr *e, uint64_t elems,
			int *type, uint64_t *layer_bytes, char *err, size_t errsz)
{
	const struct belt_arch *a = s->m->arch;
	int role = belt_dispatch_cache_role(a, e->name);
	if (role == '?')
		return belt_errf(err, errsz, "%s:%u:%u: KV cache '%s' is bound both as a k_cache and as a v_cache",
				 a->path, e->pos.line, e->pos.col, e->name);
	*type = role == 'v' ? s->type_v : role == 'k' ? s->type_k : BELT_TYPE_F32;
	*layer_bytes = belt_type_row_bytes(*type, elems);
	if (!*layer_bytes)
		return belt_errf(err, errsz, "%s:%u:%u: KV cache '%s' of %llu elements per layer is not whole %s blocks (cache type %s)",
				 a->path, e->pos.line, e->pos.col, e->name,
				 (unsigned long long)elems, belt_type_name(*type),
				 role == 'v' ? "-ctv" : "-ctk");
	return 0;
}

/* A KV cache buffer holds at most this much (1 GiB, or
 * $BELT_KV_PIECE_MAX bytes, which tests lower), in whole layers, so that no
 * allocation exceeds what GPU drivers grant at once (4 GiB on NVIDIA's
 * Vulkan): a long context, or a group's many, is several buffers. */
static uint64_t kv_piece_max(void)
{
	const char *env = getenv("BELT_KV_PIECE_MAX");
	long long v = env ? atoll(env) : 0;
	return v > 0 ? (uint64_t)v : 1ull << 30;
}

/* Positions one run may write past the last the session keeps: a
 * batched pass's rows, or a decode submission's tokens. */
static uint32_t run_ahead(const struct belt_session *s)
{
	return s->n_ubatch > s->chunk ? s->n_ubatch : s->chunk;
}

/* The slots of a layer whose reads of a cache stay within w positions:
 * the window and what one run writes ahead of where it may stop (a
 * group's sessions: the group's s->ahead), in whole 32s (a GPU's tiles
 * of 32 positions then never wrap), as many times as the session keeps
 * sequences (the group's own: each its part); the context where that is
 * no smaller, where w is 0, or where the session keeps every position
 * (swa_full; a group on a backend before ABI 6). */
static uint32_t ring_slots(const struct belt_session *s, uint32_t w)
{
	if (!w || !s->ring)
		return s->n_ctx;
	uint64_t c = ((uint64_t)w + s->ahead - 1 + 31) / 32 * 32;
	return c < s->seq_ctx ? (uint32_t)c * (s->n_ctx / s->seq_ctx) : s->n_ctx;
}

/* Layer l's slice of KV cache e, of full values at the whole context: its
 * slots and values; a ring's lowers how far back the session may resume
 * (s->kv_rewind, generate.c). */
static int kv_layer_size(struct belt_session *s, const struct arch_named_expr *e,
			 uint64_t full, int l, uint32_t *slots, uint64_t *elems, char *err,
			 size_t errsz)
{
	uint32_t w;
	if (belt_dispatch_cache_window(s->m, &s->vars, e->name, l, &w, err, errsz))
		return -1;
	*slots = ring_slots(s, w);
	*elems = full;
	if (*slots == s->n_ctx)
		return 0;
	if (full % s->n_ctx)
		return belt_errf(err, errsz,
				 "%s:%u:%u: KV cache '%s' of %llu values is not %u positions of the same size",
				 s->m->arch->path, e->pos.line, e->pos.col, e->name,
				 (unsigned long long)full, s->n_ctx);
	*elems = full / s->n_ctx * *slots;
	uint32_t back = *slots / (s->n_ctx / s->seq_ctx) - w - (s->ahead - 1);
	if (back < s->kv_rewind)
		s->kv_rewind = back;
	return 0;
}

/* KV cache e's layout in sb, before anything is allocated: its values a
 * layer at the whole context, its type and a layer's bytes there, and
 * each layer's slots, values and bytes (a group's sessions: their part
 * of the group's layers, which belt_group_kv places). Computed once, for
 * the memory check and the buffers alike. */
static int plan_kv(struct belt_session *s, const struct arch_named_expr *e,
		   struct dispatch_buffer *sb, char *err, size_t errsz)
{
	sb->name = e->name;
	sb->kv = true;
	if (buffer_elems(s, e, &sb->elems, err, errsz) ||
	    cache_layout(s, e, sb->elems, &sb->type, &sb->layer_bytes, err, errsz))
		return -1;
	if (!(sb->layers = calloc(s->m->n_layer, sizeof *sb->layers)))
		return belt_errf(err, errsz, "session: out of memory");
	for (int l = 0; l < (int)s->m->n_layer; l++) {
		uint32_t slots;
		uint64_t elems;
		if (kv_layer_size(s, e, sb->elems, l, &slots, &elems, err, errsz))
			return -1;
		sb->layers[l] = (struct dispatch_kv_layer){
			.bytes = belt_type_row_bytes(sb->type, elems), .elems = elems, .slots = slots};
	}
	return 0;
}

/* The bytes of planned KV cache sb's layers. */
static uint64_t kv_total(const struct belt_session *s, const struct dispatch_buffer *sb)
{
	uint64_t total = 0;
	for (uint32_t l = 0; l < s->m->n_layer; l++)
		total += sb->layers[l].bytes;
	return total;
}

/* sb's layers (their bytes set) in one buffer or in pieces of whole
 * layers of at most kv_piece_max() bytes (a layer larger alone). */
static int make_kv(struct belt_session *s, struct dispatch_buffer *sb, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	uint32_t n_layer = (uint32_t)m->n_layer;
	uint64_t max = kv_piece_max();
	if (!(sb->pieces = calloc(n_layer, sizeof *sb->pieces)))
		return belt_errf(err, errsz, "session: out of memory");
	for (uint32_t l = 0; l < n_layer;) {
		uint64_t bytes = sb->layers[l].bytes;
		uint32_t end = l + 1;
		while (end < n_layer && bytes + sb->layers[end].bytes <= max)
			bytes += sb->layers[end++].bytes;
		struct belt_buffer **b = &sb->pieces[sb->n_pieces++];
		if (m->be->buffer_create(m->be_ctx, BELT_BUFFER_KV, bytes, b, err, errsz))
			return -1;
		for (uint64_t off = 0; l < end; off += sb->layers[l++].bytes) {
			sb->layers[l].buf = *b;
			sb->layers[l].offset = off;
		}
	}
	return 0;
}

/* The next of s->bufs: scratch buffer e, or KV cache e as plan_kv laid
 * it out there. */
static int make_buffer(struct belt_session *s, const struct arch_named_expr *e,
		       bool kv, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	struct dispatch_buffer *sb = &s->bufs[s->n_bufs];
	if (!kv) {
		if (buffer_elems(s, e, &sb->elems, err, errsz))
			return -1;
		sb->name = e->name;
		sb->type = BELT_TYPE_F32;
		sb->per_row = belt_dispatch_buffer_per_row(m->arch, e->name);
	}
	bool is_logits = !kv && !strcmp(e->name, m->arch->logits);
	if (kv && s->group) {
		/* a group's session: its sequence of the group's cache */
		s->n_bufs++;
		return belt_group_kv(s->group, s->seq, sb, err, errsz);
	}
	uint64_t bytes = kv ? kv_total(s, sb) : sb->elems * 4 * (sb->per_row ? s->n_ubatch : 1);
	enum belt_buffer_usage usage = kv ? BELT_BUFFER_KV : is_logits ? BELT_BUFFER_IO : BELT_BUFFER_SCRATCH;
	s->n_bufs++; /* freed with the session, what was made of it too */
	if (!kv && s->group) {
		/* a group's sessions share their scratch (group.c) */
		if (belt_group_scratch(s->group, e->name, usage, bytes, &sb->buf, err, errsz))
			return -1;
		sb->shared = true;
	} else if (kv ? make_kv(s, sb, err, errsz)
		      : m->be->buffer_create(m->be_ctx, usage, bytes, &sb->buf, err, errsz)) {
		char what[128];
		snprintf(what, sizeof what, "%s buffer '%s' (%llu bytes)", kv ? "KV cache" : "scratch",
			 e->name, (unsigned long long)bytes);
		return belt_err_prefix(err, errsz, what);
	}
	if (is_logits)
		s->logits = sb;
	return 0;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* What the session's buffers take, computed before any is made, against
 * what the backend says it can still allocate: too much is one error
 * naming each part, not a long zero-fill or an allocation failure. */
static int check_memory(struct belt_session *s, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	const struct belt_arch *a = m->arch;
	uint64_t kv = 0, scratch = (uint64_t)(s->n_ctx + 1) * 4 + (uint64_t)s->n_ubatch * 4;
	/* the KV caches as plan_kv laid them out (a group's session: the
	 * group's) */
	for (unsigned i = 0; i < a->n_kv && !s->group; i++)
		kv += kv_total(s, &s->bufs[a->n_buffers + i]);
	for (unsigned i = 0; i < a->n_buffers; i++) {
		const struct arch_named_expr *e = &a->buffers[i];
		uint64_t elems;
		if (buffer_elems(s, e, &elems, err, errsz))
			return -1;
		/* a group's session after its first: the group's scratch */
		if (s->group && belt_group_scratch_made(s->group))
			continue;
		scratch += elems * 4 * (belt_dispatch_buffer_per_row(a, e->name) ? s->n_ubatch : 1);
	}
	uint64_t avail;
	if (m->be->abi < 3 || !m->be->memory_available ||
	    m->be->memory_available(m->be_ctx, &avail, err, errsz))
		return 0; /* unknown: the allocations will tell */
	if (kv + scratch <= avail)
		return 0;
	return belt_errf(err, errsz,
			 "context of %u tokens: the session needs %.1f MiB (KV cache %.1f MiB, scratch %.1f MiB for %u-row passes), backend '%s' has %.1f MiB available",
			 s->n_ctx, mib(kv + scratch), mib(kv), mib(scratch), s->n_ubatch, m->be->name,
			 mib(avail));
}

static int create(struct belt_session *s, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	const struct belt_arch *a = m->arch;
	s->vars = m->vars;
	if (belt_vars_set(&s->vars, "n_ctx", s->n_ctx) || belt_vars_set(&s->vars, "l", 0))
		return belt_errf(err, errsz, "%s: too many names", a->path);
	/* the KV caches laid out first: the memory check and their
	 * buffers take the same sizes */
	s->bufs = calloc(a->n_buffers + a->n_kv, sizeof *s->bufs);
	if (!s->bufs)
		return belt_errf(err, errsz, "session: out of memory");
	for (unsigned i = 0; i < a->n_kv; i++)
		if (plan_kv(s, &a->kv[i], &s->bufs[a->n_buffers + i], err, errsz))
			return -1;
	if (check_memory(s, err, errsz))
		return -1;
	s->ids = calloc(s->n_ctx + 1, sizeof *s->ids);
	s->text_cap = belt_tok_max_piece(m->tok) + 64;
	s->text = malloc(s->text_cap);
	if (!s->ids || !s->text)
		return belt_errf(err, errsz, "session: out of memory");
	for (unsigned i = 0; i < a->n_buffers; i++)
		if (make_buffer(s, &a->buffers[i], false, err, errsz))
			return -1;
	for (unsigned i = 0; i < a->n_kv; i++)
		if (make_buffer(s, &a->kv[i], true, err, errsz))
			return -1;
	if (!s->logits)
		return belt_errf(err, errsz, "%s:%u:%u: outputs.logits names '%s', which is not a buffer",
				 a->path, a->logits_pos.line, a->logits_pos.col, a->logits);
	if (s->logits->elems != (uint64_t)m->n_vocab)
		return belt_errf(err, errsz, "%s: logits buffer '%s' has %llu elements, vocabulary is %d",
				 a->path, a->logits, (unsigned long long)s->logits->elems, m->n_vocab);
	if (m->be->buffer_create(m->be_ctx, BELT_BUFFER_IO, (uint64_t)(s->n_ctx + 1) * 4,
				 &s->token_ids, err, errsz))
		return -1;
	struct dispatch_map map = {.bufs = s->bufs, .n_bufs = s->n_bufs, .vars = &s->vars,
				   .token_ids = s->token_ids, .n_ctx = s->n_ctx, .rows = 1};
	/* the ids early exit (BELT_RUN_STOP_AT_EOG) watches for */
	for (int32_t id = 0; id < m->n_vocab && s->table.n_eog < BELT_MAX_EOG; id++)
		if (belt_tok_is_eog(m->tok, id))
			s->table.eog[s->table.n_eog++] = id;
	if (!s->seqs && belt_dispatch_build(m, &map, &s->table, &s->labels, err, errsz))
		return -1;
	s->table.max_run = s->chunk;
	if (!s->seqs && m->be->table_prepare(m->be_ctx, &s->table, err, errsz)) {
		s->table.priv = NULL;
		return belt_err_prefix(err, errsz, m->be->name);
	}
	if (s->n_ubatch < 2)
		return 0;
	/* the batched table, over the same buffers */
	s->batch_ids = calloc(s->n_ubatch, sizeof *s->batch_ids);
	if (!s->batch_ids)
		return belt_errf(err, errsz, "session: out of memory");
	if (m->be->buffer_create(m->be_ctx, BELT_BUFFER_IO, (uint64_t)s->n_ubatch * 4, &s->row_ids,
				 err, errsz))
		return belt_err_prefix(err, errsz, "row outputs");
	map.rows = s->n_ubatch;
	map.row_ids = s->row_ids;
	map.seq_ctx = s->seqs ? s->seq_ctx : 0;
	if (belt_dispatch_build(m, &map, &s->batch, &s->batch_labels, err, errsz))
		return -1;
	s->batch.max_run = s->n_ubatch;
	s->batch.seqs = s->seqs;
	s->batch.seq_ctx = s->seqs ? s->seq_ctx : 0;
	memcpy(s->batch.eog, s->table.eog, sizeof s->batch.eog);
	s->batch.n_eog = s->table.n_eog;
	if (m->be->table_prepare(m->be_ctx, &s->batch, err, errsz)) {
		s->batch.priv = NULL;
		return belt_err_prefix(err, errsz, m->be->name);
	}
	return 0;
}

int belt_session_create(struct belt_model *m, const struct belt_session_params *p,
			struct belt_session **out, char *err, size_t errsz)
{
	return belt_session_make(m, p, NULL, 0, 0, out, err, errsz);
}

int belt_session_make(struct belt_model *m, const struct belt_session_params *p,
		      struct belt_group *group, uint32_t seq, uint32_t seqs_rows,
		      struct belt_session **out, char *err, size_t errsz)
{
	*out = NULL;
	struct belt_session_params def;
	if (!p) {
		belt_session_params_default(&def);
		p = &def;
	}
	uint32_t train = belt_model_n_ctx_train(m);
	uint32_t n_ctx = p->n_ctx ? p->n_ctx : train;
	if (n_ctx < 2 || n_ctx > (1u << 24))
		return belt_errf(err, errsz, "context length %u: expected 2 .. %u", n_ctx, 1u << 24);
	/* the group's own: seq sequences of seq_ctx positions each */
	uint32_t seq_ctx = seqs_rows ? n_ctx / seq : n_ctx;
	int types[2] = {p->type_k, p->type_v};
	for (int i = 0; i < 2; i++)
		if (!belt_cache_type_ok(types[i]))
			return belt_errf(err, errsz, "%s cache type %s: expected f32, f16 or q8_0",
					 i ? "V" : "K", belt_type_name(types[i]));
	struct belt_session *s = calloc(1, sizeof *s);
	if (!s)
		return belt_errf(err, errsz, "session: out of memory");
	s->m = m;
	s->n_ctx = n_ctx;
	s->type_k = p->type_k;
	s->type_v = p->type_v;
	s->chunk = p->chunk ? p->chunk : 16;
	s->n_batch = p->n_batch ? p->n_batch : 2048;
	s->n_ubatch = p->n_ubatch ? p->n_ubatch : 512;
	if (s->n_ubatch > s->n_batch)
		s->n_ubatch = s->n_batch;
	if (s->n_ubatch > seq_ctx)
		s->n_ubatch = seq_ctx;
	/* a backend before ABI 3 runs one-row tables only */
	if (m->be->abi < 3)
		s->n_ubatch = 1;
	s->group = group;
	s->seq = seq;
	s->seq_ctx = seq_ctx;
	s->ahead = run_ahead(s);
	if (group) {
		/* a group's session: its runs within what the group's rings
		 * were laid out for (passes and submissions no longer) */
		s->ahead = belt_group_ahead(group);
		if (s->n_ubatch > s->ahead)
			s->n_ubatch = s->ahead;
		if (s->chunk > s->ahead)
			s->chunk = s->ahead;
	}
	/* sliding-window layers keep a ring of their last positions (in a
	 * group, a table of sequences places each sequence's: ABI 6) */
	s->ring = !p->swa_full && (!(group || seqs_rows) || m->be->abi >= 6);
	s->kv_rewind = UINT32_MAX;
	s->group_from = UINT32_MAX;
	if (seqs_rows) {
		/* the group's own: every sequence's positions, a batched
		 * table of sequences (seqs_rows <= its positions) */
		s->seqs = true;
		s->n_ubatch = seqs_rows;
	}
	if (create(s, err, errsz)) {
		belt_session_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void belt_session_free(struct belt_session *s)
{
	if (!s)
		return;
	struct belt_model *m = s->m;
	belt_group_forget(s->group, s);
	belt_session_chain_release(s);
	belt_session_speculate_release(s);
	belt_session_tap_release(s);
	if (s->table.priv)
		m->be->table_release(m->be_ctx, &s->table);
	if (s->batch.priv)
		m->be->table_release(m->be_ctx, &s->batch);
	if (s->row_ids)
		m->be->buffer_destroy(m->be_ctx, s->row_ids);
	free(s->batch.cmds);
	free(s->batch_labels);
	free(s->batch_ids);
	/* every entry: the KV caches' were laid out before any was made */
	unsigned n_entries = s->bufs ? m->arch->n_buffers + m->arch->n_kv : 0;
	for (unsigned i = 0; i < n_entries; i++) {
		struct dispatch_buffer *sb = &s->bufs[i];
		for (uint32_t p = 0; !sb->shared && p < sb->n_pieces; p++)
			m->be->buffer_destroy(m->be_ctx, sb->pieces[p]);
		if (!sb->shared && sb->buf)
			m->be->buffer_destroy(m->be_ctx, sb->buf);
		if (!sb->shared)
			free(sb->pieces);
		free(sb->layers);
	}
	if (s->token_ids)
		m->be->buffer_destroy(m->be_ctx, s->token_ids);
	free(s->table.cmds);
	free(s->logits_host);
	free(s->sample_work);
	free(s->grammar_mask);
	free(s->labels);
	free(s->bufs);
	free(s->ids);
	free(s->text);
	free(s);
}

void belt_session_cost(const struct belt_session *s, uint32_t *cmds_per_token,
		       uint64_t *weight_bytes_per_token)
{
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < s->table.n_cmds; i++) {
		const struct belt_cmd *c = &s->table.cmds[i];
		for (unsigned b = 0; b < c->n_bind; b++) {
			if (belt_model_is_weights(s->m, c->bind[b].buf))
				bytes += belt_cmd_weight_bytes(c, b);
		}
	}
	*cmds_per_token = s->table.n_cmds;
	*weight_bytes_per_token = bytes;
}

uint64_t belt_session_kv_bytes(const struct belt_session *s)
{
	uint64_t bytes = 0;
	for (unsigned i = 0; i < s->n_bufs; i++)
		for (uint32_t l = 0; s->bufs[i].kv && l < s->m->n_layer; l++)
			bytes += s->bufs[i].layers[l].bytes;
	return bytes;
}

uint32_t belt_session_n_ctx(const struct belt_session *s)
{
	return s->n_ctx;
}

void belt_session_reset(struct belt_session *s)
{
	s->n_kv = 0;
}

const struct belt_stats *belt_session_stats(const struct belt_session *s)
{
	return &s->stats;
}
