/* A binary min-heap of candidate merges, shared by the SentencePiece and
 * BPE encoders: lowest key first, on a tie the leftmost pair. */
#ifndef BELT_TOKENIZER_MERGEHEAP_H
#define BELT_TOKENIZER_MERGEHEAP_H

#include <stddef.h>
#include <stdint.h>

struct tok_cand {
	float key;	    /* SPM: -score; BPE: merge rank (exact below 2^24) */
	int32_t left, right; /* symbols; right unused by BPE */
	uint32_t size;	    /* bytes when queued; a mismatch later means stale */
};

struct tok_mergeheap {
	struct tok_cand *v;
	size_t n, cap;
};

/* Add p; -1 if out of memory. */
int tok_mergeheap_push(struct tok_mergeheap *h, struct tok_cand p);
/* Remove and return the first pair; h must not be empty. */
struct tok_cand tok_mergeheap_pop(struct tok_mergeheap *h);

#endif
