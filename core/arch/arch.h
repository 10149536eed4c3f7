/* The architecture description loaded from conf/arch/<name>.yaml: which
 * GGUF keys give the hyperparameters, which tensors exist, the scratch and
 * KV buffers, and the forward pass of one token as a list of ops. Every
 * item keeps its YAML line and column for error messages. */
#ifndef BELT_ARCH_ARCH_H
#define BELT_ARCH_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "belt/backend.h"

struct arch_pos {
	unsigned line, col;
};

struct arch_hparam {
	char *name;
	char *key;	/* GGUF key, "{arch}" replaced at resolve time; or NULL */
	char *def;	/* default expression, or NULL (required) */
	char *tensor;	/* or: taken from this tensor's dimension */
	/* "values: {none: 0, linear: 1}": the key is a string, each allowed
	 * one mapped to a number; kept as "none=0 linear=1"; or NULL */
	char *values;
	int dim;
	struct arch_pos pos;
};

struct arch_named_expr { /* derived values, buffers, kv cache arrays */
	char *name;
	char *expr;
	struct arch_pos pos;
};

struct arch_tensor {
	char *name; /* may contain "{l}" */
	char *shape[4];
	unsigned n_dims;
	char *fallback; /* "or:" another tensor used when this one is absent */
	bool optional;	/* "optional: true": a file may lack it */
	bool per_layer;
	struct arch_pos pos;
};

enum arch_section { ARCH_EMBED, ARCH_LAYER, ARCH_HEAD };

struct arch_op {
	char *op;
	char *variant; /* NULL: from config, else "default" */
	char *bind[BELT_MAX_BINDINGS];
	struct arch_pos bind_pos[BELT_MAX_BINDINGS];
	unsigned n_bind;
	struct arch_named_expr param[BELT_MAX_PARAMS];
	unsigned n_param;
	enum belt_patch patch;
	enum arch_section section;
	/* "if: T" builds the op only where tensor T (with {l}) is in the
	 * file, "if: !T" only where it is not; NULL: always */
	char *cond;
	/* "when: EXPR" builds the op only where EXPR (l: the layer) is not 0 */
	char *when;
	struct arch_pos pos;
};

struct belt_arch {
	char *path;
	char *name;
	struct arch_hparam *hparams;
	unsigned n_hparams;
	struct arch_named_expr *derived;
	unsigned n_derived;
	struct arch_tensor *tensors;
	unsigned n_tensors;
	struct arch_named_expr *buffers;
	unsigned n_buffers;
	struct arch_named_expr *kv;
	unsigned n_kv;
	char *logits; /* buffer holding the logits (outputs.logits) */
	struct arch_pos logits_pos;
	struct arch_op *ops;
	unsigned n_ops;
};

/* Parse an architecture file; errors are "path:line:col: what". */
int belt_arch_load(const char *path, struct belt_arch **out, char *err,
		   size_t errsz);
/* The same for a description in memory (an architecture plugin's, which
 * source names: "arch-gemma2/gemma2.yaml"). */
int belt_arch_load_text(const char *source, const char *text, struct belt_arch **out, char *err,
			size_t errsz);
/* Free; NULL is allowed. */
void belt_arch_free(struct belt_arch *a);
/* Find <name>.yaml in dirs (':'-separated); the full path is written to
 * out. Returns 0 if found. */
int belt_arch_find(const char *name, const char *dirs, char *out, size_t outsz);
/* Call fn(name, path, ud) for every <name>.yaml in dirs, each name once
 * (its first file, as belt_arch_find picks), names sorted within a
 * directory. Returns how many. */
int belt_arch_list(const char *dirs, void (*fn)(const char *name, const char *path, void *ud),
		   void *ud);

#endif
