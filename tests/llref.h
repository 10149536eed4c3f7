/* llama.cpp reference sets in the shared folder (models/quant,
 * models/arch): their references.jsonl records and logits files, and the
 * two checks every such suite makes of a model file: teacher-forced
 * logits (one batched pass and one token at a time) and greedy ids. */
#ifndef BELT_TESTS_LLREF_H
#define BELT_TESTS_LLREF_H

#include <stdbool.h>
#include <stddef.h>

struct belt_session_params;

/* How close a path must be: exact (max only) or within max and mean. */
struct llref_tol {
	const char *what; /* "cpu", "vulkan int8", ...: for messages */
	bool exact;
	double max, mean;
};

/* One file of a set: dir ("models/arch"), the GGUF, the records' model
 * stem and build ("stock", "deq", "gelu-exact") whose ids and greedy
 * tokens are checked, the logits file to meet, and a second one (NULL for
 * none) that a path of inexact tolerance must meet too. */
struct llref_case {
	const char *dir, *gguf, *stem, *build, *logits, *logits2;
};

/* Sessions of the checks below are made with belt's defaults (and F32
 * caches, as the references'), then given to tweak when it is set. */
extern void (*llref_session_tweak)(struct belt_session_params *sp);

/* Teacher-forced logits, batched under tol_batched and one token at a
 * time under tol_decode; a Check failure names the file and the path. */
void llref_teacher_forced(const struct llref_case *c, struct llref_tol tol_batched,
			  struct llref_tol tol_decode);
/* One of the two: the batched pass (batched true) or token by token. */
void llref_teacher_forced_path(const struct llref_case *c, bool batched, struct llref_tol tol);
/* The six greedy records: ids equal over the record's stable prefix
 * (exact tol) or while its margins exceed twice tol.max. */
void llref_greedy(const struct llref_case *c, struct llref_tol tol);

#endif
