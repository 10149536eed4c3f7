/* Internal view of a session: its buffers, dispatch table and host-side
 * arrays, all allocated at creation. */
#ifndef BELT_SESSION_SESSION_H
#define BELT_SESSION_SESSION_H

#include "belt/draft.h"
#include "belt/grammar.h"
#include "belt/sampler.h"
#include "dispatch/dispatch.h"
#include "model/model.h"

struct belt_session {
	struct belt_model *m;
	uint32_t n_ctx, chunk;
	uint32_t n_batch, n_ubatch; /* prompt tokens per batch; rows of the batched table */
	int type_k, type_v;	    /* the caches' element types */
	struct belt_vars vars; /* the model's, plus n_ctx */
	struct dispatch_buffer *bufs; /* activations hold n_ubatch rows */
	unsigned n_bufs;
	struct belt_buffer *token_ids;
	struct belt_buffer *row_ids; /* the batched table's row outputs */
	struct dispatch_buffer *logits;
	struct belt_table table; /* one token: the decode chain */
	char (*labels)[48];
	struct belt_table batch; /* n_ubatch rows; n_cmds 0 when there is none */
	char (*batch_labels)[48];
	int32_t *batch_ids; /* host copy of row_ids, n_ubatch */
	int32_t *ids;	/* host copy of token_ids, n_ctx + 1 */
	/* Cache slots 0 .. n_kv - 1 hold the K/V of evaluating ids[0 ..
	 * n_kv) in order (token_ids holds those ids too): the prefix a new
	 * prompt may reuse. Slots past it may hold anything (rejected drafts,
	 * an earlier longer text). */
	uint32_t n_kv;
	/* Sliding-window layers' caches as rings (ring, not swa_full): a run
	 * may start at pos > 0 only where pos + kv_rewind >= kv_top, the
	 * furthest n_kv since the last run from 0 (kv_rewind UINT32_MAX: no
	 * layer is a ring; generate.c) */
	bool ring;
	uint32_t kv_rewind, kv_top;
	/* the rings' room past the window: what one run writes ahead (a
	 * group's sessions and own: the group's, belt_group_ahead); the
	 * positions of a sequence (the group's own: n_ctx / its sequences) */
	uint32_t ahead, seq_ctx;
	char *text;	/* one token's decoded text */
	size_t text_cap;
	struct belt_stats stats;
	/* sampled decode on the host (generate.c), made on first use */
	float *logits_host;	/* n_vocab */
	void *sample_work;	/* the sampler's work area */
	size_t sample_work_size;
	uint32_t *grammar_mask; /* (n_vocab + 31) / 32 words, with a grammar */
	/* sampled chain decode (chain.c): the table with the sampler's
	 * commands, for the settings chain_params */
	struct belt_table chain;
	struct belt_buffer *chain_scratch;
	struct belt_sampling chain_params;
	bool chain_ready;
	bool chain_masked; /* with logit_mask first, reading mask_buf */
	struct belt_buffer *mask_buf; /* the grammar's mask, host-written */
	/* speculative decode (speculate.c), made on first use */
	struct belt_draft_node *draft_nodes; /* n_ubatch */
	int32_t *draft_rows, *draft_out;     /* n_ubatch */
	int32_t *draft_parent, *draft_path;  /* n_ubatch: a tree's rows */
	uint32_t *draft_from, *draft_to;     /* n_ubatch: cache entries to move */
	struct belt_copy *draft_copies;	     /* their regions (kv_move.c) */
	float *draft_logits; /* rows x n_vocab, sampled verification */
	uint32_t draft_logit_rows;
	/* the drafter's "hidden" tap (tap.c), made on first use for tap_for */
	struct belt_table tap;
	struct belt_buffer **tap_bufs; /* tapped row, scratch, result, tensors */
	uint32_t n_tap_bufs;
	char (*tap_labels)[48];
	float *tap_out; /* host copy of the result */
	uint64_t tap_result_floats;
	const struct belt_drafter *tap_for;
	bool tap_none; /* tap_for has no tap here */
	/* row 0 of the final norm's output in the one-row table [0] and the
	 * batched one [1] (size 0: none), a row's bytes apart */
	struct belt_copy tap_src[2];
	/* a group's session (group.c): its KV cache is sequence seq of the
	 * group's; its greedy decode steps may run in the group's passes */
	struct belt_group *group;
	uint32_t seq;
	bool seqs;	     /* the group's own: its batched table is of sequences */
	int32_t group_out;   /* the id the last group pass picked for it */
	uint32_t group_row;  /* its row in that pass */
	bool holds_turn;     /* it has the group's turn (generate, but for
			      * greedy steps and callbacks) */
	uint32_t group_from; /* first position the group's passes decoded since
			      * token_ids last had them (UINT32_MAX: none) */
	uint32_t group_to;   /* the passes run for its last post decoded
			      * s->ids[pos + 1] for each pos from that post's
			      * up to below this (0: none) */
};

/* belt_session_create's work: with group, a session whose KV cache is
 * sequence seq of the group's; with seqs_rows, the group's own session
 * of seq sequences (p->n_ctx: all their positions, a multiple of seq)
 * with a batched table of sequences of seqs_rows rows. */
int belt_session_make(struct belt_model *m, const struct belt_session_params *p,
		      struct belt_group *group, uint32_t seq, uint32_t seqs_rows,
		      struct belt_session **out, char *err, size_t errsz);

/* group.c: a group's state, and what its sessions' decoding calls. */
struct belt_group;
/* The KV cache buffer of the group's that sb (a member's, named as the
 * architecture names it, its layers laid out) lies in: each layer of sb
 * gets its buffer and offset, part seq of the group's layer; -1 with a
 * message when the layouts do not match. */
int belt_group_kv(struct belt_group *g, uint32_t seq, struct dispatch_buffer *sb, char *err,
		  size_t errsz);
/* A scratch buffer (named as the architecture names it, of bytes) for a
 * session of g: the group's sessions share them, as they use the backend
 * one at a time and nothing in scratch outlives a run and its reads; made
 * on first use, freed with the group. */
int belt_group_scratch(struct belt_group *g, const char *name, enum belt_buffer_usage usage,
		       uint64_t bytes, struct belt_buffer **out, char *err, size_t errsz);
/* What one run of a session of g may write past the last position it
 * keeps: the room the group's rings were laid out with. */
uint32_t belt_group_ahead(const struct belt_group *g);
/* Whether a session of g has made the shared scratch. */
bool belt_group_scratch_made(const struct belt_group *g);
/* The group's turn, held while a session of g uses the backend. */
void belt_group_lock(struct belt_group *g);
void belt_group_unlock(struct belt_group *g);
/* Decode as the group's: enter before a run of greedy steps, leave after
 * (token_ids then gets what the group's passes decoded). */
void belt_group_enter(struct belt_session *s);
int belt_group_leave(struct belt_session *s, uint32_t pos, char *err, size_t errsz);
/* token_ids[.. pos] as s->ids has them, after the group's passes. */
int belt_group_sync(struct belt_session *s, uint32_t pos, char *err, size_t errsz);
/* s is freed: the group no longer frees it. */
void belt_group_forget(struct belt_group *g, struct belt_session *s);
/* One step of s at pos, between enter and leave (without the turn): 1
 * with s->ids[pos + 1] set when it ran in a pass of the group's (with the
 * other sessions decoding), or in the steps ahead of its last: the argmax
 * of its row, or, with so, drawn by so with sp from the row's logits
 * (belt_session_host_setup made its work area); 0 when s decodes alone
 * (its own chain, with the turn). left (>= 1): the steps from pos s may
 * take (its context, n_predict, chunk); stop_eog: it stops at an
 * end-of-generation token. */
int belt_group_step(struct belt_session *s, uint32_t pos, uint32_t left, bool stop_eog,
		    const struct belt_sampler_ops *so, const struct belt_sampling *sp, char *err,
		    size_t errsz);

/* A drafter: its plugin and the context create() made. */
struct belt_drafter {
	const struct belt_draft_ops *ops;
	void *ctx;
	/* what drafting was measured to cost (speculate.c), kept from one
	 * generation to the next */
	struct belt_pace {
		double draft, plain; /* seconds per token; 0 until measured */
		uint32_t gap;	     /* plain tokens before the next try */
	} pace;
};

/* tap.c: the drafter's commands at the "hidden" tap. */
/* Make the tap table of d's commands for s (once for d; none where d has
 * no tap, s is a group's or the head has no final norm); -1 with err. */
int belt_session_tap_setup(struct belt_session *s, struct belt_drafter *d, char *err,
			   size_t errsz);
/* Run the tap on row `row` (below the table's rows) of the last pass of
 * the batched table (batch) or of the one-row table's last position: its
 * result (tap_out), or NULL without a tap or on an error (*rc -1, with
 * err). */
const float *belt_session_tap_run(struct belt_session *s, bool batch, uint32_t row,
				  char *err, size_t errsz, int *rc);
/* Where that row's hidden state lies (from's src, src_off, size): false
 * where the table's head does not start with the final norm. */
bool belt_session_tap_source(const struct belt_session *s, bool batch, uint32_t row,
			     struct belt_copy *from);
void belt_session_tap_release(struct belt_session *s);

/* A compiled grammar: its plugin and the state compile() made. */
struct belt_grammar {
	const struct belt_grammar_ops *ops;
	void *state;
};

/* Given mask ((n + 31) / 32 words, as the grammar's allowed() wrote it),
 * the logits of the tokens it does not allow set to -INFINITY (logits
 * NULL: none); returns how many it allows, *only the last of them. */
uint32_t belt_session_grammar_mask(const uint32_t *mask, float *logits, int32_t n,
				   int32_t *only);
/* The one token mask allows (*id), or -1 when it allows none or more
 * than one. */
int32_t belt_session_grammar_forced(const uint32_t *mask, int32_t n);
/* Whether mask allows no token at all. */
bool belt_session_grammar_none(const uint32_t *mask, int32_t n);
/* Whether mask allows end-of-generation tokens and nothing else. */
bool belt_session_grammar_only_eog(const uint32_t *mask, const struct belt_tokenizer *tok,
				   int32_t n);

/* generate.c: write ids into token_ids at pos and run them (all but the
 * last through the batched table, the last through t, whose head picks
 * the next token); and what the cache holds from pos on is no longer
 * known. */
int belt_session_prefill(struct belt_session *s, struct belt_table *t, const int32_t *ids,
			 size_t n, uint32_t pos, char *err, size_t errsz);
void belt_session_kv_from(struct belt_session *s, uint32_t pos);
/* Whether a run may start at pos: its sliding-window layers' rings still
 * hold the window before it (always, without rings). */
bool belt_session_resumable(const struct belt_session *s, uint32_t pos);
/* Positions before n ran (a decode loop's, before it sets n_kv): the
 * rings' oldest slots were written over up to there. */
void belt_session_kv_written(struct belt_session *s, uint32_t n);

/* grammar.c, for belt_generate with a grammar g: its mask into
 * s->grammar_mask; that mask into the buffer the chain's logit_mask
 * reads; the token after position pos, picked on the host or read from
 * the device's pick and accepted (1: the grammar allows none); the tokens
 * it forces after pos, taken and run as one batch (0: none, 1: some, *pos
 * at the last taken, *go as the emit left it). */
void belt_session_grammar_allowed(struct belt_session *s, struct belt_grammar *g);
int belt_session_upload_mask(struct belt_session *s, char *err, size_t errsz);
int belt_session_pick(struct belt_session *s, const struct belt_sampler_ops *so,
		      const struct belt_sampling *sp, struct belt_grammar *g, bool device_pick,
		      uint32_t pos, char *err, size_t errsz);
int belt_session_forced(struct belt_session *s, struct belt_grammar *g,
			const struct belt_generate_params *gp, struct belt_table *t,
			bool device_pick, struct belt_tok_stream *ts, belt_token_fn fn, void *ud,
			uint32_t *pos, bool *go, char *err, size_t errsz);

/* gated.c: from position pos (s->ids[pos] taken, its mask in
 * s->grammar_mask allowing more than one token), up to a chunk of
 * positions through the masked chain table t, the device picking, the
 * host taking each pick and writing the next mask while the device runs
 * the next position's layers; *pos ends at the last token taken (its mask
 * computed, not yet checked), *go as the emit left it. */
int belt_session_gated(struct belt_session *s, struct belt_grammar *g,
		       const struct belt_generate_params *gp, struct belt_table *t,
		       struct belt_tok_stream *ts, belt_token_fn fn, void *ud, uint32_t *pos,
		       bool *go, char *err, size_t errsz);

/* shift.c: the context full at *pos, shifted as gp says, and the next
 * token picked (as belt_session_pick returns; *pos at the pending token
 * + 1). */
int belt_session_shift(struct belt_session *s, const struct belt_generate_params *gp,
		       struct belt_table *t, bool host, const struct belt_sampler_ops *so,
		       struct belt_grammar *g, bool device_pick, uint32_t *pos, char *err,
		       size_t errsz);

/* Hand the new token id to the caller as belt_generate does (its text
 * through ts, the stop rules of gp); false, with stats.stop set, when
 * generation must stop. */
bool belt_session_emit(struct belt_session *s, struct belt_tok_stream *ts, int32_t id,
		       const struct belt_generate_params *gp, belt_token_fn fn, void *ud);
/* Pick the token after position pos on the host from the logits buffer,
 * drawn by so with sp (NULL: the argmax), masked by g (NULL: none; its
 * mask in s->grammar_mask), into s->ids[pos + 1] and token_ids; 1 when
 * the grammar allows no token. Needs belt_session_host_setup. */
int belt_session_host_next(struct belt_session *s, const struct belt_sampler_ops *so,
			   const struct belt_sampling *sp, struct belt_grammar *g, uint32_t pos,
			   char *err, size_t errsz);
/* The host arrays that picking on the host with so and g needs. */
int belt_session_host_setup(struct belt_session *s, const struct belt_sampler_ops *so,
			    const struct belt_grammar *g, char *err, size_t errsz);

/* Decode from position pos (s->ids[pos], the last token, not yet run)
 * with gp->drafter: each proposal checked in one batched pass, greedy or
 * drawn on the host by so (NULL: greedy); idle positions run through t
 * as chains, drawn by so_idle if set (t's own commands otherwise).
 * Stops as belt_generate does; *pos is where it stopped, *go whether the
 * context filled up without another reason. */
int belt_session_speculate(struct belt_session *s, const struct belt_generate_params *gp,
			   const struct belt_sampler_ops *so, const struct belt_sampler_ops *so_idle,
			   struct belt_table *t, struct belt_tok_stream *ts, uint32_t *pos,
			   belt_token_fn fn, void *ud, bool *go, char *err, size_t errsz);
/* belt_session_verify (of a chain where parent is NULL), leaving s->n_kv
 * as it is: decode sets it once it stops (speculate.c's rejected rows
 * are not what it holds). */
int belt_session_verify_rows(struct belt_session *s, const int32_t *tokens,
			     const int32_t *parent, size_t n, uint32_t pos, int32_t *out,
			     char *err, size_t errsz);
/* Whether belt_session_kv_move can move this session's cache entries:
 * the backend copies buffers and the session's caches are its own. */
bool belt_session_kv_movable(const struct belt_session *s);
/* Move the cache entries of positions from[i] to to[i], i = 0 .. n - 1
 * in order, in every layer of every cache (regions: room for n times
 * the layers of the caches; belt_session_kv_regions). */
int belt_session_kv_move(struct belt_session *s, const uint32_t *from, const uint32_t *to,
			 uint32_t n, struct belt_copy *regions, char *err, size_t errsz);
/* Regions belt_session_kv_move needs for one position. */
uint32_t belt_session_kv_regions(const struct belt_session *s);
/* Release speculate's arrays. */
void belt_session_speculate_release(struct belt_session *s);

/* belt_generate with the sampler for non-greedy settings already found
 * (the layer above looks it up in the registry). */
int belt_session_generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
			  const struct belt_generate_params *gp,
			  const struct belt_sampler_ops *sampler, belt_token_fn fn, void *ud,
			  char *err, size_t errsz);

/* The table for sampled chain decode with sp: s->table with the sampler's
 * commands before the argmax, prepared on first use and kept while sp is
 * the same. *out is NULL (and 0 returned) when the backend lacks the
 * sampler's ops or the table has no single argmax: draw on the host.
 * With masked, a logit_mask command reading s->mask_buf comes first (so
 * may then be NULL, or sp greedy: the mask and the argmax alone). */
int belt_session_chain(struct belt_session *s, const struct belt_sampler_ops *so,
		       const struct belt_sampling *sp, bool masked, struct belt_table **out,
		       char *err, size_t errsz);
/* Release the chain table and its scratch buffer, if any. */
void belt_session_chain_release(struct belt_session *s);

#endif
