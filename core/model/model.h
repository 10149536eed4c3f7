/* Internal view of a loaded model, shared by the session and dispatch code. */
#ifndef BELT_MODEL_MODEL_H
#define BELT_MODEL_MODEL_H

#include "arch/arch.h"
#include "arch/expr.h"
#include "belt/backend.h"
#include "belt/belt.h"

struct belt_model {
	struct belt_gguf *g;
	struct belt_tokenizer *tok;
	struct belt_arch *arch;
	const struct belt_backend_ops *be;
	void *be_ctx;
	/* The weights: the GGUF data section in pieces of whole tensors,
	 * each piece one backend buffer holding data offsets [start, end). */
	struct weight_piece {
		struct belt_buffer *buf;
		uint64_t start, end;
	} *pieces;
	unsigned n_pieces;
	struct belt_vars vars;	     /* hyperparameters and derived values */
	uint32_t n_layer;
	int32_t n_vocab;
	char arch_name[64];
	char kernels[512]; /* "op=variant,..." overrides, validated */
};

struct belt_arch_ops;

/* Architecture plugins (belt/arch.h) as the layer above finds them in
 * the registry: find gives arch's (1, *out), none (0: no module on the
 * plugin path) or -1 with err (a module that fails to load); list calls
 * fn(name, module file, ud) for each one on the plugin path. */
struct model_arch_plugins {
	int (*find)(const char *arch, const struct belt_arch_ops **out, char *err, size_t errsz);
	void (*list)(void (*fn)(const char *name, const char *file, void *ud), void *ud);
};

/* Open, validate and load a model onto backend be (which the layer above
 * found in the registry): belt_model_load without the plugin lookups. Its
 * architecture is <arch>.yaml on the arch path, else ap's (NULL: YAML
 * files only). */
int belt_model_open(const struct belt_model_params *p, const struct belt_backend_ops *be,
		    const struct model_arch_plugins *ap, struct belt_model **out, char *err,
		    size_t errsz);

/* The kernel variant chosen for op: an override, else the YAML's, else
 * "default". */
const char *belt_model_variant(const struct belt_model *m, const char *op,
			       const char *yaml_variant, char *buf, size_t bufsz);

/* The GGUF tensor bound to name ("{l}" already substituted), following the
 * architecture's "or:" fallback; NULL if the architecture does not declare
 * it or the file lacks it. */
/* Whether the architecture declares tensor name ("blk.3.attn_q.bias"). */
bool belt_model_declares(const struct belt_model *m, const char *name);
const struct belt_gguf_tensor *belt_model_tensor(const struct belt_model *m,
						 const char *name);

/* The buffer and offset in it that hold tensor t's data. */
struct belt_buffer *belt_model_weight(const struct belt_model *m,
				      const struct belt_gguf_tensor *t,
				      uint64_t *offset);
/* Whether b is one of the model's weight buffers. */
bool belt_model_is_weights(const struct belt_model *m, const struct belt_buffer *b);

/* Copy name into out with every "{l}" replaced by layer. */
void belt_subst_layer(const char *name, int layer, char *out, size_t outsz);

#endif
