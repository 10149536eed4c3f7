/* Loads conf/arch/<name>.yaml with libyaml's document API into struct
 * belt_arch. Only the shape is checked here; names are resolved against
 * the model and the backend when the dispatch table is built. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "arch/arch.h"
#include "belt/error.h"

struct loader {
	const char *path;
	yaml_document_t doc;
	struct belt_arch *a;
	char *err;
	size_t errsz;
};

static struct arch_pos pos_of(const yaml_node_t *n)
{
	return (struct arch_pos){(unsigned)n->start_mark.line + 1,
				 (unsigned)n->start_mark.column + 1};
}

__attribute__((format(printf, 3, 4)))
static int at(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[BELT_ERR_SIZE];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct arch_pos p = pos_of(n);
	return belt_errf(ld->err, ld->errsz, "%s:%u:%u: %s", ld->path, p.line,
			 p.col, msg);
}

static yaml_node_t *node(struct loader *ld, int i)
{
	return yaml_document_get_node(&ld->doc, i);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A copy of a scalar node's text, or an error naming what was expected. */
static int take_scalar(struct loader *ld, const yaml_node_t *n, const char *what,
		       char **out)
{
	const char *s = scalar(n);
	if (!s)
		return at(ld, n, "%s: expected a scalar", what);
	if (*out) /* a key given twice: libyaml keeps both */
		return at(ld, n, "%s: given twice", what);
	if (!(*out = strdup(s)))
		return at(ld, n, "out of memory");
	return 0;
}

static int want(struct loader *ld, const yaml_node_t *n, yaml_node_type_t t,
		const char *what)
{
	if (n->type == t)
		return 0;
	return at(ld, n, "%s: expected a %s", what,
		  t == YAML_MAPPING_NODE ? "mapping" :
		  t == YAML_SEQUENCE_NODE ? "sequence" : "scalar");
}

#define FOR_PAIRS(ld, map, k, v)                                              \
	for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;           \
	     p_ < (map)->data.mapping.pairs.top &&                             \
	     ((k) = node(ld, p_->key), (v) = node(ld, p_->value), 1);          \
	     p_++)

static size_t n_pairs(const yaml_node_t *map)
{
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

static int key_name(struct loader *ld, yaml_node_t *k, const char **name)
{
	if (!(*name = scalar(k)) || !**name)
		return at(ld, k, "expected a non-empty name");
	return 0;
}

/* values: {string: number, ...} of a string key, into h->values as
 * "string=number ..." (each number checked by the expression evaluator
 * when the key is read) */
static int load_values(struct loader *ld, yaml_node_t *map, struct arch_hparam *h)
{
	yaml_node_t *k, *v;
	if (h->values)
		return at(ld, map, "hparam '%s': values given twice", h->name);
	if (want(ld, map, YAML_MAPPING_NODE, "values"))
		return -1;
	size_t len = 1;
	FOR_PAIRS(ld, map, k, v) {
		const char *a = scalar(k), *b = scalar(v);
		if (!a || !b || !*a || strpbrk(a, "= ") || strpbrk(b, "= "))
			return at(ld, k, "hparam '%s': values: expected 'string: number' pairs", h->name);
		len += strlen(a) + strlen(b) + 2;
	}
	if (!(h->values = calloc(len, 1)))
		return at(ld, map, "out of memory");
	FOR_PAIRS(ld, map, k, v) {
		size_t n = strlen(h->values);
		snprintf(h->values + n, len - n, "%s%s=%s", n ? " " : "", scalar(k), scalar(v));
	}
	return 0;
}

static int load_hparams(struct loader *ld, yaml_node_t *map)
{
	yaml_node_t *k, *v;
	if (want(ld, map, YAML_MAPPING_NODE, "hparams"))
		return -1;
	if (ld->a->hparams)
		return at(ld, map, "hparams: given twice");
	if (!(ld->a->hparams = calloc(n_pairs(map) + 1, sizeof *ld->a->hparams)))
		return at(ld, map, "out of memory");
	FOR_PAIRS(ld, map, k, v) {
		struct arch_hparam *h = &ld->a->hparams[ld->a->n_hparams++];
		const char *name;
		if (key_name(ld, k, &name) || !(h->name = strdup(name)))
			return -1;
		h->pos = pos_of(k);
		h->dim = -1;
		if (want(ld, v, YAML_MAPPING_NODE, name))
			return -1;
		yaml_node_t *fk, *fv;
		FOR_PAIRS(ld, v, fk, fv) {
			const char *f = scalar(fk);
			char *dim = NULL;
			int rc;
			if (f && !strcmp(f, "key"))
				rc = take_scalar(ld, fv, "key", &h->key);
			else if (f && !strcmp(f, "default"))
				rc = take_scalar(ld, fv, "default", &h->def);
			else if (f && !strcmp(f, "tensor"))
				rc = take_scalar(ld, fv, "tensor", &h->tensor);
			else if (f && !strcmp(f, "dim")) {
				rc = take_scalar(ld, fv, "dim", &dim);
				if (!rc) {
					char *end;
					h->dim = (int)strtol(dim, &end, 10);
					if (*end || h->dim < 0 || h->dim > 3)
						rc = at(ld, fv, "dim: expected 0..3, got '%s'", dim);
				}
				free(dim);
			} else if (f && !strcmp(f, "values"))
				rc = load_values(ld, fv, h);
			else
				rc = at(ld, fk, "hparam '%s': unknown field '%s' (expected key, default, tensor, dim, values)",
					name, f ? f : "?");
			if (rc)
				return -1;
		}
		if (!h->key && !h->tensor)
			return at(ld, v, "hparam '%s': needs 'key' or 'tensor'", name);
		if (h->tensor && h->dim < 0)
			return at(ld, v, "hparam '%s': 'tensor' needs 'dim'", name);
	}
	return 0;
}

static int load_named_exprs(struct loader *ld, yaml_node_t *map, const char *what,
			    struct arch_named_expr **out, unsigned *n)
{
	yaml_node_t *k, *v;
	if (want(ld, map, YAML_MAPPING_NODE, what))
		return -1;
	if (*out)
		return at(ld, map, "%s: given twice", what);
	if (!(*out = calloc(n_pairs(map) + 1, sizeof **out)))
		return at(ld, map, "out of memory");
	FOR_PAIRS(ld, map, k, v) {
		struct arch_named_expr *e = &(*out)[(*n)++];
		const char *name;
		if (key_name(ld, k, &name) || !(e->name = strdup(name)))
			return -1;
		e->pos = pos_of(v);
		if (take_scalar(ld, v, name, &e->expr))
			return -1;
	}
	return 0;
}

static int load_shape(struct loader *ld, yaml_node_t *seq, struct arch_tensor *t)
{
	if (want(ld, seq, YAML_SEQUENCE_NODE, "shape"))
		return -1;
	for (yaml_node_item_t *i = seq->data.sequence.items.start;
	     i < seq->data.sequence.items.top; i++) {
		if (t->n_dims == 4)
			return at(ld, seq, "tensor '%s': more than 4 dimensions", t->name);
		if (take_scalar(ld, node(ld, *i), "shape", &t->shape[t->n_dims++]))
			return -1;
	}
	if (!t->n_dims)
		return at(ld, seq, "tensor '%s': empty shape", t->name);
	return 0;
}

static int load_tensors(struct loader *ld, yaml_node_t *map, bool per_layer)
{
	yaml_node_t *k, *v;
	struct belt_arch *a = ld->a;
	if (want(ld, map, YAML_MAPPING_NODE, per_layer ? "layer_tensors" : "tensors"))
		return -1;
	void *grown = realloc(a->tensors, (a->n_tensors + n_pairs(map) + 1) * sizeof *a->tensors);
	if (!grown)
		return at(ld, map, "out of memory");
	a->tensors = grown;
	FOR_PAIRS(ld, map, k, v) {
		struct arch_tensor *t = &a->tensors[a->n_tensors++];
		memset(t, 0, sizeof *t);
		const char *name;
		if (key_name(ld, k, &name) || !(t->name = strdup(name)))
			return -1;
		t->per_layer = per_layer;
		t->pos = pos_of(k);
		if (per_layer && !strstr(name, "{l}"))
			return at(ld, k, "layer tensor '%s': name must contain {l}", name);
		if (v->type == YAML_SEQUENCE_NODE) {
			if (load_shape(ld, v, t))
				return -1;
			continue;
		}
		if (want(ld, v, YAML_MAPPING_NODE, name))
			return -1;
		yaml_node_t *fk, *fv;
		FOR_PAIRS(ld, v, fk, fv) {
			const char *f = scalar(fk);
			int rc;
			if (f && !strcmp(f, "shape"))
				rc = load_shape(ld, fv, t);
			else if (f && !strcmp(f, "or"))
				rc = take_scalar(ld, fv, "or", &t->fallback);
			else if (f && !strcmp(f, "optional")) {
				const char *b = scalar(fv);
				rc = b && (!strcmp(b, "true") || !strcmp(b, "false"))
					     ? (t->optional = !strcmp(b, "true"), 0)
					     : at(ld, fv, "tensor '%s': optional: expected true or false",
						  name);
			} else
				rc = at(ld, fk, "tensor '%s': unknown field '%s' (expected shape, or, optional)",
					name, f ? f : "?");
			if (rc)
				return -1;
		}
		if (!t->n_dims)
			return at(ld, v, "tensor '%s': missing shape", name);
	}
	return 0;
}

static const char *const patch_names[] = {
	[BELT_PATCH_NONE] = "none",
	[BELT_PATCH_TOKEN_OFFSET] = "token_offset",
	[BELT_PATCH_POSITION] = "position",
	[BELT_PATCH_KV_LEN] = "kv_len",
	[BELT_PATCH_POS_AND_KV] = "pos_and_kv",
	[BELT_PATCH_ARGMAX_OUTPUT] = "argmax_output",
};

static int load_op_field(struct loader *ld, struct arch_op *op, const char *f,
			 yaml_node_t *fk, yaml_node_t *fv)
{
	if (!strcmp(f, "op"))
		return take_scalar(ld, fv, "op", &op->op);
	if (!strcmp(f, "variant"))
		return take_scalar(ld, fv, "variant", &op->variant);
	if (!strcmp(f, "if"))
		return take_scalar(ld, fv, "if", &op->cond);
	if (!strcmp(f, "when"))
		return take_scalar(ld, fv, "when", &op->when);
	if (!strcmp(f, "patch")) {
		const char *s = scalar(fv);
		for (unsigned i = 0; s && i < sizeof patch_names / sizeof *patch_names; i++) {
			if (!strcmp(s, patch_names[i])) {
				op->patch = (enum belt_patch)i;
				return 0;
			}
		}
		return at(ld, fv, "unknown patch '%s' (expected none, token_offset, position, kv_len, pos_and_kv, argmax_output)",
			  s ? s : "?");
	}
	if (!strcmp(f, "bind")) {
		if (want(ld, fv, YAML_SEQUENCE_NODE, "bind"))
			return -1;
		for (yaml_node_item_t *i = fv->data.sequence.items.start;
		     i < fv->data.sequence.items.top; i++) {
			yaml_node_t *b = node(ld, *i);
			if (op->n_bind == BELT_MAX_BINDINGS)
				return at(ld, b, "more than %d bindings", BELT_MAX_BINDINGS);
			op->bind_pos[op->n_bind] = pos_of(b);
			if (take_scalar(ld, b, "binding", &op->bind[op->n_bind++]))
				return -1;
		}
		return 0;
	}
	if (!strcmp(f, "params")) {
		yaml_node_t *k, *v;
		if (want(ld, fv, YAML_MAPPING_NODE, "params"))
			return -1;
		FOR_PAIRS(ld, fv, k, v) {
			const char *name;
			if (op->n_param == BELT_MAX_PARAMS)
				return at(ld, k, "more than %d params", BELT_MAX_PARAMS);
			struct arch_named_expr *e = &op->param[op->n_param++];
			if (key_name(ld, k, &name) || !(e->name = strdup(name)))
				return -1;
			e->pos = pos_of(v);
			if (take_scalar(ld, v, name, &e->expr))
				return -1;
		}
		return 0;
	}
	return at(ld, fk, "unknown op field '%s' (expected op, variant, bind, params, patch, if, when)", f);
}

static int load_ops(struct loader *ld, yaml_node_t *seq, enum arch_section sec)
{
	struct belt_arch *a = ld->a;
	if (want(ld, seq, YAML_SEQUENCE_NODE, "forward section"))
		return -1;
	size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	void *grown = realloc(a->ops, (a->n_ops + n + 1) * sizeof *a->ops);
	if (!grown)
		return at(ld, seq, "out of memory");
	a->ops = grown;
	for (yaml_node_item_t *i = seq->data.sequence.items.start;
	     i < seq->data.sequence.items.top; i++) {
		yaml_node_t *m = node(ld, *i);
		struct arch_op *op = &a->ops[a->n_ops++];
		memset(op, 0, sizeof *op);
		op->section = sec;
		op->pos = pos_of(m);
		if (want(ld, m, YAML_MAPPING_NODE, "op"))
			return -1;
		yaml_node_t *fk, *fv;
		FOR_PAIRS(ld, m, fk, fv) {
			const char *f = scalar(fk);
			if (!f)
				return at(ld, fk, "expected a field name");
			if (load_op_field(ld, op, f, fk, fv))
				return -1;
		}
		if (!op->op)
			return at(ld, m, "op without 'op:' name");
		if (!op->n_bind)
			return at(ld, m, "op '%s' without 'bind:'", op->op);
	}
	return 0;
}

static int load_forward(struct loader *ld, yaml_node_t *map)
{
	yaml_node_t *k, *v;
	static const char *const sections[] = {"embed", "layer", "head"};
	if (want(ld, map, YAML_MAPPING_NODE, "forward"))
		return -1;
	for (unsigned s = 0; s < 3; s++) {
		FOR_PAIRS(ld, map, k, v) {
			const char *name = scalar(k);
			if (name && !strcmp(name, sections[s]) &&
			    load_ops(ld, v, (enum arch_section)s))
				return -1;
		}
	}
	FOR_PAIRS(ld, map, k, v) {
		const char *name = scalar(k);
		if (!name || (strcmp(name, "embed") && strcmp(name, "layer") && strcmp(name, "head")))
			return at(ld, k, "unknown forward section '%s' (expected embed, layer, head)",
				  name ? name : "?");
	}
	if (!ld->a->n_ops)
		return at(ld, map, "forward: no ops");
	return 0;
}

static int load_outputs(struct loader *ld, yaml_node_t *map)
{
	yaml_node_t *k, *v;
	if (want(ld, map, YAML_MAPPING_NODE, "outputs"))
		return -1;
	FOR_PAIRS(ld, map, k, v) {
		const char *name = scalar(k);
		if (!name || strcmp(name, "logits"))
			return at(ld, k, "unknown output '%s' (expected logits)", name ? name : "?");
		ld->a->logits_pos = pos_of(v);
		if (take_scalar(ld, v, "logits", &ld->a->logits))
			return -1;
	}
	return 0;
}

static int load_root(struct loader *ld, yaml_node_t *root)
{
	yaml_node_t *k, *v;
	struct belt_arch *a = ld->a;
	if (want(ld, root, YAML_MAPPING_NODE, "architecture file"))
		return -1;
	FOR_PAIRS(ld, root, k, v) {
		const char *s = scalar(k);
		int rc;
		if (!s)
			rc = at(ld, k, "expected a section name");
		else if (!strcmp(s, "arch"))
			rc = take_scalar(ld, v, "arch", &a->name);
		else if (!strcmp(s, "hparams"))
			rc = load_hparams(ld, v);
		else if (!strcmp(s, "derived"))
			rc = load_named_exprs(ld, v, s, &a->derived, &a->n_derived);
		else if (!strcmp(s, "tensors"))
			rc = load_tensors(ld, v, false);
		else if (!strcmp(s, "layer_tensors"))
			rc = load_tensors(ld, v, true);
		else if (!strcmp(s, "buffers"))
			rc = load_named_exprs(ld, v, s, &a->buffers, &a->n_buffers);
		else if (!strcmp(s, "kv_cache"))
			rc = load_named_exprs(ld, v, s, &a->kv, &a->n_kv);
		else if (!strcmp(s, "outputs"))
			rc = load_outputs(ld, v);
		else if (!strcmp(s, "forward"))
			rc = load_forward(ld, v);
		else
			rc = at(ld, k, "unknown section '%s' (expected arch, hparams, derived, tensors, layer_tensors, buffers, kv_cache, outputs, forward)", s);
		if (rc)
			return -1;
	}
	if (!a->name)
		return at(ld, root, "missing 'arch:' name");
	if (!a->n_hparams)
		return at(ld, root, "missing 'hparams:' section");
	if (!a->n_ops)
		return at(ld, root, "missing 'forward:' section");
	if (!a->logits)
		return at(ld, root, "missing 'outputs: {logits: BUFFER}'");
	return 0;
}

/* Load the description parser reads; path names it in messages. */
static int load_from(yaml_parser_t *parser, const char *path, struct belt_arch **out, char *err,
		     size_t errsz)
{
	struct loader ld = {.path = path, .err = err, .errsz = errsz};
	int rc = -1;
	if (!yaml_parser_load(parser, &ld.doc))
		return belt_errf(err, errsz, "%s:%zu:%zu: YAML syntax error: %s%s%s", path,
				 parser->problem_mark.line + 1, parser->problem_mark.column + 1,
				 parser->problem ? parser->problem : "unknown",
				 parser->context ? " " : "", parser->context ? parser->context : "");
	ld.a = calloc(1, sizeof *ld.a);
	yaml_node_t *root = yaml_document_get_root_node(&ld.doc);
	if (!ld.a || !(ld.a->path = strdup(path)))
		belt_errf(err, errsz, "%s: out of memory", path);
	else if (!root)
		belt_errf(err, errsz, "%s: empty architecture file", path);
	else
		rc = load_root(&ld, root);
	yaml_document_delete(&ld.doc);
	if (rc) {
		belt_arch_free(ld.a);
		return -1;
	}
	*out = ld.a;
	return 0;
}

int belt_arch_load(const char *path, struct belt_arch **out, char *err,
		   size_t errsz)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return belt_errf(err, errsz, "%s: %s", path, strerror(errno));
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = load_from(&parser, path, out, err, errsz);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

int belt_arch_load_text(const char *source, const char *text, struct belt_arch **out, char *err,
			size_t errsz)
{
	*out = NULL;
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	int rc = load_from(&parser, source, out, err, errsz);
	yaml_parser_delete(&parser);
	return rc;
}

static void free_named(struct arch_named_expr *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].expr);
	}
	free(e);
}

void belt_arch_free(struct belt_arch *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->n_hparams; i++) {
		free(a->hparams[i].name);
		free(a->hparams[i].key);
		free(a->hparams[i].def);
		free(a->hparams[i].tensor);
		free(a->hparams[i].values);
	}
	free(a->hparams);
	free_named(a->derived, a->n_derived);
	for (unsigned i = 0; i < a->n_tensors; i++) {
		free(a->tensors[i].name);
		free(a->tensors[i].fallback);
		for (unsigned d = 0; d < a->tensors[i].n_dims; d++)
			free(a->tensors[i].shape[d]);
	}
	free(a->tensors);
	free_named(a->buffers, a->n_buffers);
	free_named(a->kv, a->n_kv);
	for (unsigned i = 0; i < a->n_ops; i++) {
		struct arch_op *op = &a->ops[i];
		free(op->op);
		free(op->variant);
		free(op->cond);
		free(op->when);
		for (unsigned b = 0; b < op->n_bind; b++)
			free(op->bind[b]);
		for (unsigned p = 0; p < op->n_param; p++) {
			free(op->param[p].name);
			free(op->param[p].expr);
		}
	}
	free(a->ops);
	free(a->logits);
	free(a->path);
	free(a->name);
	free(a);
}

int belt_arch_find(const char *name, const char *dirs, char *out, size_t outsz)
{
	const char *d = dirs;
	while (d && *d) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		if (len) {
			snprintf(out, outsz, "%.*s/%s.yaml", (int)len, d, name);
			if (access(out, R_OK) == 0)
				return 0;
		}
		d = end ? end + 1 : NULL;
	}
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether folder path (which starts at here in dirs) is the same folder
 * as one listed before it in dirs (a path may name a folder twice). */
static bool dir_listed_before(const char *dirs, const char *here, const char *path)
{
	char me[PATH_MAX], other[PATH_MAX], name[PATH_MAX];
	if (!realpath(path, me))
		return false;
	for (const char *d = dirs; d && d < here;) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		snprintf(name, sizeof name, "%.*s", (int)len, d);
		if (len && realpath(name, other) && !strcmp(me, other))
			return true;
		d = end ? end + 1 : NULL;
	}
	return false;
}

int belt_arch_list(const char *dirs, void (*fn)(const char *name, const char *path, void *ud),
		   void *ud)
{
	int found = 0;
	char path[4096], seen[4096];
	for (const char *d = dirs; d && *d;) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		snprintf(path, sizeof path, "%.*s", (int)len, d);
		const char *here = d;
		d = end ? end + 1 : NULL;
		if (len && dir_listed_before(dirs, here, path))
			continue;
		DIR *dir = len ? opendir(path) : NULL;
		if (!dir)
			continue;
		char *names[256];
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(dir)) && n < sizeof names / sizeof *names) {
			size_t l = strlen(e->d_name);
			if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml") && (names[n] = strdup(e->d_name)))
				n++;
		}
		closedir(dir);
		qsort(names, n, sizeof *names, cmp_str);
		for (size_t i = 0; i < n; i++) {
			names[i][strlen(names[i]) - 5] = 0;
			/* the file that loads for this name: the first on the path */
			if (belt_arch_find(names[i], dirs, seen, sizeof seen) == 0 &&
			    !strncmp(seen, path, len) && seen[len] == '/') {
				fn(names[i], seen, ud);
				found++;
			}
			free(names[i]);
		}
	}
	return found;
}
