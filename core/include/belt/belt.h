/* belt/belt.h: load a GGUF model, create a session, generate text. */
#ifndef BELT_BELT_H
#define BELT_BELT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/tokenizer.h"

struct belt_model;
struct belt_session;

struct belt_model_params {
	const char *path;    /* the GGUF file */
	const char *backend; /* backend name; NULL means "cpu" */
	int n_threads;	     /* <= 0: one per core */
	int device;	     /* < 0: backend's choice */
	const char *arch_dir; /* where <arch>.yaml lives; NULL: search
			       * $BELT_ARCH_PATH, installed, source tree */
	const char *kernels; /* "op=variant,op=variant": kernel choices that
			      * override the YAML's; NULL for none */
	bool profile; /* time each kernel (BELT_BACKEND_PROFILE); backends
		       * that can report per-kernel times on stderr when a
		       * session is freed; off by default */
};

/* Call fn for each architecture on the search path ($BELT_ARCH_PATH,
 * installed, source tree), then each architecture plugin arch-NAME on the
 * plugin path whose name has no file there: name ("qwen2"), the file that
 * loads for it (the first of a name, or the module), ud. Writes the arch
 * search path to path (pathsz bytes). Returns the number found. */
int belt_arch_scan(void (*fn)(const char *name, const char *file, void *ud), void *ud,
		   char *path, size_t pathsz);

/* Fill p with the defaults (backend "cpu", all cores, its default
 * device, no profile). */
void belt_model_params_default(struct belt_model_params *p);
/* Open, validate and load a model onto its backend. While the weights are
 * copied to the device, progress goes to stderr if it is a terminal. */
int belt_model_load(const struct belt_model_params *p,
		    struct belt_model **out, char *err, size_t errsz);
/* Free a model (after its sessions); NULL is allowed. */
void belt_model_free(struct belt_model *m);
/* The model's GGUF, tokenizer, architecture name and training context. */
const struct belt_gguf *belt_model_gguf(const struct belt_model *m);
const struct belt_tokenizer *belt_model_tokenizer(const struct belt_model *m);
const char *belt_model_arch(const struct belt_model *m);
uint32_t belt_model_n_ctx_train(const struct belt_model *m);
int32_t belt_model_n_vocab(const struct belt_model *m);
/* Value of a resolved hyperparameter or derived quantity by its YAML name
 * ("n_embd", "head_dim"); false if there is none. */
bool belt_model_hparam(const struct belt_model *m, const char *name,
		       double *out);

struct belt_session_params {
	uint32_t n_ctx; /* 0: the model's training context */
	uint32_t chunk; /* tokens per backend submission in decode; 0: 16 */
	/* prompt tokens per batch (llama.cpp's -b; 0: 2048), and per pass
	 * of the batched table (-ub; 0: 512; 1: token by token) */
	uint32_t n_batch, n_ubatch;
	/* element types of the K and V caches (belt_type: F32, F16 or Q8_0,
	 * llama.cpp's -ctk/-ctv); the defaults are F16 */
	int type_k, type_v;
	/* keep every position of sliding-window layers' caches (llama.cpp's
	 * --swa-full); false: a ring of the window and a pass's rows, and
	 * no evaluation may then resume further back than that (doc/ops.md) */
	bool swa_full;
};
/* Fill p with the defaults. */
void belt_session_params_default(struct belt_session_params *p);
/* Allocate the KV cache and scratch and build the dispatch table. */
int belt_session_create(struct belt_model *m,
			const struct belt_session_params *p,
			struct belt_session **out, char *err, size_t errsz);
/* Free a session; NULL is allowed. */
void belt_session_free(struct belt_session *s);
/* Bytes of the session's KV cache, every layer's (a group's session: its
 * share of the group's). */
uint64_t belt_session_kv_bytes(const struct belt_session *s);
/* Positions the session's KV cache holds. */
uint32_t belt_session_n_ctx(const struct belt_session *s);
/* Forget what the KV cache holds: the next belt_generate evaluates its
 * whole prompt (as in a new session; the memory stays allocated). */
void belt_session_reset(struct belt_session *s);

/* A group of sessions for continuous batching: their KV caches are the
 * sequences of one allocation, and the greedy decode steps of those whose
 * belt_generate calls overlap (one thread each) run together, a token of
 * each per pass (backends of ABI 4; doc/serve.md). Only belt_generate
 * may overlap with calls on the group's other sessions. */
struct belt_group;
/* A group of n_seq sessions' caches, each of p->n_ctx positions (0: the
 * model's training context) of p's cache types. */
int belt_group_new(struct belt_model *m, const struct belt_session_params *p, uint32_t n_seq,
		   struct belt_group **out, char *err, size_t errsz);
/* Session seq (0 .. n_seq - 1) of the group, made as belt_session_create
 * makes one with p (NULL: defaults; its n_ctx, cache types and swa_full
 * are the group's, its n_ubatch and chunk at most the group's, for which
 * the sliding-window layers' rings were laid out); free it with
 * belt_session_free, or with the group. */
int belt_group_session(struct belt_group *g, uint32_t seq, const struct belt_session_params *p,
		       struct belt_session **out, char *err, size_t errsz);
/* The group's shared passes so far: how many, their rows (tokens) in all,
 * and the seconds they took. */
void belt_group_stats(const struct belt_group *g, uint64_t *passes, uint64_t *rows,
		      double *seconds);
/* How many of the group's sessions are decoding now (past their prompt,
 * before their last token), waiting for a pass or not. */
uint32_t belt_group_decoding(const struct belt_group *g);
/* Free the group and those of its sessions still alive; NULL is allowed. */
void belt_group_free(struct belt_group *g);

/* Called for each generated token with its text (possibly empty while a
 * UTF-8 character is incomplete); return false to stop. */
typedef bool (*belt_token_fn)(void *ud, int32_t token, const char *text,
			      size_t len);

/* A grammar compiled against a vocabulary (belt/grammar.h): it masks the
 * logits before each token is picked. */
struct belt_grammar;
/* Compile text[0..len) of kind ("gbnf") with the grammar plugin name (the
 * module "grammar-<name>"; NULL: the plugin named as the kind) against
 * tok, which must outlive it. err gets the plugin's message, e.g.
 * "LINE:COL: what was expected" for a GBNF syntax error. */
int belt_grammar_new(const struct belt_tokenizer *tok, const char *name,
		     const char *kind, const char *text, size_t len,
		     struct belt_grammar **out, char *err, size_t errsz);
/* Free; NULL is allowed. */
void belt_grammar_free(struct belt_grammar *g);

/* A drafter (belt/draft.h) for speculative decoding: its proposals are
 * verified by the model in one batched pass each, so the output is what
 * decoding without it gives (doc/drafting.md). */
struct belt_drafter;
/* The drafter of plugin name (the module "draft-<name>") for model m,
 * with its options ("min=2,max=4" for "ngram"; NULL: its defaults). */
int belt_drafter_new(const struct belt_model *m, const char *name, const char *options,
		     struct belt_drafter **out, char *err, size_t errsz);
/* Free; NULL is allowed. */
void belt_drafter_free(struct belt_drafter *d);

struct belt_sampling;
struct belt_generate_params {
	uint32_t n_predict; /* new tokens at most; 0: until context is full */
	bool stop_at_eog;   /* stop at an end-of-generation token (default) */
	/* NULL or greedy settings: the greedy chain; otherwise each token is
	 * drawn by the "gumbel" sampler plugin (belt/sampler.h) */
	const struct belt_sampling *sampling;
	/* NULL, or a grammar for the model's vocabulary, reset at the start:
	 * only the tokens it allows are picked (greedy or sampled), so each
	 * position runs on its own with its logits read back to the host;
	 * generation stops at an end-of-generation token once the grammar
	 * is complete, or when it allows no token at all */
	struct belt_grammar *grammar;
	/* NULL, or a drafter whose proposals each position's pick checks in
	 * batched verification passes (backends with batched tables, no
	 * grammar); the ids are those of decoding without it */
	struct belt_drafter *drafter;
	uint32_t draft_max; /* drafted tokens per pass at most; 0: 8 */
	/* check every proposal, also where drafting is measured to cost more
	 * time per token than plain decoding (which otherwise pauses it) */
	bool draft_unpaced;
	/* A full context stops generation (false, the default), or shifts it
	 * as llama.cpp does: the first n_keep tokens (at most half the
	 * context) stay, half of those after them are dropped, the rest run
	 * again at their new positions, and generation goes on. */
	bool context_shift;
	uint32_t n_keep;
};
void belt_generate_params_default(struct belt_generate_params *p);
/* The n_keep of llama.cpp's --keep N for prompt[0..n): N tokens after a
 * leading BOS of tok, which stays too; N < 0, or N past the prompt: all. */
uint32_t belt_keep_tokens(const struct belt_tokenizer *tok, const int32_t *prompt, size_t n,
			  long keep);

/* Feed prompt (ids, BOS included if wanted) from position 0 and generate
 * (greedily, or sampled per gp->sampling), calling fn per new token. The
 * prompt must be non-empty and fit the context. The session remembers the
 * tokens its KV cache holds (prompts and generated tokens, from any call
 * below too): the prompt is evaluated from its first token that differs
 * (at least its last token runs again), with the ids a new session gives
 * (doc/chat.md). A full context stops generation (BELT_STOP_CONTEXT_FULL):
 * resend a shorter prompt, or belt_session_reset; or, with
 * gp->context_shift, it is shifted (stats.n_shifts). */
int belt_generate(struct belt_session *s, const int32_t *prompt,
		  size_t n_prompt, const struct belt_generate_params *gp,
		  belt_token_fn fn, void *ud, char *err, size_t errsz);

/* Run tokens at positions pos .. pos+n-1 (after whatever was evaluated
 * before pos) and copy the last token's logits into logits (n_vocab).
 * These calls run every token they are given; what the cache held from
 * pos on is replaced (eval_all and verify: the same). */
int belt_session_eval(struct belt_session *s, const int32_t *tokens,
		      size_t n, uint32_t pos, float *logits, char *err,
		      size_t errsz);

/* Run tokens at positions pos .. pos+n-1 and copy every position's logits
 * into logits (n x n_vocab floats; NULL for none): batched passes of
 * n_ubatch rows where the backend has them. */
int belt_session_eval_all(struct belt_session *s, const int32_t *tokens,
			  size_t n, uint32_t pos, float *logits, char *err,
			  size_t errsz);

/* As belt_session_eval_all, copying instead every position's hidden
 * state after the final norm (what the output projection reads; the
 * "hidden" tap, n x n_embd floats) into hidden; -1 with a message where
 * the architecture's head has none. */
int belt_session_eval_hidden(struct belt_session *s, const int32_t *tokens,
			     size_t n, uint32_t pos, float *hidden, char *err,
			     size_t errsz);

/* One batched pass over n <= n_ubatch drafted tokens at pos (a chain, or
 * the tree parent gives: parent[r] < r, -1 for the token before pos);
 * out[r] gets the argmax after row r, as one-token decoding of r's path
 * would give. token_ids keeps the drafts; cache slot pos + r holds row r. */
int belt_session_verify(struct belt_session *s, const int32_t *tokens,
			const int32_t *parent, size_t n, uint32_t pos,
			int32_t *out, char *err, size_t errsz);

/* Copy token_ids[pos .. pos + n) (the prompt, drafts and generated ids
 * the session's table reads) into out. */
int belt_session_tokens(struct belt_session *s, uint32_t pos, size_t n,
			int32_t *out, char *err, size_t errsz);

/* Why belt_generate stopped. */
enum belt_stop {
	BELT_STOP_NONE,		/* it has not run */
	BELT_STOP_EOG,		/* an end-of-generation token (stop_at_eog) */
	BELT_STOP_N_PREDICT,	/* n_predict tokens were generated */
	BELT_STOP_CONTEXT_FULL, /* every position of the context is used */
	BELT_STOP_CALLBACK,	/* the token callback returned false */
	BELT_STOP_ERROR,	/* it returned -1 */
	BELT_STOP_GRAMMAR	/* the grammar allows no token (it has ended) */
};

struct belt_stats {
	uint32_t n_prompt;    /* prompt tokens (n_prompt_reused of them not run) */
	uint32_t n_generated; /* tokens generated (counting one the callback
			       * refused, not an end-of-generation token) */
	double prefill_s;     /* seconds spent on the prompt */
	double decode_s;      /* seconds spent generating */
	enum belt_stop stop;  /* why it stopped */
	/* with a drafter: verification passes, tokens proposed, and of
	 * those the tokens accepted (each pass adds one more of its own) */
	uint32_t n_verify, n_drafted, n_accepted;
	/* the prompt's first tokens whose K/V the cache held already */
	uint32_t n_prompt_reused;
	/* context shifts (belt_generate_params.context_shift) */
	uint32_t n_shifts;
	/* tokens a grammar forced (the only one it allowed), which ran in
	 * batches without logits of their own */
	uint32_t n_forced;
	/* a group's session: tokens decoded in passes with other sessions; of
	 * those, in the passes run ahead of its posts (greedy, chunk > 1) */
	uint32_t n_grouped, n_grouped_ahead;
	/* with a drafter: accepted tokens of a tree's branch other than its
	 * first chain, whose cache entries were moved to their positions */
	uint32_t n_moved;
};
/* Timing and stop reason of the last belt_generate. */
const struct belt_stats *belt_session_stats(const struct belt_session *s);

/* What one decode step costs: commands (dispatches) and bytes of weights
 * the dispatch table reads per token (of an expert stack, the experts a
 * token uses; belt_cmd_weight_bytes). */
void belt_session_cost(const struct belt_session *s, uint32_t *cmds_per_token,
		       uint64_t *weight_bytes_per_token);

#endif
