/* What the core checks of an op contract that does not come from its own
 * table (an architecture plugin's, belt/arch.h). */
#ifndef BELT_DISPATCH_OPS_CHECK_H
#define BELT_DISPATCH_OPS_CHECK_H

#include "belt/ops.h"

/* 0 when c is an op a plugin may add: a name of [a-z0-9_], a schema of
 * 1..BELT_MAX_PARAMS "name:i"/"name:f" params, row-wise without patches,
 * 1..BELT_MAX_BINDINGS bindings each a rows binding (its row length a
 * product of integer params) or a read-only weight, and items an integer
 * param; else -1 with one line naming the op. */
int belt_op_contract_valid_ext(const struct belt_op_contract *c, const char *items, char *err,
			       size_t errsz);

#endif
