/* plugins/grammar-gbnf: the module's internal interfaces, in the order its
 * pieces run on a grammar:
 *
 *   parse.c    GBNF text -> rules of elements
 *   build.c    rules and their elements; repetition as rules
 *   classes.c  character classes: sorted code-point ranges, first bytes
 *   analyse.c  undefined rules, root, nullable, left recursion, emptiness
 *   trie.c     the vocabulary's token bytes as a trie, token ids at nodes
 *   subtrees.c the subtrees of the trie a class reads whole
 *   loops.c    the classes that may loop, tabled at compile
 *   stacks.c   parse stacks, hash-consed; what follows a stack's character
 *   step.c     a set of stacks reads a byte
 *   walk.c     the mask: a walk of the trie carrying a set of stacks
 *   cache.c    the masks of the last sets of stacks
 *   match.c    a grammar's state: accept a token, reset
 *   plugin.c   the belt_grammar_ops table over all of it
 *
 * Names are gb_* and stay inside the module (it exports one symbol). */
#ifndef GBNF_H
#define GBNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "belt/tokenizer.h"

/* Room for need elements of size bytes in *v (capacity *cap), the
 * capacity doubled from 16; false when out of memory (*v unchanged);
 * build.c. */
bool gb_grow(void **v, uint32_t *cap, uint32_t need, size_t size);

/* ---- rules (parse.c, analyse.c) ---- */

/* An element of an alternative, 32 bits: the kind in the top two bits. */
#define GB_END 0u  /* the alternative ends */
#define GB_CHAR 1u /* one character of a class; value: the class id */
#define GB_REF 2u  /* a rule; value: the rule id */
#define GB_ELEM(kind, v) ((uint32_t)(kind) << 30 | (uint32_t)(v))
#define GB_KIND(e) ((uint32_t)(e) >> 30)
#define GB_VALUE(e) ((uint32_t)(e) & 0x3fffffffu)

/* What a hostile grammar may cost: elements once repetitions are
 * expanded ("a"{1000000} is refused, not built), nesting of groups (the
 * parser recurses on them), and a number in {m,n}. */
#define GB_MAX_ELEMS (1u << 20)
/* Distinct stacks at once: ("a"?){0,50000} reads "aaa" in 50,000 ways,
 * each as costly to follow as a grammar of its own (the grammars people
 * write keep a few dozen). */
#define GB_MAX_STACKS 1024u
#define GB_MAX_DEPTH 200
#define GB_MAX_COUNT 100000u
#define GB_NONE UINT32_MAX

#define GB_MAX_CP 0x10ffffu

struct gb_range {
	uint32_t lo, hi; /* code points, inclusive */
};

/* A set of code points. first: bit b set when a character of the class
 * can begin with byte b (for b < 0x80: is b), so that the first byte of a
 * character is one bit test. */
struct gb_class {
	uint32_t off, n; /* ranges[off .. off + n): sorted, disjoint, apart */
	uint32_t first[8];
};

struct gb_rule {
	uint32_t alt, n_alts; /* alts[alt .. alt + n_alts): where each starts */
	uint32_t origin;      /* the named rule it was made for (itself if named) */
	uint32_t name, name_len; /* the name in the text (named rules) */
	uint32_t def;	      /* text offset of its definition; GB_NONE: none */
	uint32_t ref;	      /* text offset of its first reference */
};

struct gb_grammar {
	uint32_t *elems; /* alternatives, each ending with GB_END */
	uint32_t n_elems, cap_elems;
	uint32_t *alts; /* element index of each alternative's start */
	uint32_t n_alts, cap_alts;
	struct gb_rule *rules;
	uint32_t n_rules, cap_rules;
	struct gb_class *classes;
	uint32_t n_classes, cap_classes;
	struct gb_range *ranges;
	uint32_t n_ranges, cap_ranges;
	uint32_t *class_map; /* interning of classes: id + 1, 0 free */
	uint32_t class_map_mask;
	uint32_t pending; /* elements in gb_seq buffers, not yet in a rule */
	uint32_t root;	/* the rule 'root' */
	uint32_t start; /* element index of [REF root, END]: where sentences begin */
};

void gb_grammar_free(struct gb_grammar *g);

/* Building rules (build.c), for the parser: 0, or what went wrong. */
#define GB_NOMEM (-1)
#define GB_TOO_BIG (-2) /* past GB_MAX_ELEMS */
/* Elements of alternatives being read (or where each starts). */
struct gb_seq {
	uint32_t *v;
	uint32_t n, cap;
};
int gb_seq_push(struct gb_grammar *g, struct gb_seq *s, uint32_t e);
void gb_seq_free(struct gb_grammar *g, struct gb_seq *s);
/* A new rule: named (origin GB_NONE; ref, where it is first named) or
 * made for the named rule origin (ref: its definition). */
int gb_rule_new(struct gb_grammar *g, uint32_t origin, uint32_t name, uint32_t name_len,
		uint32_t ref, uint32_t *id);
/* Give rule id the alternatives e[0..n) (each ending with GB_END), the
 * k-th starting at e[start[k]]. */
int gb_rule_define(struct gb_grammar *g, uint32_t id, const uint32_t *e, uint32_t n,
		   const uint32_t *start, uint32_t n_alts);
/* Replace s->v[last ..] (the last element: one or, for a literal, more)
 * by its repetition min..max times (max GB_NONE: no bound), with rules
 * made for origin: x* is R ::= x R | "", x{m,n} m copies and a chain of
 * n - m optional ones, each a reference: linear in n, whatever x is. */
int gb_repeat(struct gb_grammar *g, struct gb_seq *s, uint32_t last, uint32_t min, uint32_t max,
	      uint32_t origin);

/* Parse text[0..len) into g (zeroed by the caller); -1 with "LINE:COL:
 * what was expected" in err. */
int gb_parse(const char *text, size_t len, struct gb_grammar *g, char *err,
	     size_t errsz);
/* Refuse what cannot run: an undefined rule, no root, left recursion, a
 * root that matches no string; then add the start sequence. */
int gb_analyse(struct gb_grammar *g, const char *text, size_t len, char *err,
	       size_t errsz);

/* "LINE:COL: " and the message, for the character at text offset at;
 * returns -1. */
int gb_fail(char *err, size_t errsz, const char *text, size_t len, size_t at,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Line and column (in characters, from 1) of text offset at. */
void gb_where(const char *text, size_t len, size_t at, unsigned long *line,
	      unsigned long *col);
/* The character at text offset at, for a message: "'x'", "end of line". */
const char *gb_describe(const char *text, size_t len, size_t at, char *buf,
			size_t bufsz);

/* ---- classes (classes.c) ---- */

/* Add the class of r[0..n) (any order, may overlap; complemented within
 * 0..U+10FFFF when negate) to g, or find the same one; its id in *id.
 * -1 when out of memory. r is sorted in place. */
int gb_class_add(struct gb_grammar *g, struct gb_range *r, uint32_t n,
		 bool negate, uint32_t *id);
/* Whether class c holds code point cp. */
bool gb_class_has(const struct gb_grammar *g, uint32_t c, uint32_t cp);
/* Whether class c holds any code point of lo..hi. */
bool gb_class_meets(const struct gb_grammar *g, uint32_t c, uint32_t lo,
		    uint32_t hi);

/* ---- UTF-8 over bytes (match.c) ---- */

/* A character being read byte by byte: need bytes still to come, value
 * the bits so far, lo..hi the code points it can still become, nlo..nhi
 * the bytes the next one may be (so that only valid UTF-8 is read: no
 * overlong forms, surrogates or values above U+10FFFF). need 0: between
 * characters. */
struct gb_utf8 {
	uint32_t value, lo, hi;
	uint8_t need, nlo, nhi;
};

/* Begin a character at byte b: need 0 and value b for ASCII, need > 0
 * for a lead byte; false for a byte no character begins with. */
static inline bool gb_utf8_first(unsigned char b, struct gb_utf8 *p)
{
	*p = (struct gb_utf8){.value = b, .lo = b, .hi = b, .nlo = 0x80, .nhi = 0xbf};
	if (b < 0x80)
		return true;
	if (b < 0xc2 || b > 0xf4)
		return false;
	if (b < 0xe0) {
		p->need = 1;
		p->value = b & 0x1fu;
		p->lo = p->value << 6;
		p->hi = p->lo | 0x3fu;
	} else if (b < 0xf0) {
		p->need = 2;
		p->value = b & 0x0fu;
		p->lo = b == 0xe0 ? 0x800u : p->value << 12;
		p->hi = b == 0xed ? 0xd7ffu : (p->value << 12) | 0xfffu;
		p->nlo = b == 0xe0 ? 0xa0 : 0x80; /* no overlong forms */
		p->nhi = b == 0xed ? 0x9f : 0xbf; /* no surrogates */
	} else {
		p->need = 3;
		p->value = b & 0x07u;
		p->lo = b == 0xf0 ? 0x10000u : p->value << 18;
		p->hi = b == 0xf4 ? GB_MAX_CP : (p->value << 18) | 0x3ffffu;
		p->nlo = b == 0xf0 ? 0x90 : 0x80;
		p->nhi = b == 0xf4 ? 0x8f : 0xbf; /* nothing above U+10FFFF */
	}
	return true;
}

/* Read continuation byte b into p (need > 0); false if b cannot be it. */
static inline bool gb_utf8_next(struct gb_utf8 *p, unsigned char b)
{
	if (b < p->nlo || b > p->nhi)
		return false;
	p->value = p->value << 6 | (b & 0x3fu);
	p->need--;
	unsigned shift = 6u * p->need;
	p->lo = p->value << shift;
	p->hi = p->lo | ((1u << shift) - 1);
	p->nlo = 0x80;
	p->nhi = 0xbf;
	return true;
}

/* ---- the vocabulary as a trie (trie.c) ---- */

/* Nodes in depth-first order: a node's children are node + 1 up to its
 * end, each child's siblings at the previous one's end. ids[ids ..
 * ids + n_ids) are the tokens whose bytes are the path to the node, and
 * ids[ids .. the ids of the node at end) all the tokens below it. */
struct gb_node {
	uint32_t end;
	uint32_t ids, n_ids;
	uint8_t byte;
};

struct gb_trie {
	struct gb_node *node; /* node[0]: the root, the empty prefix */
	uint32_t n_node;
	int32_t *ids;	    /* token ids in byte order */
	uint32_t n_entries; /* of ids */
	uint32_t max_len;   /* the longest token, in bytes */
	int32_t n_tok;	    /* the tokenizer's vocabulary */
	char *bytes;	    /* each token's bytes, for accept() */
	uint32_t *off;	    /* token id's bytes: bytes[off[id] .. off[id + 1]) */
	uint32_t *eog;	    /* bit per id: an end-of-generation token */
};

/* Every token with text, end-of-generation ones apart; copies what it
 * needs (tok may go after). -1 with err when out of memory. */
int gb_trie_build(struct gb_trie *t, const struct belt_tokenizer *tok,
		  char *err, size_t errsz);
void gb_trie_free(struct gb_trie *t);

/* What class c reads whole: bit x of nodes, every token below node x
 * (from a character boundary at x); of tokens, bit id: token id (from the
 * root); of covered, bit x: node x's tokens and all below it are in
 * tokens. */
struct gb_whole {
	uint32_t *nodes, *covered, *tokens;
};
/* Make w for class c; -1 when out of memory. */
int gb_subtrees_whole(const struct gb_trie *t, const struct gb_grammar *g, uint32_t c,
		      struct gb_whole *w);

/* ---- parse stacks (stacks.c) ---- */

/* A stack is its top frame; frames are hash-consed, so two stacks are
 * equal when their ids are. A top frame's pos is a GB_CHAR element (the
 * character it reads next); every frame under it holds where its rule
 * goes on once the rule above ends. Frame 0 is the empty stack: the
 * sentence may end there. */
struct gb_frame {
	uint32_t pos, parent;
};

struct gb_stacks {
	const struct gb_grammar *g;
	struct gb_frame *f;
	uint32_t n, cap;
	uint32_t *slot; /* hash of (pos, parent) -> frame id; 0 free */
	uint32_t slot_mask;
	/* what follows top frame i once its character is read:
	 * succ[succ_at[i] .. + succ_n[i]]; succ_at GB_NONE: not yet known */
	uint32_t *succ_at, *succ_n;
	uint32_t *succ;
	uint32_t n_succ, cap_succ;
	uint8_t *loops; /* per frame: 0 not known, 1 no, 2 among its successors */
	uint32_t *mark; /* per frame: stamp of the set it was last put in */
	uint32_t stamp;
	uint32_t gc_at; /* compact once n passes this */
	bool too_many; /* why the last call failed: GB_MAX_STACKS or the
			* expansion's bound, not memory */
	/* expansion scratch: a work list and the (pos, parent) seen */
	struct gb_frame *work;
	uint32_t cap_work;
	uint64_t *seen;
	uint32_t seen_mask, seen_n;
};

int gb_stacks_init(struct gb_stacks *s, const struct gb_grammar *g);
void gb_stacks_free(struct gb_stacks *s);
/* Append the stacks a sentence begins with to *out (n, capacity cap). */
int gb_stacks_start(struct gb_stacks *s, uint32_t **out, uint32_t *n,
		    uint32_t *cap);
/* The stacks that follow top frame f once its character is read: *list
 * (valid until the next call that may add frames) and *n. -1 when out
 * of memory, or (too_many set) when they are more than GB_MAX_STACKS or
 * the expansion passes its bound. */
int gb_stacks_succ(struct gb_stacks *s, uint32_t f, const uint32_t **list,
		   uint32_t *n);
/* Whether top frame f is among its own successors: it reads any number
 * of characters of its class. -1 as gb_stacks_succ. */
int gb_stacks_loops(struct gb_stacks *s, uint32_t f, bool *loops);
/* The class top frame f reads. */
static inline uint32_t gb_stacks_class(const struct gb_stacks *s, uint32_t f)
{
	return GB_VALUE(s->g->elems[s->f[f].pos]);
}
/* Drop every frame no stack of sets[0..n_sets) (lengths lens) uses and
 * renumber those sets; what follows what is forgotten. Nothing changes
 * when memory is short. */
void gb_stacks_compact(struct gb_stacks *s, uint32_t **sets,
		       const uint32_t *lens, int n_sets);
/* A new stamp for gb_stacks.mark. */
uint32_t gb_stacks_new_stamp(struct gb_stacks *s);

/* ---- matching (step.c, walk.c, cache.c, match.c) ---- */

/* A growable list of frame ids. */
struct gb_vec {
	uint32_t *v;
	uint32_t n, cap;
};

/* A level of the mask's walk: a trie node and its next child to try, its
 * stacks (walk.v[set .. set + n)) and part. */
struct gb_level {
	uint32_t node, child;
	uint32_t set, n;
	struct gb_utf8 part;
};

/* A mask computed before, by its stacks and part (key: the part, then
 * the sorted stack ids). */
#define GB_CACHED 16
struct gb_cached {
	uint32_t *key, *mask;
	uint32_t n_key, cap_key;
	uint64_t used; /* the matcher's clock when last used; 0: empty */
};

struct gb_matcher {
	struct gb_grammar g;
	struct gb_stacks st;
	struct gb_trie trie;
	uint32_t words; /* mask words: (n_tok + 31) / 32 */
	uint32_t *mask, *next_mask, *start_mask;
	struct gb_vec cur, start; /* the stacks now, and at the start */
	struct gb_utf8 part, start_part;
	bool ended;	/* an end-of-generation token was accepted */
	bool complete, start_complete;
	/* scratch: two sets for accept, the set stack and levels of the
	 * mask walk (max_len + 1 of them), the cache's key */
	struct gb_vec a, b, walk, key;
	struct gb_level *level;
	/* generation keeps coming back to the same stacks (inside a string,
	 * a number, a list), whose mask is then a copy */
	struct gb_cached cache[GB_CACHED];
	uint64_t clock;
	struct gb_whole *whole; /* per class, made at compile or when first
				 * needed */
};

int gb_vec_push(struct gb_vec *v, uint32_t x);

/* Read byte b with the stacks in->v[at .. at + n) that have read *p of a
 * character (step.c): append the stacks that remain to out (which may be
 * in) and the new part to *q. -1 when out of memory or (st.too_many)
 * past GB_MAX_STACKS. */
int gb_step(struct gb_matcher *m, struct gb_vec *in, uint32_t at, uint32_t n,
	    const struct gb_utf8 *p, unsigned char b, struct gb_vec *out, struct gb_utf8 *q);
/* looping[c] set for each class c whose characters may come round to
 * themselves without another character read (loops.c: the x* of a
 * class, alone or in a group); -1 when out of memory. */
int gb_loops_find(const struct gb_grammar *g, bool *looping);
/* The whole-subtree tables (subtrees.c) of the classes that may loop
 * (16 at most), made at compile so that no token pays for them (walk.c);
 * -1 when out of memory. */
int gb_walk_prepare(struct gb_matcher *m);
/* The tokens the stacks set[0..n) with part *part allow, into mask
 * (walk.c); -1 as gb_step. */
int gb_walk(struct gb_matcher *m, const uint32_t *set, uint32_t n, const struct gb_utf8 *part,
	    uint32_t *mask);
/* gb_walk, or a copy of the mask it gave the same stacks lately
 * (cache.c). */
int gb_mask_of(struct gb_matcher *m, const uint32_t *set, uint32_t n, const struct gb_utf8 *p,
	       uint32_t *mask);

/* After g and the trie are built: the stacks, the start state and its
 * mask. -1 with err (a grammar no token can begin, out of memory). */
int gb_matcher_init(struct gb_matcher *m, char *err, size_t errsz);
void gb_matcher_free(struct gb_matcher *m);
void gb_matcher_reset(struct gb_matcher *m);
int gb_matcher_accept(struct gb_matcher *m, int32_t id, char *err,
		      size_t errsz);

#endif
