/* The registry: the one place that knows which features exist, keyed by
 * (kind, name). It is the only global state in libbelt. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "dispatch/ops_check.h"
#include "plugin/registry.h"

#define MAX_FEATURES 64

struct feature {
	enum belt_plugin_kind kind;
	const char *name; /* ops->name: the module keeps it alive */
	const void *ops;  /* struct belt_<kind>_ops */
};

struct belt_registry {
	struct feature features[MAX_FEATURES];
	unsigned n;
};

static struct belt_registry registry;

/* Per kind: its name, which is also its modules' prefix, and the ABI
 * range of its ops table that this core reads. */
static const struct {
	const char *name;
	uint32_t abi_min, abi;
} kinds[BELT_KIND_COUNT] = {
	[BELT_KIND_BACKEND] = {"backend", BELT_BACKEND_ABI_MIN, BELT_BACKEND_ABI},
	[BELT_KIND_SAMPLER] = {"sampler", BELT_SAMPLER_ABI_MIN, BELT_SAMPLER_ABI},
	[BELT_KIND_GRAMMAR] = {"grammar", BELT_GRAMMAR_ABI_MIN, BELT_GRAMMAR_ABI},
	[BELT_KIND_DRAFT] = {"draft", BELT_DRAFT_ABI_MIN, BELT_DRAFT_ABI},
	[BELT_KIND_ARCH] = {"arch", BELT_ARCH_ABI_MIN, BELT_ARCH_ABI},
};

struct belt_registry *belt_registry_global(void)
{
	return &registry;
}

const void *belt_registry_find(const struct belt_registry *r,
			       enum belt_plugin_kind kind, const char *name)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->features[i].kind == kind && !strcmp(r->features[i].name, name))
			return r->features[i].ops;
	return NULL;
}

unsigned belt_registry_count(const struct belt_registry *r)
{
	return r->n;
}

void belt_registry_each(const struct belt_registry *r, enum belt_plugin_kind kind,
			void (*fn)(const char *name, const void *ops, void *ud), void *ud)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->features[i].kind == kind)
			fn(r->features[i].name, r->features[i].ops, ud);
}

void belt_registry_truncate(struct belt_registry *r, unsigned n)
{
	if (n < r->n)
		r->n = n;
}

/* Add ops, whose abi and name the typed wrappers read. The ABI is checked
 * before complete() looks at any function, since a table from outside the
 * range may not have them where this core expects. */
static int add(struct belt_registry *r, enum belt_plugin_kind kind, const void *ops,
	       uint32_t abi, const char *name, bool (*complete)(const void *ops),
	       char *err, size_t errsz)
{
	const char *k = kinds[kind].name;
	if (!ops || !name || !*name)
		return belt_errf(err, errsz, "%s without a name", k);
	if (abi < kinds[kind].abi_min || abi > kinds[kind].abi)
		return belt_errf(err, errsz, "%s '%s' has %s ABI %u; this belt supports %u..%u",
				 k, name, k, abi, kinds[kind].abi_min, kinds[kind].abi);
	if (!complete(ops))
		return belt_errf(err, errsz, "%s '%s' lacks a required function", k, name);
	if (belt_registry_find(r, kind, name))
		return belt_errf(err, errsz, "%s '%s' registered twice", k, name);
	if (r->n == MAX_FEATURES)
		return belt_errf(err, errsz, "cannot add %s '%s': at most %d features", k, name,
				 MAX_FEATURES);
	r->features[r->n++] = (struct feature){.kind = kind, .name = name, .ops = ops};
	return 0;
}

#define ADD(r, kind, ops, complete, err, errsz)                                    \
	add(r, kind, ops, (ops) ? (ops)->abi : 0, (ops) ? (ops)->name : NULL, complete, \
	    err, errsz)

/* The functions the core calls without checking (buffer_wrap and
 * list_devices may be NULL). */
static bool backend_complete(const void *p)
{
	const struct belt_backend_ops *o = p;
	return o->create && o->destroy && o->buffer_create && o->buffer_destroy &&
	       o->buffer_write && o->buffer_read && o->kernel_find && o->table_prepare &&
	       o->table_release && o->table_run;
}

static bool sampler_complete(const void *p)
{
	const struct belt_sampler_ops *o = p;
	return o->work_size && o->sample && o->chain_commands;
}

static bool grammar_complete(const void *p)
{
	const struct belt_grammar_ops *o = p;
	return o->compile && o->free && o->reset && o->allowed && o->accept && o->is_complete;
}

static bool draft_complete(const void *p)
{
	const struct belt_draft_ops *o = p;
	return o->create && o->free && o->propose && o->accept;
}

/* An architecture's description and ops: what the core and the backends
 * use without checking. Its ops' contracts are checked by add_arch. */
static bool arch_complete(const void *p)
{
	const struct belt_arch_ops *o = p;
	if (!o->yaml || !o->source || (o->n_ops && !o->ops))
		return false;
	for (uint32_t i = 0; i < o->n_ops; i++) {
		const struct belt_arch_op *op = &o->ops[i];
		if (!op->host || (op->spirv && (!op->spirv_bytes || op->spirv_bytes % 4 ||
						!op->local_size || op->local_size > 1024)))
			return false;
	}
	return true;
}

int belt_registry_add_arch(struct belt_registry *r, const struct belt_arch_ops *ops,
			   char *err, size_t errsz)
{
	/* the ABI first: the ops array means nothing outside the range */
	if (ops && ops->name && *ops->name &&
	    (ops->abi < BELT_ARCH_ABI_MIN || ops->abi > BELT_ARCH_ABI))
		return ADD(r, BELT_KIND_ARCH, ops, arch_complete, err, errsz);
	for (uint32_t i = 0; ops && i < ops->n_ops && ops->ops; i++) {
		const struct belt_arch_op *op = &ops->ops[i];
		char msg[BELT_ERR_SIZE];
		if (belt_op_contract_valid_ext(&op->contract, op->items, msg, sizeof msg))
			return belt_errf(err, errsz, "arch '%s': %s", ops->name ? ops->name : "", msg);
		/* the core's ops, another plugin's, or this one's before it */
		bool dup = belt_op_contract(op->contract.op) != NULL;
		for (uint32_t j = 0; j < i; j++)
			dup = dup || !strcmp(ops->ops[j].contract.op, op->contract.op);
		if (dup)
			return belt_errf(err, errsz, "arch '%s': op '%s' exists already",
					 ops->name ? ops->name : "", op->contract.op);
	}
	return ADD(r, BELT_KIND_ARCH, ops, arch_complete, err, errsz);
}

const struct belt_arch_op *belt_arch_op_find(const char *op)
{
	for (unsigned i = 0; op && i < registry.n; i++) {
		if (registry.features[i].kind != BELT_KIND_ARCH)
			continue;
		const struct belt_arch_ops *a = registry.features[i].ops;
		for (uint32_t j = 0; j < a->n_ops; j++)
			if (!strcmp(a->ops[j].contract.op, op))
				return &a->ops[j];
	}
	return NULL;
}

int belt_registry_add_backend(struct belt_registry *r,
			      const struct belt_backend_ops *ops, char *err,
			      size_t errsz)
{
	return ADD(r, BELT_KIND_BACKEND, ops, backend_complete, err, errsz);
}

int belt_registry_add_sampler(struct belt_registry *r,
			      const struct belt_sampler_ops *ops, char *err,
			      size_t errsz)
{
	return ADD(r, BELT_KIND_SAMPLER, ops, sampler_complete, err, errsz);
}

int belt_registry_add_grammar(struct belt_registry *r,
			      const struct belt_grammar_ops *ops, char *err,
			      size_t errsz)
{
	return ADD(r, BELT_KIND_GRAMMAR, ops, grammar_complete, err, errsz);
}

int belt_registry_add_draft(struct belt_registry *r,
			    const struct belt_draft_ops *ops, char *err,
			    size_t errsz)
{
	return ADD(r, BELT_KIND_DRAFT, ops, draft_complete, err, errsz);
}

/* The feature, registered already or by loading module "<kind>-<name>". */
static const void *get(enum belt_plugin_kind kind, const char *name, char *err,
		       size_t errsz)
{
	const char *k = kinds[kind].name;
	/* A name picks a module on the search path; it is never a path. */
	if (!name || !*name || strchr(name, '/')) {
		belt_errf(err, errsz, "%s: expected a name, got '%s'", k, name ? name : "");
		return NULL;
	}
	const void *ops = belt_registry_find(&registry, kind, name);
	if (ops)
		return ops;
	char module[64];
	if ((size_t)snprintf(module, sizeof module, "%s-%s", k, name) >= sizeof module) {
		belt_errf(err, errsz, "%s name '%s' is too long", k, name);
		return NULL;
	}
	if (belt_plugin_load(module, err, errsz))
		return NULL;
	ops = belt_registry_find(&registry, kind, name);
	if (!ops)
		belt_errf(err, errsz, "plugin '%s' registered no %s named '%s'", module, k, name);
	return ops;
}

const struct belt_backend_ops *belt_backend_get(const char *name, char *err,
						size_t errsz)
{
	return get(BELT_KIND_BACKEND, name, err, errsz);
}

const struct belt_sampler_ops *belt_sampler_get(const char *name, char *err,
						size_t errsz)
{
	return get(BELT_KIND_SAMPLER, name, err, errsz);
}

const struct belt_grammar_ops *belt_grammar_get(const char *name, char *err,
						size_t errsz)
{
	return get(BELT_KIND_GRAMMAR, name, err, errsz);
}

const struct belt_draft_ops *belt_draft_get(const char *name, char *err,
					    size_t errsz)
{
	return get(BELT_KIND_DRAFT, name, err, errsz);
}

const struct belt_arch_ops *belt_arch_get(const char *name, char *err, size_t errsz)
{
	return get(BELT_KIND_ARCH, name, err, errsz);
}
