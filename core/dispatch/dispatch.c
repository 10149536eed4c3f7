/* Turns the architecture's forward pass into the dispatch table: one
 * command per op (per layer inside the layer loop), with bindings resolved
 * to buffers, params evaluated and packed in the kernel's order. Built
 * once per session; replayed per token by the backend. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

struct build {
	struct belt_session *s;
	const struct belt_arch *a;
	char *err;
	size_t errsz;
};

__attribute__((format(printf, 3, 4)))
static int at(struct build *b, struct arch_pos p, const char *fmt, ...)
{
	char msg[BELT_ERR_SIZE];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return belt_errf(b->err, b->errsz, "%s:%u:%u: %s", b->a->path, p.line, p.col, msg);
}

static struct session_buffer *find_buffer(struct belt_session *s, const char *name)
{
	for (unsigned i = 0; i < s->n_bufs; i++)
		if (!strcmp(s->bufs[i].name, name))
			return &s->bufs[i];
	return NULL;
}

/* Resolve one binding name; *is_tensor tells whether it is a weight. */
static int bind_one(struct build *b, const struct arch_op *op, unsigned i, int layer,
		    struct belt_binding *out, const struct belt_gguf_tensor **tensor)
{
	struct belt_session *s = b->s;
	char name[256];
	belt_subst_layer(op->bind[i], layer, name, sizeof name);
	*tensor = NULL;
	if (!strcmp(name, "token_ids")) {
		*out = (struct belt_binding){s->token_ids, 0, (uint64_t)(s->n_ctx + 1) * 4,
					     BELT_TYPE_I32, {s->n_ctx + 1, 1}};
		return 0;
	}
	struct session_buffer *sb = find_buffer(s, name);
	if (sb) {
		if (sb->kv && layer < 0)
			return at(b, op->bind_pos[i],
				  "KV cache '%s' bound outside the layer loop", name);
		uint64_t off = sb->kv ? (uint64_t)layer * sb->elems * 4 : 0;
		*out = (struct belt_binding){sb->buf, off, sb->elems * 4, BELT_TYPE_F32,
					     {(int64_t)sb->elems, 1}};
		return 0;
	}
	const struct belt_gguf_tensor *t = belt_model_tensor(s->m, name);
	if (!t)
		return at(b, op->bind_pos[i],
			  "unknown binding '%s' (not a buffer, KV cache, token_ids or declared tensor)",
			  name);
	*tensor = t;
	uint64_t off;
	struct belt_buffer *wb = belt_model_weight(s->m, t, &off);
	if (!wb)
		return at(b, op->bind_pos[i], "tensor '%s' is in no weight buffer", name);
	*out = (struct belt_binding){wb, off, t->size, t->type,
				     {t->ne[0], t->ne[1] * t->ne[2] * t->ne[3]}};
	return 0;
}

static const struct arch_named_expr *find_param(const struct arch_op *op,
						const char *name, size_t len)
{
	for (unsigned i = 0; i < op->n_param; i++)
		if (strlen(op->param[i].name) == len && !strncmp(op->param[i].name, name, len))
			return &op->param[i];
	return NULL;
}

/* Pack the op's params in the order of the kernel's schema "a:i b:f". */
static int pack_params(struct build *b, const struct arch_op *op, int layer,
		       struct belt_cmd *c)
{
	const char *p = c->kernel->params ? c->kernel->params : "";
	struct belt_vars *vs = &b->s->vars;
	belt_vars_set(vs, "l", layer);
	c->n_param = 0;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *colon = strchr(p, ':');
		if (!*p)
			break;
		if (!colon || (colon[1] != 'i' && colon[1] != 'f') || c->n_param == BELT_MAX_PARAMS)
			return at(b, op->pos, "kernel '%s' has a bad param schema '%s'",
				  op->op, c->kernel->params);
		const struct arch_named_expr *e = find_param(op, p, (size_t)(colon - p));
		if (!e)
			return at(b, op->pos, "op '%s' needs param '%.*s'", op->op,
				  (int)(colon - p), p);
		double v;
		char msg[BELT_ERR_SIZE];
		if (belt_expr_eval(e->expr, vs, &v, msg, sizeof msg))
			return at(b, e->pos, "param '%s': %s", e->name, msg);
		if (colon[1] == 'i') {
			if (v != floor(v) || v < INT32_MIN || v > INT32_MAX)
				return at(b, e->pos, "param '%s' = %g: expected an integer",
					  e->name, v);
			c->param[c->n_param++].i = (int32_t)v;
		} else
			c->param[c->n_param++].f = (float)v;
		p = colon + 2;
	}
	if (c->n_param != op->n_param) {
		for (unsigned i = 0; i < op->n_param; i++) {
			char key[64];
			snprintf(key, sizeof key, "%s:", op->param[i].name);
			const char *hit = strstr(c->kernel->params, key);
			if (!hit || (hit != c->kernel->params && hit[-1] != ' '))
				return at(b, op->param[i].pos,
					  "op '%s' has no param '%s' (kernel takes \"%s\")", op->op,
					  op->param[i].name, c->kernel->params);
		}
	}
	return 0;
}

static int build_cmd(struct build *b, const struct arch_op *op, int layer,
		     struct belt_cmd *c, char *label)
{
	struct belt_session *s = b->s;
	const struct belt_gguf_tensor *weight = NULL;
	memset(c, 0, sizeof *c);
	c->n_bind = (uint8_t)op->n_bind;
	for (unsigned i = 0; i < op->n_bind; i++) {
		const struct belt_gguf_tensor *t;
		if (bind_one(b, op, i, layer, &c->bind[i], &t))
			return -1;
		if (t && !weight)
			weight = t;
	}
	int wtype = weight ? (int)weight->type : BELT_TYPE_F32;
	char vbuf[64];
	const char *variant = belt_model_variant(s->m, op->op, op->variant, vbuf, sizeof vbuf);
	c->kernel = s->m->be->kernel_find(s->m->be_ctx, op->op, variant, wtype);
	if (!c->kernel)
		return at(b, op->pos,
			  "backend '%s' has no kernel for op '%s' (variant '%s', weight type %s)",
			  s->m->be->name, op->op, variant, belt_type_name(wtype));
	if (c->kernel->n_bind != op->n_bind)
		return at(b, op->pos, "op '%s' takes %u bindings, the YAML gives %u",
			  op->op, c->kernel->n_bind, op->n_bind);
	if (pack_params(b, op, layer, c))
		return -1;
	c->patch = op->patch;
	c->head = op->section == ARCH_HEAD;
	c->layer = (int16_t)layer;
	if (weight) {
		size_t n = strlen(weight->name);
		snprintf(label, 48, "%.*s", (int)(n > 7 && !strcmp(weight->name + n - 7, ".weight") ? n - 7 : n),
			 weight->name);
	} else if (layer >= 0)
		snprintf(label, 48, "blk.%d.%s", layer, op->op);
	else
		snprintf(label, 48, "%s", op->op);
	c->label = label;
	return 0;
}

int belt_dispatch_build(struct belt_session *s, char *err, size_t errsz)
{
	const struct belt_arch *a = s->m->arch;
	struct build b = {.s = s, .a = a, .err = err, .errsz = errsz};
	unsigned n = 0;
	for (unsigned i = 0; i < a->n_ops; i++)
		n += a->ops[i].section == ARCH_LAYER ? s->m->n_layer : 1;
	s->table.cmds = calloc(n, sizeof *s->table.cmds);
	s->labels = calloc(n, sizeof *s->labels);
	if (!s->table.cmds || !s->labels)
		return belt_errf(err, errsz, "dispatch table: out of memory (%u commands)", n);
	unsigned c = 0;
	for (int sec = ARCH_EMBED; sec <= ARCH_HEAD; sec++) {
		int layers = sec == ARCH_LAYER ? (int)s->m->n_layer : 1;
		for (int l = 0; l < layers; l++) {
			for (unsigned i = 0; i < a->n_ops; i++) {
				if ((int)a->ops[i].section != sec)
					continue;
				if (build_cmd(&b, &a->ops[i], sec == ARCH_LAYER ? l : -1,
					      &s->table.cmds[c], s->labels[c]))
					return -1;
				c++;
			}
		}
	}
	s->table.n_cmds = c;
	s->table.n_ctx = s->n_ctx;
	s->table.token_ids = s->token_ids;
	return 0;
}
