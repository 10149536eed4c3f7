/* Synthetic GGUF files of any shape and weight type, with random weights,
 * for tests and benchmarks of shapes no shipped model has: llama, qwen2,
 * qwen3, phi3, gemma2, gemma3 and qwen3moe tensor layouts (any other
 * architecture name gets llama's tensors). The weights are produced while writing, so files larger than
 * memory can be made. */
#ifndef BELT_TESTS_SYNTH_H
#define BELT_TESTS_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/gguf.h"
#include "belt/types.h"

struct synth_shape {
	uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
	enum belt_type wtype;	  /* 2-D weights; norms are always F32 */
	enum belt_type embd_type; /* token_embd; BELT_TYPE_ANY: same as wtype */
	bool tied;		  /* no output.weight */
	uint64_t seed;
	const char *arch;	  /* general.architecture; NULL: "llama" */
	/* qwen3moe: experts per layer, used per token, each one's FFN width */
	uint32_t n_expert, n_expert_used, n_ff_exp;
	/* {arch}.rope.scaling.type and .factor; NULL: neither written */
	const char *rope_scaling;
	float rope_factor;
	/* NULL, or a GGUF whose tokenizer.* keys are copied (n_vocab must be
	 * its token count): a real vocabulary on a synthetic model */
	const struct belt_gguf *vocab_from;
	/* Test hooks: skip one tensor, or give one a wrong first dimension. */
	const char *omit_tensor;
	const char *bad_shape_tensor;
};

/* The default small shape (64 wide, 2 layers, vocab 300, F32; 8 experts
 * of width 32, 2 used, where the architecture has experts). */
void synth_default(struct synth_shape *s);
/* Whether the tensor layout of arch is one synth writes as such (not
 * llama's by default). */
int synth_arch_known(const char *arch);
/* Write the model to path; -1 with a message on failure. */
int synth_write(const struct synth_shape *s, const char *path, char *err, size_t errsz);

#endif
