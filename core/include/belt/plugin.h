/* belt/plugin.h: plugin modules and the registry they fill.
 *
 * A plugin is a libtool module exporting one function, belt_plugin_entry,
 * that returns a static const descriptor. The core checks its ABI version,
 * then calls register_features, which adds what the plugin provides to the
 * registry, keyed by (kind, name).
 *
 * Versions. Every table (the descriptor, each feature's ops) starts with
 * `uint32_t abi` and only grows at the end, so the core accepts any ABI
 * from the kind's oldest supported one (*_ABI_MIN) up to its own (*_ABI)
 * and refuses a newer one. A member appended after ABI N may only be read
 * once abi >= N + 1 is checked (BELT_ABI_HAS): in an older plugin's table
 * it does not exist. */
#ifndef BELT_PLUGIN_H
#define BELT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "belt/arch.h"
#include "belt/backend.h"
#include "belt/draft.h"
#include "belt/grammar.h"
#include "belt/sampler.h"

#define BELT_PLUGIN_ABI 1
/* The oldest descriptor ABI the loader still accepts. */
#define BELT_PLUGIN_ABI_MIN 1

/* Whether table t (any ops table or descriptor) was built for ABI n or
 * later, i.e. holds the members appended for n:
 * `if (BELT_ABI_HAS(be, 3)) ...` before reading an ABI 3 member. */
#define BELT_ABI_HAS(t, n) ((t)->abi >= (uint32_t)(n))

/* What a feature is; the registry holds one namespace per kind, and the
 * module for feature NAME of a kind is "<kind>-NAME" ("backend-cpu"). */
enum belt_plugin_kind {
	BELT_KIND_BACKEND, /* struct belt_backend_ops, belt/backend.h */
	BELT_KIND_SAMPLER, /* struct belt_sampler_ops, belt/sampler.h */
	BELT_KIND_GRAMMAR, /* struct belt_grammar_ops, belt/grammar.h */
	BELT_KIND_DRAFT,   /* struct belt_draft_ops, belt/draft.h */
	BELT_KIND_ARCH,	   /* struct belt_arch_ops, belt/arch.h */
	BELT_KIND_COUNT
};

struct belt_registry;

struct belt_plugin {
	uint32_t abi; /* BELT_PLUGIN_ABI */
	const char *name;
	const char *description;
	int (*register_features)(struct belt_registry *r, char *err,
				 size_t errsz);
};

/* The one symbol a plugin module exports. */
typedef const struct belt_plugin *(*belt_plugin_entry_fn)(void);
#define BELT_PLUGIN_ENTRY_SYMBOL "belt_plugin_entry"

/* Called from register_features: add a feature under ops->name
 * (belt_registry_add_arch is in belt/arch.h). Each fails on an ABI
 * outside the kind's supported range, a missing required function, or a
 * (kind, name) already taken. */
int belt_registry_add_backend(struct belt_registry *r,
			      const struct belt_backend_ops *ops, char *err,
			      size_t errsz);
int belt_registry_add_sampler(struct belt_registry *r,
			      const struct belt_sampler_ops *ops, char *err,
			      size_t errsz);
int belt_registry_add_grammar(struct belt_registry *r,
			      const struct belt_grammar_ops *ops, char *err,
			      size_t errsz);
int belt_registry_add_draft(struct belt_registry *r,
			    const struct belt_draft_ops *ops, char *err,
			    size_t errsz);

/* The plugin search path: $BELT_PLUGIN_PATH (':'-separated), then the
 * installed plugin directory, then the build tree's plugins/ folder. */
const char *belt_plugin_path(void);

/* Load module `name` (e.g. "backend-cpu") from the search path and
 * register its features; loading twice is a no-op. */
int belt_plugin_load(const char *name, char *err, size_t errsz);

/* The feature of that kind called name, loading plugin "<kind>-<name>"
 * ("backend-cpu", "sampler-gumbel") if it is not registered yet. */
const struct belt_backend_ops *belt_backend_get(const char *name, char *err,
						size_t errsz);
const struct belt_sampler_ops *belt_sampler_get(const char *name, char *err,
						size_t errsz);
const struct belt_grammar_ops *belt_grammar_get(const char *name, char *err,
						size_t errsz);
const struct belt_draft_ops *belt_draft_get(const char *name, char *err,
					    size_t errsz);

/* Call fn for each plugin module found on the search path, with its
 * descriptor or the error that loading it gave; stops if fn returns
 * nonzero. */
typedef int (*belt_plugin_visit_fn)(void *ud, const char *file,
				    const struct belt_plugin *p,
				    const char *error);
int belt_plugin_scan(belt_plugin_visit_fn fn, void *ud);

#endif
