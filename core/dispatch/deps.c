/* What every backend needs done the same way: which kernel a (op, variant,
 * weight type) names in its table, where commands depend on earlier ones,
 * and its settings from belt.yaml. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/ops.h"

const struct belt_kernel *belt_kernel_lookup(const struct belt_kernel *table, size_t n,
					     const char *op, const char *variant, int wtype)
{
	if (!op)
		return NULL;
	if (!variant || !*variant)
		variant = "default";
	for (size_t i = 0; i < n; i++) {
		const struct belt_kernel *k = &table[i];
		if (!strcmp(k->op, op) && !strcmp(k->variant, variant) &&
		    (k->wtype == BELT_TYPE_ANY || k->wtype == wtype))
			return k;
	}
	return NULL;
}

/* The ranges the commands since the last wait touched. */
#define GROUP_MAX 64

struct range {
	const struct belt_buffer *buf;
	uint64_t lo, hi;
	bool write;
};

static int cmd_ranges(const struct belt_cmd *c, struct range *out)
{
	const struct belt_op_contract *oc = c->kernel ? belt_op_contract(c->kernel->op) : NULL;
	uint8_t writes = oc ? belt_op_writes(oc) : 0xff;
	int n = 0;
	for (int i = 0; i < c->n_bind && i < BELT_MAX_BINDINGS; i++) {
		if (!c->bind[i].size)
			continue;
		out[n++] = (struct range){c->bind[i].buf, c->bind[i].offset,
					  c->bind[i].offset + c->bind[i].size,
					  (writes >> i) & 1};
	}
	return n;
}

static bool conflicts(const struct range *g, int ng, const struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < ng; j++)
			if ((r[i].write || g[j].write) && r[i].buf == g[j].buf &&
			    r[i].lo < g[j].hi && g[j].lo < r[i].hi)
				return true;
	return false;
}

void belt_table_barriers(const struct belt_table *t, bool *barrier)
{
	struct range g[GROUP_MAX];
	int ng = 0;
	for (uint32_t i = 0; i < t->n_cmds; i++) {
		struct range r[BELT_MAX_BINDINGS];
		int nr = cmd_ranges(&t->cmds[i], r);
		barrier[i] = false;
		if (i > 0 && (ng + nr > GROUP_MAX || conflicts(g, ng, r, nr))) {
			barrier[i - 1] = true;
			ng = 0;
		}
		memcpy(g + ng, r, (size_t)nr * sizeof *r);
		ng += nr;
	}
	if (t->n_cmds)
		barrier[t->n_cmds - 1] = true;
}

const char *belt_setting_get(const struct belt_backend_options *o, const char *key,
			     const char *env)
{
	const char *e = env ? getenv(env) : NULL;
	if (e && *e)
		return e;
	for (uint32_t i = 0; o && o->settings && i < o->n_settings; i++)
		if (!strcmp(o->settings[i].key, key))
			return o->settings[i].value;
	return NULL;
}

int belt_settings_check(const struct belt_backend_options *o, const char *backend,
			const char *const *keys, char *err, size_t errsz)
{
	for (uint32_t i = 0; o && o->settings && i < o->n_settings; i++) {
		bool known = false;
		for (const char *const *k = keys; *k && !known; k++)
			known = !strcmp(*k, o->settings[i].key);
		if (!known) {
			char list[256] = "";
			for (const char *const *k = keys; *k; k++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
					 k == keys ? "" : ", ", *k);
			return belt_errf(err, errsz,
					 "belt.yaml backends.%s: unknown setting '%s' (expected %s)",
					 backend, o->settings[i].key, *list ? list : "none");
		}
	}
	return 0;
}
