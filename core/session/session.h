/* Internal view of a session: its buffers, dispatch table and host-side
 * arrays, all allocated at creation. */
#ifndef BELT_SESSION_SESSION_H
#define BELT_SESSION_SESSION_H

#include "model/model.h"

struct session_buffer {
	const char *name;	/* the architecture's name for it */
	struct belt_buffer *buf;
	uint64_t elems;		/* F32 elements (per layer for the KV cache) */
	bool kv;
};

struct belt_session {
	struct belt_model *m;
	uint32_t n_ctx, chunk;
	struct belt_vars vars; /* the model's, plus n_ctx */
	struct session_buffer *bufs;
	unsigned n_bufs;
	struct belt_buffer *token_ids;
	struct session_buffer *logits;
	struct belt_table table;
	char (*labels)[48];
	int32_t *ids;	/* host copy of token_ids, n_ctx + 1 */
	char *text;	/* one token's decoded text */
	size_t text_cap;
	struct belt_stats stats;
	/* sampled decode on the host (generate.c), made on first use */
	float *logits_host;	/* n_vocab */
	void *sample_work;	/* the sampler's work area */
	size_t sample_work_size;
};

/* Build s->table from the architecture's forward pass. Errors name the
 * YAML file, line and column of the op or binding at fault. */
int belt_dispatch_build(struct belt_session *s, char *err, size_t errsz);

#endif
