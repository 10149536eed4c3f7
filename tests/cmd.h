/* Building commands and tables by hand in the backend and sampler tests. */
#ifndef BELT_TESTS_CMD_H
#define BELT_TESTS_CMD_H

#include <string.h>

#include "belt/backend.h"

/* Append a binding of size bytes at offset off of b, elements of type. */
static inline void bind(struct belt_cmd *c, struct belt_buffer *b, uint64_t off,
			uint64_t size, int type)
{
	struct belt_binding *bd = &c->bind[c->n_bind++];
	bd->buf = b;
	bd->offset = off;
	bd->size = size;
	bd->type = type;
}

/* The patch kind the architecture YAML gives op: what the backend feeds
 * its kernel per token (belt/ops.h). */
static inline enum belt_patch op_patch(const char *op)
{
	if (!strcmp(op, "embed"))
		return BELT_PATCH_TOKEN_OFFSET;
	if (!strcmp(op, "rope_kv") || !strcmp(op, "sample_penalty") ||
	    !strcmp(op, "sample_gumbel"))
		return BELT_PATCH_POSITION;
	if (!strcmp(op, "attention"))
		return BELT_PATCH_KV_LEN;
	if (!strcmp(op, "argmax"))
		return BELT_PATCH_ARGMAX_OUTPUT;
	return BELT_PATCH_NONE;
}

/* Append an integer or a float param. */
static inline void pi(struct belt_cmd *c, int32_t v)
{
	c->param[c->n_param++].i = v;
}

static inline void pf(struct belt_cmd *c, float v)
{
	c->param[c->n_param++].f = v;
}

/* A table over cmds[0..n) with a token_ids buffer of n_ctx + 1 slots (or
 * none), runs of at most max_run positions (0: the backend's default). */
static inline void table_init(struct belt_table *t, struct belt_cmd *cmds, uint32_t n,
			      uint32_t n_ctx, struct belt_buffer *ids, uint32_t max_run)
{
	memset(t, 0, sizeof *t);
	t->cmds = cmds;
	t->n_cmds = n;
	t->n_ctx = n_ctx;
	t->token_ids = ids;
	t->max_run = max_run;
}

#endif
