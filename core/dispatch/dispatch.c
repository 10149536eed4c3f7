/* Turns the architecture's forward pass into a dispatch table: one
 * command per op (per layer inside the layer loop), with bindings resolved
 * to buffers, params evaluated and packed in the order of the op's
 * contract (belt/ops.h). The same YAML gives the one-row decode table and
 * the batched table: only the rows of the activation bindings differ. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"

struct build {
	struct belt_model *m;
	const struct dispatch_map *map;
	const struct belt_arch *a;
	struct belt_vars vars; /* the map's, with l per layer */
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

static const struct dispatch_buffer *find_buffer(const struct dispatch_map *map,
						const char *name)
{
	for (unsigned i = 0; i < map->n_bufs; i++)
		if (!strcmp(map->bufs[i].name, name))
			return &map->bufs[i];
	return NULL;
}

bool belt_dispatch_buffer_per_row(const struct belt_arch *a, const char *name)
{
	for (unsigned i = 0; i < a->n_ops; i++) {
		const struct belt_op_contract *oc = belt_op_contract(a->ops[i].op);
		for (unsigned j = 0; oc && j < a->ops[i].n_bind && j < oc->n_bind; j++)
			if (oc->bind[j].kind == BELT_BIND_ROWS && !strcmp(a->ops[i].bind[j], name))
				return true;
	}
	return false;
}

int belt_dispatch_cache_role(const struct belt_arch *a, const char *name)
{
	int role = 0;
	for (unsigned i = 0; i < a->n_ops; i++) {
		const struct belt_op_contract *oc = belt_op_contract(a->ops[i].op);
		for (unsigned j = 0; oc && j < a->ops[i].n_bind && j < oc->n_bind; j++) {
			if (oc->bind[j].kind != BELT_BIND_CACHE || strcmp(a->ops[i].bind[j], name))
				continue;
			int r = oc->bind[j].name[0] == 'k' ? 'k' : 'v';
			role = role && role != r ? '?' : r;
		}
	}
	return role;
}

/* The rows "start, count]" of a view of tensor name (rows of it), each an
 * expression, into r[0] and r[1]. */
static int view_rows(struct build *b, struct arch_pos pos, const char *name, const char *spec,
		     int64_t rows, int64_t r[2])
{
	char buf[256];
	size_t len = strlen(spec);
	const char *comma = strchr(spec, ',');
	if (!len || spec[len - 1] != ']' || !comma || len >= sizeof buf)
		return at(b, pos, "binding '%s[%s': expected '%s[start, count]'", name, spec, name);
	memcpy(buf, spec, len - 1);
	buf[len - 1] = 0;
	buf[comma - spec] = 0;
	const char *ex[2] = {buf, buf + (comma - spec) + 1};
	for (int j = 0; j < 2; j++) {
		double v;
		char msg[BELT_ERR_SIZE];
		if (belt_expr_eval(ex[j], &b->vars, &v, msg, sizeof msg))
			return at(b, pos, "binding '%s[%s': %s", name, spec, msg);
		if (v != floor(v) || v < 0 || v > (double)rows)
			return at(b, pos, "binding '%s[%s': %s = %g is not a row count in 0..%lld", name,
				  spec, j ? "count" : "start", v, (long long)rows);
		r[j] = (int64_t)v;
	}
	if (r[1] < 1 || r[0] + r[1] > rows)
		return at(b, pos, "binding '%s[%s': rows %lld..%lld outside the tensor's %lld", name,
			  spec, (long long)r[0], (long long)(r[0] + r[1] - 1), (long long)rows);
	return 0;
}

/* Whether op is built for layer: its "if:" tensor present (or, "!T",
 * absent); the tensor must be one the architecture declares. */
static int cond_holds(struct build *b, const struct arch_op *op, int layer, bool *holds)
{
	*holds = true;
	if (op->when) {
		double v;
		char msg[BELT_ERR_SIZE];
		belt_vars_set(&b->vars, "l", layer);
		if (belt_expr_eval(op->when, &b->vars, &v, msg, sizeof msg))
			return at(b, op->pos, "when: %s", msg);
		*holds = v != 0;
	}
	if (!op->cond || !*holds)
		return 0;
	bool neg = op->cond[0] == '!';
	char name[256];
	belt_subst_layer(op->cond + neg, layer, name, sizeof name);
	if (!belt_model_declares(b->m, name))
		return at(b, op->pos, "if: '%s' is not a tensor the architecture declares", name);
	*holds = (belt_model_tensor(b->m, name) != NULL) != neg;
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

/* The window op attends within at layer (its `window` param; 0: none, or
 * the op takes no window). */
static int op_window(struct build *b, const struct arch_op *op, int layer, uint32_t *w)
{
	const struct belt_op_contract *oc = belt_op_contract(op->op);
	const struct arch_named_expr *e = find_param(op, "window", 6);
	*w = 0;
	if (!e || !oc || !strstr(oc->params, "window:"))
		return 0;
	double v;
	char msg[BELT_ERR_SIZE];
	belt_vars_set(&b->vars, "l", layer);
	if (belt_expr_eval(e->expr, &b->vars, &v, msg, sizeof msg))
		return at(b, e->pos, "param '%s': %s", e->name, msg);
	if (v >= 1 && v <= (double)UINT32_MAX)
		*w = (uint32_t)v;
	return 0;
}

/* Binding i of op is a layer's cache of fewer slots than the context (a
 * sliding-window layer's ring): an op may only read it within a window
 * that a pass of the table's rows leaves whole (in a table of sequences:
 * a sequence's part of it, and the pass's one row of that sequence). */
static int ring_check(struct build *b, const struct arch_op *op, unsigned i, int layer,
		      uint32_t slots)
{
	uint32_t rows = b->map->rows;
	if (b->map->seq_ctx) {
		slots /= b->map->n_ctx / b->map->seq_ctx;
		rows = 1;
	}
	const struct belt_op_contract *oc = belt_op_contract(op->op);
	if (!oc || i >= oc->n_bind || !(oc->bind[i].access & BELT_ACCESS_R))
		return 0;
	uint32_t w;
	if (op_window(b, op, layer, &w))
		return -1;
	if (!w)
		return at(b, op->bind_pos[i],
			  "op '%s' reads all of KV cache '%s', whose layer %d holds only %u positions (a sliding-window layer's)",
			  op->op, op->bind[i], layer, slots);
	if ((uint64_t)w + rows - 1 > slots)
		return at(b, op->bind_pos[i],
			  "KV cache '%s' of layer %d holds %u positions: fewer than window %u and a pass of %u rows need",
			  op->bind[i], layer, slots, w, rows);
	return 0;
}

/* Resolve binding i of op; *tensor is set when it is a weight. In a
 * batched table an argmax_output command's ids go to the row outputs. */
static int bind_one(struct build *b, const struct arch_op *op, unsigned i, int layer,
		    struct belt_binding *out, const struct belt_gguf_tensor **tensor)
{
	const struct dispatch_map *map = b->map;
	char name[256];
	belt_subst_layer(op->bind[i], layer, name, sizeof name);
	*tensor = NULL;
	if (!strcmp(name, "token_ids")) {
		if (map->rows > 1 && op->patch == BELT_PATCH_ARGMAX_OUTPUT)
			*out = (struct belt_binding){map->row_ids, 0, (uint64_t)map->rows * 4,
						     BELT_TYPE_I32, {map->rows, 1}};
		else
			*out = (struct belt_binding){map->token_ids, 0,
						     (uint64_t)(map->n_ctx + 1) * 4, BELT_TYPE_I32,
						     {map->n_ctx + 1, 1}};
		return 0;
	}
	const struct dispatch_buffer *sb = find_buffer(map, name);
	if (sb) {
		if (sb->kv && layer < 0)
			return at(b, op->bind_pos[i],
				  "KV cache '%s' bound outside the layer loop", name);
		if (sb->kv) {
			const struct dispatch_kv_layer *kl = &sb->layers[layer];
			if (kl->slots < map->n_ctx && ring_check(b, op, i, layer, kl->slots))
				return -1;
			*out = (struct belt_binding){kl->buf, kl->offset, kl->bytes, sb->type,
						     {(int64_t)kl->elems, 1}};
			return 0;
		}
		uint32_t rows = sb->per_row ? map->rows : 1;
		*out = (struct belt_binding){sb->buf, 0, sb->elems * 4 * rows, BELT_TYPE_F32,
					     {(int64_t)sb->elems, rows}};
		return 0;
	}
	/* "T[start, count]": rows start .. start+count-1 of tensor T */
	char *view = strchr(name, '[');
	if (view)
		*view++ = 0;
	const struct belt_gguf_tensor *t = belt_model_tensor(b->m, name);
	if (!t)
		return at(b, op->bind_pos[i],
			  "unknown binding '%s' (not a buffer, KV cache, token_ids or declared tensor)",
			  name);
	*tensor = t;
	uint64_t off;
	struct belt_buffer *wb = belt_model_weight(b->m, t, &off);
	if (!wb)
		return at(b, op->bind_pos[i], "tensor '%s' is in no weight buffer", name);
	int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
	*out = (struct belt_binding){wb, off, t->size, t->type, {t->ne[0], rows}};
	if (view) {
		int64_t r[2];
		if (view_rows(b, op->bind_pos[i], name, view, rows, r))
			return -1;
		uint64_t row_bytes = t->size / (uint64_t)rows;
		out->offset += (uint64_t)r[0] * row_bytes;
		out->size = (uint64_t)r[1] * row_bytes;
		out->ne[1] = r[1];
	}
	return 0;
}

/* Pack the op's params in the order of its contract's schema "a:i b:f". */
static int pack_params(struct build *b, const struct arch_op *op, int layer,
		       const struct belt_op_contract *oc, struct belt_cmd *c)
{
	const char *p = oc->params;
	struct belt_vars *vs = &b->vars;
	belt_vars_set(vs, "l", layer);
	c->n_param = 0;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *colon = strchr(p, ':');
		if (!*p)
			break;
		if (!colon || (colon[1] != 'i' && colon[1] != 'f') || c->n_param == BELT_MAX_PARAMS)
			return at(b, op->pos, "op '%s' has a bad param schema '%s'", op->op,
				  oc->params);
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
			const char *hit = strstr(oc->params, key);
			if (!hit || (hit != oc->params && hit[-1] != ' '))
				return at(b, op->param[i].pos,
					  "op '%s' has no param '%s' (it takes \"%s\")", op->op,
					  op->param[i].name, oc->params);
		}
	}
	return 0;
}

static int build_cmd(struct build *b, const struct arch_op *op, int layer,
		     struct belt_cmd *c, char *label)
{
	struct belt_model *m = b->m;
	const struct belt_gguf_tensor *weight = NULL;
	memset(c, 0, sizeof *c);
	const struct belt_op_contract *oc = belt_op_contract(op->op);
	if (!oc)
		return at(b, op->pos, "unknown op '%s' (belt/ops.h lists the ops)", op->op);
	if (op->n_bind != oc->n_bind)
		return at(b, op->pos, "op '%s' takes %u bindings, the YAML gives %u", op->op,
			  oc->n_bind, op->n_bind);
	if (op->patch != BELT_PATCH_NONE && !(oc->patches & (1u << op->patch)))
		return at(b, op->pos, "op '%s' does not take this patch kind", op->op);
	c->n_bind = (uint8_t)op->n_bind;
	belt_vars_set(&b->vars, "l", layer);
	for (unsigned i = 0; i < op->n_bind; i++) {
		const struct belt_gguf_tensor *t;
		if (bind_one(b, op, i, layer, &c->bind[i], &t))
			return -1;
		if (t && !weight)
			weight = t;
	}
	int wtype = weight ? (int)weight->type : BELT_TYPE_F32;
	char vbuf[64];
	const char *variant = belt_model_variant(m, op->op, op->variant, vbuf, sizeof vbuf);
	c->kernel = m->be->kernel_find(m->be_ctx, op->op, variant, wtype);
	if (!c->kernel)
		return at(b, op->pos,
			  "backend '%s' has no kernel for op '%s' (variant '%s', weight type %s)",
			  m->be->name, op->op, variant, belt_type_name(wtype));
	if (pack_params(b, op, layer, oc, c))
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
	char msg[BELT_ERR_SIZE];
	if (belt_cmd_check(c, msg, sizeof msg))
		return at(b, op->pos, "%s", msg);
	return 0;
}

/* Every op a kernel choice names must be one the core knows: a typo
 * ("attn=split_kv") would otherwise be silently ignored. */
static int check_choices(const struct belt_model *m, char *err, size_t errsz)
{
	for (const char *item = m->kernels; *item;) {
		size_t len = strcspn(item, ","), op = strcspn(item, "=");
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(op < len ? op : len), item);
		if (!belt_op_contract(name)) {
			size_t n;
			const struct belt_op_contract *all = belt_op_contracts(&n);
			char list[512] = "";
			for (size_t i = 0; i < n; i++)
				if (!all[i].sampler)
					snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
						 *list ? ", " : "", all[i].op);
			return belt_errf(err, errsz,
					 "kernel choice '%.*s' (--kernel or belt.yaml kernels:): unknown op '%s' (expected one of %s)",
					 (int)len, item, name, list);
		}
		item += len + (item[len] == ',');
	}
	return 0;
}

int belt_dispatch_build(struct belt_model *m, const struct dispatch_map *map,
			struct belt_table *t, char (**labels)[48], char *err,
			size_t errsz)
{
	if (check_choices(m, err, errsz))
		return -1;
	const struct belt_arch *a = m->arch;
	struct build b = {.m = m, .map = map, .a = a, .vars = *map->vars, .err = err,
			  .errsz = errsz};
	unsigned n = 0;
	for (unsigned i = 0; i < a->n_ops; i++)
		n += a->ops[i].section == ARCH_LAYER ? m->n_layer : 1;
	t->cmds = calloc(n, sizeof *t->cmds);
	*labels = calloc(n, sizeof **labels);
	if (!t->cmds || !*labels)
		return belt_errf(err, errsz, "dispatch table: out of memory (%u commands)", n);
	unsigned c = 0;
	for (int sec = ARCH_EMBED; sec <= ARCH_HEAD; sec++) {
		int layers = sec == ARCH_LAYER ? (int)m->n_layer : 1;
		for (int l = 0; l < layers; l++) {
			for (unsigned i = 0; i < a->n_ops; i++) {
				bool holds;
				if ((int)a->ops[i].section != sec)
					continue;
				if (cond_holds(&b, &a->ops[i], sec == ARCH_LAYER ? l : -1, &holds))
					return -1;
				if (!holds)
					continue;
				if (build_cmd(&b, &a->ops[i], sec == ARCH_LAYER ? l : -1,
					      &t->cmds[c], (*labels)[c]))
					return -1;
				c++;
			}
		}
	}
	t->n_cmds = c;
	t->n_ctx = map->n_ctx;
	t->token_ids = map->token_ids;
	t->rows = map->rows;
	t->row_ids = map->rows > 1 ? map->row_ids : NULL;
	return 0;
}

int belt_dispatch_cache_window(struct belt_model *m, const struct belt_vars *vars,
			       const char *name, int layer, uint32_t *w, char *err, size_t errsz)
{
	const struct belt_arch *a = m->arch;
	struct build b = {.m = m, .a = a, .vars = *vars, .err = err, .errsz = errsz};
	uint32_t most = 0;
	bool read = false;
	*w = 0;
	for (unsigned i = 0; i < a->n_ops; i++) {
		const struct arch_op *op = &a->ops[i];
		const struct belt_op_contract *oc = belt_op_contract(op->op);
		bool holds;
		if (op->section != ARCH_LAYER || !oc)
			continue;
		if (cond_holds(&b, op, layer, &holds))
			return -1;
		for (unsigned j = 0; holds && j < op->n_bind && j < oc->n_bind; j++) {
			char bound[256];
			belt_subst_layer(op->bind[j], layer, bound, sizeof bound);
			if (oc->bind[j].kind != BELT_BIND_CACHE || !(oc->bind[j].access & BELT_ACCESS_R) ||
			    strcmp(bound, name))
				continue;
			uint32_t ow;
			if (op_window(&b, op, layer, &ow))
				return -1;
			if (!ow)
				return 0;
			read = true;
			most = ow > most ? ow : most;
		}
	}
	*w = read ? most : 0;
	return 0;
}
