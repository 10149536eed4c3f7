/* The "hidden" tap (belt/draft.h): a drafter's commands, run on the
 * backend as a small table of their own after a pass, on the hidden
 * state after the final norm of one row of that pass. The state is the
 * output of the head's first command, an rmsnorm whose output the head's
 * matvec (the output projection) reads; where a table's head does not
 * start so, the architecture has no tap. The tapped row is copied into
 * the tap's own input (buffer_copy), the tap table runs, and what it
 * wrote to its result comes back to the host: three backend calls, none
 * of which allocates. Built on first use for a drafter, again only for
 * another one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/ops.h"
#include "session/session.h"

/* Index of t's final norm (the head's first command, an rmsnorm the
 * head's matvec reads), or -1. */
static int norm_at(const struct belt_table *t)
{
	uint32_t i = 0;
	while (i < t->n_cmds && !t->cmds[i].head)
		i++;
	if (i + 1 >= t->n_cmds)
		return -1;
	const struct belt_cmd *n = &t->cmds[i], *mv = &t->cmds[i + 1];
	if (strcmp(n->kernel->op, "rmsnorm") || !mv->head || strcmp(mv->kernel->op, "matvec") ||
	    mv->bind[1].buf != n->bind[2].buf || mv->bind[1].offset != n->bind[2].offset)
		return -1;
	return (int)i;
}

bool belt_session_tap_source(const struct belt_session *s, bool batch, uint32_t row,
			     struct belt_copy *from)
{
	const struct belt_table *t = batch ? &s->batch : &s->table;
	int at = t->n_cmds ? norm_at(t) : -1;
	if (at < 0)
		return false;
	const struct belt_binding *b = &t->cmds[at].bind[2];
	uint64_t row_bytes = (uint64_t)b->ne[0] * 4;
	if ((uint64_t)(row + 1) * row_bytes > b->size)
		return false;
	*from = (struct belt_copy){.src = b->buf, .src_off = b->offset + row * row_bytes,
				   .size = row_bytes};
	return true;
}

void belt_session_tap_release(struct belt_session *s)
{
	struct belt_model *m = s->m;
	if (s->tap.priv)
		m->be->table_release(m->be_ctx, &s->tap);
	s->tap.priv = NULL;
	free(s->tap.cmds);
	s->tap.cmds = NULL;
	for (uint32_t i = 0; i < s->n_tap_bufs; i++)
		if (s->tap_bufs[i])
			m->be->buffer_destroy(m->be_ctx, s->tap_bufs[i]);
	free(s->tap_bufs);
	s->tap_bufs = NULL;
	s->n_tap_bufs = 0;
	free(s->tap_labels);
	s->tap_labels = NULL;
	free(s->tap_out);
	s->tap_out = NULL;
	s->tap_for = NULL;
	s->tap_none = false;
}

/* The buffers: 0 the tapped row, 1 scratch, 2 result, then a tensor
 * each. */
#define TB_HIDDEN 0
#define TB_SCRATCH 1
#define TB_RESULT 2
#define TB_TENSOR 3

static int make_buffers(struct belt_session *s, const struct belt_draft_tap *tp,
			uint64_t hidden_bytes, const char *who, char *err, size_t errsz)
{
	struct belt_model *m = s->m;
	s->n_tap_bufs = TB_TENSOR + tp->n_tensors;
	if (!(s->tap_bufs = calloc(s->n_tap_bufs, sizeof *s->tap_bufs)) ||
	    !(s->tap_out = malloc(tp->result_floats * 4)))
		return belt_errf(err, errsz, "%s: out of memory for its tap", who);
	const uint64_t bytes[3] = {hidden_bytes, tp->scratch_floats * 4, tp->result_floats * 4};
	for (int i = 0; i < 3; i++)
		if (bytes[i] &&
		    m->be->buffer_create(m->be_ctx, i == TB_RESULT ? BELT_BUFFER_IO : BELT_BUFFER_SCRATCH,
					 bytes[i], &s->tap_bufs[i], err, errsz))
			return belt_err_prefix(err, errsz, who);
	for (uint32_t i = 0; i < tp->n_tensors; i++) {
		const struct belt_tap_tensor *x = &tp->tensors[i];
		uint64_t want = x->ne[0] > 0 && x->ne[1] > 0
					? belt_type_row_bytes(x->type, (uint64_t)x->ne[0]) *
						  (uint64_t)x->ne[1]
					: 0;
		if (!want || want != x->bytes || !x->data)
			return belt_errf(err, errsz,
					 "%s: tap tensor '%s' (%s [%lld x %lld]) has %llu bytes: "
					 "expected %llu",
					 who, x->name, belt_type_name(x->type), (long long)x->ne[0],
					 (long long)x->ne[1], (unsigned long long)x->bytes,
					 (unsigned long long)want);
		if (m->be->buffer_create(m->be_ctx, BELT_BUFFER_WEIGHTS, x->bytes,
					 &s->tap_bufs[TB_TENSOR + i], err, errsz) ||
		    m->be->buffer_write(m->be_ctx, s->tap_bufs[TB_TENSOR + i], 0, x->data, x->bytes,
					err, errsz))
			return belt_err_prefix(err, errsz, who);
	}
	return 0;
}

/* The binding b of a tap command stands for. */
static int bind_of(struct belt_session *s, const struct belt_draft_tap *tp,
		   const struct belt_binding *outw, uint64_t n_embd, const struct belt_tap_bind *b,
		   struct belt_binding *out, const char *who, char *err, size_t errsz)
{
	uint64_t cap = b->slot == BELT_TAP_SCRATCH ? tp->scratch_floats
		       : b->slot == BELT_TAP_RESULT ? tp->result_floats
						    : 0;
	switch (b->slot) {
	case BELT_TAP_HIDDEN:
		*out = (struct belt_binding){.buf = s->tap_bufs[TB_HIDDEN], .size = n_embd * 4,
					     .type = BELT_TYPE_F32, .ne = {(int64_t)n_embd, 1}};
		return 0;
	case BELT_TAP_OUTPUT:
		*out = *outw;
		return 0;
	case BELT_TAP_SCRATCH:
	case BELT_TAP_RESULT:
		if (!b->n || b->offset > cap || b->n > cap - b->offset)
			return belt_errf(err, errsz,
					 "%s: tap binding of floats %llu .. %llu of its %s: it has %llu",
					 who, (unsigned long long)b->offset,
					 (unsigned long long)(b->offset + b->n),
					 b->slot == BELT_TAP_SCRATCH ? "scratch" : "result",
					 (unsigned long long)cap);
		*out = (struct belt_binding){
			.buf = s->tap_bufs[b->slot == BELT_TAP_SCRATCH ? TB_SCRATCH : TB_RESULT],
			.offset = b->offset * 4, .size = b->n * 4, .type = BELT_TYPE_F32,
			.ne = {(int64_t)b->n, 1}};
		return 0;
	default:
		if (b->slot - BELT_TAP_TENSOR >= tp->n_tensors)
			return belt_errf(err, errsz, "%s: tap binding of slot %u: expected 0 .. %u",
					 who, b->slot, BELT_TAP_TENSOR + tp->n_tensors - 1);
		const struct belt_tap_tensor *x = &tp->tensors[b->slot - BELT_TAP_TENSOR];
		*out = (struct belt_binding){.buf = s->tap_bufs[TB_TENSOR + b->slot - BELT_TAP_TENSOR],
					     .size = x->bytes, .type = (enum belt_type)x->type,
					     .ne = {x->ne[0], x->ne[1]}};
		return 0;
	}
}

static int build(struct belt_session *s, const struct belt_draft_tap *tp,
		 const struct belt_binding *outw, uint64_t n_embd, const char *who, char *err,
		 size_t errsz)
{
	struct belt_model *m = s->m;
	if (!tp->result_floats)
		return belt_errf(err, errsz, "%s: a tap of %u commands and no result floats: "
				 "expected at least one", who, tp->n_cmds);
	if (make_buffers(s, tp, n_embd * 4, who, err, errsz))
		return -1;
	s->tap.cmds = calloc(tp->n_cmds, sizeof *s->tap.cmds);
	s->tap_labels = calloc(tp->n_cmds, sizeof *s->tap_labels);
	if (!s->tap.cmds || !s->tap_labels)
		return belt_errf(err, errsz, "%s: out of memory for its tap", who);
	for (uint32_t i = 0; i < tp->n_cmds; i++) {
		const struct belt_tap_cmd *tc = &tp->cmds[i];
		struct belt_cmd *c = &s->tap.cmds[i];
		snprintf(s->tap_labels[i], sizeof s->tap_labels[i], "tap.%u.%s", i,
			 tc->op ? tc->op : "?");
		if (!tc->op || tc->n_bind > BELT_MAX_BINDINGS || tc->n_param > BELT_MAX_PARAMS)
			return belt_errf(err, errsz, "%s: tap command %u: no op, or more than %d "
					 "bindings or %d params", who, i, BELT_MAX_BINDINGS,
					 BELT_MAX_PARAMS);
		*c = (struct belt_cmd){.n_bind = tc->n_bind, .n_param = tc->n_param, .layer = -1,
				       .label = s->tap_labels[i]};
		memcpy(c->param, tc->param, sizeof c->param);
		for (unsigned b = 0; b < tc->n_bind; b++)
			if (bind_of(s, tp, outw, n_embd, &tc->bind[b], &c->bind[b], who, err, errsz))
				return belt_err_prefix(err, errsz, s->tap_labels[i]);
		int wt = tc->n_bind ? (int)c->bind[0].type : BELT_TYPE_ANY;
		c->kernel = m->be->kernel_find(m->be_ctx, tc->op, "default", wt);
		if (!c->kernel)
			c->kernel = m->be->kernel_find(m->be_ctx, tc->op, "default", BELT_TYPE_ANY);
		if (!c->kernel)
			return belt_errf(err, errsz, "%s: %s: backend '%s' has no kernel for op '%s' "
					 "(%s)", who, s->tap_labels[i], m->be->name, tc->op,
					 belt_type_name(wt));
		if (belt_cmd_check(c, err, errsz))
			return belt_err_prefix(err, errsz, who);
	}
	s->tap.n_cmds = tp->n_cmds;
	s->tap.n_ctx = s->n_ctx;
	s->tap.token_ids = s->token_ids;
	s->tap.max_run = 1;
	if (m->be->table_prepare(m->be_ctx, &s->tap, err, errsz)) {
		s->tap.priv = NULL;
		return belt_err_prefix(err, errsz, m->be->name);
	}
	s->tap_result_floats = tp->result_floats;
	return 0;
}

int belt_session_tap_setup(struct belt_session *s, struct belt_drafter *d, char *err,
			   size_t errsz)
{
	struct belt_model *m = s->m;
	if (s->tap_for == d)
		return 0;
	belt_session_tap_release(s);
	s->tap_for = d;
	s->tap_none = true;
	if (d->ops->abi < 2 || !d->ops->tap)
		return 0;
	int at = s->table.n_cmds ? norm_at(&s->table) : -1;
	/* a group's session runs its steps in the group's tables; a backend
	 * without copies cannot move the tapped row; where the state lies
	 * is found once, here, not at every step */
	if (at < 0 || s->group || !m->be->buffer_copy ||
	    !belt_session_tap_source(s, false, 0, &s->tap_src[0]))
		return 0;
	if (!s->batch.n_cmds || !belt_session_tap_source(s, true, 0, &s->tap_src[1]))
		s->tap_src[1].size = 0;
	const struct belt_binding *outw = &s->table.cmds[at + 1].bind[0];
	struct belt_draft_tap tp = {0};
	char who[64];
	snprintf(who, sizeof who, "draft '%s'", d->ops->name);
	if (d->ops->tap(d->ctx, (int)outw->type, &tp, err, errsz)) {
		belt_session_tap_release(s);
		return belt_err_prefix(err, errsz, who);
	}
	if (!tp.n_cmds)
		return 0; /* this drafter asks for no tap */
	if (build(s, &tp, outw, (uint64_t)s->table.cmds[at].bind[2].ne[0], who, err, errsz)) {
		belt_session_tap_release(s);
		return belt_err_prefix(err, errsz, who);
	}
	s->tap_none = false;
	return 0;
}

const float *belt_session_tap_run(struct belt_session *s, bool batch, uint32_t row,
				  char *err, size_t errsz, int *rc)
{
	struct belt_model *m = s->m;
	*rc = 0;
	if (s->tap_none || !s->tap_src[batch].size)
		return NULL;
	struct belt_copy c = s->tap_src[batch];
	c.src_off += (uint64_t)row * c.size;
	c.dst = s->tap_bufs[TB_HIDDEN];
	if (m->be->buffer_copy(m->be_ctx, &c, 1, err, errsz) ||
	    m->be->table_run(m->be_ctx, &s->tap, 0, 1, 0, err, errsz) ||
	    m->be->buffer_read(m->be_ctx, s->tap_bufs[TB_RESULT], 0, s->tap_out,
			       s->tap_result_floats * 4, err, errsz)) {
		*rc = -1;
		return NULL;
	}
	return s->tap_out;
}
